/// The packet indicator byte that precedes every HCI packet on a byte-stream transport
/// (UART, TCP, unix socket): Core Vol 4 Part A 2.
public enum H4PacketType: UInt8, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case command = 0x01
    case acl = 0x02
    case sco = 0x03
    case event = 0x04
    case iso = 0x05

    /// Bytes of the packet header after the type byte, up to and including the length field.
    @inlinable
    public var headerLength: Int {
        switch self {
        case .command: 3  // opcode u16, length u8
        case .acl: 4  // handle u16, length u16
        case .sco: 3  // handle u16, length u8
        case .event: 2  // code u8, length u8
        case .iso: 4  // handle u16, length u16 (14 bits)
        }
    }

    /// The largest payload the header's length field can announce.
    @inlinable
    public var maximumPayloadLength: Int {
        switch self {
        case .command, .sco, .event: 255
        case .acl: 65_535
        case .iso: 16_383
        }
    }

    /// The payload length announced by a header (the bytes after the type byte), read from its
    /// own length field; the ISO length keeps only its 14 defined bits. `nil` when `header` is
    /// shorter than ``headerLength``.
    @inlinable
    public func payloadLength(header: ArraySlice<UInt8>) -> Int? {
        guard header.count >= headerLength else { return nil }
        let i = header.startIndex
        switch self {
        case .command, .sco:
            return Int(header[i + 2])
        case .event:
            return Int(header[i + 1])
        case .acl:
            return Int(header[i + 2]) | Int(header[i + 3]) << 8
        case .iso:
            return (Int(header[i + 2]) | Int(header[i + 3]) << 8) & 0x3FFF
        }
    }

    /// `command`, `event`, `acl`, `sco`, `iso`: the names the CLI prints.
    @inlinable
    public var name: String {
        switch self {
        case .command: "command"
        case .acl: "acl"
        case .sco: "sco"
        case .event: "event"
        case .iso: "iso"
        }
    }

    public var description: String { name }

    /// Error context for a packet of this type, e.g. `"H4 event packet"` (a literal: no allocation).
    @inlinable
    var packetContext: String {
        switch self {
        case .command: "H4 command packet"
        case .acl: "H4 acl packet"
        case .sco: "H4 sco packet"
        case .event: "H4 event packet"
        case .iso: "H4 iso packet"
        }
    }
}

/// One HCI packet as carried on an H4 stream: its type and its bytes after the type byte
/// (header and payload). The wire form is the type byte followed by those bytes.
public struct H4Packet: Hashable, Sendable, CustomStringConvertible {
    public var type: H4PacketType
    /// The packet without the type byte: header (with its length field) and payload.
    public var bytes: ArraySlice<UInt8>

    /// A packet of `type` whose bytes (header and payload) are `bytes`. Not checked: use
    /// ``decode(_:)`` to validate received bytes.
    @inlinable
    public init(type: H4PacketType, bytes: some Sequence<UInt8>) {
        self.type = type
        self.bytes = ArraySlice(bytes)
    }

    @inlinable
    public init(type: H4PacketType, bytes: ArraySlice<UInt8>) {
        self.type = type
        self.bytes = bytes
    }

    /// The payload after the header (empty if the header itself is incomplete).
    @inlinable
    public var payload: ArraySlice<UInt8> {
        bytes.dropFirst(type.headerLength)
    }

    public var description: String {
        "\(type) \(Hex.encode(bytes, separator: " "))"
    }
}

extension H4Packet: WireDecodable, WireEncodable {
    /// Decodes `type byte + packet`; the header's length field must match the bytes present.
    @inlinable
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> H4Packet {
        var reader = ByteReader(bytes, context: "H4 packet")
        let typeOffset = reader.offset
        let typeByte = try reader.readUInt8()
        guard let type = H4PacketType(rawValue: typeByte) else {
            throw reader.error(.unknownValue(UInt64(typeByte)), at: typeOffset)
        }
        reader.context = type.packetContext
        let body = reader.remaining
        let header = try reader.readBytes(type.headerLength)
        _ = try reader.readBytes(type.payloadLength(header: header) ?? 0)
        try reader.expectEnd()
        return H4Packet(type: type, bytes: body)
    }

    @inlinable
    public func encode(into writer: inout ByteWriter) {
        writer.write(type.rawValue)
        writer.write(contentsOf: bytes)
    }
}
