import RawbleWire

/// A command on the kernel's management channel (BlueZ `doc/mgmt-api.txt`), as a program
/// driving the kernel's Bluetooth without bluetoothd sends it: opcode (u16), controller index
/// (u16), parameter length (u16), parameters; see ``ManagementPacket``.
///
/// Each command rawble uses has a case with typed parameters; any other decodes to
/// ``other(opcode:index:parameters:)`` with its raw parameters and re-encodes to the same
/// bytes. Every case carries the controller index it is sent to, except the three commands
/// about the management interface itself, which go to ``ManagementIndex/none``. The kernel
/// answers each command with a ``ManagementEvent/commandComplete(index:opcode:status:returnParameters:)``
/// or a ``ManagementEvent/commandStatus(index:opcode:status:)`` naming its opcode.
public enum ManagementCommand: Hashable, Sendable {
    /// Read Management Version Information (`0x0001`, non-controller): answered by a
    /// ``ManagementVersion``.
    case readVersion
    /// Read Management Supported Commands (`0x0002`, non-controller): answered by
    /// ``ManagementSupportedCommands``.
    case readCommands
    /// Read Controller Index List (`0x0003`, non-controller): answered by a ``ManagementIndexList``.
    case readIndexList
    /// Read Controller Information (`0x0004`): answered by ``ManagementControllerInformation``.
    /// Any user may send it, and sending it marks the controller managed.
    case readControllerInformation(index: UInt16)
    /// Set Powered (`0x0005`): answered by the current ``ManagementSettings``.
    case setPowered(index: UInt16, on: Bool)
    /// Set Connectable (`0x0007`): answered by the current ``ManagementSettings``.
    case setConnectable(index: UInt16, on: Bool)
    /// Set Bondable (`0x0009`): answered by the current ``ManagementSettings``.
    case setBondable(index: UInt16, on: Bool)
    /// Set Low Energy (`0x000D`): answered by the current ``ManagementSettings``.
    case setLowEnergy(index: UInt16, on: Bool)
    /// Disconnect (`0x0014`) a connected device: answered by a ``ManagementAddress``.
    case disconnect(index: UInt16, address: BluetoothAddress, addressType: ManagementAddressType)
    /// Set IO Capability (`0x0018`) used for pairing (SMP and SSP values alike): no return
    /// parameters.
    case setIOCapability(index: UInt16, ioCapability: SMPIOCapability)
    /// Pair Device (`0x0019`), with the IO capability for this pairing only: answered by the
    /// device's ``ManagementAddress`` (its identity address when it shared one).
    case pairDevice(index: UInt16, address: BluetoothAddress, addressType: ManagementAddressType,
                    ioCapability: SMPIOCapability)
    /// Cancel Pair Device (`0x001A`): answered by a ``ManagementAddress``.
    case cancelPairDevice(index: UInt16, address: BluetoothAddress, addressType: ManagementAddressType)
    /// Unpair Device (`0x001B`): removes the device's keys; `disconnect` also ends its links.
    /// Answered by a ``ManagementAddress``.
    case unpairDevice(index: UInt16, address: BluetoothAddress, addressType: ManagementAddressType, disconnect: Bool)
    /// User Confirmation Reply (`0x001C`): yes to a
    /// ``ManagementEvent/userConfirmationRequest(index:address:addressType:confirmHint:value:)``.
    case userConfirmationReply(index: UInt16, address: BluetoothAddress, addressType: ManagementAddressType)
    /// User Confirmation Negative Reply (`0x001D`): no to a User Confirmation Request.
    case userConfirmationNegativeReply(index: UInt16, address: BluetoothAddress, addressType: ManagementAddressType)
    /// User Passkey Reply (`0x001E`): the passkey (0–999999) a
    /// ``ManagementEvent/userPasskeyRequest(index:address:addressType:)`` asked for.
    case userPasskeyReply(index: UInt16, address: BluetoothAddress, addressType: ManagementAddressType, passkey: UInt32)
    /// User Passkey Negative Reply (`0x001F`): refuses a User Passkey Request.
    case userPasskeyNegativeReply(index: UInt16, address: BluetoothAddress, addressType: ManagementAddressType)
    /// Start Discovery (`0x0023`) on the given transports (``ManagementAddressTypes/le`` for an
    /// LE scan): answered by the ``ManagementAddressTypes``; devices arrive as Device Found.
    case startDiscovery(index: UInt16, addressTypes: ManagementAddressTypes)
    /// Stop Discovery (`0x0024`) started with the same address types.
    case stopDiscovery(index: UInt16, addressTypes: ManagementAddressTypes)
    /// Start Service Discovery (`0x003A`): discovery (active scanning on LE) that reports only
    /// devices advertising one of `uuids` (all when empty) at `rssiThreshold` dBm or stronger
    /// (127: any signal). Each UUID travels in its 128-bit form. At most
    /// ``maximumServiceDiscoveryUUIDs`` fit in a packet; ``encoded`` sends the first that many.
    case startServiceDiscovery(index: UInt16, addressTypes: ManagementAddressTypes, rssiThreshold: Int8, uuids: [BluetoothUUID])
    /// Start Limited Discovery (`0x0041`): discovery of devices in limited discoverable mode.
    case startLimitedDiscovery(index: UInt16, addressTypes: ManagementAddressTypes)
    /// Any other command, kept as opcode, index and raw parameters. At most
    /// ``ManagementPacket/maximumParameterCount`` parameter bytes fit in a packet; ``encoded``
    /// sends the first that many. A modelled opcode given here encodes as given, but decodes to
    /// its typed case.
    case other(opcode: UInt16, index: UInt16, parameters: [UInt8])

    /// The most UUIDs one Start Service Discovery can carry (16 bytes each after 4 bytes of
    /// fixed parameters).
    public static let maximumServiceDiscoveryUUIDs = (ManagementPacket.maximumParameterCount - 4) / 16
}

// MARK: - Opcode, index and name

extension ManagementCommand {
    /// The command's opcode (``ManagementOpcode``).
    public var opcode: UInt16 {
        switch self {
        case .readVersion: ManagementOpcode.readVersion
        case .readCommands: ManagementOpcode.readCommands
        case .readIndexList: ManagementOpcode.readIndexList
        case .readControllerInformation: ManagementOpcode.readControllerInformation
        case .setPowered: ManagementOpcode.setPowered
        case .setConnectable: ManagementOpcode.setConnectable
        case .setBondable: ManagementOpcode.setBondable
        case .setLowEnergy: ManagementOpcode.setLowEnergy
        case .disconnect: ManagementOpcode.disconnect
        case .setIOCapability: ManagementOpcode.setIOCapability
        case .pairDevice: ManagementOpcode.pairDevice
        case .cancelPairDevice: ManagementOpcode.cancelPairDevice
        case .unpairDevice: ManagementOpcode.unpairDevice
        case .userConfirmationReply: ManagementOpcode.userConfirmationReply
        case .userConfirmationNegativeReply: ManagementOpcode.userConfirmationNegativeReply
        case .userPasskeyReply: ManagementOpcode.userPasskeyReply
        case .userPasskeyNegativeReply: ManagementOpcode.userPasskeyNegativeReply
        case .startDiscovery: ManagementOpcode.startDiscovery
        case .stopDiscovery: ManagementOpcode.stopDiscovery
        case .startServiceDiscovery: ManagementOpcode.startServiceDiscovery
        case .startLimitedDiscovery: ManagementOpcode.startLimitedDiscovery
        case .other(let opcode, _, _): opcode
        }
    }

    /// The controller index the command is sent to; ``ManagementIndex/none`` for the
    /// non-controller commands.
    public var index: UInt16 {
        switch self {
        case .readVersion, .readCommands, .readIndexList:
            ManagementIndex.none
        case .readControllerInformation(let index), .setPowered(let index, _), .setConnectable(let index, _),
             .setBondable(let index, _), .setLowEnergy(let index, _), .disconnect(let index, _, _),
             .setIOCapability(let index, _), .pairDevice(let index, _, _, _), .cancelPairDevice(let index, _, _),
             .unpairDevice(let index, _, _, _), .userConfirmationReply(let index, _, _),
             .userConfirmationNegativeReply(let index, _, _), .userPasskeyReply(let index, _, _, _),
             .userPasskeyNegativeReply(let index, _, _), .startDiscovery(let index, _), .stopDiscovery(let index, _),
             .startServiceDiscovery(let index, _, _, _), .startLimitedDiscovery(let index, _), .other(_, let index, _):
            index
        }
    }

    /// The documentation's name of the command, or its opcode in hex when it has none.
    public var name: String { managementCommandNames.displayName(of: opcode) }
}

extension ManagementCommand: CustomStringConvertible {
    /// The command's name, opcode, index and parameter bytes, e.g.
    /// `Set Powered (0x0005) hci0: 01`.
    public var description: String {
        ManagementPacket.describe("\(ManagementOpcode.description(of: opcode)) \(ManagementIndex.description(of: index))",
                                  parameters: parameters)
    }
}

// MARK: - Encoding

extension ManagementCommand: WireEncodable {
    /// Writes the whole packet: opcode, index, parameter length, parameters.
    public func encode(into writer: inout ByteWriter) {
        ManagementPacket.write(code: opcode, index: index, into: &writer) { writeParameters(into: &$0) }
    }

    /// The encoded parameter block (after the header).
    public var parameters: [UInt8] { ManagementPacket.bytes { writeParameters(into: &$0) } }

    /// Writes the parameter block.
    public func writeParameters(into writer: inout ByteWriter) {
        switch self {
        case .readVersion, .readCommands, .readIndexList, .readControllerInformation:
            break
        case .setPowered(_, let on), .setConnectable(_, let on), .setBondable(_, let on), .setLowEnergy(_, let on):
            writer.write(UInt8(on ? 1 : 0))
        case let .disconnect(_, address, type), let .cancelPairDevice(_, address, type),
             let .userConfirmationReply(_, address, type), let .userConfirmationNegativeReply(_, address, type),
             let .userPasskeyNegativeReply(_, address, type):
            writer.writeManagementAddress(address, type)
        case .setIOCapability(_, let capability):
            writer.write(capability.rawValue)
        case let .pairDevice(_, address, type, capability):
            writer.writeManagementAddress(address, type)
            writer.write(capability.rawValue)
        case let .unpairDevice(_, address, type, disconnect):
            writer.writeManagementAddress(address, type)
            writer.write(UInt8(disconnect ? 1 : 0))
        case let .userPasskeyReply(_, address, type, passkey):
            writer.writeManagementAddress(address, type)
            writer.write(passkey)
        case .startDiscovery(_, let types), .stopDiscovery(_, let types), .startLimitedDiscovery(_, let types):
            writer.write(types.rawValue)
        case let .startServiceDiscovery(_, types, rssiThreshold, uuids):
            let sent = uuids.prefix(Self.maximumServiceDiscoveryUUIDs)
            writer.write(types.rawValue)
            writer.write(rssiThreshold)
            writer.write(UInt16(truncatingIfNeeded: sent.count))
            for uuid in sent { writer.write(uuid, width: 16) }
        case .other(_, _, let parameters):
            writer.write(contentsOf: parameters.prefix(ManagementPacket.maximumParameterCount))
        }
    }
}

// MARK: - Decoding

extension ManagementCommand: WireDecodable {
    /// Decodes a whole command packet. The length field must match the bytes present, and a
    /// modelled opcode's parameters must have their exact size.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> ManagementCommand {
        let packet = try ManagementPacket.split(bytes, kind: "command")
        return try decode(opcode: packet.code, index: packet.index, parameters: packet.parameters)
    }

    /// Decodes a command from its header fields and parameter block. An opcode this type does
    /// not model gives ``other(opcode:index:parameters:)``, and so does a non-controller
    /// command sent to a controller index (the kernel answers it with Invalid Index), so that
    /// it re-encodes unchanged.
    public static func decode(opcode: UInt16, index: UInt16, parameters: ArraySlice<UInt8>) throws(WireError) -> ManagementCommand {
        var reader = try ManagementPacket.reader(parameters, context: managementCommandNames.context(of: opcode))
        let command: ManagementCommand
        switch opcode {
        case ManagementOpcode.readVersion, ManagementOpcode.readCommands, ManagementOpcode.readIndexList:
            guard index == ManagementIndex.none else {
                return .other(opcode: opcode, index: index, parameters: Array(parameters))
            }
            command = opcode == ManagementOpcode.readVersion ? .readVersion
                : opcode == ManagementOpcode.readCommands ? .readCommands : .readIndexList
        case ManagementOpcode.readControllerInformation:
            command = .readControllerInformation(index: index)
        case ManagementOpcode.setPowered:
            command = .setPowered(index: index, on: try HCICommand.readFlag(&reader, field: "Powered"))
        case ManagementOpcode.setConnectable:
            command = .setConnectable(index: index, on: try HCICommand.readFlag(&reader, field: "Connectable"))
        case ManagementOpcode.setBondable:
            command = .setBondable(index: index, on: try HCICommand.readFlag(&reader, field: "Bondable"))
        case ManagementOpcode.setLowEnergy:
            command = .setLowEnergy(index: index, on: try HCICommand.readFlag(&reader, field: "Low_Energy"))
        case ManagementOpcode.disconnect:
            let (address, type) = try reader.readManagementAddress()
            command = .disconnect(index: index, address: address, addressType: type)
        case ManagementOpcode.setIOCapability:
            command = .setIOCapability(index: index, ioCapability: SMPIOCapability(try reader.readUInt8()))
        case ManagementOpcode.pairDevice:
            let (address, type) = try reader.readManagementAddress()
            command = .pairDevice(index: index, address: address, addressType: type,
                                  ioCapability: SMPIOCapability(try reader.readUInt8()))
        case ManagementOpcode.cancelPairDevice:
            let (address, type) = try reader.readManagementAddress()
            command = .cancelPairDevice(index: index, address: address, addressType: type)
        case ManagementOpcode.unpairDevice:
            let (address, type) = try reader.readManagementAddress()
            command = .unpairDevice(index: index, address: address, addressType: type,
                                    disconnect: try HCICommand.readFlag(&reader, field: "Disconnect"))
        case ManagementOpcode.userConfirmationReply:
            let (address, type) = try reader.readManagementAddress()
            command = .userConfirmationReply(index: index, address: address, addressType: type)
        case ManagementOpcode.userConfirmationNegativeReply:
            let (address, type) = try reader.readManagementAddress()
            command = .userConfirmationNegativeReply(index: index, address: address, addressType: type)
        case ManagementOpcode.userPasskeyReply:
            let (address, type) = try reader.readManagementAddress()
            command = .userPasskeyReply(index: index, address: address, addressType: type, passkey: try reader.readUInt32())
        case ManagementOpcode.userPasskeyNegativeReply:
            let (address, type) = try reader.readManagementAddress()
            command = .userPasskeyNegativeReply(index: index, address: address, addressType: type)
        case ManagementOpcode.startDiscovery:
            command = .startDiscovery(index: index, addressTypes: ManagementAddressTypes(rawValue: try reader.readUInt8()))
        case ManagementOpcode.stopDiscovery:
            command = .stopDiscovery(index: index, addressTypes: ManagementAddressTypes(rawValue: try reader.readUInt8()))
        case ManagementOpcode.startLimitedDiscovery:
            command = .startLimitedDiscovery(index: index, addressTypes: ManagementAddressTypes(rawValue: try reader.readUInt8()))
        case ManagementOpcode.startServiceDiscovery:
            let types = ManagementAddressTypes(rawValue: try reader.readUInt8())
            let threshold = try reader.readInt8()
            let count = Int(try reader.readUInt16())
            try reader.expectRemaining(count * 16)  // UUID_Count accounts for every byte after it
            var uuids: [BluetoothUUID] = []
            uuids.reserveCapacity(count)
            for _ in 0..<count { uuids.append(try reader.readUUID(width: 16)) }
            command = .startServiceDiscovery(index: index, addressTypes: types, rssiThreshold: threshold, uuids: uuids)
        default:
            return .other(opcode: opcode, index: index, parameters: Array(parameters))
        }
        try reader.expectEnd()
        return command
    }
}
