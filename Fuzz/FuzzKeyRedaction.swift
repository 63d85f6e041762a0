// Fuzz target: the key redaction of captures and traces (RawbleWire's HCIKeyRedactor). The input
// is a stream of packets, each a control byte (bits 0-2: H4 type 1-5, bit 3: received, bits 4-5:
// the ACL handle's low bits, so streams interleave), a length byte, then that many bytes. The
// redactor never traps; every packet keeps its type, its length and its header (the opcode, the
// event code, the handle and boundary flags, the length fields); a byte it changes becomes
// zero; redacting the redacted stream again changes nothing; and it follows at most one PDU per
// handle and direction.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeyRedaction(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    var packets: [(H4Packet, BtsnoopRecord.Direction)] = []
    var index = 0
    while index + 2 <= input.count {
        let control = input[index]
        let count = Int(input[index + 1])
        let body = Array(input[(index + 2)..<min(input.count, index + 2 + count)])
        index += 2 + count
        guard let type = H4PacketType(rawValue: control & 0x07) else { continue }
        var bytes = body
        // Give ACL a handle from the control byte, keeping the fuzzed flags, so handles collide.
        if type == .acl, bytes.count >= 2 {
            bytes[0] = (control >> 4) & 0x03
            bytes[1] &= 0xF0
        }
        packets.append((H4Packet(type: type, bytes: bytes), control & 0x08 != 0 ? .received : .sent))
    }
    var redactor = HCIKeyRedactor()
    var again = HCIKeyRedactor()
    for (packet, direction) in packets {
        let redacted = redactor.redact(packet, direction: direction)
        precondition(redacted.type == packet.type, "the type changed")
        precondition(redacted.bytes.count == packet.bytes.count, "the length changed")
        let header = packet.type == .event && packet.bytes.first == 0x0E ? 5 : packet.type.headerLength
        for (old, new) in zip(packet.bytes, redacted.bytes) {
            precondition(new == old || new == 0, "a byte became something other than zero")
        }
        precondition(Array(redacted.bytes.prefix(header)) == Array(packet.bytes.prefix(header)), "a header changed")
        if packet.type == .event, packet.bytes.first == 0x3E {
            precondition(Array(redacted.bytes.prefix(3)) == Array(packet.bytes.prefix(3)), "the LE subevent changed")
        }
        let twice = again.redact(redacted, direction: direction)
        precondition(twice == redacted, "redacting the redacted packet changed it")
        precondition(redactor.streams.count <= 2 * 4096, "more PDUs followed than handles and directions")
    }
    return 0
}
