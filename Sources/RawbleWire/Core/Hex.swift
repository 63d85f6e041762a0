/// Hex text ⇄ bytes, for the CLI, tests and logs.
public enum Hex {
    /// Parses hex digits, ignoring spaces, colons, dashes and a leading `0x`.
    /// Throws naming the offending character's offset in the text.
    public static func decode(_ text: String) throws(WireError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count / 2)
        var high: UInt8? = nil
        var highOffset = 0
        let utf8 = Array(text.utf8)
        var start = 0
        if utf8.count >= 2, utf8[0] == UInt8(ascii: "0"), utf8[1] | 0x20 == UInt8(ascii: "x") { start = 2 }
        for index in start..<utf8.count {
            let c = utf8[index]
            let nibble: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = c - UInt8(ascii: "A") + 10
            case UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: "-"), UInt8(ascii: "\t"), UInt8(ascii: "\n"):
                if high != nil {
                    throw WireError(.invalidValue("separator inside a byte"), at: index, in: "hex")
                }
                continue
            default:
                throw WireError(.invalidValue("'\(Character(Unicode.Scalar(c)))' is not a hex digit"), at: index, in: "hex")
            }
            if let h = high {
                out.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
                highOffset = index
            }
        }
        if high != nil {
            throw WireError(.invalidValue("odd number of hex digits"), at: highOffset, in: "hex")
        }
        return out
    }

    /// Upper-case hex of `value`, zero-padded to at least `digits` digits: `padded(0x1D, digits: 4)`
    /// is `001D` (handles, opcodes, UUIDs, company identifiers in messages).
    public static func padded(_ value: some BinaryInteger, digits: Int) -> String {
        let s = String(value, radix: 16, uppercase: true)
        return s.count >= digits ? s : String(repeating: "0", count: digits - s.count) + s
    }

    /// Lower-case hex, no separators.
    public static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false, separator: String = "") -> String {
        let digits: [Character] = Array(uppercase ? "0123456789ABCDEF" : "0123456789abcdef")
        var s = ""
        var first = true
        for b in bytes {
            if !first { s += separator }
            first = false
            s.append(digits[Int(b >> 4)])
            s.append(digits[Int(b & 0xF)])
        }
        return s
    }
}
