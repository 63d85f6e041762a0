#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOEmbedded
import RawbleTestPeers
import RawbleTestSupport
import RawbleTransport
import RawbleWire
import Testing

/// A connected pair of unix SOCK_SEQPACKET sockets: like the kernel's HCI sockets, each read
/// returns one message (what does not fit in the buffer is dropped) and each write is one.
func seqpacketPair() throws -> (ours: Int32, peer: Int32) {
    var fds: [Int32] = [-1, -1]
    let result = socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds)
    try #require(result == 0, "socketpair: errno \(errno)")
    return (fds[0], fds[1])
}

/// Sends `filler` on `fd` without blocking until the socket takes no more (EAGAIN): the socket
/// is then full, and stays full until its peer reads. Returns how many fillers went out.
func fillSendBuffer(_ fd: Int32, with filler: [UInt8]) throws -> Int {
    for sent in 0..<100_000 {
        let n = filler.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if n < 0 && errno == EINTR { continue }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return sent }
        try #require(n == filler.count, "filling the socket: send returned \(n), errno \(errno)")
    }
    Issue.record("the socket took 100,000 fillers without filling up")
    return 100_000
}

/// One ACL packet whose payload tells which it is.
func aclPacket(_ number: Int, length: Int) -> H4Packet {
    let payload = (0..<length).map { UInt8(truncatingIfNeeded: number &+ $0) }
    let header: [UInt8] = [UInt8(number & 0xFF), UInt8(number >> 8 & 0x0F), UInt8(length & 0xFF), UInt8(length >> 8)]
    return H4Packet(type: .acl, bytes: header + payload)
}

/// H4 over a packet socket (what the HCI raw and user channels are): one packet per write even
/// when writes queue up, and packets larger than a run of small ones still arrive whole.
@Suite struct PacketSocketTransportTests {
    /// The sends outrun the reader, so NIO queues them; each must still leave as its own message
    /// (NIO alone gathers queued buffers into one writev: several packets in one message).
    @Test func queuedSendsLeaveOnePacketPerMessage() async throws {
        let (ours, peer) = try seqpacketPair()
        defer { close(peer) }
        // A small send buffer, filled before the transport takes the socket: no send can go out
        // until the reader makes room, so they all queue (in the serializer and NIO), and only
        // a few fit at a time after that.
        var size: Int32 = 1
        setsockopt(ours, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let filler: [UInt8] = [0xFF]
        let fillers = try fillSendBuffer(ours, with: filler)
        try #require(fillers > 0)
        // The write-stall bound is the 60 s hang guard: a loaded full run once kept the reader
        // away longer than the default 10 s, and the stall is not what this test is about.
        let transport = H4StreamTransport.adoptPacketSocket(
            ours, maximumPacketLength: 1 + 4 + 65_535, name: "test socket", writeStallTimeout: .seconds(60))
        let count = 120
        let packets = (0..<count).map { aclPacket($0, length: 200) }
        let sends = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for packet in packets { group.addTask { try await transport.send(packet) } }
                try await group.waitForAll()
            }
        }
        let messages = try await within(seconds: 30) {
            try await onOwnThread { () -> [[UInt8]] in
                var messages: [[UInt8]] = []
                var buffer = [UInt8](repeating: 0, count: 70_000)
                var received = 0
                while received < fillers * filler.count + count * (1 + 4 + 200) {
                    let n = buffer.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, 0) }
                    guard n > 0 else { break }
                    messages.append(Array(buffer.prefix(n)))
                    received += n
                }
                return messages
            }
        }
        try await within(seconds: 30) { try await sends.value }
        let expected = Set(packets.map { [$0.type.rawValue] + Array($0.bytes) })
        #expect(messages.prefix(fillers).allSatisfy { $0 == filler }, "the fillers come first")
        let sent = messages.dropFirst(fillers)
        #expect(sent.count == count, "\(sent.count) messages for \(count) packets")
        #expect(sent.allSatisfy { $0.count == 1 + 4 + 200 })
        #expect(Set(sent) == expected)
        await transport.close()
    }

    /// A packet larger than many small ones before it arrives whole (a shrinking receive buffer
    /// would cut it, and a packet socket drops the rest).
    @Test func aLargePacketAfterManySmallOnesArrivesWhole() async throws {
        let (ours, peer) = try seqpacketPair()
        defer { close(peer) }
        let transport = H4StreamTransport.adoptPacketSocket(ours, maximumPacketLength: 1 + 4 + 65_535, name: "test socket")
        let small = H4Packet(type: .event, bytes: [0x0E, 0x01, 0x01])
        let large = aclPacket(7, length: 1_500)
        let smallCount = 64
        let received = try await within(seconds: 30) {
            var iterator = transport.packets.makeAsyncIterator()
            var received: [H4Packet] = []
            for _ in 0..<smallCount {
                let bytes = [small.type.rawValue] + Array(small.bytes)
                _ = bytes.withUnsafeBytes { send(peer, $0.baseAddress, $0.count, 0) }
                // One read per packet: wait for each before sending the next.
                guard let packet = try await iterator.next() else { break }
                received.append(packet)
            }
            let bytes = [large.type.rawValue] + Array(large.bytes)
            _ = bytes.withUnsafeBytes { send(peer, $0.baseAddress, $0.count, 0) }
            if let packet = try await iterator.next() { received.append(packet) }
            return received
        }
        #expect(received.count == smallCount + 1)
        #expect(received.last == large)
        await transport.close()
    }

    /// The serializer passes one write down at a time, the next once the previous completed.
    @Test func serializerKeepsOneWriteInFlight() throws {
        let holder = HoldingHandler()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(holder)
        try channel.pipeline.syncOperations.addHandler(PacketWriteSerializer())
        let promises = (0..<3).map { _ in channel.eventLoop.makePromise(of: Void.self) }
        for (i, promise) in promises.enumerated() {
            channel.writeAndFlush(ByteBuffer(bytes: [UInt8(i)]), promise: promise)
        }
        #expect(holder.held.map(\.0) == [[0]])
        holder.completeFirst()
        #expect(holder.held.map(\.0) == [[1]])
        holder.completeFirst()
        #expect(holder.held.map(\.0) == [[2]])
        holder.completeFirst()
        #expect(holder.held.isEmpty)
        for promise in promises { #expect(throws: Never.self) { try promise.futureResult.wait() } }
        _ = try? channel.finish()
    }
}

/// Holds every write that reaches it (bytes and promise) until the test completes it.
final class HoldingHandler: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    var held: [([UInt8], EventLoopPromise<Void>?)] = []

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        held.append((Array(unwrapOutboundIn(data).readableBytesView), promise))
    }

    func flush(context: ChannelHandlerContext) {}

    func completeFirst() {
        guard !held.isEmpty else { return }
        held.removeFirst().1?.succeed(())
    }
}
