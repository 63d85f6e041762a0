// Fuzz target: HCI command packets and Command Complete return parameters. Compiled with the
// wire sources by Scripts/fuzz.
//  - The whole input as a command packet (opcode, length, parameters).
//  - The first 2 bytes as an opcode, the rest as that command's return parameters.
// On success each is re-encoded, decoded again and must compare equal.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHCICommand(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))

    if let command = try? HCICommand.decode(bytes) {
        let packet = command.encoded
        precondition(packet.count == 3 + command.parameters.count)
        precondition((try? HCICommand.decode(packet)) == command)
        // Only the advertising data padding may differ from the input.
        if command.opcode != .leSetAdvertisingData && command.opcode != .leSetScanResponseData {
            precondition(packet == bytes)
        }
        _ = command.description
    }

    if bytes.count >= 2 {
        let opcode = HCIOpcode(UInt16(bytes[0]) | UInt16(bytes[1]) << 8)
        if let result = try? CommandReturn.decode(opcode: opcode, returnParameters: bytes[2...]) {
            let parameters = result.returnParameters
            precondition(parameters == Array(bytes[2...]))
            precondition(result.opcode == opcode)
            _ = result.description
            precondition((try? CommandReturn.decode(opcode: opcode, returnParameters: parameters)) == result)
        }
    }
    return 0
}
