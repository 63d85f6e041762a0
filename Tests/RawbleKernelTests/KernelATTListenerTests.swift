import Glibc
import RawbleWire
@testable import RawbleKernel
import RawbleBearer
import RawbleTestPeers
import RawbleTestSupport
import SystemPackage
import Testing

/// The listener's accept loop on a unix SOCK_SEQPACKET listening socket (this machine has no
/// AF_BLUETOOTH; the real L2CAP listener is proven in the VM).
@Suite("KernelATTListener: accepting centrals")
struct KernelATTListenerTests {
    /// A listening unix SOCK_SEQPACKET socket in a fresh directory, and its path.
    static func listening() throws -> (FileDescriptor, String) {
        let path = "/tmp/rawble-listener-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0, "bind: errno \(errno)")
        try #require(listen(fd, 4) == 0)
        return (FileDescriptor(rawValue: fd), path)
    }

    /// Connects a client to `path` (blocking; the listener's backlog takes it at once).
    static func connectClient(_ path: String) throws -> Int32 {
        let (fd, connected) = attemptConnection(path)
        try #require(connected == 0, "connect: errno \(errno)")
        return fd
    }

    /// A client socket and connect's result (0, or -1 with errno set).
    static func attemptConnection(_ path: String) -> (Int32, Int32) {
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return (fd, connected)
    }

    @Test("a central that connects is accepted as a bearer carrying PDUs both ways")
    func acceptsABearer() async throws {
        let (fd, path) = try Self.listening()
        defer { unlink(path) }
        let listener = KernelATTListener(listening: fd, receiveMTU: 517)
        defer { listener.close() }
        let accepting = Task { try await listener.accept(timeout: .seconds(30)) }
        let client = try Self.connectClient(path)
        defer { close(client) }
        let accepted = try await within(seconds: 30) { try await accepting.value }
        let request: [UInt8] = [0x02, 0x00, 0x02] // Exchange MTU Request, 512
        _ = request.withUnsafeBytes { send(client, $0.baseAddress, $0.count, 0) }
        let first = try await within(seconds: 30) {
            var pdus = accepted.bearer.pdus.makeAsyncIterator()
            return try await pdus.next()
        }
        #expect(first == request)
        let response: [UInt8] = [0x03, 0x00, 0x02]
        try await accepted.bearer.send(response)
        let received = try await within(seconds: 30) {
            try await onOwnThread { () -> [UInt8] in
                var buffer = [UInt8](repeating: 0, count: 64)
                let n = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
                return Array(buffer.prefix(max(n, 0)))
            }
        }
        #expect(received == response)
        await accepted.bearer.close()
    }

    @Test("no central within the timeout: connectTimeout; close() ends a waiting accept with ECANCELED; accepting after close fails at once")
    func timeoutAndClose() async throws {
        let (fd, path) = try Self.listening()
        defer { unlink(path) }
        let clock = ManualClock()
        let listener = KernelATTListener(listening: fd, receiveMTU: 517, clock: clock)
        let accepting = Task { try await listener.accept(timeout: .milliseconds(200)) }
        try await clock.advanceOnceArmed(by: .milliseconds(200))  // the timeout, in virtual time
        await #expect(throws: KernelError.connectTimeout(peer: "a central", seconds: 0.2)) {
            _ = try await within { try await accepting.value }
        }
        // Whether the close comes before the accept starts waiting or during the wait, the
        // accept ends with ECANCELED.
        let waiting = Task { try await listener.accept() }
        listener.close()
        let result = try await within(seconds: 30) { await waiting.result }
        guard case .failure(let error) = result, case .system(_, let errno)? = error as? KernelError else {
            Issue.record("expected ECANCELED, got \(result)")
            return
        }
        #expect(errno == .canceled)
        await #expect(throws: KernelError.self) { _ = try await listener.accept(timeout: .seconds(1)) }
        // The listening socket is closed: a client can no longer connect.
        let (client, connected) = Self.attemptConnection(path)
        close(client)
        #expect(connected == -1)
    }
}
