import Foundation
import Glibc

/// A blocking TCP client on 127.0.0.1 for tests of an HTTP server (`rawble hr --serve`'s): bytes
/// out as given (garbage included), bytes in with every read bounded by a receive timeout.
/// Used from one thread at a time (``onOwnThread(_:)``).
public final class RawHTTPClient: @unchecked Sendable {
    /// A socket call that failed, or a read that timed out.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The socket.
    public let fd: Int32
    /// Everything read so far.
    public private(set) var received: [UInt8] = []
    /// Whether the server closed the connection (a read returned 0, or the connection was reset).
    public private(set) var closedByServer = false

    /// Connects to `port`; `receiveBuffer` sets SO_RCVBUF first (a small one: a client that
    /// does not read fills up soon); each read waits at most `timeout` seconds.
    public init(port: Int, receiveBuffer: Int32? = nil, timeout: Int = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw Failure(description: "connect: errno \(errno)")
        }
    }

    deinit { close(fd) }

    /// Sends `text`; a server that already closed is not an error here (the reply says it).
    public func send(_ text: String) {
        var bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            sent += n
        }
    }

    /// `GET path` with this server's own `Host`.
    public func get(_ path: String, port: Int) {
        send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\r\n")
    }

    /// Reads until `done` holds for this client (what it read), or the server closes; throws
    /// when a read times out first.
    public func read(until done: (RawHTTPClient) -> Bool) throws {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while !done(self) {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                received += chunk[..<n]
            } else if n == 0 || errno == ECONNRESET {
                closedByServer = true
                return
            } else if errno == EINTR {
                continue
            } else {
                throw Failure(description: "no answer in time (errno \(errno)); read so far: \(text.prefix(300))")
            }
        }
    }

    /// Reads until the server closes the connection.
    public func readToClose() throws {
        try read { _ in false }
        guard closedByServer else { throw Failure(description: "the server did not close: \(text.prefix(300))") }
    }

    public var text: String { String(decoding: received, as: UTF8.self) }

    /// The last 4 KiB read, as text: a cheap look at what just arrived.
    public var tail: String { String(decoding: received.suffix(4096), as: UTF8.self) }

    /// The status code of the response read, from its status line.
    public var status: Int? {
        guard text.hasPrefix("HTTP/1.1 ") else { return nil }
        return Int(text.dropFirst(9).prefix(3))
    }

    /// The response's header `name` (case-insensitive), from what was read.
    public func header(_ name: String) -> String? {
        let head = text.components(separatedBy: "\r\n\r\n").first ?? ""
        for line in head.split(separator: "\r\n").dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name.lowercased() {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// Whether the last 4 KiB read end with a whole event whose strap is named `name`.
    public func hasWholeEvent(naming name: String) -> Bool {
        let tail = tail
        guard let found = tail.range(of: "\"name\":\"\(name)\"", options: .backwards) else { return false }
        return tail[found.upperBound...].contains("}\n\n")
    }

    /// The `data` lines of the whole events of type `type` read so far, in order. Lines are
    /// split on LF bytes, a CR before it dropped (as `String` would keep CR LF as one
    /// character); the chunked encoding's size lines fall between events.
    public func events(_ type: String) -> [String] {
        let lines = received.split(separator: 10, omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == 13 ? line.dropLast() : line, as: UTF8.self)
        }
        var found: [String] = []
        for (index, line) in lines.enumerated() where line == "event: \(type)" && index + 2 < lines.count {
            let data = lines[index + 1]
            if data.hasPrefix("data: "), lines[index + 2].isEmpty { found.append(String(data.dropFirst(6))) }
        }
        return found
    }
}
