import RawbleWire

/// An event on the kernel's management channel (BlueZ `doc/mgmt-api.txt`, "Events"): event
/// code (u16), controller index (u16), parameter length (u16), parameters; see
/// ``ManagementPacket``.
///
/// The events an LE central or peripheral without bluetoothd needs have a case with typed
/// fields, each checked against its fixed size; any other decodes to
/// ``other(code:index:parameters:)``. Every field is kept as received, so a decoded event
/// re-encodes to its exact bytes.
public enum ManagementEvent: Hashable, Sendable {
    /// Command Complete (`0x0001`): a command finished with `status`. `returnParameters` are
    /// the command's own (see ``ManagementVersion``, ``ManagementControllerInformation``, ...);
    /// the kernel sends them on failure too for many commands. At most
    /// ``ManagementPacket/maximumParameterCount`` − 3 bytes fit; ``encoded`` sends the first
    /// that many.
    case commandComplete(index: UInt16, opcode: UInt16, status: ManagementStatus, returnParameters: [UInt8])
    /// Command Status (`0x0002`): an early status for a pending command; a failure also ends it
    /// (the kernel answers invalid lengths, unknown commands and invalid indexes this way).
    case commandStatus(index: UInt16, opcode: UInt16, status: ManagementStatus)
    /// Controller Error (`0x0003`): the controller reported an HCI Hardware Error with `code`.
    case controllerError(index: UInt16, code: UInt8)
    /// Index Added (`0x0004`): a controller appeared.
    case indexAdded(index: UInt16)
    /// Index Removed (`0x0005`): a controller went away.
    case indexRemoved(index: UInt16)
    /// New Settings (`0x0006`): the controller's current settings changed.
    case newSettings(index: UInt16, settings: ManagementSettings)
    /// Class Of Device Changed (`0x0007`); zero while the controller is off.
    case classOfDeviceChanged(index: UInt16, classOfDevice: ClassOfDevice)
    /// Device Connected (`0x000B`): a link to a device is up.
    case deviceConnected(index: UInt16, ManagementDeviceConnected)
    /// Device Disconnected (`0x000C`); `reason` is one of ``ManagementDisconnectionReason``.
    case deviceDisconnected(index: UInt16, address: BluetoothAddress, addressType: ManagementAddressType, reason: UInt8)
    /// Connect Failed (`0x000D`): a connection attempt to a device failed.
    case connectFailed(index: UInt16, address: BluetoothAddress, addressType: ManagementAddressType, status: ManagementStatus)
    /// User Confirmation Request (`0x000F`): the kernel asks whether to go on pairing, to be
    /// answered with User Confirmation Reply or Negative Reply. `confirmHint` 1 means a plain
    /// yes/no (Just Works: nothing to compare); 0 means a person should compare `value`, the
    /// six-digit number both devices show.
    case userConfirmationRequest(index: UInt16, address: BluetoothAddress, addressType: ManagementAddressType,
                                 confirmHint: UInt8, value: UInt32)
    /// User Passkey Request (`0x0010`): the kernel asks for the passkey the peer shows, to be
    /// answered with User Passkey Reply or Negative Reply.
    case userPasskeyRequest(index: UInt16, address: BluetoothAddress, addressType: ManagementAddressType)
    /// Authentication Failed (`0x0011`): pairing or authentication with a device failed.
    case authenticationFailed(index: UInt16, address: BluetoothAddress, addressType: ManagementAddressType,
                              status: ManagementStatus)
    /// Device Found (`0x0012`): discovery saw a device.
    case deviceFound(index: UInt16, ManagementDeviceFound)
    /// Discovering (`0x0013`): discovery on `addressTypes` started or stopped (it may come and
    /// go several times between Start Discovery and Stop Discovery).
    case discovering(index: UInt16, addressTypes: ManagementAddressTypes, discovering: Bool)
    /// Device Unpaired (`0x0016`): another management socket removed a device's keys.
    case deviceUnpaired(index: UInt16, address: BluetoothAddress, addressType: ManagementAddressType)
    /// Passkey Notify (`0x0017`): show `passkey` to the user; `entered` counts the digits typed
    /// on the peer so far. Needs no answer.
    case passkeyNotify(index: UInt16, address: BluetoothAddress, addressType: ManagementAddressType,
                       passkey: UInt32, entered: UInt8)
    /// Any other event, kept as code, index and raw parameters. At most
    /// ``ManagementPacket/maximumParameterCount`` bytes fit; ``encoded`` sends the first that
    /// many. A modelled code given here encodes as given, but decodes to its typed case.
    case other(code: UInt16, index: UInt16, parameters: [UInt8])
}

/// A Device Found event's fields (`doc/mgmt-api.txt`, Device Found).
public struct ManagementDeviceFound: Hashable, Sendable {
    public var address: BluetoothAddress
    public var addressType: ManagementAddressType
    /// Signal strength in dBm; 127 when the controller did not measure it (see ``measuredRSSI``).
    public var rssi: Int8
    public var flags: ManagementDeviceFoundFlags
    /// The EIR data: for an LE device its advertising data, the scan response's structures
    /// after them, in the AD structure format (read it with ``advertisingData``).
    public var data: [UInt8]

    /// The most EIR bytes one event can carry (14 bytes of fixed fields come first);
    /// ``ManagementEvent/encoded`` sends the first that many.
    public static let maximumDataCount = ManagementPacket.maximumParameterCount - 14

    public init(address: BluetoothAddress, addressType: ManagementAddressType, rssi: Int8,
                flags: ManagementDeviceFoundFlags = [], data: [UInt8] = []) {
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.flags = flags
        self.data = data
    }

    /// ``rssi``, or `nil` when it is 127 (not available).
    public var measuredRSSI: Int8? { rssi == 127 ? nil : rssi }

    /// The EIR data read as AD structures (tolerant: the structures before a broken one are kept).
    public var advertisingData: AdvertisingData { AdvertisingData(decoding: data) }

    /// The address with its HCI LE type; `nil` for a BR/EDR device.
    public var deviceAddress: DeviceAddress? {
        addressType.leAddressType.map { DeviceAddress(address, type: $0) }
    }

    /// Whether the device accepts connections (no Not Connectable flag).
    public var isConnectable: Bool { !flags.contains(.notConnectable) }
}

/// A Device Connected event's fields (`doc/mgmt-api.txt`, Device Connected).
public struct ManagementDeviceConnected: Hashable, Sendable {
    /// The device's address; its identity address when the kernel resolved it.
    public var address: BluetoothAddress
    public var addressType: ManagementAddressType
    public var flags: ManagementConnectionFlags
    /// EIR data the kernel knows for the device (its advertising data on LE, name and class on
    /// BR/EDR), in the AD structure format.
    public var data: [UInt8]

    /// The most EIR bytes one event can carry (13 bytes of fixed fields come first);
    /// ``ManagementEvent/encoded`` sends the first that many.
    public static let maximumDataCount = ManagementPacket.maximumParameterCount - 13

    public init(address: BluetoothAddress, addressType: ManagementAddressType,
                flags: ManagementConnectionFlags = [], data: [UInt8] = []) {
        self.address = address
        self.addressType = addressType
        self.flags = flags
        self.data = data
    }

    /// The EIR data read as AD structures.
    public var advertisingData: AdvertisingData { AdvertisingData(decoding: data) }

    /// The address with its HCI LE type; `nil` for a BR/EDR device.
    public var deviceAddress: DeviceAddress? {
        addressType.leAddressType.map { DeviceAddress(address, type: $0) }
    }
}

// MARK: - Code, index and name

extension ManagementEvent {
    /// The event code (``ManagementEventCode``).
    public var code: UInt16 {
        switch self {
        case .commandComplete: ManagementEventCode.commandComplete
        case .commandStatus: ManagementEventCode.commandStatus
        case .controllerError: ManagementEventCode.controllerError
        case .indexAdded: ManagementEventCode.indexAdded
        case .indexRemoved: ManagementEventCode.indexRemoved
        case .newSettings: ManagementEventCode.newSettings
        case .classOfDeviceChanged: ManagementEventCode.classOfDeviceChanged
        case .deviceConnected: ManagementEventCode.deviceConnected
        case .deviceDisconnected: ManagementEventCode.deviceDisconnected
        case .connectFailed: ManagementEventCode.connectFailed
        case .userConfirmationRequest: ManagementEventCode.userConfirmationRequest
        case .userPasskeyRequest: ManagementEventCode.userPasskeyRequest
        case .authenticationFailed: ManagementEventCode.authenticationFailed
        case .deviceFound: ManagementEventCode.deviceFound
        case .discovering: ManagementEventCode.discovering
        case .deviceUnpaired: ManagementEventCode.deviceUnpaired
        case .passkeyNotify: ManagementEventCode.passkeyNotify
        case .other(let code, _, _): code
        }
    }

    /// The controller index the event is about; ``ManagementIndex/none`` for the answers to
    /// non-controller commands.
    public var index: UInt16 {
        switch self {
        case .commandComplete(let index, _, _, _), .commandStatus(let index, _, _), .controllerError(let index, _),
             .indexAdded(let index), .indexRemoved(let index), .newSettings(let index, _),
             .classOfDeviceChanged(let index, _), .deviceConnected(let index, _), .deviceDisconnected(let index, _, _, _),
             .connectFailed(let index, _, _, _), .userConfirmationRequest(let index, _, _, _, _),
             .userPasskeyRequest(let index, _, _), .authenticationFailed(let index, _, _, _), .deviceFound(let index, _),
             .discovering(let index, _, _), .deviceUnpaired(let index, _, _), .passkeyNotify(let index, _, _, _, _),
             .other(_, let index, _):
            index
        }
    }

    /// The documentation's name of the event, or its code in hex when it has none.
    public var name: String { managementEventNames.displayName(of: code) }
}

extension ManagementEvent: CustomStringConvertible {
    /// The event's name, code and index; for Command Complete and Command Status also the
    /// command and the status, e.g.
    /// `Command Complete (0x0001) hci0: Set Powered (0x0005), Success (0x00)`.
    public var description: String {
        let head = "\(ManagementEventCode.description(of: code)) \(ManagementIndex.description(of: index))"
        switch self {
        case let .commandComplete(_, opcode, status, _), let .commandStatus(_, opcode, status):
            return "\(head): \(ManagementOpcode.description(of: opcode)), \(status)"
        default:
            return ManagementPacket.describe(head, parameters: parameters)
        }
    }
}

// MARK: - Encoding

extension ManagementEvent: WireEncodable {
    /// Writes the whole packet: code, index, parameter length, parameters.
    public func encode(into writer: inout ByteWriter) {
        ManagementPacket.write(code: code, index: index, into: &writer) { encodeParameters(into: &$0) }
    }

    /// The encoded parameter block (after the header).
    public var parameters: [UInt8] { ManagementPacket.bytes { encodeParameters(into: &$0) } }

    /// Writes only the event parameters (what follows the header).
    public func encodeParameters(into writer: inout ByteWriter) {
        switch self {
        case let .commandComplete(_, opcode, status, returnParameters):
            writer.write(opcode)
            writer.write(status.rawValue)
            writer.write(contentsOf: returnParameters.prefix(ManagementPacket.maximumParameterCount - 3))
        case let .commandStatus(_, opcode, status):
            writer.write(opcode)
            writer.write(status.rawValue)
        case .controllerError(_, let errorCode):
            writer.write(errorCode)
        case .indexAdded, .indexRemoved:
            break
        case .newSettings(_, let settings):
            writer.write(settings.rawValue)
        case .classOfDeviceChanged(_, let classOfDevice):
            writer.writeUInt24(classOfDevice.rawValue)
        case .deviceConnected(_, let device):
            writer.writeManagementAddress(device.address, device.addressType)
            writer.write(device.flags.rawValue)
            writer.writeEIR(device.data, maximumCount: ManagementDeviceConnected.maximumDataCount)
        case let .deviceDisconnected(_, address, type, reason):
            writer.writeManagementAddress(address, type)
            writer.write(reason)
        case let .connectFailed(_, address, type, status), let .authenticationFailed(_, address, type, status):
            writer.writeManagementAddress(address, type)
            writer.write(status.rawValue)
        case let .userConfirmationRequest(_, address, type, confirmHint, value):
            writer.writeManagementAddress(address, type)
            writer.write(confirmHint)
            writer.write(value)
        case let .userPasskeyRequest(_, address, type), let .deviceUnpaired(_, address, type):
            writer.writeManagementAddress(address, type)
        case .deviceFound(_, let device):
            writer.writeManagementAddress(device.address, device.addressType)
            writer.write(device.rssi)
            writer.write(device.flags.rawValue)
            writer.writeEIR(device.data, maximumCount: ManagementDeviceFound.maximumDataCount)
        case let .discovering(_, types, discovering):
            writer.write(types.rawValue)
            writer.write(UInt8(discovering ? 1 : 0))
        case let .passkeyNotify(_, address, type, passkey, entered):
            writer.writeManagementAddress(address, type)
            writer.write(passkey)
            writer.write(entered)
        case .other(_, _, let parameters):
            writer.write(contentsOf: parameters.prefix(ManagementPacket.maximumParameterCount))
        }
    }
}

extension ByteWriter {
    /// Writes EIR data after its u16 length, cut to `maximumCount` bytes so the length and the
    /// packet's length field stay true.
    fileprivate mutating func writeEIR(_ data: [UInt8], maximumCount: Int) {
        let sent = data.prefix(maximumCount)
        write(UInt16(truncatingIfNeeded: sent.count))
        write(contentsOf: sent)
    }
}

// MARK: - Decoding

extension ManagementEvent: WireDecodable {
    /// Decodes a whole event packet. The length field must match the bytes present, a
    /// modelled event's parameters must have their fixed size, and Device Found's and Device
    /// Connected's EIR length must match the bytes after it.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> ManagementEvent {
        let packet = try ManagementPacket.split(bytes, kind: "event")
        return try decode(code: packet.code, index: packet.index, parameters: packet.parameters)
    }

    /// Decodes an event from its header fields and parameter block (e.g. from the HCI
    /// monitor channel, which carries them apart). An unmodelled code gives
    /// ``other(code:index:parameters:)``.
    public static func decode(code: UInt16, index: UInt16, parameters: ArraySlice<UInt8>) throws(WireError) -> ManagementEvent {
        var r = try ManagementPacket.reader(parameters, context: managementEventNames.context(of: code))
        let event: ManagementEvent
        switch code {
        case ManagementEventCode.commandComplete:
            let opcode = try r.readUInt16()
            let status = ManagementStatus(try r.readUInt8())
            return .commandComplete(index: index, opcode: opcode, status: status, returnParameters: Array(r.readRemaining()))
        case ManagementEventCode.commandStatus:
            let opcode = try r.readUInt16()
            event = .commandStatus(index: index, opcode: opcode, status: ManagementStatus(try r.readUInt8()))
        case ManagementEventCode.controllerError:
            event = .controllerError(index: index, code: try r.readUInt8())
        case ManagementEventCode.indexAdded:
            event = .indexAdded(index: index)
        case ManagementEventCode.indexRemoved:
            event = .indexRemoved(index: index)
        case ManagementEventCode.newSettings:
            event = .newSettings(index: index, settings: ManagementSettings(rawValue: try r.readUInt32()))
        case ManagementEventCode.classOfDeviceChanged:
            event = .classOfDeviceChanged(index: index, classOfDevice: ClassOfDevice(rawValue: try r.readUInt24()))
        case ManagementEventCode.deviceConnected:
            let (address, type) = try r.readManagementAddress()
            let flags = ManagementConnectionFlags(rawValue: try r.readUInt32())
            let data = try r.readEIR()
            event = .deviceConnected(index: index, ManagementDeviceConnected(
                address: address, addressType: type, flags: flags, data: data))
        case ManagementEventCode.deviceDisconnected:
            let (address, type) = try r.readManagementAddress()
            event = .deviceDisconnected(index: index, address: address, addressType: type, reason: try r.readUInt8())
        case ManagementEventCode.connectFailed, ManagementEventCode.authenticationFailed:
            let (address, type) = try r.readManagementAddress()
            let status = ManagementStatus(try r.readUInt8())
            event = code == ManagementEventCode.connectFailed
                ? .connectFailed(index: index, address: address, addressType: type, status: status)
                : .authenticationFailed(index: index, address: address, addressType: type, status: status)
        case ManagementEventCode.userConfirmationRequest:
            let (address, type) = try r.readManagementAddress()
            let hint = try r.readUInt8()
            event = .userConfirmationRequest(index: index, address: address, addressType: type,
                                             confirmHint: hint, value: try r.readUInt32())
        case ManagementEventCode.userPasskeyRequest, ManagementEventCode.deviceUnpaired:
            let (address, type) = try r.readManagementAddress()
            event = code == ManagementEventCode.userPasskeyRequest
                ? .userPasskeyRequest(index: index, address: address, addressType: type)
                : .deviceUnpaired(index: index, address: address, addressType: type)
        case ManagementEventCode.deviceFound:
            let (address, type) = try r.readManagementAddress()
            let rssi = try r.readInt8()
            let flags = ManagementDeviceFoundFlags(rawValue: try r.readUInt32())
            let data = try r.readEIR()
            event = .deviceFound(index: index, ManagementDeviceFound(
                address: address, addressType: type, rssi: rssi, flags: flags, data: data))
        case ManagementEventCode.discovering:
            let types = ManagementAddressTypes(rawValue: try r.readUInt8())
            event = .discovering(index: index, addressTypes: types,
                                 discovering: try HCICommand.readFlag(&r, field: "Discovering"))
        case ManagementEventCode.passkeyNotify:
            let (address, type) = try r.readManagementAddress()
            let passkey = try r.readUInt32()
            event = .passkeyNotify(index: index, address: address, addressType: type,
                                   passkey: passkey, entered: try r.readUInt8())
        default:
            return .other(code: code, index: index, parameters: Array(parameters))
        }
        try r.expectEnd()
        return event
    }
}

extension ByteReader {
    /// Reads EIR data after its u16 length, which must count every byte left.
    fileprivate mutating func readEIR() throws(WireError) -> [UInt8] {
        let length = Int(try readUInt16())
        try expectRemaining(length)
        return Array(readRemaining())
    }
}
