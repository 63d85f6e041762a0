/// A cursor over received bytes that never traps: every read checks the remaining length
/// and throws ``WireError`` with the absolute offset when the input is short.
///
/// Offsets are indices into the buffer the reader was created from, so an error deep inside
/// a nested structure still names the byte of the original input.
public struct ByteReader: Sendable {
    /// The bytes not read yet.
    public var remaining: ArraySlice<UInt8>
    /// What is being decoded, used in error messages.
    public var context: String

    @inlinable
    public init(_ bytes: ArraySlice<UInt8>, context: String) {
        self.remaining = bytes
        self.context = context
    }

    @inlinable
    public init(_ bytes: [UInt8], context: String) {
        self.init(bytes[...], context: context)
    }

    /// Index of the next byte, relative to the buffer the slice came from.
    @inlinable public var offset: Int { remaining.startIndex }
    /// Number of bytes left.
    @inlinable public var count: Int { remaining.count }
    @inlinable public var isAtEnd: Bool { remaining.isEmpty }

    @inlinable
    public func error(_ kind: WireError.Kind, at offset: Int? = nil) -> WireError {
        WireError(kind, at: offset ?? self.offset, in: context)
    }

    @inlinable
    mutating func need(_ n: Int) throws(WireError) {
        if n > remaining.count || n < 0 {
            throw error(.truncated(needed: n, available: remaining.count))
        }
    }

    @inlinable
    public mutating func readUInt8() throws(WireError) -> UInt8 {
        guard let byte = remaining.first else {
            throw error(.truncated(needed: 1, available: 0))
        }
        remaining = remaining.dropFirst()
        return byte
    }

    @inlinable
    public mutating func readInt8() throws(WireError) -> Int8 {
        Int8(bitPattern: try readUInt8())
    }

    /// Reads an unsigned little-endian integer of `byteCount` bytes (at most 8).
    @inlinable
    public mutating func readLittleEndian(byteCount: Int) throws(WireError) -> UInt64 {
        try need(byteCount)
        var value: UInt64 = 0
        var shift: UInt64 = 0
        let start = remaining.startIndex
        for i in start..<(start + min(byteCount, 8)) {
            value |= UInt64(remaining[i]) << shift
            shift += 8
        }
        remaining = remaining.dropFirst(byteCount)
        return value
    }

    @inlinable
    public mutating func readUInt16() throws(WireError) -> UInt16 {
        try need(2)
        let i = remaining.startIndex
        let value = UInt16(remaining[i]) | UInt16(remaining[i + 1]) << 8
        remaining = remaining.dropFirst(2)
        return value
    }

    @inlinable
    public mutating func readUInt24() throws(WireError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readLittleEndian(byteCount: 3))
    }

    @inlinable
    public mutating func readUInt32() throws(WireError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readLittleEndian(byteCount: 4))
    }

    @inlinable
    public mutating func readUInt64() throws(WireError) -> UInt64 {
        try readLittleEndian(byteCount: 8)
    }

    /// Reads a 128-bit value sent least significant octet first: how HCI and SMP carry keys,
    /// random numbers, confirm and check values.
    public mutating func readUInt128() throws(WireError) -> UInt128 {
        let low = try readUInt64()
        return UInt128(try readUInt64()) << 64 | UInt128(low)
    }

    @inlinable
    public mutating func readUInt16BigEndian() throws(WireError) -> UInt16 {
        try readUInt16().byteSwapped
    }

    @inlinable
    public mutating func readUInt32BigEndian() throws(WireError) -> UInt32 {
        try readUInt32().byteSwapped
    }

    @inlinable
    public mutating func readUInt64BigEndian() throws(WireError) -> UInt64 {
        try readUInt64().byteSwapped
    }

    /// Reads exactly `count` bytes as a slice of the input (no copy).
    @inlinable
    public mutating func readBytes(_ count: Int) throws(WireError) -> ArraySlice<UInt8> {
        try need(count)
        let bytes = remaining.prefix(count)
        remaining = remaining.dropFirst(count)
        return bytes
    }

    /// Reads everything that is left.
    @inlinable
    public mutating func readRemaining() -> ArraySlice<UInt8> {
        let bytes = remaining
        remaining = remaining.suffix(0)
        return bytes
    }

    /// Skips `count` bytes.
    @inlinable
    public mutating func skip(_ count: Int) throws(WireError) {
        try need(count)
        remaining = remaining.dropFirst(count)
    }

    /// Throws ``WireError/Kind/trailingBytes(count:)`` unless every byte was consumed.
    @inlinable
    public func expectEnd() throws(WireError) {
        if !remaining.isEmpty {
            throw error(.trailingBytes(count: remaining.count))
        }
    }

    /// Reads a sub-reader of `count` bytes that shares offsets with this one.
    @inlinable
    public mutating func subReader(_ count: Int, context: String? = nil) throws(WireError) -> ByteReader {
        ByteReader(try readBytes(count), context: context ?? self.context)
    }
}
