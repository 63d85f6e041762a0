import Testing
import PropertyBased
import RawbleTestSupport
import RawbleWire

@Suite("HCI ACL data")
struct ACLTests {
    @Test func hostFirstFragmentCarryingAnATTRequest() throws {
        // Handle 0x040, PB 00 (first non-flushable), BC 00; 7 bytes: L2CAP len 3, CID 4, ATT Exchange MTU.
        let wire = bytes("40 00 07 00 03 00 04 00 02 F7 00")
        let packet = try ACLPacket.decode(wire)
        #expect(packet.handle == 0x040)
        #expect(packet.packetBoundary == .firstNonFlushable)
        #expect(packet.broadcast == .pointToPoint)
        #expect(Array(packet.payload) == [0x03, 0x00, 0x04, 0x00, 0x02, 0xF7, 0x00])
        #expect(packet.header.dataLength == 7)
        #expect(packet.header.isFirstFragment)
        #expect(packet.encoded == wire)
    }

    @Test func controllerFirstFlushableAndContinuationFlags() throws {
        // 0x2040: PB 10 (first flushable), as controllers send.
        let first = try ACLHeader.decode(bytes("40 20 1B 00"))
        #expect(first == ACLHeader(handle: 0x040, packetBoundary: .firstFlushable, dataLength: 27))
        #expect(first.isFirstFragment)
        // 0x1EFF: PB 01 (continuation), highest valid handle.
        let continuation = try ACLHeader.decode(bytes("FF 1E 05 00"))
        #expect(continuation.handle == 0x0EFF)
        #expect(continuation.packetBoundary == .continuation)
        #expect(!continuation.isFirstFragment)
        // 0xF001: PB 11 reserved, BC 11 reserved; all bits are kept.
        let reserved = try ACLHeader.decode(bytes("01 F0 00 00"))
        #expect(reserved.packetBoundary == .reserved)
        #expect(reserved.broadcast == .reserved3)
        #expect(reserved.encoded == [0x01, 0xF0, 0x00, 0x00])
        #expect(try ACLHeader.decode(bytes("01 40 00 00")).broadcast == .broadcast)
    }

    @Test func lengthMustMatchThePayload() throws {
        #expect(throws: WireError(.truncated(needed: 4, available: 3), at: 4, in: "HCI ACL data packet")) {
            _ = try ACLPacket.decode(bytes("40 00 04 00 01 02 03"))
        }
        #expect(throws: WireError(.trailingBytes(count: 1), at: 6, in: "HCI ACL data packet")) {
            _ = try ACLPacket.decode(bytes("40 00 02 00 01 02 03"))
        }
        #expect(throws: WireError.self) { _ = try ACLPacket.decode(bytes("40 00 00")) }
        #expect(throws: WireError.self) { _ = try ACLHeader.decode(bytes("40 00 00 00 00")) }
        #expect(try ACLPacket.decode(bytes("40 00 00 00")).payload.isEmpty)
    }

    @Test func headerReadsFromAStreamPrefix() throws {
        var reader = ByteReader(bytes("41 00 02 00 AA BB"), context: "stream")
        let header = try ACLHeader(from: &reader)
        #expect(header.handle == 0x41)
        #expect(header.dataLength == 2)
        #expect(Array(reader.remaining) == [0xAA, 0xBB])
    }

    @Test func encodingSendsOnlyTwelveHandleBits() {
        let packet = ACLPacket(handle: 0xF123, packetBoundary: .firstNonFlushable, payload: [9])
        #expect(packet.encoded == [0x23, 0x01, 0x01, 0x00, 0x09])
    }

    @Test func roundTripsEveryFieldCombination() async {
        await propertyCheck(input: Gen.uint16(in: 0...0x0FFF), Gen<ACLHeader.PacketBoundary>.case,
                            Gen<ACLHeader.Broadcast>.case, Gen.uint8().array(of: 0...64)) { handle, boundary, broadcast, payload in
            let packet = ACLPacket(handle: handle, packetBoundary: boundary, broadcast: broadcast, payload: payload[...])
            let bytes = packet.encoded
            #expect(bytes.count == 4 + payload.count)
            #expect((try? ACLPacket.decode(bytes)) == packet)
            #expect((try? ACLHeader.decode(bytes[..<4])) == packet.header)
        }
    }

    @Test func decodingRandomBytesNeverTrapsAndReencodesExactly() async {
        await propertyCheck(count: 500, input: Gen.uint8().array(of: 0...12)) { bytes in
            if let packet = try? ACLPacket.decode(bytes) {
                #expect(packet.encoded == bytes)
            }
            if let header = try? ACLHeader.decode(bytes) {
                #expect(header.encoded == bytes)
            }
        }
    }
}
