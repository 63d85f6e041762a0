import RawbleGATTCore
import RawbleTestSupport
import RawbleWire
import Testing


@Suite("Procedure: read value")
struct ProcedureReadValueTests {
    @Test("GATT/CL/GAR/BV-01-C: one Read Request; the value as answered")
    func read() {
        #expect(run(ReadValue(handle: 3), [Exchange("0A 03 00", "0B 01 02")]).value == [1, 2])
        #expect(run(ReadValue(handle: 3), [Exchange("0A 03 00", "0B")]).value == [])
    }

    @Test("GATT/CL/GAR/BI-02-C: an Error Response becomes the ATT error; one for another request is invalid")
    func errors() {
        expectATTError(run(ReadValue(handle: 3), [Exchange("0A 03 00", "01 0A 03 00 02")]), .readNotPermitted,
                       request: .readRequest, handle: 3)
        expectInvalid(run(ReadValue(handle: 3), [Exchange("0A 03 00", "01 0C 03 00 02")]), "Error Response for Read Blob Request")
        expectInvalid(run(ReadValue(handle: 3), [Exchange("0A 03 00", "0D 01")]), "Read Blob Response")
    }

    @Test("hostile: a value over 512 bytes")
    func tooLong() {
        let result = answer(ReadValue(handle: 3), with: .readResponse(value: pattern(513)[...]))
        #expect(result.error == .valueTooLong(513))
    }
}

@Suite("Procedure: read long value")
struct ProcedureReadLongValueTests {
    @Test("GATT/CL/GAR/BV-04-C: Read, then Read Blob at each offset while the part is ATT_MTU − 1 bytes")
    func blobs() {
        let value = pattern(49)
        let result = run(ReadLongValue(handle: 0x20, mtu: 23), [
            Exchange("0A 20 00", "0B " + hexString(Array(value[0..<22]))),
            Exchange("0C 20 00 16 00", "0D " + hexString(Array(value[22..<44]))),
            Exchange("0C 20 00 2C 00", "0D " + hexString(Array(value[44..<49]))),
        ])
        #expect(result.value == value)
    }

    @Test("a short first part needs no blob")
    func short() {
        #expect(run(ReadLongValue(handle: 0x20, mtu: 64), [Exchange("0A 20 00", "0B 01 02 03")]).value == [1, 2, 3])
    }

    @Test("Attribute Not Long or Invalid Offset on the first blob ends with the first part")
    func notLong() {
        let first = pattern(22)
        for code in ["0B", "07"] {
            let result = run(ReadLongValue(handle: 0x20, mtu: 23), [
                Exchange("0A 20 00", "0B " + hexString(first)),
                Exchange("0C 20 00 16 00", "01 0C 20 00 " + code),
            ])
            #expect(result.value == first, "error \(code)")
        }
    }

    @Test("an empty blob at the value's end ends the read; other blob errors are reported")
    func emptyBlobAndErrors() {
        let first = pattern(22)
        #expect(run(ReadLongValue(handle: 0x20, mtu: 23), [
            Exchange("0A 20 00", "0B " + hexString(first)),
            Exchange("0C 20 00 16 00", "0D"),
        ]).value == first)
        expectATTError(run(ReadLongValue(handle: 0x20, mtu: 23), [
            Exchange("0A 20 00", "0B " + hexString(first)),
            Exchange("0C 20 00 16 00", "01 0C 20 00 0F"),
        ]), .insufficientEncryption, request: .readBlobRequest, handle: 0x20)
        expectATTError(run(ReadLongValue(handle: 0x20, mtu: 23), [Exchange("0A 20 00", "01 0A 20 00 01")]),
                       .invalidHandle, request: .readRequest, handle: 0x20)
    }

    @Test("a value of exactly 512 bytes at ATT_MTU 257 takes one blob and asks no more")
    func exactly512() {
        let value = pattern(512)
        let result = run(ReadLongValue(handle: 1, mtu: 257), [
            Exchange("0A 01 00", "0B " + hexString(Array(value[0..<256]))),
            Exchange("0C 01 00 00 01", "0D " + hexString(Array(value[256..<512]))),
        ])
        #expect(result.value == value)
    }

    @Test("hostile: a server that never stops sending full parts ends with valueTooLong past 512 bytes")
    func endless() {
        var procedure = ReadLongValue(handle: 1, mtu: 23)
        var step = procedure.start()
        var steps = 0
        var failure: GATTError?
        while case .send = step, steps < 100 {
            steps += 1
            do {
                step = try procedure.receive(steps == 1 ? .readResponse(value: pattern(22)[...]) : .readBlobResponse(value: pattern(22)[...]))
            } catch {
                failure = error
                break
            }
        }
        #expect(failure == .valueTooLong(528))
        #expect(steps == 24)
    }

    @Test("hostile: a Read Response to a Read Blob Request")
    func wrongResponse() {
        expectInvalid(run(ReadLongValue(handle: 0x20, mtu: 23), [
            Exchange("0A 20 00", "0B " + hexString(pattern(22))),
            Exchange("0C 20 00 16 00", "0B 01"),
        ]), "Read Response (0x0B) in answer to Read Blob Request")
    }
}

@Suite("Procedure: read multiple values")
struct ProcedureReadMultipleTests {
    @Test("GATT/CL/GAR/BV-05-C: Read Multiple: the values concatenated")
    func readMultiple() {
        #expect(run(ReadMultipleValues(handles: [3, 5]), [Exchange("0E 03 00 05 00", "0F 01 02 03")]).value == [1, 2, 3])
        expectATTError(run(ReadMultipleValues(handles: [3, 5]), [Exchange("0E 03 00 05 00", "01 0E 05 00 02")]),
                       .readNotPermitted, request: .readMultipleRequest, handle: 5)
    }

    @Test("Read Multiple Variable: one value per handle")
    func readMultipleVariable() {
        let result = run(ReadMultipleVariableValues(handles: [3, 5]), [Exchange("20 03 00 05 00", "21 01 00 AA 02 00 BB CC")])
        #expect(result.value == [[0xAA], [0xBB, 0xCC]])
    }

    @Test("Read Multiple Variable: a list cut at the MTU gives the values that came")
    func truncated() {
        let result = run(ReadMultipleVariableValues(handles: [3, 5, 7]), [Exchange("20 03 00 05 00 07 00", "21 01 00 AA 05 00 BB")])
        #expect(result.value == [[0xAA], [0xBB]])
    }

    @Test("hostile: more values than handles, an announced length over 512, the wrong response")
    func hostile() {
        expectInvalid(run(ReadMultipleVariableValues(handles: [3, 5]), [
            Exchange("20 03 00 05 00", "21 01 00 AA 01 00 BB 01 00 CC"),
        ]), "3 values for 2 handles")
        #expect(run(ReadMultipleVariableValues(handles: [3, 5]), [
            Exchange("20 03 00 05 00", "21 01 02 AA"),
        ]).error == .valueTooLong(0x201))
        expectInvalid(run(ReadMultipleVariableValues(handles: [3, 5]), [Exchange("20 03 00 05 00", "0F 01")]),
                      "Read Multiple Response")
    }
}

@Suite("Procedure: read using characteristic UUID")
struct ProcedureReadUsingCharacteristicUUIDTests {
    @Test("GATT/CL/GAR/BV-03-C: Read By Type with the UUID, continuing after the last handle until Attribute Not Found")
    func readByUUID() {
        let result = run(ReadUsingCharacteristicUUID(BluetoothUUID(0x2A19)), [
            Exchange("08 01 00 FF FF 19 2A", "09 03 10 00 64 14 00 32"),
            Exchange("08 15 00 FF FF 19 2A", "01 08 15 00 0A"),
        ])
        #expect(result.value == [GATTHandleValue(handle: 0x10, value: [0x64]), GATTHandleValue(handle: 0x14, value: [0x32])])
    }

    @Test("a 128-bit type in a sub-range")
    func longUUID() {
        let result = run(ReadUsingCharacteristicUUID(customUUID, range: 0x10...0x20), [
            Exchange("08 10 00 20 00 " + customUUIDHex, "09 04 20 00 01 02"),
        ])
        #expect(result.value == [GATTHandleValue(handle: 0x20, value: [1, 2])])
    }

    @Test("hostile: a repeated handle, and a read error")
    func hostile() {
        expectInvalid(run(ReadUsingCharacteristicUUID(BluetoothUUID(0x2A19)), [
            Exchange("08 01 00 FF FF 19 2A", "09 03 10 00 64"),
            Exchange("08 11 00 FF FF 19 2A", "09 03 10 00 64"),
        ]), "outside the requested range")
        expectATTError(run(ReadUsingCharacteristicUUID(BluetoothUUID(0x2A19)), [
            Exchange("08 01 00 FF FF 19 2A", "01 08 10 00 02"),
        ]), .readNotPermitted, request: .readByTypeRequest, handle: 0x10)
    }
}

@Suite("Procedure: write value")
struct ProcedureWriteValueTests {
    @Test("GATT/CL/GAW/BV-03-C: one Write Request; Write Response finishes")
    func write() throws {
        #expect(run(try WriteValue(handle: 3, value: [1, 2], mtu: 23), [Exchange("12 03 00 01 02", "13")]).value != nil)
    }

    @Test("a value of ATT_MTU − 3 bytes fits; one more byte is valueTooLong")
    func limit() throws {
        _ = try WriteValue(handle: 3, value: pattern(20), mtu: 23)
        #expect(throws: GATTError.valueTooLong(21)) { try WriteValue(handle: 3, value: pattern(21), mtu: 23) }
    }

    @Test("an Error Response becomes the ATT error; the wrong response is invalid")
    func errors() throws {
        expectATTError(run(try WriteValue(handle: 3, value: [1], mtu: 23), [Exchange("12 03 00 01", "01 12 03 00 03")]),
                       .writeNotPermitted, request: .writeRequest, handle: 3)
        expectInvalid(run(try WriteValue(handle: 3, value: [1], mtu: 23), [Exchange("12 03 00 01", "19")]),
                      "Execute Write Response")
    }

    @Test("GATT/CL/GAW/BV-08-C: CCCD: the 2 bytes little-endian")
    func cccd() {
        #expect(run(WriteCCCD(handle: 4, value: .notify), [Exchange("12 04 00 01 00", "13")]).value != nil)
        #expect(run(WriteCCCD(handle: 4, value: .indicate), [Exchange("12 04 00 02 00", "13")]).value != nil)
    }
}

@Suite("Procedure: long write and reliable write")
struct ProcedureLongWriteTests {
    let value = pattern(40)
    var parts: [String] { [hexString(Array(value[0..<18])), hexString(Array(value[18..<36])), hexString(Array(value[36..<40]))] }

    @Test("GATT/CL/GAW/BV-05-C: Prepare Writes of ATT_MTU − 5 bytes, each echo checked, then Execute Write")
    func longWrite() throws {
        let script = [
            Exchange("16 20 00 00 00 " + parts[0], "17 20 00 00 00 " + parts[0]),
            Exchange("16 20 00 12 00 " + parts[1], "17 20 00 12 00 " + parts[1]),
            Exchange("16 20 00 24 00 " + parts[2], "17 20 00 24 00 " + parts[2]),
            Exchange("18 01", "19"),
        ]
        #expect(run(try LongWrite(handle: 0x20, value: value, mtu: 23), script).value != nil)
    }

    @Test("a starting offset is carried into every part")
    func offset() throws {
        let script = [
            Exchange("16 20 00 0A 00 01 02", "17 20 00 0A 00 01 02"),
            Exchange("18 01", "19"),
        ]
        #expect(run(try LongWrite(handle: 0x20, value: [1, 2], mtu: 23, offset: 10), script).value != nil)
    }

    @Test("hostile: an echo with a different value, offset or handle cancels the queue, then fails")
    func badEcho() throws {
        let wrongValue = hexString(Array(pattern(18, from: 1)))
        for echo in ["17 20 00 00 00 " + wrongValue, "17 20 00 01 00 " + parts[0], "17 21 00 00 00 " + parts[0]] {
            let result = run(try LongWrite(handle: 0x20, value: value, mtu: 23), [
                Exchange("16 20 00 00 00 " + parts[0], echo),
                Exchange("18 00", "19"),
            ])
            expectInvalid(result, "Prepare Write Response echoes")
        }
    }

    @Test("an error on the first part fails at once; on a later part it cancels first")
    func prepareErrors() throws {
        expectATTError(run(try LongWrite(handle: 0x20, value: value, mtu: 23), [
            Exchange("16 20 00 00 00 " + parts[0], "01 16 20 00 03"),
        ]), .writeNotPermitted, request: .prepareWriteRequest, handle: 0x20)
        expectATTError(run(try LongWrite(handle: 0x20, value: value, mtu: 23), [
            Exchange("16 20 00 00 00 " + parts[0], "17 20 00 00 00 " + parts[0]),
            Exchange("16 20 00 12 00 " + parts[1], "01 16 20 00 09"),
            Exchange("18 00", "01 18 00 00 0E"),
        ]), .prepareQueueFull, request: .prepareWriteRequest, handle: 0x20)
    }

    @Test("an Execute Write error is reported; the wrong response to Execute Write is invalid")
    func executeErrors() throws {
        expectATTError(run(try LongWrite(handle: 0x20, value: [1], mtu: 23), [
            Exchange("16 20 00 00 00 01", "17 20 00 00 00 01"),
            Exchange("18 01", "01 18 20 00 0D"),
        ]), .invalidAttributeValueLength, request: .executeWriteRequest, handle: 0x20)
        expectInvalid(run(try LongWrite(handle: 0x20, value: [1], mtu: 23), [
            Exchange("16 20 00 00 00 01", "17 20 00 00 00 01"),
            Exchange("18 01", "13"),
        ]), "Write Response")
    }

    @Test("values past 512 bytes (with the offset) are valueTooLong before anything is sent")
    func tooLong() {
        #expect(throws: GATTError.valueTooLong(513)) { try LongWrite(handle: 1, value: pattern(513), mtu: 23) }
        #expect(throws: GATTError.valueTooLong(513)) { try LongWrite(handle: 1, value: pattern(503), mtu: 23, offset: 10) }
        #expect(throws: GATTError.valueTooLong(513)) {
            try ReliableWrite([GATTHandleValue(handle: 1, value: pattern(513))], mtu: 23)
        }
    }

    @Test("GATT/CL/GAW/BV-06-C: reliable write: every part of every value prepared and verified, one Execute Write")
    func reliableWrite() throws {
        let writes = [GATTHandleValue(handle: 0x20, value: value), GATTHandleValue(handle: 0x30, value: [0xAA, 0xBB])]
        let script = [
            Exchange("16 20 00 00 00 " + parts[0], "17 20 00 00 00 " + parts[0]),
            Exchange("16 20 00 12 00 " + parts[1], "17 20 00 12 00 " + parts[1]),
            Exchange("16 20 00 24 00 " + parts[2], "17 20 00 24 00 " + parts[2]),
            Exchange("16 30 00 00 00 AA BB", "17 30 00 00 00 AA BB"),
            Exchange("18 01", "19"),
        ]
        #expect(run(try ReliableWrite(writes, mtu: 23), script).value != nil)
    }

    @Test("reliable write: a corrupted echo of the second value cancels everything")
    func reliableWriteCancel() throws {
        let writes = [GATTHandleValue(handle: 0x20, value: [1]), GATTHandleValue(handle: 0x30, value: [0xAA, 0xBB])]
        expectInvalid(run(try ReliableWrite(writes, mtu: 23), [
            Exchange("16 20 00 00 00 01", "17 20 00 00 00 01"),
            Exchange("16 30 00 00 00 AA BB", "17 30 00 00 00 AA BA"),
            Exchange("18 00", "19"),
        ]), "Prepare Write Response echoes")
    }

    @Test("reliable write of nothing, and an empty long write, finish as specified")
    func emptyWrites() throws {
        #expect(run(try ReliableWrite([], mtu: 23), []).value != nil)
        #expect(run(try LongWrite(handle: 5, value: [], mtu: 23), [
            Exchange("16 05 00 00 00", "17 05 00 00 00"),
            Exchange("18 01", "19"),
        ]).value != nil)
    }
}
