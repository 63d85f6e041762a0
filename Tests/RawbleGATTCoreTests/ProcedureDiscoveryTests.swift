import RawbleGATTCore
import RawbleTestSupport
import RawbleWire
import Testing

@Suite("Procedure: discover all primary services")
struct ProcedureDiscoverPrimaryServicesTests {
    let readGroups = "10 01 00 FF FF 00 28"

    @Test("GATT/CL/GAD/BV-01-C: two responses then Attribute Not Found: 16-bit and 128-bit services, each request after the last end")
    func walksAllServices() {
        let result = run(DiscoverPrimaryServices(), [
            Exchange(readGroups, "11 06 01 00 05 00 00 18 06 00 09 00 01 18"),
            Exchange("10 0A 00 FF FF 00 28", "11 14 0A 00 10 00 " + customUUIDHex),
            Exchange("10 11 00 FF FF 00 28", "01 10 11 00 0A"),
        ])
        #expect(result.value == [
            GATTService(uuid: BluetoothUUID(0x1800), startHandle: 0x01, endHandle: 0x05),
            GATTService(uuid: BluetoothUUID(0x1801), startHandle: 0x06, endHandle: 0x09),
            GATTService(uuid: customUUID, startHandle: 0x0A, endHandle: 0x10),
        ])
    }

    @Test("a service ending at 0xFFFF ends discovery without another request")
    func endsAtLastHandle() {
        let result = run(DiscoverPrimaryServices(), [Exchange(readGroups, "11 06 01 00 FF FF 0D 18")])
        #expect(result.value == [GATTService(uuid: .heartRateService, startHandle: 1, endHandle: 0xFFFF)])
    }

    @Test("a sub-range is requested as given; Attribute Not Found at once gives no services")
    func subRangeNoServices() {
        let result = run(DiscoverPrimaryServices(range: 0x0010...0x0020), [
            Exchange("10 10 00 20 00 00 28", "01 10 10 00 0A"),
        ])
        #expect(result.value == [])
    }

    @Test("another error ends discovery with that ATT error")
    func otherError() {
        let result = run(DiscoverPrimaryServices(), [Exchange(readGroups, "01 10 01 00 10")])
        expectATTError(result, .unsupportedGroupType, request: .readByGroupTypeRequest, handle: 1)
    }

    @Test("hostile: a response that does not advance past the request's start")
    func notAdvancing() {
        let result = run(DiscoverPrimaryServices(), [
            Exchange(readGroups, "11 06 01 00 05 00 00 18"),
            Exchange("10 06 00 FF FF 00 28", "11 06 01 00 05 00 00 18"),
        ])
        expectInvalid(result, "outside the requested range")
    }

    @Test("hostile: handle 0")
    func handleZero() {
        expectInvalid(run(DiscoverPrimaryServices(), [Exchange(readGroups, "11 06 00 00 05 00 00 18")]), "handle 0x0000")
    }

    @Test("hostile: a service whose end is before its start")
    func endBeforeStart() {
        expectInvalid(run(DiscoverPrimaryServices(), [Exchange(readGroups, "11 06 05 00 04 00 00 18")]), "ends before it starts")
    }

    @Test("hostile: overlapping services in one response")
    func overlapping() {
        expectInvalid(run(DiscoverPrimaryServices(), [Exchange(readGroups, "11 06 01 00 05 00 00 18 04 00 09 00 01 18")]),
                      "does not advance")
    }

    @Test("hostile: a handle outside a requested sub-range")
    func outsideSubRange() {
        let result = run(DiscoverPrimaryServices(range: 0x0010...0x0020), [
            Exchange("10 10 00 20 00 00 28", "11 06 05 00 12 00 00 18"),
        ])
        expectInvalid(result, "outside the requested range 0x0010–0x0020")
    }

    @Test("hostile: a service UUID of 4 bytes")
    func badUUIDLength() {
        expectInvalid(run(DiscoverPrimaryServices(), [Exchange(readGroups, "11 08 01 00 05 00 00 18 00 00")]), "4 bytes")
    }

    @Test("hostile: an empty response")
    func emptyResponse() {
        expectInvalid(run(DiscoverPrimaryServices(), [Exchange(readGroups, "11 06")]), "empty")
    }

    @Test("hostile: an Error Response for a different request")
    func errorForOtherRequest() {
        expectInvalid(run(DiscoverPrimaryServices(), [Exchange(readGroups, "01 08 01 00 0A")]), "Error Response for Read By Type Request")
    }

    @Test("hostile: the wrong response opcode, and an unknown PDU")
    func wrongOpcode() {
        expectInvalid(run(DiscoverPrimaryServices(), [Exchange(readGroups, "09 04 01 00 00 18")]), "Read By Type Response")
        expectInvalid(run(DiscoverPrimaryServices(), [Exchange(readGroups, "3F 01 02")]), "in answer to Read By Group Type Request")
    }

    @Test("a response after the procedure finished is rejected")
    func responseAfterFinish() {
        var procedure = DiscoverPrimaryServices(range: 0...0)
        guard case .finished(let services) = procedure.start() else {
            Issue.record("range 0...0 has no valid handle and must finish at once")
            return
        }
        #expect(services.isEmpty)
        #expect(throws: GATTError.self) { try procedure.receive(.readByGroupTypeResponse([])) }
    }
}

@Suite("Procedure: discover primary services by UUID")
struct ProcedureDiscoverPrimaryServicesByUUIDTests {
    @Test("GATT/CL/GAD/BV-02-C: 16-bit UUID: Find By Type Value with the 2-byte value, continuing after the group end")
    func byShortUUID() {
        let result = run(DiscoverPrimaryServicesByUUID(.heartRateService), [
            Exchange("06 01 00 FF FF 00 28 0D 18", "07 10 00 14 00"),
            Exchange("06 15 00 FF FF 00 28 0D 18", "01 06 15 00 0A"),
        ])
        #expect(result.value == [GATTService(uuid: .heartRateService, startHandle: 0x10, endHandle: 0x14)])
    }

    @Test("GATT/CL/GAD/BV-02-C: 128-bit UUID: the 16-byte little-endian value; two instances in one response")
    func byLongUUID() {
        let result = run(DiscoverPrimaryServicesByUUID(customUUID), [
            Exchange("06 01 00 FF FF 00 28 " + customUUIDHex, "07 20 00 24 00 30 00 FF FF"),
        ])
        #expect(result.value == [
            GATTService(uuid: customUUID, startHandle: 0x20, endHandle: 0x24),
            GATTService(uuid: customUUID, startHandle: 0x30, endHandle: 0xFFFF),
        ])
    }

    @Test("hostile: a found handle that does not advance")
    func notAdvancing() {
        let result = run(DiscoverPrimaryServicesByUUID(.heartRateService), [
            Exchange("06 01 00 FF FF 00 28 0D 18", "07 10 00 14 00"),
            Exchange("06 15 00 FF FF 00 28 0D 18", "07 10 00 14 00"),
        ])
        expectInvalid(result, "outside the requested range")
    }

    @Test("hostile: group end before the found handle, and handle 0")
    func badRanges() {
        expectInvalid(run(DiscoverPrimaryServicesByUUID(.heartRateService), [
            Exchange("06 01 00 FF FF 00 28 0D 18", "07 10 00 0F 00"),
        ]), "ends before it starts")
        expectInvalid(run(DiscoverPrimaryServicesByUUID(.heartRateService), [
            Exchange("06 01 00 FF FF 00 28 0D 18", "07 00 00 0F 00"),
        ]), "handle 0x0000")
    }

    @Test("an error other than Attribute Not Found is reported")
    func otherError() {
        let result = run(DiscoverPrimaryServicesByUUID(.heartRateService), [
            Exchange("06 01 00 FF FF 00 28 0D 18", "01 06 01 00 06"),
        ])
        expectATTError(result, .requestNotSupported, request: .findByTypeValueRequest, handle: 1)
    }

    @Test("hostile: an empty response and the wrong response")
    func emptyAndWrong() {
        expectInvalid(run(DiscoverPrimaryServicesByUUID(.heartRateService), [
            Exchange("06 01 00 FF FF 00 28 0D 18", "07"),
        ]), "empty")
        expectInvalid(run(DiscoverPrimaryServicesByUUID(.heartRateService), [
            Exchange("06 01 00 FF FF 00 28 0D 18", "13"),
        ]), "Write Response")
    }
}

@Suite("Procedure: find included services")
struct ProcedureFindIncludedServicesTests {
    let service = GATTService(uuid: BluetoothUUID(0x1800), startHandle: 0x0001, endHandle: 0x0010)

    @Test("GATT/CL/GAD/BV-03-C: a 16-bit include, then a 128-bit include whose UUID is read from the included service's declaration")
    func includesWithRead() {
        let result = run(FindIncludedServices(of: service), [
            Exchange("08 01 00 10 00 02 28", "09 08 02 00 20 00 25 00 0F 18"),
            Exchange("08 03 00 10 00 02 28", "09 06 03 00 30 00 35 00"),
            Exchange("0A 30 00", "0B " + customUUIDHex),
            Exchange("08 04 00 10 00 02 28", "01 08 04 00 0A"),
        ])
        #expect(result.value == [
            GATTIncludedService(declarationHandle: 2, startHandle: 0x20, endHandle: 0x25, uuid: BluetoothUUID(0x180F)),
            GATTIncludedService(declarationHandle: 3, startHandle: 0x30, endHandle: 0x35, uuid: customUUID),
        ])
    }

    @Test("no includes: Attribute Not Found at once")
    func none() {
        #expect(run(FindIncludedServices(of: service), [Exchange("08 01 00 10 00 02 28", "01 08 01 00 0A")]).value == [])
    }

    @Test("a service whose end is before its start has nothing to search")
    func invertedService() {
        let inverted = GATTService(uuid: BluetoothUUID(0x1800), startHandle: 0x10, endHandle: 0x01)
        #expect(run(FindIncludedServices(of: inverted), []).value == [])
    }

    @Test("hostile: the read of a 128-bit UUID returns 2 bytes")
    func shortUUIDRead() {
        let result = run(FindIncludedServices(of: service), [
            Exchange("08 01 00 10 00 02 28", "09 06 02 00 30 00 35 00"),
            Exchange("0A 30 00", "0B 0F 18"),
        ])
        expectInvalid(result, "holds 2 bytes")
    }

    @Test("hostile: an include naming an inverted range, and one of 5 bytes")
    func badDeclarations() {
        expectInvalid(run(FindIncludedServices(of: service), [
            Exchange("08 01 00 10 00 02 28", "09 06 02 00 30 00 20 00"),
        ]), "invalid range")
        expectInvalid(run(FindIncludedServices(of: service), [
            Exchange("08 01 00 10 00 02 28", "09 07 02 00 30 00 35 00 01"),
        ]), "5 bytes")
    }

    @Test("an error on the UUID read is reported, Attribute Not Found included")
    func readError() {
        let result = run(FindIncludedServices(of: service), [
            Exchange("08 01 00 10 00 02 28", "09 06 02 00 30 00 35 00"),
            Exchange("0A 30 00", "01 0A 30 00 0A"),
        ])
        expectATTError(result, .attributeNotFound, request: .readRequest, handle: 0x30)
    }

    @Test("hostile: an include outside the service")
    func outsideService() {
        expectInvalid(run(FindIncludedServices(of: service), [
            Exchange("08 01 00 10 00 02 28", "09 08 11 00 20 00 25 00 0F 18"),
        ]), "outside the requested range")
    }
}

@Suite("Procedure: discover characteristics")
struct ProcedureDiscoverCharacteristicsTests {
    let service = GATTService(uuid: .heartRateService, startHandle: 0x0001, endHandle: 0x0008)
    let declarations = "09 07 02 00 10 03 00 37 2A 04 00 02 05 00 38 2A"

    @Test("GATT/CL/GAD/BV-04-C: all characteristics: each ends before the next declaration, the last at the service end")
    func all() {
        let result = run(DiscoverCharacteristics(of: service), [
            Exchange("08 01 00 08 00 03 28", declarations),
            Exchange("08 05 00 08 00 03 28", "01 08 05 00 0A"),
        ])
        #expect(result.value == [
            GATTCharacteristic(uuid: .heartRateMeasurement, declarationHandle: 2, valueHandle: 3, properties: [.notify], endHandle: 3),
            GATTCharacteristic(uuid: .bodySensorLocation, declarationHandle: 4, valueHandle: 5, properties: [.read], endHandle: 8),
        ])
    }

    @Test("GATT/CL/GAD/BV-05-C: by UUID: every declaration is walked, only the match returned, its end from the next declaration")
    func byUUID() {
        let result = run(DiscoverCharacteristics(of: service, uuid: .heartRateMeasurement), [
            Exchange("08 01 00 08 00 03 28", "09 07 02 00 10 03 00 37 2A"),
            Exchange("08 03 00 08 00 03 28", "09 07 06 00 02 07 00 38 2A"),
            Exchange("08 07 00 08 00 03 28", "01 08 07 00 0A"),
        ])
        #expect(result.value == [
            GATTCharacteristic(uuid: .heartRateMeasurement, declarationHandle: 2, valueHandle: 3, properties: [.notify], endHandle: 5),
        ])
    }

    @Test("a 128-bit characteristic whose value is the service's last handle ends discovery")
    func longUUIDAtEnd() {
        let finished = run(DiscoverCharacteristics(of: service), [
            Exchange("08 01 00 08 00 03 28", "09 15 07 00 0A 08 00 " + customUUIDHex),
        ])
        #expect(finished.value == [
            GATTCharacteristic(uuid: customUUID, declarationHandle: 7, valueHandle: 8, properties: [.read, .write], endHandle: 8),
        ])
    }

    @Test("hostile: a value handle at or before its declaration, or past the service")
    func badValueHandle() {
        expectInvalid(run(DiscoverCharacteristics(of: service), [
            Exchange("08 01 00 08 00 03 28", "09 07 02 00 10 02 00 37 2A"),
        ]), "has its value at 0x0002")
        expectInvalid(run(DiscoverCharacteristics(of: service), [
            Exchange("08 01 00 08 00 03 28", "09 07 02 00 10 09 00 37 2A"),
        ]), "has its value at 0x0009")
    }

    @Test("hostile: a declaration at the previous characteristic's value handle")
    func declarationInsideValue() {
        expectInvalid(run(DiscoverCharacteristics(of: service), [
            Exchange("08 01 00 08 00 03 28", "09 07 02 00 10 04 00 37 2A 04 00 02 05 00 38 2A"),
        ]), "does not advance past 0x0004")
    }

    @Test("hostile: a declaration of 6 bytes, and a response that repeats the last declaration")
    func badDeclarationAndRepeat() {
        expectInvalid(run(DiscoverCharacteristics(of: service), [
            Exchange("08 01 00 08 00 03 28", "09 08 02 00 10 03 00 37 2A 00"),
        ]), "6 bytes")
        expectInvalid(run(DiscoverCharacteristics(of: service), [
            Exchange("08 01 00 08 00 03 28", declarations),
            Exchange("08 05 00 08 00 03 28", "09 07 04 00 02 05 00 38 2A"),
        ]), "outside the requested range")
    }

    @Test("hostile: an entry length that does not divide the payload never reaches the procedure")
    func entryLengthNotDividing() {
        #expect(throws: WireError.self) { try ATTPDU.decode(bytes("09 07 02 00 10 03 00 37 2A 04 00")) }
    }

    @Test("an error other than Attribute Not Found is reported")
    func otherError() {
        expectATTError(run(DiscoverCharacteristics(of: service), [
            Exchange("08 01 00 08 00 03 28", "01 08 01 00 05"),
        ]), .insufficientAuthentication, request: .readByTypeRequest, handle: 1)
    }
}

@Suite("Procedure: discover descriptors")
struct ProcedureDiscoverDescriptorsTests {
    func characteristic(end: UInt16) -> GATTCharacteristic {
        GATTCharacteristic(uuid: .heartRateMeasurement, declarationHandle: 2, valueHandle: 3, properties: [.notify], endHandle: end)
    }

    @Test("one response reaching the characteristic's end finishes without another request")
    func oneResponse() {
        let result = run(DiscoverDescriptors(of: characteristic(end: 5)), [
            Exchange("04 04 00 05 00", "05 01 04 00 02 29 05 00 01 29"),
        ])
        #expect(result.value == [
            GATTDescriptor(uuid: .clientCharacteristicConfiguration, handle: 4),
            GATTDescriptor(uuid: .characteristicUserDescription, handle: 5),
        ])
    }

    @Test("GATT/CL/GAD/BV-06-C: continues after the last handle; 128-bit descriptors; Attribute Not Found ends")
    func continues() {
        let result = run(DiscoverDescriptors(of: characteristic(end: 8)), [
            Exchange("04 04 00 08 00", "05 01 04 00 02 29"),
            Exchange("04 05 00 08 00", "05 02 06 00 " + customUUIDHex),
            Exchange("04 07 00 08 00", "01 04 07 00 0A"),
        ])
        #expect(result.value == [
            GATTDescriptor(uuid: .clientCharacteristicConfiguration, handle: 4),
            GATTDescriptor(uuid: customUUID, handle: 6),
        ])
    }

    @Test("a characteristic with no descriptor handles finishes at once with none")
    func noHandles() {
        #expect(run(DiscoverDescriptors(of: characteristic(end: 3)), []).value == [])
    }

    @Test("hostile: a handle that does not advance, and one outside the range")
    func hostileHandles() {
        expectInvalid(run(DiscoverDescriptors(of: characteristic(end: 8)), [
            Exchange("04 04 00 08 00", "05 01 04 00 02 29"),
            Exchange("04 05 00 08 00", "05 01 04 00 02 29"),
        ]), "outside the requested range")
        expectInvalid(run(DiscoverDescriptors(of: characteristic(end: 8)), [
            Exchange("04 04 00 08 00", "05 01 09 00 02 29"),
        ]), "outside the requested range")
        expectInvalid(run(DiscoverDescriptors(of: characteristic(end: 8)), [
            Exchange("04 04 00 08 00", "05 01 05 00 02 29 05 00 01 29"),
        ]), "does not advance")
    }

    @Test("hostile: a Find Information Response with an unknown format never reaches the procedure; an unknown PDU is invalid")
    func unknownFormat() {
        #expect(throws: WireError.self) { try ATTPDU.decode(bytes("05 03 04 00 02 29")) }
        expectInvalid(run(DiscoverDescriptors(of: characteristic(end: 8)), [
            Exchange("04 04 00 08 00", "0B 01"),
        ]), "Read Response")
    }
}
