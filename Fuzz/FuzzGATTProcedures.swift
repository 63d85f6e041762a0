// Fuzz target: the GATT client procedures against a server made of fuzz bytes. The input is a
// procedure selector followed by length-prefixed ATT PDUs (1 byte length each); every PDU that
// decodes is handed to the procedure as the answer to its last request. The procedure must
// finish or throw before the answers run out, never trap, and send only requests it may send.
// selector % 14 picks the procedure; an odd selector / 14 runs the discoveries at the top of
// the handle space (the last service ends at 0xFFFF); selector >> 4 sets the MTU.
// Compiled with the wire and GATT procedure sources by Scripts/fuzz.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGATTProcedures(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let selector = bytes.first else { return 0 }
    var answers: [ATTPDU] = []
    var i = 1
    while i < bytes.count {
        let length = Int(bytes[i])
        let end = min(bytes.count, i + 1 + length)
        if let pdu = try? ATTPDU.decode(bytes[(i + 1)..<end]) { answers.append(pdu) }
        i = end
    }
    // Procedures small enough for a fuzz input to walk to their end: a few handles each, at the
    // bottom of the handle space or at its top (where handle + 1 would overflow).
    let atTop = (selector / 14) % 2 == 1
    let service = atTop
        ? GATTService(uuid: BluetoothUUID(0x180D), startHandle: 0xFFF0, endHandle: 0xFFFF)
        : GATTService(uuid: BluetoothUUID(0x180D), startHandle: 0x0001, endHandle: 0x0010)
    let characteristic = atTop
        ? GATTCharacteristic(uuid: BluetoothUUID(0x2A37), declarationHandle: 0xFFF1, valueHandle: 0xFFF2,
                             properties: [.notify], endHandle: 0xFFFF)
        : GATTCharacteristic(uuid: BluetoothUUID(0x2A37), declarationHandle: 2, valueHandle: 3,
                             properties: [.notify], endHandle: 0x0008)
    let readRange: ClosedRange<UInt16> = atTop ? 0xFFE0...0xFFFF : 0x0001...0x0020
    let mtu = UInt16(23 + Int(selector >> 4) * 31)
    switch selector % 14 {
    case 0: fuzzDrive(DiscoverPrimaryServices(range: 0xFFF0...0xFFFF), answers)
    case 1: fuzzDrive(DiscoverPrimaryServices(), answers)
    case 2: fuzzDrive(DiscoverPrimaryServicesByUUID(BluetoothUUID(0x180D), range: 0xFFE0...0xFFFF), answers)
    case 3: fuzzDrive(FindIncludedServices(of: service), answers)
    case 4: fuzzDrive(DiscoverCharacteristics(of: service), answers)
    case 5: fuzzDrive(DiscoverCharacteristics(of: service, uuid: BluetoothUUID(0x2A38)), answers)
    case 6: fuzzDrive(DiscoverDescriptors(of: characteristic), answers)
    case 7: fuzzDrive(ReadValue(handle: 3), answers)
    case 8: fuzzDrive(ReadLongValue(handle: 3, mtu: mtu), answers)
    case 9: fuzzDrive(ReadMultipleValues(handles: [3, 5]), answers)
    case 10: fuzzDrive(ReadMultipleVariableValues(handles: [3, 5]), answers)
    case 11: fuzzDrive(ReadUsingCharacteristicUUID(BluetoothUUID(0x2A19), range: readRange), answers)
    case 12:
        if let write = try? LongWrite(handle: 3, value: Array(repeating: 0x5A, count: 60), mtu: mtu) { fuzzDrive(write, answers) }
    default:
        let writes = [GATTHandleValue(handle: 3, value: [1, 2, 3]), GATTHandleValue(handle: 5, value: Array(repeating: 7, count: 40))]
        if let write = try? ReliableWrite(writes, mtu: mtu) { fuzzDrive(write, answers) }
    }
    return 0
}

/// Hands `answers` to `procedure` one per request; checks every request is one a GATT client
/// sends and that the procedure never asks for more than one request per answer.
private func fuzzDrive<P: GATTProcedure>(_ procedure: P, _ answers: [ATTPDU]) {
    var procedure = procedure
    var step = procedure.start()
    for answer in answers {
        guard case .send(let request) = step else { return }
        precondition(request.opcode.kind == .request, "procedure sent \(request.opcode)")
        precondition(request.encoded.count <= 517, "procedure sent \(request.encoded.count) bytes")
        do {
            step = try procedure.receive(answer)
        } catch {
            _ = error.description
            // After an error the procedure has ended: a further answer must be refused.
            precondition((try? procedure.receive(answer)) == nil, "procedure accepted an answer after failing")
            return
        }
    }
    if case .finished = step {
        // After finishing, any answer is refused.
        if let extra = answers.first { precondition((try? procedure.receive(extra)) == nil, "procedure accepted an answer after finishing") }
    }
}
