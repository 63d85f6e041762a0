// Fuzz target: the ATT server core (ATTServer) on a sample database, fed a stream of PDUs from a
// hostile client with server-side actions in between. Input: a byte choosing the MTU the client
// asks for, then items, each a length byte and that many bytes; a length of 0xFF is instead an
// action (next byte): notify, indicate, time the indication out, change the database, raise
// the link's security. Invariants: never traps; every request gets exactly one response (its
// response opcode or an Error Response naming it), after the provided values or write verdicts
// it asks for; a command or confirmation gets none (a confirmation may release the next
// indication); no PDU exceeds the ATT_MTU; every response decodes. Compiled with the wire sources and
// Sources/RawbleGATT/Server (sans-I/O files) by Scripts/fuzz.

/// The database the server fuzz target serves: every kind of attribute the server knows.
private func fuzzServerDatabase() -> GATTServerDatabase {
    let custom = BluetoothUUID(high: 0x6E40_0001_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    let database = try? GATTServerDatabase(deviceName: "fuzz", appearance: .heartRateBelt, services: [
        .primary(BluetoothUUID(0x180D), includes: [BluetoothUUID(0x180F)], characteristics: [
            GATTCharacteristicDefinition(BluetoothUUID(0x2A37), properties: [.read, .notify], value: .provided),
            GATTCharacteristicDefinition(BluetoothUUID(0x2A38), properties: [.read], value: .fixed([0x01])),
            GATTCharacteristicDefinition(BluetoothUUID(0x2A39), properties: [.write, .writeWithoutResponse],
                                         write: .encryptionRequired, maximumLength: 2),
        ]),
        .secondary(BluetoothUUID(0x180F), characteristics: [
            GATTCharacteristicDefinition(BluetoothUUID(0x2A19), properties: [.read, .notify, .indicate], value: .fixed([0x64]),
                                         userDescription: "Battery", presentationFormat: GATTPresentationFormat(format: 4, unit: 0x27AD)),
        ]),
        .primary(custom, characteristics: [
            GATTCharacteristicDefinition(custom, properties: [.read, .write, .notify, .indicate],
                                         value: .fixed((0..<300).map { UInt8(truncatingIfNeeded: $0) })),
            GATTCharacteristicDefinition(BluetoothUUID(0x2A3F), properties: [.read, .write], value: .provided,
                                         read: .authenticationRequired, write: .authenticationRequired,
                                         descriptors: [GATTDescriptorDefinition(BluetoothUUID(0x2999), value: .fixed([1, 2, 3]), write: .open)]),
        ]),
    ])
    guard let database else { preconditionFailure("the fuzz database does not build") }
    return database
}

nonisolated(unsafe) private let fuzzDatabase = fuzzServerDatabase()

/// Checks the server's PDUs: each fits the MTU; returns them.
private func checkedPDUs(_ output: ATTServerOutput, mtu: UInt16) -> [[UInt8]] {
    for pdu in output.pdus {
        precondition(!pdu.isEmpty && pdu.count <= Int(mtu), "PDU of \(pdu.count) bytes at ATT_MTU \(mtu)")
    }
    return output.pdus
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzATTServer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let selector = input.first else { return 0 }
    var database = fuzzDatabase
    var configuration = ATTServer.Configuration()
    configuration.prepareQueueLimit = 8
    configuration.indicationQueueLimit = 4
    var server = ATTServer(configuration: configuration)
    if selector & 1 == 1 {
        let mtu = UInt16(selector) * 3
        _ = server.receive([0x02, UInt8(truncatingIfNeeded: mtu), UInt8(truncatingIfNeeded: mtu >> 8)], database: &database)
    }
    var index = 1
    var round: UInt8 = 0
    while index < input.count {
        round &+= 1
        let length = Int(input[index])
        if length == 0xFF {
            let action = index + 1 < input.count ? input[index + 1] : 0
            index += 2
            let handle = UInt16(action >> 3)
            switch action & 0x07 {
            case 0:
                if let pdu = server.notification(Array(repeating: action, count: Int(action)), handle: handle) {
                    precondition(pdu.count <= Int(server.mtu) && pdu.first == 0x1B)
                }
            case 1:
                if let started = try? server.indicate(Array(repeating: action, count: Int(action)), handle: handle) {
                    _ = checkedPDUs(started.output, mtu: server.mtu)
                }
            case 2:
                if let id = server.indicationInFlight { _ = server.indicationTimedOut(id) }
            case 3:
                _ = server.databaseChanged(handle...0xFFFF)
            default:
                server.security = GATTLinkSecurity(rawValue: Int(action % 3)) ?? .none
            }
            continue
        }
        let end = min(input.count, index + 1 + length)
        let pdu = Array(input[(index + 1)..<end])
        index = end
        let timedOut = server.isTimedOut
        let mtuBefore = server.mtu
        var output = server.receive(pdu, database: &database)
        var answers = checkedPDUs(output, mtu: max(mtuBefore, server.mtu))
        // Provided values: answer each ask (sometimes with an error), until the request is answered.
        var asks = 0
        while !output.valuesNeeded.isEmpty || !output.approvalsNeeded.isEmpty {
            precondition(output.pdus.isEmpty, "a waiting request also answered")
            precondition(output.valuesNeeded.isEmpty || output.approvalsNeeded.isEmpty, "values and verdicts asked at once")
            asks += 1
            precondition(asks <= 64, "a request keeps asking for values")
            if output.valuesNeeded.isEmpty {
                var verdicts: [UInt16: GATTWriteVerdict] = [:]
                for write in output.approvalsNeeded {
                    verdicts[write.handle] = round % 3 == 0 ? .reject(ATTErrorCode(0x80)) : .accept
                }
                output = server.approve(verdicts, database: &database)
            } else {
                var values: [UInt16: GATTValueResult] = [:]
                for handle in output.valuesNeeded {
                    values[handle] = round % 5 == 0 ? .error(ATTErrorCode(0x80)) : .value(Array(repeating: round, count: Int(round) * 3))
                }
                output = server.supply(values, database: &database)
            }
            answers += checkedPDUs(output, mtu: server.mtu)
        }
        guard let first = pdu.first else {
            precondition(answers.isEmpty)
            continue
        }
        let opcode = ATTOpcode(first)
        let isRequest = opcode.kind == .request || opcode.kind == .unknown
        if timedOut {
            precondition(answers.isEmpty, "answered after an indication timed out")
        } else if isRequest {
            precondition(answers.count == 1, "\(opcode) answered with \(answers.count) PDUs")
            let answer = answers[0]
            if answer.first == ATTOpcode.errorResponse.rawValue {
                precondition(answer.count == 5 && answer[1] == first, "Error Response for another request")
            } else {
                precondition(answer.first == opcode.responseOpcode?.rawValue, "\(opcode) answered with another response")
                guard (try? ATTPDU.decode(answer)) != nil else { preconditionFailure("response does not decode") }
            }
        } else if opcode == .handleValueConfirmation {
            precondition(answers.allSatisfy { $0.first == 0x1D }, "a confirmation answered")
        } else {
            precondition(answers.isEmpty, "\(opcode) answered")
        }
    }
    return 0
}
