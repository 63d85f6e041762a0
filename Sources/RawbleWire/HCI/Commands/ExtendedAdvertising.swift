// Parameter blocks of the extended advertising commands (Core Vol 4 Part E 7.8.53–7.8.60):
// an advertiser with one or more advertising sets, each with its own parameters, data and
// scan response, up to the controller's maximum data length.

extension HCICommand {
    /// `Advertising_Event_Properties` of LE Set Extended Advertising Parameters: what kind of
    /// PDUs the set sends. With ``legacy`` only the four legacy combinations are allowed.
    public struct AdvertisingEventProperties: OptionSet, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt16
        @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }

        /// Centrals may connect.
        public static let connectable = AdvertisingEventProperties(rawValue: 1 << 0)
        /// Scanners may ask for the scan response.
        public static let scannable = AdvertisingEventProperties(rawValue: 1 << 1)
        /// Addressed to one peer (the parameters' peer address).
        public static let directed = AdvertisingEventProperties(rawValue: 1 << 2)
        /// High duty cycle directed connectable advertising (legacy PDUs only).
        public static let highDutyCycleDirected = AdvertisingEventProperties(rawValue: 1 << 3)
        /// Legacy advertising PDUs (ADV_IND …), seen by scanners of any Bluetooth version.
        public static let legacy = AdvertisingEventProperties(rawValue: 1 << 4)
        /// Omit the advertiser's address from all PDUs (anonymous; extended PDUs only).
        public static let anonymous = AdvertisingEventProperties(rawValue: 1 << 5)
        /// Include the transmit power in the extended header.
        public static let includeTxPower = AdvertisingEventProperties(rawValue: 1 << 6)

        static let names: [(UInt64, String)] = [
            (1 << 0, "connectable"), (1 << 1, "scannable"), (1 << 2, "directed"),
            (1 << 3, "high duty cycle"), (1 << 4, "legacy"), (1 << 5, "anonymous"), (1 << 6, "TX power"),
        ]

        public var description: String { describeHCIMaskBits(UInt64(rawValue), names: Self.names) }
    }

    /// LE Set Extended Advertising Parameters v1 (`0x2036`, 25 bytes): one advertising set's
    /// PDUs, interval, PHYs and addresses. The controller answers with the TX power it chose.
    public struct ExtendedAdvertisingParameters: Hashable, Sendable {
        /// `Advertising_Handle` (0x00–0xEF): the set these parameters are for.
        public var handle: UInt8
        public var properties: AdvertisingEventProperties
        /// `Primary_Advertising_Interval_Min`, 24 bits, units of 0.625 ms (valid from 0x000020).
        public var intervalMin: UInt32
        /// `Primary_Advertising_Interval_Max`, 24 bits, units of 0.625 ms.
        public var intervalMax: UInt32
        public var channels: AdvertisingChannels
        public var ownAddressType: OwnAddressType
        /// Peer of directed advertising (`public` or `random`); ignored otherwise.
        public var peerAddressType: LEAddressType
        public var peerAddress: BluetoothAddress
        public var filterPolicy: AdvertisingFilterPolicy
        /// `Advertising_TX_Power` in dBm (−127…+20); ``noTxPowerPreference`` lets the controller choose.
        public var txPower: Int8
        /// `Primary_Advertising_PHY`: LE 1M or LE Coded.
        public var primaryPHY: LEPHY
        /// `Secondary_Advertising_Max_Skip`: advertising events the secondary channel may skip.
        public var secondaryMaxSkip: UInt8
        /// `Secondary_Advertising_PHY`: LE 1M, LE 2M or LE Coded.
        public var secondaryPHY: LEPHY
        /// `Advertising_SID` (0x00–0x0F), told to scanners in the ADI.
        public var sid: UInt8
        /// `Scan_Request_Notification_Enable`: report scan requests (LE Scan Request Received).
        public var scanRequestNotifications: Bool

        /// The `Advertising_TX_Power` value meaning "the host has no preference".
        public static let noTxPowerPreference: Int8 = 0x7F

        public init(
            handle: UInt8, properties: AdvertisingEventProperties, intervalMin: UInt32, intervalMax: UInt32,
            channels: AdvertisingChannels = .all, ownAddressType: OwnAddressType = .public,
            peerAddressType: LEAddressType = .public, peerAddress: BluetoothAddress = .any,
            filterPolicy: AdvertisingFilterPolicy = .acceptAll, txPower: Int8 = noTxPowerPreference,
            primaryPHY: LEPHY = .le1M, secondaryMaxSkip: UInt8 = 0, secondaryPHY: LEPHY = .le1M,
            sid: UInt8 = 0, scanRequestNotifications: Bool = false
        ) {
            self.handle = handle
            self.properties = properties
            self.intervalMin = intervalMin
            self.intervalMax = intervalMax
            self.channels = channels
            self.ownAddressType = ownAddressType
            self.peerAddressType = peerAddressType
            self.peerAddress = peerAddress
            self.filterPolicy = filterPolicy
            self.txPower = txPower
            self.primaryPHY = primaryPHY
            self.secondaryMaxSkip = secondaryMaxSkip
            self.secondaryPHY = secondaryPHY
            self.sid = sid
            self.scanRequestNotifications = scanRequestNotifications
        }

        public var intervalMinMilliseconds: Double { hciMilliseconds(intervalMin, unit: 0.625) }
        public var intervalMaxMilliseconds: Double { hciMilliseconds(intervalMax, unit: 0.625) }

        static let byteCount = 25

        init(from reader: inout ByteReader) throws(WireError) {
            handle = try reader.readUInt8()
            properties = AdvertisingEventProperties(rawValue: try reader.readUInt16())
            intervalMin = try reader.readUInt24()
            intervalMax = try reader.readUInt24()
            channels = AdvertisingChannels(rawValue: try reader.readUInt8())
            ownAddressType = OwnAddressType(rawValue: try reader.readUInt8())
            peerAddressType = LEAddressType(rawValue: try reader.readUInt8())
            peerAddress = try reader.readAddress()
            filterPolicy = AdvertisingFilterPolicy(rawValue: try reader.readUInt8())
            txPower = try reader.readInt8()
            primaryPHY = LEPHY(try reader.readUInt8())
            secondaryMaxSkip = try reader.readUInt8()
            secondaryPHY = LEPHY(try reader.readUInt8())
            sid = try reader.readUInt8()
            scanRequestNotifications = try HCICommand.readFlag(&reader, field: "Scan_Request_Notification_Enable")
        }

        func write(to writer: inout ByteWriter) {
            writer.write(handle)
            writer.write(properties.rawValue)
            // The fields are 24 bits wide: a larger value is written as the largest one.
            writer.writeUInt24(min(intervalMin, 0xFF_FFFF))
            writer.writeUInt24(min(intervalMax, 0xFF_FFFF))
            writer.write(channels.rawValue)
            writer.write(ownAddressType.rawValue)
            writer.write(peerAddressType.rawValue)
            writer.write(peerAddress)
            writer.write(filterPolicy.rawValue)
            writer.write(txPower)
            writer.write(primaryPHY.rawValue)
            writer.write(secondaryMaxSkip)
            writer.write(secondaryPHY.rawValue)
            writer.write(sid)
            writer.write(UInt8(scanRequestNotifications ? 1 : 0))
        }
    }

    /// `Operation` of LE Set Extended Advertising Data / Scan Response Data: which part of
    /// the set's data this command carries.
    public struct AdvertisingDataOperation: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt8
        @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// A fragment between the first and the last.
        public static let intermediateFragment = AdvertisingDataOperation(rawValue: 0)
        /// The first fragment of several.
        public static let firstFragment = AdvertisingDataOperation(rawValue: 1)
        /// The last fragment of several.
        public static let lastFragment = AdvertisingDataOperation(rawValue: 2)
        /// The whole data in one command.
        public static let complete = AdvertisingDataOperation(rawValue: 3)
        /// The data is unchanged; only its Advertising DID changes (no data may be given).
        public static let unchangedData = AdvertisingDataOperation(rawValue: 4)

        public var description: String {
            switch rawValue {
            case 0: "intermediate fragment"
            case 1: "first fragment"
            case 2: "last fragment"
            case 3: "complete"
            case 4: "unchanged data"
            default: "0x\(hex(rawValue))"
            }
        }
    }

    /// `Fragment_Preference`: whether the controller may split the data over several PDUs.
    public struct FragmentPreference: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt8
        @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// The controller may fragment all data.
        public static let mayFragment = FragmentPreference(rawValue: 0)
        /// The controller should fragment as little as possible.
        public static let shouldNotFragment = FragmentPreference(rawValue: 1)

        public var description: String {
            switch rawValue {
            case 0: "may fragment"
            case 1: "should not fragment"
            default: "0x\(hex(rawValue))"
            }
        }
    }

    /// LE Set Extended Advertising Data (`0x2037`) or Scan Response Data (`0x2038`): one
    /// fragment (at most 251 bytes) of an advertising set's data.
    public struct AdvertisingDataFragment: Hashable, Sendable {
        /// `Advertising_Handle`: the set the data is for.
        public let handle: UInt8
        public let operation: AdvertisingDataOperation
        public let fragmentPreference: FragmentPreference
        /// The fragment's bytes (`Advertising_Data` / `Scan_Response_Data`).
        public let data: [UInt8]

        /// The most data one command carries (255 parameter bytes less the 4 before the data).
        public static let maximumCount = 251

        /// `nil` when `data` is longer than 251 bytes.
        public init?(handle: UInt8, operation: AdvertisingDataOperation,
                     fragmentPreference: FragmentPreference = .shouldNotFragment, data: some Collection<UInt8>) {
            guard data.count <= Self.maximumCount else { return nil }
            self.handle = handle
            self.operation = operation
            self.fragmentPreference = fragmentPreference
            self.data = Array(data)
        }

        /// The commands that set `data` on set `handle`: one ``AdvertisingDataOperation/complete``
        /// command when it fits in 251 bytes, else a first, intermediate and last fragments.
        /// (Empty data is one complete command with no bytes: it clears the set's data.)
        public static func fragments(of data: [UInt8], handle: UInt8,
                                     preference: FragmentPreference = .shouldNotFragment) -> [AdvertisingDataFragment] {
            if data.count <= maximumCount {
                return [AdvertisingDataFragment(handle: handle, operation: .complete, fragmentPreference: preference,
                                                uncheckedData: data)]
            }
            var result: [AdvertisingDataFragment] = []
            var start = data.startIndex
            while start < data.endIndex {
                let end = data.index(start, offsetBy: maximumCount, limitedBy: data.endIndex) ?? data.endIndex
                let operation: AdvertisingDataOperation = start == data.startIndex ? .firstFragment
                    : end == data.endIndex ? .lastFragment : .intermediateFragment
                result.append(AdvertisingDataFragment(handle: handle, operation: operation, fragmentPreference: preference,
                                                      uncheckedData: Array(data[start..<end])))
                start = end
            }
            return result
        }

        init(handle: UInt8, operation: AdvertisingDataOperation, fragmentPreference: FragmentPreference, uncheckedData: [UInt8]) {
            self.handle = handle
            self.operation = operation
            self.fragmentPreference = fragmentPreference
            data = uncheckedData
        }

        init(from reader: inout ByteReader) throws(WireError) {
            handle = try reader.readUInt8()
            operation = AdvertisingDataOperation(rawValue: try reader.readUInt8())
            fragmentPreference = FragmentPreference(rawValue: try reader.readUInt8())
            let length = Int(try reader.readUInt8())
            // 4 + length ≤ 255 by the command's length byte: at most 251 bytes can be here.
            data = Array(try reader.readBytes(length))
        }

        func write(to writer: inout ByteWriter) {
            writer.write(handle)
            writer.write(operation.rawValue)
            writer.write(fragmentPreference.rawValue)
            writer.write(UInt8(truncatingIfNeeded: data.count))
            writer.write(contentsOf: data)
        }
    }

    /// One set in LE Set Extended Advertising Enable: its handle and when it stops by itself.
    public struct AdvertisingSetActivation: Hashable, Sendable {
        /// `Advertising_Handle`.
        public var handle: UInt8
        /// `Duration`, units of 10 ms; 0 advertises until disabled.
        public var duration: UInt16
        /// `Max_Extended_Advertising_Events`; 0 means no limit.
        public var maximumEvents: UInt8

        public init(handle: UInt8, duration: UInt16 = 0, maximumEvents: UInt8 = 0) {
            self.handle = handle
            self.duration = duration
            self.maximumEvents = maximumEvents
        }

        public var durationMilliseconds: Double { hciMilliseconds(duration, unit: 10) }
    }

    /// LE Set Extended Advertising Enable (`0x2039`): switches sets on or off. Disabling with
    /// no sets disables every set. The sets are laid out one after the other (handle, duration,
    /// maximum events), as BlueZ and Bumble send them.
    public struct ExtendedAdvertisingEnable: Hashable, Sendable {
        public let enable: Bool
        public let sets: [AdvertisingSetActivation]

        /// The most sets one command carries (`Number_of_Sets` 0x01–0x3F).
        public static let maximumSetCount = 0x3F

        /// `nil` with more than 63 sets.
        public init?(enable: Bool, sets: [AdvertisingSetActivation]) {
            guard sets.count <= Self.maximumSetCount else { return nil }
            self.enable = enable
            self.sets = sets
        }

        /// Disables every advertising set.
        public static let disableAll = ExtendedAdvertisingEnable(enable: false, uncheckedSets: [])

        /// Enables or disables one set.
        public static func one(_ set: AdvertisingSetActivation, enable: Bool) -> ExtendedAdvertisingEnable {
            ExtendedAdvertisingEnable(enable: enable, uncheckedSets: [set])
        }

        init(enable: Bool, uncheckedSets: [AdvertisingSetActivation]) {
            self.enable = enable
            sets = uncheckedSets
        }

        init(from reader: inout ByteReader) throws(WireError) {
            enable = try HCICommand.readFlag(&reader, field: "Enable")
            let count = Int(try reader.readUInt8())
            var sets: [AdvertisingSetActivation] = []
            sets.reserveCapacity(min(count, Self.maximumSetCount))
            for _ in 0..<count {
                let handle = try reader.readUInt8()
                let duration = try reader.readUInt16()
                sets.append(AdvertisingSetActivation(handle: handle, duration: duration, maximumEvents: try reader.readUInt8()))
            }
            self.sets = sets
        }

        func write(to writer: inout ByteWriter) {
            writer.write(UInt8(enable ? 1 : 0))
            writer.write(UInt8(truncatingIfNeeded: sets.count))
            for set in sets {
                writer.write(set.handle)
                writer.write(set.duration)
                writer.write(set.maximumEvents)
            }
        }
    }
}
