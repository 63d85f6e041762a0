/// Why a run of bytes could not be decoded, and where.
///
/// Every decoder in the wire layer throws this one type (typed throws), so callers can
/// report "what is wrong and at which byte offset" without string matching.
public struct WireError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The class of problem.
    public enum Kind: Hashable, Sendable {
        /// The input ended early: `needed` more bytes were required, `available` were left.
        case truncated(needed: Int, available: Int)
        /// Bytes remain after a complete structure that must fill its container.
        case trailingBytes(count: Int)
        /// A length field disagrees with the bytes present or with a limit.
        case invalidLength(Int)
        /// A type, opcode or code value this decoder does not accept.
        case unknownValue(UInt64)
        /// A field holds a value the specification forbids.
        case invalidValue(String)
    }

    /// The class of problem.
    public var kind: Kind
    /// Byte offset, from the start of the buffer handed to the decoder, where it was found.
    public var offset: Int
    /// What was being decoded, e.g. `"ATT Read By Type Response"`.
    public var context: String

    public init(_ kind: Kind, at offset: Int, in context: String) {
        self.kind = kind
        self.offset = offset
        self.context = context
    }

    public var description: String {
        let what: String
        switch kind {
        case let .truncated(needed, available):
            what = "truncated: needs \(needed) byte\(needed == 1 ? "" : "s"), \(available) left"
        case let .trailingBytes(count):
            what = "\(count) unexpected trailing byte\(count == 1 ? "" : "s")"
        case let .invalidLength(length):
            what = "invalid length \(length)"
        case let .unknownValue(value):
            what = "unknown value 0x\(hex(value))"
        case let .invalidValue(detail):
            what = detail
        }
        return "\(context): \(what) at byte \(offset)"
    }
}

@inline(__always)
package func hex(_ value: some BinaryInteger) -> String {
    let s = String(value, radix: 16, uppercase: true)
    return s.count % 2 == 1 ? "0" + s : s
}
