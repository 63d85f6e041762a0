import Glibc
import RawbleHCITransport
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

@testable import RawbleTransport

// MARK: Descriptors of this process

/// The whole contents of a small text file under /proc ("" if it cannot be read).
func procFile(_ path: String) -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return "" }
    defer { Glibc.close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { break }
        bytes += chunk[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// What each open descriptor of this process refers to (the targets of /proc/self/fd's links).
func openDescriptorTargets() -> [String] {
    guard let directory = opendir("/proc/self/fd") else { return [] }
    defer { closedir(directory) }
    var targets: [String] = []
    while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        guard name != ".", name != ".." else { continue }
        var target = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/fd/" + name, &target, target.count - 1)
        guard n > 0 else { continue }  // the directory's own descriptor, closed by now
        targets.append(String(decoding: target[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return targets
}

/// How many descriptors of this process refer to one of `targets`.
func openDescriptors(to targets: Set<String>) -> Int {
    openDescriptorTargets().filter { targets.contains($0) }.count
}

/// Drops the one reference to `transport` and returns how many descriptors of this process
/// still refer to `targets` once its channel has closed (a dropped transport closes its channel
/// asynchronously, on its event loop): 0 when it released them. Fails the test when the channel
/// does not close within 20 s (the transport leaked, or dropping it does not close it). This, not the
/// peer seeing end-of-stream, is the leak check: SwiftNIO opens its sockets without FD_CLOEXEC,
/// so a child process another test spawns meanwhile (Foundation's `Process` does not close
/// them) keeps the connection open in the child until it exits, whatever this process did.
func descriptorsLeftAfterDropping(_ transport: inout H4StreamTransport?, to targets: Set<String>) async throws -> Int {
    let closed = try #require(transport).channelClosed
    transport = nil
    do {
        try await within(seconds: 20) { try await closed.get() }
    } catch is TestTimeout {
        Issue.record("the dropped transport's channel did not close within 20 s: something still holds the transport, or dropping it does not close the channel")
    }
    return openDescriptors(to: targets)
}

/// The "socket:[inode]" names of this machine's TCP sockets whose remote port is `port`
/// (from /proc/net/tcp and tcp6): the client ends of connections to a test's listener.
func tcpSockets(toPort port: UInt16) -> Set<String> {
    var sockets: Set<String> = []
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        for line in procFile(table).split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 9, let remote = fields[2].split(separator: ":").last,
                UInt16(remote, radix: 16) == port, fields[9] != "0"
            else { continue }
            sockets.insert("socket:[\(fields[9])]")
        }
    }
    return sockets
}

// MARK: Peer helpers

extension Connection {
    /// Whether the peer reads end-of-stream (the other side's socket is gone) within 60 s: generous, because a
    /// child process another test spawns meanwhile may hold the socket until it exits (see
    /// `descriptorsLeftAfterDropping(_:to:)`);
    /// false on data, an error or silence.
    func seesEndOfStream() async -> Bool {
        let fd = self.fd
        return await onThread {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            while true {
                let ready = poll(&poller, 1, 60_000)
                if ready < 0 && errno == EINTR { continue }
                guard ready > 0 else { return false }
                var byte: UInt8 = 0
                let n = Glibc.recv(fd, &byte, 1, Int32(MSG_DONTWAIT))
                if n < 0 && errno == EINTR { continue }
                return n == 0
            }
        }
    }

    /// Sends packets from `packets` back to back without blocking, until `limit` bytes are out
    /// or the socket stays full for 2 s (the reader stopped reading). Returns the bytes sent and
    /// whether the peer was pushed back.
    func flood(limit: Int, packet: @escaping @Sendable (Int) -> [UInt8]) async -> (sent: Int, blocked: Bool) {
        let fd = self.fd
        return await onThread {
            var sent = 0
            var index = 0
            var pending = packet(0)
            var offset = 0
            while sent < limit {
                let n = pending[offset...].withUnsafeBytes {
                    Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                }
                if n > 0 {
                    sent += n
                    offset += n
                    if offset == pending.count {
                        index += 1
                        pending = packet(index)
                        offset = 0
                    }
                    continue
                }
                if n < 0 && errno == EINTR { continue }
                guard n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) else { break }
                var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                if poll(&poller, 1, 2_000) == 0 { return (sent, true) }
            }
            return (sent, false)
        }
    }

    /// Sends packets from `packets` (blocking) until a send fails or `limit` packets are out.
    func stream(limit: Int, packet: @escaping @Sendable (Int) -> [UInt8]) async -> Int {
        let fd = self.fd
        return await onThread {
            for index in 0..<limit {
                var bytes = packet(index)[...]
                while !bytes.isEmpty {
                    let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else { return index }
                    bytes = bytes.dropFirst(n)
                }
            }
            return limit
        }
    }
}

/// ACL packet `index`: 1 KiB of payload whose first four bytes are the index, so order shows.
@Sendable func numberedPacket(_ index: Int) -> [UInt8] {
    let payloadLength = 1_021
    let number = UInt32(truncatingIfNeeded: index)
    let payload = withUnsafeBytes(of: number.littleEndian) { Array($0) } + [UInt8](repeating: 0x5A, count: payloadLength - 4)
    return [H4PacketType.acl.rawValue, 0x40, 0x00, UInt8(payloadLength & 0xFF), UInt8(payloadLength >> 8)] + payload
}

/// A TCP transport connected to a fresh listener, and the peer's end.
func connectedPair() async throws -> (Peer, H4StreamTransport, Connection) {
    let peer = try Peer()
    async let accepted = peer.accept()
    let transport = try await H4StreamTransport.connect(tcp: "127.0.0.1", port: peer.port)
    return (peer, transport, try await accepted)
}

// MARK: Tests

@Suite struct TransportBackPressureTests {
    @Test func aPeerFloodingAConsumerThatDoesNotReadIsPushedBackAndNothingIsLost() async throws {
        let (_, transport, connection) = try await connectedPair()
        let size = numberedPacket(0).count
        // Nobody reads `packets`: the transport must stop reading, so the kernel's buffers fill
        // and the peer's sends block well before 64 MiB (an unbounded reader takes it all).
        let limit = 64 << 20
        let flood = await connection.flood(limit: limit, packet: numberedPacket)
        #expect(flood.blocked, "the peer sent \(flood.sent) bytes without ever being pushed back")
        #expect(flood.sent < limit)
        // The consumer now reads everything, in order; the peer completes its last packet.
        let count = (flood.sent + size - 1) / size
        let remainder = count * size - flood.sent
        let rest = Task {
            let tail = Array(numberedPacket(count - 1).suffix(remainder))
            if !tail.isEmpty { connection.write(tail) }
        }
        let packets = transport.packets
        let received = try await within(seconds: 60) {
            var received = 0
            for try await packet in packets {
                guard packet.encoded == numberedPacket(received) else { return -received - 1 }
                received += 1
                if received == count { break }
            }
            return received
        }
        await rest.value
        #expect(received == count)
        await transport.close()
    }
}

@Suite struct TransportWriteStallTests {
    /// A peer that accepts and then never reads: once the kernel's buffers are full, a send makes
    /// no progress and must fail with `.timedOut` after the stall timeout, not wait for ever.
    @Test(arguments: ["tcp", "unix"])
    func aSendToAPeerThatNeverReadsTimesOut(kind: String) async throws {
        let directory = try temporaryDirectory()
        defer { rmdir(directory) }
        let peer = kind == "tcp" ? try Peer() : try Peer(unixIn: directory)
        async let accepted = peer.accept()
        let transport = kind == "tcp"
            ? try await H4StreamTransport.connect(tcp: "127.0.0.1", port: peer.port, writeStallTimeout: .milliseconds(300))
            : try await H4StreamTransport.connect(unix: try #require(peer.path), writeStallTimeout: .milliseconds(300))
        let connection = try await accepted
        // 64 KiB ACL packets: far more than any socket buffer holds, well before the bound.
        let packet = H4Packet(type: .acl, bytes: [0x40, 0x00, 0xFF, 0xFF] + [UInt8](repeating: 0x5A, count: 0xFFFF))
        let outcome = try await within(seconds: 60) { () async -> TransportError? in
            for _ in 0..<2_000 {
                do throws(TransportError) { try await transport.send(packet) } catch { return error }
            }
            return nil
        }
        let expected = kind == "tcp" ? "write to 127.0.0.1 port \(peer.port)" : "write to \(peer.path ?? "")"
        #expect(outcome == .timedOut(operation: expected))
        _ = connection
        await transport.close()
    }
}

@Suite struct TransportEndingTests {
    @Test func aPeerThatResetsTheConnectionEndsThePacketsWithClosedByPeer() async throws {
        let (_, transport, connection) = try await connectedPair()
        connection.write(emptyEvent.encoded)
        #expect(try await receive(1, from: transport) == [emptyEvent])
        // SO_LINGER with a zero timeout: close(2) sends a RST instead of a FIN.
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        #expect(setsockopt(connection.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size)) == 0)
        connection.close()
        #expect(try await ending(of: transport) == .closedByPeer)
        await #expect(throws: TransportError.closedByPeer) { try await transport.send(reset) }
        try await within { await transport.close() }
    }

    @Test func closingWhileThePeerStreamsEndsThePacketsWithClosedPromptly() async throws {
        let (_, transport, connection) = try await connectedPair()
        // The peer streams until its sends fail (the transport closed its end).
        let streaming = Task { await connection.stream(limit: 1 << 20, packet: numberedPacket) }
        let first = try await receive(100, from: transport)
        #expect(first.map(\.encoded) == (0..<100).map(numberedPacket))
        let end = Task { try await ending(of: transport) }
        try await within { await transport.close() }
        #expect(try await end.value == .closed)
        let sent = try await within(seconds: 10) { await streaming.value }
        #expect(sent < 1 << 20)
        await #expect(throws: TransportError.closed) { try await transport.send(reset) }
    }
}

@Suite struct TransportDescriptorTests {
    @Test func tcpTransportsOpenedAndClosedOrDroppedLeaveNoDescriptor() async throws {
        for _ in 0..<5 {
            let (peer, transport, connection) = try await connectedPair()
            let sockets = tcpSockets(toPort: peer.port)
            #expect(openDescriptors(to: sockets) == 1)
            await transport.close()
            #expect(openDescriptors(to: sockets) == 0)
            _ = connection
        }
        // Dropped without close(): the channel closes all the same.
        let peer = try Peer()
        async let accepted = peer.accept()
        var transport: H4StreamTransport? = try await H4StreamTransport.connect(tcp: "127.0.0.1", port: peer.port)
        let connection = try await accepted
        let sockets = tcpSockets(toPort: peer.port)
        #expect(transport != nil && openDescriptors(to: sockets) == 1)
        // Nothing is left open (the channel closes once the transport is gone).
        #expect(try await descriptorsLeftAfterDropping(&transport, to: sockets) == 0)
        _ = connection
    }

    @Test func unixTransportsOpenedAndClosedOrDroppedReleaseTheirSocket() async throws {
        let directory = try temporaryDirectory()
        defer { rmdir(directory) }
        // A unix client socket has no name in /proc: the peer reading end-of-stream shows the
        // last descriptor on it is closed (the transport never shuts the socket down first).
        for dropped in [false, false, false, true] {
            let peer = try Peer(unixIn: directory)
            async let accepted = peer.accept()
            var transport: H4StreamTransport? = try await H4StreamTransport.connect(unix: try #require(peer.path))
            let connection = try await accepted
            try await transport?.send(reset)
            #expect(await connection.read(count: 4) == reset.encoded)
            if !dropped { await transport?.close() }
            transport = nil
            #expect(await connection.seesEndOfStream(), "dropped: \(dropped)")
        }
    }

    @Test func serialTransportsOpenedAndClosedOrDroppedLeaveNoDescriptor() async throws {
        let pty = try PseudoTerminal()
        let device: Set<String> = [pty.slavePath]
        for _ in 0..<5 {
            let transport = try H4StreamTransport.openSerial(path: pty.slavePath)
            pty.write(emptyEvent.encoded)
            #expect(try await receive(1, from: transport) == [emptyEvent])
            #expect(openDescriptors(to: device) > 0)
            await transport.close()
            #expect(openDescriptors(to: device) == 0)
        }
        var transport: H4StreamTransport? = try H4StreamTransport.openSerial(path: pty.slavePath)
        pty.write(emptyEvent.encoded)
        #expect(try await receive(1, from: try #require(transport)) == [emptyEvent])
        #expect(openDescriptors(to: device) > 0)
        #expect(try await descriptorsLeftAfterDropping(&transport, to: device) == 0)
    }
}
