// Fuzz target: ATT PDUs (and the GATT declaration values they carry). Compiled with the wire
// sources by Scripts/fuzz.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzATT(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let pdu = try? ATTPDU.decode(bytes) {
        // Round trip: what we encode must decode to the same PDU.
        let again = try? ATTPDU.decode(pdu.encoded)
        precondition(again == pdu, "ATT round trip: \(pdu) -> \(String(describing: again))")
        precondition(pdu.opcode.rawValue == bytes[0])
        _ = pdu.opcode.description
        _ = pdu.opcode.kind
        if let error = ATTError(pdu) { _ = error.description }
    }
    // The same bytes as attribute values.
    let value = bytes[...]
    if let v = try? ServiceDeclaration.decode(value) { precondition((try? ServiceDeclaration.decode(v.encoded)) == v) }
    if let v = try? IncludeDeclaration.decode(value) { precondition((try? IncludeDeclaration.decode(v.encoded)) == v) }
    if let v = try? CharacteristicDeclaration.decode(value) {
        precondition((try? CharacteristicDeclaration.decode(v.encoded)) == v)
        _ = v.properties.description
    }
    if let v = try? ClientCharacteristicConfiguration.decode(value) {
        precondition((try? ClientCharacteristicConfiguration.decode(v.encoded)) == v)
    }
    if let v = try? CharacteristicExtendedProperties.decode(value) { precondition(v.encoded == bytes) }
    if let v = try? ServiceChanged.decode(value) { precondition(v.encoded == bytes) }
    return 0
}
