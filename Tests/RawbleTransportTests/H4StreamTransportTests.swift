import Glibc
import RawbleHCITransport
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

@testable import RawbleTransport

// MARK: Helpers

/// Runs blocking `body` on its own thread and awaits its result (the peer's blocking calls stay
/// off the Swift concurrency pool).
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let started = spawnThread { continuation.resume(returning: body()) }
        precondition(started == 0, "pthread_create failed: errno \(started)")
    }
}

private final class ThreadBody {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

/// Runs `body` on a new detached POSIX thread. Returns an errno on failure.
func spawnThread(_ body: @escaping @Sendable () -> Void) -> Int32 {
    let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { raw in
        guard let raw else { return nil }
        Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue().body()
        return nil
    }, context)
    if result != 0 {
        Unmanaged<ThreadBody>.fromOpaque(context).release()
        return result
    }
    pthread_detach(thread)
    return 0
}

/// Sets a 60 s receive timeout so a peer's blocking accept/read can never hang a test.
func boundBlocking(_ fd: Int32) {
    // The 60 s hang guard: a loaded full run (the VM tests take a core) once left 5 s between
    // two chunks of a 512 KiB read.
    var timeout = timeval(tv_sec: 60, tv_usec: 0)
    _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
}

/// The other end of the connection: a listening socket that accepts one connection.
final class Peer: Sendable {
    let listener: Int32
    let port: UInt16
    let path: String?

    /// Listens on 127.0.0.1, port 0 (the kernel picks one).
    init(tcp: Void = ()) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        port = try LocalPort.bindToLoopback(fd)
        try #require(listen(fd, 1) == 0)
        boundBlocking(fd)
        listener = fd
        path = nil
    }

    /// Listens on a unix socket in a fresh temporary directory.
    init(unixIn directory: String) throws {
        let socketPath = directory + "/hci.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(socketPath.utf8) + [0]
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
        try #require(bound)
        try #require(listen(fd, 1) == 0)
        boundBlocking(fd)
        listener = fd
        port = 0
        path = socketPath
    }

    deinit {
        Glibc.close(listener)
        if let path { unlink(path) }
    }

    /// Accepts one connection on a background thread (bounded by the 60 s receive timeout).
    func accept() async throws -> Connection {
        let listener = self.listener
        let fd = await onThread { Glibc.accept(listener, nil, nil) }
        try #require(fd >= 0, "accept failed: errno \(errno)")
        boundBlocking(fd)
        return Connection(fd: fd)
    }
}

/// An accepted connection, as seen by the peer.
final class Connection: Sendable {
    let fd: Int32
    private let closed = Mutex(false)
    init(fd: Int32) { self.fd = fd }
    deinit { close() }

    func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            precondition(n > 0, "peer write failed: errno \(errno)")
            offset += n
        }
    }

    /// Reads exactly `count` bytes on a background thread (nil on EOF or the 60 s timeout).
    func read(count: Int) async -> [UInt8]? {
        let fd = self.fd
        return await onThread {
            var bytes = [UInt8](repeating: 0, count: count)
            var offset = 0
            while offset < count {
                let n = bytes[offset...].withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return nil }
                offset += n
            }
            return bytes
        }
    }

    func close() {
        closed.withLock { closed in
            if !closed { Glibc.close(fd) }
            closed = true
        }
    }
}

func temporaryDirectory() throws -> String {
    var template = Array("/tmp/rawble-transport-XXXXXX".utf8CString)
    let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    try #require(result != nil)
    return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}

/// Collects `count` packets from the transport (bounded by the 60 s hang guard).
func receive(_ count: Int, from transport: H4StreamTransport) async throws -> [H4Packet] {
    let packets = transport.packets
    return try await within(seconds: 60) {
        var received: [H4Packet] = []
        for try await packet in packets {
            received.append(packet)
            if received.count == count { break }
        }
        return received
    }
}

/// Waits (bounded) for the packet sequence to end and returns the error it ended with.
func ending(of transport: H4StreamTransport) async throws -> TransportError? {
    let packets = transport.packets
    return try await within(seconds: 5) {
        do {
            for try await _ in packets {}
            return nil
        } catch let error as TransportError {
            return error
        }
    }
}

let reset = H4Packet(type: .command, bytes: [0x03, 0x0C, 0x00])
let commandComplete = H4Packet(type: .event, bytes: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
let aclData = H4Packet(type: .acl, bytes: [0x40, 0x20, 0x05, 0x00, 0x01, 0x00, 0x04, 0x00, 0x0A])
let emptyEvent = H4Packet(type: .event, bytes: [0x13, 0x00])

// MARK: Tests

@Suite struct H4StreamTransportTests {
    @Test func tcpPacketsSplitByteByByteAndCoalescedArriveWholeInOrder() async throws {
        let peer = try Peer()
        async let accepted = peer.accept()
        let transport = try await H4StreamTransport.connect(tcp: "127.0.0.1", port: peer.port)
        let connection = try await accepted
        // One packet a byte at a time, then three packets in one write.
        for byte in commandComplete.encoded { connection.write([byte]) }
        connection.write(aclData.encoded + emptyEvent.encoded + commandComplete.encoded)
        let received = try await receive(4, from: transport)
        #expect(received == [commandComplete, aclData, emptyEvent, commandComplete])
        await transport.close()
    }

    @Test func localhostNameResolves() async throws {
        let peer = try Peer()
        async let accepted = peer.accept()
        let transport = try await H4StreamTransport.connect(tcp: "localhost", port: peer.port)
        let connection = try await accepted
        connection.write(emptyEvent.encoded)
        #expect(try await receive(1, from: transport) == [emptyEvent])
        await transport.close()
    }

    @Test func garbageByteIsReportedAndTheNextPacketStillArrives() async throws {
        let peer = try Peer()
        let errors = Mutex<[H4FramerError]>([])
        async let accepted = peer.accept()
        let transport = try await H4StreamTransport.connect(tcp: "127.0.0.1", port: peer.port) { error in
            errors.withLock { $0.append(error) }
        }
        let connection = try await accepted
        connection.write(emptyEvent.encoded + [0xFF])
        connection.write(commandComplete.encoded)
        #expect(try await receive(2, from: transport) == [emptyEvent, commandComplete])
        // The error is reported on the event loop before the next packet is yielded.
        let reported = errors.withLock { $0 }
        #expect(reported.map(\.kind) == [.unknownPacketType(0xFF)])
        #expect(reported.first?.offset == emptyEvent.encoded.count)
        await transport.close()
    }

    @Test func sentPacketsArriveAsExactH4Bytes() async throws {
        let peer = try Peer()
        async let accepted = peer.accept()
        let transport = try await H4StreamTransport.connect(tcp: "127.0.0.1", port: peer.port)
        let connection = try await accepted
        try await transport.send(reset)
        try await transport.send(aclData)
        let expected: [UInt8] = [0x01, 0x03, 0x0C, 0x00] + [0x02, 0x40, 0x20, 0x05, 0x00, 0x01, 0x00, 0x04, 0x00, 0x0A]
        #expect(await connection.read(count: expected.count) == expected)
        await transport.close()
    }

    @Test func concurrentSendsDoNotInterleave() async throws {
        let peer = try Peer()
        async let accepted = peer.accept()
        // The write-stall bound is the 60 s hang guard here: a loaded full run (the VM tests take
        // a core) once kept the reader thread away longer than the default 10 s.
        let transport = try await H4StreamTransport.connect(tcp: "127.0.0.1", port: peer.port, writeStallTimeout: .seconds(60))
        let connection = try await accepted
        let big = H4Packet(type: .acl, bytes: [0x01, 0x00, 0xFF, 0xFF] + [UInt8](repeating: 0xAB, count: 0xFFFF))
        let count = 8
        // Read concurrently so the sends never stall on a full socket buffer.
        async let bytes = connection.read(count: count * big.encoded.count)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<count { group.addTask { try await transport.send(big) } }
            try await group.waitForAll()
        }
        var framer = H4Framer()
        framer.append(try #require(await bytes))
        let packets = framer.drain()
        #expect(packets.count == count)
        #expect(packets.allSatisfy { (try? $0.get()) == big })
        await transport.close()
    }

    @Test func unixSocketCarriesPacketsBothWays() async throws {
        let directory = try temporaryDirectory()
        defer { rmdir(directory) }
        let peer = try Peer(unixIn: directory)
        async let accepted = peer.accept()
        let transport = try await H4StreamTransport.connect(unix: try #require(peer.path))
        let connection = try await accepted
        for byte in aclData.encoded { connection.write([byte]) }
        connection.write(emptyEvent.encoded + commandComplete.encoded + emptyEvent.encoded)
        #expect(try await receive(4, from: transport) == [aclData, emptyEvent, commandComplete, emptyEvent])
        try await transport.send(reset)
        #expect(await connection.read(count: 4) == reset.encoded)
        await transport.close()
    }

    @Test func peerClosingFinishesWithClosedByPeerAndLaterSendsThrow() async throws {
        let peer = try Peer()
        async let accepted = peer.accept()
        let transport = try await H4StreamTransport.connect(tcp: "127.0.0.1", port: peer.port)
        let connection = try await accepted
        connection.write(emptyEvent.encoded)
        #expect(try await receive(1, from: transport) == [emptyEvent])
        connection.close()
        #expect(try await ending(of: transport) == .closedByPeer)
        await #expect(throws: TransportError.closedByPeer) { try await transport.send(reset) }
        await transport.close()  // still fine after the peer went away
    }

    @Test func connectingToAClosedPortIsRefused() async throws {
        // A port bound but not listening: the kernel refuses connections to it, and no other
        // test's listener can take it meanwhile (a port released before connecting was taken by
        // a parallel test's peer once, and the connection succeeded).
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        try #require(bound)
        let port = UInt16(bigEndian: address.sin_port)
        await #expect(throws: TransportError.connectionRefused(host: "127.0.0.1", port: port)) {
            _ = try await H4StreamTransport.connect(tcp: "127.0.0.1", port: port)
        }
    }

    @Test func connectingToAMissingUnixSocketFails() async throws {
        let directory = try temporaryDirectory()
        defer { rmdir(directory) }
        await #expect(throws: TransportError.ioError(errno: ENOENT, operation: "connect to \(directory)/none")) {
            _ = try await H4StreamTransport.connect(unix: directory + "/none")
        }
        let tooLong = String(repeating: "x", count: 200)
        await #expect(throws: TransportError.self) { _ = try await H4StreamTransport.connect(unix: tooLong) }
    }

    @Test func closeWhileAReadIsBlockedReturnsPromptlyAndEndsTheSequence() async throws {
        let peer = try Peer()
        async let accepted = peer.accept()
        let transport = try await H4StreamTransport.connect(tcp: "127.0.0.1", port: peer.port)
        let connection = try await accepted
        // The peer stays silent: the event loop waits for the socket to be readable.
        let end = Task { try await ending(of: transport) }
        try await within { await transport.close() }
        #expect(try await end.value == .closed)
        await #expect(throws: TransportError.closed) { try await transport.send(reset) }
        // The peer sees the connection go away.
        #expect(await connection.read(count: 1) == nil)
        try await within { await transport.close() }  // idempotent
    }

    @Test func cancellingTheConsumerStopsTheReader() async throws {
        let peer = try Peer()
        async let accepted = peer.accept()
        let transport = try await H4StreamTransport.connect(tcp: "127.0.0.1", port: peer.port)
        let connection = try await accepted
        let packets = transport.packets
        let consumer = Task {
            for try await _ in packets {}
        }
        consumer.cancel()
        _ = await consumer.result
        // close() returns only once the channel is closed.
        try await within { await transport.close() }
        #expect(await connection.read(count: 1) == nil)
    }
}
