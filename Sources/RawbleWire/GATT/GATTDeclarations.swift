// GATT attribute values that describe the database (Core Vol 3 Part G 3): what a GATT
// client reads during discovery and decodes here.

extension BluetoothUUID {
    /// «Primary Service» declaration type.
    public static let primaryService = BluetoothUUID(0x2800)
    /// «Secondary Service» declaration type.
    public static let secondaryService = BluetoothUUID(0x2801)
    /// «Include» declaration type.
    public static let include = BluetoothUUID(0x2802)
    /// «Characteristic» declaration type.
    public static let characteristic = BluetoothUUID(0x2803)
    /// Characteristic Extended Properties descriptor.
    public static let characteristicExtendedProperties = BluetoothUUID(0x2900)
    /// Characteristic User Description descriptor.
    public static let characteristicUserDescription = BluetoothUUID(0x2901)
    /// Client Characteristic Configuration descriptor (CCCD).
    public static let clientCharacteristicConfiguration = BluetoothUUID(0x2902)
    /// Server Characteristic Configuration descriptor.
    public static let serverCharacteristicConfiguration = BluetoothUUID(0x2903)
    /// Characteristic Presentation Format descriptor.
    public static let characteristicPresentationFormat = BluetoothUUID(0x2904)
    /// Characteristic Aggregate Format descriptor.
    public static let characteristicAggregateFormat = BluetoothUUID(0x2905)
    /// Service Changed characteristic (in the GATT service).
    public static let serviceChanged = BluetoothUUID(0x2A05)
    /// Client Supported Features characteristic.
    public static let clientSupportedFeatures = BluetoothUUID(0x2B29)
    /// Database Hash characteristic.
    public static let databaseHash = BluetoothUUID(0x2B2A)
}

/// Names of the GATT declaration and descriptor types, for printing a discovered database.
public enum GATTUUIDs {
    /// All GATT-defined attribute types this layer knows, with their names.
    public static let names: [BluetoothUUID: String] = [
        .primaryService: "Primary Service",
        .secondaryService: "Secondary Service",
        .include: "Include",
        .characteristic: "Characteristic",
        .characteristicExtendedProperties: "Characteristic Extended Properties",
        .characteristicUserDescription: "Characteristic User Description",
        .clientCharacteristicConfiguration: "Client Characteristic Configuration",
        .serverCharacteristicConfiguration: "Server Characteristic Configuration",
        .characteristicPresentationFormat: "Characteristic Presentation Format",
        .characteristicAggregateFormat: "Characteristic Aggregate Format",
        .serviceChanged: "Service Changed",
        .clientSupportedFeatures: "Client Supported Features",
        .databaseHash: "Database Hash",
    ]

    /// The name of a GATT attribute type, or `nil` when it is not one of ``names``.
    public static func name(of uuid: BluetoothUUID) -> String? { names[uuid] }
}

/// Reads a UUID of 2 or 16 bytes that fills the reader.
private func readGATTUUID(_ r: inout ByteReader) throws(WireError) -> BluetoothUUID {
    guard r.count == 2 || r.count == 16 else {
        throw r.error(.invalidValue("UUID of \(r.count) bytes; must be 2 or 16"))
    }
    return try r.readUUID(width: r.count)
}

/// Writes a UUID as 2 bytes when it has a 16-bit form, else 16 (GATT uses no 32-bit form).
private func writeGATTUUID(_ uuid: BluetoothUUID, _ w: inout ByteWriter) {
    w.write(uuid, width: uuid.uuid16 != nil ? 2 : 16)
}

/// The value of a «Primary Service» or «Secondary Service» declaration: the service UUID
/// (2 or 16 bytes).
public struct ServiceDeclaration: Hashable, Sendable, WireEncodable, WireDecodable {
    public var uuid: BluetoothUUID

    @inlinable public init(uuid: BluetoothUUID) { self.uuid = uuid }

    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> ServiceDeclaration {
        var r = ByteReader(bytes, context: "GATT service declaration")
        return ServiceDeclaration(uuid: try readGATTUUID(&r))
    }

    public func encode(into writer: inout ByteWriter) { writeGATTUUID(uuid, &writer) }
}

/// The value of an «Include» declaration: the included service's handle range and, when it
/// has a 16-bit UUID, that UUID (a 128-bit UUID is absent and must be read separately).
public struct IncludeDeclaration: Hashable, Sendable, WireEncodable, WireDecodable {
    public var includedServiceHandle: UInt16
    public var endGroupHandle: UInt16
    /// The included service's UUID when it is a 16-bit one; `nil` when 128-bit.
    public var serviceUUID: BluetoothUUID?

    @inlinable
    public init(includedServiceHandle: UInt16, endGroupHandle: UInt16, serviceUUID: BluetoothUUID?) {
        self.includedServiceHandle = includedServiceHandle
        self.endGroupHandle = endGroupHandle
        self.serviceUUID = serviceUUID
    }

    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> IncludeDeclaration {
        var r = ByteReader(bytes, context: "GATT include declaration")
        let start = try r.readUInt16()
        let end = try r.readUInt16()
        let uuid: BluetoothUUID? = r.isAtEnd ? nil : BluetoothUUID(try r.readUInt16())
        try r.expectEnd()
        return IncludeDeclaration(includedServiceHandle: start, endGroupHandle: end, serviceUUID: uuid)
    }

    /// Writes the UUID only when it has a 16-bit form.
    public func encode(into writer: inout ByteWriter) {
        writer.write(includedServiceHandle)
        writer.write(endGroupHandle)
        if let short = serviceUUID?.uuid16 { writer.write(short) }
    }
}

/// What a characteristic supports: the properties byte of its declaration.
public struct CharacteristicProperties: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let broadcast = Self(rawValue: 0x01)
    public static let read = Self(rawValue: 0x02)
    public static let writeWithoutResponse = Self(rawValue: 0x04)
    public static let write = Self(rawValue: 0x08)
    public static let notify = Self(rawValue: 0x10)
    public static let indicate = Self(rawValue: 0x20)
    public static let authenticatedSignedWrites = Self(rawValue: 0x40)
    /// An Extended Properties descriptor follows.
    public static let extendedProperties = Self(rawValue: 0x80)

    private static let allNames = [
        "broadcast", "read", "writeWithoutResponse", "write", "notify", "indicate",
        "authenticatedSignedWrites", "extendedProperties",
    ]

    /// The names of the set bits, lowest bit first, e.g. `["read", "notify"]`.
    public var names: [String] {
        (0..<8).compactMap { bit in rawValue & (1 << UInt8(bit)) != 0 ? Self.allNames[bit] : nil }
    }

    /// `read, notify`.
    public var description: String { names.joined(separator: ", ") }
}

/// The value of a «Characteristic» declaration: properties, value handle and UUID (5 or 19
/// bytes).
public struct CharacteristicDeclaration: Hashable, Sendable, WireEncodable, WireDecodable {
    public var properties: CharacteristicProperties
    /// The handle of the characteristic value attribute.
    public var valueHandle: UInt16
    public var uuid: BluetoothUUID

    @inlinable
    public init(properties: CharacteristicProperties, valueHandle: UInt16, uuid: BluetoothUUID) {
        self.properties = properties
        self.valueHandle = valueHandle
        self.uuid = uuid
    }

    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> CharacteristicDeclaration {
        var r = ByteReader(bytes, context: "GATT characteristic declaration")
        let properties = CharacteristicProperties(rawValue: try r.readUInt8())
        let handle = try r.readUInt16()
        return CharacteristicDeclaration(properties: properties, valueHandle: handle, uuid: try readGATTUUID(&r))
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(properties.rawValue)
        writer.write(valueHandle)
        writeGATTUUID(uuid, &writer)
    }
}

/// The Client Characteristic Configuration descriptor value: which server-initiated updates
/// this client wants. Reserved bits are kept.
///
/// The value is 2 bytes. Decoding also accepts 1 byte, as the BlueZ and Zephyr servers do for
/// writes, and rejects 0 or more than 2 bytes (they answer those with Invalid Attribute Value
/// Length). Encoding always writes 2 bytes.
public struct ClientCharacteristicConfiguration: OptionSet, Hashable, Sendable, WireEncodable, WireDecodable {
    public let rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let notify = Self(rawValue: 0x0001)
    public static let indicate = Self(rawValue: 0x0002)

    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> ClientCharacteristicConfiguration {
        var r = ByteReader(bytes, context: "GATT client characteristic configuration")
        let value: UInt16 = r.count == 1 ? UInt16(try r.readUInt8()) : try r.readUInt16()
        try r.expectEnd()
        return ClientCharacteristicConfiguration(rawValue: value)
    }

    public func encode(into writer: inout ByteWriter) { writer.write(rawValue) }
}

/// The Characteristic Extended Properties descriptor value (2 bytes). Reserved bits are kept.
public struct CharacteristicExtendedProperties: OptionSet, Hashable, Sendable, WireEncodable, WireDecodable {
    public let rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The characteristic supports reliable writes (prepare/execute).
    public static let reliableWrite = Self(rawValue: 0x0001)
    /// The User Description descriptor is writable.
    public static let writableAuxiliaries = Self(rawValue: 0x0002)

    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> CharacteristicExtendedProperties {
        var r = ByteReader(bytes, context: "GATT characteristic extended properties")
        let value = try r.readUInt16()
        try r.expectEnd()
        return CharacteristicExtendedProperties(rawValue: value)
    }

    public func encode(into writer: inout ByteWriter) { writer.write(rawValue) }
}

/// The Service Changed characteristic value (indicated by the server): the range of handles
/// whose attributes changed, which the client must rediscover.
public struct ServiceChanged: Hashable, Sendable, WireEncodable, WireDecodable {
    public var startHandle: UInt16
    public var endHandle: UInt16

    @inlinable
    public init(startHandle: UInt16, endHandle: UInt16) {
        self.startHandle = startHandle
        self.endHandle = endHandle
    }

    /// The affected handles; `nil` when start > end, which a broken server may send.
    @inlinable
    public var handles: ClosedRange<UInt16>? { startHandle <= endHandle ? startHandle...endHandle : nil }

    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> ServiceChanged {
        var r = ByteReader(bytes, context: "GATT service changed")
        let value = ServiceChanged(startHandle: try r.readUInt16(), endHandle: try r.readUInt16())
        try r.expectEnd()
        return value
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(startHandle)
        writer.write(endHandle)
    }
}
