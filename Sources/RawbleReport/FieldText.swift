import RawbleWire

/// The small text parsers the session reader needs, on bytes (no Foundation, no trap on any
/// input): ISO 8601 times, numbers, hex.
enum FieldText {
    /// `2026-11-22T05:14:12.123456Z` (also a space for `T`, 0–9 fraction digits — beyond six
    /// truncated —, `Z`, `±hh:mm` or `±hhmm`) as microseconds since 1970; or a plain number of
    /// seconds since 1970. `nil` for anything else.
    static func microseconds(_ text: ArraySlice<UInt8>) -> Int64? {
        if let iso = iso8601(text) { return iso }
        guard let seconds = number(text), seconds.magnitude < 1e13 else { return nil }
        return Int64((seconds * 1_000_000).rounded())
    }

    private static func iso8601(_ text: ArraySlice<UInt8>) -> Int64? {
        var index = text.startIndex
        func digits(_ count: Int) -> Int64? {
            var value: Int64 = 0
            for _ in 0..<count {
                guard index < text.endIndex, let digit = digitValue(text[index]) else { return nil }
                value = value * 10 + digit
                index += 1
            }
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard index < text.endIndex, text[index] == byte else { return false }
            index += 1
            return true
        }
        guard let year = digits(4), expect(UInt8(ascii: "-")), let month = digits(2), expect(UInt8(ascii: "-")),
              let day = digits(2) else { return nil }
        guard index < text.endIndex, text[index] == UInt8(ascii: "T") || text[index] == UInt8(ascii: " ") else { return nil }
        index += 1
        guard let hour = digits(2), expect(UInt8(ascii: ":")), let minute = digits(2), expect(UInt8(ascii: ":")),
              let second = digits(2) else { return nil }
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var micros: Int64 = 0
        if expect(UInt8(ascii: ".")) {
            var count = 0
            while index < text.endIndex, let digit = digitValue(text[index]) {
                if count < 6 { micros = micros * 10 + digit }
                count += 1
                index += 1
            }
            guard count > 0 else { return nil }
            for _ in count..<max(count, 6) { micros *= 10 }
        }
        var offsetSeconds: Int64 = 0
        if expect(UInt8(ascii: "Z")) || expect(UInt8(ascii: "z")) {
        } else if index < text.endIndex, text[index] == UInt8(ascii: "+") || text[index] == UInt8(ascii: "-") {
            let sign: Int64 = text[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let hours = digits(2) else { return nil }
            _ = expect(UInt8(ascii: ":"))
            guard let minutes = digits(2), hours < 24, minutes < 60 else { return nil }
            offsetSeconds = sign * (hours * 3600 + minutes * 60)
        }
        guard index == text.endIndex else { return nil }
        // Years 0000–9999 keep every product far inside Int64.
        let days = CivilDate(year: year, month: month, day: day).daysSince1970
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return seconds * 1_000_000 + micros
    }

    /// A decimal number as JSON writes it (`-12`, `0.548828125`, `1e3`); `nil` for anything else
    /// (`nan`, `inf`, hex floats and empty text included) or a result that is not finite.
    static func number(_ text: ArraySlice<UInt8>) -> Double? {
        guard !text.isEmpty, text.count <= 64 else { return nil }
        var sawDigit = false
        for byte in text {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): sawDigit = true
            case UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): break
            default: return nil
            }
        }
        guard sawDigit, let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite else { return nil }
        return value
    }

    /// A whole number in `0...65535` (`72`, also `72.0`).
    static func uint16(_ text: ArraySlice<UInt8>) -> UInt16? {
        guard let value = number(text), value >= 0, value <= 65535, value == value.rounded(.towardZero) else { return nil }
        return UInt16(value)
    }

    /// Hex digits (either case, even count) as bytes; `nil` for anything else.
    static func hex(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard text.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var index = text.startIndex
        while index < text.endIndex {
            guard let high = hexValue(text[index]), let low = hexValue(text[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    static func digitValue(_ byte: UInt8) -> Int64? {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") ? Int64(byte - UInt8(ascii: "0")) : nil
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `text` without leading and trailing spaces and tabs.
    static func trimmed(_ text: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var start = text.startIndex
        var end = text.endIndex
        while start < end, text[start] == UInt8(ascii: " ") || text[start] == UInt8(ascii: "\t") { start += 1 }
        while end > start, text[end - 1] == UInt8(ascii: " ") || text[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        return text[start..<end]
    }

    /// A line's text: trimmed, and without the `\r` of a CRLF line end.
    static func lineText(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let text = trimmed(line)
        if let last = text.last, last == UInt8(ascii: "\r") { return trimmed(text.dropLast()) }
        return text
    }

    /// `text` is exactly the ASCII `word`.
    static func equals(_ text: ArraySlice<UInt8>, _ word: StaticString) -> Bool {
        guard text.count == word.utf8CodeUnitCount else { return false }
        return word.withUTF8Buffer { buffer in
            var index = text.startIndex
            for byte in buffer {
                guard text[index] == byte else { return false }
                index += 1
            }
            return true
        }
    }

    /// The contact name the CLI writes (`detected`, `not-detected`, `unsupported`).
    static func contact(_ text: ArraySlice<UInt8>) -> HeartRateMeasurement.SensorContact? {
        if equals(text, "detected") { return .detected }
        if equals(text, "not-detected") { return .notDetected }
        if equals(text, "unsupported") || text.isEmpty { return .unsupported }
        return nil
    }
}

extension FieldText {
    /// A whole number in `Int32`'s range (`-187`, also `-187.0`); `nil` for anything else.
    static func int32(_ text: ArraySlice<UInt8>) -> Int32? {
        guard let value = number(text), value >= Double(Int32.min), value <= Double(Int32.max),
              value == value.rounded(.towardZero) else { return nil }
        return Int32(value)
    }

    /// Decimal digits only (at most 20, no sign, no fraction) as a `UInt64`; `nil` for anything
    /// else, a value beyond `UInt64.max` included (a device time is exact: no floating point).
    static func uint64(_ text: ArraySlice<UInt8>) -> UInt64? {
        guard !text.isEmpty, text.count <= 20 else { return nil }
        var value: UInt64 = 0
        for byte in text {
            guard let digit = digitValue(byte) else { return nil }
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(UInt64(digit))
            guard !overflow, !carry else { return nil }
            value = sum
        }
        return value
    }
}
