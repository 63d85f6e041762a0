/// A type to read a value as, or to write one from text: what `--as` names. GATT values are
/// little-endian. Every format reads and writes exactly its width (text and hex: any length).
public enum ValueFormat: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case utf8, hex
    case u8, u16, u24, u32, u64
    case s8, s16, s24, s32, s64
    /// IEEE 754 binary32 and binary64.
    case f32, f64
    /// IEEE-11073 16-bit SFLOAT and 32-bit FLOAT (``MedicalFloat``).
    case medfloat16, medfloat32

    /// The format a name stands for: the case names, and the GATT format names and common
    /// spellings for them (`uint8`, `sint16`, `float32`, `float`, `double`, `sfloat`, `utf8s`,
    /// `string`); any case.
    public init?(name: String) {
        let name = name.lowercased()
        if let format = ValueFormat(rawValue: name) {
            self = format
            return
        }
        switch name {
        case "utf8s", "utf-8", "string", "text", "str": self = .utf8
        case "bytes", "raw": self = .hex
        case "uint8": self = .u8
        case "uint16": self = .u16
        case "uint24": self = .u24
        case "uint32": self = .u32
        case "uint64": self = .u64
        case "sint8", "i8", "int8": self = .s8
        case "sint16", "i16", "int16": self = .s16
        case "sint24", "i24", "int24": self = .s24
        case "sint32", "i32", "int32": self = .s32
        case "sint64", "i64", "int64": self = .s64
        case "float", "float32": self = .f32
        case "double", "float64": self = .f64
        case "sfloat": self = .medfloat16
        case "medfloat": self = .medfloat32
        default: return nil
        }
    }

    /// The format of a Presentation Format code, when it is one of these.
    public init?(presentationFormat code: UInt8) {
        switch code {
        case 0x04: self = .u8
        case 0x06: self = .u16
        case 0x07: self = .u24
        case 0x08: self = .u32
        case 0x0A: self = .u64
        case 0x0C: self = .s8
        case 0x0E: self = .s16
        case 0x0F: self = .s24
        case 0x10: self = .s32
        case 0x12: self = .s64
        case 0x14: self = .f32
        case 0x15: self = .f64
        case 0x16: self = .medfloat16
        case 0x17: self = .medfloat32
        case 0x19: self = .utf8
        default: return nil
        }
    }

    public var description: String { rawValue }

    /// The names accepted on the command line, for help and errors.
    public static var names: String { allCases.map(\.rawValue).joined(separator: "|") }

    /// The value's width in bytes; `nil` for text and hex (any length).
    public var width: Int? {
        switch self {
        case .utf8, .hex: nil
        case .u8, .s8: 1
        case .u16, .s16, .medfloat16: 2
        case .u24, .s24: 3
        case .u32, .s32, .f32, .medfloat32: 4
        case .u64, .s64, .f64: 8
        }
    }

    private var isSigned: Bool {
        switch self {
        case .s8, .s16, .s24, .s32, .s64: true
        default: false
        }
    }

    /// What a written value of this format may be, for a usage error: `an integer from 0 to 255`.
    public var accepts: String {
        switch self {
        case .utf8: return "any text (written as UTF-8)"
        case .hex: return "bytes in hex, e.g. 01ff"
        case .f32, .f64: return "a number, e.g. 21.5 or -1e-3"
        case .medfloat16: return "a decimal with at most 4 significant digits (mantissa ±2045, exponent -8 to 7), e.g. 36.5, or NaN, NRes, INF, -INF"
        case .medfloat32: return "a decimal with at most 7 significant digits (mantissa ±8388605), e.g. 36.5, or NaN, NRes, INF, -INF"
        default:
            let bits = 8 * (width ?? 1)
            if isSigned {
                return "an integer from -\(UInt64(1) << (bits - 1)) to \((UInt64(1) << (bits - 1)) - 1)"
            }
            let max = bits == 64 ? UInt64.max : (UInt64(1) << bits) - 1
            return "an integer from 0 to \(max) (or 0x hex)"
        }
    }

    /// The bytes for `text` in this format (little-endian), or `nil` when the text is not one
    /// (``accepts`` says what is).
    public func encode(_ text: String) -> [UInt8]? {
        switch self {
        case .utf8:
            return Array(text.utf8)
        case .hex:
            return try? Hex.decode(text)
        case .f32:
            guard let value = Float(text), !text.isEmpty else { return nil }
            return littleEndian(UInt64(value.bitPattern), count: 4)
        case .f64:
            guard let value = Double(text) else { return nil }
            return littleEndian(value.bitPattern, count: 8)
        case .medfloat16:
            guard let bits = MedicalFloat(decimal: text)?.sfloatBits else { return nil }
            return littleEndian(UInt64(bits), count: 2)
        case .medfloat32:
            guard let bits = MedicalFloat(decimal: text)?.float32Bits else { return nil }
            return littleEndian(UInt64(bits), count: 4)
        default:
            let count = width ?? 1
            let bits = UInt64(8 * count)
            if isSigned {
                guard let value = Int64(text) else { return nil }
                // The value must survive sign-extension from its width unchanged.
                let shift = 64 - bits
                guard (value << shift) >> shift == value else { return nil }
                return littleEndian(UInt64(bitPattern: value), count: count)
            }
            let value: UInt64?
            if text.hasPrefix("0x") || text.hasPrefix("0X") {
                value = UInt64(text.dropFirst(2), radix: 16)
            } else {
                value = UInt64(text)
            }
            guard let value, bits == 64 || value >> bits == 0 else { return nil }
            return littleEndian(value, count: count)
        }
    }

    private func littleEndian(_ value: UInt64, count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * $0)) }
    }

    /// Reads `bytes` as this format: a number, text or hex. Throws when the length is not the
    /// format's width, or (utf8) the bytes are not UTF-8.
    public func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> ValueField {
        if let width, bytes.count < width {
            throw WireError(.truncated(needed: width, available: bytes.count), at: bytes.startIndex, in: rawValue)
        }
        if let width, bytes.count > width {
            throw WireError(.trailingBytes(count: bytes.count - width), at: bytes.startIndex + width, in: rawValue)
        }
        let raw = littleEndianValue(bytes)
        switch self {
        case .utf8: return .text(try GATTString.decode(bytes).text)
        case .hex: return .text(Hex.encode(bytes))
        case .u8, .u16, .u24, .u32, .u64: return .unsigned(raw)
        case .s8, .s16, .s24, .s32, .s64:
            let shift = UInt64(64 - 8 * (width ?? 8))
            return .integer(Int64(bitPattern: raw << shift) >> Int64(shift))
        case .f32: return .number(Double(Float(bitPattern: UInt32(truncatingIfNeeded: raw))))
        case .f64: return .number(Double(bitPattern: raw))
        case .medfloat16: return .number(MedicalFloat(sfloatBits: UInt16(truncatingIfNeeded: raw)).doubleValue)
        case .medfloat32: return .number(MedicalFloat(float32Bits: UInt32(truncatingIfNeeded: raw)).doubleValue)
        }
    }

    /// The value as a person reads it: the number (an IEEE-11073 one exactly as sent: `36.5`,
    /// `NaN`), the text without quotes (control characters escaped), or the hex.
    public func text(_ bytes: ArraySlice<UInt8>) throws(WireError) -> String {
        let field = try decode(bytes)
        switch self {
        case .medfloat16: return MedicalFloat(sfloatBits: UInt16(truncatingIfNeeded: littleEndianValue(bytes))).description
        case .medfloat32: return MedicalFloat(float32Bits: UInt32(truncatingIfNeeded: littleEndianValue(bytes))).description
        case .f32: return "\(Float(bitPattern: UInt32(truncatingIfNeeded: littleEndianValue(bytes))))"
        case .utf8:
            guard case .text(let text) = field else { return "" }
            return GATTString.escaped(text)
        default: return field.description
        }
    }

    /// The first 8 bytes as a little-endian integer (the fixed-width formats' raw bits).
    private func littleEndianValue(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        var raw: UInt64 = 0
        for (index, byte) in bytes.prefix(8).enumerated() { raw |= UInt64(byte) << UInt64(8 * index) }
        return raw
    }
}
