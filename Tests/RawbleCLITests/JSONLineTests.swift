@testable import rawble
import RawbleReport
import RawbleTestSupport
import RawbleWire
import Testing

/// The measurement line `hr --json` builds byte by byte is exactly what the general `JSON`
/// serializer prints for the same fields (the documented output), for every kind of value.
@Suite("hr's JSON line builder")
struct JSONLineTests {
    /// The line as the general serializer writes it.
    static func reference(_ measurement: HeartRateMeasurement, time: Int64, raw: [UInt8]) -> String {
        var fields: [(String, JSON)] = [("event", "measurement"), ("time", .string(iso8601(unixMicroseconds: time)))]
        if case .object(let rest) = measurement.json(raw: raw) { fields += rest }
        return JSON.object(fields).serialized() + "\n"
    }

    @Test("random valid measurements: byte for byte the serializer's line, in one reused buffer")
    func matchesTheSerializer() throws {
        var random = SplitMix64(state: 0x9E37_79B9)
        var line: [UInt8] = []
        var checked = 0
        for _ in 0..<5_000 {
            let flags = UInt8(truncatingIfNeeded: random.next()) & 0x1F
            var raw = [flags]
            raw += flags & 0x01 != 0 ? [UInt8(truncatingIfNeeded: random.next()), UInt8(truncatingIfNeeded: random.next())]
                                     : [UInt8(truncatingIfNeeded: random.next())]
            if flags & 0x08 != 0 { raw += [UInt8(truncatingIfNeeded: random.next()), UInt8(truncatingIfNeeded: random.next())] }
            if flags & 0x10 != 0 {
                for _ in 0...Int(random.next() % 3) {
                    // Whole seconds (multiples of 1024) now and then: printed without a fraction.
                    let rr = random.next() % 5 == 0 ? UInt16(random.next() % 64) * 1024 : UInt16(truncatingIfNeeded: random.next())
                    raw += [UInt8(rr & 0xFF), UInt8(rr >> 8)]
                }
            }
            let measurement = try HeartRateMeasurement.decode(raw)
            // Any time from 1970 to 2100, microseconds included.
            let time = Int64(random.next() % 4_102_444_800_000_000)
            line.removeAll(keepingCapacity: true)
            var writer = SessionFileWriter(format: .jsonLines)
            writer.append(measurement, raw: raw, time: time, to: &line)
            #expect(String(decoding: line, as: UTF8.self) == Self.reference(measurement, time: time, raw: raw))
            checked += 1
        }
        #expect(checked == 5_000)
    }

    @Test("RR intervals: every one of the 65,536 values written exactly as Double.description prints it (whole seconds without a fraction)")
    func everyRRInterval() {
        var line: [UInt8] = []
        var mismatches: [UInt16] = []
        for units in UInt16.min...UInt16.max {
            line.removeAll(keepingCapacity: true)
            LineWriter.append(to: &line, bound: 16) { $0.writeSeconds(units: units) }
            let seconds = Double(units) / 1024
            let expected = units % 1024 == 0 ? String(units / 1024) : seconds.description
            if String(decoding: line, as: UTF8.self) != expected { mismatches.append(units) }
        }
        #expect(mismatches.isEmpty, "first mismatches: \(mismatches.prefix(5))")
    }

    @Test("consecutive times share the cached date: each line's time is still its own, across second, day and year boundaries")
    func consecutiveTimes() {
        var timestamps = TimestampCache()
        var line: [UInt8] = []
        // Steps of 0.3 s around the end of 2026, and one jump back in time (the clock was set).
        var times = (0..<40).map { 1_798_761_594_000_000 + Int64($0) * 300_000 }
        times.append(951_868_799_999_999)
        times.append(1_798_761_599_999_999)
        for time in times {
            line.removeAll(keepingCapacity: true)
            LineWriter.append(to: &line, bound: 32) { timestamps.write(unixMicroseconds: time, to: &$0) }
            #expect(String(decoding: line, as: UTF8.self) == iso8601(unixMicroseconds: time))
        }
    }

    @Test("the longest fields of every kind (16-bit bpm, energy, many RR intervals of 63.999… s): the whole line, within its bound")
    func longestFields() throws {
        var raw: [UInt8] = [0x1F, 0xFF, 0xFF, 0xFF, 0xFF]
        for _ in 0..<100 { raw += [0xFF, 0xFF] }
        let measurement = try HeartRateMeasurement.decode(raw)
        var line: [UInt8] = []
        var writer = SessionFileWriter(format: .jsonLines)
        writer.append(measurement, raw: raw, time: 4_102_444_799_999_999, to: &line)
        #expect(String(decoding: line, as: UTF8.self) == Self.reference(measurement, time: 4_102_444_799_999_999, raw: raw))
    }

    @Test("a line longer than its writer's bound is cut at the bound, never written past it")
    func boundHolds() {
        var line: [UInt8] = [0x41]
        LineWriter.append(to: &line, bound: 4) { writer in
            writer.write("abc")
            writer.writeDecimal(123_456)
            let overflowed = writer.overflowed
            #expect(overflowed)
        }
        #expect(line == [0x41, 0x61, 0x62, 0x63])
    }

    @Test("the time text: known instants, zero padding, the last microsecond of a leap day")
    func times() {
        #expect(iso8601(unixMicroseconds: 0) == "1970-01-01T00:00:00.000000Z")
        #expect(iso8601(unixMicroseconds: 1_795_411_234_567_890) == "2026-11-23T05:20:34.567890Z")
        #expect(iso8601(unixMicroseconds: 951_868_799_999_999) == "2000-02-29T23:59:59.999999Z")
    }
}

/// The value line `notify --json` builds byte by byte is exactly what the general `JSON`
/// serializer prints for the same fields.
@Suite("notify's JSON line builder")
struct NotificationJSONLineTests {
    @Test("random handles, UUIDs and values: byte for byte the serializer's line (decoded fields included), in one reused buffer")
    func matchesTheSerializer() {
        var random = SplitMix64(state: 0x5EED_0A77)
        var line: [UInt8] = []
        let uuids: [BluetoothUUID] = [
            BluetoothUUID(0x2A37), BluetoothUUID(0x0001), BluetoothUUID("72617762-6C65-4C61-6200-000000000004")!,
            BluetoothUUID(0x2A19), BluetoothUUID(0x2A00),
        ]
        for round in 0..<3_000 {
            let handle = round < 3 ? [0x0000, 0x001D, 0xFFFF][round] : UInt16(truncatingIfNeeded: random.next())
            let uuid = uuids[Int(random.next() % UInt64(uuids.count))]
            let value = (0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let time = Int64(random.next() % 4_102_444_800_000_000)
            line.removeAll(keepingCapacity: true)
            // Known formats (2A37, 2A19, 2A00) add `decoded` (or `decodeError` for random bytes that do not fit).
            let readable = ValueOutput.readable(value, uuid: uuid, as: nil)
            appendNotificationJSONLine(time: time, handle: handle, uuid: Array(uuid.description.utf8), value: value[...],
                                       decoded: readable.jsonSuffix, to: &line)
            let reference = JSON.object([
                ("time", .string(iso8601(unixMicroseconds: time))),
                ("handle", .handle(handle)),
                ("uuid", .uuid(uuid)),
                ("value", .hex(value)),
            ] + readable.jsonFields).serialized() + "\n"
            #expect(String(decoding: line, as: UTF8.self) == reference)
        }
    }
}
