/// Builds outgoing PDUs: little-endian by default, as Bluetooth is.
public struct ByteWriter: Sendable {
    public var bytes: [UInt8]

    @inlinable
    public init(capacity: Int = 32) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inlinable public mutating func write(_ value: UInt8) { bytes.append(value) }
    @inlinable public mutating func write(_ value: Int8) { bytes.append(UInt8(bitPattern: value)) }

    @inlinable
    public mutating func write(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    @inlinable
    public mutating func writeUInt24(_ value: UInt32) {
        writeLittleEndian(UInt64(value), byteCount: 3)
    }

    @inlinable
    public mutating func write(_ value: UInt32) { writeLittleEndian(UInt64(value), byteCount: 4) }

    @inlinable
    public mutating func write(_ value: UInt64) { writeLittleEndian(value, byteCount: 8) }

    /// Writes a 128-bit value least significant octet first (HCI's and SMP's keys).
    public mutating func writeUInt128(_ value: UInt128) {
        write(UInt64(truncatingIfNeeded: value))
        write(UInt64(truncatingIfNeeded: value >> 64))
    }

    @inlinable
    public mutating func writeLittleEndian(_ value: UInt64, byteCount: Int) {
        for i in 0..<byteCount {
            bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))))
        }
    }

    @inlinable public mutating func writeBigEndian(_ value: UInt16) { write(value.byteSwapped) }
    @inlinable public mutating func writeBigEndian(_ value: UInt32) { write(value.byteSwapped) }
    @inlinable public mutating func writeBigEndian(_ value: UInt64) { write(value.byteSwapped) }

    @inlinable
    public mutating func write(contentsOf data: some Sequence<UInt8>) {
        bytes.append(contentsOf: data)
    }
}

/// A value that can be written to the wire.
public protocol WireEncodable {
    func encode(into writer: inout ByteWriter)
}

extension WireEncodable {
    /// The encoded bytes of this value.
    @inlinable
    public var encoded: [UInt8] {
        var writer = ByteWriter()
        encode(into: &writer)
        return writer.bytes
    }
}

/// A value that can be read from received bytes. Decoders never trap: malformed input is a
/// ``WireError`` naming the byte offset.
public protocol WireDecodable {
    /// Decodes one value that fills `bytes` exactly.
    static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> Self
}

extension WireDecodable {
    /// Decodes one value that fills `bytes` exactly.
    @inlinable
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> Self {
        try decode(bytes[...])
    }
}
