import NIOCore
import NIOEmbedded
import RawbleHCITransport
import RawbleWire
import Synchronization

/// An `HCITransport` with no I/O: the host under test talks to it, and the test plays the
/// controller — reading what the host sent and injecting what a controller would answer, byte
/// for byte. For procedure tests on byte streams, in the manner of BlueZ's unit tests.
public final class InMemoryHCITransport: HCITransport {
    public let packets: AsyncThrowingStream<H4Packet, any Error>
    private let toHost: AsyncThrowingStream<H4Packet, any Error>.Continuation
    private struct Sent {
        var buffer: [H4Packet] = []
        var waiter: (id: UInt64, continuation: CheckedContinuation<H4Packet?, Never>)?
        var nextWaiterID: UInt64 = 0
    }
    private let sent = Mutex(Sent())
    private let closedError = Mutex<TransportError?>(nil)
    private let responder = Mutex<(@Sendable (H4Packet) -> [H4Packet]?)?>(nil)

    /// Answers the host's packets at once, inside ``send(_:)``: `respond` returns the packets
    /// the controller sends back (delivered to the host before `send` returns), or `nil` to
    /// leave the packet for ``nextSentPacket(timeout:)``. Answers then never depend on a test
    /// task being scheduled, however loaded the machine.
    public func respond(with respond: @escaping @Sendable (H4Packet) -> [H4Packet]?) {
        responder.withLock { $0 = respond }
    }

    /// The loop the host on this transport runs on (the adapter's executor): a loop of its own
    /// from NIO's embedded loops unless given. An `NIOAsyncTestingEventLoop` runs each job as
    /// it comes, on a serial queue, with no socket and no thread of its own; its clock moves
    /// only when a test advances it, and rawble's host keeps no timer on its loop (its timers
    /// are on the configuration's clock), so nothing waits out real time on it.
    public let eventLoop: any EventLoop

    public init(eventLoop: (any EventLoop)? = nil) {
        self.eventLoop = eventLoop ?? NIOAsyncTestingEventLoop()
        (packets, toHost) = AsyncThrowingStream.makeStream(of: H4Packet.self, throwing: (any Error).self)
    }

    public func send(_ packet: H4Packet) async throws(TransportError) {
        if let error = closedError.withLock({ $0 }) { throw error }
        if let respond = responder.withLock({ $0 }), let answers = respond(packet) {
            for answer in answers { toHost.yield(answer) }
            return
        }
        let waiter = sent.withLock { state -> CheckedContinuation<H4Packet?, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter.continuation
            }
            state.buffer.append(packet)
            return nil
        }
        waiter?.resume(returning: packet)
    }

    public func close() async {
        end(with: .closed)
    }

    // MARK: The controller's side

    /// Delivers `packet` to the host as if the controller sent it.
    public func inject(_ packet: H4Packet) {
        toHost.yield(packet)
    }

    /// Delivers an HCI event to the host.
    public func inject(_ event: HCIEvent) {
        inject(H4Packet(type: .event, bytes: event.encoded))
    }

    /// Delivers raw H4 bytes (type byte first) to the host, as decoded by `H4Packet`; bytes
    /// that do not form one packet are delivered as an event packet with those bytes after the
    /// first, so the host sees exactly what a broken controller would send.
    public func inject(h4 bytes: [UInt8]) {
        if let packet = try? H4Packet.decode(bytes) {
            inject(packet)
        } else {
            inject(H4Packet(type: .event, bytes: bytes.dropFirst()))
        }
    }

    /// Ends the stream as a controller hanging up would (`TransportError.closedByPeer`).
    public func hangUp() {
        end(with: .closedByPeer)
    }

    private func end(with error: TransportError) {
        let first = closedError.withLock { stored -> Bool in
            guard stored == nil else { return false }
            stored = error
            return true
        }
        guard first else { return }
        toHost.finish(throwing: error)
        sent.withLock { state -> CheckedContinuation<H4Packet?, Never>? in
            defer { state.waiter = nil }
            return state.waiter?.continuation
        }?.resume(returning: nil)
    }

    /// The next packet the host sent, waiting at most `timeout`; `nil` on timeout or when the
    /// transport is closed and every sent packet was read. One reader at a time.
    public func nextSentPacket(timeout: Duration = .seconds(5)) async -> H4Packet? {
        await withCheckedContinuation { (continuation: CheckedContinuation<H4Packet?, Never>) in
            let closed = closedError.withLock { $0 != nil }
            let (ready, id) = sent.withLock { state -> (H4Packet??, UInt64) in
                if !state.buffer.isEmpty { return (.some(state.buffer.removeFirst()), 0) }
                if closed { return (.some(nil), 0) }
                state.nextWaiterID += 1
                state.waiter = (state.nextWaiterID, continuation)
                return (nil, state.nextWaiterID)
            }
            if let ready {
                continuation.resume(returning: ready)
                return
            }
            Task { [self] in
                try? await Task.sleep(for: timeout)
                sent.withLock { state -> CheckedContinuation<H4Packet?, Never>? in
                    guard let waiter = state.waiter, waiter.id == id else { return nil }
                    state.waiter = nil
                    return waiter.continuation
                }?.resume(returning: nil)
            }
        }
    }

    /// The next command the host sent (skipping nothing: a non-command packet is returned as
    /// `nil` together with a timeout), decoded.
    public func nextSentCommand(timeout: Duration = .seconds(5)) async -> HCICommand? {
        guard let packet = await nextSentPacket(timeout: timeout), packet.type == .command else { return nil }
        return try? HCICommand.decode(packet.bytes)
    }
}
