import RawbleWire

// The values the Security Manager's PDUs carry and its cryptography computes with. Nothing here
// imports swift-crypto: the PDU side of this module builds with the wire layer alone (Scripts/fuzz
// compiles it that way).

/// One coordinate of a point on the P-256 curve, a 256-bit number: the X or Y of a public key, or
/// a DHKey (the X of the point two keys agree on).
///
/// The specification prints these numbers most significant octet first, as in its sample data;
/// SMP carries them least significant octet first (Pairing Public Key, Core Vol 3 Part H 3.5.6).
/// Held as two 128-bit halves, so a coordinate is written in a test exactly as the specification
/// prints it: `P256Coordinate(high: 0x20b003d2_f297be2c_5e2c83a7_e9f9a5b9, low: 0xeff49111_acf4fddb_cc030148_0e359de6)`.
public struct P256Coordinate: Hashable, Sendable, CustomStringConvertible {
    /// The most significant 128 bits.
    public var high: UInt128
    /// The least significant 128 bits.
    public var low: UInt128

    /// The number `high · 2¹²⁸ + low`.
    public init(high: UInt128, low: UInt128) {
        self.high = high
        self.low = low
    }

    /// The number written in exactly 32 octets, most significant first (how swift-crypto and the
    /// specification write it); `nil` for any other count.
    public init?(bigEndianBytes bytes: some Collection<UInt8>) {
        guard bytes.count == 32 else { return nil }
        self.init(folding: bytes)
    }

    /// The octets of `bytes`, most significant first, shifted in one by one: the last 32 are kept.
    /// For the counts swift-crypto guarantees (a coordinate is always 32 octets), so no caller
    /// has to unwrap an optional that cannot be `nil`.
    init(folding bytes: some Sequence<UInt8>) {
        var high: UInt128 = 0
        var low: UInt128 = 0
        for byte in bytes {
            high = high << 8 | low >> 120
            low = low << 8 | UInt128(byte)
        }
        self.init(high: high, low: low)
    }

    /// The 32 octets, most significant first: what AES-CMAC's message takes in f4, f5 and g2.
    public var bigEndianBytes: [UInt8] { high.bigEndianBytes + low.bigEndianBytes }

    /// 64 hex digits, most significant first, as the specification prints it.
    public var description: String { Hex.encode(bigEndianBytes) }
}

/// A P-256 public key as the Pairing Public Key PDU carries it (Core Vol 3 Part H 3.5.6): X, then
/// Y, each 32 octets least significant first.
///
/// Nothing here says the point is on the curve: a received key is checked when it is used, by
/// `PairingKeyPair.dhKey(with:)`, which refuses a point off the curve (the invalid-curve attack,
/// CVE-2018-5383).
public struct PairingPublicKey: Hashable, Sendable {
    /// The X coordinate (what f4 and g2 take as U and V).
    public var x: P256Coordinate
    /// The Y coordinate.
    public var y: P256Coordinate

    public init(x: P256Coordinate, y: P256Coordinate) {
        self.x = x
        self.y = y
    }
}

/// What a Keypress Notification tells the peer during Passkey Entry (Core Vol 3 Part H 3.5.8).
/// Values 5–255 are reserved: a PDU carrying one does not decode.
public enum SMPKeypressNotificationType: UInt8, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case passkeyEntryStarted = 0
    case passkeyDigitEntered = 1
    case passkeyDigitErased = 2
    case passkeyCleared = 3
    case passkeyEntryCompleted = 4

    /// The specification's name, e.g. `Passkey digit entered`.
    public var description: String {
        switch self {
        case .passkeyEntryStarted: "Passkey entry started"
        case .passkeyDigitEntered: "Passkey digit entered"
        case .passkeyDigitErased: "Passkey digit erased"
        case .passkeyCleared: "Passkey cleared"
        case .passkeyEntryCompleted: "Passkey entry completed"
        }
    }
}

extension UInt128 {
    /// The 16 octets, most significant first: how the specification writes a 128-bit value and
    /// how AES and AES-CMAC take their keys and blocks.
    var bigEndianBytes: [UInt8] {
        (0..<16).map { UInt8(truncatingIfNeeded: self >> (8 * (15 - $0))) }
    }

    /// The number written in `bytes`, most significant first (16 octets for a full value).
    init(bigEndianBytes bytes: some Sequence<UInt8>) {
        self = bytes.reduce(0) { $0 << 8 | UInt128($1) }
    }
}

extension DeviceAddress {
    /// The address type as SMP writes it beside an address: 0 public, 1 random (Identity Address
    /// Information, and the A1/A2, iat/rat inputs of f5, f6 and c1). Public identity addresses
    /// count as public and random identity addresses as random; a type that names neither
    /// (anonymous, unknown) as public, since SMP has no value for it.
    var smpAddressType: UInt8 { type.isPublic == false ? 1 : 0 }

    /// The 56-bit A1/A2 of f5 and f6, most significant octet first: the address type, then the
    /// six octets of the address.
    var smpTypedAddressBytes: [UInt8] {
        [smpAddressType] + (0..<6).map { UInt8(truncatingIfNeeded: address.value >> (8 * (5 - $0))) }
    }
}

extension ByteReader {
    /// Reads a P-256 coordinate sent least significant octet first (32 octets).
    mutating func readP256Coordinate() throws(WireError) -> P256Coordinate {
        let low = try readUInt128()
        let high = try readUInt128()
        return P256Coordinate(high: high, low: low)
    }
}

extension ByteWriter {
    /// Writes a P-256 coordinate least significant octet first (32 octets).
    mutating func writeP256Coordinate(_ value: P256Coordinate) {
        writeUInt128(value.low)
        writeUInt128(value.high)
    }
}
