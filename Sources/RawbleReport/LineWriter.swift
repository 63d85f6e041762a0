import RawbleWire

/// Builds one line of ASCII text in place at the end of a byte buffer: the room is reserved
/// once (an upper bound the caller computes), then filled byte by byte with no per-byte
/// capacity or uniqueness check, then trimmed to what was written. The hot path of
/// `hr --json` and `notify --json` (one line per notification, measured: `Array.append` of
/// literals and `Double.description` were a tenth of `hr`'s CPU).
///
/// Package-wide, not public API: ``SessionFileWriter`` and the CLI's `notify --json` lines use it.
package struct LineWriter: ~Copyable {
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    /// How many bytes were written so far.
    package private(set) var count = 0
    /// Set when a write did not fit: the caller's bound was wrong (the line is then cut, never
    /// written past the room).
    package private(set) var overflowed = false

    private init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        self.buffer = buffer
    }

    /// Appends to `bytes` at most `bound` bytes written by `body`.
    package static func append(to bytes: inout [UInt8], bound: Int, _ body: (inout LineWriter) -> Void) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: bound))
        let written = bytes.withUnsafeMutableBufferPointer { all in
            var writer = LineWriter(UnsafeMutableBufferPointer(rebasing: all[start...]))
            body(&writer)
            return writer.count
        }
        bytes.removeLast(bound - written)
    }

    package mutating func write(_ byte: UInt8) {
        guard count < buffer.count else { overflowed = true; return }
        buffer[count] = byte
        count += 1
    }

    package mutating func write(_ text: StaticString) {
        text.withUTF8Buffer { write(contentsOf: $0) }
    }

    package mutating func write(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count <= buffer.count - count else { overflowed = true; return }
        if let source = bytes.baseAddress, let target = buffer.baseAddress {
            (target + count).update(from: source, count: bytes.count)
        }
        count += bytes.count
    }

    package mutating func write(contentsOf bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { write(contentsOf: $0) }
    }

    /// The decimal digits of `value`, zero-padded to `width` (a minus sign first when negative).
    package mutating func writeDecimal(_ value: Int64, width: Int = 1) {
        if value < 0 { write(UInt8(ascii: "-")) }
        writeDecimal(magnitude: value.magnitude, width: width)
    }

    package mutating func writeDecimal(magnitude value: UInt64, width: Int = 1) {
        var digits = 1
        var limit: UInt64 = 10
        while digits < 20, value >= limit {
            digits += 1
            limit = limit.multipliedReportingOverflow(by: 10).partialValue
        }
        for _ in digits..<max(digits, width) { write(UInt8(ascii: "0")) }
        guard digits <= buffer.count - count else { overflowed = true; return }
        var rest = value
        var index = count + digits - 1
        while index >= count {
            buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
            index -= 1
        }
        count += digits
    }

    /// Two lowercase hex digits per byte.
    package mutating func writeHex(_ bytes: [UInt8]) {
        guard bytes.count <= (buffer.count - count) / 2 else { overflowed = true; return }
        let digits: StaticString = "0123456789abcdef"
        digits.withUTF8Buffer { digits in
            for byte in bytes {
                buffer[count] = digits[Int(byte >> 4)]
                buffer[count + 1] = digits[Int(byte & 0x0F)]
                count += 2
            }
        }
    }

    /// An RR interval (`units` of 1/1024 s) in seconds, exactly as `Double.description` prints
    /// `Double(units) / 1024` (every such value has a finite decimal expansion of at most ten
    /// fraction digits, which is also its shortest round-trip form), except that whole seconds
    /// have no fraction, as `JSON.double` prints them.
    package mutating func writeSeconds(units: UInt16) {
        writeDecimal(magnitude: UInt64(units >> 10))
        let fraction = UInt64(units & 0x3FF)
        guard fraction != 0 else { return }
        // fraction / 1024 = fraction × 9,765,625 / 10^10: ten digits, trailing zeros dropped.
        var digits = fraction * 9_765_625
        var width = 10
        while digits % 10 == 0 {
            digits /= 10
            width -= 1
        }
        write(UInt8(ascii: "."))
        writeDecimal(magnitude: digits, width: width)
    }
}

/// The date and time to the second of the last timestamp written, so that consecutive lines
/// (many per second) compute the calendar once per second.
package struct TimestampCache: Sendable {
    package init() {}

    private var second: Int64 = .min
    private var prefix: [UInt8] = []

    /// Writes ``iso8601(unixMicroseconds:)``'s text.
    package mutating func write(unixMicroseconds: Int64, to writer: inout LineWriter) {
        let micros = ((unixMicroseconds % 1_000_000) + 1_000_000) % 1_000_000
        let seconds = (unixMicroseconds - micros) / 1_000_000
        if seconds != second {
            second = seconds
            prefix.removeAll(keepingCapacity: true)
            appendISO8601(unixMicroseconds: unixMicroseconds - micros, to: &prefix)
            prefix.removeLast(8)  // ".000000Z": the microseconds are written per line
        }
        writer.write(contentsOf: prefix)
        writer.write(UInt8(ascii: "."))
        writer.writeDecimal(magnitude: UInt64(micros), width: 6)
        writer.write(UInt8(ascii: "Z"))
    }
}
