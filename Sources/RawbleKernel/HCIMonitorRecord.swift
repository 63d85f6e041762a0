import RawbleWire

// The kernel's HCI monitor channel, sans I/O: records in, one adapter's H4 packets out. No
// socket here (that is HCIMonitorSocket.swift), so Scripts/fuzz compiles this file with the wire
// layer.

/// One record of the kernel's HCI monitor channel (`HCI_CHANNEL_MONITOR`, what btmon reads),
/// as one read returns it: a 6-byte header (opcode, adapter index, payload length; each u16
/// little-endian, `struct hci_mon_hdr`), then the payload. A packet record's payload is the
/// HCI packet without its H4 type byte; the opcode says the type and the direction.
public struct HCIMonitorRecord: Hashable, Sendable {
    /// Bytes of the header before the payload.
    public static let headerByteCount = 6
    /// The largest record (the header and a 16-bit length's worth of payload): a monitor socket
    /// drops what does not fit its read buffer, so a reader's buffer must be this big.
    public static let maximumByteCount = headerByteCount + Int(UInt16.max)
    /// `HCI_DEV_NONE`: the index of records about no adapter (system notes, control sockets).
    public static let noAdapter: UInt16 = 0xFFFF

    /// What the record is (the kernel's `HCI_MON_*` numbering, shared with btsnoop's 2001 datalink).
    public var opcode: BtsnoopMonitorOpcode
    /// The adapter the record is about (`hciN`'s N), or ``noAdapter``.
    public var adapterIndex: UInt16
    /// The bytes after the header.
    public var payload: ArraySlice<UInt8>

    public init(opcode: BtsnoopMonitorOpcode, adapterIndex: UInt16, payload: some Sequence<UInt8>) {
        self.opcode = opcode
        self.adapterIndex = adapterIndex
        self.payload = ArraySlice(payload)
    }

    /// Decodes one whole record: the header's length must account for exactly the bytes after
    /// it (the kernel writes one record per datagram, so anything else is damage).
    public static func decode(_ datagram: ArraySlice<UInt8>) throws(HCIMonitorError) -> HCIMonitorRecord {
        var reader = ByteReader(datagram, context: "HCI monitor record")
        guard let opcode = try? reader.readUInt16(), let index = try? reader.readUInt16(),
              let length = try? reader.readUInt16()
        else { throw .truncatedHeader(byteCount: datagram.count) }
        guard reader.count == Int(length) else {
            throw .lengthMismatch(declared: Int(length), actual: reader.count)
        }
        return HCIMonitorRecord(opcode: BtsnoopMonitorOpcode(opcode), adapterIndex: index, payload: reader.remaining)
    }

    /// The record as the kernel writes it (header, then payload); the length field is the
    /// payload's count, cut to 16 bits (a longer payload is not a record the kernel can send).
    public var encoded: [UInt8] {
        let length = UInt16(truncatingIfNeeded: payload.count)
        return [
            UInt8(truncatingIfNeeded: opcode.rawValue), UInt8(truncatingIfNeeded: opcode.rawValue >> 8),
            UInt8(truncatingIfNeeded: adapterIndex), UInt8(truncatingIfNeeded: adapterIndex >> 8),
            UInt8(truncatingIfNeeded: length), UInt8(truncatingIfNeeded: length >> 8),
        ] + payload
    }

    /// The HCI packet a packet record carries and which way it went (command → sent, event →
    /// received, ACL/SCO/ISO by their TX/RX opcodes); `nil` for the other record kinds. Throws
    /// ``HCIMonitorError/malformedPacket(opcode:_:)`` when the payload is not one whole packet
    /// of that type (its header's length field must match the bytes present).
    public func packet() throws(HCIMonitorError) -> HCIMonitorPacket? {
        guard let type = opcode.packetType, let direction = opcode.direction else { return nil }
        var reader = ByteReader(payload, context: type.name + " packet in an HCI monitor record")
        do {
            let header = try reader.readBytes(type.headerLength)
            _ = try reader.readBytes(type.payloadLength(header: header) ?? 0)
            try reader.expectEnd()
        } catch {
            throw .malformedPacket(opcode: opcode, error)
        }
        return HCIMonitorPacket(direction: direction, packet: H4Packet(type: type, bytes: payload))
    }
}

/// An HCI packet seen on the monitor channel, and which way it went between host and controller.
public struct HCIMonitorPacket: Hashable, Sendable {
    public var direction: BtsnoopRecord.Direction
    /// The packet with its H4 type (what a btsnoop 1002 capture stores).
    public var packet: H4Packet

    public init(direction: BtsnoopRecord.Direction, packet: H4Packet) {
        self.direction = direction
        self.packet = packet
    }
}

/// Why a monitor record could not be read. The reader counts it and goes on with the next one.
public enum HCIMonitorError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Fewer than the header's 6 bytes.
    case truncatedHeader(byteCount: Int)
    /// The header's length disagrees with the bytes after it.
    case lengthMismatch(declared: Int, actual: Int)
    /// A packet record whose payload is not one whole packet of its type.
    case malformedPacket(opcode: BtsnoopMonitorOpcode, WireError)

    public var description: String {
        switch self {
        case .truncatedHeader(let count):
            "HCI monitor record of \(count) byte\(count == 1 ? "" : "s"): shorter than its 6-byte header"
        case let .lengthMismatch(declared, actual):
            "HCI monitor record announces \(declared) payload bytes but has \(actual)"
        case let .malformedPacket(opcode, error):
            "HCI monitor \(opcode) record: \(error)"
        }
    }
}

/// Picks one adapter's packets out of the monitor channel's records, one record at a time:
/// every other adapter, every record that is not a packet (index and control notices, system
/// notes, logging) and every opcode newer than this decoder is skipped and counted, never an
/// error. Pure: bytes in, packets out.
public struct HCIMonitorDecoder: Sendable {
    /// What the decoder has seen so far, by outcome.
    public struct Counts: Hashable, Sendable {
        /// Packets of the adapter, handed out.
        public var packets = 0
        /// Records about another adapter (or none).
        public var otherAdapters = 0
        /// The adapter's records that are not packets (index, control, notes, logging).
        public var otherRecords = 0
        /// The adapter's records with an opcode this decoder does not know.
        public var unknownOpcodes = 0
        /// Records that did not decode (a short header, a wrong length, a broken packet).
        public var malformed = 0

        public init() {}
    }

    /// The adapter whose packets are wanted (`hciN`'s N).
    public let adapterIndex: UInt16
    public private(set) var counts = Counts()

    public init(adapterIndex: UInt16) {
        self.adapterIndex = adapterIndex
    }

    /// The adapter's packet in `datagram` (one read of the monitor socket), or `nil` when the
    /// record is skipped (counted in ``counts``). A record that does not decode is counted as
    /// malformed and thrown.
    public mutating func packet(in datagram: ArraySlice<UInt8>) throws(HCIMonitorError) -> HCIMonitorPacket? {
        do {
            let record = try HCIMonitorRecord.decode(datagram)
            guard record.adapterIndex == adapterIndex else {
                counts.otherAdapters += 1
                return nil
            }
            guard record.opcode.name != nil else {
                counts.unknownOpcodes += 1
                return nil
            }
            guard let packet = try record.packet() else {
                counts.otherRecords += 1
                return nil
            }
            counts.packets += 1
            return packet
        } catch {
            counts.malformed += 1
            throw error
        }
    }
}
