import PropertyBased
import RawbleTestSupport
import RawbleWire
import Testing

// MARK: - Helpers (file-private: other areas share this test module)

private func decodeError(_ input: [UInt8]) -> WireError? {
    do {
        _ = try ATTPDU.decode(input)
        return nil
    } catch {
        return error
    }
}

private func roundTrips(_ pdu: ATTPDU) -> Bool {
    (try? ATTPDU.decode(pdu.encoded)) == pdu
}

/// Every opcode the notes list, with the spec's name: the reference the opcode table is
/// checked against.
private let knownOpcodes: [(UInt8, String)] = [
    (0x01, "Error Response"), (0x02, "Exchange MTU Request"), (0x03, "Exchange MTU Response"),
    (0x04, "Find Information Request"), (0x05, "Find Information Response"),
    (0x06, "Find By Type Value Request"), (0x07, "Find By Type Value Response"),
    (0x08, "Read By Type Request"), (0x09, "Read By Type Response"), (0x0A, "Read Request"),
    (0x0B, "Read Response"), (0x0C, "Read Blob Request"), (0x0D, "Read Blob Response"),
    (0x0E, "Read Multiple Request"), (0x0F, "Read Multiple Response"),
    (0x10, "Read By Group Type Request"), (0x11, "Read By Group Type Response"),
    (0x12, "Write Request"), (0x13, "Write Response"), (0x52, "Write Command"),
    (0xD2, "Signed Write Command"), (0x16, "Prepare Write Request"), (0x17, "Prepare Write Response"),
    (0x18, "Execute Write Request"), (0x19, "Execute Write Response"),
    (0x1B, "Handle Value Notification"), (0x1D, "Handle Value Indication"),
    (0x1E, "Handle Value Confirmation"), (0x20, "Read Multiple Variable Request"),
    (0x21, "Read Multiple Variable Response"), (0x23, "Multiple Handle Value Notification"),
]
private let knownOpcodeValues = Set(knownOpcodes.map(\.0))

// MARK: - Random PDU generation

private func u16(_ rng: inout some RandomNumberGenerator) -> UInt16 { UInt16.random(in: 0...0xFFFF, using: &rng) }

private func randomBytes(_ rng: inout some RandomNumberGenerator, count: Int) -> ArraySlice<UInt8> {
    var out: [UInt8] = []
    for _ in 0..<count { out.append(UInt8.random(in: 0...255, using: &rng)) }
    return out[...]
}

private func randomBytes(_ rng: inout some RandomNumberGenerator, upTo max: Int) -> ArraySlice<UInt8> {
    randomBytes(&rng, count: Int.random(in: 0...max, using: &rng))
}

private func randomUUID(_ rng: inout some RandomNumberGenerator) -> BluetoothUUID {
    Bool.random(using: &rng)
        ? BluetoothUUID(u16(&rng))
        : BluetoothUUID(high: UInt64.random(in: 0...UInt64.max, using: &rng), low: UInt64.random(in: 0...UInt64.max, using: &rng))
}

private func randomHandles(_ rng: inout some RandomNumberGenerator) -> [UInt16] {
    (0..<Int.random(in: 2...8, using: &rng)).map { _ in u16(&rng) }
}

/// A random well-formed PDU of the given case index (0..<32).
private func randomPDU(_ rng: inout some RandomNumberGenerator, kind: Int) -> ATTPDU {
    switch kind {
    case 0: return .errorResponse(requestOpcode: ATTOpcode(UInt8.random(in: 0...255, using: &rng)), handle: u16(&rng),
                                  errorCode: ATTErrorCode(UInt8.random(in: 0...255, using: &rng)))
    case 1: return .exchangeMTURequest(clientMTU: u16(&rng))
    case 2: return .exchangeMTUResponse(serverMTU: u16(&rng))
    case 3: return .findInformationRequest(startHandle: u16(&rng), endHandle: u16(&rng))
    case 4:
        let n = Int.random(in: 0...6, using: &rng)
        return .findInformationResponse((0..<n).map { _ in ATTPDU.HandleUUID(handle: u16(&rng), uuid: randomUUID(&rng)) })
    case 5: return .findByTypeValueRequest(startHandle: u16(&rng), endHandle: u16(&rng), attributeType: u16(&rng),
                                           value: randomBytes(&rng, upTo: 20))
    case 6:
        let n = Int.random(in: 0...6, using: &rng)
        return .findByTypeValueResponse((0..<n).map { _ in ATTPDU.HandleRange(foundHandle: u16(&rng), groupEndHandle: u16(&rng)) })
    case 7: return .readByTypeRequest(startHandle: u16(&rng), endHandle: u16(&rng), attributeType: randomUUID(&rng))
    case 8:
        let length = Int.random(in: 0...30, using: &rng)
        let n = Int.random(in: 0...6, using: &rng)
        return .readByTypeResponse((0..<n).map { _ in ATTPDU.HandleValue(handle: u16(&rng), value: randomBytes(&rng, count: length)) })
    case 9: return .readRequest(handle: u16(&rng))
    case 10: return .readResponse(value: randomBytes(&rng, upTo: 30))
    case 11: return .readBlobRequest(handle: u16(&rng), offset: u16(&rng))
    case 12: return .readBlobResponse(value: randomBytes(&rng, upTo: 30))
    case 13: return .readMultipleRequest(handles: randomHandles(&rng))
    case 14: return .readMultipleResponse(values: randomBytes(&rng, upTo: 30))
    case 15: return .readByGroupTypeRequest(startHandle: u16(&rng), endHandle: u16(&rng), groupType: randomUUID(&rng))
    case 16:
        let length = Int.random(in: 0...30, using: &rng)
        let n = Int.random(in: 0...6, using: &rng)
        return .readByGroupTypeResponse((0..<n).map { _ in
            ATTPDU.GroupValue(handle: u16(&rng), endGroupHandle: u16(&rng), value: randomBytes(&rng, count: length))
        })
    case 17: return .writeRequest(handle: u16(&rng), value: randomBytes(&rng, upTo: 30))
    case 18: return .writeResponse
    case 19: return .writeCommand(handle: u16(&rng), value: randomBytes(&rng, upTo: 30))
    case 20: return .signedWriteCommand(handle: u16(&rng), value: randomBytes(&rng, upTo: 30), signature: randomBytes(&rng, count: 12))
    case 21: return .prepareWriteRequest(handle: u16(&rng), offset: u16(&rng), value: randomBytes(&rng, upTo: 30))
    case 22: return .prepareWriteResponse(handle: u16(&rng), offset: u16(&rng), value: randomBytes(&rng, upTo: 30))
    case 23: return .executeWriteRequest(flags: ATTExecuteWriteFlags(UInt8.random(in: 0...255, using: &rng)))
    case 24: return .executeWriteResponse
    case 25: return .handleValueNotification(handle: u16(&rng), value: randomBytes(&rng, upTo: 30))
    case 26: return .handleValueIndication(handle: u16(&rng), value: randomBytes(&rng, upTo: 30))
    case 27: return .handleValueConfirmation
    case 28: return .readMultipleVariableRequest(handles: randomHandles(&rng))
    case 29:
        var tuples = (0..<Int.random(in: 0...5, using: &rng)).map { _ in ATTPDU.LengthValue(value: randomBytes(&rng, upTo: 12)) }
        if !tuples.isEmpty, Bool.random(using: &rng) {
            // The server cut the last value at the MTU.
            tuples[tuples.count - 1].length &+= UInt16.random(in: 1...100, using: &rng)
        }
        return .readMultipleVariableResponse(tuples)
    case 30:
        let n = Int.random(in: 0...5, using: &rng)
        return .multipleHandleValueNotification((0..<n).map { _ in ATTPDU.HandleValue(handle: u16(&rng), value: randomBytes(&rng, upTo: 12)) })
    default:
        var opcode = UInt8.random(in: 0...255, using: &rng)
        while knownOpcodeValues.contains(opcode) { opcode &+= 1 }
        return .unknown(opcode: ATTOpcode(opcode), parameters: randomBytes(&rng, upTo: 30))
    }
}

private let pduKinds = 32
private let anyPDU = Generator<ATTPDU, Shrink.None<ATTPDU>> { rng in
    randomPDU(&rng, kind: Int.random(in: 0..<pduKinds, using: &rng))
}

// MARK: - Opcodes and error codes

@Suite("ATT opcodes and error codes")
struct ATTOpcodeTests {
    @Test func everyOpcodeFromTheNotesHasItsSpecName() {
        for (raw, name) in knownOpcodes {
            #expect(ATTOpcode(raw).name == name, "0x\(String(raw, radix: 16))")
        }
        #expect(ATTOpcode(0x14).name == "Unknown Opcode")
        #expect(ATTOpcode.readRequest.description == "Read Request (0x0A)")
    }

    @Test func commandAndSignedBitsAreReadFromTheOpcode() {
        #expect(ATTOpcode.writeCommand.isCommand)
        #expect(!ATTOpcode.writeCommand.isSigned)
        #expect(ATTOpcode.signedWriteCommand.isCommand && ATTOpcode.signedWriteCommand.isSigned)
        #expect(!ATTOpcode.writeRequest.isCommand)
        #expect(ATTOpcode.signedWriteCommand.method == ATTOpcode.writeRequest.method)
        #expect(ATTOpcode(0x7F).kind == .command)
        #expect(ATTOpcode(0x3F).kind == .unknown)
    }

    @Test func requestsPairWithTheirResponses() {
        let pairs: [(ATTOpcode, ATTOpcode)] = [
            (.exchangeMTURequest, .exchangeMTUResponse), (.findInformationRequest, .findInformationResponse),
            (.findByTypeValueRequest, .findByTypeValueResponse), (.readByTypeRequest, .readByTypeResponse),
            (.readRequest, .readResponse), (.readBlobRequest, .readBlobResponse),
            (.readMultipleRequest, .readMultipleResponse), (.readByGroupTypeRequest, .readByGroupTypeResponse),
            (.writeRequest, .writeResponse), (.prepareWriteRequest, .prepareWriteResponse),
            (.executeWriteRequest, .executeWriteResponse),
            (.readMultipleVariableRequest, .readMultipleVariableResponse),
        ]
        for (request, response) in pairs {
            #expect(request.kind == .request)
            #expect(response.kind == .response)
            #expect(request.responseOpcode == response)
            #expect(response.requestOpcode == request)
            #expect(request.requestOpcode == nil)
            #expect(response.responseOpcode == nil)
        }
        #expect(ATTOpcode.handleValueIndication.responseOpcode == .handleValueConfirmation)
        #expect(ATTOpcode.handleValueConfirmation.requestOpcode == .handleValueIndication)
        #expect(ATTOpcode.errorResponse.requestOpcode == nil)
        #expect(ATTOpcode.handleValueNotification.responseOpcode == nil)
        #expect(ATTOpcode.handleValueNotification.kind == .notification)
        #expect(ATTOpcode.multipleHandleValueNotification.kind == .notification)
        #expect(ATTOpcode.writeCommand.responseOpcode == nil)
    }

    @Test func errorCodesHaveTheirSpecNames() {
        let names: [(UInt8, String)] = [
            (0x01, "Invalid Handle"), (0x02, "Read Not Permitted"), (0x03, "Write Not Permitted"),
            (0x04, "Invalid PDU"), (0x05, "Insufficient Authentication"), (0x06, "Request Not Supported"),
            (0x07, "Invalid Offset"), (0x08, "Insufficient Authorization"), (0x09, "Prepare Queue Full"),
            (0x0A, "Attribute Not Found"), (0x0B, "Attribute Not Long"), (0x0C, "Encryption Key Size Too Short"),
            (0x0D, "Invalid Attribute Value Length"), (0x0E, "Unlikely Error"), (0x0F, "Insufficient Encryption"),
            (0x10, "Unsupported Group Type"), (0x11, "Insufficient Resources"), (0x12, "Database Out Of Sync"),
            (0x13, "Value Not Allowed"), (0xFC, "Write Request Rejected"),
            (0xFD, "Client Characteristic Configuration Descriptor Improperly Configured"),
            (0xFE, "Procedure Already in Progress"), (0xFF, "Out of Range"),
        ]
        for (raw, name) in names { #expect(ATTErrorCode(raw).name == name) }
        #expect(ATTErrorCode(0x80).isApplicationError && ATTErrorCode(0x9F).isApplicationError)
        #expect(!ATTErrorCode(0xA0).isApplicationError && !ATTErrorCode(0x7F).isApplicationError)
        #expect(ATTErrorCode(0x85).name == "Application Error")
        #expect(ATTErrorCode(0xFD).isCommonProfileError && !ATTErrorCode(0x13).isCommonProfileError)
        #expect(ATTErrorCode(0x14).name == "Reserved Error")
        #expect(ATTErrorCode(0x14).rawValue == 0x14)
    }

    @Test func attErrorReadsAsASentence() throws {
        let pdu = try ATTPDU.decode(bytes("01 0A 03 00 02"))
        let error = try #require(ATTError(pdu))
        #expect(error.code == .readNotPermitted)
        #expect(error.requestOpcode == .readRequest)
        #expect(error.handle == 3)
        #expect(error.description == "Read Not Permitted (0x02) for Read Request on handle 0x0003")
        #expect(ATTError(.writeResponse) == nil)
    }
}

// MARK: - PDU byte vectors

@Suite("ATT PDUs")
struct ATTPDUTests {
    @Test func exchangeMTURequestCarries517() throws {
        let pdu = try ATTPDU.decode(bytes("02 05 02"))
        #expect(pdu == .exchangeMTURequest(clientMTU: 517))
        #expect(pdu.opcode == .exchangeMTURequest)
        #expect(ATTPDU.exchangeMTUResponse(serverMTU: 23).encoded == [0x03, 0x17, 0x00])
    }

    @Test func errorResponseForReadByTypeIsAttributeNotFound() throws {
        let pdu = try ATTPDU.decode(bytes("01 08 01 00 0A"))
        #expect(pdu == .errorResponse(requestOpcode: .readByTypeRequest, handle: 1, errorCode: .attributeNotFound))
        #expect(pdu.encoded == (bytes("01 08 01 00 0A")))
    }

    @Test func readByGroupTypeResponseListsAPrimaryService() throws {
        let input = bytes("11 06 01 00 07 00 00 18")
        let pdu = try ATTPDU.decode(input)
        #expect(pdu == .readByGroupTypeResponse([ATTPDU.GroupValue(handle: 1, endGroupHandle: 7, value: [0x00, 0x18])]))
        guard case .readByGroupTypeResponse(let groups) = pdu else { return }
        #expect(try ServiceDeclaration.decode(groups[0].value).uuid == BluetoothUUID(0x1800))
        #expect(pdu.encoded == input)
    }

    @Test func readByGroupTypeResponseWith128BitServices() throws {
        let input = bytes("11 14 10 00 1A 00 9E CA DC 24 0E E5 A9 E0 93 F3 A3 B5 01 00 40 6E")
        guard case .readByGroupTypeResponse(let groups) = try ATTPDU.decode(input) else {
            Issue.record("wrong case"); return
        }
        #expect(groups.count == 1)
        #expect(groups[0].handle == 0x10 && groups[0].endGroupHandle == 0x1A)
        #expect(try ServiceDeclaration.decode(groups[0].value).uuid == BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E"))
    }

    @Test func findInformationResponseFormat1Has16BitUUIDs() throws {
        let input = bytes("05 01 03 00 02 29 04 00 01 29")
        let pdu = try ATTPDU.decode(input)
        #expect(pdu == .findInformationResponse([
            ATTPDU.HandleUUID(handle: 3, uuid: .clientCharacteristicConfiguration),
            ATTPDU.HandleUUID(handle: 4, uuid: .characteristicUserDescription),
        ]))
        #expect(pdu.encoded == input)
    }

    @Test func findInformationResponseFormat2Has128BitUUIDs() throws {
        let input = bytes("05 02 0A 00 9E CA DC 24 0E E5 A9 E0 93 F3 A3 B5 02 00 40 6E")
        let pdu = try ATTPDU.decode(input)
        let uuid = try #require(BluetoothUUID("6E400002-B5A3-F393-E0A9-E50E24DCCA9E"))
        #expect(pdu == .findInformationResponse([ATTPDU.HandleUUID(handle: 0x0A, uuid: uuid)]))
        #expect(pdu.encoded == input)
    }

    @Test func findInformationResponseFormat2WithABaseUUIDDecodesToThe16BitValue() throws {
        // 00002902-0000-1000-8000-00805F9B34FB sent as 128 bits.
        let input = bytes("05 02 03 00 FB 34 9B 5F 80 00 00 80 00 10 00 00 02 29 00 00")
        let pdu = try ATTPDU.decode(input)
        #expect(pdu == .findInformationResponse([ATTPDU.HandleUUID(handle: 3, uuid: BluetoothUUID(0x2902))]))
        #expect((try? ATTPDU.decode(pdu.encoded)) == pdu)
    }

    @Test func findByTypeValueDiscoversAServiceByUUID() throws {
        let request = bytes("06 01 00 FF FF 00 28 0D 18")
        #expect(try ATTPDU.decode(request) == .findByTypeValueRequest(
            startHandle: 1, endHandle: 0xFFFF, attributeType: 0x2800, value: [0x0D, 0x18]))
        let response = bytes("07 10 00 1A 00 20 00 FF FF")
        #expect(try ATTPDU.decode(response) == .findByTypeValueResponse([
            ATTPDU.HandleRange(foundHandle: 0x10, groupEndHandle: 0x1A),
            ATTPDU.HandleRange(foundHandle: 0x20, groupEndHandle: 0xFFFF),
        ]))
    }

    @Test func readByTypeRequestTakes16Or128BitTypes() throws {
        #expect(try ATTPDU.decode(bytes("08 01 00 FF FF 03 28")) ==
            .readByTypeRequest(startHandle: 1, endHandle: 0xFFFF, attributeType: .characteristic))
        let long = bytes("08 01 00 FF FF 9E CA DC 24 0E E5 A9 E0 93 F3 A3 B5 01 00 40 6E")
        let pdu = try ATTPDU.decode(long)
        #expect(pdu == .readByTypeRequest(startHandle: 1, endHandle: 0xFFFF,
                                          attributeType: BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")!))
        #expect(pdu.encoded == long)
        #expect(ATTPDU.readByGroupTypeRequest(startHandle: 1, endHandle: 0xFFFF, groupType: .primaryService).encoded
            == (bytes("10 01 00 FF FF 00 28")))
    }

    @Test func readByTypeResponseListsCharacteristicDeclarations() throws {
        let input = bytes("09 07 02 00 10 03 00 37 2A 04 00 02 05 00 38 2A")
        let pdu = try ATTPDU.decode(input)
        guard case .readByTypeResponse(let entries) = pdu else { Issue.record("wrong case"); return }
        #expect(entries.map(\.handle) == [2, 4])
        let first = try CharacteristicDeclaration.decode(entries[0].value)
        #expect(first == CharacteristicDeclaration(properties: .notify, valueHandle: 3, uuid: BluetoothUUID(0x2A37)))
        let second = try CharacteristicDeclaration.decode(entries[1].value)
        #expect(second.properties == .read && second.valueHandle == 5 && second.uuid == BluetoothUUID(0x2A38))
        #expect(pdu.encoded == input)
    }

    @Test func readsAndBlobs() throws {
        #expect(try ATTPDU.decode(bytes("0A 03 00")) == .readRequest(handle: 3))
        #expect(try ATTPDU.decode(bytes("0B 02")) == .readResponse(value: [0x02]))
        #expect(try ATTPDU.decode(bytes("0B")) == .readResponse(value: []))
        #expect(try ATTPDU.decode(bytes("0C 03 00 16 00")) == .readBlobRequest(handle: 3, offset: 22))
        #expect(try ATTPDU.decode(bytes("0D 41 42")) == .readBlobResponse(value: [0x41, 0x42]))
        #expect(try ATTPDU.decode(bytes("0E 03 00 05 00")) == .readMultipleRequest(handles: [3, 5]))
        #expect(try ATTPDU.decode(bytes("0F 01 02 03")) == .readMultipleResponse(values: [1, 2, 3]))
    }

    @Test func writes() throws {
        #expect(try ATTPDU.decode(bytes("12 04 00 01 00")) == .writeRequest(handle: 4, value: [0x01, 0x00]))
        #expect(try ATTPDU.decode(bytes("13")) == .writeResponse)
        #expect(try ATTPDU.decode(bytes("52 09 00 01")) == .writeCommand(handle: 9, value: [0x01]))
        let signed = bytes("D2 03 00 AA BB 01 02 03 04 05 06 07 08 09 0A 0B 0C")
        let pdu = try ATTPDU.decode(signed)
        #expect(pdu == .signedWriteCommand(handle: 3, value: [0xAA, 0xBB], signature: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]))
        #expect(pdu.encoded == signed)
        #expect(try ATTPDU.decode(bytes("D2 03 00 01 02 03 04 05 06 07 08 09 0A 0B 0C")) ==
            .signedWriteCommand(handle: 3, value: [], signature: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]))
    }

    @Test func preparedWrites() throws {
        #expect(try ATTPDU.decode(bytes("16 03 00 14 00 01 02")) == .prepareWriteRequest(handle: 3, offset: 20, value: [1, 2]))
        #expect(try ATTPDU.decode(bytes("17 03 00 14 00 01 02")) == .prepareWriteResponse(handle: 3, offset: 20, value: [1, 2]))
        #expect(try ATTPDU.decode(bytes("18 01")) == .executeWriteRequest(flags: .write))
        #expect(try ATTPDU.decode(bytes("18 00")) == .executeWriteRequest(flags: .cancel))
        #expect(try ATTPDU.decode(bytes("18 07")) == .executeWriteRequest(flags: ATTExecuteWriteFlags(7)))
        #expect(try ATTPDU.decode(bytes("19")) == .executeWriteResponse)
    }

    @Test func serverInitiatedUpdates() throws {
        let hrm = bytes("1B 2A 00 06 5A")
        #expect(try ATTPDU.decode(hrm) == .handleValueNotification(handle: 0x2A, value: [0x06, 0x5A]))
        #expect(try ATTPDU.decode(bytes("1D 03 00 01 00 FF FF")) == .handleValueIndication(handle: 3, value: [1, 0, 0xFF, 0xFF]))
        #expect(try ATTPDU.decode(bytes("1E")) == .handleValueConfirmation)
        let multiple = bytes("23 03 00 02 00 06 5A 05 00 00 00 07 00 01 00 09")
        let pdu = try ATTPDU.decode(multiple)
        #expect(pdu == .multipleHandleValueNotification([
            ATTPDU.HandleValue(handle: 3, value: [0x06, 0x5A]),
            ATTPDU.HandleValue(handle: 5, value: []),
            ATTPDU.HandleValue(handle: 7, value: [0x09]),
        ]))
        #expect(pdu.encoded == multiple)
    }

    @Test func notificationValueIsASliceOfTheInput() throws {
        let input = bytes("1B 2A 00 06 5A")
        guard case .handleValueNotification(_, let value) = try ATTPDU.decode(input) else { return }
        #expect(value.startIndex == 3 && value.endIndex == 5)
    }

    @Test func readMultipleVariable() throws {
        #expect(try ATTPDU.decode(bytes("20 03 00 05 00 07 00")) == .readMultipleVariableRequest(handles: [3, 5, 7]))
        let complete = bytes("21 02 00 AA BB 00 00 01 00 CC")
        #expect(try ATTPDU.decode(complete) == .readMultipleVariableResponse([
            ATTPDU.LengthValue(value: [0xAA, 0xBB]), ATTPDU.LengthValue(value: []), ATTPDU.LengthValue(value: [0xCC]),
        ]))
    }

    @Test func readMultipleVariableResponseKeepsAValueCutByTheMTU() throws {
        let input = bytes("21 02 00 AA BB 10 00 CC DD")
        let pdu = try ATTPDU.decode(input)
        guard case .readMultipleVariableResponse(let tuples) = pdu else { Issue.record("wrong case"); return }
        #expect(tuples.count == 2)
        #expect(!tuples[0].isTruncated)
        #expect(tuples[1].length == 16 && tuples[1].value == [0xCC, 0xDD] && tuples[1].isTruncated)
        #expect(pdu.encoded == input)
        // Half a length field at the end carries nothing and is dropped.
        #expect(try ATTPDU.decode(bytes("21 01 00 AA 05")) == .readMultipleVariableResponse([ATTPDU.LengthValue(value: [0xAA])]))
    }

    @Test func unknownOpcodesKeepTheirParameters() throws {
        let input = bytes("3F 01 02 03")
        let pdu = try ATTPDU.decode(input)
        #expect(pdu == .unknown(opcode: ATTOpcode(0x3F), parameters: [1, 2, 3]))
        #expect(pdu.encoded == input)
        #expect(try ATTPDU.decode(bytes("7E")) == .unknown(opcode: ATTOpcode(0x7E), parameters: []))
    }

    @Test func handleZeroDecodesInResponsesAndRequests() throws {
        #expect(try ATTPDU.decode(bytes("01 0A 00 00 01")) == .errorResponse(requestOpcode: .readRequest, handle: 0, errorCode: .invalidHandle))
        #expect(try ATTPDU.decode(bytes("09 04 00 00 01 02")) == .readByTypeResponse([ATTPDU.HandleValue(handle: 0, value: [1, 2])]))
        #expect(try ATTPDU.decode(bytes("0A 00 00")) == .readRequest(handle: 0))
    }

    @Test func emptyListsAreStructurallyValid() throws {
        #expect(try ATTPDU.decode(bytes("05 01")) == .findInformationResponse([]))
        #expect(try ATTPDU.decode(bytes("07")) == .findByTypeValueResponse([]))
        #expect(try ATTPDU.decode(bytes("09 02")) == .readByTypeResponse([]))
        #expect(try ATTPDU.decode(bytes("11 04")) == .readByGroupTypeResponse([]))
    }
}

// MARK: - Malformed input

@Suite("ATT malformed PDUs")
struct ATTMalformedTests {
    @Test func emptyInputIsTruncated() {
        #expect(decodeError([])?.kind == .truncated(needed: 1, available: 0))
    }

    @Test func truncatedFixedFieldsNameTheOffset() throws {
        let error = try #require(decodeError(bytes("02 05")))
        #expect(error.kind == .truncated(needed: 2, available: 1))
        #expect(error.offset == 1)
        #expect(error.context == "ATT Exchange MTU Request")
        #expect(decodeError(bytes("01 08 01 00")) != nil)
        #expect(decodeError(bytes("0C 03 00 16")) != nil)
        #expect(decodeError(bytes("1B 2A")) != nil)
        #expect(decodeError(bytes("16 03 00 14")) != nil)
        #expect(decodeError(bytes("06 01 00 FF FF 00")) != nil)
        #expect(decodeError(bytes("18")) != nil)
    }

    @Test func trailingBytesAreErrors() throws {
        for text in ["02 05 02 00", "03 17 00 01", "01 08 01 00 0A 00", "04 01 00 FF FF 00", "0A 03 00 00",
                     "0C 03 00 16 00 00", "13 00", "18 01 00", "19 00", "1E 00"] {
            let error = try #require(decodeError(bytes(text)), "\(text)")
            guard case .trailingBytes = error.kind else { Issue.record("\(text): \(error)"); continue }
        }
        let error = try #require(decodeError(bytes("02 05 02 00")))
        #expect(error.kind == .trailingBytes(count: 1) && error.offset == 3)
    }

    @Test func findInformationResponseRejectsUnknownFormatsAndPartialEntries() throws {
        let unknownFormat = try #require(decodeError(bytes("05 03 01 00 00 18")))
        #expect(unknownFormat.kind == .unknownValue(3) && unknownFormat.offset == 1)
        #expect(decodeError(bytes("05 01 03 00 02")) != nil)
        #expect(decodeError(bytes("05 02 03 00 02 29")) != nil)
        #expect(decodeError(bytes("05")) != nil)
    }

    @Test func readByTypeResponseLengthMustBeAtLeast2AndDivideTheRest() throws {
        let tooShort = try #require(decodeError(bytes("09 01 02")))
        #expect(tooShort.offset == 1)
        #expect(decodeError(bytes("09 00")) != nil)
        let nonDividing = try #require(decodeError(bytes("09 04 01 00 AA BB 02 00")))
        #expect(nonDividing.context == "ATT Read By Type Response")
        #expect(decodeError(bytes("09")) != nil)
    }

    @Test func readByGroupTypeResponseLengthMustBeAtLeast4AndDivideTheRest() throws {
        #expect(decodeError(bytes("11 03 01 00 02")) != nil)
        #expect(decodeError(bytes("11 06 01 00 07 00 00 18 08 00")) != nil)
    }

    @Test func findByTypeValueResponseMustHoldWholeRanges() throws {
        #expect(decodeError(bytes("07 01 00 05")) != nil)
    }

    @Test func attributeTypesMustBe2Or16Bytes() throws {
        #expect(decodeError(bytes("08 01 00 FF FF 0D 18 00 00")) != nil)
        #expect(decodeError(bytes("10 01 00 FF FF 00")) != nil)
        #expect(decodeError(bytes("08 01 00 FF FF")) != nil)
    }

    @Test func readMultipleNeedsTwoWholeHandles() throws {
        #expect(decodeError(bytes("0E 03 00")) != nil)
        #expect(decodeError(bytes("0E 03 00 05")) != nil)
        #expect(decodeError(bytes("20 03 00")) != nil)
        #expect(decodeError(bytes("20 03 00 05 00 07")) != nil)
    }

    @Test func signedWriteNeedsAWholeSignature() throws {
        #expect(decodeError(bytes("D2 03 00 01 02 03 04 05 06 07 08 09 0A 0B")) != nil)
        #expect(decodeError(bytes("D2 03")) != nil)
    }

    @Test func multipleHandleValueNotificationLengthsMustFit() throws {
        #expect(decodeError(bytes("23 03 00 05 00 01 02")) != nil)
        #expect(decodeError(bytes("23 03 00 01")) != nil)
        #expect(decodeError(bytes("23 03")) != nil)
    }

    @Test func errorOffsetsAreAbsoluteInASlice() throws {
        let buffer = bytes("AA BB 02 05")
        do {
            _ = try ATTPDU.decode(buffer[2...])
            Issue.record("decoded a truncated PDU")
        } catch {
            #expect(error.offset == 3)
        }
    }
}

// MARK: - Properties

@Suite("ATT properties")
struct ATTPropertyTests {
    @Test func everyPDUKindRoundTrips() async {
        for kind in 0..<pduKinds {
            await propertyCheck(count: 40, input: Generator<ATTPDU, Shrink.None<ATTPDU>> { rng in randomPDU(&rng, kind: kind) }) { pdu in
                #expect(roundTrips(pdu), "\(pdu)")
            }
        }
    }

    @Test func randomPDUsRoundTripAndKeepTheirOpcode() async {
        await propertyCheck(count: 500, input: anyPDU) { pdu in
            let encoded = pdu.encoded
            #expect(encoded.first == pdu.opcode.rawValue)
            #expect(roundTrips(pdu), "\(pdu)")
        }
    }

    @Test func truncatingAFixedSizePDUFails() async {
        // Every prefix of these fixed-size PDUs is missing a field.
        let fixed: [ATTPDU] = [
            .errorResponse(requestOpcode: .readRequest, handle: 3, errorCode: .readNotPermitted),
            .exchangeMTURequest(clientMTU: 517), .findInformationRequest(startHandle: 1, endHandle: 9),
            .readRequest(handle: 3), .readBlobRequest(handle: 3, offset: 22), .executeWriteRequest(flags: .write),
            .signedWriteCommand(handle: 1, value: [], signature: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
        ]
        for pdu in fixed {
            let encoded = pdu.encoded
            for cut in 0..<encoded.count {
                #expect(decodeError(Array(encoded.prefix(cut))) != nil, "\(pdu) cut at \(cut)")
            }
        }
    }

    @Test func decodingRandomBytesNeverTraps() async {
        await propertyCheck(count: 3000, input: Gen.uint8().array(of: 0...40)) { input in
            if let pdu = try? ATTPDU.decode(input) {
                #expect((try? ATTPDU.decode(pdu.encoded)) == pdu)
            }
        }
    }

    @Test func decodingRandomBytesAfterEachKnownOpcodeNeverTraps() async {
        await propertyCheck(count: 2000, input: Gen.int(in: 0..<knownOpcodes.count), Gen.uint8().array(of: 0...40)) { index, rest in
            let opcode = knownOpcodes[index].0
            let input = [opcode] + rest
            if let pdu = try? ATTPDU.decode(input) {
                #expect(pdu.opcode.rawValue == opcode)
                #expect((try? ATTPDU.decode(pdu.encoded)) == pdu)
            }
        }
    }
}
