#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CBluetooth
import NIOCore
import RawbleWire
import Synchronization
import SystemPackage

/// The peripheral side of the kernel path: a listening L2CAP socket on the LE ATT channel, as
/// BlueZ's daemon itself listens. When a central connects to the adapter (while rawble
/// advertises on it), the kernel hands the link's ATT channel to this socket; each accepted
/// one becomes a ``KernelATTBearer`` a GATT server can serve.
public final class KernelATTListener: Sendable {
    /// A central the kernel accepted: who, and ATT on its link.
    public struct Accepted: Sendable {
        /// The central's address as the kernel reports it.
        public let peer: BluetoothAddress
        /// The central's address type (LE public or LE random).
        public let addressType: L2CAPAddressType
        /// ATT on the new link.
        public let bearer: KernelATTBearer
    }

    private struct State {
        var descriptor: SystemPackage.FileDescriptor?
        var waiter: Task<L2CAPATTSocket.Wait, Never>?
        var closed = false
    }

    private let state: Mutex<State>
    private let receiveMTU: UInt16
    /// The clock the accept timeouts run on.
    private let clock: any Clock<Duration>

    /// Takes over a socket already listening (the tests use a unix SOCK_SEQPACKET one);
    /// accept timeouts run on `clock`.
    init(listening descriptor: SystemPackage.FileDescriptor, receiveMTU: UInt16,
         clock: any Clock<Duration> = ContinuousClock()) {
        state = Mutex(State(descriptor: descriptor))
        self.receiveMTU = receiveMTU
        self.clock = clock
    }

    deinit {
        state.withLock { state in
            if let descriptor = state.descriptor { BluetoothSocket.closeQuietly(descriptor) }
        }
    }

    /// Listens on the ATT channel of the adapter with address `local` (`.any`: every adapter).
    /// `receiveMTU` is each accepted channel's BT_RCVMTU; the accept timeouts run on `clock`
    /// (the real continuous clock by default, a test's virtual one).
    /// Throws ``KernelError/noBluetoothInKernel``, ``KernelError/missingCapability(operation:errno:user:)``
    /// or ``KernelError/system(operation:errno:)`` (e.g. EADDRINUSE: another program, such as
    /// bluetoothd, already serves ATT on it).
    public static func listen(
        local: BluetoothAddress = .any, receiveMTU: UInt16 = 517, backlog: Int32 = 8,
        clock: any Clock<Duration> = ContinuousClock()
    ) throws(KernelError) -> KernelATTListener {
        let fd = try L2CAPATTSocket.open(local: local, receiveMTU: receiveMTU, peer: "centrals")
        guard Glibc.listen(fd.rawValue, backlog) == 0 else {
            let failure = BluetoothSocket.lastErrno
            BluetoothSocket.closeQuietly(fd)
            throw KernelError.classify(failure, operation: "listening for centrals on the ATT channel")
        }
        return KernelATTListener(listening: fd, receiveMTU: receiveMTU, clock: clock)
    }

    /// Waits for the next central, at most `timeout` (`nil`: until ``close()`` or the task is
    /// cancelled), and returns its ATT bearer. Throws ``KernelError/connectTimeout(peer:seconds:)``
    /// when the time ran out, ``KernelError/system(operation:errno:)`` with ECANCELED once
    /// closed or cancelled.
    public func accept(
        timeout: Duration? = nil, sendTimeout: Duration = .seconds(30), on eventLoop: (any EventLoop)? = nil
    ) async throws(KernelError) -> Accepted {
        let clock = self.clock
        let elapsed = Self.stopwatch(on: clock)
        while true {
            let left = timeout.map { $0 - elapsed() } ?? .seconds(3600)
            if left <= .zero { throw .connectTimeout(peer: "a central", seconds: Self.seconds(timeout ?? .zero)) }
            let waiter: Task<L2CAPATTSocket.Wait, Never>? = state.withLock { state in
                guard let descriptor = state.descriptor, !state.closed, state.waiter == nil else { return nil }
                let task = Task { await L2CAPATTSocket.waitReadable(descriptor, timeout: left, clock: clock) }
                state.waiter = task
                return task
            }
            guard let waiter else {
                throw .system(operation: "accepting a central (the listener is closed or already accepting)", errno: .canceled)
            }
            let result = await withTaskCancellationHandler { await waiter.value } onCancel: { waiter.cancel() }
            let descriptor: SystemPackage.FileDescriptor? = state.withLock { state in
                state.waiter = nil
                if state.closed, let descriptor = state.descriptor {
                    BluetoothSocket.closeQuietly(descriptor)
                    state.descriptor = nil
                }
                return state.descriptor
            }
            guard let descriptor, result != .cancelled, !Task.isCancelled else {
                throw .system(operation: "accepting a central", errno: .canceled)
            }
            if result == .timedOut { continue }
            var address = sockaddr_l2()
            var length = socklen_t(MemoryLayout<sockaddr_l2>.size)
            let accepted = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.accept(descriptor.rawValue, $0, &length)
                }
            }
            // Non-blocking and close-on-exec, as every socket of the kernel path (Glibc's
            // module does not export accept4).
            if accepted >= 0 {
                _ = fcntl(accepted, F_SETFL, fcntl(accepted, F_GETFL) | O_NONBLOCK)
                _ = fcntl(accepted, F_SETFD, FD_CLOEXEC)
            }
            guard accepted >= 0 else {
                let failure = BluetoothSocket.lastErrno
                // Readable but nothing to take (the central went away first): wait again.
                if failure == .wouldBlock || failure == .resourceTemporarilyUnavailable || failure == .interrupted
                    || failure == .connectionAbort { continue }
                throw KernelError.classify(failure, operation: "accepting a central")
            }
            let fd = SystemPackage.FileDescriptor(rawValue: accepted)
            let peer = BluetoothSocketAddress.address(address.l2_bdaddr)
            let type = L2CAPAddressType(rawValue: address.l2_bdaddr_type) ?? .leRandom
            let sendMTU = Int((try? L2CAPATTSocket.sendMTU(fd)) ?? 0)
            let bearer = try await KernelATTBearer.adopt(
                fd, peer: peer, sendMTU: sendMTU > 0 ? sendMTU : KernelATTBearer.minimumATTMTU,
                receiveMTU: Int(receiveMTU), sendTimeout: sendTimeout, on: eventLoop, clock: clock)
            bearer.answerPairingQuestions()
            return Accepted(peer: peer, addressType: type, bearer: bearer)
        }
    }

    /// Stops listening: a waiting ``accept(timeout:sendTimeout:on:)`` ends with ECANCELED;
    /// links already accepted stay up. Safe to call more than once.
    public func close() {
        state.withLock { state in
            state.closed = true
            if let waiter = state.waiter {
                waiter.cancel() // the accept closes the descriptor once its wait let go of it
            } else if let descriptor = state.descriptor {
                BluetoothSocket.closeQuietly(descriptor)
                state.descriptor = nil
            }
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The time since this call on `clock` (whatever its instants are).
    private static func stopwatch<C: Clock<Duration>>(on clock: C) -> @Sendable () -> Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }
}
