// The btsnoop capture format (RFC 1761 "snoop" adapted for HCI): a 16-byte file header, then
// records of a 24-byte header and the packet bytes; every integer big-endian. Read by
// Wireshark/tshark and btmon. These types only build and parse bytes; they never touch files.

/// The kind of packets a btsnoop file holds (header field `datalink`).
public struct BtsnoopDatalink: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt32) { self.rawValue = rawValue }

    /// HCI packets without a type byte; the record flags tell command, event or ACL apart.
    public static let unencapsulatedHCI = BtsnoopDatalink(1001)
    /// HCI UART (H4): each record is the packet type byte followed by the packet.
    public static let hciUART = BtsnoopDatalink(1002)
    /// BlueCore Serial Protocol.
    public static let bcsp = BtsnoopDatalink(1003)
    /// HCI Three-Wire UART (H5).
    public static let threeWireUART = BtsnoopDatalink(1004)
    /// Linux monitor channel (btmon): the flags carry the adapter index and a monitor opcode.
    public static let linuxMonitor = BtsnoopDatalink(2001)
    /// btmon's simulator (PHY) format.
    public static let simulator = BtsnoopDatalink(2002)

    /// The format's name, when known.
    public var name: String? {
        switch rawValue {
        case 1001: "HCI un-encapsulated"
        case 1002: "HCI UART (H4)"
        case 1003: "HCI BCSP"
        case 1004: "HCI Three-Wire UART (H5)"
        case 2001: "Linux monitor"
        case 2002: "simulator"
        default: nil
        }
    }

    public var description: String { name.map { "\($0) (\(rawValue))" } ?? "\(rawValue)" }
}

/// The 16-byte header that opens a btsnoop file: `btsnoop\0`, version 1, datalink.
public struct BtsnoopHeader: Hashable, Sendable {
    /// The identification pattern `btsnoop\0`.
    public static let identification: [UInt8] = Array("btsnoop".utf8) + [0]
    /// Size of the header in bytes.
    public static let byteCount = 16
    /// The only version defined.
    public static let supportedVersion: UInt32 = 1

    public var version: UInt32
    public var datalink: BtsnoopDatalink

    @inlinable
    public init(datalink: BtsnoopDatalink = .hciUART, version: UInt32 = BtsnoopHeader.supportedVersion) {
        self.version = version
        self.datalink = datalink
    }
}

extension BtsnoopHeader: WireDecodable, WireEncodable {
    /// Decodes the 16-byte header; a wrong pattern or a version other than 1 is an error.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> BtsnoopHeader {
        let header = try decodePrefix(bytes)
        if bytes.count > byteCount {
            throw WireError(.trailingBytes(count: bytes.count - byteCount), at: bytes.startIndex + byteCount, in: "btsnoop header")
        }
        return header
    }

    /// Decodes the header at the start of `bytes` (the records may follow).
    static func decodePrefix(_ bytes: ArraySlice<UInt8>) throws(WireError) -> BtsnoopHeader {
        do {
            return try validatedPrefix(bytes)
        } catch {
            throw WireError(error.wireKind, at: error.offset, in: "btsnoop header")
        }
    }

    /// The header at the start of `bytes` (at least 16 of them), or why it is not one.
    static func validatedPrefix(_ bytes: ArraySlice<UInt8>) throws(BtsnoopError) -> BtsnoopHeader {
        let start = bytes.startIndex
        guard bytes.count >= byteCount else {
            throw BtsnoopError(.truncatedHeader(available: bytes.count), at: start)
        }
        guard bytes.prefix(8).elementsEqual(identification) else {
            throw BtsnoopError(.badIdentification, at: start)
        }
        var reader = ByteReader(bytes.dropFirst(8).prefix(8), context: "btsnoop header")
        let version = (try? reader.readUInt32BigEndian()) ?? 0
        let datalink = (try? reader.readUInt32BigEndian()) ?? 0
        guard version == supportedVersion else {
            throw BtsnoopError(.unsupportedVersion(version), at: start + 8)
        }
        return BtsnoopHeader(datalink: BtsnoopDatalink(datalink), version: version)
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(contentsOf: Self.identification)
        writer.writeBigEndian(version)
        writer.writeBigEndian(datalink.rawValue)
    }
}

/// One captured packet: lengths, flags, drops, timestamp and the packet bytes.
public struct BtsnoopRecord: Hashable, Sendable {
    /// Size of a record header in bytes.
    public static let headerByteCount = 24
    /// The timestamp of the Unix epoch (1970-01-01T00:00:00Z) in btsnoop time: microseconds
    /// since midnight, 1 January of year 0 (proleptic Gregorian).
    public static let unixEpochTimestamp: Int64 = 0x00DC_DDB3_0F2F_8000

    /// Which way the packet went, from the host's point of view.
    public enum Direction: String, Hashable, Sendable {
        /// Host to controller.
        case sent
        /// Controller to host.
        case received
    }

    /// The record flags. For H4 and un-encapsulated files: bit 0 = received, bit 1 =
    /// command or event. For the Linux monitor datalink: adapter index << 16 | opcode.
    public struct Flags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt32
        @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Set for controller-to-host packets.
        public static let received = Flags(rawValue: 1 << 0)
        /// Set for commands and events, clear for data (ACL, SCO, ISO).
        public static let commandOrEvent = Flags(rawValue: 1 << 1)

        /// The flags a packet of this type and direction gets: command 2, event 3, data sent 0,
        /// data received 1.
        @inlinable
        public init(type: H4PacketType, direction: Direction) {
            var flags: Flags = direction == .received ? .received : []
            if type == .command || type == .event { flags.insert(.commandOrEvent) }
            self = flags
        }
    }

    /// Length of the packet as it was on the wire (may exceed the bytes kept).
    public var originalLength: UInt32
    public var flags: Flags
    /// Packets lost between the capture's start and this record.
    public var cumulativeDrops: UInt32
    /// Microseconds since midnight, 1 January of year 0. See ``unixMicroseconds``.
    public var timestamp: Int64
    /// The captured bytes (for datalink 1002: the H4 type byte, then the packet).
    public var data: ArraySlice<UInt8>

    @inlinable
    public init(
        originalLength: UInt32? = nil, flags: Flags, cumulativeDrops: UInt32 = 0, timestamp: Int64,
        data: ArraySlice<UInt8>
    ) {
        self.originalLength = originalLength ?? UInt32(truncatingIfNeeded: data.count)
        self.flags = flags
        self.cumulativeDrops = cumulativeDrops
        self.timestamp = timestamp
        self.data = data
    }

    @inlinable
    public init(
        originalLength: UInt32? = nil, flags: Flags, cumulativeDrops: UInt32 = 0, timestamp: Int64,
        data: some Sequence<UInt8>
    ) {
        self.init(
            originalLength: originalLength, flags: flags, cumulativeDrops: cumulativeDrops, timestamp: timestamp,
            data: ArraySlice(data))
    }

    /// A record for an HCI UART (1002) file: the H4 packet with its type byte, flags from its
    /// type and direction, time given in Unix microseconds.
    @inlinable
    public init(packet: H4Packet, direction: Direction, unixMicroseconds: Int64, cumulativeDrops: UInt32 = 0) {
        self.init(
            flags: Flags(type: packet.type, direction: direction), cumulativeDrops: cumulativeDrops,
            timestamp: unixMicroseconds &+ Self.unixEpochTimestamp, data: packet.encoded[...])
    }

    /// Number of bytes kept in the record (`data.count`).
    @inlinable
    public var includedLength: Int { data.count }

    /// The timestamp as microseconds since the Unix epoch (negative before 1970).
    @inlinable
    public var unixMicroseconds: Int64 {
        get { timestamp &- Self.unixEpochTimestamp }
        set { timestamp = newValue &+ Self.unixEpochTimestamp }
    }

    /// Direction from flag bit 0 (H4 and un-encapsulated files).
    @inlinable
    public var direction: Direction { flags.contains(.received) ? .received : .sent }

    /// Whether the capture kept fewer bytes than the packet had.
    @inlinable
    public var isTruncated: Bool { Int(originalLength) > data.count }

    /// Linux monitor (2001) records: the monitor opcode (low 16 bits of the flags), e.g. 2
    /// command, 3 event, 4/5 ACL sent/received.
    @inlinable
    public var monitorOpcode: BtsnoopMonitorOpcode { BtsnoopMonitorOpcode(UInt16(truncatingIfNeeded: flags.rawValue)) }

    /// Linux monitor (2001) records: the adapter index (`hciN`), high 16 bits of the flags.
    @inlinable
    public var monitorAdapterIndex: UInt16 { UInt16(truncatingIfNeeded: flags.rawValue >> 16) }

    /// The record's packet as H4, for the datalinks that carry HCI packets: 1002 (type byte in
    /// the data), 1001 (type from the flags; data packets taken as ACL) and 2001 (type from the
    /// monitor opcode). Returns `nil` for other datalinks and monitor records that are not HCI
    /// packets; throws when the bytes do not form a complete packet (e.g. a truncated capture).
    public func h4Packet(datalink: BtsnoopDatalink) throws(WireError) -> H4Packet? {
        switch datalink {
        case .hciUART:
            return try H4Packet.decode(data)
        case .unencapsulatedHCI:
            let type: H4PacketType
            if flags.contains(.commandOrEvent) {
                type = flags.contains(.received) ? .event : .command
            } else {
                type = .acl
            }
            return try Self.packet(type: type, bytes: data)
        case .linuxMonitor:
            guard let type = monitorOpcode.packetType else { return nil }
            return try Self.packet(type: type, bytes: data)
        default:
            return nil
        }
    }

    /// Direction for any datalink: flag bit 0, or the monitor opcode for 2001 (`nil` when the
    /// monitor record is not a packet).
    public func direction(datalink: BtsnoopDatalink) -> Direction? {
        guard datalink == .linuxMonitor else { return direction }
        return monitorOpcode.direction
    }

    static func packet(type: H4PacketType, bytes: ArraySlice<UInt8>) throws(WireError) -> H4Packet {
        var reader = ByteReader(bytes, context: type.packetContext)
        let header = try reader.readBytes(type.headerLength)
        _ = try reader.readBytes(type.payloadLength(header: header) ?? 0)
        try reader.expectEnd()
        return H4Packet(type: type, bytes: bytes)
    }
}

/// The record kinds of the Linux monitor datalink (2001), as btmon writes them.
public struct BtsnoopMonitorOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let newIndex = BtsnoopMonitorOpcode(0)
    public static let deleteIndex = BtsnoopMonitorOpcode(1)
    public static let commandPacket = BtsnoopMonitorOpcode(2)
    public static let eventPacket = BtsnoopMonitorOpcode(3)
    public static let aclSent = BtsnoopMonitorOpcode(4)
    public static let aclReceived = BtsnoopMonitorOpcode(5)
    public static let scoSent = BtsnoopMonitorOpcode(6)
    public static let scoReceived = BtsnoopMonitorOpcode(7)
    public static let openIndex = BtsnoopMonitorOpcode(8)
    public static let closeIndex = BtsnoopMonitorOpcode(9)
    public static let indexInfo = BtsnoopMonitorOpcode(10)
    public static let vendorDiagnostic = BtsnoopMonitorOpcode(11)
    public static let systemNote = BtsnoopMonitorOpcode(12)
    public static let userLogging = BtsnoopMonitorOpcode(13)
    public static let controlOpen = BtsnoopMonitorOpcode(14)
    public static let controlClose = BtsnoopMonitorOpcode(15)
    public static let controlCommand = BtsnoopMonitorOpcode(16)
    public static let controlEvent = BtsnoopMonitorOpcode(17)
    public static let isoSent = BtsnoopMonitorOpcode(18)
    public static let isoReceived = BtsnoopMonitorOpcode(19)

    /// The HCI packet type of a packet record, `nil` for the other record kinds.
    @inlinable
    public var packetType: H4PacketType? {
        switch rawValue {
        case 2: .command
        case 3: .event
        case 4, 5: .acl
        case 6, 7: .sco
        case 18, 19: .iso
        default: nil
        }
    }

    /// Direction of a packet record, `nil` for the other record kinds.
    @inlinable
    public var direction: BtsnoopRecord.Direction? {
        switch rawValue {
        case 2, 4, 6, 18: .sent
        case 3, 5, 7, 19: .received
        default: nil
        }
    }

    public var name: String? {
        let names = [
            "new index", "delete index", "command", "event", "ACL sent", "ACL received", "SCO sent",
            "SCO received", "open index", "close index", "index info", "vendor diagnostic",
            "system note", "user logging", "control open", "control close", "control command",
            "control event", "ISO sent", "ISO received",
        ]
        return Int(rawValue) < names.count ? names[Int(rawValue)] : nil
    }

    public var description: String { name ?? "monitor opcode \(rawValue)" }
}

extension BtsnoopRecord: WireDecodable, WireEncodable {
    /// Decodes one whole record (header and exactly `included length` bytes).
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> BtsnoopRecord {
        var reader = ByteReader(bytes, context: "btsnoop record")
        let fields = try RecordHeader.read(&reader)
        if let problem = fields.problem(maximumIncludedLength: Int(UInt32.max)) {
            throw WireError(BtsnoopError(problem, at: bytes.startIndex).wireKind, at: bytes.startIndex, in: "btsnoop record")
        }
        let data = try reader.readBytes(fields.includedLength)
        try reader.expectEnd()
        return fields.record(data: data)
    }

    public func encode(into writer: inout ByteWriter) {
        writer.writeBigEndian(originalLength)
        writer.writeBigEndian(UInt32(truncatingIfNeeded: data.count))
        writer.writeBigEndian(flags.rawValue)
        writer.writeBigEndian(cumulativeDrops)
        writer.writeBigEndian(UInt64(bitPattern: timestamp))
        writer.write(contentsOf: data)
    }
}

/// The fixed 24 bytes in front of each record's data.
struct RecordHeader {
    var originalLength: UInt32
    var includedLength: Int
    var flags: UInt32
    var drops: UInt32
    var timestamp: Int64

    static func read(_ reader: inout ByteReader) throws(WireError) -> RecordHeader {
        let original = try reader.readUInt32BigEndian()
        let included = try reader.readUInt32BigEndian()
        let flags = try reader.readUInt32BigEndian()
        let drops = try reader.readUInt32BigEndian()
        let time = Int64(bitPattern: try reader.readUInt64BigEndian())
        return RecordHeader(
            originalLength: original, includedLength: Int(included), flags: flags, drops: drops, timestamp: time)
    }

    /// What is wrong with the lengths, if anything.
    func problem(maximumIncludedLength: Int) -> BtsnoopError.Kind? {
        if includedLength > Int(originalLength) {
            return .includedLengthExceedsOriginal(included: includedLength, original: Int(originalLength))
        }
        if includedLength > maximumIncludedLength {
            return .includedLengthTooLarge(length: includedLength, maximum: maximumIncludedLength)
        }
        return nil
    }

    func record(data: ArraySlice<UInt8>) -> BtsnoopRecord {
        BtsnoopRecord(
            originalLength: originalLength, flags: BtsnoopRecord.Flags(rawValue: flags), cumulativeDrops: drops,
            timestamp: timestamp, data: data)
    }
}

/// Builds the bytes of a btsnoop file; the caller writes them wherever it likes.
public enum BtsnoopWriter {
    /// The 16-byte file header.
    public static func header(datalink: BtsnoopDatalink = .hciUART) -> [UInt8] {
        BtsnoopHeader(datalink: datalink).encoded
    }

    /// The bytes of one record.
    public static func record(_ record: BtsnoopRecord) -> [UInt8] {
        var writer = ByteWriter(capacity: BtsnoopRecord.headerByteCount + record.data.count)
        record.encode(into: &writer)
        return writer.bytes
    }

    /// A whole file: header and records.
    public static func file(datalink: BtsnoopDatalink = .hciUART, records: some Sequence<BtsnoopRecord>) -> [UInt8] {
        var writer = ByteWriter(capacity: 4096)
        BtsnoopHeader(datalink: datalink).encode(into: &writer)
        for record in records { record.encode(into: &writer) }
        return writer.bytes
    }
}
