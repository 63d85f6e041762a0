// Parameter blocks of the HCI commands with many fields. Raw fields keep the specification's
// integer units (so every byte round-trips); computed properties give milliseconds.

extension HCICommand {
    /// The connection parameters shared by LE Create Connection, LE Extended Create Connection,
    /// LE Connection Update and LE Remote Connection Parameter Request Reply (12 bytes).
    public struct ConnectionParameters: Hashable, Sendable {
        /// `Connection_Interval_Min`, units of 1.25 ms (valid 0x0006–0x0C80).
        public var intervalMin: UInt16
        /// `Connection_Interval_Max`, units of 1.25 ms (valid 0x0006–0x0C80).
        public var intervalMax: UInt16
        /// `Max_Latency`: connection events the peripheral may skip (valid 0–0x01F3).
        public var maxLatency: UInt16
        /// `Supervision_Timeout`, units of 10 ms (valid 0x000A–0x0C80).
        public var supervisionTimeout: UInt16
        /// `Min_CE_Length`, units of 0.625 ms: a hint for the connection event length.
        public var minCELength: UInt16
        /// `Max_CE_Length`, units of 0.625 ms.
        public var maxCELength: UInt16

        public init(
            intervalMin: UInt16, intervalMax: UInt16, maxLatency: UInt16, supervisionTimeout: UInt16,
            minCELength: UInt16 = 0, maxCELength: UInt16 = 0
        ) {
            self.intervalMin = intervalMin
            self.intervalMax = intervalMax
            self.maxLatency = maxLatency
            self.supervisionTimeout = supervisionTimeout
            self.minCELength = minCELength
            self.maxCELength = maxCELength
        }

        public var intervalMinMilliseconds: Double { hciMilliseconds(intervalMin, unit: 1.25) }
        public var intervalMaxMilliseconds: Double { hciMilliseconds(intervalMax, unit: 1.25) }
        public var supervisionTimeoutMilliseconds: Double { hciMilliseconds(supervisionTimeout, unit: 10) }
        public var minCELengthMilliseconds: Double { hciMilliseconds(minCELength, unit: 0.625) }
        public var maxCELengthMilliseconds: Double { hciMilliseconds(maxCELength, unit: 0.625) }

        static let byteCount = 12

        init(from reader: inout ByteReader) throws(WireError) {
            intervalMin = try reader.readUInt16()
            intervalMax = try reader.readUInt16()
            maxLatency = try reader.readUInt16()
            supervisionTimeout = try reader.readUInt16()
            minCELength = try reader.readUInt16()
            maxCELength = try reader.readUInt16()
        }

        func write(to writer: inout ByteWriter) {
            writer.write(intervalMin)
            writer.write(intervalMax)
            writer.write(maxLatency)
            writer.write(supervisionTimeout)
            writer.write(minCELength)
            writer.write(maxCELength)
        }
    }

    /// LE Set Scan Parameters (`0x200B`, 7 bytes): legacy scanning on the 1M PHY.
    public struct ScanParameters: Hashable, Sendable {
        public var type: ScanType
        /// `LE_Scan_Interval`, units of 0.625 ms (valid 0x0004–0x4000).
        public var interval: UInt16
        /// `LE_Scan_Window`, units of 0.625 ms, at most ``interval``.
        public var window: UInt16
        public var ownAddressType: OwnAddressType
        public var filterPolicy: ScanFilterPolicy

        public init(
            type: ScanType, interval: UInt16, window: UInt16,
            ownAddressType: OwnAddressType = .public, filterPolicy: ScanFilterPolicy = .basicUnfiltered
        ) {
            self.type = type
            self.interval = interval
            self.window = window
            self.ownAddressType = ownAddressType
            self.filterPolicy = filterPolicy
        }

        public var intervalMilliseconds: Double { hciMilliseconds(interval, unit: 0.625) }
        public var windowMilliseconds: Double { hciMilliseconds(window, unit: 0.625) }

        /// The first five bytes, laid out as one PHY's scan settings in the extended command.
        private var timing: PHYScanParameters { PHYScanParameters(type: type, interval: interval, window: window) }

        init(from reader: inout ByteReader) throws(WireError) {
            let timing = try PHYScanParameters(from: &reader)
            (type, interval, window) = (timing.type, timing.interval, timing.window)
            ownAddressType = OwnAddressType(rawValue: try reader.readUInt8())
            filterPolicy = ScanFilterPolicy(rawValue: try reader.readUInt8())
        }

        func write(to writer: inout ByteWriter) {
            timing.write(to: &writer)
            writer.write(ownAddressType.rawValue)
            writer.write(filterPolicy.rawValue)
        }
    }

    /// Scan settings for one PHY in LE Set Extended Scan Parameters (5 bytes).
    public struct PHYScanParameters: Hashable, Sendable {
        public var type: ScanType
        /// `Scan_Interval`, units of 0.625 ms (valid 0x0004–0xFFFF).
        public var interval: UInt16
        /// `Scan_Window`, units of 0.625 ms, at most ``interval``.
        public var window: UInt16

        public init(type: ScanType, interval: UInt16, window: UInt16) {
            self.type = type
            self.interval = interval
            self.window = window
        }

        public var intervalMilliseconds: Double { hciMilliseconds(interval, unit: 0.625) }
        public var windowMilliseconds: Double { hciMilliseconds(window, unit: 0.625) }

        init(from reader: inout ByteReader) throws(WireError) {
            type = ScanType(rawValue: try reader.readUInt8())
            interval = try reader.readUInt16()
            window = try reader.readUInt16()
        }

        func write(to writer: inout ByteWriter) {
            writer.write(type.rawValue)
            writer.write(interval)
            writer.write(window)
        }
    }

    /// LE Set Extended Scan Parameters (`0x2041`): one parameter set per scanning PHY.
    ///
    /// `Scanning_PHYs` is derived from which PHYs have settings: bit 0 LE 1M, bit 2 LE Coded.
    /// Decoding rejects the reserved bits (their parameter layout is not defined).
    public struct ExtendedScanParameters: Hashable, Sendable {
        public var ownAddressType: OwnAddressType
        public var filterPolicy: ScanFilterPolicy
        /// Scanning on the LE 1M PHY, or `nil` not to scan on it.
        public var le1M: PHYScanParameters?
        /// Scanning on the LE Coded PHY, or `nil` not to scan on it.
        public var leCoded: PHYScanParameters?

        public init(
            ownAddressType: OwnAddressType = .public, filterPolicy: ScanFilterPolicy = .basicUnfiltered,
            le1M: PHYScanParameters?, leCoded: PHYScanParameters? = nil
        ) {
            self.ownAddressType = ownAddressType
            self.filterPolicy = filterPolicy
            self.le1M = le1M
            self.leCoded = leCoded
        }

        /// The `Scanning_PHYs` bit mask.
        public var scanningPHYs: UInt8 { (le1M != nil ? 0b001 : 0) | (leCoded != nil ? 0b100 : 0) }

        init(from reader: inout ByteReader) throws(WireError) {
            ownAddressType = OwnAddressType(rawValue: try reader.readUInt8())
            filterPolicy = ScanFilterPolicy(rawValue: try reader.readUInt8())
            let physOffset = reader.offset
            let phys = try reader.readUInt8()
            if phys & ~0b101 != 0 {
                throw reader.error(.invalidValue("reserved Scanning_PHYs bits 0x\(hex(phys & ~0b101))"), at: physOffset)
            }
            le1M = phys & 0b001 != 0 ? try PHYScanParameters(from: &reader) : nil
            leCoded = phys & 0b100 != 0 ? try PHYScanParameters(from: &reader) : nil
        }

        func write(to writer: inout ByteWriter) {
            writer.write(ownAddressType.rawValue)
            writer.write(filterPolicy.rawValue)
            writer.write(scanningPHYs)
            le1M?.write(to: &writer)
            leCoded?.write(to: &writer)
        }
    }

    /// LE Set Extended Scan Enable (`0x2042`, 6 bytes).
    public struct ExtendedScanEnable: Hashable, Sendable {
        public var enable: Bool
        public var filterDuplicates: FilterDuplicates
        /// `Duration`, units of 10 ms; 0 scans until disabled.
        public var duration: UInt16
        /// `Period`, units of 1.28 s; 0 scans continuously.
        public var period: UInt16

        public init(enable: Bool, filterDuplicates: FilterDuplicates = .disabled, duration: UInt16 = 0, period: UInt16 = 0) {
            self.enable = enable
            self.filterDuplicates = filterDuplicates
            self.duration = duration
            self.period = period
        }

        public var durationMilliseconds: Double { hciMilliseconds(duration, unit: 10) }
        public var periodSeconds: Double { Double(period) * 1.28 }

        init(from reader: inout ByteReader) throws(WireError) {
            enable = try HCICommand.readFlag(&reader, field: "Enable")
            filterDuplicates = FilterDuplicates(rawValue: try reader.readUInt8())
            duration = try reader.readUInt16()
            period = try reader.readUInt16()
        }

        func write(to writer: inout ByteWriter) {
            writer.write(UInt8(enable ? 1 : 0))
            writer.write(filterDuplicates.rawValue)
            writer.write(duration)
            writer.write(period)
        }
    }

    /// LE Create Connection (`0x200D`, 25 bytes): connect on the 1M PHY from legacy advertising.
    public struct CreateConnection: Hashable, Sendable, PeerAddressed, InitiatorScanTiming {
        /// `LE_Scan_Interval`, units of 0.625 ms.
        public var scanInterval: UInt16
        /// `LE_Scan_Window`, units of 0.625 ms.
        public var scanWindow: UInt16
        public var filterPolicy: InitiatorFilterPolicy
        public var peerAddressType: LEAddressType
        public var peerAddress: BluetoothAddress
        public var ownAddressType: OwnAddressType
        public var connection: ConnectionParameters

        public init(
            scanInterval: UInt16, scanWindow: UInt16, filterPolicy: InitiatorFilterPolicy = .peerAddress,
            peerAddressType: LEAddressType, peerAddress: BluetoothAddress,
            ownAddressType: OwnAddressType = .public, connection: ConnectionParameters
        ) {
            self.scanInterval = scanInterval
            self.scanWindow = scanWindow
            self.filterPolicy = filterPolicy
            self.peerAddressType = peerAddressType
            self.peerAddress = peerAddress
            self.ownAddressType = ownAddressType
            self.connection = connection
        }

        init(from reader: inout ByteReader) throws(WireError) {
            scanInterval = try reader.readUInt16()
            scanWindow = try reader.readUInt16()
            filterPolicy = InitiatorFilterPolicy(rawValue: try reader.readUInt8())
            peerAddressType = LEAddressType(rawValue: try reader.readUInt8())
            peerAddress = try reader.readAddress()
            ownAddressType = OwnAddressType(rawValue: try reader.readUInt8())
            connection = try ConnectionParameters(from: &reader)
        }

        func write(to writer: inout ByteWriter) {
            writer.write(scanInterval)
            writer.write(scanWindow)
            writer.write(filterPolicy.rawValue)
            writer.write(peerAddressType.rawValue)
            writer.write(peerAddress)
            writer.write(ownAddressType.rawValue)
            connection.write(to: &writer)
        }
    }

    /// Initiating settings for one PHY in LE Extended Create Connection (16 bytes).
    public struct PHYConnectionParameters: Hashable, Sendable, InitiatorScanTiming {
        /// `Scan_Interval`, units of 0.625 ms.
        public var scanInterval: UInt16
        /// `Scan_Window`, units of 0.625 ms.
        public var scanWindow: UInt16
        public var connection: ConnectionParameters

        public init(scanInterval: UInt16, scanWindow: UInt16, connection: ConnectionParameters) {
            self.scanInterval = scanInterval
            self.scanWindow = scanWindow
            self.connection = connection
        }

        init(from reader: inout ByteReader) throws(WireError) {
            scanInterval = try reader.readUInt16()
            scanWindow = try reader.readUInt16()
            connection = try ConnectionParameters(from: &reader)
        }

        func write(to writer: inout ByteWriter) {
            writer.write(scanInterval)
            writer.write(scanWindow)
            connection.write(to: &writer)
        }
    }

    /// LE Extended Create Connection v1 (`0x2043`): one parameter set per initiating PHY.
    ///
    /// `Initiating_PHYs` is derived from which PHYs have settings: bit 0 LE 1M, bit 1 LE 2M,
    /// bit 2 LE Coded. Decoding rejects the reserved bits 3–7.
    public struct ExtendedCreateConnection: Hashable, Sendable, PeerAddressed {
        public var filterPolicy: InitiatorFilterPolicy
        public var ownAddressType: OwnAddressType
        public var peerAddressType: LEAddressType
        public var peerAddress: BluetoothAddress
        public var le1M: PHYConnectionParameters?
        public var le2M: PHYConnectionParameters?
        public var leCoded: PHYConnectionParameters?

        public init(
            filterPolicy: InitiatorFilterPolicy = .peerAddress, ownAddressType: OwnAddressType = .public,
            peerAddressType: LEAddressType, peerAddress: BluetoothAddress,
            le1M: PHYConnectionParameters?, le2M: PHYConnectionParameters? = nil,
            leCoded: PHYConnectionParameters? = nil
        ) {
            self.filterPolicy = filterPolicy
            self.ownAddressType = ownAddressType
            self.peerAddressType = peerAddressType
            self.peerAddress = peerAddress
            self.le1M = le1M
            self.le2M = le2M
            self.leCoded = leCoded
        }

        /// The `Initiating_PHYs` bit mask.
        public var initiatingPHYs: UInt8 {
            (le1M != nil ? 0b001 : 0) | (le2M != nil ? 0b010 : 0) | (leCoded != nil ? 0b100 : 0)
        }

        init(from reader: inout ByteReader) throws(WireError) {
            filterPolicy = InitiatorFilterPolicy(rawValue: try reader.readUInt8())
            ownAddressType = OwnAddressType(rawValue: try reader.readUInt8())
            peerAddressType = LEAddressType(rawValue: try reader.readUInt8())
            peerAddress = try reader.readAddress()
            let physOffset = reader.offset
            let phys = try reader.readUInt8()
            if phys & ~0b111 != 0 {
                throw reader.error(.invalidValue("reserved Initiating_PHYs bits 0x\(hex(phys & ~0b111))"), at: physOffset)
            }
            le1M = phys & 0b001 != 0 ? try PHYConnectionParameters(from: &reader) : nil
            le2M = phys & 0b010 != 0 ? try PHYConnectionParameters(from: &reader) : nil
            leCoded = phys & 0b100 != 0 ? try PHYConnectionParameters(from: &reader) : nil
        }

        func write(to writer: inout ByteWriter) {
            writer.write(filterPolicy.rawValue)
            writer.write(ownAddressType.rawValue)
            writer.write(peerAddressType.rawValue)
            writer.write(peerAddress)
            writer.write(initiatingPHYs)
            le1M?.write(to: &writer)
            le2M?.write(to: &writer)
            leCoded?.write(to: &writer)
        }
    }

    /// LE Set Advertising Parameters (`0x2006`, 15 bytes): legacy advertising.
    public struct AdvertisingParameters: Hashable, Sendable {
        /// `Advertising_Interval_Min`, units of 0.625 ms (valid 0x0020–0x4000).
        public var intervalMin: UInt16
        /// `Advertising_Interval_Max`, units of 0.625 ms.
        public var intervalMax: UInt16
        public var type: AdvertisingType
        public var ownAddressType: OwnAddressType
        /// Peer of directed advertising (`public` or `random`); ignored otherwise.
        public var peerAddressType: LEAddressType
        public var peerAddress: BluetoothAddress
        public var channels: AdvertisingChannels
        public var filterPolicy: AdvertisingFilterPolicy

        public init(
            intervalMin: UInt16, intervalMax: UInt16, type: AdvertisingType = .connectableUndirected,
            ownAddressType: OwnAddressType = .public, peerAddressType: LEAddressType = .public,
            peerAddress: BluetoothAddress = .any, channels: AdvertisingChannels = .all,
            filterPolicy: AdvertisingFilterPolicy = .acceptAll
        ) {
            self.intervalMin = intervalMin
            self.intervalMax = intervalMax
            self.type = type
            self.ownAddressType = ownAddressType
            self.peerAddressType = peerAddressType
            self.peerAddress = peerAddress
            self.channels = channels
            self.filterPolicy = filterPolicy
        }

        public var intervalMinMilliseconds: Double { hciMilliseconds(intervalMin, unit: 0.625) }
        public var intervalMaxMilliseconds: Double { hciMilliseconds(intervalMax, unit: 0.625) }

        init(from reader: inout ByteReader) throws(WireError) {
            intervalMin = try reader.readUInt16()
            intervalMax = try reader.readUInt16()
            type = AdvertisingType(rawValue: try reader.readUInt8())
            ownAddressType = OwnAddressType(rawValue: try reader.readUInt8())
            peerAddressType = LEAddressType(rawValue: try reader.readUInt8())
            peerAddress = try reader.readAddress()
            channels = AdvertisingChannels(rawValue: try reader.readUInt8())
            filterPolicy = AdvertisingFilterPolicy(rawValue: try reader.readUInt8())
        }

        func write(to writer: inout ByteWriter) {
            writer.write(intervalMin)
            writer.write(intervalMax)
            writer.write(type.rawValue)
            writer.write(ownAddressType.rawValue)
            writer.write(peerAddressType.rawValue)
            writer.write(peerAddress)
            writer.write(channels.rawValue)
            writer.write(filterPolicy.rawValue)
        }
    }

    /// The payload of LE Set Advertising Data / LE Set Scan Response Data: at most 31 bytes of
    /// AD structures. On the wire it is a length byte and a 31-byte field padded with zeros.
    public struct AdvertisingPayload: Hashable, Sendable {
        /// The significant bytes (the padding is not kept).
        public let bytes: [UInt8]

        /// The longest legacy advertising payload.
        public static let maximumCount = 31

        /// `nil` when `bytes` is longer than 31.
        public init?(_ bytes: some Collection<UInt8>) {
            guard bytes.count <= Self.maximumCount else { return nil }
            self.bytes = Array(bytes)
        }

        /// An empty payload (clears the advertising or scan response data).
        public static let empty = AdvertisingPayload(uncheckedBytes: [])

        init(uncheckedBytes: [UInt8]) { bytes = uncheckedBytes }

        static let fieldCount = 1 + maximumCount

        init(from reader: inout ByteReader) throws(WireError) {
            let lengthOffset = reader.offset
            let length = Int(try reader.readUInt8())
            guard length <= Self.maximumCount else {
                throw reader.error(.invalidLength(length), at: lengthOffset)
            }
            var field = try reader.subReader(Self.maximumCount)
            bytes = Array(try field.readBytes(length))
            // The rest of the 31-byte field is padding; its content carries no meaning.
        }

        func write(to writer: inout ByteWriter) {
            writer.write(UInt8(truncatingIfNeeded: bytes.count))
            writer.write(contentsOf: bytes)
            for _ in bytes.count..<Self.maximumCount { writer.write(UInt8(0)) }
        }
    }

    /// A command this type does not model: its opcode and raw parameter bytes.
    ///
    /// The parameter block is at most 255 bytes (the length field is one byte), so an
    /// oversize command cannot be built and encoding never truncates.
    public struct RawCommand: Hashable, Sendable {
        public let opcode: HCIOpcode
        public let parameters: [UInt8]

        /// The longest parameter block an HCI command packet can carry.
        public static let maximumParameterCount = 255

        /// `nil` when `parameters` is longer than 255 bytes.
        public init?(opcode: HCIOpcode, parameters: some Collection<UInt8>) {
            guard parameters.count <= Self.maximumParameterCount else { return nil }
            self.opcode = opcode
            self.parameters = Array(parameters)
        }
    }
}

/// Command parameters that name a peer as HCI lays it out, an address and its type in two
/// fields: both as one ``DeviceAddress``.
public protocol PeerAddressed {
    var peerAddress: BluetoothAddress { get set }
    var peerAddressType: LEAddressType { get set }
}

extension PeerAddressed {
    /// The peer address with its type.
    public var peer: DeviceAddress {
        get { DeviceAddress(peerAddress, type: peerAddressType) }
        set { peerAddress = newValue.address; peerAddressType = newValue.type }
    }
}

/// Initiating parameters (LE Create Connection, one PHY of LE Extended Create Connection):
/// how the controller scans for the peer while it connects, in milliseconds.
public protocol InitiatorScanTiming {
    /// `LE_Scan_Interval`, units of 0.625 ms.
    var scanInterval: UInt16 { get }
    /// `LE_Scan_Window`, units of 0.625 ms.
    var scanWindow: UInt16 { get }
}

extension InitiatorScanTiming {
    public var scanIntervalMilliseconds: Double { hciMilliseconds(scanInterval, unit: 0.625) }
    public var scanWindowMilliseconds: Double { hciMilliseconds(scanWindow, unit: 0.625) }
}
