/// An IEEE-11073-20601 number as the health profiles carry it (the GATT formats `medfloat32`,
/// "FLOAT", and `medfloat16`, "SFLOAT"): a signed mantissa times ten to a signed exponent, so
/// that 36.5 °C travels as exactly 365 × 10⁻¹. Five mantissas (with exponent 0) are reserved
/// for NaN, "not at this resolution" and the two infinities.
public struct MedicalFloat: Hashable, Sendable, CustomStringConvertible {
    /// The reserved values, which carry no number.
    public enum Special: Hashable, Sendable {
        case nan
        /// NRes: the value cannot be given at this resolution.
        case notAtThisResolution
        case positiveInfinity
        case negativeInfinity
        /// The one reserved pattern the standard keeps for future use.
        case reserved
    }

    /// The signed mantissa (24-bit for FLOAT, 12-bit for SFLOAT).
    public let mantissa: Int32
    /// The signed base-10 exponent (8-bit for FLOAT, 4-bit for SFLOAT).
    public let exponent: Int8
    /// Set for a reserved pattern: then ``mantissa`` and ``exponent`` are the raw fields.
    public let special: Special?

    /// A value from its fields (no range check: ``float32Bits`` and ``sfloatBits`` check).
    public init(mantissa: Int32, exponent: Int8) {
        self.mantissa = mantissa
        self.exponent = exponent
        special = nil
    }

    /// Decodes a 32-bit FLOAT: exponent in the top byte, mantissa in the low 24 bits.
    public init(float32Bits bits: UInt32) {
        let rawMantissa = bits & 0x00FF_FFFF
        exponent = Int8(truncatingIfNeeded: bits >> 24)
        // Sign-extend the 24-bit mantissa.
        mantissa = Int32(bitPattern: rawMantissa << 8) >> 8
        special = exponent == 0 ? Self.special(rawMantissa, base: 0x80_0000) : nil
    }

    /// Decodes a 16-bit SFLOAT: exponent in the top 4 bits, mantissa in the low 12.
    public init(sfloatBits bits: UInt16) {
        let rawMantissa = UInt32(bits & 0x0FFF)
        exponent = Int8(truncatingIfNeeded: Int16(bitPattern: bits) >> 12)
        mantissa = Int32(bitPattern: rawMantissa << 20) >> 20
        special = exponent == 0 ? Self.special(rawMantissa, base: 0x800) : nil
    }

    /// The reserved meaning of a raw mantissa whose most negative value is `base`:
    /// `base - 2` +INF, `base - 1` NaN, `base` NRes, `base + 1` reserved, `base + 2` −INF.
    private static func special(_ raw: UInt32, base: UInt32) -> Special? {
        switch raw {
        case base - 2: .positiveInfinity
        case base - 1: .nan
        case base: .notAtThisResolution
        case base + 1: .reserved
        case base + 2: .negativeInfinity
        default: nil
        }
    }

    /// The largest mantissa magnitude that is a number: the next ones are reserved.
    static let float32MantissaLimit: Int32 = 0x7F_FFFD
    static let sfloatMantissaLimit: Int32 = 0x7FD

    /// The 32-bit FLOAT pattern; `nil` when the mantissa needs more than 24 bits or, with
    /// exponent 0, would read as one of the reserved patterns.
    public var float32Bits: UInt32? {
        if let special { return Self.pattern(special, base: 0x80_0000) }
        guard (-0x80_0000...0x7F_FFFF).contains(mantissa),
              exponent != 0 || mantissa.magnitude <= Self.float32MantissaLimit.magnitude else { return nil }
        return UInt32(UInt8(bitPattern: exponent)) << 24 | UInt32(bitPattern: mantissa) & 0x00FF_FFFF
    }

    /// The 16-bit SFLOAT pattern; `nil` when the mantissa needs more than 12 bits, the
    /// exponent more than 4, or, with exponent 0, it would read as a reserved pattern.
    public var sfloatBits: UInt16? {
        if let special { return UInt16(truncatingIfNeeded: Self.pattern(special, base: 0x800)) }
        guard (-0x800...0x7FF).contains(mantissa), (-8...7).contains(exponent),
              exponent != 0 || mantissa.magnitude <= Self.sfloatMantissaLimit.magnitude else { return nil }
        return UInt16(UInt8(bitPattern: exponent) & 0x0F) << 12 | UInt16(truncatingIfNeeded: mantissa) & 0x0FFF
    }

    private static func pattern(_ special: Special, base: UInt32) -> UInt32 {
        switch special {
        case .positiveInfinity: base - 2
        case .nan: base - 1
        case .notAtThisResolution: base
        case .reserved: base + 1
        case .negativeInfinity: base + 2
        }
    }

    /// The number as a Double (NaN for NaN, NRes and reserved; ±infinity).
    public var doubleValue: Double {
        switch special {
        case .positiveInfinity?: return .infinity
        case .negativeInfinity?: return -.infinity
        case .nan?, .notAtThisResolution?, .reserved?: return .nan
        case nil: break
        }
        var value = Double(mantissa)
        let ten = 10.0
        if exponent >= 0 {
            for _ in 0..<Int(exponent) { value *= ten }
        } else {
            // Dividing (not multiplying by 0.1) keeps 365 × 10⁻¹ exactly the Double nearest 36.5.
            var divisor = 1.0
            for _ in 0..<Int(-Int(exponent)) { divisor *= ten }
            value /= divisor
        }
        return value
    }

    /// The exact decimal the fields say: `36.5` for 365 × 10⁻¹, `1200` for 12 × 10², `12e100`
    /// beyond a few zeros; `NaN`, `NRes`, `+INF`, `-INF`, `reserved` for the reserved patterns.
    public var description: String {
        switch special {
        case .nan?: return "NaN"
        case .notAtThisResolution?: return "NRes"
        case .positiveInfinity?: return "+INF"
        case .negativeInfinity?: return "-INF"
        case .reserved?: return "reserved"
        case nil: break
        }
        let sign = mantissa < 0 ? "-" : ""
        let digits = String(mantissa.magnitude)
        let exponent = Int(self.exponent)
        if exponent >= 0 {
            return exponent <= 6 ? sign + digits + String(repeating: "0", count: exponent) : "\(sign)\(digits)e\(exponent)"
        }
        let places = -exponent
        guard places <= 12 else { return "\(sign)\(digits)e\(exponent)" }
        let padded = digits.count > places ? digits : String(repeating: "0", count: places - digits.count + 1) + digits
        let point = padded.index(padded.endIndex, offsetBy: -places)
        return sign + padded[..<point] + "." + padded[point...]
    }

    /// Parses a decimal (`36.5`, `-0.25`, `1200`) into mantissa and exponent, exactly: 36.5 is
    /// 365 × 10⁻¹. Also `NaN`, `NRes`, `+INF`/`INF`, `-INF`. `nil` for anything else; trailing
    /// zeros are folded into the exponent so that large round numbers fit.
    public init?(decimal text: String) {
        switch text.lowercased() {
        case "nan": self.init(special: .nan); return
        case "nres": self.init(special: .notAtThisResolution); return
        case "inf", "+inf": self.init(special: .positiveInfinity); return
        case "-inf": self.init(special: .negativeInfinity); return
        default: break
        }
        var utf8 = Substring(text).utf8[...]
        var negative = false
        if let first = utf8.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            utf8 = utf8.dropFirst()
        }
        var mantissa: Int64 = 0
        var exponent = 0
        var sawDigit = false
        var sawPoint = false
        for c in utf8 {
            if c == UInt8(ascii: "."), !sawPoint {
                sawPoint = true
                continue
            }
            guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { return nil }
            sawDigit = true
            if mantissa > 100_000_000 {
                // More digits than any FLOAT holds: beyond the point they are dropped only
                // when zero (else the value is not exact); before it they raise the exponent.
                if sawPoint {
                    guard c == UInt8(ascii: "0") else { return nil }
                } else {
                    guard c == UInt8(ascii: "0") else { return nil }
                    exponent += 1
                }
                continue
            }
            mantissa = mantissa * 10 + Int64(c - UInt8(ascii: "0"))
            if sawPoint { exponent -= 1 }
        }
        guard sawDigit else { return nil }
        while mantissa != 0, mantissa % 10 == 0, exponent < 127 {
            mantissa /= 10
            exponent += 1
        }
        if mantissa == 0 { exponent = 0 }
        guard mantissa <= Int64(Self.float32MantissaLimit), (-128...127).contains(exponent) else { return nil }
        self.init(mantissa: Int32(negative ? -mantissa : mantissa), exponent: Int8(exponent))
    }

    private init(special: Special) {
        let base: Int32 = -0x80_0000
        switch special {
        case .positiveInfinity: mantissa = 0x7F_FFFE
        case .nan: mantissa = 0x7F_FFFF
        case .notAtThisResolution: mantissa = base
        case .reserved: mantissa = base + 1
        case .negativeInfinity: mantissa = base + 2
        }
        exponent = 0
        self.special = special
    }
}
