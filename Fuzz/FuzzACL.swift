// Fuzz target: HCI ACL data packets and headers (without the H4 type byte).
// Compiled with the wire sources by Scripts/fuzz.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzACL(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let packet = try? ACLPacket.decode(bytes.dropFirst()) {
        let encoded = packet.encoded
        precondition(encoded[...] == bytes.dropFirst(), "re-encoding differs")
        precondition((try? ACLPacket.decode(encoded)) == packet, "round trip differs")
    }
    var reader = ByteReader(bytes[...], context: "fuzz")
    if let header = try? ACLHeader(from: &reader) {
        precondition((try? ACLHeader.decode(header.encoded)) == header, "header round trip differs")
    }
    return 0
}
