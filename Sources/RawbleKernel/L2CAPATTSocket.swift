#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@preconcurrency import Dispatch
import CBluetooth
import RawbleWire
import Synchronization
import SystemPackage

/// The kernel's LE security level on an L2CAP socket (`BT_SECURITY`): raising it makes the
/// kernel pair or encrypt the link, as BlueZ's client does when a peer answers Insufficient
/// Authentication or Encryption.
public enum KernelSecurityLevel: UInt8, Hashable, Sendable, Comparable {
    /// No encryption.
    case low = 1
    /// Encryption, unauthenticated pairing (Just Works).
    case medium = 2
    /// Encryption, authenticated (MITM-protected) pairing.
    case high = 3
    /// Authenticated LE Secure Connections with a 128-bit key.
    case fips = 4

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// Opening and connecting the kernel's L2CAP socket for ATT (SOCK_SEQPACKET, fixed channel 4):
/// thin typed steps the bearer composes.
enum L2CAPATTSocket {
    /// The ATT fixed channel.
    static let attCID: UInt16 = 4

    /// A non-blocking L2CAP socket bound to cid 4 on `local` (the adapter's address, or any)
    /// as an LE public source, its receive MTU set to `receiveMTU` (BT_RCVMTU).
    static func open(local: BluetoothAddress, receiveMTU: UInt16, peer: String) throws(KernelError) -> FileDescriptor {
        let fd: FileDescriptor
        do {
            fd = try BluetoothSocket.open(type: Int32(SOCK_SEQPACKET.rawValue), protocol: BTPROTO_L2CAP, nonBlocking: true)
        } catch {
            throw KernelError.classify(error, operation: "opening an L2CAP socket for \(peer)")
        }
        do {
            try BluetoothSocket.bind(fd, BluetoothSocketAddress.l2cap(address: local, type: .lePublic, cid: attCID))
        } catch {
            BluetoothSocket.closeQuietly(fd)
            throw KernelError.classify(error, operation: "binding the L2CAP socket for \(peer)")
        }
        do {
            try BluetoothSocket.setOption(fd, level: SOL_BLUETOOTH, name: BT_RCVMTU, receiveMTU)
        } catch {
            BluetoothSocket.closeQuietly(fd)
            throw KernelError.classify(error, operation: "setting the receive MTU (BT_RCVMTU) for \(peer)")
        }
        return fd
    }

    /// Starts the connection to `peer` and waits, at most `timeout`, for it to complete: a
    /// blocking connect to an absent peer would return EINPROGRESS only after ~40 s. Throws
    /// ``KernelError/connectTimeout(peer:seconds:)``, ``KernelError/connectFailed(peer:errno:reason:)``
    /// with the kernel's reason (SO_ERROR), or `CancellationError`'s stand-in
    /// ``KernelError/system(operation:errno:)`` with ECANCELED when the task is cancelled.
    /// `timeout` runs on `clock`.
    static func connect(
        _ fd: FileDescriptor, to peer: BluetoothAddress, type: L2CAPAddressType, timeout: Duration,
        clock: any Clock<Duration> = ContinuousClock()
    ) async throws(KernelError) {
        let name = peer.description
        do {
            try BluetoothSocket.connect(fd, BluetoothSocketAddress.l2cap(address: peer, type: type, cid: attCID))
            return
        } catch .nowInProgress {
            // The usual case: wait for writability below.
        } catch {
            throw connectFailure(error, peer: name)
        }
        switch await waitWritable(fd, timeout: timeout, clock: clock) {
        case .timedOut:
            throw .connectTimeout(peer: name, seconds: Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        case .cancelled:
            throw .system(operation: "connecting to \(name)", errno: .canceled)
        case .ready:
            break
        }
        let pending: Int32
        do {
            pending = try BluetoothSocket.option(fd, level: SOL_SOCKET, name: SO_ERROR, initial: Int32(0))
        } catch {
            throw KernelError.classify(error, operation: "reading the connection's result (SO_ERROR)")
        }
        if pending != 0 { throw connectFailure(Errno(rawValue: pending), peer: name) }
    }

    /// The typed error for a connect that failed with `errno`.
    static func connectFailure(_ errno: Errno, peer: String) -> KernelError {
        switch errno {
        case .addressFamilyNotSupported, .notPermitted, .permissionDenied:
            return KernelError.classify(errno, operation: "connecting to \(peer)")
        case .timedOut:
            return .connectTimeout(peer: peer, seconds: 0).withKernelTimeout()
        default:
            return .connectFailed(peer: peer, errno: errno, reason: KernelLinkLoss.reason(for: errno))
        }
    }

    enum Wait: Sendable { case ready, timedOut, cancelled }

    /// Waits for `fd` to become writable (the connect completed or failed), at most `timeout`
    /// on `clock`, with a dispatch write source: no thread blocks, and task cancellation ends
    /// the wait. `closingWhenDone`: `fd` is closed once the wait no longer watches it.
    static func waitWritable(_ fd: FileDescriptor, timeout: Duration, clock: any Clock<Duration> = ContinuousClock(),
                             closingWhenDone: Bool = false) async -> Wait {
        await wait(for: fd, readable: false, timeout: timeout, clock: clock, closingWhenDone: closingWhenDone)
    }

    /// Waits for `fd` to become readable (a listening socket: a central connected), as
    /// ``waitWritable(_:timeout:clock:closingWhenDone:)`` does for writability.
    static func waitReadable(_ fd: FileDescriptor, timeout: Duration, clock: any Clock<Duration> = ContinuousClock()) async -> Wait {
        await wait(for: fd, readable: true, timeout: timeout, clock: clock, closingWhenDone: false)
    }

    /// The wait ends in the source's cancel handler, which libdispatch runs once it no longer
    /// watches `fd`: only from then on may the caller close `fd`, and a new socket reuse its
    /// number. Resuming the caller before the cancellation was processed let a listener's accept
    /// close or hand over its descriptor while libdispatch still held `fd`'s number: a socket
    /// opened next with that number was given to the old, dead registration, and its wait never
    /// fired (a unit test's accept timed out after 30 s, once in a few hundred runs).
    private static func wait(for fd: FileDescriptor, readable: Bool, timeout: Duration, clock: any Clock<Duration>,
                             closingWhenDone: Bool) async -> Wait {
        let queue = DispatchQueue(label: "rawble.l2cap.wait")
        // Only touched on `queue` (its handlers, and the cancel hopped there).
        nonisolated(unsafe) let source: any DispatchSourceProtocol = readable
            ? DispatchSource.makeReadSource(fileDescriptor: fd.rawValue, queue: queue)
            : DispatchSource.makeWriteSource(fileDescriptor: fd.rawValue, queue: queue)
        struct State {
            /// How the wait ended, set once by the first of readiness, the deadline and cancellation.
            var result: Wait?
            /// Set by the cancel handler: libdispatch let go of `fd`.
            var released = false
            var continuation: CheckedContinuation<Wait, Never>?
            /// The deadline's timer, a sleep on `clock` (cancelled once the wait ended).
            var timer: Task<Void, Never>?
        }
        let state = Mutex(State())
        @Sendable func finish(_ result: Wait) {
            let (first, timer) = state.withLock { state -> (Bool, Task<Void, Never>?) in
                guard state.result == nil else { return (false, nil) }
                state.result = result
                defer { state.timer = nil }
                return (true, state.timer)
            }
            timer?.cancel()
            if first { queue.async { source.cancel() } }
        }
        source.setCancelHandler {
            if closingWhenDone { try? fd.close() }
            let (continuation, result) = state.withLock { state in
                state.released = true
                defer { state.continuation = nil }
                return (state.continuation, state.result ?? .cancelled)
            }
            continuation?.resume(returning: result)
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Wait, Never>) in
                let released = state.withLock { state -> Wait? in
                    if state.released { return state.result ?? .cancelled }
                    state.continuation = continuation
                    return nil
                }
                if let released {
                    continuation.resume(returning: released)
                    return
                }
                source.setEventHandler { finish(.ready) }
                source.resume()
                let timer = Self.timer(after: timeout, on: clock) { finish(.timedOut) }
                // Kept to cancel once the wait ended (at once when it already has).
                let ended = state.withLock { state -> Bool in
                    if state.result != nil { return true }
                    state.timer = timer
                    return false
                }
                if ended { timer.cancel() }
            }
        } onCancel: {
            finish(.cancelled)
        }
    }

    /// A task that calls `fire` once `timeout` has passed on `clock`; cancelled before, it does not.
    private static func timer(after timeout: Duration, on clock: any Clock<Duration>,
                              fire: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        Task {
            guard (try? await clock.sleep(for: timeout)) != nil else { return }
            fire()
        }
    }

    /// Waits, at most `timeout` and until the task is cancelled, for the socket `fd` (owned by
    /// someone else, e.g. NIO) to take sends again: after BT_SECURITY was raised the kernel
    /// holds the socket in BT_CONFIG (no POLLOUT, sends fail with ENOTCONN) until pairing or
    /// encryption completes; a lost link reports POLLHUP. Watches a duplicate of `fd`, so the
    /// owner may close its descriptor meanwhile.
    static func waitUntilWritable(sharing fd: FileDescriptor, timeout: Duration,
                                  clock: any Clock<Duration> = ContinuousClock()) async -> Wait {
        let copy: FileDescriptor
        do {
            copy = try fd.duplicate()
        } catch {
            return .cancelled
        }
        return await waitWritable(copy, timeout: timeout, clock: clock, closingWhenDone: true)
    }

    /// The socket's security level (`BT_SECURITY`).
    static func securityLevel(_ fd: FileDescriptor) throws(Errno) -> KernelSecurityLevel {
        let value = try BluetoothSocket.option(fd, level: SOL_BLUETOOTH, name: BT_SECURITY, initial: bt_security())
        return KernelSecurityLevel(rawValue: value.level) ?? .low
    }

    /// Asks the kernel for `level` on the link (it pairs or encrypts as needed).
    static func setSecurityLevel(_ fd: FileDescriptor, _ level: KernelSecurityLevel) throws(Errno) {
        var value = bt_security()
        value.level = level.rawValue
        try BluetoothSocket.setOption(fd, level: SOL_BLUETOOTH, name: BT_SECURITY, value)
    }

    /// The send MTU the kernel enforces on the channel (BT_SNDMTU), once connected.
    static func sendMTU(_ fd: FileDescriptor) throws(Errno) -> UInt16 {
        try BluetoothSocket.option(fd, level: SOL_BLUETOOTH, name: BT_SNDMTU, initial: UInt16(0))
    }

    /// The receive MTU (BT_RCVMTU).
    static func receiveMTU(_ fd: FileDescriptor) throws(Errno) -> UInt16 {
        try BluetoothSocket.option(fd, level: SOL_BLUETOOTH, name: BT_RCVMTU, initial: UInt16(0))
    }
}

extension KernelError {
    /// A connect the kernel itself timed out (ETIMEDOUT): no own bound to name.
    func withKernelTimeout() -> KernelError {
        guard case .connectTimeout(let peer, _) = self else { return self }
        return .connectFailed(peer: peer, errno: .timedOut, reason: KernelLinkLoss.reason(for: .timedOut))
    }
}

/// What the kernel's errno on an LE link means: the kernel maps the HCI reason of a failed
/// or lost connection to an errno (`bt_to_errno`); this says it back in words.
public enum KernelLinkLoss {
    /// The reason, in words, for a link that failed or ended with `errno`.
    public static func reason(for errno: Errno) -> String {
        switch errno {
        case .connectionReset: "the peer ended the connection (HCI remote user terminated, 0x13)"
        case .timedOut: "the link timed out: the peer went out of range or stopped answering (HCI connection timeout, 0x08)"
        case .connectionAbort: "this host ended the connection (HCI 0x16)"
        case .connectionRefused: "the connection was refused (HCI 0x0D–0x0F: the controller's limited resources, security, or the address; or unsupported parameters)"
        case .noMemory: "the controller has no room for another link (HCI Memory Capacity Exceeded, 0x07)"
        case .tooManyLinks: "the controller has no room for another link (HCI Connection Limit Exceeded, 0x09)"
        case .hostIsDown: "the peer could not be reached (no answer to the connection request)"
        case .noRouteToHost: "no route to the peer (adapter down or no LE support)"
        case .brokenPipe, .socketNotConnected: "the link is gone"
        case .operationNotSupportedByDevice: "the adapter was removed"
        case .networkDown: "the adapter is down"
        case .invalidArgument: "the kernel rejected the address or parameters"
        default: KernelError.message(errno)
        }
    }
}
