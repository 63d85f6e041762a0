// The typed bodies of AD structures (Core Specification Supplement Part A, section 1).
// They hold slices of the received bytes, so decoding copies nothing; strings and arrays are
// only made when a property asks for them.

/// The Flags AD type (Supplement Part A 1.3): discoverability and BR/EDR support bits.
public struct ADFlags: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let leLimitedDiscoverable = ADFlags(rawValue: 1 << 0)
    public static let leGeneralDiscoverable = ADFlags(rawValue: 1 << 1)
    public static let brEdrNotSupported = ADFlags(rawValue: 1 << 2)
    /// Simultaneous LE and BR/EDR to the same device capable (controller); deprecated in newer specs.
    public static let simultaneousLEAndBREDRController = ADFlags(rawValue: 1 << 3)
    /// Simultaneous LE and BR/EDR to the same device capable (host); deprecated in newer specs.
    public static let simultaneousLEAndBREDRHost = ADFlags(rawValue: 1 << 4)

    /// What a plain LE-only peripheral advertises: `06`.
    public static let generalDiscoverableLEOnly: ADFlags = [.leGeneralDiscoverable, .brEdrNotSupported]

    /// Names of the set bits, reserved bits as `bit N`.
    public var names: [String] {
        let known = ["LE Limited Discoverable", "LE General Discoverable", "BR/EDR Not Supported",
                     "Simultaneous LE and BR/EDR (Controller)", "Simultaneous LE and BR/EDR (Host)"]
        var out: [String] = []
        for bit in 0..<8 where rawValue & (1 << bit) != 0 {
            out.append(bit < known.count ? known[bit] : "bit \(bit)")
        }
        return out
    }

    public var description: String { names.isEmpty ? "none" : names.joined(separator: ", ") }
}

/// A list of UUIDs of one width (2, 4 or 16 bytes each), read in place from the AD bytes.
public struct UUIDList: RandomAccessCollection, Hashable, Sendable, CustomStringConvertible {
    /// Bytes per UUID: 2, 4 or 16.
    public let width: Int
    /// The UUIDs in wire order (little-endian each).
    public let bytes: ArraySlice<UInt8>

    /// Wraps bytes whose count is a multiple of `width` (checked by the decoder).
    @usableFromInline
    init(unchecked bytes: ArraySlice<UInt8>, width: Int) {
        self.bytes = bytes
        self.width = width
    }

    /// Builds a list of `width`-byte UUIDs; `nil` when `width` is not 2, 4 or 16 or a UUID has
    /// no form of that width (a 128-bit UUID in a 16-bit list).
    public init?(_ uuids: some Sequence<BluetoothUUID>, width: Int) {
        guard width == 2 || width == 4 || width == 16 else { return nil }
        var writer = ByteWriter(capacity: 16)
        for uuid in uuids {
            if width == 2, uuid.uuid16 == nil { return nil }
            if width == 4, uuid.uuid32 == nil { return nil }
            writer.write(uuid, width: width)
        }
        self.init(unchecked: writer.bytes[...], width: width)
    }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { bytes.count / width }

    @inlinable
    public subscript(position: Int) -> BluetoothUUID {
        let start = bytes.startIndex + position * width
        return BluetoothUUID(littleEndian: bytes[start..<(start + width)])
    }

    public var description: String { "[" + map(\.description).joined(separator: ", ") + "]" }
}

extension BluetoothUUID {
    /// Reads 2, 4 or 16 little-endian bytes (the caller guarantees the count).
    @inlinable
    init(littleEndian bytes: ArraySlice<UInt8>) {
        var low: UInt64 = 0, high: UInt64 = 0
        var shift: UInt64 = 0
        for (i, byte) in bytes.enumerated() {
            if i < 8 { low |= UInt64(byte) << shift } else { high |= UInt64(byte) << (shift - 64) }
            shift += 8
        }
        switch bytes.count {
        case 2: self.init(UInt16(truncatingIfNeeded: low))
        case 4: self.init(uuid32: UInt32(truncatingIfNeeded: low))
        default: self.init(high: high, low: low)
        }
    }
}

/// A Shortened or Complete Local Name (Supplement Part A 1.2). The bytes are kept as sent;
/// ``string`` decodes them on demand, replacing invalid UTF-8 with U+FFFD.
public struct LocalName: Hashable, Sendable, CustomStringConvertible {
    /// The name as sent (UTF-8 by the specification, but not always in practice).
    public let bytes: ArraySlice<UInt8>
    /// `true` for Complete Local Name (0x09), `false` for Shortened Local Name (0x08).
    public let isComplete: Bool

    @inlinable
    public init(bytes: ArraySlice<UInt8>, isComplete: Bool) {
        self.bytes = bytes
        self.isComplete = isComplete
    }

    public init(_ name: String, isComplete: Bool = true) {
        self.init(bytes: Array(name.utf8)[...], isComplete: isComplete)
    }

    /// The name as text; invalid UTF-8 becomes U+FFFD, so this never fails.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// Whether the bytes are well-formed UTF-8.
    public var isValidUTF8: Bool { String(validating: bytes, as: UTF8.self) != nil }

    public var description: String { string }
}

/// Manufacturer Specific Data (Supplement Part A 1.4): a company identifier and its data.
public struct ManufacturerData: Hashable, Sendable, CustomStringConvertible {
    /// Bluetooth SIG company identifier (little-endian on the wire).
    public var companyID: UInt16
    /// The bytes after the company identifier.
    public var data: ArraySlice<UInt8>

    @inlinable
    public init(companyID: UInt16, data: ArraySlice<UInt8>) {
        self.companyID = companyID
        self.data = data
    }

    public init(companyID: UInt16, data: [UInt8]) { self.init(companyID: companyID, data: data[...]) }

    /// The company's registered name, when ``AssignedNumbers/companyName(_:)`` knows it.
    public var companyName: String? { AssignedNumbers.companyName(companyID) }

    public var description: String {
        let id = "0x" + Hex.padded(companyID, digits: 4)
        let who = companyName.map { "\($0) (\(id))" } ?? id
        return data.isEmpty ? who : "\(who) \(Hex.encode(data))"
    }
}

/// Service Data (Supplement Part A 1.11): a service UUID and data, in 16-, 32- or 128-bit form.
public struct ServiceData: Hashable, Sendable, CustomStringConvertible {
    public let uuid: BluetoothUUID
    /// Bytes the UUID takes on the wire: 2 (AD 0x16), 4 (0x20) or 16 (0x21).
    public let width: Int
    public var data: ArraySlice<UInt8>

    @usableFromInline
    init(unchecked uuid: BluetoothUUID, width: Int, data: ArraySlice<UInt8>) {
        self.uuid = uuid
        self.width = width
        self.data = data
    }

    /// Service data for `uuid` in its shortest form, or in `width` bytes when given; `nil` when
    /// the UUID has no form of that width.
    public init?(uuid: BluetoothUUID, data: some Sequence<UInt8>, width: Int? = nil) {
        let w = width ?? uuid.shortestWidth
        switch w {
        case 2: guard uuid.uuid16 != nil else { return nil }
        case 4: guard uuid.uuid32 != nil else { return nil }
        case 16: break
        default: return nil
        }
        self.init(unchecked: uuid, width: w, data: ArraySlice(data))
    }

    public var description: String {
        let who = uuid.name.map { "\(uuid) \($0)" } ?? uuid.description
        return "\(who): \(Hex.encode(data))"
    }
}

/// Peripheral Connection Interval Range (Supplement Part A 1.9), in units of 1.25 ms;
/// `0xFFFF` means no specific value.
public struct ConnectionIntervalRange: Hashable, Sendable, CustomStringConvertible {
    public var minimum: UInt16
    public var maximum: UInt16

    /// The value meaning "no specific minimum/maximum".
    public static let noSpecificValue: UInt16 = 0xFFFF

    @inlinable
    public init(minimum: UInt16, maximum: UInt16) {
        self.minimum = minimum
        self.maximum = maximum
    }

    /// The minimum in milliseconds, `nil` for no specific value.
    public var minimumMilliseconds: Double? { minimum == Self.noSpecificValue ? nil : Double(minimum) * 1.25 }
    /// The maximum in milliseconds, `nil` for no specific value.
    public var maximumMilliseconds: Double? { maximum == Self.noSpecificValue ? nil : Double(maximum) * 1.25 }

    public var description: String {
        func ms(_ v: Double?) -> String { v.map { "\($0) ms" } ?? "any" }
        return "\(ms(minimumMilliseconds))–\(ms(maximumMilliseconds))"
    }
}

/// A list of 6-byte device addresses (Public/Random Target Address), read in place.
public struct AddressList: RandomAccessCollection, Hashable, Sendable, CustomStringConvertible {
    /// The addresses in wire order (6 bytes each, least-significant first).
    public let bytes: ArraySlice<UInt8>

    @usableFromInline
    init(unchecked bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    public init(_ addresses: some Sequence<BluetoothAddress>) {
        var writer = ByteWriter(capacity: 12)
        for a in addresses { writer.write(a) }
        self.init(unchecked: writer.bytes[...])
    }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { bytes.count / 6 }

    @inlinable
    public subscript(position: Int) -> BluetoothAddress {
        let start = bytes.startIndex + position * 6
        var value: UInt64 = 0
        for i in 0..<6 { value |= UInt64(bytes[start + i]) << (8 * UInt64(i)) }
        return BluetoothAddress(value)
    }

    public var description: String { "[" + map(\.description).joined(separator: ", ") + "]" }
}

/// Advertising Interval (AD 0x1A, 2 bytes) or Advertising Interval - long (AD 0x2F, 3 or 4
/// bytes), in units of 0.625 ms (Supplement Part A 1.15).
public struct AdvertisingInterval: Hashable, Sendable, CustomStringConvertible {
    /// The interval in 0.625 ms units.
    public let value: UInt32
    /// Bytes on the wire: 2 (AD type 0x1A) or 3–4 (AD type 0x2F).
    public let width: Int

    @usableFromInline
    init(unchecked value: UInt32, width: Int) {
        self.value = value
        self.width = width
    }

    /// An interval in the shortest form that holds it (2 bytes when it fits, else 3 or 4).
    public init(_ value: UInt32) {
        self.init(unchecked: value, width: value <= 0xFFFF ? 2 : (value <= 0xFF_FFFF ? 3 : 4))
    }

    public var milliseconds: Double { Double(value) * 0.625 }
    public var description: String { "\(milliseconds) ms" }
}

/// LE Bluetooth Device Address (Supplement Part A 1.16): an address and a flags byte whose
/// bit 0 is the address type (0 public, 1 random); other bits are reserved and kept.
public struct LEDeviceAddress: Hashable, Sendable, CustomStringConvertible {
    public var address: BluetoothAddress
    /// The raw flags byte as sent.
    public var flags: UInt8

    @inlinable
    public init(address: BluetoothAddress, flags: UInt8) {
        self.address = address
        self.flags = flags
    }

    public init(_ address: BluetoothAddress, type: LEAddressType) {
        self.init(address: address, flags: type.isPublic == false ? 1 : 0)
    }

    /// `.public` or `.random`, from bit 0.
    public var type: LEAddressType { flags & 1 == 0 ? .public : .random }
    public var deviceAddress: DeviceAddress { DeviceAddress(address, type: type) }
    public var description: String { "\(address) (\(type))" }
}

/// LE Role (Supplement Part A 1.17): which GAP roles the device supports and prefers.
public struct LERole: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let peripheralOnly = LERole(rawValue: 0x00)
    public static let centralOnly = LERole(rawValue: 0x01)
    public static let peripheralPreferred = LERole(rawValue: 0x02)
    public static let centralPreferred = LERole(rawValue: 0x03)

    public var name: String {
        switch rawValue {
        case 0x00: "Only Peripheral Role supported"
        case 0x01: "Only Central Role supported"
        case 0x02: "Peripheral and Central Role supported, Peripheral Role preferred"
        case 0x03: "Peripheral and Central Role supported, Central Role preferred"
        default: "Reserved (0x\(Hex.padded(rawValue, digits: 2)))"
        }
    }

    public var description: String { name }
}

/// A URI (Supplement Part A 1.18): the first UTF-8 code point names the scheme (Assigned
/// Numbers "URI Schemes", e.g. U+0017 = `https:`), the rest is the URI after the scheme.
public struct URI: Hashable, Sendable, CustomStringConvertible {
    /// The bytes as sent, scheme code point included.
    public let bytes: ArraySlice<UInt8>

    @inlinable
    public init(bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    /// Encodes `uri` with the longest assigned scheme it starts with, or with the empty scheme
    /// code (0x01) and the whole text when no scheme is assigned.
    public init(_ uri: String) {
        var best: (code: UInt32, length: Int)? = nil
        if let colon = uri.firstIndex(of: ":") {
            let scheme = String(uri[...colon])
            if let code = AssignedNumbers.uriSchemeCode(scheme) { best = (code, scheme.utf8.count) }
        }
        let code = best?.code ?? 0x01
        var out: [UInt8] = []
        // The code point in UTF-8 (all assigned ones are below U+0800).
        if let scalar = Unicode.Scalar(code) { out.append(contentsOf: String(Character(scalar)).utf8) }
        out.append(contentsOf: uri.utf8.dropFirst(best?.length ?? 0))
        self.init(bytes: out[...])
    }

    /// The scheme code point (the first UTF-8 scalar); `nil` when the bytes do not start with
    /// valid UTF-8.
    public var schemeCodePoint: UInt32? { leadingScalar?.value }

    private var leadingScalar: (value: UInt32, length: Int)? {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        switch decoder.decode(&iterator) {
        case .scalarValue(let s): return (s.value, UTF8.width(s))
        case .emptyInput, .error: return nil
        }
    }

    /// The scheme (`"https:"`; `""` for the empty scheme), `nil` when unassigned or unreadable.
    public var scheme: String? { schemeCodePoint.flatMap(AssignedNumbers.uriScheme) }

    /// The URI after the scheme code point, lossy UTF-8.
    public var remainder: String {
        String(decoding: bytes.dropFirst(leadingScalar?.length ?? 0), as: UTF8.self)
    }

    /// The whole URI when the scheme is known (`https://example.com`), else `nil`.
    public var string: String? { scheme.map { $0 + remainder } }

    public var description: String {
        if let s = string { return s }
        let code = schemeCodePoint.map { "U+" + Hex.padded($0, digits: 4) } ?? "?"
        return "[scheme \(code)]\(remainder)"
    }
}
