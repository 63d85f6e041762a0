#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CBluetooth
import SystemPackage

/// Thin, typed wrappers over the socket system calls the kernel path makes: each returns or
/// throws the call's `Errno`, nothing more. The callers turn errnos into ``KernelError``s with
/// the context only they know (which adapter, which peer).
enum BluetoothSocket {
    /// The errno of the last failed call.
    static var lastErrno: Errno { Errno(rawValue: errno) }

    /// `socket(AF_BLUETOOTH, type | SOCK_CLOEXEC [| SOCK_NONBLOCK], proto)`.
    static func open(type: Int32, protocol proto: Int32, nonBlocking: Bool) throws(Errno) -> FileDescriptor {
        var flags = type | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { flags |= Int32(SOCK_NONBLOCK.rawValue) }
        let fd = socket(AF_BLUETOOTH, flags, proto)
        guard fd >= 0 else { throw lastErrno }
        return FileDescriptor(rawValue: fd)
    }

    /// `bind(fd, address)` for any sockaddr structure.
    static func bind<Address: BitwiseCopyable>(_ fd: FileDescriptor, _ address: Address) throws(Errno) {
        guard withSockaddr(address, { Glibc.bind(fd.rawValue, $0, $1) }) == 0 else { throw lastErrno }
    }

    /// `connect(fd, address)`; a non-blocking socket answers EINPROGRESS (thrown like any errno).
    static func connect<Address: BitwiseCopyable>(_ fd: FileDescriptor, _ address: Address) throws(Errno) {
        guard withSockaddr(address, { Glibc.connect(fd.rawValue, $0, $1) }) == 0 else { throw lastErrno }
    }

    /// Calls `body` with `address` as a `sockaddr` pointer and its size, as bind and connect take it.
    private static func withSockaddr<Address: BitwiseCopyable>(
        _ address: Address, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32
    ) -> Int32 {
        var address = address
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<Address>.size)) }
        }
    }

    /// `setsockopt(fd, level, name, &value, sizeof value)`.
    static func setOption<Value: BitwiseCopyable>(_ fd: FileDescriptor, level: Int32, name: Int32, _ value: Value) throws(Errno) {
        let result = withUnsafeBytes(of: value) { setsockopt(fd.rawValue, level, name, $0.baseAddress, socklen_t($0.count)) }
        guard result == 0 else { throw lastErrno }
    }

    /// `getsockopt(fd, level, name)` into a value of type `Value` starting from `initial`.
    static func option<Value: BitwiseCopyable>(_ fd: FileDescriptor, level: Int32, name: Int32, initial: Value) throws(Errno) -> Value {
        var value = initial
        var length = socklen_t(MemoryLayout<Value>.size)
        let result = withUnsafeMutableBytes(of: &value) { getsockopt(fd.rawValue, level, name, $0.baseAddress, &length) }
        guard result == 0 else { throw lastErrno }
        return value
    }

    /// `ioctl(fd, request, argument)` with an integer argument (HCIDEVUP takes the index).
    static func ioctl(_ fd: FileDescriptor, _ request: UInt, integer argument: Int32) throws(Errno) {
        guard Glibc.ioctl(fd.rawValue, request, argument) >= 0 else { throw lastErrno }
    }

    /// `ioctl(fd, request, pointer)` with a structure the kernel fills in.
    static func ioctl(_ fd: FileDescriptor, _ request: UInt, pointer: UnsafeMutableRawPointer) throws(Errno) {
        guard Glibc.ioctl(fd.rawValue, request, pointer) >= 0 else { throw lastErrno }
    }

    /// `poll` on one descriptor for `events`, at most `milliseconds`; returns the revents (0 on
    /// timeout). EINTR is retried with the same bound.
    static func poll(_ fd: FileDescriptor, events: Int16, milliseconds: Int32) throws(Errno) -> Int16 {
        var entry = pollfd(fd: fd.rawValue, events: events, revents: 0)
        while true {
            let result = Glibc.poll(&entry, 1, milliseconds)
            if result >= 0 { return result == 0 ? 0 : entry.revents }
            let failure = lastErrno
            guard failure == .interrupted else { throw failure }
        }
    }

    /// Makes `fd`'s receive queue room for `bytes` of socket memory (SO_RCVBUFFORCE with
    /// CAP_NET_ADMIN, else as much as `net.core.rmem_max` allows).
    ///
    /// The kernel drops a packet for an HCI socket whose queue is full, silently: what every
    /// HCI and management socket receives (advertising reports, the management interface's
    /// Device Found for each of them during a discovery) fills the default ~208 KiB, a few
    /// hundred small packets, in a few seconds of a reader held up (a loaded machine). Then
    /// the answer to a command of one's own is lost with them: seen, a Stop Discovery the
    /// kernel answered at once and rawble waited 30 s for, in a loaded 6.1 guest beside a
    /// discovering bluetoothd.
    static func enlargeReceiveBuffer(_ fd: FileDescriptor, bytes: Int32 = 8 << 20) {
        var size = bytes
        let forced = Privileges.perform(.netAdmin) {
            setsockopt(fd.rawValue, SOL_SOCKET, SO_RCVBUFFORCE, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if forced != 0 {
            _ = setsockopt(fd.rawValue, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// Closes `fd`, ignoring errors (used on paths that already fail).
    static func closeQuietly(_ fd: FileDescriptor) {
        try? fd.close()
    }
}
