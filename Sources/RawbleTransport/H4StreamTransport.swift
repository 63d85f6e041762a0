#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import RawbleWire
import Synchronization

/// H4 over a connected stream socket (TCP or unix) or a serial line (``openSerial(path:baudRate:hardwareFlowControl:writeStallTimeout:onFramingError:)``):
/// each packet is its type byte followed by its bytes, back to back.
///
/// A dedicated thread does blocking `read`s, splits the bytes with ``H4Framer`` and yields the
/// packets into ``packets``. A framing error (a garbage type byte, a lying length) goes to
/// `onFramingError` and the byte is skipped; the stream goes on. Sends are serialized and
/// written whole. ``close()``, the peer closing, or the consumer dropping/cancelling the
/// iteration all shut the socket down so the blocked read returns (a terminal, which cannot be
/// shut down, is polled with a wake pipe instead); the reader thread then closes the descriptor.
public final class H4StreamTransport: HCITransport {
    /// Called on the reader thread for each framing error (the offending byte is skipped).
    public typealias FramingErrorHandler = @Sendable (H4FramerError) -> Void

    public let packets: AsyncThrowingStream<H4Packet, any Error>

    /// What the descriptor is: a socket (shut down to wake the reader) or a terminal (which
    /// cannot be shut down: the reader polls it together with a wake pipe).
    enum Medium {
        case socket
        /// A serial line, opened non-blocking. `wake` is a pipe written once by `close()`;
        /// a send that makes no progress for `writeStallMilliseconds` fails with `.timedOut`.
        case terminal(wake: (read: Int32, write: Int32), writeStallMilliseconds: Int32)
    }

    private struct State {
        /// The socket; -1 once the reader thread has closed it.
        var fd: Int32
        /// The terminal's wake pipe; `nil` for sockets and once the reader thread has closed it.
        var wake: (read: Int32, write: Int32)?
        /// Set by `close()` or stream termination: the end is local.
        var closing = false
        /// Why the connection ended (set before `packets` finishes); later sends throw it.
        var terminal: TransportError?
        var readerDone = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>
    private let medium: Medium
    /// Held for a whole send so packets never interleave. Lock order: writeLock, then state.
    private let writeLock = Mutex(())

    /// Adopts a connected stream socket `fd` (the transport owns it from now on and starts
    /// reading at once).
    public convenience init(fileDescriptor fd: Int32, onFramingError: FramingErrorHandler? = nil) {
        self.init(fileDescriptor: fd, medium: .socket, onFramingError: onFramingError)
    }

    /// Adopts `fd` (and, for a terminal, its wake pipe) and starts reading at once.
    init(fileDescriptor fd: Int32, medium: Medium, onFramingError: FramingErrorHandler?) {
        let (stream, continuation) = AsyncThrowingStream<H4Packet, any Error>.makeStream()
        packets = stream
        self.medium = medium
        var initial = State(fd: fd)
        if case .terminal(let wake, _) = medium { initial.wake = wake }
        state = Mutex(initial)
        continuation.onTermination = { [weak self] termination in
            // Consumer gone (cancelled or dropped): stop reading.
            if case .cancelled = termination { self?.shutdown(local: true) }
        }
        let result = spawnThread { [self] in
            self.readLoop(fd: fd, continuation: continuation, onFramingError: onFramingError)
        }
        if result != 0 {
            finish(.ioError(errno: result, operation: "pthread_create"), continuation: continuation)
        }
    }

    deinit {
        // Only reached when the reader thread is gone; it closed the descriptor already.
        state.withLock { state in
            if state.fd >= 0 { _ = Glibc.close(state.fd) }
            if let wake = state.wake {
                _ = Glibc.close(wake.read)
                _ = Glibc.close(wake.write)
            }
        }
    }

    // MARK: Connecting

    /// Connects over TCP to `host` (a name or an IPv4/IPv6 literal) at `port`, trying every
    /// address getaddrinfo returns, all within `timeout` (then ``TransportError/timedOut(operation:)``:
    /// a host that drops the connection attempt, or a listener too busy to take it). The name
    /// lookup itself is not bounded by `timeout`.
    public static func connect(
        tcp host: String, port: UInt16, timeout: Duration = .seconds(10), onFramingError: FramingErrorHandler? = nil
    ) async throws(TransportError) -> H4StreamTransport {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            throw .addressResolution(host: host, message: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        var lastErrno: Int32 = ECONNREFUSED
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let info = entry?.pointee {
            entry = info.ai_next
            let flags = Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
            let fd = socket(info.ai_family, info.ai_socktype | flags, info.ai_protocol)
            guard fd >= 0 else {
                lastErrno = errno
                continue
            }
            if connectBefore(deadline, fd, info.ai_addr, info.ai_addrlen) {
                // Back to blocking: the reader thread does blocking reads.
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
                var one: Int32 = 1
                _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                return H4StreamTransport(fileDescriptor: fd, onFramingError: onFramingError)
            }
            lastErrno = errno
            _ = Glibc.close(fd)
        }
        if lastErrno == ECONNREFUSED { throw .connectionRefused(host: host, port: port) }
        if lastErrno == ETIMEDOUT { throw .timedOut(operation: "connect to \(host) port \(port)") }
        throw .ioError(errno: lastErrno, operation: "connect to \(host) port \(port)")
    }

    /// `connect(2)` on a non-blocking socket, waiting for the outcome until `deadline`; on
    /// failure `errno` says why (ETIMEDOUT when the deadline passed).
    private static func connectBefore(
        _ deadline: ContinuousClock.Instant, _ fd: Int32, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t
    ) -> Bool {
        if Glibc.connect(fd, address, length) == 0 { return true }
        guard errno == EINPROGRESS || errno == EINTR else { return false }
        var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else {
                errno = ETIMEDOUT
                return false
            }
            let ready = poll(&poller, 1, remaining.pollMilliseconds)
            if ready > 0 { break }
            if ready < 0 && errno != EINTR { return false }
        }
        return pendingConnectSucceeded(fd)
    }

    /// Whether the non-blocking connect on `fd` (now writable) succeeded; sets `errno` if not.
    private static func pendingConnectSucceeded(_ fd: Int32) -> Bool {
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 else { return false }
        if error != 0 {
            errno = error
            return false
        }
        return true
    }

    /// Connects to the unix stream socket at `path`.
    public static func connect(
        unix path: String, onFramingError: FramingErrorHandler? = nil
    ) async throws(TransportError) -> H4StreamTransport {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !pathBytes.isEmpty, pathBytes.count < capacity else {
            throw .invalidAddress("unix socket path must be 1…\(capacity - 1) bytes: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
            raw[pathBytes.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .ioError(errno: errno, operation: "socket") }
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connectRetryingEINTR(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected else {
            let code = errno
            _ = Glibc.close(fd)
            throw .ioError(errno: code, operation: "connect to \(path)")
        }
        return H4StreamTransport(fileDescriptor: fd, onFramingError: onFramingError)
    }

    /// `connect(2)`; an EINTR means the connection goes on in the background, so wait for it.
    private static func connectRetryingEINTR(
        _ fd: Int32, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t
    ) -> Bool {
        if Glibc.connect(fd, address, length) == 0 { return true }
        guard errno == EINTR else { return false }
        var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        while poll(&poller, 1, -1) < 0 {
            if errno != EINTR { return false }
        }
        return pendingConnectSucceeded(fd)
    }

    // MARK: HCITransport

    public func send(_ packet: H4Packet) async throws(TransportError) {
        let bytes = packet.encoded
        let result: TransportError? = writeLock.withLock { _ in
            let (fd, terminal) = state.withLock { ($0.fd, $0.terminal) }
            if let terminal { return terminal }
            guard fd >= 0 else { return .closed }
            switch medium {
            case .socket: return Self.writeAll(fd: fd, bytes: bytes)
            case let .terminal(wake, stall):
                return Self.writeAll(terminal: fd, bytes: bytes, wake: wake.read, stallMilliseconds: stall)
            }
        }
        if let result { throw result }
    }

    public func close() async {
        shutdown(local: true)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.readerDone { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    // MARK: Internals

    /// Full write with EINTR / partial-write handling; `nil` on success.
    private static func writeAll(fd: Int32, bytes: [UInt8]) -> TransportError? {
        bytes.withUnsafeBytes { raw -> TransportError? in
            guard let base = raw.baseAddress else { return nil }  // nothing to write
            var offset = 0
            while offset < raw.count {
                let n = Glibc.send(fd, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n > 0 {
                    offset += n
                    continue
                }
                let code = errno
                if n < 0 && code == EINTR { continue }
                if code == EPIPE || code == ECONNRESET { return .closedByPeer }
                return .ioError(errno: code, operation: "send")
            }
            return nil
        }
    }

    /// Full write to a non-blocking terminal: waits (bounded) for room when the line is full,
    /// gives up when `wake` becomes readable (closing) or the line hangs up; `nil` on success.
    private static func writeAll(
        terminal fd: Int32, bytes: [UInt8], wake: Int32, stallMilliseconds: Int32
    ) -> TransportError? {
        bytes.withUnsafeBytes { raw -> TransportError? in
            guard let base = raw.baseAddress else { return nil }
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, base + offset, raw.count - offset)
                if n > 0 {
                    offset += n
                    continue
                }
                let code = errno
                if n < 0 && code == EINTR { continue }
                if n < 0 && code == EIO { return .closedByPeer }
                guard n < 0 && (code == EAGAIN || code == EWOULDBLOCK) else {
                    return .ioError(errno: code, operation: "write")
                }
                var fds = [
                    pollfd(fd: fd, events: Int16(POLLOUT), revents: 0),
                    pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
                ]
                let ready = poll(&fds, 2, stallMilliseconds)
                if ready < 0 {
                    if errno == EINTR { continue }
                    return .ioError(errno: errno, operation: "poll")
                }
                if ready == 0 { return .timedOut(operation: "serial write") }
                if fds[1].revents != 0 { return .closed }
                if fds[0].revents & Int16(POLLOUT) == 0 { return .closedByPeer }  // POLLHUP / POLLERR
            }
            return nil
        }
    }

    /// Wakes the blocked reader: shuts a socket down (both directions), or writes a terminal's
    /// wake pipe.
    private func shutdown(local: Bool) {
        state.withLock { state in
            if local { state.closing = true }
            guard state.fd >= 0 else { return }
            switch medium {
            case .socket:
                _ = Glibc.shutdown(state.fd, Int32(SHUT_RDWR))
            case .terminal:
                guard let wake = state.wake else { return }
                var byte: UInt8 = 1
                _ = Glibc.write(wake.write, &byte, 1)
            }
        }
    }

    /// For a terminal: waits until `fd` is readable. `nil` when a read should follow; otherwise
    /// why the stream ends (closing, hang-up, poll failure).
    private func awaitReadable(terminal fd: Int32, wake: Int32) -> TransportError? {
        while true {
            var fds = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&fds, 2, -1) < 0 {
                if errno == EINTR { continue }
                return .ioError(errno: errno, operation: "poll")
            }
            if fds[1].revents != 0 { return .closed }
            if fds[0].revents & Int16(POLLIN) != 0 { return nil }
            // POLLHUP / POLLERR / POLLNVAL without data: the other end is gone.
            if fds[0].revents != 0 { return .closedByPeer }
        }
    }

    private func readLoop(
        fd: Int32,
        continuation: AsyncThrowingStream<H4Packet, any Error>.Continuation,
        onFramingError: FramingErrorHandler?
    ) {
        var framer = H4Framer()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let end: TransportError
        while true {
            if case .terminal(let wake, _) = medium, let reason = awaitReadable(terminal: fd, wake: wake.read) {
                end = state.withLock { $0.closing } ? .closed : reason
                break
            }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                framer.append(buffer[0..<n])
                while true {
                    do {
                        guard let packet = try framer.nextPacket() else { break }
                        continuation.yield(packet)
                    } catch {
                        onFramingError?(error)
                    }
                }
                continue
            }
            let code = errno
            if n < 0 && code == EINTR { continue }
            if case .terminal = medium, n < 0 && (code == EAGAIN || code == EWOULDBLOCK) { continue }
            let closing = state.withLock { $0.closing }
            if closing {
                end = .closed
            } else if n == 0 || code == ECONNRESET || code == EPIPE || code == EIO {
                // EIO: a terminal hung up (a pty's master closed, a USB adapter unplugged).
                end = .closedByPeer
            } else {
                end = .ioError(errno: code, operation: "read")
            }
            break
        }
        do throws(H4FramerError) {
            try framer.finish()
        } catch {
            onFramingError?(error)
        }
        finish(end, continuation: continuation)
    }

    /// Records the end, finishes `packets`, closes the descriptor, wakes `close()` callers.
    private func finish(_ end: TransportError, continuation: AsyncThrowingStream<H4Packet, any Error>.Continuation) {
        state.withLock { state in
            if state.terminal == nil { state.terminal = end }
            if case .socket = medium, state.fd >= 0 { _ = Glibc.shutdown(state.fd, Int32(SHUT_RDWR)) }
        }
        continuation.finish(throwing: end)
        let waiters = writeLock.withLock { _ in
            state.withLock { state in
                if state.fd >= 0 { _ = Glibc.close(state.fd) }
                state.fd = -1
                if let wake = state.wake {
                    _ = Glibc.close(wake.read)
                    _ = Glibc.close(wake.write)
                }
                state.wake = nil
                state.readerDone = true
                defer { state.waiters = [] }
                return state.waiters
            }
        }
        for waiter in waiters { waiter.resume() }
    }
}
