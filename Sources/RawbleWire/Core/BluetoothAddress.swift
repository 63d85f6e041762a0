/// A 48-bit Bluetooth device address, printed most-significant byte first (`AA:BB:CC:DD:EE:FF`)
/// and carried on the wire least-significant byte first.
public struct BluetoothAddress: Hashable, Sendable, Comparable, LosslessStringConvertible {
    /// The address as a 48-bit integer (`AA:BB:…` is `0xAABB…`).
    public let value: UInt64

    @inlinable
    public init(_ value: UInt64) {
        self.value = value & 0xFFFF_FFFF_FFFF
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (case-insensitive; `-` also accepted as separator).
    public init?(_ description: String) {
        let parts = description.split(separator: ":", omittingEmptySubsequences: false)
        let fields = parts.count == 6 ? parts : description.split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count == 6 else { return nil }
        var v: UInt64 = 0
        for field in fields {
            guard field.count == 2, let byte = UInt8(field, radix: 16) else { return nil }
            v = v << 8 | UInt64(byte)
        }
        self.init(v)
    }

    /// The six bytes in wire order (least-significant first).
    @inlinable
    public var littleEndianBytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// Builds an address from six bytes in wire order.
    @inlinable
    public init?(littleEndianBytes bytes: some Collection<UInt8>) {
        guard bytes.count == 6 else { return nil }
        var v: UInt64 = 0
        for (i, b) in bytes.enumerated() { v |= UInt64(b) << (8 * UInt64(i)) }
        self.init(v)
    }

    public var description: String {
        let digits: [Character] = Array("0123456789ABCDEF")
        var s = ""
        s.reserveCapacity(17)
        for i in stride(from: 5, through: 0, by: -1) {
            let b = Int((value >> (8 * UInt64(i))) & 0xFF)
            s.append(digits[b >> 4])
            s.append(digits[b & 0xF])
            if i > 0 { s.append(":") }
        }
        return s
    }

    public static func < (a: Self, b: Self) -> Bool { a.value < b.value }

    /// The all-zero address (`BDADDR_ANY`).
    public static let any = BluetoothAddress(0)

    /// What a *random* address is, from its two most-significant bits (Core Vol 6 Part B 1.3.2).
    @inlinable
    public var randomKind: RandomAddressKind {
        switch value >> 46 {
        case 0b11: return .staticAddress
        case 0b01: return .resolvablePrivate
        case 0b00: return .nonResolvablePrivate
        default: return .reserved
        }
    }

    /// The sub-type of a random device address.
    public enum RandomAddressKind: String, Hashable, Sendable {
        case staticAddress = "static"
        case resolvablePrivate = "resolvable"
        case nonResolvablePrivate = "non-resolvable"
        case reserved = "reserved"
    }
}

extension ByteReader {
    /// Reads a 6-byte address in wire order.
    @inlinable
    public mutating func readAddress() throws(WireError) -> BluetoothAddress {
        BluetoothAddress(try readLittleEndian(byteCount: 6))
    }
}

extension ByteWriter {
    @inlinable
    public mutating func write(_ address: BluetoothAddress) {
        writeLittleEndian(address.value, byteCount: 6)
    }
}

/// The LE address type field used by HCI (`Peer_Address_Type`, `Own_Address_Type`, report
/// `Address_Type`). Values the spec may add later are kept in ``other(_:)``.
public enum LEAddressType: Hashable, Sendable, CustomStringConvertible {
    case `public`
    case random
    /// Public identity address resolved by the controller from an RPA.
    case publicIdentity
    /// Random (static) identity address resolved by the controller from an RPA.
    case randomIdentity
    /// Anonymous advertisement (extended advertising report, 0xFF).
    case anonymous
    case other(UInt8)

    @inlinable
    public init(rawValue: UInt8) {
        switch rawValue {
        case 0: self = .public
        case 1: self = .random
        case 2: self = .publicIdentity
        case 3: self = .randomIdentity
        case 0xFF: self = .anonymous
        default: self = .other(rawValue)
        }
    }

    @inlinable
    public var rawValue: UInt8 {
        switch self {
        case .public: 0
        case .random: 1
        case .publicIdentity: 2
        case .randomIdentity: 3
        case .anonymous: 0xFF
        case .other(let v): v
        }
    }

    /// `true` for the public kinds, `false` for random ones; `nil` when unknown.
    public var isPublic: Bool? {
        switch self {
        case .public, .publicIdentity: true
        case .random, .randomIdentity: false
        case .anonymous, .other: nil
        }
    }

    /// `public` or `random`, as the CLI and JSON show it.
    public var description: String {
        switch self {
        case .public: "public"
        case .random: "random"
        case .publicIdentity: "public"
        case .randomIdentity: "random"
        case .anonymous: "anonymous"
        case .other(let v): "0x\(hex(v))"
        }
    }
}

/// An LE device address together with its type: what identifies a peer.
public struct DeviceAddress: Hashable, Sendable, CustomStringConvertible {
    public var address: BluetoothAddress
    public var type: LEAddressType

    @inlinable
    public init(_ address: BluetoothAddress, type: LEAddressType) {
        self.address = address
        self.type = type
    }

    /// The four kinds of LE address a person distinguishes.
    public enum Kind: String, Hashable, Sendable {
        case `public`
        case randomStatic = "random static"
        case resolvablePrivate = "resolvable private"
        case nonResolvablePrivate = "non-resolvable private"
        case unknown
    }

    public var kind: Kind {
        switch type.isPublic {
        case true?: return .public
        case false?:
            switch address.randomKind {
            case .staticAddress: return .randomStatic
            case .resolvablePrivate: return .resolvablePrivate
            case .nonResolvablePrivate: return .nonResolvablePrivate
            case .reserved: return .unknown
            }
        case nil: return .unknown
        }
    }

    public var description: String { "\(address) (\(kind.rawValue))" }
}
