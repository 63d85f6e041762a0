/// An HCI command packet, as an LE central or peripheral sends it (Core Vol 4 Part E 5.4.1 and 7), without
/// the H4 type byte: opcode (u16 LE), parameter length (u8), parameters.
///
/// Each command the stack uses has a case with typed parameters; any other opcode decodes
/// to ``other(_:)`` with its raw parameters, which re-encodes to the same bytes.
public enum HCICommand: Hashable, Sendable {
    // Controller & baseband
    /// Reset (`0x0C03`).
    case reset
    /// Set Event Mask (`0x0C01`): which events the controller may send.
    case setEventMask(EventMask)
    /// Set Event Mask Page 2 (`0x0C63`).
    case setEventMaskPage2(EventMaskPage2)
    /// Write LE Host Support (`0x0C6D`). `simultaneousLEHost` is the deprecated second
    /// parameter, which shall be `false`.
    case writeLEHostSupport(leSupportedHost: Bool, simultaneousLEHost: Bool = false)

    // Informational
    /// Read Local Version Information (`0x1001`).
    case readLocalVersionInformation
    /// Read Local Supported Commands (`0x1002`).
    case readLocalSupportedCommands
    /// Read Local Supported Features (`0x1003`): LMP features page 0.
    case readLocalSupportedFeatures
    /// Read Buffer Size (`0x1005`): the shared ACL buffers.
    case readBufferSize
    /// Read BD_ADDR (`0x1009`): the controller's public address.
    case readBDADDR

    // Status
    /// Read RSSI (`0x1405`) of a connection.
    case readRSSI(handle: UInt16)

    // Link control
    /// Disconnect (`0x0406`); `reason` is usually Remote User Terminated Connection (0x13).
    case disconnect(handle: UInt16, reason: HCIStatus)

    // LE controller
    /// LE Set Event Mask (`0x2001`): which LE Meta subevents the controller may send.
    case leSetEventMask(LEEventMask)
    /// LE Read Buffer Size v1 (`0x2002`).
    case leReadBufferSize
    /// LE Read Buffer Size v2 (`0x2060`): adds the ISO buffers.
    case leReadBufferSizeV2
    /// LE Read Local Supported Features (`0x2003`).
    case leReadLocalSupportedFeatures
    /// LE Set Random Address (`0x2005`).
    case leSetRandomAddress(BluetoothAddress)
    /// LE Set Advertising Parameters (`0x2006`).
    case leSetAdvertisingParameters(AdvertisingParameters)
    /// LE Read Advertising Physical Channel Tx Power (`0x2007`): legacy advertising's power.
    case leReadAdvertisingPhysicalChannelTxPower
    /// LE Set Advertising Data (`0x2008`).
    case leSetAdvertisingData(AdvertisingPayload)
    /// LE Set Scan Response Data (`0x2009`).
    case leSetScanResponseData(AdvertisingPayload)
    /// LE Set Advertising Enable (`0x200A`).
    case leSetAdvertisingEnable(Bool)
    /// LE Set Scan Parameters (`0x200B`), legacy scanning.
    case leSetScanParameters(ScanParameters)
    /// LE Set Scan Enable (`0x200C`), legacy scanning.
    case leSetScanEnable(enable: Bool, filterDuplicates: Bool)
    /// LE Create Connection (`0x200D`), legacy initiating.
    case leCreateConnection(CreateConnection)
    /// LE Create Connection Cancel (`0x200E`), for either initiating command.
    case leCreateConnectionCancel
    /// LE Connection Update (`0x2013`).
    case leConnectionUpdate(handle: UInt16, parameters: ConnectionParameters)
    /// LE Read Remote Features (`0x2016`).
    case leReadRemoteFeatures(handle: UInt16)
    /// LE Enable Encryption (`0x2019`), central: encrypt the link with `longTermKey`, which the
    /// peripheral's host finds by `random` and `encryptedDiversifier` (both 0 for a key of LE
    /// Secure Connections or pairing's STK). Answered by Command Status, then Encryption Change
    /// (or Encryption Key Refresh Complete on a link already encrypted).
    case leEnableEncryption(handle: UInt16, random: UInt64, encryptedDiversifier: UInt16, longTermKey: UInt128)
    /// LE Long Term Key Request Reply (`0x201A`), peripheral: the key the central asked for.
    case leLongTermKeyRequestReply(handle: UInt16, longTermKey: UInt128)
    /// LE Long Term Key Request Negative Reply (`0x201B`), peripheral: no such key (the
    /// central's encryption fails with PIN or Key Missing).
    case leLongTermKeyRequestNegativeReply(handle: UInt16)
    /// LE Remote Connection Parameter Request Reply (`0x2020`): accept the peer's request
    /// with these parameters.
    case leRemoteConnectionParameterRequestReply(handle: UInt16, parameters: ConnectionParameters)
    /// LE Remote Connection Parameter Request Negative Reply (`0x2021`), usually with
    /// Unacceptable Connection Parameters (0x3B).
    case leRemoteConnectionParameterRequestNegativeReply(handle: UInt16, reason: HCIStatus)
    /// LE Set Data Length (`0x2022`): preferred LL payload octets (27–251) and time (µs).
    case leSetDataLength(handle: UInt16, txOctets: UInt16, txTime: UInt16)
    /// LE Read Maximum Data Length (`0x202F`).
    case leReadMaximumDataLength
    /// LE Set Advertising Set Random Address (`0x2035`): the random address of one set.
    case leSetAdvertisingSetRandomAddress(handle: UInt8, address: BluetoothAddress)
    /// LE Set Extended Advertising Parameters v1 (`0x2036`).
    case leSetExtendedAdvertisingParameters(ExtendedAdvertisingParameters)
    /// LE Set Extended Advertising Data (`0x2037`): one fragment of a set's data.
    case leSetExtendedAdvertisingData(AdvertisingDataFragment)
    /// LE Set Extended Scan Response Data (`0x2038`): one fragment of a set's scan response.
    case leSetExtendedScanResponseData(AdvertisingDataFragment)
    /// LE Set Extended Advertising Enable (`0x2039`).
    case leSetExtendedAdvertisingEnable(ExtendedAdvertisingEnable)
    /// LE Read Maximum Advertising Data Length (`0x203A`).
    case leReadMaximumAdvertisingDataLength
    /// LE Read Number of Supported Advertising Sets (`0x203B`).
    case leReadNumberOfSupportedAdvertisingSets
    /// LE Remove Advertising Set (`0x203C`).
    case leRemoveAdvertisingSet(handle: UInt8)
    /// LE Clear Advertising Sets (`0x203D`): removes every set.
    case leClearAdvertisingSets
    /// LE Set Extended Scan Parameters (`0x2041`).
    case leSetExtendedScanParameters(ExtendedScanParameters)
    /// LE Set Extended Scan Enable (`0x2042`).
    case leSetExtendedScanEnable(ExtendedScanEnable)
    /// LE Extended Create Connection v1 (`0x2043`).
    case leExtendedCreateConnection(ExtendedCreateConnection)

    /// Any other command, kept as opcode and raw parameters.
    case other(RawCommand)

    /// A command this type does not model; `nil` when `parameters` is longer than 255 bytes.
    /// A known opcode given here still encodes as given, but decodes to its typed case.
    public static func other(opcode: HCIOpcode, parameters: some Collection<UInt8> = []) -> HCICommand? {
        RawCommand(opcode: opcode, parameters: parameters).map(HCICommand.other)
    }
}

// MARK: - Opcode and name

extension HCICommand {
    /// The command's opcode.
    public var opcode: HCIOpcode {
        switch self {
        case .reset: .reset
        case .setEventMask: .setEventMask
        case .setEventMaskPage2: .setEventMaskPage2
        case .writeLEHostSupport: .writeLEHostSupport
        case .readLocalVersionInformation: .readLocalVersionInformation
        case .readLocalSupportedCommands: .readLocalSupportedCommands
        case .readLocalSupportedFeatures: .readLocalSupportedFeatures
        case .readBufferSize: .readBufferSize
        case .readBDADDR: .readBDADDR
        case .readRSSI: .readRSSI
        case .disconnect: .disconnect
        case .leSetEventMask: .leSetEventMask
        case .leReadBufferSize: .leReadBufferSize
        case .leReadBufferSizeV2: .leReadBufferSizeV2
        case .leReadLocalSupportedFeatures: .leReadLocalSupportedFeatures
        case .leSetRandomAddress: .leSetRandomAddress
        case .leSetAdvertisingParameters: .leSetAdvertisingParameters
        case .leReadAdvertisingPhysicalChannelTxPower: .leReadAdvertisingPhysicalChannelTxPower
        case .leSetAdvertisingData: .leSetAdvertisingData
        case .leSetScanResponseData: .leSetScanResponseData
        case .leSetAdvertisingEnable: .leSetAdvertisingEnable
        case .leSetScanParameters: .leSetScanParameters
        case .leSetScanEnable: .leSetScanEnable
        case .leCreateConnection: .leCreateConnection
        case .leCreateConnectionCancel: .leCreateConnectionCancel
        case .leConnectionUpdate: .leConnectionUpdate
        case .leReadRemoteFeatures: .leReadRemoteFeatures
        case .leEnableEncryption: .leEnableEncryption
        case .leLongTermKeyRequestReply: .leLongTermKeyRequestReply
        case .leLongTermKeyRequestNegativeReply: .leLongTermKeyRequestNegativeReply
        case .leRemoteConnectionParameterRequestReply: .leRemoteConnectionParameterRequestReply
        case .leRemoteConnectionParameterRequestNegativeReply: .leRemoteConnectionParameterRequestNegativeReply
        case .leSetDataLength: .leSetDataLength
        case .leReadMaximumDataLength: .leReadMaximumDataLength
        case .leSetAdvertisingSetRandomAddress: .leSetAdvertisingSetRandomAddress
        case .leSetExtendedAdvertisingParameters: .leSetExtendedAdvertisingParameters
        case .leSetExtendedAdvertisingData: .leSetExtendedAdvertisingData
        case .leSetExtendedScanResponseData: .leSetExtendedScanResponseData
        case .leSetExtendedAdvertisingEnable: .leSetExtendedAdvertisingEnable
        case .leReadMaximumAdvertisingDataLength: .leReadMaximumAdvertisingDataLength
        case .leReadNumberOfSupportedAdvertisingSets: .leReadNumberOfSupportedAdvertisingSets
        case .leRemoveAdvertisingSet: .leRemoveAdvertisingSet
        case .leClearAdvertisingSets: .leClearAdvertisingSets
        case .leSetExtendedScanParameters: .leSetExtendedScanParameters
        case .leSetExtendedScanEnable: .leSetExtendedScanEnable
        case .leExtendedCreateConnection: .leExtendedCreateConnection
        case .other(let raw): raw.opcode
        }
    }

    /// The specification's name of the command, or its opcode in hex when unknown.
    public var name: String { opcode.name ?? opcode.description }
}

extension HCICommand: CustomStringConvertible {
    /// The command's name and parameter bytes, e.g. `LE Set Scan Enable (0x200C) 01 01`.
    public var description: String {
        let bytes = parameters
        return bytes.isEmpty ? opcode.description : "\(opcode) \(Hex.encode(bytes, uppercase: true, separator: " "))"
    }
}

// MARK: - Encoding

extension HCICommand: WireEncodable {
    /// Writes the whole packet: opcode, parameter length, parameters.
    public func encode(into writer: inout ByteWriter) {
        writer.write(opcode.rawValue)
        let lengthIndex = writer.bytes.count
        writer.write(UInt8(0))
        writeParameters(into: &writer)
        let length = writer.bytes.count - lengthIndex - 1
        // Every case is at most 255 bytes by construction (RawCommand checks its size).
        assert(length <= 255, "HCI command parameters over 255 bytes")
        writer.bytes[lengthIndex] = UInt8(truncatingIfNeeded: length)
    }

    /// The encoded parameter block (without opcode and length).
    public var parameters: [UInt8] {
        var writer = ByteWriter(capacity: 32)
        writeParameters(into: &writer)
        return writer.bytes
    }

    /// Writes the parameter block.
    public func writeParameters(into writer: inout ByteWriter) {
        switch self {
        case .reset, .readLocalVersionInformation, .readLocalSupportedCommands, .readLocalSupportedFeatures,
             .readBufferSize, .readBDADDR, .leReadBufferSize, .leReadBufferSizeV2,
             .leReadLocalSupportedFeatures, .leCreateConnectionCancel, .leReadMaximumDataLength,
             .leReadAdvertisingPhysicalChannelTxPower, .leReadMaximumAdvertisingDataLength,
             .leReadNumberOfSupportedAdvertisingSets, .leClearAdvertisingSets:
            break
        case .setEventMask(let mask):
            writer.write(mask.rawValue)
        case .setEventMaskPage2(let mask):
            writer.write(mask.rawValue)
        case .leSetEventMask(let mask):
            writer.write(mask.rawValue)
        case let .writeLEHostSupport(leSupportedHost, simultaneousLEHost):
            writer.write(UInt8(leSupportedHost ? 1 : 0))
            writer.write(UInt8(simultaneousLEHost ? 1 : 0))
        case .readRSSI(let handle), .leReadRemoteFeatures(let handle), .leLongTermKeyRequestNegativeReply(let handle):
            writer.write(handle)
        case let .leEnableEncryption(handle, random, ediv, key):
            writer.write(handle)
            writer.write(random)
            writer.write(ediv)
            writer.writeUInt128(key)
        case let .leLongTermKeyRequestReply(handle, key):
            writer.write(handle)
            writer.writeUInt128(key)
        case let .disconnect(handle, reason), let .leRemoteConnectionParameterRequestNegativeReply(handle, reason):
            writer.write(handle)
            writer.write(reason.rawValue)
        case .leSetRandomAddress(let address):
            writer.write(address)
        case .leSetAdvertisingParameters(let parameters):
            parameters.write(to: &writer)
        case .leSetAdvertisingData(let payload), .leSetScanResponseData(let payload):
            payload.write(to: &writer)
        case .leSetAdvertisingEnable(let enable):
            writer.write(UInt8(enable ? 1 : 0))
        case .leSetScanParameters(let parameters):
            parameters.write(to: &writer)
        case let .leSetScanEnable(enable, filterDuplicates):
            writer.write(UInt8(enable ? 1 : 0))
            writer.write(UInt8(filterDuplicates ? 1 : 0))
        case .leCreateConnection(let parameters):
            parameters.write(to: &writer)
        case let .leConnectionUpdate(handle, parameters), let .leRemoteConnectionParameterRequestReply(handle, parameters):
            writer.write(handle)
            parameters.write(to: &writer)
        case let .leSetDataLength(handle, txOctets, txTime):
            writer.write(handle)
            writer.write(txOctets)
            writer.write(txTime)
        case let .leSetAdvertisingSetRandomAddress(handle, address):
            writer.write(handle)
            writer.write(address)
        case .leSetExtendedAdvertisingParameters(let parameters):
            parameters.write(to: &writer)
        case .leSetExtendedAdvertisingData(let fragment), .leSetExtendedScanResponseData(let fragment):
            fragment.write(to: &writer)
        case .leSetExtendedAdvertisingEnable(let parameters):
            parameters.write(to: &writer)
        case .leRemoveAdvertisingSet(let handle):
            writer.write(handle)
        case .leSetExtendedScanParameters(let parameters):
            parameters.write(to: &writer)
        case .leSetExtendedScanEnable(let parameters):
            parameters.write(to: &writer)
        case .leExtendedCreateConnection(let parameters):
            parameters.write(to: &writer)
        case .other(let raw):
            writer.write(contentsOf: raw.parameters)
        }
    }
}

// MARK: - Decoding

extension HCICommand: WireDecodable {
    /// Decodes a whole command packet (no H4 type byte). The length byte must match the
    /// bytes present, and a known opcode's parameter block must have its exact size.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> HCICommand {
        var reader = ByteReader(bytes, context: "HCI command")
        let opcode = HCIOpcode(try reader.readUInt16())
        let lengthOffset = reader.offset
        let length = Int(try reader.readUInt8())
        if reader.count < length {
            throw reader.error(.truncated(needed: length, available: reader.count))
        }
        if reader.count > length {
            throw WireError(.trailingBytes(count: reader.count - length), at: lengthOffset + 1 + length, in: "HCI command")
        }
        return try decode(opcode: opcode, parameters: reader.readRemaining())
    }

    /// Decodes a command from its opcode and parameter block (e.g. from a capture that
    /// splits them). An unknown opcode gives ``other(_:)``.
    public static func decode(opcode: HCIOpcode, parameters: ArraySlice<UInt8>) throws(WireError) -> HCICommand {
        var reader = ByteReader(parameters, context: "HCI " + (opcode.name ?? "command \(opcode)"))
        let command: HCICommand
        switch opcode {
        case .reset: command = .reset
        case .readLocalVersionInformation: command = .readLocalVersionInformation
        case .readLocalSupportedCommands: command = .readLocalSupportedCommands
        case .readLocalSupportedFeatures: command = .readLocalSupportedFeatures
        case .readBufferSize: command = .readBufferSize
        case .readBDADDR: command = .readBDADDR
        case .leReadBufferSize: command = .leReadBufferSize
        case .leReadBufferSizeV2: command = .leReadBufferSizeV2
        case .leReadLocalSupportedFeatures: command = .leReadLocalSupportedFeatures
        case .leCreateConnectionCancel: command = .leCreateConnectionCancel
        case .leReadMaximumDataLength: command = .leReadMaximumDataLength
        case .leReadAdvertisingPhysicalChannelTxPower: command = .leReadAdvertisingPhysicalChannelTxPower
        case .leReadMaximumAdvertisingDataLength: command = .leReadMaximumAdvertisingDataLength
        case .leReadNumberOfSupportedAdvertisingSets: command = .leReadNumberOfSupportedAdvertisingSets
        case .leClearAdvertisingSets: command = .leClearAdvertisingSets
        case .setEventMask:
            command = .setEventMask(EventMask(rawValue: try reader.readUInt64()))
        case .setEventMaskPage2:
            command = .setEventMaskPage2(EventMaskPage2(rawValue: try reader.readUInt64()))
        case .leSetEventMask:
            command = .leSetEventMask(LEEventMask(rawValue: try reader.readUInt64()))
        case .writeLEHostSupport:
            let supported = try readFlag(&reader, field: "LE_Supported_Host")
            let simultaneous = try readFlag(&reader, field: "Simultaneous_LE_Host")
            command = .writeLEHostSupport(leSupportedHost: supported, simultaneousLEHost: simultaneous)
        case .readRSSI:
            command = .readRSSI(handle: try reader.readUInt16())
        case .leReadRemoteFeatures:
            command = .leReadRemoteFeatures(handle: try reader.readUInt16())
        case .leEnableEncryption:
            let handle = try reader.readUInt16()
            let random = try reader.readUInt64()
            let ediv = try reader.readUInt16()
            command = .leEnableEncryption(handle: handle, random: random, encryptedDiversifier: ediv, longTermKey: try reader.readUInt128())
        case .leLongTermKeyRequestReply:
            let handle = try reader.readUInt16()
            command = .leLongTermKeyRequestReply(handle: handle, longTermKey: try reader.readUInt128())
        case .leLongTermKeyRequestNegativeReply:
            command = .leLongTermKeyRequestNegativeReply(handle: try reader.readUInt16())
        case .disconnect:
            let handle = try reader.readUInt16()
            command = .disconnect(handle: handle, reason: HCIStatus(try reader.readUInt8()))
        case .leRemoteConnectionParameterRequestNegativeReply:
            let handle = try reader.readUInt16()
            command = .leRemoteConnectionParameterRequestNegativeReply(handle: handle, reason: HCIStatus(try reader.readUInt8()))
        case .leSetRandomAddress:
            command = .leSetRandomAddress(try reader.readAddress())
        case .leSetAdvertisingParameters:
            command = .leSetAdvertisingParameters(try AdvertisingParameters(from: &reader))
        case .leSetAdvertisingData:
            command = .leSetAdvertisingData(try AdvertisingPayload(from: &reader))
        case .leSetScanResponseData:
            command = .leSetScanResponseData(try AdvertisingPayload(from: &reader))
        case .leSetAdvertisingEnable:
            command = .leSetAdvertisingEnable(try readFlag(&reader, field: "Advertising_Enable"))
        case .leSetScanParameters:
            command = .leSetScanParameters(try ScanParameters(from: &reader))
        case .leSetScanEnable:
            let enable = try readFlag(&reader, field: "LE_Scan_Enable")
            let filter = try readFlag(&reader, field: "Filter_Duplicates")
            command = .leSetScanEnable(enable: enable, filterDuplicates: filter)
        case .leCreateConnection:
            command = .leCreateConnection(try CreateConnection(from: &reader))
        case .leConnectionUpdate:
            let handle = try reader.readUInt16()
            command = .leConnectionUpdate(handle: handle, parameters: try ConnectionParameters(from: &reader))
        case .leRemoteConnectionParameterRequestReply:
            let handle = try reader.readUInt16()
            command = .leRemoteConnectionParameterRequestReply(handle: handle, parameters: try ConnectionParameters(from: &reader))
        case .leSetDataLength:
            let handle = try reader.readUInt16()
            let octets = try reader.readUInt16()
            command = .leSetDataLength(handle: handle, txOctets: octets, txTime: try reader.readUInt16())
        case .leSetAdvertisingSetRandomAddress:
            let handle = try reader.readUInt8()
            command = .leSetAdvertisingSetRandomAddress(handle: handle, address: try reader.readAddress())
        case .leSetExtendedAdvertisingParameters:
            command = .leSetExtendedAdvertisingParameters(try ExtendedAdvertisingParameters(from: &reader))
        case .leSetExtendedAdvertisingData:
            command = .leSetExtendedAdvertisingData(try AdvertisingDataFragment(from: &reader))
        case .leSetExtendedScanResponseData:
            command = .leSetExtendedScanResponseData(try AdvertisingDataFragment(from: &reader))
        case .leSetExtendedAdvertisingEnable:
            command = .leSetExtendedAdvertisingEnable(try ExtendedAdvertisingEnable(from: &reader))
        case .leRemoveAdvertisingSet:
            command = .leRemoveAdvertisingSet(handle: try reader.readUInt8())
        case .leSetExtendedScanParameters:
            command = .leSetExtendedScanParameters(try ExtendedScanParameters(from: &reader))
        case .leSetExtendedScanEnable:
            command = .leSetExtendedScanEnable(try ExtendedScanEnable(from: &reader))
        case .leExtendedCreateConnection:
            command = .leExtendedCreateConnection(try ExtendedCreateConnection(from: &reader))
        default:
            guard let raw = RawCommand(opcode: opcode, parameters: parameters) else {
                throw reader.error(.invalidLength(parameters.count))
            }
            return .other(raw)
        }
        try reader.expectEnd()
        return command
    }

    /// Reads a one-byte boolean parameter (0 or 1); other values are reserved and rejected.
    package static func readFlag(_ reader: inout ByteReader, field: String) throws(WireError) -> Bool {
        let offset = reader.offset
        switch try reader.readUInt8() {
        case 0: return false
        case 1: return true
        case let value: throw reader.error(.invalidValue("reserved \(field) value 0x\(hex(value))"), at: offset)
        }
    }
}
