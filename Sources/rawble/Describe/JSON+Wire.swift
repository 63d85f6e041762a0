import RawbleWire
import RawbleReport

/// JSON building blocks shared by every decoder's description.
extension JSON {
    /// Bytes as lower-case hex, the CLI's convention for values.
    static func hex(_ bytes: some Sequence<UInt8>) -> JSON { .string(Hex.encode(bytes)) }

    /// A handle as `0x001D`, as people and the CLI's targets write it.
    static func handle(_ handle: UInt16) -> JSON { .string(handleText(handle)) }

    static func uuid(_ uuid: BluetoothUUID) -> JSON { .string(uuid.description) }
}

func handleText(_ handle: UInt16) -> String {
    let s = String(handle, radix: 16, uppercase: true)
    return "0x" + String(repeating: "0", count: max(0, 4 - s.count)) + s
}

func hexByte(_ value: UInt8) -> String {
    let s = String(value, radix: 16, uppercase: true)
    return "0x" + (s.count == 1 ? "0" + s : s)
}

func hexWord(_ value: UInt16) -> String { handleText(value) }

/// Appends `notify --json`'s line for one value (and its newline) to `bytes`: the same text as
/// `JSON.object([("time", …), ("handle", .handle(…)), ("uuid", …), ("value", .hex(…))]).serialized()`,
/// written in place into the caller's reused buffer (the hot path of `notify --json`: no `JSON`
/// value, no `String` per field). `uuid` is the characteristic's UUID text, made once per subscription.
/// `decoded`: the serialized fields that follow `value` (`,"decoded":{…}`), empty for none.
func appendNotificationJSONLine(
    time unixMicroseconds: Int64, handle: UInt16, uuid: [UInt8], value: some Collection<UInt8>, decoded: String = "",
    to bytes: inout [UInt8], timestamps: inout TimestampCache
) {
    let value = Array(value)
    var decoded = decoded
    LineWriter.append(to: &bytes, bound: 80 + uuid.count + value.count * 2 + decoded.utf8.count) { line in
        line.write(#"{"time":""#)
        timestamps.write(unixMicroseconds: unixMicroseconds, to: &line)
        line.write(#"","handle":"0x"#)
        let upper: StaticString = "0123456789ABCDEF"
        upper.withUTF8Buffer { digits in
            for shift in stride(from: 12, through: 0, by: -4) {
                line.write(digits[Int((handle >> UInt16(shift)) & 0x0F)])
            }
        }
        line.write(#"","uuid":""#)
        line.write(contentsOf: uuid)
        line.write(#"","value":""#)
        line.writeHex(value)
        line.write(UInt8(ascii: "\""))
        decoded.withUTF8 { line.write(contentsOf: $0) }
        line.write("}\n")
    }
}

/// ``appendNotificationJSONLine(time:handle:uuid:value:decoded:to:timestamps:)`` for a single line.
func appendNotificationJSONLine(
    time unixMicroseconds: Int64, handle: UInt16, uuid: [UInt8], value: some Collection<UInt8>, decoded: String = "",
    to bytes: inout [UInt8]
) {
    var timestamps = TimestampCache()
    appendNotificationJSONLine(time: unixMicroseconds, handle: handle, uuid: uuid, value: value, decoded: decoded, to: &bytes,
                               timestamps: &timestamps)
}
