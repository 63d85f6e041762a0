import PropertyBased
import RawbleTestSupport
import RawbleWire
import Testing

/// The registry's readable text for `hex` as a value of `uuid` (16-bit), or its outcome when not decoded.
private func text(_ uuid: UInt16, _ hex: String) -> String {
    ReadableValues.describe(bytes(hex), of: BluetoothUUID(uuid)).text
}

private func fields(_ uuid: UInt16, _ hex: String) -> [String: ValueField] {
    var out: [String: ValueField] = [:]
    for member in ReadableValues.describe(bytes(hex), of: BluetoothUUID(uuid)).fields ?? [] { out[member.name] = member.value }
    return out
}

private func error(_ uuid: UInt16, _ hex: String) -> WireError? {
    ReadableValues.describe(bytes(hex), of: BluetoothUUID(uuid)).error
}

/// Every UUID the registry knows, for the hostile-input properties.
private let registered: [UInt16] = [
    0x2A00, 0x2A01, 0x2A05, 0x2A08, 0x2A19, 0x2A1C, 0x2A23, 0x2A24, 0x2A25, 0x2A26, 0x2A27, 0x2A28, 0x2A29, 0x2A37, 0x2A38,
    0x2A50, 0x2A53, 0x2A5B, 0x2900, 0x2901, 0x2902, 0x2904,
]

@Suite("Readable values: the registry of characteristic and descriptor formats")
struct ReadableValuesTests {
    @Test func batteryLevelIsAPercentUpTo100() {
        #expect(text(0x2A19, "57") == "87 %")
        #expect(fields(0x2A19, "57")["percent"] == .unsigned(87))
        #expect(text(0x2A19, "64") == "100 %")
        // Above 100 is reserved: not decoded, the hex kept, the error says why and where.
        let above = ReadableValues.describe([101], of: .batteryLevel)
        #expect(above.text == "65")
        #expect(above.error?.description == "Battery Level: 101 % is above 100 % (reserved) at byte 0")
        #expect(error(0x2A19, "")?.kind == .truncated(needed: 1, available: 0))
        #expect(error(0x2A19, "5700")?.kind == .trailingBytes(count: 1))
    }

    @Test func bodySensorLocationNamesAndReservedCodes() {
        #expect(text(0x2A38, "01") == "chest")
        #expect(text(0x2A38, "05") == "ear-lobe")
        #expect(fields(0x2A38, "01") == ["location": .text("chest"), "code": .unsigned(1)])
        #expect(text(0x2A38, "09") == "9 (reserved)")
        #expect(fields(0x2A38, "09")["location"] == .null)
        #expect(error(0x2A38, "0101") != nil)
    }

    @Test func appearanceNamesFromAssignedNumbers() {
        #expect(text(0x2A01, "4103") == "Heart Rate Sensor: Heart Rate Belt (0x0341)")
        #expect(text(0x2A01, "4003") == "Heart Rate Sensor (0x0340)")
        #expect(fields(0x2A01, "4103")["subcategory"] == .text("Heart Rate Belt"))
        #expect(fields(0x2A01, "4103")["code"] == .unsigned(0x0341))
        #expect(error(0x2A01, "41") != nil)
    }

    @Test func stringsAreQuotedTextWithControlCharactersEscaped() {
        for uuid: UInt16 in [0x2A00, 0x2A24, 0x2A25, 0x2A26, 0x2A27, 0x2A28, 0x2A29, 0x2901] {
            let value = ReadableValues.describe(Array("rawble-sim".utf8), of: BluetoothUUID(uuid))
            #expect(value.text == "\"rawble-sim\"", "\(uuid)")
            #expect(value.isText)
            #expect(value.fields == [ValueField.Member("text", .text("rawble-sim"))])
        }
        // Trailing NULs (firmware padding) are not text; an escape sequence cannot reach the terminal.
        #expect(text(0x2A29, "41420000") == "\"AB\"")
        #expect(text(0x2A00, "1b5b324a41") == "\"\\u{1B}[2JA\"")
        #expect(text(0x2A00, "") == "\"\"")
        #expect(text(0x2A00, "c3a9") == "\"é\"")
        // Not UTF-8: the first bad byte is named.
        #expect(error(0x2A00, "4142ff43")?.offset == 2)
        #expect(error(0x2A00, "41c3")?.offset == 1)
        #expect(text(0x2A00, "4142ff43") == "4142ff43")
    }

    @Test func pnpIDNamesTheVendor() throws {
        #expect(text(0x2A50, "01 5900 3412 1001") == "vendor 0x0059 Nordic Semiconductor ASA (Bluetooth SIG), product 0x1234, version 1.1.0")
        #expect(text(0x2A50, "02 6B1D 0100 0002") == "vendor 0x1D6B (USB-IF), product 0x0001, version 2.0.0")
        let f = fields(0x2A50, "01 5900 3412 1001")
        #expect(f["vendorId"] == .unsigned(0x59))
        #expect(f["vendorName"] == .text("Nordic Semiconductor ASA"))
        #expect(f["productId"] == .unsigned(0x1234))
        #expect(f["productVersion"] == .unsigned(0x0110))
        #expect(error(0x2A50, "01 5900 3412 10") != nil)
        let id = try PnPID.decode(bytes("01 5900 3412 1001"))
        #expect(id.encoded == bytes("01 5900 3412 1001"))
    }

    @Test func systemIDSplitsIdentifierAndOUI() throws {
        #expect(text(0x2A23, "0100000000 C9A000") == "manufacturer 0x0000000001, OUI 00:A0:C9")
        let id = try SystemID.decode(bytes("0102030405 060708"))
        #expect(id.manufacturerIdentifier == 0x05_0403_0201)
        #expect(id.organizationallyUniqueIdentifier == 0x08_0706)
        #expect(id.encoded == bytes("0102030405 060708"))
        #expect(error(0x2A23, "01020304050607") != nil)
    }

    @Test func heartRateMeasurementReusesTheDecoder() {
        #expect(text(0x2A37, "10480004") == "72 bpm, contact unsupported, RR 1000.0 ms")
        #expect(text(0x2A37, "1e6d0800310234023702") == "109 bpm, contact detected, energy 8 kJ, RR 547.9 ms 550.8 ms 553.7 ms")
        #expect(fields(0x2A37, "065a")["bpm"] == .unsigned(90))
        #expect(fields(0x2A37, "10480004")["rrIntervals"] == .list([.number(1.0)]))
        #expect(error(0x2A37, "10") != nil)
    }

    @Test func temperatureMeasurementInCelsiusAndFahrenheitWithTimeAndType() {
        // 365 × 10⁻¹ °C.
        #expect(text(0x2A1C, "00 6D0100FF") == "36.5 °C")
        #expect(fields(0x2A1C, "00 6D0100FF")["temperature"] == .number(36.5))
        #expect(fields(0x2A1C, "00 6D0100FF")["unit"] == .text("celsius"))
        // °F, time stamp 2024-01-31 08:05:09, type 1 armpit.
        let full = "07 DC0300FF E807 01 1F 08 05 09 01"
        #expect(text(0x2A1C, full) == "98.8 °F, 2024-01-31 08:05:09, armpit")
        #expect(fields(0x2A1C, full)["time"] == .text("2024-01-31T08:05:09"))
        #expect(fields(0x2A1C, full)["type"] == .text("armpit"))
        // NaN, NRes, infinities: said as such, no number in the fields.
        #expect(text(0x2A1C, "00 FFFF7F00") == "NaN °C")
        #expect(fields(0x2A1C, "00 FFFF7F00")["temperature"] == .null)
        #expect(text(0x2A1C, "00 00008000") == "NRes °C")
        #expect(text(0x2A1C, "00 FEFF7F00") == "+INF °C")
        #expect(text(0x2A1C, "00 02008000") == "-INF °C")
        // A time stamp the flags announce and the value lacks; a month 13.
        #expect(error(0x2A1C, "02 6D0100FF E807") != nil)
        #expect(error(0x2A1C, "02 6D0100FF E807 0D 01 00 00 00")?.offset == 7)
    }

    @Test func dateTimeIsTheDevicesLocalTime() {
        #expect(text(0x2A08, "E807 01 1F 08 05 09") == "2024-01-31 08:05:09")
        #expect(fields(0x2A08, "E807 01 1F 08 05 09")["time"] == .text("2024-01-31T08:05:09"))
        // Unknown year, month and day are zeros; an hour 24 is out of range.
        #expect(text(0x2A08, "0000 00 00 17 3B 3B") == "0000-00-00 23:59:59")
        #expect(error(0x2A08, "E807 01 1F 18 05 09")?.offset == 4)
        #expect(error(0x2A08, "E807 01 1F 08 05") != nil)
    }

    @Test func cscMeasurementWheelAndCrank() {
        #expect(text(0x2A5B, "03 B0040000 000C 2C01 000A") ==
            "wheel 1200 revolutions (last at 3.000 s), crank 300 revolutions (last at 2.500 s)")
        #expect(text(0x2A5B, "02 2C01 000A") == "crank 300 revolutions (last at 2.500 s)")
        #expect(text(0x2A5B, "00") == "no data")
        let f = fields(0x2A5B, "01 B0040000 000C")
        #expect(f["wheelRevolutions"] == .unsigned(1200))
        #expect(f["lastWheelEventSeconds"] == .number(3))
        #expect(f["crankRevolutions"] == .null)
        #expect(error(0x2A5B, "03 B0040000 000C 2C01") != nil)
    }

    @Test func rscMeasurementSpeedCadenceStrideDistance() {
        // Running, 3 m/s (768/256), 170 steps/min, stride 105 cm, 12345 dm.
        #expect(text(0x2A53, "07 0003 AA 6900 39300000") == "running 3.000 m/s, 170 steps/min, stride 1.05 m, total 1234.5 m")
        #expect(text(0x2A53, "00 8001 50") == "walking 1.500 m/s, 80 steps/min")
        let f = fields(0x2A53, "07 0003 AA 6900 39300000")
        #expect(f["speedMetresPerSecond"] == .number(3))
        #expect(f["strideLengthMetres"] == .number(1.05))
        #expect(f["totalDistanceMetres"] == .number(1234.5))
        #expect(f["running"] == .bool(true))
        #expect(error(0x2A53, "01 0003 AA") != nil)
    }

    @Test func serviceChangedIsAHandleRange() {
        #expect(text(0x2A05, "0100FFFF") == "handles 0x0001–0xFFFF")
        #expect(fields(0x2A05, "0100FFFF")["start"] == .text("0x0001"))
        #expect(error(0x2A05, "0500 0100")?.description.contains("below the start") == true)
    }

    @Test func descriptors() {
        #expect(text(0x2902, "0100") == "notifications")
        #expect(text(0x2902, "0300") == "notifications, indications")
        #expect(text(0x2902, "0000") == "off")
        #expect(text(0x2902, "0400") == "reserved 0x0004")
        #expect(fields(0x2902, "0200")["indications"] == .bool(true))
        #expect(text(0x2900, "0100") == "reliable write")
        #expect(text(0x2900, "0000") == "none")
        #expect(text(0x2901, "6C6162207772697465") == "\"lab write\"")
        // uint8, exponent 0, percentage, Bluetooth SIG, main.
        #expect(text(0x2904, "04 00 AD27 01 0601") == "uint8, percentage (27AD), exponent 0, Bluetooth SIG description main (0x0106)")
        #expect(text(0x2904, "0E FE 2F27 01 0300") ==
            "sint16, Celsius temperature (degree Celsius) (272F), exponent -2, Bluetooth SIG description 3rd (0x0003)")
        let f = fields(0x2904, "04 00 AD27 01 0000")
        #expect(f["formatName"] == .text("uint8"))
        #expect(f["unit"] == .text("27AD"))
        #expect(f["unitName"] == .text("percentage"))
        #expect(f["descriptionName"] == .text("unknown"))
        #expect(error(0x2904, "04 00 AD27 01 00") != nil)
    }

    @Test func unknownUUIDsAreHex() {
        let value = ReadableValues.describe([0xBE, 0xEF], of: BluetoothUUID(0x2A6E))
        #expect(value.outcome == .unknown)
        #expect(value.text == "beef")
        #expect(!value.isKnownFormat)
        #expect(ReadableValues.describe([], of: BluetoothUUID("72617762-6C65-4C61-6200-000000000002")!).text == "(empty)")
        #expect(!ReadableValues.knows(BluetoothUUID(0x2A6E)))
        #expect(ReadableValues.knows(.batteryLevel))
    }

    @Test("a value with a Presentation Format: its exponent and unit applied")
    func presentationFormatApplied() {
        let percent = PresentationFormat(format: 0x04, exponent: 0, unit: 0x27AD, namespace: 1, description: 0)
        #expect(ReadableValues.describe([87], presentedAs: percent).text == "87 %")
        let celsius = PresentationFormat(format: 0x0E, exponent: -2, unit: 0x272F, namespace: 1, description: 0)
        #expect(ReadableValues.describe(bytes("F6F8"), presentedAs: celsius).text == "-18.02 °C")
        let name = PresentationFormat(format: 0x19, exponent: 0, unit: 0x2700, namespace: 1, description: 0)
        #expect(ReadableValues.describe(Array("hi".utf8), presentedAs: name).text == "\"hi\"")
        // The wrong width for the format: not decoded.
        #expect(ReadableValues.describe([1, 2], presentedAs: percent).error != nil)
        // A struct format is not one rawble reads: hex.
        let structure = PresentationFormat(format: 0x1B, exponent: 0, unit: 0x2700, namespace: 1, description: 0)
        #expect(ReadableValues.describe([1, 2], presentedAs: structure).outcome == .unknown)
    }

    @Test("every registered format: random bytes never trap, and what decodes has text and fields")
    func randomBytesNeverTrap() async {
        await propertyCheck(count: 4000, input: Gen.int(in: 0..<registered.count), Gen.uint8().array(of: 0...24)) { index, input in
            let value = ReadableValues.describe(input, of: BluetoothUUID(registered[index]))
            #expect(value.bytes == input)
            switch value.outcome {
            case .decoded(let text, let fields):
                #expect(!text.isEmpty || value.isText)
                #expect(!fields.isEmpty)
            case .malformed(let error):
                #expect(error.offset >= 0 && error.offset <= input.count)
                #expect(value.text == (input.isEmpty ? "(empty)" : Hex.encode(input)))
            case .unknown:
                Issue.record("registered UUID \(registered[index]) reported unknown")
            }
        }
    }

    @Test("every truncation of a valid value is malformed, never a trap")
    func truncations() {
        let valid: [(UInt16, String)] = [
            (0x2A19, "57"), (0x2A38, "01"), (0x2A01, "4103"), (0x2A50, "0159003412 1001"), (0x2A23, "0100000000C9A000"),
            (0x2A37, "1e6d08000004"), (0x2A1C, "07DC0300FFE807011F08050901"), (0x2A5B, "03B0040000000C2C01000A"),
            (0x2A53, "070003AA690039300000"), (0x2A05, "0100FFFF"), (0x2900, "0100"), (0x2904, "0400AD27010601"),
        ]
        for (uuid, hex) in valid {
            let whole = bytes(hex)
            #expect(ReadableValues.describe(whole, of: BluetoothUUID(uuid)).fields != nil, "\(hex)")
            for cut in 0..<whole.count {
                let value = ReadableValues.describe(Array(whole.prefix(cut)), of: BluetoothUUID(uuid))
                #expect(value.error != nil, "\(uuid) cut at \(cut)")
            }
            #expect(ReadableValues.describe(whole + [0], of: BluetoothUUID(uuid)).error != nil, "\(uuid) with a trailing byte")
        }
    }

    @Test("decoders that re-encode give back the bytes they decoded")
    func roundTrips() async {
        await propertyCheck(count: 1500, input: Gen.uint8().array(of: 0...20)) { input in
            if let v = try? TemperatureMeasurement.decode(input) { #expect(v.encoded == input) }
            if let v = try? CSCMeasurement.decode(input) { #expect(v.encoded == input) }
            if let v = try? RSCMeasurement.decode(input) { #expect(v.encoded == input) }
            if let v = try? PnPID.decode(input) { #expect(v.encoded == input) }
            if let v = try? SystemID.decode(input) { #expect(v.encoded == input) }
            if let v = try? PresentationFormat.decode(input) { #expect(v.encoded == input) }
            if let v = try? ServiceChanged.decode(input) { #expect(v.encoded == input) }
            // A CCCD of one byte is accepted (as BlueZ and Zephyr do) and re-encoded as two.
            if let v = try? ClientCharacteristicConfiguration.decode(input), input.count == 2 { #expect(v.encoded == input) }
            if let v = try? CharacteristicExtendedProperties.decode(input) { #expect(v.encoded == input) }
            if let v = try? BatteryLevel.decode(input) { #expect(v.encoded == input) }
            if let v = try? Appearance.decode(input) { #expect(v.encoded == input) }
        }
    }
}

@Suite("IEEE-11073 FLOAT and SFLOAT")
struct MedicalFloatTests {
    @Test func decimalsAreExact() {
        #expect(MedicalFloat(float32Bits: 0xFF00_016D).description == "36.5")
        #expect(MedicalFloat(float32Bits: 0xFF00_016D).doubleValue == 36.5)
        #expect(MedicalFloat(float32Bits: 0x0200_000C).description == "1200")
        #expect(MedicalFloat(float32Bits: 0xFEFF_FFFF).description == "-0.01")
        #expect(MedicalFloat(float32Bits: 0x7F00_0001).description == "1e127")
        #expect(MedicalFloat(float32Bits: 0x8000_0001).description == "1e-128")
        #expect(MedicalFloat(sfloatBits: 0xF16D).description == "36.5")
        #expect(MedicalFloat(sfloatBits: 0xFFFF).description == "-0.1")
        #expect(MedicalFloat(sfloatBits: 0x07FF).description == "NaN")
        #expect(MedicalFloat(sfloatBits: 0x0800).description == "NRes")
        #expect(MedicalFloat(sfloatBits: 0x07FE).doubleValue == .infinity)
        #expect(MedicalFloat(sfloatBits: 0x0802).doubleValue == -.infinity)
        #expect(MedicalFloat(sfloatBits: 0x0801).description == "reserved")
    }

    @Test func parsingDecimals() {
        #expect(MedicalFloat(decimal: "36.5")?.float32Bits == 0xFF00_016D)
        #expect(MedicalFloat(decimal: "36.5")?.sfloatBits == 0xF16D)
        #expect(MedicalFloat(decimal: "-0.01")?.float32Bits == 0xFEFF_FFFF)
        #expect(MedicalFloat(decimal: "1200")?.float32Bits == 0x0200_000C)
        #expect(MedicalFloat(decimal: "NaN")?.sfloatBits == 0x07FF)
        #expect(MedicalFloat(decimal: "-inf")?.float32Bits == 0x0080_0002)
        #expect(MedicalFloat(decimal: "12345")?.sfloatBits == nil)  // 5 significant digits
        #expect(MedicalFloat(decimal: "1.2.3") == nil)
        #expect(MedicalFloat(decimal: "") == nil)
        #expect(MedicalFloat(decimal: "abc") == nil)
        #expect(MedicalFloat(decimal: "123456789012") == nil)
        // Fields built by hand that no pattern holds: nil, never a trap.
        #expect(MedicalFloat(mantissa: .min, exponent: 0).float32Bits == nil)
        #expect(MedicalFloat(mantissa: .min, exponent: 0).sfloatBits == nil)
        #expect(MedicalFloat(mantissa: 5, exponent: 8).sfloatBits == nil)
    }

    @Test("every FLOAT and SFLOAT pattern decodes and encodes back to itself")
    func bitsRoundTrip() async {
        await propertyCheck(count: 3000, input: Gen.uint32()) { bits in
            #expect(MedicalFloat(float32Bits: bits).float32Bits == bits)
            let short = UInt16(truncatingIfNeeded: bits)
            #expect(MedicalFloat(sfloatBits: short).sfloatBits == short)
        }
        // The edges: the most negative mantissa with a non-zero exponent is a number.
        #expect(MedicalFloat(float32Bits: 0x0180_0000).description == "-83886080")
        #expect(MedicalFloat(float32Bits: 0x0180_0000).float32Bits == 0x0180_0000)
    }

    @Test("FLOAT and SFLOAT: bits → text → bits is the identity for every number")
    func textRoundTrip() async {
        await propertyCheck(count: 2000, input: Gen.uint32()) { bits in
            let value = MedicalFloat(float32Bits: bits)
            guard value.special == nil, value.exponent >= -12, value.exponent <= 6 else { return }
            let parsed = MedicalFloat(decimal: value.description)
            #expect(parsed?.doubleValue == value.doubleValue, "\(value)")
        }
        await propertyCheck(count: 2000, input: Gen.uint16()) { bits in
            let value = MedicalFloat(sfloatBits: bits)
            #expect(!value.description.isEmpty)
            if value.special == nil, value.exponent <= 6 {
                #expect(MedicalFloat(decimal: value.description)?.doubleValue == value.doubleValue, "\(value)")
            }
        }
    }
}

@Suite("--as types: ValueFormat")
struct ValueFormatTests {
    @Test func namesAndAliases() {
        #expect(ValueFormat(name: "u8") == .u8)
        #expect(ValueFormat(name: "UINT16") == .u16)
        #expect(ValueFormat(name: "sint16") == .s16)
        #expect(ValueFormat(name: "float") == .f32)
        #expect(ValueFormat(name: "sfloat") == .medfloat16)
        #expect(ValueFormat(name: "utf8s") == .utf8)
        #expect(ValueFormat(name: "u7") == nil)
    }

    @Test func encodingTextLittleEndian() {
        #expect(ValueFormat.u8.encode("1") == [1])
        #expect(ValueFormat.u8.encode("255") == [255])
        #expect(ValueFormat.u8.encode("256") == nil)
        #expect(ValueFormat.u8.encode("-1") == nil)
        #expect(ValueFormat.u16.encode("513") == [1, 2])
        #expect(ValueFormat.u16.encode("0x0201") == [1, 2])
        #expect(ValueFormat.u24.encode("16777215") == [0xFF, 0xFF, 0xFF])
        #expect(ValueFormat.u32.encode("4294967296") == nil)
        #expect(ValueFormat.u64.encode("18446744073709551615") == Array(repeating: 0xFF, count: 8))
        #expect(ValueFormat.s8.encode("-128") == [0x80])
        #expect(ValueFormat.s8.encode("128") == nil)
        #expect(ValueFormat.s16.encode("-2") == [0xFE, 0xFF])
        #expect(ValueFormat.s64.encode("-9223372036854775808") == [0, 0, 0, 0, 0, 0, 0, 0x80])
        #expect(ValueFormat.f32.encode("1.5") == [0, 0, 0xC0, 0x3F])
        #expect(ValueFormat.f64.encode("1") == [0, 0, 0, 0, 0, 0, 0xF0, 0x3F])
        #expect(ValueFormat.medfloat16.encode("36.5") == [0x6D, 0xF1])
        #expect(ValueFormat.utf8.encode("hé") == [0x68, 0xC3, 0xA9])
        #expect(ValueFormat.hex.encode("beef") == [0xBE, 0xEF])
        #expect(ValueFormat.hex.encode("xyz") == nil)
        #expect(ValueFormat.u8.encode("one") == nil)
        #expect(ValueFormat.u8.accepts == "an integer from 0 to 255 (or 0x hex)")
        #expect(ValueFormat.s16.accepts == "an integer from -32768 to 32767")
    }

    @Test func decodingExactWidths() {
        #expect(ReadableValues.describe([1, 2], as: .u16).text == "513")
        #expect(ReadableValues.describe([0xFE, 0xFF], as: .s16).text == "-2")
        #expect(ReadableValues.describe([0xFF, 0xFF, 0xFF], as: .s24).text == "-1")
        #expect(ReadableValues.describe([0, 0, 0xC0, 0x3F], as: .f32).text == "1.5")
        #expect(ReadableValues.describe([0x6D, 0xF1], as: .medfloat16).text == "36.5")
        #expect(ReadableValues.describe(Array("hi\n".utf8), as: .utf8).text == "hi\\n")
        #expect(ReadableValues.describe([0xBE, 0xEF], as: .hex).text == "beef")
        #expect(ReadableValues.describe([1, 2], as: .u16).fields == [.init("type", .text("u16")), .init("value", .unsigned(513))])
        // The wrong width is malformed, the hex kept.
        let wrong = ReadableValues.describe([1, 2, 3], as: .u16)
        #expect(wrong.error?.description == "u16: 1 unexpected trailing byte at byte 2")
        #expect(ReadableValues.describe([1], as: .u16).error?.kind == .truncated(needed: 2, available: 1))
        #expect(wrong.text == "010203")
    }

    @Test("every integer type: text → bytes → value is the identity")
    func integerRoundTrips() async {
        await propertyCheck(count: 1000, input: Gen.uint64()) { raw in
            for format in [ValueFormat.u8, .u16, .u24, .u32, .u64] {
                let bits = 8 * (format.width ?? 8)
                let value = bits == 64 ? raw : raw & ((1 << UInt64(bits)) - 1)
                let encoded = format.encode(String(value))
                #expect(encoded?.count == format.width)
                #expect(encoded.map { ReadableValues.describe($0, as: format).text } == String(value))
            }
            for format in [ValueFormat.s8, .s16, .s24, .s32, .s64] {
                let bits = 8 * (format.width ?? 8)
                let shift = Int64(64 - bits)
                let value = (Int64(bitPattern: raw) << shift) >> shift
                let encoded = format.encode(String(value))
                #expect(encoded.map { ReadableValues.describe($0, as: format).text } == String(value))
            }
        }
    }

    @Test("random bytes as every type never trap")
    func randomBytes() async {
        await propertyCheck(count: 1000, input: Gen.uint8().array(of: 0...10)) { input in
            for format in ValueFormat.allCases {
                let value = ReadableValues.describe(input, as: format)
                if let width = format.width {
                    #expect((value.error == nil) == (input.count == width))
                }
            }
        }
    }
}
