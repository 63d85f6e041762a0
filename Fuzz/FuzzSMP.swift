// Fuzz target: Security Manager PDUs, RawbleSMP's `SMPPDU` (every command typed, reserved values
// refused), read beside the wire layer's `SMPCommand` (the four commands a host without pairing
// answers). Compiled with the wire sources and Sources/RawbleSMP/PDU by Scripts/fuzz.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSMP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    do throws(WireError) {
        let pdu = try SMPPDU.decode(bytes)
        precondition(pdu.encoded == bytes, "SMP round trip: \(pdu)")
        precondition(pdu.code.rawValue == bytes[0])
        // Where both decoders read a PDU, they read the same thing.
        let command = try? SMPCommand.decode(bytes)
        switch pdu {
        case .pairingRequest(let parameters): precondition(command == .pairingRequest(parameters))
        case .pairingResponse(let parameters): precondition(command == .pairingResponse(parameters))
        case .pairingFailed(let reason):
            precondition(command == .pairingFailed(reason))
            _ = reason.description
        case .securityRequest(let requirements): precondition(command == .securityRequest(requirements))
        case .keypressNotification(let type):
            precondition(command == .other(code: pdu.code, parameters: bytes[1...]))
            _ = type.description
        default: precondition(command == .other(code: pdu.code, parameters: bytes[1...]), "\(pdu)")
        }
    } catch {
        _ = error.description
        precondition(error.offset >= 0 && error.offset <= bytes.count, "\(error)")
    }
    return 0
}
