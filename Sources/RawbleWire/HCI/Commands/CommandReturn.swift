/// The typed return parameters of a Command Complete event (Core Vol 4 Part E 7.7.14), for
/// the commands ``HCICommand`` models.
///
/// Every return starts with a status. A failed command (status not 0) gives ``failure(_:status:trailing:)``
/// whatever follows the status: controllers send either the status alone or the full block
/// with meaningless values, and both are kept. An opcode this type does not know gives
/// ``other(_:returnParameters:)`` with all the bytes.
///
/// What ``decode(opcode:returnParameters:)-(_,ArraySlice<UInt8>)`` produces, and so what round-trips: `success` and
/// `connectionHandle` only for opcodes returning that shape, `failure` only with a non-zero
/// status and an opcode this type decodes, `other` only for opcodes it does not.
public enum CommandReturn: Hashable, Sendable {
    /// A set-type command succeeded; it returns nothing but the status.
    case success(HCIOpcode)
    /// The command failed. `trailing` is whatever followed the status byte (often nothing).
    case failure(HCIOpcode, status: HCIStatus, trailing: [UInt8])
    /// Read Local Version Information.
    case localVersion(LocalVersion)
    /// Read Local Supported Commands.
    case supportedCommands(SupportedCommands)
    /// Read Local Supported Features (LMP features page 0).
    case localFeatures(LMPFeatures)
    /// Read BD_ADDR: the controller's public address.
    case deviceAddress(BluetoothAddress)
    /// Read Buffer Size.
    case bufferSize(BufferSize)
    /// LE Read Buffer Size v1, or v2 when ``LEBufferSize/iso`` is present.
    case leBufferSize(LEBufferSize)
    /// LE Read Local Supported Features.
    case leLocalFeatures(LEFeatures)
    /// Read RSSI of a connection, in dBm.
    case rssi(handle: UInt16, rssi: Int8)
    /// A command that returns the connection handle it acted on: LE Set Data Length, LE
    /// Remote Connection Parameter Request Reply and Negative Reply.
    case connectionHandle(HCIOpcode, handle: UInt16)
    /// LE Read Maximum Data Length.
    case maximumDataLength(MaximumDataLength)
    /// LE Read Advertising Physical Channel Tx Power: legacy advertising's power, in dBm.
    case advertisingTxPower(Int8)
    /// LE Set Extended Advertising Parameters: the TX power the controller chose for the set, in dBm.
    case selectedTxPower(Int8)
    /// LE Read Maximum Advertising Data Length: the most advertising or scan response data
    /// one extended advertising set can carry.
    case maximumAdvertisingDataLength(UInt16)
    /// LE Read Number of Supported Advertising Sets.
    case supportedAdvertisingSets(UInt8)
    /// A command this type does not decode, with its whole return parameter block.
    case other(HCIOpcode, returnParameters: [UInt8])
}

extension CommandReturn {
    /// Read Local Version Information's result.
    public struct LocalVersion: Hashable, Sendable, CustomStringConvertible {
        /// `HCI_Version`, an assigned number (e.g. 0x0D = Core 5.4).
        public var hciVersion: UInt8
        /// `HCI_Subversion` (formerly HCI_Revision), implementation defined.
        public var hciSubversion: UInt16
        /// `LMP_Version` (or LL version), an assigned number.
        public var lmpVersion: UInt8
        /// `Company_Identifier` of the controller's manufacturer (assigned number).
        public var companyIdentifier: UInt16
        /// `LMP_Subversion`, implementation defined.
        public var lmpSubversion: UInt16

        public init(hciVersion: UInt8, hciSubversion: UInt16, lmpVersion: UInt8, companyIdentifier: UInt16, lmpSubversion: UInt16) {
            self.hciVersion = hciVersion
            self.hciSubversion = hciSubversion
            self.lmpVersion = lmpVersion
            self.companyIdentifier = companyIdentifier
            self.lmpSubversion = lmpSubversion
        }

        /// The Core specification version of an HCI/LMP version number, e.g. `"5.4"`.
        public static func coreVersionName(_ version: UInt8) -> String? {
            let names = ["1.0b", "1.1", "1.2", "2.0", "2.1", "3.0", "4.0", "4.1", "4.2", "5.0", "5.1", "5.2", "5.3", "5.4", "6.0", "6.1"]
            return Int(version) < names.count ? names[Int(version)] : nil
        }

        public var description: String {
            let version = Self.coreVersionName(hciVersion).map { "Bluetooth \($0)" } ?? "HCI version 0x\(hex(hciVersion))"
            return "\(version), HCI subversion 0x\(hex(hciSubversion)), LMP version 0x\(hex(lmpVersion)) "
                + "subversion 0x\(hex(lmpSubversion)), company 0x\(hex(companyIdentifier))"
        }
    }

    /// Read Buffer Size's result: the controller's (shared) ACL and synchronous buffers.
    public struct BufferSize: Hashable, Sendable {
        /// `ACL_Data_Packet_Length`: largest ACL payload the controller accepts.
        public var aclDataPacketLength: UInt16
        /// `Synchronous_Data_Packet_Length`.
        public var synchronousDataPacketLength: UInt8
        /// `Total_Num_ACL_Data_Packets`: ACL packets the controller can hold.
        public var totalACLDataPackets: UInt16
        /// `Total_Num_Synchronous_Data_Packets`.
        public var totalSynchronousDataPackets: UInt16

        public init(aclDataPacketLength: UInt16, synchronousDataPacketLength: UInt8, totalACLDataPackets: UInt16, totalSynchronousDataPackets: UInt16) {
            self.aclDataPacketLength = aclDataPacketLength
            self.synchronousDataPacketLength = synchronousDataPacketLength
            self.totalACLDataPackets = totalACLDataPackets
            self.totalSynchronousDataPackets = totalSynchronousDataPackets
        }
    }

    /// LE Read Buffer Size's result. A length or count of 0 means the LE link shares the
    /// buffers of Read Buffer Size.
    public struct LEBufferSize: Hashable, Sendable {
        /// `LE_ACL_Data_Packet_Length`.
        public var aclDataPacketLength: UInt16
        /// `Total_Num_LE_ACL_Data_Packets`.
        public var totalACLDataPackets: UInt8
        /// The ISO buffers, present in the v2 result only.
        public var iso: ISOBufferSize?

        public init(aclDataPacketLength: UInt16, totalACLDataPackets: UInt8, iso: ISOBufferSize? = nil) {
            self.aclDataPacketLength = aclDataPacketLength
            self.totalACLDataPackets = totalACLDataPackets
            self.iso = iso
        }

        /// Whether the LE link has its own buffers (both values non-zero).
        public var hasDedicatedBuffers: Bool { aclDataPacketLength != 0 && totalACLDataPackets != 0 }
    }

    /// The ISO part of LE Read Buffer Size v2.
    public struct ISOBufferSize: Hashable, Sendable {
        /// `ISO_Data_Packet_Length`.
        public var dataPacketLength: UInt16
        /// `Total_Num_ISO_Data_Packets`.
        public var totalDataPackets: UInt8

        public init(dataPacketLength: UInt16, totalDataPackets: UInt8) {
            self.dataPacketLength = dataPacketLength
            self.totalDataPackets = totalDataPackets
        }
    }

    /// LE Read Maximum Data Length's result: the controller's limits for LL payloads.
    public struct MaximumDataLength: Hashable, Sendable {
        /// `Supported_Max_TX_Octets` (27–251).
        public var maxTxOctets: UInt16
        /// `Supported_Max_TX_Time`, µs.
        public var maxTxTime: UInt16
        /// `Supported_Max_RX_Octets` (27–251).
        public var maxRxOctets: UInt16
        /// `Supported_Max_RX_Time`, µs.
        public var maxRxTime: UInt16

        public init(maxTxOctets: UInt16, maxTxTime: UInt16, maxRxOctets: UInt16, maxRxTime: UInt16) {
            self.maxTxOctets = maxTxOctets
            self.maxTxTime = maxTxTime
            self.maxRxOctets = maxRxOctets
            self.maxRxTime = maxRxTime
        }
    }
}

// MARK: - Accessors

extension CommandReturn {
    /// The opcode of the command this completes.
    public var opcode: HCIOpcode {
        switch self {
        case .success(let opcode), .failure(let opcode, _, _), .connectionHandle(let opcode, _), .other(let opcode, _):
            opcode
        case .localVersion: .readLocalVersionInformation
        case .supportedCommands: .readLocalSupportedCommands
        case .localFeatures: .readLocalSupportedFeatures
        case .deviceAddress: .readBDADDR
        case .bufferSize: .readBufferSize
        case .leBufferSize(let size): size.iso == nil ? .leReadBufferSize : .leReadBufferSizeV2
        case .leLocalFeatures: .leReadLocalSupportedFeatures
        case .rssi: .readRSSI
        case .maximumDataLength: .leReadMaximumDataLength
        case .advertisingTxPower: .leReadAdvertisingPhysicalChannelTxPower
        case .selectedTxPower: .leSetExtendedAdvertisingParameters
        case .maximumAdvertisingDataLength: .leReadMaximumAdvertisingDataLength
        case .supportedAdvertisingSets: .leReadNumberOfSupportedAdvertisingSets
        }
    }

    /// The status byte; `nil` only for ``other(_:returnParameters:)`` with no bytes at all.
    public var status: HCIStatus? {
        switch self {
        case .failure(_, let status, _): status
        case .other(_, let bytes): bytes.first.map(HCIStatus.init(rawValue:))
        default: .success
        }
    }

    /// Whether the command succeeded (status 0).
    public var isSuccess: Bool { status == .success }

    /// The return parameter block, status first, as a controller sends it.
    public var returnParameters: [UInt8] {
        var writer = ByteWriter(capacity: 16)
        writeReturnParameters(into: &writer)
        return writer.bytes
    }

    /// Writes the return parameter block, status first.
    public func writeReturnParameters(into writer: inout ByteWriter) {
        if case .other(_, let bytes) = self {
            writer.write(contentsOf: bytes)
            return
        }
        if case let .failure(_, status, trailing) = self {
            writer.write(status.rawValue)
            writer.write(contentsOf: trailing)
            return
        }
        writer.write(HCIStatus.success.rawValue)
        switch self {
        case .success, .failure, .other:
            break
        case .localVersion(let v):
            writer.write(v.hciVersion)
            writer.write(v.hciSubversion)
            writer.write(v.lmpVersion)
            writer.write(v.companyIdentifier)
            writer.write(v.lmpSubversion)
        case .supportedCommands(let commands):
            writer.write(contentsOf: commands.octets)
        case .localFeatures(let features):
            writer.write(features.rawValue)
        case .deviceAddress(let address):
            writer.write(address)
        case .bufferSize(let size):
            writer.write(size.aclDataPacketLength)
            writer.write(size.synchronousDataPacketLength)
            writer.write(size.totalACLDataPackets)
            writer.write(size.totalSynchronousDataPackets)
        case .leBufferSize(let size):
            writer.write(size.aclDataPacketLength)
            writer.write(size.totalACLDataPackets)
            if let iso = size.iso {
                writer.write(iso.dataPacketLength)
                writer.write(iso.totalDataPackets)
            }
        case .leLocalFeatures(let features):
            writer.write(features.rawValue)
        case let .rssi(handle, rssi):
            writer.write(handle)
            writer.write(rssi)
        case .connectionHandle(_, let handle):
            writer.write(handle)
        case .maximumDataLength(let m):
            writer.write(m.maxTxOctets)
            writer.write(m.maxTxTime)
            writer.write(m.maxRxOctets)
            writer.write(m.maxRxTime)
        case .advertisingTxPower(let power), .selectedTxPower(let power):
            writer.write(power)
        case .maximumAdvertisingDataLength(let length):
            writer.write(length)
        case .supportedAdvertisingSets(let count):
            writer.write(count)
        }
    }
}

extension CommandReturn: CustomStringConvertible {
    /// `Read RSSI: handle 0x0040, -60 dBm`, `Reset: Command Disallowed (0x0C)`.
    public var description: String {
        let name = opcode.name ?? opcode.description
        let detail: String
        switch self {
        case .success: detail = "Success"
        case let .failure(_, status, _): detail = status.description
        case .localVersion(let version): detail = version.description
        case .supportedCommands(let commands): detail = commands.description
        case .localFeatures(let features): detail = features.description
        case .deviceAddress(let address): detail = address.description
        case .bufferSize(let size):
            detail = "ACL \(size.totalACLDataPackets) x \(size.aclDataPacketLength) bytes, "
                + "SCO \(size.totalSynchronousDataPackets) x \(size.synchronousDataPacketLength) bytes"
        case .leBufferSize(let size):
            detail = "LE ACL \(size.totalACLDataPackets) x \(size.aclDataPacketLength) bytes"
                + (size.iso.map { ", ISO \($0.totalDataPackets) x \($0.dataPacketLength) bytes" } ?? "")
        case .leLocalFeatures(let features): detail = features.description
        case let .rssi(handle, rssi): detail = "handle 0x\(hex(handle)), \(rssi) dBm"
        case .connectionHandle(_, let handle): detail = "handle 0x\(hex(handle))"
        case .maximumDataLength(let m):
            detail = "TX \(m.maxTxOctets) bytes / \(m.maxTxTime) µs, RX \(m.maxRxOctets) bytes / \(m.maxRxTime) µs"
        case .advertisingTxPower(let power), .selectedTxPower(let power): detail = "\(power) dBm"
        case .maximumAdvertisingDataLength(let length): detail = "\(length) bytes"
        case .supportedAdvertisingSets(let count): detail = "\(count) sets"
        case .other(_, let bytes): detail = Hex.encode(bytes, uppercase: true, separator: " ")
        }
        return "\(name): \(detail)"
    }
}

// MARK: - Decoding

extension CommandReturn {
    /// What a known opcode returns on success.
    enum Shape {
        case statusOnly, localVersion, supportedCommands, localFeatures, deviceAddress, bufferSize
        case leBufferSizeV1, leBufferSizeV2, leLocalFeatures, rssi, connectionHandle, maximumDataLength
        case advertisingTxPower, selectedTxPower, maximumAdvertisingDataLength, supportedAdvertisingSets
    }

    /// The return shape of each opcode this type decodes (commands answered by Command
    /// Complete; those answered by Command Status are not listed and decode as `other`).
    static func shape(of opcode: HCIOpcode) -> Shape? {
        switch opcode {
        case .reset, .setEventMask, .setEventMaskPage2, .leSetEventMask, .writeLEHostSupport,
             .leSetRandomAddress, .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData,
             .leSetAdvertisingEnable, .leSetScanParameters, .leSetScanEnable, .leCreateConnectionCancel,
             .leSetExtendedScanParameters, .leSetExtendedScanEnable, .leSetAdvertisingSetRandomAddress,
             .leSetExtendedAdvertisingData, .leSetExtendedScanResponseData, .leSetExtendedAdvertisingEnable,
             .leRemoveAdvertisingSet, .leClearAdvertisingSets:
            .statusOnly
        case .readLocalVersionInformation: .localVersion
        case .readLocalSupportedCommands: .supportedCommands
        case .readLocalSupportedFeatures: .localFeatures
        case .readBDADDR: .deviceAddress
        case .readBufferSize: .bufferSize
        case .leReadBufferSize: .leBufferSizeV1
        case .leReadBufferSizeV2: .leBufferSizeV2
        case .leReadLocalSupportedFeatures: .leLocalFeatures
        case .readRSSI: .rssi
        case .leSetDataLength, .leRemoteConnectionParameterRequestReply, .leRemoteConnectionParameterRequestNegativeReply,
             .leLongTermKeyRequestReply, .leLongTermKeyRequestNegativeReply:
            .connectionHandle
        case .leReadMaximumDataLength: .maximumDataLength
        case .leReadAdvertisingPhysicalChannelTxPower: .advertisingTxPower
        case .leSetExtendedAdvertisingParameters: .selectedTxPower
        case .leReadMaximumAdvertisingDataLength: .maximumAdvertisingDataLength
        case .leReadNumberOfSupportedAdvertisingSets: .supportedAdvertisingSets
        default: nil
        }
    }

    /// Decodes the return parameters of a Command Complete for `opcode`.
    ///
    /// A known opcode needs at least the status byte; on success its block must have
    /// exactly the specified size. A non-success status is never an error. An unknown
    /// opcode keeps every byte.
    public static func decode(opcode: HCIOpcode, returnParameters: ArraySlice<UInt8>) throws(WireError) -> CommandReturn {
        guard let shape = shape(of: opcode) else {
            return .other(opcode, returnParameters: Array(returnParameters))
        }
        var reader = ByteReader(returnParameters, context: "Command Complete (" + (opcode.name ?? opcode.description) + ")")
        let status = HCIStatus(try reader.readUInt8())
        if !status.isSuccess {
            return .failure(opcode, status: status, trailing: Array(reader.readRemaining()))
        }
        let result: CommandReturn
        switch shape {
        case .statusOnly:
            result = .success(opcode)
        case .localVersion:
            let hciVersion = try reader.readUInt8()
            let hciSubversion = try reader.readUInt16()
            let lmpVersion = try reader.readUInt8()
            let company = try reader.readUInt16()
            let lmpSubversion = try reader.readUInt16()
            result = .localVersion(LocalVersion(
                hciVersion: hciVersion, hciSubversion: hciSubversion, lmpVersion: lmpVersion,
                companyIdentifier: company, lmpSubversion: lmpSubversion))
        case .supportedCommands:
            let octets = try reader.readBytes(SupportedCommands.octetCount)
            guard let commands = SupportedCommands(octets: octets) else {
                throw reader.error(.invalidLength(octets.count))
            }
            result = .supportedCommands(commands)
        case .localFeatures:
            result = .localFeatures(LMPFeatures(rawValue: try reader.readUInt64()))
        case .deviceAddress:
            result = .deviceAddress(try reader.readAddress())
        case .bufferSize:
            let aclLength = try reader.readUInt16()
            let syncLength = try reader.readUInt8()
            let aclCount = try reader.readUInt16()
            let syncCount = try reader.readUInt16()
            result = .bufferSize(BufferSize(
                aclDataPacketLength: aclLength, synchronousDataPacketLength: syncLength,
                totalACLDataPackets: aclCount, totalSynchronousDataPackets: syncCount))
        case .leBufferSizeV1, .leBufferSizeV2:
            let aclLength = try reader.readUInt16()
            let aclCount = try reader.readUInt8()
            var iso: ISOBufferSize? = nil
            if shape == .leBufferSizeV2 {
                let isoLength = try reader.readUInt16()
                iso = ISOBufferSize(dataPacketLength: isoLength, totalDataPackets: try reader.readUInt8())
            }
            result = .leBufferSize(LEBufferSize(aclDataPacketLength: aclLength, totalACLDataPackets: aclCount, iso: iso))
        case .leLocalFeatures:
            result = .leLocalFeatures(LEFeatures(rawValue: try reader.readUInt64()))
        case .rssi:
            let handle = try reader.readUInt16()
            result = .rssi(handle: handle, rssi: try reader.readInt8())
        case .connectionHandle:
            result = .connectionHandle(opcode, handle: try reader.readUInt16())
        case .maximumDataLength:
            let txOctets = try reader.readUInt16()
            let txTime = try reader.readUInt16()
            let rxOctets = try reader.readUInt16()
            let rxTime = try reader.readUInt16()
            result = .maximumDataLength(MaximumDataLength(maxTxOctets: txOctets, maxTxTime: txTime, maxRxOctets: rxOctets, maxRxTime: rxTime))
        case .advertisingTxPower:
            result = .advertisingTxPower(try reader.readInt8())
        case .selectedTxPower:
            result = .selectedTxPower(try reader.readInt8())
        case .maximumAdvertisingDataLength:
            result = .maximumAdvertisingDataLength(try reader.readUInt16())
        case .supportedAdvertisingSets:
            result = .supportedAdvertisingSets(try reader.readUInt8())
        }
        try reader.expectEnd()
        return result
    }

    /// Decodes from an array (see the `ArraySlice` overload).
    public static func decode(opcode: HCIOpcode, returnParameters: [UInt8]) throws(WireError) -> CommandReturn {
        try decode(opcode: opcode, returnParameters: returnParameters[...])
    }
}
