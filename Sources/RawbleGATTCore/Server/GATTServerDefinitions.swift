// What an embedder writes to define a GATT server's database: services, characteristics and
// descriptors as plain values. `GATTServerDatabase` turns them into numbered attributes. No
// imports beyond the wire layer, so the fuzzer compiles this file with the server core.

import RawbleBearer
import RawbleWire

/// Who may read or write an attribute, and what the link must offer first (Core Vol 3 Part F
/// 3.2.5). A request the access refuses gets the matching ATT error: Read/Write Not Permitted,
/// Insufficient Encryption or Insufficient Authentication.
public enum GATTAccess: Hashable, Sendable, CustomStringConvertible {
    /// Never (Read Not Permitted / Write Not Permitted).
    case notPermitted
    /// On any link.
    case open
    /// Only on an encrypted link (else Insufficient Encryption).
    case encryptionRequired
    /// Only on a link encrypted with an authenticated (MITM-protected) key (else Insufficient
    /// Authentication).
    case authenticationRequired

    public var description: String {
        switch self {
        case .notPermitted: "not permitted"
        case .open: "open"
        case .encryptionRequired: "encryption required"
        case .authenticationRequired: "authentication required"
        }
    }
}

/// How secure one connection's link is, as its bearer (or the embedder) reports it; checked
/// against each attribute's ``GATTAccess``. The bearer module's `LinkSecurity`.
public typealias GATTLinkSecurity = LinkSecurity

/// Where a characteristic's value comes from.
public enum GATTServerValue: Hashable, Sendable {
    /// Held by the database: served as is; a permitted write replaces it (for every connection).
    case fixed([UInt8])
    /// Produced on each read by the embedder (the server asks for it with the handle and the
    /// offset); writes are reported and not stored.
    case provided
}

/// The Characteristic Presentation Format descriptor's value (Core Vol 3 Part G 3.3.3.5): how
/// to show the value (format, exponent, unit, namespace and description, 7 bytes).
public struct GATTPresentationFormat: Hashable, Sendable, WireEncodable {
    /// Format type (e.g. 0x04 uint8, 0x06 uint16, 0x19 utf8s).
    public var format: UInt8
    /// The value is multiplied by 10^exponent.
    public var exponent: Int8
    /// A unit UUID from Assigned Numbers (e.g. 0x27AD percentage).
    public var unit: UInt16
    /// 0x01: Bluetooth SIG Assigned Numbers.
    public var namespace: UInt8
    public var descriptionCode: UInt16

    public init(format: UInt8, exponent: Int8 = 0, unit: UInt16, namespace: UInt8 = 0x01, descriptionCode: UInt16 = 0) {
        self.format = format
        self.exponent = exponent
        self.unit = unit
        self.namespace = namespace
        self.descriptionCode = descriptionCode
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(format)
        writer.write(exponent)
        writer.write(unit)
        writer.write(namespace)
        writer.write(descriptionCode)
    }
}

/// A descriptor beyond the ones the database adds itself (the CCCD for notify/indicate, the
/// user description and presentation format given on the characteristic).
public struct GATTDescriptorDefinition: Hashable, Sendable {
    public var uuid: BluetoothUUID
    public var value: GATTServerValue
    public var read: GATTAccess
    public var write: GATTAccess
    /// Longest value a write may leave (at most 512).
    public var maximumLength: Int

    /// A descriptor with a fixed value, readable by anyone and not writable unless `write` says so.
    public init(_ uuid: BluetoothUUID, value: GATTServerValue, read: GATTAccess = .open,
                write: GATTAccess = .notPermitted, maximumLength: Int = ATTPDU.maximumValueLength) {
        self.uuid = uuid
        self.value = value
        self.read = read
        self.write = write
        self.maximumLength = maximumLength
    }
}

/// A characteristic: its declaration, its value and its descriptors.
///
/// ```swift
/// GATTCharacteristicDefinition(.init(0x2A37), properties: [.notify])
/// GATTCharacteristicDefinition(.init(0x2A38), properties: [.read], value: .fixed([0x01]))
/// GATTCharacteristicDefinition(.init(0x2A39), properties: [.write], write: .encryptionRequired)
/// ```
public struct GATTCharacteristicDefinition: Hashable, Sendable {
    public var uuid: BluetoothUUID
    public var properties: CharacteristicProperties
    public var value: GATTServerValue
    /// Defaults: open when the properties include `read`, else not permitted.
    public var read: GATTAccess
    /// Defaults: open when the properties include `write` or `writeWithoutResponse`, else not
    /// permitted.
    public var write: GATTAccess
    /// Who may subscribe: the write access of the Client Characteristic Configuration
    /// descriptor the database adds for `notify` or `indicate` (BlueZ's `encrypt-notify`).
    /// `nil`: ``subscribeAccess``'s default. A link that may not subscribe gets Insufficient
    /// Encryption or Authentication when it writes the descriptor, so no notification or
    /// indication of the value ever goes to it.
    public var subscribe: GATTAccess?
    /// Longest value a write may leave (at most 512); longer writes get Invalid Attribute Value Length.
    public var maximumLength: Int
    /// A Characteristic User Description descriptor (read-only) with this text.
    public var userDescription: String?
    /// A Characteristic Presentation Format descriptor.
    public var presentationFormat: GATTPresentationFormat?
    /// Any other descriptors, after the CCCD, user description and presentation format.
    public var descriptors: [GATTDescriptorDefinition]

    public init(_ uuid: BluetoothUUID, properties: CharacteristicProperties, value: GATTServerValue = .fixed([]),
                read: GATTAccess? = nil, write: GATTAccess? = nil, subscribe: GATTAccess? = nil,
                maximumLength: Int = ATTPDU.maximumValueLength,
                userDescription: String? = nil, presentationFormat: GATTPresentationFormat? = nil,
                descriptors: [GATTDescriptorDefinition] = []) {
        self.uuid = uuid
        self.properties = properties
        self.value = value
        self.read = read ?? (properties.contains(.read) ? .open : .notPermitted)
        self.write = write ?? (properties.isDisjoint(with: [.write, .writeWithoutResponse]) ? .notPermitted : .open)
        self.subscribe = subscribe
        self.maximumLength = maximumLength
        self.userDescription = userDescription
        self.presentationFormat = presentationFormat
        self.descriptors = descriptors
    }

    /// Whether the database adds a Client Characteristic Configuration descriptor.
    public var hasConfiguration: Bool { !properties.isDisjoint(with: [.notify, .indicate]) }

    /// The access a subscription needs: ``subscribe`` when given; else the value's read access
    /// when that asks for encryption or authentication (a value a link may not read is not
    /// pushed to it either); else open.
    public var subscribeAccess: GATTAccess {
        if let subscribe { return subscribe }
        switch read {
        case .encryptionRequired, .authenticationRequired: return read
        case .open, .notPermitted: return .open
        }
    }
}

/// A service: primary (found by discovery) or secondary (only through an include).
///
/// ```swift
/// GATTServiceDefinition.primary(.init(0x180D), characteristics: [...])
/// GATTServiceDefinition.secondary(.init(0x180F), characteristics: [...])
/// ```
public struct GATTServiceDefinition: Hashable, Sendable {
    public var uuid: BluetoothUUID
    public var isPrimary: Bool
    /// Services this one includes, by UUID: each names the first service of the database with
    /// that UUID (defined before or after this one).
    public var includes: [BluetoothUUID]
    public var characteristics: [GATTCharacteristicDefinition]

    public init(uuid: BluetoothUUID, isPrimary: Bool = true, includes: [BluetoothUUID] = [],
                characteristics: [GATTCharacteristicDefinition]) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.includes = includes
        self.characteristics = characteristics
    }

    /// A primary service.
    public static func primary(_ uuid: BluetoothUUID, includes: [BluetoothUUID] = [],
                               characteristics: [GATTCharacteristicDefinition]) -> Self {
        Self(uuid: uuid, isPrimary: true, includes: includes, characteristics: characteristics)
    }

    /// A secondary service (reachable only through another service's include).
    public static func secondary(_ uuid: BluetoothUUID, includes: [BluetoothUUID] = [],
                                 characteristics: [GATTCharacteristicDefinition]) -> Self {
        Self(uuid: uuid, isPrimary: false, includes: includes, characteristics: characteristics)
    }

    /// How many attributes (handles) this service takes.
    var attributeCount: Int {
        1 + includes.count + characteristics.reduce(0) { count, c in
            count + 2 + (c.hasConfiguration ? 1 : 0) + (c.userDescription == nil ? 0 : 1)
                + (c.presentationFormat == nil ? 0 : 1) + c.descriptors.count
        }
    }
}

/// Why a set of definitions does not make a database.
public enum GATTDefinitionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// More than 65,535 attributes.
    case tooManyAttributes(Int)
    /// An include names a UUID no service of the database has.
    case unknownIncludedService(BluetoothUUID)
    /// A service includes itself.
    case serviceIncludesItself(BluetoothUUID)
    /// A fixed value longer than 512 bytes, or longer than its own maximum length.
    case valueTooLong(BluetoothUUID, length: Int)
    /// A maximum length outside 0…512.
    case invalidMaximumLength(BluetoothUUID, Int)

    public var description: String {
        switch self {
        case .tooManyAttributes(let count): "\(count) attributes; a database holds at most 65535"
        case .unknownIncludedService(let uuid): "included service \(uuid) is not in the database"
        case .serviceIncludesItself(let uuid): "service \(uuid) includes itself"
        case let .valueTooLong(uuid, length): "value of \(uuid) is \(length) bytes, longer than allowed"
        case let .invalidMaximumLength(uuid, length): "maximum length \(length) of \(uuid) is outside 0…512"
        }
    }
}
