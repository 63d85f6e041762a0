import RawbleTransport
import Synchronization

/// One LE connection made by an ``Adapter``, as the central.
///
/// Its ``att`` bearer carries ATT over the fixed channel 0x0004; LE signaling and SMP are
/// answered by the host. When the link goes, everything pending on it fails with the reason.
public final class Connection: Sendable, CustomStringConvertible {
    /// The controller's handle for the connection.
    public let handle: UInt16
    /// The peer as the controller reported it.
    public let peer: DeviceAddress
    /// The parameters at connection time (see ``currentParameters()`` for later updates).
    public let initialParameters: LinkParameters
    /// The ATT bearer of this connection (L2CAP fixed channel 0x0004).
    public let att: L2CAPATTBearer
    /// The adapter that owns the connection.
    public let adapter: Adapter
    let lifetime: LinkLifetime

    init(handle: UInt16, peer: DeviceAddress, parameters: LinkParameters, att: L2CAPATTBearer,
         adapter: Adapter, lifetime: LinkLifetime) {
        self.handle = handle
        self.peer = peer
        self.initialParameters = parameters
        self.att = att
        self.adapter = adapter
        self.lifetime = lifetime
    }

    /// Why the connection ended, or `nil` while it is up.
    public var ending: HostError? { lifetime.ending }

    /// Disconnects (HCI Disconnect with `reason`) and waits, bounded by `timeout`, for the
    /// controller's Disconnection Complete. Returns at once when already disconnected.
    public func disconnect(reason: HCIStatus = .remoteUserTerminatedConnection,
                           timeout: Duration = .seconds(5)) async throws(HostError) {
        try await adapter.disconnect(lifetime, reason: reason, timeout: timeout)
    }

    /// Waits until the connection ends and returns why: ``HostError/disconnected(_:)`` with the
    /// controller's reason, or the transport's failure.
    public func waitUntilDisconnected() async -> HostError {
        await lifetime.wait()
    }

    /// The link parameters now (after any connection update); `nil` once disconnected.
    public func currentParameters() async -> LinkParameters? {
        await adapter.linkParameters(lifetime)
    }

    public var description: String { "connection 0x\(String(handle, radix: 16)) to \(peer)" }
}

/// Connection interval, latency and supervision timeout of a link, in the controller's units.
public struct LinkParameters: Hashable, Sendable {
    /// Units of 1.25 ms.
    public var interval: UInt16
    /// Connection events the peripheral may skip.
    public var latency: UInt16
    /// Units of 10 ms.
    public var supervisionTimeout: UInt16

    public var intervalMilliseconds: Double { Double(interval) * 1.25 }
    public var supervisionTimeoutMilliseconds: Int { Int(supervisionTimeout) * 10 }
}

/// The ATT bearer over rawble's own L2CAP: fixed channel 0x0004 of one connection.
public final class L2CAPATTBearer: ATTBearer {
    public let pdus: AsyncThrowingStream<[UInt8], any Error>
    /// A basic L2CAP frame carries at most 65,535 bytes of payload.
    public var maximumPDULength: Int { Int(UInt16.max) }
    let adapter: Adapter
    let lifetime: LinkLifetime

    init(adapter: Adapter, lifetime: LinkLifetime, pdus: AsyncThrowingStream<[UInt8], any Error>) {
        self.adapter = adapter
        self.lifetime = lifetime
        self.pdus = pdus
    }

    public func send(_ pdu: [UInt8]) async throws(BearerError) {
        guard pdu.count <= maximumPDULength else { throw .pduTooLong(length: pdu.count, maximum: maximumPDULength) }
        try await adapter.sendATT(pdu, on: lifetime)
    }

    public func close() async {
        await adapter.closeATT(on: lifetime)
    }
}

/// The life of one link, shared by the host and the objects it hands out: who is waiting for
/// its end, and why it ended. Thread-safe; each waiter is resumed exactly once.
final class LinkLifetime: Sendable {
    /// Unique per adapter: a stale ``Connection`` never acts on a reused handle.
    let id: UInt64
    let handle: UInt16
    private struct State {
        var ending: HostError?
        var waiters: [UInt64: CheckedContinuation<HostError, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }
    private let state = Mutex(State())

    init(id: UInt64, handle: UInt16) {
        self.id = id
        self.handle = handle
    }

    var ending: HostError? { state.withLock { $0.ending } }

    /// Waits for the end; returns at once when it already came.
    func wait() async -> HostError {
        await withCheckedContinuation { continuation in
            _ = register(continuation)
        }
    }

    /// Registers a waiter and returns its id (to time it out with ``resume(waiter:with:)``).
    func register(_ continuation: CheckedContinuation<HostError, Never>) -> UInt64 {
        let ended: HostError? = state.withLock { state in
            if let ending = state.ending { return ending }
            state.nextWaiter += 1
            state.waiters[state.nextWaiter] = continuation
            return nil
        }
        if let ended {
            continuation.resume(returning: ended)
            return 0
        }
        return state.withLock { $0.nextWaiter }
    }

    /// Resumes one waiter early (a timeout), if it is still waiting.
    func resume(waiter id: UInt64, with error: HostError) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: error)
    }

    /// The link ended: every waiter learns why; the first reason is kept.
    func end(_ error: HostError) {
        let waiters: [CheckedContinuation<HostError, Never>] = state.withLock { state in
            guard state.ending == nil else { return [] }
            state.ending = error
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: error) }
    }
}

/// What the host keeps for one live connection (actor-isolated inside ``Adapter``).
final class ConnectionRecord {
    let lifetime: LinkLifetime
    let peer: DeviceAddress
    var parameters: LinkParameters
    var signaling = LESignalingResponder()
    var securityManager = SecurityManagerResponder()
    let attInput: AsyncThrowingStream<[UInt8], any Error>.Continuation
    let attStream: AsyncThrowingStream<[UInt8], any Error>
    var attClosed = false
    var droppedATTPDUs = 0
    /// Whether a ``Connection`` was handed out (else the host disconnects it itself).
    var claimed = false

    var handle: UInt16 { lifetime.handle }

    init(lifetime: LinkLifetime, peer: DeviceAddress, parameters: LinkParameters, attBufferLimit: Int) {
        self.lifetime = lifetime
        self.peer = peer
        self.parameters = parameters
        (attStream, attInput) = AsyncThrowingStream.makeStream(
            of: [UInt8].self, throwing: (any Error).self, bufferingPolicy: .bufferingOldest(attBufferLimit))
    }

    func updateParameters(interval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        parameters = LinkParameters(interval: interval, latency: latency, supervisionTimeout: supervisionTimeout)
    }

    /// Hands an ATT PDU to the bearer; `false` when the reader is that far behind (dropped).
    func deliverATT(_ pdu: [UInt8]) -> Bool {
        guard !attClosed else { return true }
        if case .dropped = attInput.yield(pdu) {
            droppedATTPDUs += 1
            return false
        }
        return true
    }

    /// The link is gone: the bearer ends with `bearerError`, waiters learn `hostError`.
    func end(bearerError: BearerError, hostError: HostError) {
        attInput.finish(throwing: bearerError)
        lifetime.end(hostError)
    }
}
