/// The Characteristic Presentation Format descriptor (`2904`, Core Vol 3 Part G 3.3.3.5): how
/// to read the characteristic's value: its format, a base-10 exponent, its unit, and which
/// part of the device it describes.
public struct PresentationFormat: Hashable, Sendable, CustomStringConvertible, WireDecodable, WireEncodable {
    /// The value's format code (Assigned Numbers, "Formats"): `0x04` uint8, `0x19` utf8s, …
    public let format: UInt8
    /// The value is `stored × 10^exponent` (integers only).
    public let exponent: Int8
    /// A unit UUID from the `27xx` range (`27AD` percentage).
    public let unit: BluetoothUUID
    /// `1` for the Bluetooth SIG's namespace of descriptions.
    public let namespace: UInt8
    /// Which part of the device, in ``namespace`` (`0x0106` main, `0x010D` left).
    public let descriptionCode: UInt16

    public init(format: UInt8, exponent: Int8, unit: UInt16, namespace: UInt8, description: UInt16) {
        self.format = format
        self.exponent = exponent
        self.unit = BluetoothUUID(unit)
        self.namespace = namespace
        self.descriptionCode = description
    }

    /// Seven bytes: format u8, exponent s8, unit u16, namespace u8, description u16.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> PresentationFormat {
        var r = ByteReader(bytes, context: "Characteristic Presentation Format")
        let format = try r.readUInt8()
        let exponent = try r.readInt8()
        let unit = try r.readUInt16()
        let namespace = try r.readUInt8()
        let description = try r.readUInt16()
        try r.expectEnd()
        return PresentationFormat(format: format, exponent: exponent, unit: unit, namespace: namespace, description: description)
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(format)
        writer.write(exponent)
        writer.write(unit.uuid16 ?? 0)
        writer.write(namespace)
        writer.write(descriptionCode)
    }

    /// The format's name (`uint8`, `utf8s`, `medfloat16`), `nil` for a reserved code.
    public var formatName: String? { Self.formatName(format) }

    /// The names of the format codes, from Assigned Numbers ("Formats").
    public static func formatName(_ code: UInt8) -> String? {
        switch code {
        case 0x01: "boolean"
        case 0x02: "uint2"
        case 0x03: "uint4"
        case 0x04: "uint8"
        case 0x05: "uint12"
        case 0x06: "uint16"
        case 0x07: "uint24"
        case 0x08: "uint32"
        case 0x09: "uint48"
        case 0x0A: "uint64"
        case 0x0B: "uint128"
        case 0x0C: "sint8"
        case 0x0D: "sint12"
        case 0x0E: "sint16"
        case 0x0F: "sint24"
        case 0x10: "sint32"
        case 0x11: "sint48"
        case 0x12: "sint64"
        case 0x13: "sint128"
        case 0x14: "float32"
        case 0x15: "float64"
        case 0x16: "medfloat16"
        case 0x17: "medfloat32"
        case 0x18: "uint16[2]"
        case 0x19: "utf8s"
        case 0x1A: "utf16s"
        case 0x1B: "struct"
        case 0x1C: "medASN1"
        default: nil
        }
    }

    /// The unit's name (`percentage`, `Celsius temperature (degree Celsius)`), from the
    /// Assigned Numbers; `nil` when not a known unit.
    public var unitName: String? {
        guard let short = unit.uuid16, (0x2700...0x27FF).contains(short) else { return nil }
        return AssignedNumbers.name(uuid16: short)
    }

    /// The symbol a value is written with (`%`, `°C`, `V`), for the units people meet most;
    /// `nil` for the others (their name then follows the value) and for `unitless`.
    public var unitSymbol: String? { Self.unitSymbol(unit.uuid16 ?? 0) }

    /// Symbols of common units (Assigned Numbers "Units").
    public static func unitSymbol(_ unit: UInt16) -> String? {
        switch unit {
        case 0x2701: "m"
        case 0x2702: "kg"
        case 0x2703: "s"
        case 0x2704: "A"
        case 0x2705: "K"
        case 0x2712: "m/s"
        case 0x2713: "m/s²"
        case 0x2722: "Hz"
        case 0x2724: "Pa"
        case 0x2725: "J"
        case 0x2726: "W"
        case 0x2728: "V"
        case 0x272F: "°C"
        case 0x2731: "lx"
        case 0x2763: "°"
        case 0x2780: "bar"
        case 0x27A7: "mph"
        case 0x27A8: "rpm"
        case 0x27AC: "°F"
        case 0x27AD: "%"
        case 0x27AE: "‰"
        case 0x27AF: "bpm"
        case 0x27B0: "Ah"
        default: nil
        }
    }

    /// The description's name in the Bluetooth SIG namespace (`main`, `left`, `first`),
    /// `nil` in another namespace or for codes this table does not know.
    public var descriptionName: String? {
        guard namespace == 1 else { return nil }
        switch descriptionCode {
        case 0x0000: return "unknown"
        case 0x0001...0x00FF: return Self.ordinal(Int(descriptionCode))
        case 0x0100: return "front"
        case 0x0101: return "back"
        case 0x0102: return "top"
        case 0x0103: return "bottom"
        case 0x0104: return "upper"
        case 0x0105: return "lower"
        case 0x0106: return "main"
        case 0x0107: return "backup"
        case 0x0108: return "auxiliary"
        case 0x0109: return "supplementary"
        case 0x010A: return "flash"
        case 0x010B: return "inside"
        case 0x010C: return "outside"
        case 0x010D: return "left"
        case 0x010E: return "right"
        case 0x010F: return "internal"
        case 0x0110: return "external"
        default: return nil
        }
    }

    /// `1st`, `2nd`, `3rd`, `11th`, `21st`: the namespace's "first" … "two hundred and
    /// fifty-fifth", in figures.
    private static func ordinal(_ n: Int) -> String {
        let suffix: String
        switch (n % 10, n % 100) {
        case (_, 11...13): suffix = "th"
        case (1, _): suffix = "st"
        case (2, _): suffix = "nd"
        case (3, _): suffix = "rd"
        default: suffix = "th"
        }
        return "\(n)\(suffix)"
    }

    /// `uint8, percentage (27AD), exponent 0, Bluetooth SIG description main (0x0106)`.
    public var description: String {
        let format = formatName ?? "format 0x\(Hex.padded(self.format, digits: 2))"
        let unit = (unitName.map { "\($0) (\(self.unit))" }) ?? "unit \(self.unit)"
        let code = "0x\(Hex.padded(descriptionCode, digits: 4))"
        let place: String
        if namespace == 1 {
            place = "Bluetooth SIG description " + (descriptionName.map { "\($0) (\(code))" } ?? code)
        } else {
            place = "namespace 0x\(Hex.padded(namespace, digits: 2)) description \(code)"
        }
        return "\(format), \(unit), exponent \(exponent), \(place)"
    }
}
