import RawbleWire

/// ISO 8601 UTC time with microseconds (`2026-11-22T05:14:12.123456Z`), from Unix
/// microseconds, without Foundation's formatters.
package func iso8601(unixMicroseconds: Int64) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(27)
    appendISO8601(unixMicroseconds: unixMicroseconds, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
}

/// Appends the ``iso8601(unixMicroseconds:)`` text to `bytes`, digit by digit (the hot path of
/// `hr --json`: no `String` built); the date from `CivilDate`.
package func appendISO8601(unixMicroseconds: Int64, to bytes: inout [UInt8]) {
    let micros = ((unixMicroseconds % 1_000_000) + 1_000_000) % 1_000_000
    let seconds = (unixMicroseconds - micros) / 1_000_000
    let (days, secondOfDay) = CivilDate.split(unixSeconds: seconds)
    let date = CivilDate(daysSince1970: days)
    let (year, month, day) = (date.year, date.month, date.day)
    appendPadded(year, width: 4, to: &bytes)
    bytes.append(UInt8(ascii: "-"))
    appendPadded(month, width: 2, to: &bytes)
    bytes.append(UInt8(ascii: "-"))
    appendPadded(day, width: 2, to: &bytes)
    bytes.append(UInt8(ascii: "T"))
    appendPadded(secondOfDay / 3600, width: 2, to: &bytes)
    bytes.append(UInt8(ascii: ":"))
    appendPadded(secondOfDay / 60 % 60, width: 2, to: &bytes)
    bytes.append(UInt8(ascii: ":"))
    appendPadded(secondOfDay % 60, width: 2, to: &bytes)
    bytes.append(UInt8(ascii: "."))
    appendPadded(micros, width: 6, to: &bytes)
    bytes.append(UInt8(ascii: "Z"))
}

/// Appends the decimal digits of `value`, zero-padded to `width` (a minus sign first when negative).
package func appendPadded(_ value: Int64, width: Int, to bytes: inout [UInt8]) {
    if value < 0 { bytes.append(UInt8(ascii: "-")) }
    var magnitude = value.magnitude
    var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                 UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    var count = 0
    withUnsafeMutableBytes(of: &digits) { buffer in
        repeat {
            buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
            count += 1
        } while magnitude > 0
        for _ in count..<max(count, width) { bytes.append(UInt8(ascii: "0")) }
        for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[index]) }
    }
}
