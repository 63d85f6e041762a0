// Fuzz target: the kernel's management protocol (HCI_CHANNEL_CONTROL). Compiled with the wire
// sources by Scripts/fuzz.
//  - The whole input as an event packet and as a command packet (code, index, length,
//    parameters), decoded from a slice that does not start at index 0.
//  - The first 2 bytes as an event code or opcode, the rest as its parameters.
//  - The input as each command's typed return parameters.
// Every field is kept as received, so a decoded packet re-encodes to its exact bytes and
// decodes again to the same value; the controller information's names only lose the padding
// after their NUL.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzManagement(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let packet = [0xEE] + bytes

    if let event = try? ManagementEvent.decode(packet.dropFirst()) {
        precondition(event.encoded == bytes, "event re-encoding differs")
        precondition((try? ManagementEvent.decode(event.encoded)) == event, "event round trip differs")
        _ = event.description
        if case let .deviceFound(_, found) = event {
            _ = (found.advertisingData.structures, found.deviceAddress, found.measuredRSSI, found.flags.names)
        }
        if case let .commandComplete(_, _, _, returned) = event {
            checkReturnParameters(returned[...])
        }
    }
    if let command = try? ManagementCommand.decode(packet.dropFirst()) {
        precondition(command.encoded == bytes, "command re-encoding differs")
        precondition((try? ManagementCommand.decode(command.encoded)) == command, "command round trip differs")
        _ = command.description
    }

    if bytes.count >= 2 {
        let code = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
        let parameters = bytes.dropFirst(2)
        if let event = try? ManagementEvent.decode(code: code, index: 0, parameters: parameters) {
            precondition(event.parameters[...] == parameters, "event parameters differ")
            precondition(event.code == code && event.index == 0)
        }
        if let command = try? ManagementCommand.decode(opcode: code, index: ManagementIndex.none, parameters: parameters) {
            precondition(command.parameters[...] == parameters, "command parameters differ")
            precondition(command.opcode == code && command.index == ManagementIndex.none)
        }
    }
    checkReturnParameters(bytes[...])
    return 0
}

/// Decodes `parameters` as every typed return; each decoded value must re-encode to the same
/// bytes (the controller information to the same value) without trapping.
private func checkReturnParameters(_ parameters: ArraySlice<UInt8>) {
    if let version = try? ManagementVersion.decode(returnParameters: parameters) {
        precondition(version.returnParameters[...] == parameters)
        _ = version.description
    }
    if let list = try? ManagementIndexList.decode(returnParameters: parameters) {
        precondition(list.returnParameters[...] == parameters)
        _ = list.description
    }
    if let supported = try? ManagementSupportedCommands.decode(returnParameters: parameters) {
        precondition(supported.returnParameters[...] == parameters)
    }
    if let address = try? ManagementAddress.decode(returnParameters: parameters) {
        precondition(address.returnParameters[...] == parameters)
    }
    if let settings = try? ManagementSettings.decode(returnParameters: parameters) {
        precondition(settings.returnParameters[...] == parameters)
        _ = settings.description
    }
    if let information = try? ManagementControllerInformation.decode(returnParameters: parameters) {
        let encoded = information.returnParameters
        precondition(encoded.count == parameters.count)
        precondition((try? ManagementControllerInformation.decode(returnParameters: encoded)) == information)
        _ = (information.description, information.name, information.shortName)
    }
}
