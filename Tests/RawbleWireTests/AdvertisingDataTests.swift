import PropertyBased
import RawbleTestSupport
import RawbleWire
import Testing

private let heartRate = BluetoothUUID(0x180D)
private let nordicUART = BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")!

@Suite("Advertising Data: real-looking adverts")
struct AdvertisingDataVectorTests {
    @Test func heartRateStrapAdvertisementAndScanResponse() throws {
        // ADV_IND: flags 06, complete 16-bit list [180D], manufacturer data from Polar (0x006B).
        let adv = AdvertisingData(decoding: bytes("020106 03030D18 07FF6B00720897 01"))
        #expect(adv.error == nil)
        #expect(adv.flags == [.leGeneralDiscoverable, .brEdrNotSupported])
        #expect(adv.serviceUUIDs == [heartRate])
        #expect(adv.serviceUUIDs.first?.name == "Heart Rate")
        #expect(adv.manufacturerData == [ManufacturerData(companyID: 0x006B, data: [0x72, 0x08, 0x97, 0x01])])
        #expect(adv.manufacturerData.first?.companyName == "Polar Electro OY")
        #expect(adv.localName == nil)
        #expect(adv.structures.count == 3)

        // SCAN_RSP: complete local name "Polar H10 12345678" (18 bytes, length 0x13).
        let rsp = AdvertisingData(decoding: bytes("13 09") + Array("Polar H10 12345678".utf8))
        #expect(rsp.error == nil)
        #expect(rsp.localName == "Polar H10 12345678")
        #expect(rsp.name?.isComplete == true)
        #expect(rsp.structures == [.localName(LocalName("Polar H10 12345678"))])
    }

    @Test func iBeaconIsManufacturerDataFromApple() throws {
        let proximity = bytes("E2C56DB5DFFB48D2B060D0F5A71096E0")
        let payload = bytes("020106 1AFF4C00 0215") + proximity + bytes("0001 0002 C5")
        let ad = AdvertisingData(decoding: payload)
        #expect(ad.error == nil)
        #expect(ad.bytes.count == 30)
        let apple = try #require(ad.manufacturerData.first)
        #expect(apple.companyID == 0x004C)
        #expect(apple.companyName == "Apple, Inc.")
        #expect(Array(apple.data.prefix(2)) == [0x02, 0x15])                 // iBeacon type, length
        #expect(Array(apple.data.dropFirst(2).prefix(16)) == proximity)
        #expect(apple.data.last == 0xC5)                                       // measured power -59 dBm
        #expect(ad.encoded == payload)
    }

    @Test func nordicUART128BitServiceList() throws {
        let ad = AdvertisingData(decoding: bytes("020106 1107 9ECADC240EE5A9E093F3A3B50100406E"))
        #expect(ad.error == nil)
        #expect(ad.serviceUUIDs == [nordicUART])
        #expect(ad.serviceUUIDs.first?.name == "Nordic UART Service")
        guard case let .serviceUUIDs(list, isComplete)? = ad.structures.last else {
            Issue.record("expected a UUID list"); return
        }
        #expect(list.width == 16)
        #expect(isComplete)
        #expect(ad.structures.last?.type == .completeServiceUUIDs128)
    }

    @Test func eddystoneURLIsServiceDataForFEAA() throws {
        // Complete 16-bit list [FEAA]; service data FEAA: frame 0x10, tx -21, "https://" google ".com".
        let payload = bytes("0303AAFE 0D16AAFE 10EB03 676F6F676C65 07")
        let ad = AdvertisingData(decoding: payload)
        #expect(ad.error == nil)
        #expect(ad.serviceUUIDs == [BluetoothUUID(0xFEAA)])
        #expect(ad.serviceUUIDs.first?.name == "Google LLC")
        let data = try #require(ad.serviceData(for: BluetoothUUID(0xFEAA)))
        #expect(Array(data) == bytes("10EB03676F6F676C6507"))
        #expect(ad.serviceData.first?.width == 2)
        #expect(ad.structures.last?.type == .serviceData16)
        #expect(ad.encoded == payload)
    }

    @Test func uriStructureWithHTTPSScheme() throws {
        let payload = bytes("0F24 17") + Array("//example.com".utf8)
        let ad = AdvertisingData(decoding: payload)
        #expect(ad.error == nil)
        let uri = try #require(ad.uri)
        #expect(uri.schemeCodePoint == 0x17)
        #expect(uri.scheme == "https:")
        #expect(uri.string == "https://example.com")
        #expect(URI("https://example.com") == uri)
        #expect(ad.encoded == payload)
    }

    @Test func uriSchemeAboveU007FIsTwoUTF8Bytes() throws {
        // "bluetooth:" is code point U+00BB, sent as C2 BB.
        let uri = URI("bluetooth:00:11:22")
        #expect(Array(uri.bytes.prefix(2)) == [0xC2, 0xBB])
        #expect(uri.scheme == "bluetooth:")
        #expect(uri.string == "bluetooth:00:11:22")
        // Unassigned scheme: code 0x01 (empty scheme) then the whole text.
        let custom = URI("myapp://x")
        #expect(custom.bytes.first == 0x01)
        #expect(custom.string == "myapp://x")
        // Unknown code point: no scheme, the remainder still readable.
        let unknown = URI(bytes: bytes("C2BD 6162")[...])   // U+00BD: not assigned
        #expect(unknown.scheme == nil)
        #expect(unknown.string == nil)
        #expect(unknown.remainder == "ab")
    }
}

@Suite("Advertising Data: damaged input")
struct AdvertisingDataErrorTests {
    @Test func zeroLengthStructureMidPayloadStopsAndKeepsEarlierOnes() throws {
        let ad = AdvertisingData(decoding: bytes("020106 00 03030D18"))
        #expect(ad.structures == [.flags(.generalDiscoverableLEOnly)])
        let error = try #require(ad.error)
        #expect(error.offset == 3)
        #expect(ad.encoded == bytes("020106"))
    }

    @Test func structureRunningPastTheEndStopsWithTruncatedError() throws {
        let ad = AdvertisingData(decoding: bytes("020106 03030D18 0509414243"))
        #expect(ad.structures.count == 2)
        #expect(ad.serviceUUIDs == [heartRate])
        let error = try #require(ad.error)
        #expect(error.offset == 7)
        #expect(error.kind == .truncated(needed: 5, available: 4))
        #expect(error.context == "Advertising Data")
    }

    @Test func errorOffsetsAreIndicesOfTheSlicesBuffer() throws {
        // AD inside a larger buffer (an HCI event): offsets count from the event's start.
        let event = bytes("3E 1A 02 01 00 00 112233445566") + bytes("020106 00 FF")
        let ad = AdvertisingData(decoding: event[12...])
        #expect(ad.structures == [.flags(.generalDiscoverableLEOnly)])
        #expect(ad.error?.offset == 15)
    }

    @Test func trailingZeroPaddingIsTheEndOfDataNotAnError() {
        let significant = bytes("020106 03030D18")
        let padded = significant + [UInt8](repeating: 0, count: 31 - significant.count)
        let ad = AdvertisingData(decoding: padded)
        #expect(ad.error == nil)
        #expect(ad.structures.count == 2)
        #expect(ad.encoded == significant)
        #expect(AdvertisingData(decoding: [UInt8](repeating: 0, count: 31)).structures.isEmpty)
        #expect(AdvertisingData(decoding: [UInt8](repeating: 0, count: 31)).error == nil)
    }

    @Test func emptyDataIsEmptyAndValid() {
        let ad = AdvertisingData(decoding: [])
        #expect(ad.structures.isEmpty)
        #expect(ad.error == nil)
    }

    @Test func oddLengthUUIDListIsKeptRawWithErrorAndDecodingGoesOn() throws {
        let payload = bytes("020106 04030D180F 0509414243 44")
        let ad = AdvertisingData(decoding: payload)
        #expect(ad.structures == [
            .flags(.generalDiscoverableLEOnly),
            .other(type: .completeServiceUUIDs16, data: bytes("0D180F")[...]),
            .localName(LocalName("ABCD")),
        ])
        let error = try #require(ad.error)
        #expect(error.offset == 3)
        #expect(error.kind == .invalidLength(3))
        #expect(error.context == "AD Complete List of 16-bit Service UUIDs")
        #expect(ad.serviceUUIDs.isEmpty)
        #expect(ad.localName == "ABCD")
        #expect(ad.encoded == payload)
    }

    @Test(arguments: [
        ("03 0A 0102", ADType.txPowerLevel),                 // Tx Power of 2 bytes
        ("04 19 010203", ADType.appearance),                 // Appearance of 3 bytes
        ("06 04 0D180000 00", ADType.incompleteServiceUUIDs32), // 32-bit list of 5 bytes
        ("02 16 0D", ADType.serviceData16),                  // Service data shorter than its UUID
        ("02 FF 4C", ADType.manufacturerSpecificData),       // Company id cut short
        ("04 12 06000C", ADType.peripheralConnectionIntervalRange),
        ("07 1B 112233445566", ADType.leDeviceAddress),      // address without its type byte
        ("03 1C 0000", ADType.leRole),
        ("02 2F 01", ADType.advertisingIntervalLong),
        ("06 17 1122334455", ADType.publicTargetAddress),
    ])
    func knownTypeWithWrongSizeIsKeptRawWithAnError(vector: String, type: ADType) throws {
        let payload = bytes(vector)
        let ad = AdvertisingData(decoding: payload)
        #expect(ad.structures == [.other(type: type, data: payload[2...])])
        #expect(ad.error?.offset == 0)
        #expect(ad.encoded == payload)
        #expect(throws: WireError.self) { try ADStructure.decode(payload) }
        #expect(throws: WireError.self) { try AdvertisingData.decode(payload) }
    }

    @Test func flagsLongerThanOneByteAreKeptRawWithoutError() {
        // The Flags type may grow; only the 1-byte form is typed, the first byte still counts.
        let ad = AdvertisingData(decoding: bytes("03 01 0600"))
        #expect(ad.error == nil)
        #expect(ad.structures == [.other(type: .flags, data: bytes("0600")[...])])
        #expect(ad.flags == .generalDiscoverableLEOnly)
    }

    @Test func invalidUTF8NameKeepsBytesAndGivesLossyString() throws {
        let ad = AdvertisingData(decoding: bytes("05 09 41FF4243"))
        let name = try #require(ad.name)
        #expect(Array(name.bytes) == bytes("41FF4243"))
        #expect(!name.isValidUTF8)
        #expect(name.string == "A\u{FFFD}BC")
        #expect(LocalName("Zoë").isValidUTF8)
    }

    @Test func strictStructureDecodingRejectsBadFraming() {
        #expect(throws: WireError.self) { try ADStructure.decode(bytes("00")) }
        #expect(throws: WireError.self) { try ADStructure.decode(bytes("020106 00")) }  // trailing byte
        #expect(throws: WireError.self) { try ADStructure.decode(bytes("030106")) }     // short
        #expect(throws: WireError.self) { try ADStructure.decode([]) }
        #expect(throws: WireError.self) { try AdvertisingData.decode(bytes("020106 00 01")) }
        #expect((try? AdvertisingData.decode(bytes("020106 0000"))) == AdvertisingData(decoding: bytes("020106")))
    }
}

@Suite("Advertising Data: typed structures")
struct AdvertisingDataStructureTests {
    @Test func unknownTypesAreKeptAndReEncodedExactly() {
        let payload = bytes("05 42 01020304 04 0D 040208 01 33")
        let ad = AdvertisingData(decoding: payload)
        #expect(ad.error == nil)
        #expect(ad.structures == [
            .other(type: ADType(0x42), data: bytes("01020304")[...]),
            .other(type: .classOfDevice, data: bytes("040208")[...]),
            .other(type: ADType(0x33), data: []),
        ])
        #expect(ad.encoded == payload)
        #expect(AdvertisingData(ad.structures).encoded == payload)
    }

    @Test func everyTypedStructureDecodesAndReEncodes() throws {
        let cases: [(String, ADStructure)] = [
            ("020106", .flags([.leGeneralDiscoverable, .brEdrNotSupported])),
            ("05020F180A18", .serviceUUIDs(UUIDList([BluetoothUUID(0x180F), BluetoothUUID(0x180A)], width: 2)!, isComplete: false)),
            ("05050D180000", .serviceUUIDs(UUIDList([heartRate], width: 4)!, isComplete: true)),
            ("0408414243", .localName(LocalName("ABC", isComplete: false))),
            ("020AF8", .txPowerLevel(-8)),
            ("0512 0600 0C00", .peripheralConnectionIntervalRange(ConnectionIntervalRange(minimum: 6, maximum: 12))),
            ("0314 0D18", .solicitedServiceUUIDs(UUIDList([heartRate], width: 2)!)),
            ("051F 0D180000", .solicitedServiceUUIDs(UUIDList([heartRate], width: 4)!)),
            ("1115 9ECADC240EE5A9E093F3A3B50100406E", .solicitedServiceUUIDs(UUIDList([nordicUART], width: 16)!)),
            ("0720 0D180000 6162", .serviceData(ServiceData(uuid: heartRate, data: [0x61, 0x62], width: 4)!)),
            ("1221 9ECADC240EE5A9E093F3A3B50100406E 01", .serviceData(ServiceData(uuid: nordicUART, data: [0x01])!)),
            ("0717 665544332211", .publicTargetAddresses(AddressList([BluetoothAddress(0x1122_3344_5566)]))),
            ("0D18 665544332211 060504030201", .randomTargetAddresses(AddressList([BluetoothAddress(0x1122_3344_5566), BluetoothAddress(0x0102_0304_0506)]))),
            ("031941 03", .appearance(.heartRateBelt)),
            ("031A 2000", .advertisingInterval(AdvertisingInterval(0x20))),
            ("042F 000001", .advertisingInterval(AdvertisingInterval(0x01_0000))),
            ("081B 665544332211 01", .leDeviceAddress(LEDeviceAddress(BluetoothAddress(0x1122_3344_5566), type: .random))),
            ("021C 02", .leRole(.peripheralPreferred)),
            ("0524 16616263", .uri(URI("http:abc"))),
            ("04FF 5900 AA", .manufacturerData(ManufacturerData(companyID: 0x0059, data: [0xAA]))),
        ]
        for (hex, expected) in cases {
            let wire = bytes(hex)
            let decoded = try ADStructure.decode(wire)
            #expect(decoded == expected, "\(hex)")
            #expect(expected.encoded == wire, "\(hex)")
            #expect(decoded.type.rawValue == wire[1], "\(hex)")
            #expect(!decoded.description.isEmpty)
        }
    }

    @Test func typedValuesReadTheirFields() throws {
        let range = ConnectionIntervalRange(minimum: 6, maximum: 0xFFFF)
        #expect(range.minimumMilliseconds == 7.5)
        #expect(range.maximumMilliseconds == nil)
        #expect(AdvertisingInterval(160).milliseconds == 100)
        #expect(AdvertisingInterval(0x1_0000).width == 3)
        #expect(AdvertisingInterval(0x100_0000).width == 4)
        #expect(LEDeviceAddress(address: BluetoothAddress(1), flags: 0x01).type == .random)
        #expect(LEDeviceAddress(address: BluetoothAddress(1), flags: 0xFE).type == .public)
        #expect(LERole(rawValue: 0).name == "Only Peripheral Role supported")
        #expect(LERole(rawValue: 9).name.hasPrefix("Reserved"))
        #expect(ADFlags(rawValue: 0x06).description == "LE General Discoverable, BR/EDR Not Supported")
        #expect(ADFlags(rawValue: 0x80).names == ["bit 7"])
        #expect(UUIDList([nordicUART], width: 2) == nil)
        #expect(UUIDList([heartRate], width: 3) == nil)
        #expect(ServiceData(uuid: nordicUART, data: [], width: 4) == nil)
        let addresses = AddressList([BluetoothAddress(0xAABB_CCDD_EEFF), BluetoothAddress(0x1122_3344_5566)])
        #expect(Array(addresses) == [BluetoothAddress(0xAABB_CCDD_EEFF), BluetoothAddress(0x1122_3344_5566)])
    }

    @Test func localNamePrefersCompleteOverShortened() {
        let ad = AdvertisingData(decoding: bytes("0408 506F6C 0A09 506F6C6172204831 30"))
        #expect(ad.localName == "Polar H10")
        let shortOnly = AdvertisingData(decoding: bytes("0408 506F6C"))
        #expect(shortOnly.localName == "Pol")
        #expect(shortOnly.name?.isComplete == false)
    }

    @Test func serviceUUIDsMergesAllListsInOrder() {
        let ad = AdvertisingData(decoding:
            bytes("03020F18 0505 78563412 1106 9ECADC240EE5A9E093F3A3B50100406E 03030D18"))
        #expect(ad.error == nil)
        #expect(ad.serviceUUIDs == [BluetoothUUID(0x180F), BluetoothUUID(uuid32: 0x1234_5678), nordicUART, heartRate])
    }

    @Test func builderWritesFlagsServicesNameAndManufacturerData() {
        let ad = AdvertisingData(
            serviceUUIDs: [heartRate, nordicUART, BluetoothUUID(0x180F)],
            localName: "HRM",
            manufacturerData: ManufacturerData(companyID: 0x0059, data: [0x01, 0x02]))
        let expected = bytes("020106 05030D180F18 1107 9ECADC240EE5A9E093F3A3B50100406E 0409 48524D 05FF 5900 0102")
        #expect(ad.encoded == expected)
        #expect(!ad.fitsLegacyAdvertising)          // 39 bytes: needs extended advertising
        let small = AdvertisingData(serviceUUIDs: [heartRate], localName: "HRM", txPowerLevel: 4)
        #expect(small.encoded == bytes("020106 03030D18 0409 48524D 020A04"))
        #expect(small.fitsLegacyAdvertising)
        #expect(AdvertisingData(flags: nil).encoded.isEmpty)
    }

    @Test func rawDataLookupFindsFirstStructureOfAType() {
        let ad = AdvertisingData(decoding: bytes("020106 03FF4C00 03FF5900"))
        #expect(ad.data(for: .manufacturerSpecificData).map(Array.init) == [0x4C, 0x00])
        #expect(ad.data(for: .uri) == nil)
        #expect(ad.manufacturerData.map(\.companyID) == [0x004C, 0x0059])
    }

    @Test func adTypeNamesCoverTheAssignedList() {
        let assigned: [UInt8] = Array(0x01...0x0A) + [0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12]
            + Array(0x14...0x32) + [0x34, 0x3D, 0xFF]
        for code in assigned { #expect(ADType(code).name != nil, "0x\(code)") }
        for code: UInt8 in [0x00, 0x0B, 0x0C, 0x13, 0x33, 0x3C, 0x80, 0xFE] { #expect(ADType(code).name == nil) }
        #expect(ADType.completeLocalName.name == "Complete Local Name")
        #expect(ADType(0x09).description == "Complete Local Name (0x09)")
        #expect(ADType(0x13).description == "AD type 0x13")
    }

    @Test func descriptionPrintsOneLinePerStructure() {
        let ad = AdvertisingData(decoding: bytes("020106 03030D18 0509414243"))
        #expect(ad.description == """
            Flags: LE General Discoverable, BR/EDR Not Supported
            Complete List of 16-bit Service UUIDs: 180D Heart Rate
            error: Advertising Data: truncated: needs 5 bytes, 4 left at byte 7
            """)
    }
}

// MARK: - Properties

/// Builds a valid structure of one of the typed kinds (or a raw unknown type) from random bytes.
private func makeStructure(kind: Int, seed: [UInt8]) -> ADStructure {
    func take(_ n: Int) -> [UInt8] { Array((seed + [UInt8](repeating: 0x5A, count: n)).prefix(n)) }
    func u16(_ i: Int) -> UInt16 { let b = take(i + 2); return UInt16(b[i]) | UInt16(b[i + 1]) << 8 }
    let width = [2, 4, 16][Int(take(1)[0]) % 3]
    let uuids = stride(from: 0, to: seed.count - seed.count % width, by: width).map { i -> BluetoothUUID in
        let b = Array(seed[i..<(i + width)])
        switch width {
        case 2: return BluetoothUUID(UInt16(b[0]) | UInt16(b[1]) << 8)
        case 4: return BluetoothUUID(uuid32: b.reversed().reduce(0) { $0 << 8 | UInt32($1) })
        default: return BluetoothUUID(high: b[8...].reversed().reduce(0) { $0 << 8 | UInt64($1) },
                                      low: b[..<8].reversed().reduce(0) { $0 << 8 | UInt64($1) })
        }
    }
    switch kind {
    case 0: return .flags(ADFlags(rawValue: take(1)[0]))
    case 1: return .serviceUUIDs(UUIDList(uuids, width: width)!, isComplete: seed.count % 2 == 0)
    case 2: return .localName(LocalName(bytes: seed[...], isComplete: seed.first.map { $0 & 1 == 0 } ?? true))
    case 3: return .txPowerLevel(Int8(bitPattern: take(1)[0]))
    case 4: return .peripheralConnectionIntervalRange(ConnectionIntervalRange(minimum: u16(0), maximum: u16(2)))
    case 5: return .solicitedServiceUUIDs(UUIDList(uuids, width: width)!)
    case 6:
        let uuid = uuids.first ?? BluetoothUUID(0x180D)
        return .serviceData(ServiceData(uuid: uuid, data: seed.dropFirst(width), width: width) ?? ServiceData(uuid: uuid, data: [])!)
    case 7:
        let list = AddressList(stride(from: 0, to: seed.count - seed.count % 6, by: 6).map { i in
            BluetoothAddress(littleEndianBytes: seed[i..<(i + 6)])!
        })
        return seed.count % 2 == 0 ? .publicTargetAddresses(list) : .randomTargetAddresses(list)
    case 8: return .appearance(Appearance(u16(0)))
    case 9:
        let raw = take(4)
        let value = UInt32(raw[0]) | UInt32(raw[1]) << 8 | UInt32(raw[2]) << 16 | UInt32(raw[3]) << 24
        return .advertisingInterval(AdvertisingInterval(value >> (8 * UInt32(seed.count % 4))))
    case 10: return .leDeviceAddress(LEDeviceAddress(address: BluetoothAddress(littleEndianBytes: take(6))!, flags: take(7)[6]))
    case 11: return .leRole(LERole(rawValue: take(1)[0]))
    case 12: return .uri(URI(bytes: seed[...]))
    case 13: return .manufacturerData(ManufacturerData(companyID: u16(0), data: seed.dropFirst(2)))
    default:
        // Unknown, unassigned types are always raw.
        let unassigned: [UInt8] = [0x00, 0x0B, 0x0C, 0x13, 0x33, 0x40, 0x80, 0xFE]
        return .other(type: ADType(unassigned[Int(take(1)[0]) % unassigned.count]), data: seed[...])
    }
}

private let structureGen = zip(Gen.int(in: 0...14), Gen.uint8().array(of: 0...40))
    .map { kind, seed in makeStructure(kind: kind, seed: seed) }

@Suite("Advertising Data: properties")
struct AdvertisingDataPropertyTests {
    @Test func structureListsRoundTrip() async {
        await propertyCheck(count: 500, input: structureGen.array(of: 0...8)) { structures in
            let ad = AdvertisingData(structures)
            #expect(ad.error == nil)
            #expect(ad.structures == structures)
            let again = AdvertisingData(decoding: ad.encoded)
            #expect(again == ad)
            for s in structures { #expect((try? ADStructure.decode(s.encoded)) == s) }
        }
    }

    @Test func trailingZeroPaddingNeverChangesTheResult() async {
        await propertyCheck(count: 200, input: structureGen.array(of: 0...4), Gen.int(in: 1...40)) { structures, pad in
            let ad = AdvertisingData(structures)
            let padded = AdvertisingData(decoding: ad.encoded + [UInt8](repeating: 0, count: pad))
            #expect(padded == ad)
        }
    }

    @Test func decodingRandomBytesNeverTrapsAndKeepsItsPromises() async {
        await propertyCheck(count: 3000, input: Gen.uint8().array(of: 0...80)) { input in
            let ad = AdvertisingData(decoding: input)
            // The kept bytes are a prefix of the input, and they re-encode exactly.
            #expect(Array(input.prefix(ad.bytes.count)) == Array(ad.bytes))
            #expect(AdvertisingData(ad.structures).encoded == Array(ad.bytes))
            // Anything dropped without an error is zero padding.
            if ad.error == nil { #expect(input.dropFirst(ad.bytes.count).allSatisfy { $0 == 0 }) }
            // Decoding what was kept finds the same structures, and no framing error.
            let again = AdvertisingData(decoding: ad.encoded)
            #expect(again.structures == ad.structures)
            _ = ad.description
            _ = (ad.localName, ad.serviceUUIDs, ad.manufacturerData, ad.serviceData, ad.uri?.string)
        }
    }

    @Test func decodingRandomSlicesNeverTraps() async {
        await propertyCheck(count: 1000, input: Gen.uint8().array(of: 0...60), Gen.int(in: 0...10)) { input, drop in
            let slice = input.dropFirst(drop)
            let ad = AdvertisingData(decoding: slice)
            if let error = ad.error { #expect(error.offset >= slice.startIndex && error.offset < input.count) }
            _ = try? ADStructure.decode(slice)
        }
    }
}
