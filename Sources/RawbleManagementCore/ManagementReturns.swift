import RawbleWire

/// A command's typed return parameters: what a successful
/// ``ManagementEvent/commandComplete(index:opcode:status:returnParameters:)`` carries after
/// its status (`doc/mgmt-api.txt`, each command's "Return Parameters").
///
/// Decoding checks the exact size (or the count fields against the bytes present);
/// ``returnParameters`` builds the bytes back, e.g. for a scripted kernel in a test.
public protocol ManagementReturnParameters: Hashable, Sendable {
    /// Decodes return parameters that fill `returnParameters` exactly.
    static func decode(returnParameters: ArraySlice<UInt8>) throws(WireError) -> Self
    /// The encoded return parameters.
    var returnParameters: [UInt8] { get }
}

extension ManagementReturnParameters {
    /// Decodes return parameters that fill `returnParameters` exactly.
    public static func decode(returnParameters: [UInt8]) throws(WireError) -> Self {
        try decode(returnParameters: returnParameters[...])
    }
}

/// Read Management Version Information's answer: the management interface's version and
/// revision (e.g. 1.22), which tell which commands and fixes a kernel has.
public struct ManagementVersion: ManagementReturnParameters, CustomStringConvertible {
    public var version: UInt8
    public var revision: UInt16

    public init(version: UInt8, revision: UInt16) {
        self.version = version
        self.revision = revision
    }

    public static func decode(returnParameters: ArraySlice<UInt8>) throws(WireError) -> ManagementVersion {
        try decodeWhole(returnParameters, "Management Read Version Information return parameters") { (r) throws(WireError) in
            ManagementVersion(version: try r.readUInt8(), revision: try r.readUInt16())
        }
    }

    public var returnParameters: [UInt8] {
        ManagementPacket.bytes(capacity: 3) {
            $0.write(version)
            $0.write(revision)
        }
    }

    /// `1.22`.
    public var description: String { "\(version).\(revision)" }
}

/// Read Management Supported Commands' answer: the opcodes and event codes this kernel
/// supports, beyond the ones every kernel has (Read Version, Read Supported Commands,
/// Command Complete, Command Status).
public struct ManagementSupportedCommands: ManagementReturnParameters {
    public var commands: [UInt16]
    public var events: [UInt16]

    /// The most opcodes and codes together one Command Complete can carry;
    /// ``returnParameters`` keeps the commands first, then the events, up to this many.
    public static let maximumEntries = (ManagementPacket.maximumParameterCount - 3 - 4) / 2

    public init(commands: [UInt16], events: [UInt16]) {
        self.commands = commands
        self.events = events
    }

    public static func decode(returnParameters: ArraySlice<UInt8>) throws(WireError) -> ManagementSupportedCommands {
        var r = ByteReader(returnParameters, context: "Management Read Supported Commands return parameters")
        let commandCount = Int(try r.readUInt16())
        let eventCount = Int(try r.readUInt16())
        try r.expectRemaining(2 * (commandCount + eventCount))
        return ManagementSupportedCommands(commands: try r.readUInt16s(commandCount), events: try r.readUInt16s(eventCount))
    }

    public var returnParameters: [UInt8] {
        let sentCommands = commands.prefix(Self.maximumEntries)
        let sentEvents = events.prefix(Self.maximumEntries - sentCommands.count)
        var writer = ByteWriter(capacity: 4 + 2 * (sentCommands.count + sentEvents.count))
        writer.write(UInt16(truncatingIfNeeded: sentCommands.count))
        writer.write(UInt16(truncatingIfNeeded: sentEvents.count))
        for opcode in sentCommands { writer.write(opcode) }
        for code in sentEvents { writer.write(code) }
        return writer.bytes
    }

    /// Whether the kernel supports the command with `opcode`; always `true` for the two every
    /// kernel has and leaves out of the list.
    public func supports(opcode: UInt16) -> Bool {
        opcode == ManagementOpcode.readVersion || opcode == ManagementOpcode.readCommands || commands.contains(opcode)
    }
}

/// Read Controller Index List's answer: the indexes of the configured controllers (`hciN`).
public struct ManagementIndexList: ManagementReturnParameters, CustomStringConvertible {
    public var indexes: [UInt16]

    /// The most indexes one Command Complete can carry; ``returnParameters`` keeps the first
    /// this many.
    public static let maximumCount = (ManagementPacket.maximumParameterCount - 3 - 2) / 2

    public init(_ indexes: [UInt16]) {
        self.indexes = indexes
    }

    public static func decode(returnParameters: ArraySlice<UInt8>) throws(WireError) -> ManagementIndexList {
        var r = ByteReader(returnParameters, context: "Management Read Controller Index List return parameters")
        let count = Int(try r.readUInt16())
        try r.expectRemaining(2 * count)  // Num_Controllers accounts for every byte after it
        return ManagementIndexList(try r.readUInt16s(count))
    }

    public var returnParameters: [UInt8] {
        let sent = indexes.prefix(Self.maximumCount)
        var writer = ByteWriter(capacity: 2 + 2 * sent.count)
        writer.write(UInt16(truncatingIfNeeded: sent.count))
        for index in sent { writer.write(index) }
        return writer.bytes
    }

    /// `[hci0, hci1]`.
    public var description: String {
        "[" + indexes.map { ManagementIndex.description(of: $0) }.joined(separator: ", ") + "]"
    }
}

/// Read Controller Information's answer (`doc/mgmt-api.txt`, Read Controller Information):
/// 280 bytes, the name and short name NUL-padded to 249 and 11 bytes.
///
/// The names are kept as the bytes before their NUL (``nameBytes``, ``shortNameBytes``), so
/// a decoded value encodes back to the same fields (the padding after the NUL is written as
/// zeros); ``name`` and ``shortName`` read them as UTF-8, invalid sequences replaced by U+FFFD.
public struct ManagementControllerInformation: ManagementReturnParameters, CustomStringConvertible {
    /// The controller's public address; `00:00:00:00:00:00` on an LE-only controller without one.
    public var address: BluetoothAddress
    /// The HCI version number (e.g. `0x0C` for Core 5.3).
    public var bluetoothVersion: UInt8
    /// The controller's manufacturer (a company identifier).
    public var manufacturer: UInt16
    public var supportedSettings: ManagementSettings
    public var currentSettings: ManagementSettings
    public var classOfDevice: ClassOfDevice
    /// The complete name's bytes, before its NUL terminator (at most 249).
    public private(set) var nameBytes: [UInt8]
    /// The short name's bytes, before its NUL terminator (at most 11; none when unset).
    public private(set) var shortNameBytes: [UInt8]

    /// Size of the name field (248 bytes of name and a NUL).
    public static let nameFieldCount = 249
    /// Size of the short name field (10 bytes of name and a NUL).
    public static let shortNameFieldCount = 11
    /// Size of the whole return parameter block.
    public static let returnParameterCount = 6 + 1 + 2 + 4 + 4 + 3 + nameFieldCount + shortNameFieldCount

    /// `name` and `shortName` are cut at a NUL they contain and to what their fields hold
    /// (248 and 10 bytes of UTF-8), without splitting a character's encoding.
    public init(address: BluetoothAddress, bluetoothVersion: UInt8, manufacturer: UInt16,
                supportedSettings: ManagementSettings, currentSettings: ManagementSettings,
                classOfDevice: ClassOfDevice = ClassOfDevice(rawValue: 0), name: String, shortName: String = "") {
        self.address = address
        self.bluetoothVersion = bluetoothVersion
        self.manufacturer = manufacturer
        self.supportedSettings = supportedSettings
        self.currentSettings = currentSettings
        self.classOfDevice = classOfDevice
        self.nameBytes = Self.fieldBytes(of: name, fieldCount: Self.nameFieldCount)
        self.shortNameBytes = Self.fieldBytes(of: shortName, fieldCount: Self.shortNameFieldCount)
    }

    /// The controller's name.
    public var name: String {
        get { String(decoding: nameBytes, as: UTF8.self) }
        set { nameBytes = Self.fieldBytes(of: newValue, fieldCount: Self.nameFieldCount) }
    }

    /// The controller's short name; empty when none is set.
    public var shortName: String {
        get { String(decoding: shortNameBytes, as: UTF8.self) }
        set { shortNameBytes = Self.fieldBytes(of: newValue, fieldCount: Self.shortNameFieldCount) }
    }

    public static func decode(returnParameters: ArraySlice<UInt8>) throws(WireError) -> ManagementControllerInformation {
        try decodeWhole(returnParameters, "Management Read Controller Information return parameters") { (r) throws(WireError) in
            var information = ManagementControllerInformation(
                address: try r.readAddress(), bluetoothVersion: try r.readUInt8(), manufacturer: try r.readUInt16(),
                supportedSettings: ManagementSettings(rawValue: try r.readUInt32()),
                currentSettings: ManagementSettings(rawValue: try r.readUInt32()),
                classOfDevice: ClassOfDevice(rawValue: try r.readUInt24()), name: "")
            information.nameBytes = Array(try r.readBytes(nameFieldCount).prefix { $0 != 0 })
            information.shortNameBytes = Array(try r.readBytes(shortNameFieldCount).prefix { $0 != 0 })
            return information
        }
    }

    public var returnParameters: [UInt8] {
        var writer = ByteWriter(capacity: Self.returnParameterCount)
        writer.write(address)
        writer.write(bluetoothVersion)
        writer.write(manufacturer)
        writer.write(supportedSettings.rawValue)
        writer.write(currentSettings.rawValue)
        writer.writeUInt24(classOfDevice.rawValue)
        Self.writeField(nameBytes, count: Self.nameFieldCount, into: &writer)
        Self.writeField(shortNameBytes, count: Self.shortNameFieldCount, into: &writer)
        return writer.bytes
    }

    /// `00:1A:7D:DA:71:13 "rawble", Bluetooth 5.3, Intel Corp. (0x0002), [Powered, Low Energy]`.
    public var description: String {
        let version = CommandReturn.LocalVersion.coreVersionName(bluetoothVersion).map { "Bluetooth \($0)" }
            ?? "version 0x\(hex(bluetoothVersion))"
        let company = AssignedNumbers.companyName(manufacturer).map { "\($0) " } ?? ""
        return "\(address) \"\(name)\", \(version), \(company)(0x\(Hex.padded(manufacturer, digits: 4))), \(currentSettings)"
    }

    /// A string's UTF-8 bytes for a name field of `fieldCount` bytes: up to its first NUL, and
    /// at most `fieldCount - 1` bytes (room for the NUL) cut before a character's first byte.
    static func fieldBytes(of string: String, fieldCount: Int) -> [UInt8] {
        var bytes = Array(string.utf8.prefix { $0 != 0 })
        if bytes.count >= fieldCount {
            var end = fieldCount - 1
            while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }  // a continuation byte
            bytes.removeSubrange(end...)
        }
        return bytes
    }

    /// Writes a name's bytes NUL-padded to `count` bytes (never more than `count`).
    static func writeField(_ bytes: [UInt8], count: Int, into writer: inout ByteWriter) {
        let kept = bytes.prefix(count)
        writer.write(contentsOf: kept)
        writer.write(contentsOf: repeatElement(UInt8(0), count: count - kept.count))
    }
}

/// The answer of the commands about one device (Disconnect, Pair Device, Cancel Pair Device,
/// Unpair Device, the user confirmation and passkey replies): its address and address type.
/// For Pair Device, the identity address when the device shared one.
public struct ManagementAddress: ManagementReturnParameters, CustomStringConvertible {
    public var address: BluetoothAddress
    public var type: ManagementAddressType

    public init(_ address: BluetoothAddress, type: ManagementAddressType) {
        self.address = address
        self.type = type
    }

    public static func decode(returnParameters: ArraySlice<UInt8>) throws(WireError) -> ManagementAddress {
        try decodeWhole(returnParameters, "Management device address return parameters") { (r) throws(WireError) in
            let (address, type) = try r.readManagementAddress()
            return ManagementAddress(address, type: type)
        }
    }

    public var returnParameters: [UInt8] {
        ManagementPacket.bytes(capacity: 7) { $0.writeManagementAddress(address, type) }
    }

    /// `C0:B1:E0:00:00:01 (LE Random)`.
    public var description: String { "\(address) (\(type.name))" }
}

/// The answer of every Set command that changes a setting (Set Powered, Set Connectable, Set
/// Bondable, Set Low Energy, ...): the controller's current settings.
extension ManagementSettings: ManagementReturnParameters {
    public static func decode(returnParameters: ArraySlice<UInt8>) throws(WireError) -> ManagementSettings {
        try decodeWhole(returnParameters, "Management Current_Settings return parameters") { (r) throws(WireError) in
            ManagementSettings(rawValue: try r.readUInt32())
        }
    }

    public var returnParameters: [UInt8] {
        ManagementPacket.bytes(capacity: 4) { $0.write(rawValue) }
    }
}

/// The answer of Start Discovery, Stop Discovery, Start Service Discovery and Start Limited
/// Discovery: the address types the command named.
extension ManagementAddressTypes: ManagementReturnParameters {
    public static func decode(returnParameters: ArraySlice<UInt8>) throws(WireError) -> ManagementAddressTypes {
        try decodeWhole(returnParameters, "Management Address_Type return parameters") { (r) throws(WireError) in
            ManagementAddressTypes(rawValue: try r.readUInt8())
        }
    }

    public var returnParameters: [UInt8] { [rawValue] }
}

/// Decodes `parameters` with `read`, which must consume every byte.
private func decodeWhole<Value>(_ parameters: ArraySlice<UInt8>, _ context: String,
                                _ read: (inout ByteReader) throws(WireError) -> Value) throws(WireError) -> Value {
    var reader = ByteReader(parameters, context: context)
    let value = try read(&reader)
    try reader.expectEnd()
    return value
}

extension ByteReader {
    /// Reads `count` little-endian u16 values (the caller has checked they are there).
    fileprivate mutating func readUInt16s(_ count: Int) throws(WireError) -> [UInt16] {
        var values: [UInt16] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try readUInt16()) }
        return values
    }
}
