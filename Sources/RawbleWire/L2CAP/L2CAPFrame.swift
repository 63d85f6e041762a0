/// An L2CAP channel identifier (Core Vol 3 Part A 2.1): which fixed protocol or dynamic channel
/// an L2CAP frame belongs to. Unknown values keep their number.
public struct L2CAPChannelID: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    /// The null identifier, never used as a destination.
    public static let null = L2CAPChannelID(0x0000)
    /// BR/EDR L2CAP signaling channel.
    public static let signaling = L2CAPChannelID(0x0001)
    /// BR/EDR connectionless channel.
    public static let connectionless = L2CAPChannelID(0x0002)
    /// Attribute protocol (ATT) on LE.
    public static let att = L2CAPChannelID(0x0004)
    /// LE L2CAP signaling channel.
    public static let leSignaling = L2CAPChannelID(0x0005)
    /// Security Manager Protocol on LE.
    public static let securityManager = L2CAPChannelID(0x0006)
    /// Security Manager Protocol on BR/EDR.
    public static let brEDRSecurityManager = L2CAPChannelID(0x0007)

    /// The range of identifiers LE credit-based channels are allocated from (0x0040–0x007F).
    public static let leDynamicRange: ClosedRange<UInt16> = 0x0040...0x007F

    /// Whether this identifier lies in the LE dynamic range (credit-based channels).
    @inlinable public var isLEDynamic: Bool { Self.leDynamicRange.contains(rawValue) }

    /// A readable name: `"ATT"`, `"LE Signaling"`, `"SMP"`, `"Dynamic"`, or `"Reserved"`.
    public var name: String {
        switch rawValue {
        case 0x0000: "Null"
        case 0x0001: "Signaling"
        case 0x0002: "Connectionless"
        case 0x0003: "AMP Manager"
        case 0x0004: "ATT"
        case 0x0005: "LE Signaling"
        case 0x0006: "SMP"
        case 0x0007: "BR/EDR SMP"
        case 0x003F: "AMP Test Manager"
        case 0x0040...0xFFFF: "Dynamic"
        default: "Reserved"
        }
    }

    /// `ATT (0x0004)`.
    public var description: String { "\(name) (0x\(l2capHex4(rawValue)))" }

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

extension ByteReader {
    /// Reads a 2-byte L2CAP channel identifier.
    @inlinable
    public mutating func readChannelID() throws(WireError) -> L2CAPChannelID {
        L2CAPChannelID(try readUInt16())
    }
}

extension ByteWriter {
    @inlinable
    public mutating func write(_ channelID: L2CAPChannelID) {
        write(channelID.rawValue)
    }
}

/// The 4-byte L2CAP basic header, read without decoding the payload: what ACL reassembly
/// needs to know how many bytes the whole frame will have.
public struct L2CAPHeader: Hashable, Sendable {
    /// Size of the header on the wire.
    public static let size = 4

    /// Number of payload bytes that follow the header.
    public var length: UInt16
    /// The channel the payload belongs to.
    public var channelID: L2CAPChannelID

    @inlinable
    public init(length: UInt16, channelID: L2CAPChannelID) {
        self.length = length
        self.channelID = channelID
    }

    /// Reads the header from the first 4 bytes of `bytes`; `nil` when fewer are present.
    /// Never throws or traps, whatever the input.
    @inlinable
    public init?(peeking bytes: ArraySlice<UInt8>) {
        guard bytes.count >= Self.size else { return nil }
        let i = bytes.startIndex
        length = UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8
        channelID = L2CAPChannelID(UInt16(bytes[i + 2]) | UInt16(bytes[i + 3]) << 8)
    }

    /// Reads the header from the first 4 bytes of `bytes`; `nil` when fewer are present.
    @inlinable
    public init?(peeking bytes: [UInt8]) {
        self.init(peeking: bytes[...])
    }

    /// Header plus payload: the size of the complete frame.
    @inlinable public var frameLength: Int { Self.size + Int(length) }
}

/// An L2CAP basic frame (B-frame, Core Vol 3 Part A 3.1): length, channel identifier and the
/// payload of the protocol on that channel (ATT, LE signaling, SMP, ...).
///
/// Decoding requires the length field to equal the number of payload bytes present: a
/// reassembled frame with missing or extra bytes is a ``WireError``. The payload is a slice of
/// the input (no copy). Encoding writes `payload.count` as the length, so the payload must be
/// at most 65535 bytes.
public struct L2CAPFrame: Hashable, Sendable, WireEncodable, WireDecodable {
    public var channelID: L2CAPChannelID
    public var payload: ArraySlice<UInt8>

    @inlinable
    public init(channelID: L2CAPChannelID, payload: ArraySlice<UInt8>) {
        self.channelID = channelID
        self.payload = payload
    }

    @inlinable
    public init(channelID: L2CAPChannelID, payload: [UInt8]) {
        self.init(channelID: channelID, payload: payload[...])
    }

    /// The header this frame encodes with.
    @inlinable
    public var header: L2CAPHeader {
        L2CAPHeader(length: UInt16(truncatingIfNeeded: payload.count), channelID: channelID)
    }

    @inlinable
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> L2CAPFrame {
        var reader = ByteReader(bytes, context: "L2CAP basic frame")
        let length = Int(try reader.readUInt16())
        let channelID = try reader.readChannelID()
        if length > reader.count {
            throw reader.error(.truncated(needed: length, available: reader.count))
        }
        if length < reader.count {
            throw reader.error(.trailingBytes(count: reader.count - length), at: reader.offset + length)
        }
        return L2CAPFrame(channelID: channelID, payload: reader.readRemaining())
    }

    @inlinable
    public func encode(into writer: inout ByteWriter) {
        writer.write(UInt16(truncatingIfNeeded: payload.count))
        writer.write(channelID)
        writer.write(contentsOf: payload)
    }
}

/// Four upper-case hex digits, for handles and channel identifiers.
@usableFromInline
func l2capHex4(_ value: UInt16) -> String {
    let digits: [Character] = Array("0123456789ABCDEF")
    var s = ""
    for shift in stride(from: 12, through: 0, by: -4) {
        s.append(digits[Int((value >> UInt16(shift)) & 0xF)])
    }
    return s
}
