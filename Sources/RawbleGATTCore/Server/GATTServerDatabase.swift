// The GATT server's database: the embedder's definitions numbered into attributes (Core Vol 3
// Part G 3), a value type shared by every connection's `ATTServer`. No I/O, no imports beyond
// the wire layer.

import RawbleWire

/// One attribute of a ``GATTServerDatabase``: handle, type, value and access.
public struct GATTServerAttribute: Hashable, Sendable {
    /// Where an attribute's value lives.
    public enum Value: Hashable, Sendable {
        /// Held here (declarations, fixed characteristic values, descriptors).
        case fixed([UInt8])
        /// Asked of the embedder on each read.
        case provided
        /// A Client Characteristic Configuration descriptor: its value is per connection, kept
        /// by each connection's ``ATTServer``.
        case clientConfiguration
    }

    public var handle: UInt16
    public var type: BluetoothUUID
    public var value: Value
    public var read: GATTAccess
    public var write: GATTAccess
    /// The longest value a write may leave.
    public var maximumLength: Int
    /// For a service declaration: the service's last handle (its group end).
    public var groupEnd: UInt16?
    /// For a characteristic value and its descriptors: the characteristic value's handle.
    public var characteristicValueHandle: UInt16?
    /// For a characteristic value and its descriptors: the characteristic's properties (what a
    /// CCCD write may enable).
    public var properties: CharacteristicProperties
    /// The specification fixes the value's length (declarations, CCCD, presentation format):
    /// a Read Blob of it is answered with Attribute Not Long.
    public var isFixedLength: Bool

    /// Whether this attribute is a service declaration (the grouping types of Read By Group Type).
    public var isServiceDeclaration: Bool { type == .primaryService || type == .secondaryService }
}

/// A GATT server's attributes, numbered from the definitions: the GAP service (Device Name,
/// Appearance) at handle 1, the GATT service (Service Changed and its CCCD) after it, then the
/// embedder's services in order, each attribute one handle after the previous one. The same
/// definitions always give the same handles.
///
/// ```swift
/// let database = try GATTServerDatabase(deviceName: "strap", appearance: .heartRateBelt, services: [
///     .primary(BluetoothUUID(0x180D), characteristics: [
///         GATTCharacteristicDefinition(BluetoothUUID(0x2A37), properties: [.notify]),
///         GATTCharacteristicDefinition(BluetoothUUID(0x2A38), properties: [.read], value: .fixed([0x01])),
///     ]),
/// ])
/// let measurement = database.valueHandle(of: BluetoothUUID(0x2A37))
/// ```
public struct GATTServerDatabase: Hashable, Sendable {
    /// Every attribute, in handle order: `attributes[h - 1]` has handle `h`.
    public private(set) var attributes: [GATTServerAttribute]
    /// The embedder's services, as defined.
    public let services: [GATTServiceDefinition]
    public let deviceName: String
    public let appearance: Appearance

    /// The GAP service's UUID.
    public static let genericAccessService = BluetoothUUID(0x1800)
    /// The GATT service's UUID.
    public static let genericAttributeService = BluetoothUUID(0x1801)
    /// Device Name characteristic.
    public static let deviceNameCharacteristic = BluetoothUUID(0x2A00)
    /// Appearance characteristic.
    public static let appearanceCharacteristic = BluetoothUUID(0x2A01)
    /// Service Changed's value handle: the GAP service takes handles 1–5, the GATT service
    /// 6–9, so it is always 8 (its CCCD 9).
    public static let serviceChangedHandle: UInt16 = 8

    /// Numbers `services` after the GAP and GATT services (Device Name holds `deviceName`'s
    /// first 248 UTF-8 bytes, the GAP limit). Throws when an include names no service, a value
    /// is too long, or the attributes do not fit 16-bit handles.
    public init(deviceName: String = "rawble", appearance: Appearance = .unknown,
                services: [GATTServiceDefinition]) throws(GATTDefinitionError) {
        self.deviceName = deviceName
        self.appearance = appearance
        self.services = services
        let name = Array(deviceName.utf8.prefix(248))
        var appearanceBytes = ByteWriter()
        appearanceBytes.write(appearance.rawValue)
        let all: [GATTServiceDefinition] = [
            .primary(Self.genericAccessService, characteristics: [
                GATTCharacteristicDefinition(Self.deviceNameCharacteristic, properties: [.read], value: .fixed(name)),
                GATTCharacteristicDefinition(Self.appearanceCharacteristic, properties: [.read], value: .fixed(appearanceBytes.bytes)),
            ]),
            .primary(Self.genericAttributeService, characteristics: [
                GATTCharacteristicDefinition(.serviceChanged, properties: [.indicate], value: .fixed([0x01, 0x00, 0xFF, 0xFF]),
                                             read: .notPermitted, maximumLength: 4),
            ]),
        ] + services
        attributes = try Self.number(all)
    }

    /// Lays the services out: a first pass gives each service its handle range (so includes
    /// can name services defined later), the second writes the attributes.
    private static func number(_ services: [GATTServiceDefinition]) throws(GATTDefinitionError) -> [GATTServerAttribute] {
        var ranges: [(uuid: BluetoothUUID, start: Int, end: Int)] = []
        var next = 1
        for service in services {
            let count = service.attributeCount
            ranges.append((service.uuid, next, next + count - 1))
            next += count
        }
        let total = next - 1
        if total > Int(UInt16.max) { throw .tooManyAttributes(total) }

        var attributes: [GATTServerAttribute] = []
        attributes.reserveCapacity(total)
        func add(_ type: BluetoothUUID, _ value: GATTServerAttribute.Value, read: GATTAccess = .open,
                 write: GATTAccess = .notPermitted, maximumLength: Int = ATTPDU.maximumValueLength,
                 groupEnd: UInt16? = nil, characteristic: UInt16? = nil,
                 properties: CharacteristicProperties = [], fixedLength: Bool = false) {
            attributes.append(GATTServerAttribute(
                handle: UInt16(truncatingIfNeeded: attributes.count + 1), type: type, value: value, read: read,
                write: write, maximumLength: maximumLength, groupEnd: groupEnd,
                characteristicValueHandle: characteristic, properties: properties, isFixedLength: fixedLength))
        }
        func checked(_ value: GATTServerValue, _ uuid: BluetoothUUID, maximum: Int) throws(GATTDefinitionError) -> GATTServerAttribute.Value {
            if !(0...ATTPDU.maximumValueLength).contains(maximum) { throw .invalidMaximumLength(uuid, maximum) }
            switch value {
            case .fixed(let bytes):
                if bytes.count > maximum { throw .valueTooLong(uuid, length: bytes.count) }
                return .fixed(bytes)
            case .provided:
                return .provided
            }
        }

        for (index, service) in services.enumerated() {
            let range = ranges[index]
            add(service.isPrimary ? .primaryService : .secondaryService,
                .fixed(ServiceDeclaration(uuid: service.uuid).encoded),
                groupEnd: UInt16(truncatingIfNeeded: range.end), fixedLength: true)
            for included in service.includes {
                guard let target = ranges.first(where: { $0.uuid == included }) else { throw .unknownIncludedService(included) }
                if target.start == range.start { throw .serviceIncludesItself(included) }
                let declaration = IncludeDeclaration(
                    includedServiceHandle: UInt16(truncatingIfNeeded: target.start),
                    endGroupHandle: UInt16(truncatingIfNeeded: target.end), serviceUUID: included)
                add(.include, .fixed(declaration.encoded), fixedLength: true)
            }
            for characteristic in service.characteristics {
                let valueHandle = UInt16(truncatingIfNeeded: attributes.count + 2)
                let properties = characteristic.properties
                add(.characteristic, .fixed(CharacteristicDeclaration(
                    properties: properties, valueHandle: valueHandle, uuid: characteristic.uuid).encoded), fixedLength: true)
                add(characteristic.uuid, try checked(characteristic.value, characteristic.uuid, maximum: characteristic.maximumLength),
                    read: characteristic.read, write: characteristic.write, maximumLength: characteristic.maximumLength,
                    characteristic: valueHandle, properties: properties)
                if characteristic.hasConfiguration {
                    add(.clientCharacteristicConfiguration, .clientConfiguration, write: characteristic.subscribeAccess, maximumLength: 2,
                        characteristic: valueHandle, properties: properties, fixedLength: true)
                }
                if let text = characteristic.userDescription {
                    let bytes = Array(text.utf8)
                    if bytes.count > ATTPDU.maximumValueLength { throw .valueTooLong(.characteristicUserDescription, length: bytes.count) }
                    add(.characteristicUserDescription, .fixed(bytes), characteristic: valueHandle, properties: properties)
                }
                if let format = characteristic.presentationFormat {
                    add(.characteristicPresentationFormat, .fixed(format.encoded), characteristic: valueHandle,
                        properties: properties, fixedLength: true)
                }
                for descriptor in characteristic.descriptors {
                    add(descriptor.uuid, try checked(descriptor.value, descriptor.uuid, maximum: descriptor.maximumLength),
                        read: descriptor.read, write: descriptor.write, maximumLength: descriptor.maximumLength,
                        characteristic: valueHandle, properties: properties)
                }
            }
        }
        return attributes
    }

    // MARK: Lookup

    /// The attribute with `handle`, or `nil` (handle 0 or past the last).
    public func attribute(at handle: UInt16) -> GATTServerAttribute? {
        let index = Int(handle) - 1
        return attributes.indices.contains(index) ? attributes[index] : nil
    }

    /// The last handle in use.
    public var lastHandle: UInt16 { UInt16(truncatingIfNeeded: attributes.count) }

    /// The value handle of the first characteristic with `uuid` (in the first service with
    /// UUID `service`, when given), or `nil`.
    public func valueHandle(of uuid: BluetoothUUID, inService service: BluetoothUUID? = nil) -> UInt16? {
        var inWantedService = service == nil
        for attribute in attributes {
            if attribute.isServiceDeclaration, let service {
                inWantedService = attribute.value == .fixed(ServiceDeclaration(uuid: service).encoded)
            }
            if inWantedService, attribute.type == uuid, attribute.characteristicValueHandle == attribute.handle {
                return attribute.handle
            }
        }
        return nil
    }

    /// The CCCD handle of the characteristic whose value is at `valueHandle`, or `nil`.
    public func configurationHandle(ofValueAt valueHandle: UInt16) -> UInt16? {
        var handle = valueHandle &+ 1
        while let attribute = attribute(at: handle), attribute.characteristicValueHandle == valueHandle {
            if attribute.value == .clientConfiguration { return handle }
            handle &+= 1
        }
        return nil
    }

    /// Replaces the fixed value at `handle` (a write, or the embedder updating a value it
    /// serves from the database). Returns `false` (nothing changes) when the attribute is not
    /// a fixed value or `value` is longer than its maximum length.
    @discardableResult
    public mutating func setValue(_ value: [UInt8], at handle: UInt16) -> Bool {
        let index = Int(handle) - 1
        guard attributes.indices.contains(index), case .fixed = attributes[index].value,
              value.count <= attributes[index].maximumLength else { return false }
        attributes[index].value = .fixed(value)
        return true
    }

    /// The handles a change from `old` to this database affects, for Service Changed: from the
    /// first attribute that differs to 0xFFFF; `nil` when the attributes are the same.
    /// Values written at run time do not count (only the structure: types, access, and the
    /// values of declarations).
    public func changedHandles(since old: GATTServerDatabase) -> ClosedRange<UInt16>? {
        func shape(_ a: GATTServerAttribute) -> GATTServerAttribute {
            var a = a
            if a.type != .primaryService, a.type != .secondaryService, a.type != .include, a.type != .characteristic,
               case .fixed = a.value {
                a.value = .fixed([])
            }
            return a
        }
        let common = min(attributes.count, old.attributes.count)
        var first = common
        for index in 0..<common where shape(attributes[index]) != shape(old.attributes[index]) {
            first = index
            break
        }
        if first == common && attributes.count == old.attributes.count { return nil }
        return UInt16(truncatingIfNeeded: first + 1)...0xFFFF
    }
}
