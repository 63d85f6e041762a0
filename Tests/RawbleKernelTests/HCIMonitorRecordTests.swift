#if canImport(Glibc)
import Glibc
#endif
import RawbleKernel
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

/// A monitor record's bytes: opcode, index, length (u16 little-endian each), then the payload.
func monitorRecord(_ opcode: UInt16, index: UInt16, _ payload: [UInt8]) -> [UInt8] {
    let length = UInt16(payload.count)
    return [UInt8(opcode & 0xFF), UInt8(opcode >> 8), UInt8(index & 0xFF), UInt8(index >> 8),
            UInt8(length & 0xFF), UInt8(length >> 8)] + payload
}

/// The HCI monitor channel's records (what btmon reads), byte by byte: each packet opcode gives
/// its H4 type and direction, other adapters and other record kinds are skipped and counted,
/// damaged records are typed errors.
@Suite struct HCIMonitorRecordTests {
    // LE Set Scan Enable (0x200C), its Command Complete, an ACL packet (ATT Read By Group Type
    // request), an SCO packet and an ISO packet, each without the H4 type byte.
    static let command: [UInt8] = [0x0C, 0x20, 0x02, 0x01, 0x00]
    static let event: [UInt8] = [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00]
    static let acl: [UInt8] = [0x40, 0x00, 0x0B, 0x00, 0x07, 0x00, 0x04, 0x00, 0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28]
    static let sco: [UInt8] = [0x01, 0x00, 0x02, 0xAA, 0xBB]
    static let iso: [UInt8] = [0x02, 0x00, 0x03, 0x00, 0x01, 0x02, 0x03]

    @Test("each packet opcode maps to its H4 type and direction", arguments: [
        (UInt16(2), HCIMonitorRecordTests.command, H4PacketType.command, BtsnoopRecord.Direction.sent),
        (3, HCIMonitorRecordTests.event, .event, .received),
        (4, HCIMonitorRecordTests.acl, .acl, .sent),
        (5, HCIMonitorRecordTests.acl, .acl, .received),
        (6, HCIMonitorRecordTests.sco, .sco, .sent),
        (7, HCIMonitorRecordTests.sco, .sco, .received),
        (18, HCIMonitorRecordTests.iso, .iso, .sent),
        (19, HCIMonitorRecordTests.iso, .iso, .received),
    ])
    func packetOpcodes(opcode: UInt16, payload: [UInt8], type: H4PacketType, direction: BtsnoopRecord.Direction) throws {
        var decoder = HCIMonitorDecoder(adapterIndex: 1)
        let packet = try #require(try decoder.packet(in: monitorRecord(opcode, index: 1, payload)[...]))
        #expect(packet.direction == direction)
        #expect(packet.packet == H4Packet(type: type, bytes: payload))
        #expect(packet.packet.encoded == [type.rawValue] + payload)
        #expect(decoder.counts.packets == 1)
    }

    @Test("the packet's H4 type byte is the kernel's: command 01, ACL 02, SCO 03, event 04, ISO 05")
    func typeBytes() throws {
        var decoder = HCIMonitorDecoder(adapterIndex: 0)
        let types = try [(2, Self.command), (4, Self.acl), (6, Self.sco), (3, Self.event), (18, Self.iso)].map { opcode, payload in
            try #require(try decoder.packet(in: monitorRecord(UInt16(opcode), index: 0, payload)[...])).packet.type.rawValue
        }
        #expect(types == [1, 2, 3, 4, 5])
    }

    @Test("every record that is not a packet is skipped and counted: index, control, notes, logging, vendor diagnostics")
    func otherRecordKinds() throws {
        var decoder = HCIMonitorDecoder(adapterIndex: 0)
        for opcode: UInt16 in [0, 1, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17] {
            #expect(try decoder.packet(in: monitorRecord(opcode, index: 0, [0x01, 0x02, 0x03])[...]) == nil, "opcode \(opcode)")
        }
        #expect(decoder.counts.otherRecords == 12)
        #expect(decoder.counts.packets == 0)
    }

    @Test("opcodes newer than the decoder (driver TX/RX 20/21, anything above) are skipped with a count")
    func unknownOpcodes() throws {
        var decoder = HCIMonitorDecoder(adapterIndex: 0)
        for opcode: UInt16 in [20, 21, 22, 0x1234, 0xFFFF] {
            #expect(try decoder.packet(in: monitorRecord(opcode, index: 0, Self.command)[...]) == nil)
        }
        #expect(decoder.counts.unknownOpcodes == 5)
    }

    @Test("another adapter's packets, and records about no adapter (0xFFFF), are ignored and counted")
    func otherAdapters() throws {
        var decoder = HCIMonitorDecoder(adapterIndex: 0)
        #expect(try decoder.packet(in: monitorRecord(2, index: 1, Self.command)[...]) == nil)
        #expect(try decoder.packet(in: monitorRecord(3, index: 0xFFFF, Self.event)[...]) == nil)
        #expect(try decoder.packet(in: monitorRecord(2, index: 0x0100, Self.command)[...]) == nil, "index is little-endian")
        #expect(try decoder.packet(in: monitorRecord(2, index: 0, Self.command)[...]) != nil)
        #expect(decoder.counts.otherAdapters == 3)
        #expect(decoder.counts.packets == 1)
    }

    @Test("a record shorter than its 6-byte header is a typed error, never a trap", arguments: 0...5)
    func truncatedHeader(count: Int) {
        var decoder = HCIMonitorDecoder(adapterIndex: 0)
        let bytes = Array(monitorRecord(2, index: 0, Self.command).prefix(count))
        #expect(throws: HCIMonitorError.truncatedHeader(byteCount: count)) { try decoder.packet(in: bytes[...]) }
        #expect(decoder.counts.malformed == 1)
    }

    @Test("a header whose length disagrees with the bytes after it is a typed error (short and long)")
    func lengthMismatch() {
        var decoder = HCIMonitorDecoder(adapterIndex: 0)
        let whole = monitorRecord(2, index: 0, Self.command)
        #expect(throws: HCIMonitorError.lengthMismatch(declared: 5, actual: 4)) { try decoder.packet(in: whole.dropLast()) }
        #expect(throws: HCIMonitorError.lengthMismatch(declared: 5, actual: 6)) { try decoder.packet(in: (whole + [0])[...]) }
        // The mismatch is found from the header alone, for any adapter and any opcode.
        #expect(throws: HCIMonitorError.lengthMismatch(declared: 3, actual: 0)) {
            try decoder.packet(in: [0x0C, 0x00, 0x05, 0x00, 0x03, 0x00][...])
        }
        #expect(decoder.counts.malformed == 3)
    }

    @Test("a packet record whose packet is not whole (its own length field disagrees) is a typed error")
    func brokenPacket() {
        var decoder = HCIMonitorDecoder(adapterIndex: 0)
        // An event announcing 4 parameter bytes with 2; an ACL record shorter than the ACL header.
        #expect(throws: HCIMonitorError.self) { try decoder.packet(in: monitorRecord(3, index: 0, [0x0E, 0x04, 0x01, 0x0C])[...]) }
        #expect(throws: HCIMonitorError.self) { try decoder.packet(in: monitorRecord(5, index: 0, [0x40, 0x00])[...]) }
        #expect(throws: HCIMonitorError.self) { try decoder.packet(in: monitorRecord(2, index: 0, [])[...]) }
        #expect(decoder.counts.malformed == 3)
    }

    @Test("a record re-encodes to its bytes; the decoder reads slices at any offset")
    func roundTripAndSlices() throws {
        let bytes = monitorRecord(5, index: 7, Self.acl)
        let record = try HCIMonitorRecord.decode(bytes[...])
        #expect(record.opcode == .aclReceived && record.adapterIndex == 7)
        #expect(record.encoded == bytes)
        let padded = [0xAA, 0xBB] + bytes
        var decoder = HCIMonitorDecoder(adapterIndex: 7)
        #expect(try decoder.packet(in: padded[2...])?.packet.bytes.elementsEqual(Self.acl) == true)
    }
}

/// The monitor socket's I/O (a unix SOCK_SEQPACKET pair stands in for the kernel's monitor
/// channel, which also returns one record per read): records become packets on the loop, and
/// close hands on what is still waiting in the socket before closing the descriptor.
@Suite struct HCIMonitorSocketTests {
    static func send(_ fd: Int32, _ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    @Test("records read on the loop become the adapter's packets, in order; another adapter's are dropped")
    func readsRecords() async throws {
        let (ours, peer) = try seqpacketPair()
        defer { close(peer) }
        let collected = Recording<HCIMonitorPacket>()
        let monitor = HCIMonitorSocket.adopt(ours, adapter: 0, onPacket: collected.append)
        #expect(Self.send(peer, monitorRecord(2, index: 0, HCIMonitorRecordTests.command)) > 0)
        #expect(Self.send(peer, monitorRecord(2, index: 1, HCIMonitorRecordTests.command)) > 0)
        #expect(Self.send(peer, monitorRecord(3, index: 0, HCIMonitorRecordTests.event)) > 0)
        try await collected.wait(until: { $0.count >= 2 })
        await monitor.close()
        #expect(collected.items.map(\.packet.type) == [.command, .event])
        #expect(monitor.counts.otherAdapters == 1)
    }

    @Test("a record as large as the kernel can send arrives whole (the read buffer is fixed at the largest record)")
    func largestRecord() async throws {
        let (ours, peer) = try seqpacketPair()
        defer { close(peer) }
        var size: Int32 = 256 * 1024
        setsockopt(peer, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let collected = Recording<HCIMonitorPacket>()
        let monitor = HCIMonitorSocket.adopt(ours, adapter: 0, onPacket: collected.append)
        // A small record first (NIO's adaptive allocator would shrink after it), then the largest.
        let aclLength = 65_535 - 4
        let acl = [0x40, 0x00, UInt8(aclLength & 0xFF), UInt8(aclLength >> 8)] + [UInt8](repeating: 0x5A, count: aclLength)
        #expect(Self.send(peer, monitorRecord(2, index: 0, HCIMonitorRecordTests.command)) > 0)
        #expect(Self.send(peer, monitorRecord(5, index: 0, acl)) == 6 + 65_535)
        try await collected.wait(until: { $0.count >= 2 })
        await monitor.close()
        #expect(collected.items.last?.packet.bytes.count == 65_535)
        #expect(monitor.counts.malformed == 0)
    }

    @Test("close hands on every record still waiting in the socket, then closes the descriptor")
    func closeDrainsThenCloses() async throws {
        let (ours, peer) = try seqpacketPair()
        defer { close(peer) }
        var size: Int32 = 4 * 1024 * 1024
        setsockopt(peer, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let collected = Recording<HCIMonitorPacket>()
        let monitor = HCIMonitorSocket.adopt(ours, adapter: 0, onPacket: collected.append)
        let count = 2_000
        for _ in 0..<count {
            #expect(Self.send(peer, monitorRecord(3, index: 0, HCIMonitorRecordTests.event)) > 0)
        }
        await monitor.close()
        #expect(collected.items.count == count)
        // The peer's end now has no reader: the descriptor was closed, not leaked.
        #expect(Self.send(peer, monitorRecord(3, index: 0, HCIMonitorRecordTests.event)) == -1)
        await monitor.close()
    }
}
