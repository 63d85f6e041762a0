import PropertyBased
import RawbleTestSupport
import RawbleWire
import Testing

private func fails<T: WireDecodable>(_ type: T.Type, _ input: [UInt8]) -> Bool {
    (try? T.decode(input)) == nil
}

@Suite("GATT declarations")
struct GATTDeclarationTests {
    @Test func gattUUIDsHaveTheirAssignedNumbers() {
        let expected: [(BluetoothUUID, String)] = [
            (.primaryService, "2800"), (.secondaryService, "2801"), (.include, "2802"), (.characteristic, "2803"),
            (.characteristicExtendedProperties, "2900"), (.characteristicUserDescription, "2901"),
            (.clientCharacteristicConfiguration, "2902"), (.serverCharacteristicConfiguration, "2903"),
            (.characteristicPresentationFormat, "2904"), (.characteristicAggregateFormat, "2905"),
            (.serviceChanged, "2A05"), (.clientSupportedFeatures, "2B29"), (.databaseHash, "2B2A"),
        ]
        for (uuid, text) in expected {
            #expect(uuid.description == text)
            #expect(GATTUUIDs.name(of: uuid) != nil)
        }
        #expect(GATTUUIDs.name(of: BluetoothUUID(0x2902)) == "Client Characteristic Configuration")
        #expect(GATTUUIDs.name(of: BluetoothUUID(0x180D)) == nil)
    }

    @Test func serviceDeclarationHolds16Or128BitUUIDs() throws {
        let short = try ServiceDeclaration.decode(bytes("0D 18"))
        #expect(short.uuid == BluetoothUUID(0x180D))
        #expect(short.encoded == [0x0D, 0x18])
        let long = bytes("9E CA DC 24 0E E5 A9 E0 93 F3 A3 B5 01 00 40 6E")
        let service = try ServiceDeclaration.decode(long)
        #expect(service.uuid == BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E"))
        #expect(service.encoded == long)
        #expect(fails(ServiceDeclaration.self, []))
        #expect(fails(ServiceDeclaration.self, [0x0D]))
        #expect(fails(ServiceDeclaration.self, [0x0D, 0x18, 0x00]))
        #expect(fails(ServiceDeclaration.self, [0x0D, 0x18, 0x00, 0x00]))
    }

    @Test func includeDeclarationHasAUUIDOnlyWhen16Bit() throws {
        let with = try IncludeDeclaration.decode(bytes("05 00 08 00 0F 18"))
        #expect(with == IncludeDeclaration(includedServiceHandle: 5, endGroupHandle: 8, serviceUUID: BluetoothUUID(0x180F)))
        #expect(with.encoded == (bytes("05 00 08 00 0F 18")))
        let without = try IncludeDeclaration.decode(bytes("05 00 08 00"))
        #expect(without.serviceUUID == nil)
        #expect(without.encoded == (bytes("05 00 08 00")))
        #expect(fails(IncludeDeclaration.self, bytes("05 00 08")))
        #expect(fails(IncludeDeclaration.self, bytes("05 00 08 00 0F")))
        #expect(fails(IncludeDeclaration.self, bytes("05 00 08 00 0F 18 00")))
    }

    @Test func characteristicDeclarationForHeartRateMeasurement() throws {
        let input = bytes("10 03 00 37 2A")
        let declaration = try CharacteristicDeclaration.decode(input)
        #expect(declaration.properties == .notify)
        #expect(declaration.valueHandle == 3)
        #expect(declaration.uuid == BluetoothUUID(0x2A37))
        #expect(declaration.encoded == input)
        let long = bytes("0C 0E 00 9E CA DC 24 0E E5 A9 E0 93 F3 A3 B5 02 00 40 6E")
        let uart = try CharacteristicDeclaration.decode(long)
        #expect(uart.properties == [.writeWithoutResponse, .write])
        #expect(uart.encoded == long)
        #expect(fails(CharacteristicDeclaration.self, bytes("10 03 00 37")))
        #expect(fails(CharacteristicDeclaration.self, bytes("10 03 00 37 2A 00")))
    }

    @Test func characteristicPropertyNames() {
        #expect(CharacteristicProperties(rawValue: 0xFF).names == [
            "broadcast", "read", "writeWithoutResponse", "write", "notify", "indicate",
            "authenticatedSignedWrites", "extendedProperties",
        ])
        #expect(CharacteristicProperties([.read, .notify]).names == ["read", "notify"])
        #expect(CharacteristicProperties([.read, .notify]).description == "read, notify")
        #expect(CharacteristicProperties().names.isEmpty)
        let bits: [CharacteristicProperties] = [
            .broadcast, .read, .writeWithoutResponse, .write, .notify, .indicate, .authenticatedSignedWrites, .extendedProperties,
        ]
        #expect(bits.map(\.rawValue) == [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80])
    }

    @Test func clientCharacteristicConfiguration() throws {
        #expect(try ClientCharacteristicConfiguration.decode([0x01, 0x00]) == .notify)
        #expect(try ClientCharacteristicConfiguration.decode([0x02, 0x00]) == .indicate)
        #expect(try ClientCharacteristicConfiguration.decode([0x00, 0x00]) == [])
        #expect(ClientCharacteristicConfiguration.notify.encoded == [0x01, 0x00])
        #expect(ClientCharacteristicConfiguration([.notify, .indicate]).encoded == [0x03, 0x00])
        // Reserved bits are kept.
        #expect(try ClientCharacteristicConfiguration.decode([0x04, 0x80]).rawValue == 0x8004)
        // One byte is tolerated as BlueZ and Zephyr servers do; 0 or more than 2 are not.
        #expect(try ClientCharacteristicConfiguration.decode([0x01]) == .notify)
        #expect(fails(ClientCharacteristicConfiguration.self, []))
        #expect(fails(ClientCharacteristicConfiguration.self, [0x01, 0x00, 0x00]))
    }

    @Test func extendedPropertiesAndServiceChanged() throws {
        #expect(try CharacteristicExtendedProperties.decode([0x01, 0x00]) == .reliableWrite)
        #expect(try CharacteristicExtendedProperties.decode([0x03, 0x00]) == [.reliableWrite, .writableAuxiliaries])
        #expect(fails(CharacteristicExtendedProperties.self, [0x01]))
        #expect(fails(CharacteristicExtendedProperties.self, [0x01, 0x00, 0x00]))
        let changed = try ServiceChanged.decode(bytes("01 00 FF FF"))
        #expect(changed == ServiceChanged(startHandle: 1, endHandle: 0xFFFF))
        #expect(changed.handles == 1...0xFFFF)
        #expect(ServiceChanged(startHandle: 9, endHandle: 2).handles == nil)
        #expect(changed.encoded == (bytes("01 00 FF FF")))
        #expect(fails(ServiceChanged.self, bytes("01 00 FF")))
        #expect(fails(ServiceChanged.self, bytes("01 00 FF FF 00")))
    }

    @Test func declarationsRoundTrip() async {
        await propertyCheck(count: 300, input: Gen.uint8(), Gen.uint16(), Gen.uint16(), Gen.uint64(), Gen.uint64()) { properties, a, b, high, low in
            let uuids = [BluetoothUUID(a), BluetoothUUID(high: high, low: low)]
            for uuid in uuids {
                let service = ServiceDeclaration(uuid: uuid)
                #expect((try? ServiceDeclaration.decode(service.encoded)) == service)
                let characteristic = CharacteristicDeclaration(
                    properties: CharacteristicProperties(rawValue: properties), valueHandle: b, uuid: uuid)
                #expect((try? CharacteristicDeclaration.decode(characteristic.encoded)) == characteristic)
            }
            let include = IncludeDeclaration(includedServiceHandle: a, endGroupHandle: b, serviceUUID: BluetoothUUID(b))
            #expect((try? IncludeDeclaration.decode(include.encoded)) == include)
            let cccd = ClientCharacteristicConfiguration(rawValue: a)
            #expect((try? ClientCharacteristicConfiguration.decode(cccd.encoded)) == cccd)
            let extended = CharacteristicExtendedProperties(rawValue: b)
            #expect((try? CharacteristicExtendedProperties.decode(extended.encoded)) == extended)
            let changed = ServiceChanged(startHandle: a, endHandle: b)
            #expect((try? ServiceChanged.decode(changed.encoded)) == changed)
        }
    }

    @Test func decodingRandomBytesNeverTraps() async {
        await propertyCheck(count: 2000, input: Gen.uint8().array(of: 0...20)) { input in
            if let value = try? ServiceDeclaration.decode(input) { #expect((try? ServiceDeclaration.decode(value.encoded)) == value) }
            if let value = try? IncludeDeclaration.decode(input) { #expect((try? IncludeDeclaration.decode(value.encoded)) == value) }
            if let value = try? CharacteristicDeclaration.decode(input) { #expect((try? CharacteristicDeclaration.decode(value.encoded)) == value) }
            if let value = try? ClientCharacteristicConfiguration.decode(input) {
                #expect((try? ClientCharacteristicConfiguration.decode(value.encoded)) == value)
            }
            if let value = try? CharacteristicExtendedProperties.decode(input) { #expect(value.encoded == input) }
            if let value = try? ServiceChanged.decode(input) { #expect(value.encoded == input) }
        }
    }
}
