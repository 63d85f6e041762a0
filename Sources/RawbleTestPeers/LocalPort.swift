#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// Local TCP ports for tests that need an address where nothing listens.
public enum LocalPort {
    /// A TCP port on 127.0.0.1 that nothing listens on (bound, then released): connecting to it
    /// is refused, as with a controller that was not started.
    public static func unused() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        return try bindToLoopback(fd)
    }

    /// Binds `fd`, an IPv4 socket, to 127.0.0.1 on a port the kernel picks, and returns the
    /// port: a test listener that can never collide with another test's.
    public static func bindToLoopback(_ fd: Int32) throws -> UInt16 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return UInt16(bigEndian: address.sin_port)
    }
}
