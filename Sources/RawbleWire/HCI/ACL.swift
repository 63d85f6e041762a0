/// The 4-byte header of an HCI ACL data packet (Core Vol 4 Part E 5.4.2), without the H4
/// packet type byte: a little-endian u16 with the connection handle (bits 0-11), packet
/// boundary flag (bits 12-13) and broadcast flag (bits 14-15), then the data length (u16).
public struct ACLHeader: Hashable, Sendable {
    /// Packet boundary flag: how this fragment relates to the L2CAP PDU it carries.
    public enum PacketBoundary: UInt8, Hashable, Sendable, CaseIterable {
        /// `00`: first fragment, non-automatically-flushable (what an LE host sends).
        case firstNonFlushable = 0b00
        /// `01`: a continuation fragment.
        case continuation = 0b01
        /// `10`: first fragment, automatically flushable (what controllers send).
        case firstFlushable = 0b10
        /// `11`: reserved on LE (BR/EDR: a complete automatically-flushable PDU).
        case reserved = 0b11
    }

    /// Broadcast flag. LE uses only point-to-point.
    public enum Broadcast: UInt8, Hashable, Sendable, CaseIterable {
        case pointToPoint = 0b00
        /// BR/EDR active peripheral broadcast.
        case broadcast = 0b01
        case reserved2 = 0b10
        case reserved3 = 0b11
    }

    /// Connection handle, 12 bits (`0x0000...0x0EFF` valid). Only the low 12 bits are sent.
    public var handle: UInt16
    public var packetBoundary: PacketBoundary
    public var broadcast: Broadcast
    /// Number of payload bytes following the header.
    public var dataLength: UInt16

    public init(handle: UInt16, packetBoundary: PacketBoundary, broadcast: Broadcast = .pointToPoint,
                dataLength: UInt16) {
        self.handle = handle
        self.packetBoundary = packetBoundary
        self.broadcast = broadcast
        self.dataLength = dataLength
    }

    /// Whether this fragment starts an L2CAP PDU (either first-fragment flag).
    public var isFirstFragment: Bool { packetBoundary == .firstNonFlushable || packetBoundary == .firstFlushable }

    /// Reads a header from the front of `reader` (for framers that then read the payload).
    public init(from reader: inout ByteReader) throws(WireError) {
        let field = try reader.readUInt16()
        handle = field & 0x0FFF
        // Two-bit values: every pattern has a case, so the fallbacks are never taken.
        packetBoundary = PacketBoundary(rawValue: UInt8(truncatingIfNeeded: field >> 12) & 0b11) ?? .reserved
        broadcast = Broadcast(rawValue: UInt8(truncatingIfNeeded: field >> 14)) ?? .reserved3
        dataLength = try reader.readUInt16()
    }
}

extension ACLHeader: WireDecodable, WireEncodable {
    /// Decodes a header that fills `bytes` exactly (4 bytes).
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> ACLHeader {
        var reader = ByteReader(bytes, context: "HCI ACL header")
        let header = try ACLHeader(from: &reader)
        try reader.expectEnd()
        return header
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(handle & 0x0FFF | UInt16(packetBoundary.rawValue) << 12 | UInt16(broadcast.rawValue) << 14)
        writer.write(dataLength)
    }
}

/// An HCI ACL data packet without the H4 type byte: header and payload (a fragment of an
/// L2CAP PDU). The header's data length is always the payload's length, so the two cannot
/// disagree; decoding requires the length field to match the bytes present.
public struct ACLPacket: Hashable, Sendable {
    /// Connection handle, 12 bits. Only the low 12 bits are sent.
    public var handle: UInt16
    public var packetBoundary: ACLHeader.PacketBoundary
    public var broadcast: ACLHeader.Broadcast
    /// The payload, a slice of the input when decoded. At most 65,535 bytes can be encoded.
    public var payload: ArraySlice<UInt8>

    public init(handle: UInt16, packetBoundary: ACLHeader.PacketBoundary,
                broadcast: ACLHeader.Broadcast = .pointToPoint, payload: ArraySlice<UInt8>) {
        self.handle = handle
        self.packetBoundary = packetBoundary
        self.broadcast = broadcast
        self.payload = payload
    }

    /// The header this packet is sent with.
    public var header: ACLHeader {
        ACLHeader(handle: handle, packetBoundary: packetBoundary, broadcast: broadcast,
                  dataLength: UInt16(truncatingIfNeeded: payload.count))
    }
}

extension ACLPacket: WireDecodable, WireEncodable {
    /// Decodes a packet whose header's data length matches the bytes that follow exactly.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> ACLPacket {
        var reader = ByteReader(bytes, context: "HCI ACL data packet")
        let header = try ACLHeader(from: &reader)
        let length = Int(header.dataLength)
        if reader.count < length {
            throw reader.error(.truncated(needed: length, available: reader.count))
        }
        if reader.count > length {
            throw reader.error(.trailingBytes(count: reader.count - length), at: reader.offset + length)
        }
        return ACLPacket(handle: header.handle, packetBoundary: header.packetBoundary,
                         broadcast: header.broadcast, payload: reader.readRemaining())
    }

    public func encode(into writer: inout ByteWriter) {
        header.encode(into: &writer)
        writer.write(contentsOf: payload)
    }
}
