import PropertyBased
import Testing

@testable import RawbleWire

// Literal HCI packets in H4 form (type byte included), built here from the header layouts.
enum H4Bytes {
    static func command(_ opcode: UInt16, _ parameters: [UInt8] = []) -> [UInt8] {
        [0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8), UInt8(parameters.count)] + parameters
    }
    static func event(_ code: UInt8, _ parameters: [UInt8] = []) -> [UInt8] {
        [0x04, code, UInt8(parameters.count)] + parameters
    }
    static func acl(_ handleAndFlags: UInt16, _ data: [UInt8]) -> [UInt8] {
        [0x02, UInt8(handleAndFlags & 0xFF), UInt8(handleAndFlags >> 8), UInt8(data.count & 0xFF), UInt8(data.count >> 8)]
            + data
    }
    static func sco(_ handle: UInt16, _ data: [UInt8]) -> [UInt8] {
        [0x03, UInt8(handle & 0xFF), UInt8(handle >> 8), UInt8(data.count)] + data
    }
    /// ISO with the two RFU bits of the length field set to `rfu`.
    static func iso(_ handle: UInt16, _ data: [UInt8], rfu: UInt8 = 0) -> [UInt8] {
        [0x05, UInt8(handle & 0xFF), UInt8(handle >> 8), UInt8(data.count & 0xFF), UInt8(data.count >> 8) | rfu << 6]
            + data
    }

    /// A packet of type index 0...4 (command, event, ACL, SCO, ISO) with `payload`.
    static func packet(kind: Int, payload: [UInt8]) -> [UInt8] {
        switch kind {
        case 0: command(0x0C03, Array(payload.prefix(255)))
        case 1: event(0x0E, Array(payload.prefix(255)))
        case 2: acl(0x2040, payload)
        case 3: sco(0x0001, Array(payload.prefix(255)))
        default: iso(0x0002, payload, rfu: 3)
        }
    }
}

typealias FramerOutput = [Result<H4Packet, H4FramerError>]

/// Feeds `chunks` one after another, draining after each, then finishes the stream.
func frame(_ chunks: some Sequence<ArraySlice<UInt8>>, maximumACL: Int = 65_535) -> FramerOutput {
    var framer = H4Framer(maximumACLPayloadLength: maximumACL)
    var out: FramerOutput = []
    for chunk in chunks {
        framer.append(chunk)
        out += framer.drain()
    }
    do { try framer.finish() } catch { out.append(.failure(error)) }
    return out
}

/// Splits `bytes` at the given chunk sizes (cycled), each at least 1.
func split(_ bytes: [UInt8], sizes: [Int]) -> [ArraySlice<UInt8>] {
    var chunks: [ArraySlice<UInt8>] = []
    var start = 0
    var i = 0
    while start < bytes.count {
        let size = max(1, sizes.isEmpty ? 1 : sizes[i % sizes.count])
        let end = min(bytes.count, start + size)
        chunks.append(bytes[start..<end])
        start = end
        i += 1
    }
    return chunks
}

@Suite("H4 packet")
struct H4PacketTests {
    @Test func typeBytesAndNames() {
        #expect(H4PacketType.allCases.map(\.rawValue) == [1, 2, 3, 4, 5])
        #expect(H4PacketType.allCases.map(\.name) == ["command", "acl", "sco", "event", "iso"])
        #expect(H4PacketType(rawValue: 0) == nil)
        #expect(H4PacketType(rawValue: 6) == nil)
    }

    @Test func decodesResetCommand() throws {
        let packet = try H4Packet.decode([0x01, 0x03, 0x0C, 0x00])
        #expect(packet.type == .command)
        #expect(Array(packet.bytes) == [0x03, 0x0C, 0x00])
        #expect(packet.payload.isEmpty)
        #expect(packet.encoded == [0x01, 0x03, 0x0C, 0x00])
    }

    @Test func decodesCommandCompleteEvent() throws {
        let wire: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
        let packet = try H4Packet.decode(wire)
        #expect(packet.type == .event)
        #expect(Array(packet.payload) == [0x01, 0x03, 0x0C, 0x00])
        #expect(packet.encoded == wire)
    }

    @Test func decodesACLSCOAndISO() throws {
        let acl = H4Bytes.acl(0x2040, [0x03, 0x00, 0x04, 0x00, 0x0A, 0x03, 0x00])
        #expect(try H4Packet.decode(acl).type == .acl)
        #expect(try H4Packet.decode(acl).payload.count == 7)
        let sco = H4Bytes.sco(0x0001, [1, 2, 3])
        #expect(try H4Packet.decode(sco).type == .sco)
        // The ISO length has 14 bits; the two RFU bits above do not count.
        let iso = H4Bytes.iso(0x0002, [9, 8, 7], rfu: 3)
        #expect(iso[4] == 0xC0)
        let packet = try H4Packet.decode(iso)
        #expect(packet.type == .iso)
        #expect(Array(packet.payload) == [9, 8, 7])
        #expect(packet.encoded == iso)
    }

    @Test func payloadLengthFromAHeader() {
        #expect(H4PacketType.command.payloadLength(header: [0x03, 0x0C, 0x07]) == 7)
        #expect(H4PacketType.event.payloadLength(header: [0x0E, 0x04]) == 4)
        #expect(H4PacketType.acl.payloadLength(header: [0x40, 0x20, 0x34, 0x12]) == 0x1234)
        #expect(H4PacketType.iso.payloadLength(header: [0x02, 0x00, 0xFF, 0xFF]) == 16_383)
        #expect(H4PacketType.acl.payloadLength(header: [0x40, 0x20, 0x34]) == nil)
        #expect(H4PacketType.event.payloadLength(header: []) == nil)
        #expect(H4PacketType.allCases.map(\.headerLength) == [3, 4, 3, 2, 4])
    }

    @Test func unknownTypeIsAnErrorAtItsOffset() {
        #expect(throws: WireError(.unknownValue(0x06), at: 0, in: "H4 packet")) {
            try H4Packet.decode([0x06, 0x00])
        }
    }

    @Test func lengthFieldMustMatchTheBytes() {
        #expect(throws: WireError(.truncated(needed: 2, available: 1), at: 1, in: "H4 event packet")) {
            try H4Packet.decode([0x04, 0x0E])
        }
        #expect(throws: WireError(.truncated(needed: 4, available: 3), at: 3, in: "H4 event packet")) {
            try H4Packet.decode([0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C])
        }
        #expect(throws: WireError(.trailingBytes(count: 1), at: 4, in: "H4 command packet")) {
            try H4Packet.decode([0x01, 0x03, 0x0C, 0x00, 0xFF])
        }
        #expect(throws: WireError.self) { try H4Packet.decode([]) }
    }

    @Test func decodingRandomBytesNeverTraps() async {
        await propertyCheck(count: 1000, input: Gen.uint8(in: 0...6), Gen.uint8().array(of: 0...12)) { type, rest in
            let input = [type] + rest
            if let packet = try? H4Packet.decode(input) {
                #expect(packet.encoded == input)
            }
        }
    }
}

@Suite("H4 framer")
struct H4FramerTests {
    static let stream: [UInt8] =
        H4Bytes.command(0x0C03) + H4Bytes.event(0x0E, [0x01, 0x03, 0x0C, 0x00])
        + H4Bytes.acl(0x2040, [0x05, 0x00, 0x04, 0x00, 0x1B, 0x10, 0x00, 0x06, 0x48])
        + H4Bytes.sco(0x0001, [1, 2]) + H4Bytes.iso(0x0002, [7], rfu: 1)
        + H4Bytes.event(0x3E, [0x02, 0x01])

    static let expected: [H4Packet] = [
        H4Packet(type: .command, bytes: [0x03, 0x0C, 0x00]),
        H4Packet(type: .event, bytes: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]),
        H4Packet(type: .acl, bytes: [0x40, 0x20, 0x09, 0x00, 0x05, 0x00, 0x04, 0x00, 0x1B, 0x10, 0x00, 0x06, 0x48]),
        H4Packet(type: .sco, bytes: [0x01, 0x00, 0x02, 1, 2]),
        H4Packet(type: .iso, bytes: [0x02, 0x00, 0x01, 0x40, 7]),
        H4Packet(type: .event, bytes: [0x3E, 0x02, 0x02, 0x01]),
    ]

    @Test func wholeStreamAtOnce() throws {
        let out = frame([Self.stream[...]])
        #expect(out.map { try? $0.get() } == Self.expected)
    }

    @Test func everyTwoWaySplitYieldsTheSamePackets() {
        let reference = frame([Self.stream[...]])
        for cut in 0...Self.stream.count {
            let out = frame([Self.stream[..<cut], Self.stream[cut...]])
            #expect(out == reference, "split at \(cut)")
        }
    }

    @Test func oneByteAtATimeYieldsTheSamePackets() {
        #expect(frame(split(Self.stream, sizes: [1])) == frame([Self.stream[...]]))
    }

    @Test func randomStreamsAndSplitsYieldTheSamePackets() async {
        await propertyCheck(
            input: Gen.int(in: 0...4).array(of: 1...8), Gen.uint8().array(of: 0...300),
            Gen.int(in: 1...40).array(of: 1...10)
        ) { kinds, seed, sizes in
            var stream: [UInt8] = []
            var packets: [H4Packet] = []
            for (i, kind) in kinds.enumerated() {
                let payload = Array(seed.dropFirst(i * 7).prefix(i * 37 % 300))
                let wire = H4Bytes.packet(kind: kind, payload: payload)
                stream += wire
                packets.append(H4Packet(type: H4PacketType(rawValue: wire[0])!, bytes: wire.dropFirst()))
            }
            let whole = frame([stream[...]])
            #expect(whole.map { try? $0.get() } == packets)
            #expect(frame(split(stream, sizes: sizes)) == whole)
        }
    }

    @Test func garbageTypeByteIsReportedWithOffsetAndTheNextPacketStillComesOut() throws {
        let command = H4Bytes.command(0x0C03)
        let event = H4Bytes.event(0x0E, [0x01, 0x03, 0x0C, 0x00])
        let stream = command + [0xFF] + event
        let out = frame([stream[...]])
        #expect(out.count == 3)
        #expect(try out[0].get().type == .command)
        #expect(out[1] == .failure(H4FramerError(.unknownPacketType(0xFF), at: 4)))
        #expect(try out[2].get() == H4Packet(type: .event, bytes: event.dropFirst()))
        // Same result split right after the garbage byte.
        #expect(frame([stream[..<5], stream[5...]]) == out)
    }

    @Test func garbageAtTheStartAndRunsOfGarbage() {
        let stream: [UInt8] = [0x00, 0x06, 0xC0] + H4Bytes.command(0x0C03)
        let out = frame(split(stream, sizes: [2]))
        #expect(out.count == 4)
        #expect(out[0] == .failure(H4FramerError(.unknownPacketType(0x00), at: 0)))
        #expect(out[1] == .failure(H4FramerError(.unknownPacketType(0x06), at: 1)))
        #expect(out[2] == .failure(H4FramerError(.unknownPacketType(0xC0), at: 2)))
        #expect((try? out[3].get())?.type == .command)
    }

    @Test func anErrorConsumesOneByteSoTheCallerNeverSpins() throws {
        var framer = H4Framer()
        framer.append([0xFF, 0xFF])
        #expect(throws: H4FramerError(.unknownPacketType(0xFF), at: 0)) { try framer.nextPacket() }
        #expect(framer.streamOffset == 1)
        #expect(throws: H4FramerError(.unknownPacketType(0xFF), at: 1)) { try framer.nextPacket() }
        #expect(try framer.nextPacket() == nil)
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func lyingACLLengthAboveTheConfiguredMaximumIsRejected() {
        // Handle 0x0040, length 251 but the controller's ACL buffers hold 27 bytes.
        let stream: [UInt8] = [0x02, 0x40, 0x00, 0xFB, 0x00] + H4Bytes.event(0x13, [0x00])
        let out = frame([stream[...]], maximumACL: 27)
        let expected: FramerOutput = [
            .failure(H4FramerError(.payloadTooLong(type: .acl, length: 251, maximum: 27), at: 0)),
            .failure(H4FramerError(.unknownPacketType(0x40), at: 1)),
            .failure(H4FramerError(.unknownPacketType(0x00), at: 2)),
            .failure(H4FramerError(.unknownPacketType(0xFB), at: 3)),
            .failure(H4FramerError(.unknownPacketType(0x00), at: 4)),
            .success(H4Packet(type: .event, bytes: [0x13, 0x01, 0x00])),
        ]
        #expect(out == expected)
        // At the limit it is fine.
        let ok = H4Bytes.acl(0x2040, Array(repeating: 0xAB, count: 27))
        #expect(frame([ok[...]], maximumACL: 27).map { try? $0.get().payload.count } == [27])
    }

    @Test func maximumLengthsOfEveryType() {
        let packets = [
            H4Bytes.command(0x0C03, Array(repeating: 1, count: 255)),
            H4Bytes.event(0xFF, Array(repeating: 2, count: 255)),
            H4Bytes.sco(0x0001, Array(repeating: 3, count: 255)),
            H4Bytes.acl(0x2040, Array(repeating: 4, count: 65_535)),
            H4Bytes.iso(0x0002, Array(repeating: 5, count: 16_383), rfu: 3),
        ]
        let stream = packets.flatMap { $0 }
        let out = frame(split(stream, sizes: [4093, 1, 70_000]))
        #expect(out.map { try? $0.get().payload.count } == [255, 255, 255, 65_535, 16_383])
        #expect(out.map { try? $0.get().encoded } == packets)
    }

    @Test func finishReportsAPacketCutShort() throws {
        let stream = H4Bytes.command(0x0C03) + Array(H4Bytes.event(0x0E, [1, 3, 0x0C, 0]).prefix(4))
        var framer = H4Framer()
        framer.append(stream)
        #expect(try framer.nextPacket()?.type == .command)
        #expect(try framer.nextPacket() == nil)
        #expect(throws: H4FramerError(.truncatedPacket(type: .event, needed: 7, available: 4), at: 4)) {
            try framer.finish()
        }
        #expect(framer.bufferedByteCount == 0)
        // A stream cut inside a header.
        var short = H4Framer()
        short.append([0x02, 0x40])
        #expect(throws: H4FramerError(.truncatedPacket(type: .acl, needed: 5, available: 2), at: 0)) {
            try short.finish()
        }
        // A clean end is fine.
        var clean = H4Framer()
        clean.append(H4Bytes.command(0x0C03))
        _ = try? clean.nextPacket()
        #expect(throws: Never.self) { try clean.finish() }
    }

    @Test func streamOffsetCountsEveryByte() throws {
        var framer = H4Framer()
        framer.append(Self.stream)
        while try framer.nextPacket() != nil {}
        #expect(framer.streamOffset == Self.stream.count)
        framer.append([0x09])
        #expect(throws: H4FramerError(.unknownPacketType(0x09), at: Self.stream.count)) { try framer.nextPacket() }
    }

    @Test func memoryStaysBoundedWhileDraining() {
        // Big ACL packets fed in odd-sized reads: the buffer never holds much more than one
        // packet plus the current read, and consumed bytes do not pile up.
        let packet = H4Bytes.acl(0x2040, (0..<65_535).map { UInt8(truncatingIfNeeded: $0) })
        let stream = Array([[UInt8]](repeating: packet, count: 4).joined())
        var framer = H4Framer()
        var count = 0
        var largest = 0
        for chunk in split(stream, sizes: [1000, 3, 7919]) {
            framer.append(chunk)
            largest = max(largest, framer.buffer.bytes.count)
            while let p = try? framer.nextPacket() {
                #expect(p.encoded == packet)
                count += 1
            }
        }
        #expect(count == 4)
        #expect(largest <= 2 * packet.count + 7919)
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func byteByByteFeedOfABigPacketIsLinear() {
        // 64 KiB one byte at a time: each append is O(1) amortised (no O(n²) shifting).
        let packet = H4Bytes.acl(0x2040, Array(repeating: 0x55, count: 65_535))
        var framer = H4Framer()
        var got: [H4Packet] = []
        for byte in packet + packet {
            framer.append(CollectionOfOne(byte))
            if let p = try? framer.nextPacket() { got.append(p) }
        }
        #expect(got.count == 2)
        #expect(got.allSatisfy { $0.payload.count == 65_535 })
    }

    @Test func feedIsTheSameAsAppend() throws {
        var framer = H4Framer()
        framer.feed(H4Bytes.command(0x0C03))
        #expect(try framer.nextPacket()?.type == .command)
    }

    @Test func randomBytesNeverTrapAndSplitsAgree() async {
        await propertyCheck(count: 300, input: Gen.uint8(in: 0...7).array(of: 0...200), Gen.int(in: 1...9).array(of: 1...5))
        { bytes, sizes in
            #expect(frame(split(bytes, sizes: sizes)) == frame([bytes[...]]))
        }
    }
}
