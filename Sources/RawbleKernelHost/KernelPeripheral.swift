import RawbleHost
import RawbleHostCore
import RawbleKernel
import RawbleWire
import Synchronization

/// The peripheral the Linux kernel plays, as rawble uses it on `hciN`: advertising by rawble's
/// host on the kernel's raw HCI channel (an `Adapter` whose controller the kernel owns), the
/// centrals' links taken by the kernel and handed to a listening L2CAP socket on the ATT
/// channel (`KernelATTListener`), each accepted one a ``KernelLink``.
public final class KernelPeripheral: Peripheral {
    public typealias AcceptedLink = KernelLink

    /// The host on the raw channel: advertising commands only.
    public let adapter: Adapter
    /// The adapter's address: the listener takes only that adapter's centrals.
    public let local: BluetoothAddress
    public let incomingConnections: AsyncStream<KernelLink>

    private struct State {
        var listener: KernelATTListener?
        var acceptLoop: Task<Void, Never>?
        var links: [KernelLink] = []
        var closed = false
        var acceptFailure: KernelError?
    }

    private let state = Mutex(State())

    /// Why accepting centrals stopped (``incomingConnections`` finished then), when it was
    /// not ``close()``: the kernel's error on the listening socket.
    public var acceptFailure: KernelError? { state.withLock { $0.acceptFailure } }
    private let continuation: AsyncStream<KernelLink>.Continuation

    /// - Parameters:
    ///   - adapter: an adapter opened with `ControllerOwner.kernel` on the raw channel of
    ///     the adapter at `local` (e.g. `KernelCentral.scanner`).
    ///   - local: that adapter's address.
    public init(adapter: Adapter, local: BluetoothAddress) {
        self.adapter = adapter
        self.local = local
        (incomingConnections, continuation) = AsyncStream.makeStream(of: KernelLink.self)
    }

    /// Listens on the ATT channel first (the kernel hands a central's link only to a socket
    /// already listening when it connects), then advertises.
    /// - Throws: `HostError.unsupported(_:)` or `HostError.permissionDenied(_:)` when the
    ///   kernel refuses the listening socket (e.g. bluetoothd serves ATT already), and what
    ///   `Adapter.advertise(_:)` throws.
    public func advertise(_ advertisement: Advertisement) async throws(HostError) -> AdvertisingSet {
        try startListening()
        return try await adapter.advertise(advertisement)
    }

    /// Stops advertising; the listener stays, so links already made and a central connecting
    /// in the meantime are still accepted.
    public func stopAdvertising() async throws(HostError) {
        try await adapter.stopAdvertising()
    }

    /// Stops listening and advertising, closes every accepted link, closes the raw channel;
    /// ``incomingConnections`` finishes.
    public func close() async {
        let (listener, loop, links) = state.withLock { state in
            state.closed = true
            defer {
                state.listener = nil
                state.acceptLoop = nil
                state.links.removeAll()
            }
            return (state.listener, state.acceptLoop, state.links)
        }
        listener?.close()
        loop?.cancel()
        await loop?.value
        continuation.finish()
        for link in links where link.ending == nil {
            try? await link.disconnect(timeout: .seconds(2))
        }
        await adapter.close()
    }

    /// Opens the listener and its accept loop, once.
    private func startListening() throws(HostError) {
        let started: Bool = state.withLock { $0.listener != nil }
        if started { return }
        let listener: KernelATTListener
        do {
            listener = try KernelATTListener.listen(local: local)
        } catch {
            throw KernelL2CAPOpener.hostError(error, peer: DeviceAddress(local, type: .public), timeout: .zero)
        }
        let loop = Task { [weak self] in
            while !Task.isCancelled {
                let accepted: KernelATTListener.Accepted
                do throws(KernelError) {
                    accepted = try await listener.accept(on: self?.adapter.eventLoop)
                } catch {
                    // Closed or cancelled; otherwise the kernel's error ends the stream, kept
                    // for the caller in acceptFailure.
                    if !Task.isCancelled, let self {
                        state.withLock { $0.acceptFailure = error }
                        continuation.finish()
                    }
                    return
                }
                guard let self else { return }
                let type: LEAddressType = accepted.addressType == .lePublic ? .public : .random
                let link = KernelLink(peer: DeviceAddress(accepted.peer, type: type), att: accepted.bearer)
                let closed = state.withLock { state in
                    state.links.removeAll { $0.ending != nil }
                    if !state.closed { state.links.append(link) }
                    return state.closed
                }
                if closed {
                    await link.att.close()
                    return
                }
                continuation.yield(link)
            }
        }
        let kept = state.withLock { state -> Bool in
            guard state.listener == nil, !state.closed else { return false }
            state.listener = listener
            state.acceptLoop = loop
            return true
        }
        if !kept {
            listener.close()
            loop.cancel()
            if state.withLock({ $0.closed }) { throw .closed }
        }
    }
}

extension KernelCentral where Opener == KernelL2CAPOpener {
    /// The peripheral on the same adapter and raw channel: advertising through this central's
    /// adapter, centrals accepted on the adapter's ATT channel.
    public func peripheral(local: BluetoothAddress) -> KernelPeripheral {
        KernelPeripheral(adapter: scanner, local: local)
    }
}
