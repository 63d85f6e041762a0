/// A Bluetooth UUID of 16, 32 or 128 bits.
///
/// Stored as the full 128-bit value (16- and 32-bit UUIDs expanded over the Base UUID
/// `00000000-0000-1000-8000-00805F9B34FB`), so `180D`, `0000180D` and
/// `0000180D-0000-1000-8000-00805F9B34FB` are equal and hash alike. It prints in its
/// shortest form: 4 upper-case hex digits, 8, or the canonical 128-bit form.
public struct BluetoothUUID: Hashable, Sendable, Comparable, LosslessStringConvertible {
    /// Most-significant 64 bits of the 128-bit value.
    public let high: UInt64
    /// Least-significant 64 bits of the 128-bit value.
    public let low: UInt64

    /// The low 64 bits of the Base UUID (`8000-00805F9B34FB`).
    @usableFromInline static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB
    /// The low 32 bits of the Base UUID's high half (`0000-1000`).
    @usableFromInline static let baseHighLow: UInt64 = 0x0000_1000

    @inlinable
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A 16-bit assigned UUID.
    @inlinable
    public init(_ uuid16: UInt16) {
        self.init(uuid32: UInt32(uuid16))
    }

    /// A 32-bit UUID.
    @inlinable
    public init(uuid32: UInt32) {
        self.init(high: UInt64(uuid32) << 32 | Self.baseHighLow, low: Self.baseLow)
    }

    /// Whether this UUID lies in the Base UUID range (so it has a 32-bit form).
    @inlinable
    public var isBased: Bool { low == Self.baseLow && high & 0xFFFF_FFFF == Self.baseHighLow }

    /// The 16-bit form, when there is one.
    @inlinable
    public var uuid16: UInt16? {
        guard isBased, high >> 48 == 0 else { return nil }
        return UInt16(truncatingIfNeeded: high >> 32)
    }

    /// The 32-bit form, when there is one.
    @inlinable
    public var uuid32: UInt32? {
        guard isBased else { return nil }
        return UInt32(truncatingIfNeeded: high >> 32)
    }

    /// Bytes of the shortest form this UUID has: 2, 4 or 16.
    @inlinable
    public var shortestWidth: Int { uuid16 != nil ? 2 : (uuid32 != nil ? 4 : 16) }

    /// Parses `180D`, `0000180D` or `0000180D-0000-1000-8000-00805F9B34FB` (case-insensitive;
    /// the 128-bit form with or without dashes).
    public init?(_ description: String) {
        let hexDigits = description.filter { $0 != "-" }
        guard hexDigits.allSatisfy(\.isHexDigit) else { return nil }
        switch (description.count, hexDigits.count) {
        case (4, 4):
            guard let v = UInt16(hexDigits, radix: 16) else { return nil }
            self.init(v)
        case (8, 8):
            guard let v = UInt32(hexDigits, radix: 16) else { return nil }
            self.init(uuid32: v)
        case (36, 32), (32, 32):
            if description.count == 36 {
                let dashes = description.enumerated().filter { $0.element == "-" }.map(\.offset)
                guard dashes == [8, 13, 18, 23] else { return nil }
            }
            guard let h = UInt64(hexDigits.prefix(16), radix: 16),
                  let l = UInt64(hexDigits.suffix(16), radix: 16) else { return nil }
            self.init(high: h, low: l)
        default:
            return nil
        }
    }

    /// Decodes a UUID from its little-endian wire form of 2, 4 or 16 bytes.
    @inlinable
    public init?(littleEndianBytes bytes: some Collection<UInt8>) {
        var reader = ByteReader(Array(bytes), context: "UUID")
        switch bytes.count {
        case 2: guard let v = try? reader.readUInt16() else { return nil }; self.init(v)
        case 4: guard let v = try? reader.readUInt32() else { return nil }; self.init(uuid32: v)
        case 16:
            guard let l = try? reader.readUInt64(), let h = try? reader.readUInt64() else { return nil }
            self.init(high: h, low: l)
        default: return nil
        }
    }

    /// The little-endian wire form with the given width (2, 4 or 16 bytes).
    /// Asking for a width this UUID has no form of gives its 16-byte form.
    public func littleEndianBytes(width: Int? = nil) -> [UInt8] {
        var writer = ByteWriter(capacity: 16)
        writer.write(self, width: width ?? shortestWidth)
        return writer.bytes
    }

    public var description: String {
        if let u = uuid16 { return Hex.padded(u, digits: 4) }
        if let u = uuid32 { return Hex.padded(u, digits: 8) }
        return canonical128
    }

    /// The 128-bit canonical form, upper-case, even for 16-bit UUIDs.
    public var canonical128: String {
        let h = Hex.padded(high, digits: 16), l = Hex.padded(low, digits: 16)
        let all = Array(h + l)
        return String(all[0..<8]) + "-" + String(all[8..<12]) + "-" + String(all[12..<16]) + "-"
            + String(all[16..<20]) + "-" + String(all[20..<32])
    }

    public static func < (a: Self, b: Self) -> Bool { (a.high, a.low) < (b.high, b.low) }
}

extension ByteReader {
    /// Reads a UUID of `width` bytes (2, 4 or 16) in wire order.
    @inlinable
    public mutating func readUUID(width: Int) throws(WireError) -> BluetoothUUID {
        switch width {
        case 2: return BluetoothUUID(try readUInt16())
        case 4: return BluetoothUUID(uuid32: try readUInt32())
        case 16:
            let l = try readUInt64()
            let h = try readUInt64()
            return BluetoothUUID(high: h, low: l)
        default:
            throw error(.invalidLength(width))
        }
    }
}

extension ByteWriter {
    /// Writes a UUID in wire order with `width` bytes (2, 4 or 16); widths the UUID has no
    /// form of fall back to 16 bytes.
    @inlinable
    public mutating func write(_ uuid: BluetoothUUID, width: Int) {
        if width == 2, let u = uuid.uuid16 {
            write(u)
        } else if width == 4, let u = uuid.uuid32 {
            write(u)
        } else {
            write(uuid.low)
            write(uuid.high)
        }
    }
}
