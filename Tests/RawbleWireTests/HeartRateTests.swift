import PropertyBased
import RawbleTestSupport
import RawbleWire
import Testing

private func decodeError(_ text: String) -> WireError? {
    do {
        _ = try HeartRateMeasurement.decode(bytes(text))
        return nil
    } catch {
        return error
    }
}

@Suite("Heart Rate Measurement")
struct HeartRateMeasurementTests {
    @Test func u8RateWithContactDetected() throws {
        let m = try HeartRateMeasurement.decode(bytes("06 5A"))
        #expect(m.bpm == 90)
        #expect(m.contact == .detected)
        #expect(m.energyExpended == nil)
        #expect(m.rrIntervals.isEmpty)
        #expect(!m.flags.contains(.heartRateIsUInt16))
    }

    @Test func contactStatesFromBits2And1() throws {
        #expect(try HeartRateMeasurement.decode(bytes("00 5A")).contact == .unsupported)
        // Bit 1 alone means nothing without bit 2 ("supported").
        #expect(try HeartRateMeasurement.decode(bytes("02 5A")).contact == .unsupported)
        #expect(try HeartRateMeasurement.decode(bytes("04 5A")).contact == .notDetected)
        #expect(try HeartRateMeasurement.decode(bytes("06 5A")).contact == .detected)
        #expect(HeartRateMeasurement.SensorContact.notDetected.name == "not-detected")
        #expect(HeartRateMeasurement.SensorContact.unsupported.name == "unsupported")
        #expect(HeartRateMeasurement.SensorContact.detected.name == "detected")
    }

    @Test func oneRRIntervalOf1024UnitsIsOneSecond() throws {
        let m = try HeartRateMeasurement.decode(bytes("10 48 00 04"))
        #expect(m.bpm == 72)
        #expect(m.contact == .unsupported)
        #expect(m.rrIntervals.count == 1)
        #expect(m.rrIntervals.first?.rawValue == 1024)
        #expect(m.rrIntervals.first?.seconds == 1.0)
        #expect(m.rrIntervals.first?.milliseconds == 1000.0)
    }

    @Test func allFieldsPresent() throws {
        // flags 0x1E: u8 rate, contact supported + detected, Energy Expended, RR-Intervals.
        let m = try HeartRateMeasurement.decode(bytes("1e 6d 08 00 31 02 34 02 37 02"))
        #expect(m.flags.rawValue == 0x1E)
        #expect(m.bpm == 0x6D)
        #expect(m.contact == .detected)
        #expect(m.energyExpended == 8)
        #expect(m.rrIntervals.map(\.rawValue) == [0x231, 0x234, 0x237])
        let seconds: [Double] = [561.0 / 1024, 564.0 / 1024, 567.0 / 1024]
        #expect(m.rrIntervals.map(\.seconds) == seconds)
        #expect(m.rrIntervals[2].milliseconds == 567.0 * 1000 / 1024)
        #expect(m.encoded == bytes("1e 6d 08 00 31 02 34 02 37 02"))
    }

    @Test func u16HeartRateFormat() throws {
        let m = try HeartRateMeasurement.decode(bytes("01 2C 01"))
        #expect(m.bpm == 300)
        #expect(m.flags.contains(.heartRateIsUInt16))
        // A small rate in u16 format is valid and re-encodes in u16 format.
        let small = try HeartRateMeasurement.decode(bytes("01 48 00"))
        #expect(small.bpm == 72)
        #expect(small.encoded == bytes("01 48 00"))
    }

    @Test func u16RateWithEnergyAndRR() throws {
        let m = try HeartRateMeasurement.decode(bytes("19 2C 01 FF FF 00 02 00 03"))
        #expect(m.bpm == 300)
        #expect(m.energyExpended == 0xFFFF)
        #expect(m.rrIntervals.map(\.rawValue) == [512, 768])
        #expect(m.rrIntervals.map(\.seconds) == [0.5, 0.75])
    }

    @Test func reservedFlagBitsAreIgnoredButKept() throws {
        let m = try HeartRateMeasurement.decode(bytes("E6 5A"))
        #expect(m.bpm == 90)
        #expect(m.contact == .detected)
        #expect(m.flags.rawValue == 0xE6)
        #expect(m.encoded == bytes("E6 5A"))
    }

    @Test func emptyValueIsAnError() {
        let error = decodeError("")
        #expect(error?.kind == .truncated(needed: 1, available: 0))
        #expect(error?.offset == 0)
        #expect(error?.context.contains("flags") == true)
    }

    @Test func missingHeartRateIsAnError() {
        let u8 = decodeError("06")
        #expect(u8?.offset == 1)
        #expect(u8?.context.contains("heart rate") == true)
        let u16 = decodeError("01 2C")
        #expect(u16?.kind == .truncated(needed: 2, available: 1))
        #expect(u16?.offset == 1)
        #expect(u16?.context.contains("u16") == true)
    }

    @Test func missingEnergyExpendedIsAnError() {
        let error = decodeError("08 5A 01")
        #expect(error?.kind == .truncated(needed: 2, available: 1))
        #expect(error?.offset == 2)
        #expect(error?.context.contains("Energy Expended") == true)
        #expect(decodeError("08 5A")?.offset == 2)
    }

    @Test func rrFlagWithoutAnyIntervalIsAnError() {
        let error = decodeError("10 5A")
        #expect(error?.kind == .truncated(needed: 2, available: 0))
        #expect(error?.offset == 2)
        #expect(error?.context.contains("RR-Interval") == true)
        #expect(decodeError("18 5A 00 00")?.offset == 4)
    }

    @Test func oddTrailingByteInRRFieldIsAnError() {
        let error = decodeError("10 5A 00 04 01")
        #expect(error?.kind == .truncated(needed: 2, available: 1))
        #expect(error?.offset == 4)
        #expect(error?.context.contains("RR-Interval") == true)
        #expect(decodeError("10 5A 01")?.offset == 2)
    }

    @Test func bytesAfterTheLastAnnouncedFieldAreAnError() {
        let error = decodeError("06 5A 00")
        #expect(error?.kind == .trailingBytes(count: 1))
        #expect(error?.offset == 2)
        #expect(decodeError("08 5A 01 00 00 04")?.kind == .trailingBytes(count: 2))
    }

    @Test func errorOffsetsAreThoseOfTheEnclosingBuffer() throws {
        let packet = bytes("AA BB CC 08 5A 01")
        let error = decodeError("08 5A 01")
        #expect(error != nil)
        do {
            _ = try HeartRateMeasurement.decode(packet[3...])
            Issue.record("expected an error")
        } catch {
            #expect(error.offset == 5)
        }
        let m = try HeartRateMeasurement.decode(bytes("00 00 10 48 00 04")[2...])
        #expect(m.rrIntervals.first?.rawValue == 1024)
    }

    @Test func encoderBuildsTheSmallestValue() {
        #expect(HeartRateMeasurement(bpm: 90, contact: .detected).encoded == bytes("06 5A"))
        #expect(HeartRateMeasurement(bpm: 90).encoded == bytes("00 5A"))
        #expect(HeartRateMeasurement(bpm: 90, contact: .notDetected).encoded == bytes("04 5A"))
        #expect(HeartRateMeasurement(bpm: 255).encoded == bytes("00 FF"))
        #expect(HeartRateMeasurement(bpm: 256).encoded == bytes("01 00 01"))
        #expect(
            HeartRateMeasurement(bpm: 72, rrIntervals: [RRInterval(rawValue: 1024)]).encoded == bytes("10 48 00 04"))
        #expect(
            HeartRateMeasurement(
                bpm: 109, contact: .detected, energyExpended: 8,
                rrIntervals: [0x231, 0x234, 0x237].map(RRInterval.init(rawValue:))
            ).encoded == bytes("1e 6d 08 00 31 02 34 02 37 02"))
        #expect(HeartRateMeasurement(bpm: 60, energyExpended: 0x1234).encoded == bytes("08 3C 34 12"))
    }

    @Test func readableDescription() throws {
        #expect(try HeartRateMeasurement.decode(bytes("06 5A")).description == "90 bpm, contact detected")
        #expect(try HeartRateMeasurement.decode(bytes("00 5A")).description == "90 bpm")
        #expect(
            try HeartRateMeasurement.decode(bytes("1c 6d 08 00 31 02 00 04")).description
                == "109 bpm, contact not detected, 8 kJ, RR 0.548 1.000 s")
    }

    @Test func rrIntervalFromSeconds() {
        #expect(RRInterval(seconds: 1).rawValue == 1024)
        #expect(RRInterval(seconds: 0.5).rawValue == 512)
        #expect(RRInterval(seconds: 0.8).rawValue == 819)  // 819.2 rounds down
        #expect(RRInterval(seconds: -1).rawValue == 0)
        #expect(RRInterval(seconds: .nan).rawValue == 0)
        #expect(RRInterval(seconds: 1000).rawValue == 65535)
    }

    @Test func roundTripOfRandomMeasurements() async {
        await propertyCheck(
            input: Gen.uint16(), Gen<HeartRateMeasurement.SensorContact>.case, Gen.uint16().optional,
            Gen.uint16().array(of: 0...40)
        ) { bpm, contact, energy, rr in
            let m = HeartRateMeasurement(
                bpm: bpm, contact: contact, energyExpended: energy, rrIntervals: rr.map(RRInterval.init(rawValue:)))
            let encoded = m.encoded
            let rateLength = bpm > 255 ? 2 : 1
            let energyLength = energy == nil ? 0 : 2
            #expect(encoded.count == 1 + rateLength + energyLength + 2 * rr.count)
            let decoded = try? HeartRateMeasurement.decode(encoded)
            #expect(decoded == m)
            #expect(decoded?.bpm == bpm)
            #expect(decoded?.contact == contact)
            #expect(decoded?.energyExpended == energy)
            #expect(decoded.map { Array($0.rrIntervals.map(\.rawValue)) } == rr)
        }
    }

    @Test func decodingRandomBytesNeverTrapsAndReencodesExactly() async {
        await propertyCheck(count: 2000, input: Gen.uint8().array(of: 0...16)) { input in
            if let m = try? HeartRateMeasurement.decode(input) {
                // The flags are kept, so a valid value re-encodes to the very same bytes.
                #expect(m.encoded == input)
            }
        }
    }

    @Test func validValuesWithRandomFlagsDecode() async {
        await propertyCheck(input: Gen.uint8(), Gen.uint8().array(of: 0...5)) { flags, rrCount in
            var value: [UInt8] = [flags]
            value += flags & 1 == 1 ? [0x2C, 0x01] : [0x5A]
            if flags & 0x08 != 0 { value += [0x10, 0x00] }
            let rrPresent = flags & 0x10 != 0
            if rrPresent { value += [0x00, 0x04] + rrCount.flatMap { [$0, 0x03] } }
            let m = try? HeartRateMeasurement.decode(value)
            let bpm: UInt16 = flags & 1 == 1 ? 300 : 90
            let energy: UInt16? = flags & 0x08 != 0 ? 16 : nil
            let count = rrPresent ? 1 + rrCount.count : 0
            #expect(m?.bpm == bpm)
            #expect(m?.energyExpended == energy)
            #expect(m?.rrIntervals.count == count)
        }
    }
}

@Suite("Body Sensor Location")
struct BodySensorLocationTests {
    @Test func knownLocationsAndNames() throws {
        let expected: [(UInt8, BodySensorLocation, String)] = [
            (0, .other, "other"), (1, .chest, "chest"), (2, .wrist, "wrist"), (3, .finger, "finger"),
            (4, .hand, "hand"), (5, .earLobe, "ear-lobe"), (6, .foot, "foot"),
        ]
        for (byte, location, name) in expected {
            let decoded = try BodySensorLocation.decode([byte])
            #expect(decoded == location)
            #expect(decoded.name == name)
            #expect(decoded.isKnown)
            #expect(decoded.encoded == [byte])
        }
    }

    @Test func unknownValueIsKept() throws {
        let location = try BodySensorLocation.decode([0x07])
        #expect(location.rawValue == 7)
        #expect(location.name == nil)
        #expect(!location.isKnown)
        #expect(location.description == "7")
        #expect(location.encoded == [0x07])
    }

    @Test func valueMustBeExactlyOneByte() {
        #expect(throws: WireError(.truncated(needed: 1, available: 0), at: 0, in: "Body Sensor Location")) {
            try BodySensorLocation.decode([])
        }
        #expect(throws: WireError(.trailingBytes(count: 1), at: 1, in: "Body Sensor Location")) {
            try BodySensorLocation.decode([1, 2])
        }
    }
}

@Suite("Heart Rate Control Point")
struct HeartRateControlPointTests {
    @Test func resetEnergyExpendedIsOne() throws {
        #expect(HeartRateControlPoint.resetEnergyExpended.encoded == [0x01])
        #expect(try HeartRateControlPoint.decode([0x01]) == .resetEnergyExpended)
        #expect(HeartRateControlPoint.resetEnergyExpended.name == "reset energy expended")
        #expect(HeartRateControlPoint.valueNotSupportedError == 0x80)
    }

    @Test func unknownCommandIsKept() throws {
        let command = try HeartRateControlPoint.decode([0x02])
        #expect(command.rawValue == 2)
        #expect(command.name == nil)
        #expect(command.encoded == [0x02])
    }

    @Test func valueMustBeExactlyOneByte() {
        #expect(throws: WireError.self) { try HeartRateControlPoint.decode([]) }
        #expect(throws: WireError(.trailingBytes(count: 1), at: 1, in: "Heart Rate Control Point")) {
            try HeartRateControlPoint.decode([1, 0])
        }
    }

    @Test func serviceAndCharacteristicUUIDs() {
        #expect(BluetoothUUID.heartRateService.description == "180D")
        #expect(BluetoothUUID.heartRateMeasurement.description == "2A37")
        #expect(BluetoothUUID.bodySensorLocation.description == "2A38")
        #expect(BluetoothUUID.heartRateControlPoint.description == "2A39")
        #expect(BluetoothUUID.heartRateService == BluetoothUUID("0000180D-0000-1000-8000-00805F9B34FB"))
    }
}

/// RR-Intervals are stored inline up to `RRIntervals.inlineCapacity` and in an array beyond:
/// both paths decode, compare and re-encode alike.
@Suite("Heart Rate Measurement: RR-Interval storage")
struct HeartRateRRStorageTests {
    @Test(arguments: [0, 1, 4, 5, 8, 9, 12, 13, 40, 255])
    func intervalsRoundTripAtEveryStorageSize(count: Int) throws {
        var value: [UInt8] = [0x10, 0x48]
        let raw = (0..<count).map { UInt16(truncatingIfNeeded: 300 &+ $0 &* 257) }
        for r in raw { value += [UInt8(r & 0xFF), UInt8(r >> 8)] }
        if count == 0 { value = [0x00, 0x48] }
        let m = try HeartRateMeasurement.decode(value)
        #expect(m.rrIntervals.map(\.rawValue) == raw)
        #expect(m.encoded == value)
        let built = HeartRateMeasurement(bpm: 72, rrIntervals: raw.map { RRInterval(rawValue: $0) })
        #expect(built == m)
        #expect(built.hashValue == m.hashValue)
    }

    @Test func errorOffsetsCountFromTheSliceBuffer() throws {
        // The value sits at index 3 of a larger buffer: the missing energy field is at byte 5.
        let buffer: [UInt8] = [0xAA, 0xBB, 0xCC, 0x08, 0x48, 0x01]
        #expect(throws: WireError(.truncated(needed: 2, available: 1), at: 5,
                                  in: "Heart Rate Measurement Energy Expended")) {
            try HeartRateMeasurement.decode(buffer[3...])
        }
    }
}
