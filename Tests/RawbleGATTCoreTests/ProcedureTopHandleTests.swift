// Procedures at the top of the handle space: services and declarations at 0xFFFF, ranges that
// start there, ranges that end before they start. Handle arithmetic on a server's values must
// end in a result or a typed error, never in an overflow trap (issue 9).
import RawbleGATTCore
import RawbleWire
import Testing

@Suite("Procedure: handles at 0xFFFF")
struct ProcedureTopHandleTests {
    /// The last service of a database: it ends at the last handle.
    let topService = GATTService(uuid: .heartRateService, startHandle: 0xFFF0, endHandle: 0xFFFF)

    @Test("a characteristic declaration at 0xFFFF (no room for its value) is an invalid response, not a trap")
    func characteristicDeclarationAtLastHandle() {
        // The crash of issue 9: value handle 0x0000 after a declaration at 0xFFFF.
        expectInvalid(run(DiscoverCharacteristics(of: topService), [
            Exchange("08 F0 FF FF FF 03 28", "09 07 FF FF 10 00 00 37 2A"),
        ]), "characteristic declaration 0xFFFF")
        // The same with the value handle claimed at 0xFFFF, and after a valid declaration.
        expectInvalid(run(DiscoverCharacteristics(of: topService), [
            Exchange("08 F0 FF FF FF 03 28", "09 07 FF FF 10 FF FF 37 2A"),
        ]), "has its value at 0xFFFF")
        expectInvalid(run(DiscoverCharacteristics(of: topService), [
            Exchange("08 F0 FF FF FF 03 28", "09 07 F1 FF 02 F2 FF 38 2A FF FF 10 00 00 37 2A"),
        ]), "characteristic declaration 0xFFFF")
    }

    @Test("fuzz finding: a declaration at 0xFFFF with its value at 0x0000 (regressions/FuzzGATTProcedures/characteristic-declaration-at-ffff)")
    func fuzzFindingDeclarationAtLastHandle() {
        // The regression input: selector 0x12 (characteristics, at the top), then this answer.
        let service = GATTService(uuid: BluetoothUUID(0x180D), startHandle: 0xFFF0, endHandle: 0xFFFF)
        expectInvalid(run(DiscoverCharacteristics(of: service), [
            Exchange("08 F0 FF FF FF 03 28", "09 07 FF FF 10 00 00 37 2A"),
        ]), "has its value at 0x0000")
    }

    // MARK: Services

    @Test("a one-handle service at 0xFFFF ends the service walk, in the first response or a later one")
    func serviceAtLastHandle() {
        let hrs = GATTService(uuid: .heartRateService, startHandle: 0xFFFF, endHandle: 0xFFFF)
        #expect(run(DiscoverPrimaryServices(), [
            Exchange("10 01 00 FF FF 00 28", "11 06 01 00 05 00 00 18 FF FF FF FF 0D 18"),
        ]).value == [GATTService(uuid: BluetoothUUID(0x1800), startHandle: 1, endHandle: 5), hrs])
        #expect(run(DiscoverPrimaryServices(), [
            Exchange("10 01 00 FF FF 00 28", "11 06 01 00 05 00 00 18"),
            Exchange("10 06 00 FF FF 00 28", "11 06 FF FF FF FF 0D 18"),
        ]).value == [GATTService(uuid: BluetoothUUID(0x1800), startHandle: 1, endHandle: 5), hrs])
        #expect(run(DiscoverPrimaryServicesByUUID(.heartRateService), [
            Exchange("06 01 00 FF FF 00 28 0D 18", "07 FF FF FF FF"),
        ]).value == [hrs])
    }

    @Test("a range that starts at 0xFFFF is one handle: asked once, Attribute Not Found gives nothing")
    func rangeStartingAtLastHandle() {
        #expect(run(DiscoverPrimaryServices(range: 0xFFFF...0xFFFF), [
            Exchange("10 FF FF FF FF 00 28", "01 10 FF FF 0A"),
        ]).value == [])
        #expect(run(DiscoverPrimaryServices(range: 0xFFFF...0xFFFF), [
            Exchange("10 FF FF FF FF 00 28", "11 06 FF FF FF FF 0D 18"),
        ]).value == [GATTService(uuid: .heartRateService, startHandle: 0xFFFF, endHandle: 0xFFFF)])
        #expect(run(DiscoverPrimaryServicesByUUID(.heartRateService, range: 0xFFFF...0xFFFF), [
            Exchange("06 FF FF FF FF 00 28 0D 18", "01 06 FF FF 0A"),
        ]).value == [])
        #expect(run(ReadUsingCharacteristicUUID(BluetoothUUID(0x2A19), range: 0xFFFF...0xFFFF), [
            Exchange("08 FF FF FF FF 19 2A", "09 03 FF FF 64"),
        ]).value == [GATTHandleValue(handle: 0xFFFF, value: [0x64])])
    }

    @Test("hostile: a group that ends before it starts at the top, and an entry after a group ending at 0xFFFF")
    func endBeforeStartAtTop() {
        expectInvalid(run(DiscoverPrimaryServices(), [
            Exchange("10 01 00 FF FF 00 28", "11 06 FF FF FE FF 00 18"),
        ]), "service at 0xFFFF ends before it starts (0xFFFE)")
        expectInvalid(run(DiscoverPrimaryServicesByUUID(.heartRateService), [
            Exchange("06 01 00 FF FF 00 28 0D 18", "07 FF FF 00 00"),
        ]), "service at 0xFFFF ends before it starts (0x0000)")
        expectInvalid(run(DiscoverPrimaryServices(), [
            Exchange("10 01 00 FF FF 00 28", "11 06 F0 FF FF FF 00 18 FF FF FF FF 01 18"),
        ]), "does not advance past 0xFFFF")
        expectInvalid(run(DiscoverPrimaryServicesByUUID(.heartRateService), [
            Exchange("06 01 00 FF FF 00 28 0D 18", "07 F0 FF FF FF FF FF FF FF"),
        ]), "does not advance past 0xFFFF")
    }

    // MARK: Characteristics and descriptors

    @Test("a characteristic whose value is 0xFFFF ends the walk; it has no descriptor handles")
    func characteristicValueAtLastHandle() {
        let last = GATTCharacteristic(uuid: .bodySensorLocation, declarationHandle: 0xFFFE, valueHandle: 0xFFFF,
                                      properties: [.read], endHandle: 0xFFFF)
        #expect(run(DiscoverCharacteristics(of: topService), [
            Exchange("08 F0 FF FF FF 03 28", "09 07 FE FF 02 FF FF 38 2A"),
        ]).value == [last])
        let result = run(DiscoverCharacteristics(of: topService), [
            Exchange("08 F0 FF FF FF 03 28", "09 07 F1 FF 10 F2 FF 37 2A"),
            Exchange("08 F2 FF FF FF 03 28", "09 07 FE FF 02 FF FF 38 2A"),
        ])
        #expect(result.value == [
            GATTCharacteristic(uuid: .heartRateMeasurement, declarationHandle: 0xFFF1, valueHandle: 0xFFF2,
                               properties: [.notify], endHandle: 0xFFFD),
            last,
        ])
        #expect(last.descriptorHandles == nil)
        #expect(run(DiscoverDescriptors(of: last), []).value == [])
    }

    @Test("the last characteristic of the last service ends at 0xFFFF; its descriptors are walked to there")
    func lastCharacteristicEndsAtLastHandle() {
        let result = run(DiscoverCharacteristics(of: topService), [
            Exchange("08 F0 FF FF FF 03 28", "09 07 F1 FF 10 F2 FF 37 2A"),
            Exchange("08 F2 FF FF FF 03 28", "01 08 F2 FF 0A"),
        ])
        let characteristic = GATTCharacteristic(uuid: .heartRateMeasurement, declarationHandle: 0xFFF1, valueHandle: 0xFFF2,
                                                properties: [.notify], endHandle: 0xFFFF)
        #expect(result.value == [characteristic])
        #expect(characteristic.descriptorHandles == 0xFFF3...0xFFFF)
        // A descriptor at 0xFFFF ends the walk without another request.
        #expect(run(DiscoverDescriptors(of: characteristic), [
            Exchange("04 F3 FF FF FF", "05 01 F3 FF 02 29"),
            Exchange("04 F4 FF FF FF", "05 01 FF FF 01 29"),
        ]).value == [
            GATTDescriptor(uuid: .clientCharacteristicConfiguration, handle: 0xFFF3),
            GATTDescriptor(uuid: .characteristicUserDescription, handle: 0xFFFF),
        ])
        // One descriptor handle, at 0xFFFF.
        let oneBelow = GATTCharacteristic(uuid: .heartRateMeasurement, declarationHandle: 0xFFFD, valueHandle: 0xFFFE,
                                          properties: [.notify], endHandle: 0xFFFF)
        #expect(run(DiscoverDescriptors(of: oneBelow), [
            Exchange("04 FF FF FF FF", "05 01 FF FF 02 29"),
        ]).value == [GATTDescriptor(uuid: .clientCharacteristicConfiguration, handle: 0xFFFF)])
    }

    @Test("a one-handle service at 0xFFFF: its characteristic walk is one request")
    func characteristicsOfOneHandleService() {
        let service = GATTService(uuid: .heartRateService, startHandle: 0xFFFF, endHandle: 0xFFFF)
        #expect(run(DiscoverCharacteristics(of: service), [
            Exchange("08 FF FF FF FF 03 28", "01 08 FF FF 0A"),
        ]).value == [])
        #expect(run(FindIncludedServices(of: service), [
            Exchange("08 FF FF FF FF 02 28", "01 08 FF FF 0A"),
        ]).value == [])
    }

    @Test("a service or characteristic whose end is before its start has nothing to walk")
    func invertedAtTop() {
        let inverted = GATTService(uuid: .heartRateService, startHandle: 0xFFFF, endHandle: 0x0001)
        #expect(run(DiscoverCharacteristics(of: inverted), []).value == [])
        #expect(run(FindIncludedServices(of: inverted), []).value == [])
        let characteristic = GATTCharacteristic(uuid: .heartRateMeasurement, declarationHandle: 0xFFFE, valueHandle: 0xFFFF,
                                                properties: [.notify], endHandle: 0x0001)
        #expect(characteristic.descriptorHandles == nil)
        #expect(run(DiscoverDescriptors(of: characteristic), []).value == [])
    }

    // MARK: Included services

    @Test("an include declaration at 0xFFFF ends the walk; an included service may end at 0xFFFF")
    func includesAtTop() {
        #expect(run(FindIncludedServices(of: topService), [
            Exchange("08 F0 FF FF FF 02 28", "09 08 FF FF 00 01 10 01 0F 18"),
        ]).value == [
            GATTIncludedService(declarationHandle: 0xFFFF, startHandle: 0x0100, endHandle: 0x0110, uuid: BluetoothUUID(0x180F)),
        ])
        #expect(run(FindIncludedServices(of: topService), [
            Exchange("08 F0 FF FF FF 02 28", "09 06 F1 FF F8 FF FF FF"),
            Exchange("0A F8 FF", "0B " + customUUIDHex),
            Exchange("08 F2 FF FF FF 02 28", "01 08 F2 FF 0A"),
        ]).value == [
            GATTIncludedService(declarationHandle: 0xFFF1, startHandle: 0xFFF8, endHandle: 0xFFFF, uuid: customUUID),
        ])
        expectInvalid(run(FindIncludedServices(of: topService), [
            Exchange("08 F0 FF FF FF 02 28", "09 06 F1 FF FF FF F8 FF"),
        ]), "invalid range 0xFFFF–0xFFF8")
    }
}
