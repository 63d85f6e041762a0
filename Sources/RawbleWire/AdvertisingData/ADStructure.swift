/// One AD structure (Core Vol 3 Part C 11): `length`, `AD type`, `length - 1` data bytes.
///
/// The common types are decoded into typed cases; every other type, and a known type whose
/// data has the wrong size, is kept as ``other(type:data:)`` with its bytes, so encoding gives
/// back the bytes received.
public enum ADStructure: Hashable, Sendable, CustomStringConvertible {
    /// Flags (0x01), when exactly one byte long.
    case flags(ADFlags)
    /// Incomplete (0x02/0x04/0x06) or complete (0x03/0x05/0x07) list of service UUIDs.
    case serviceUUIDs(UUIDList, isComplete: Bool)
    /// Shortened (0x08) or complete (0x09) local name.
    case localName(LocalName)
    /// Tx Power Level (0x0A) in dBm.
    case txPowerLevel(Int8)
    /// Peripheral Connection Interval Range (0x12).
    case peripheralConnectionIntervalRange(ConnectionIntervalRange)
    /// List of 16-, 32- or 128-bit Service Solicitation UUIDs (0x14/0x1F/0x15).
    case solicitedServiceUUIDs(UUIDList)
    /// Service Data for a 16-, 32- or 128-bit UUID (0x16/0x20/0x21).
    case serviceData(ServiceData)
    /// Public Target Address list (0x17).
    case publicTargetAddresses(AddressList)
    /// Random Target Address list (0x18).
    case randomTargetAddresses(AddressList)
    /// Appearance (0x19).
    case appearance(Appearance)
    /// Advertising Interval (0x1A) or Advertising Interval - long (0x2F).
    case advertisingInterval(AdvertisingInterval)
    /// LE Bluetooth Device Address (0x1B).
    case leDeviceAddress(LEDeviceAddress)
    /// LE Role (0x1C).
    case leRole(LERole)
    /// URI (0x24).
    case uri(URI)
    /// Manufacturer Specific Data (0xFF).
    case manufacturerData(ManufacturerData)
    /// Any other type, or a known type whose data has the wrong size: kept raw.
    case other(type: ADType, data: ArraySlice<UInt8>)

    /// The most data bytes one structure can carry (its length byte counts the type too).
    public static let maximumDataCount = 254

    /// The AD type this structure is encoded with.
    public var type: ADType {
        switch self {
        case .flags: .flags
        case let .serviceUUIDs(list, complete):
            switch list.width {
            case 2: complete ? .completeServiceUUIDs16 : .incompleteServiceUUIDs16
            case 4: complete ? .completeServiceUUIDs32 : .incompleteServiceUUIDs32
            default: complete ? .completeServiceUUIDs128 : .incompleteServiceUUIDs128
            }
        case let .localName(name): name.isComplete ? .completeLocalName : .shortenedLocalName
        case .txPowerLevel: .txPowerLevel
        case .peripheralConnectionIntervalRange: .peripheralConnectionIntervalRange
        case let .solicitedServiceUUIDs(list):
            switch list.width {
            case 2: .solicitedServiceUUIDs16
            case 4: .solicitedServiceUUIDs32
            default: .solicitedServiceUUIDs128
            }
        case let .serviceData(data):
            switch data.width {
            case 2: .serviceData16
            case 4: .serviceData32
            default: .serviceData128
            }
        case .publicTargetAddresses: .publicTargetAddress
        case .randomTargetAddresses: .randomTargetAddress
        case .appearance: .appearance
        case let .advertisingInterval(interval): interval.width == 2 ? .advertisingInterval : .advertisingIntervalLong
        case .leDeviceAddress: .leDeviceAddress
        case .leRole: .leRole
        case .uri: .uri
        case .manufacturerData: .manufacturerSpecificData
        case let .other(type, _): type
        }
    }

    /// Whether `count` data bytes are a valid size for `type` (unknown types take any size).
    /// The one place the size rules live: decoding checks them without building a structure.
    @inlinable
    static func dataCountIsValid(_ count: Int, for type: UInt8) -> Bool {
        switch type {
        case 0x02, 0x03, 0x14: count % 2 == 0
        case 0x04, 0x05, 0x1F: count % 4 == 0
        case 0x06, 0x07, 0x15: count % 16 == 0
        case 0x0A, 0x1C: count == 1
        case 0x12: count == 4
        case 0x16, 0xFF: count >= 2
        case 0x20: count >= 4
        case 0x21: count >= 16
        case 0x17, 0x18: count % 6 == 0
        case 0x19, 0x1A: count == 2
        case 0x2F: count == 3 || count == 4
        case 0x1B: count == 7
        default: true
        }
    }

    /// The error for a known type whose data has the wrong size.
    @usableFromInline
    static func wrongSize(_ type: ADType, count: Int, at offset: Int) -> WireError {
        WireError(.invalidLength(count), at: offset, in: "AD \(type.name ?? "structure")")
    }

    /// Decodes the data of a structure of `type`. Throws when a known type's data has the wrong
    /// size; `offset` (the structure's length byte) and the type name go into the error.
    @inlinable
    init(type: ADType, data: ArraySlice<UInt8>, offset: Int) throws(WireError) {
        guard Self.dataCountIsValid(data.count, for: type.rawValue) else {
            throw Self.wrongSize(type, count: data.count, at: offset)
        }
        self.init(validType: type, data: data)
    }

    /// Decodes data whose size ``dataCountIsValid(_:for:)`` accepted.
    @inlinable
    init(validType type: ADType, data: ArraySlice<UInt8>) {
        @inline(__always)
        func uuidList(width: Int) -> UUIDList { UUIDList(unchecked: data, width: width) }
        @inline(__always)
        func u16(_ at: Int) -> UInt16 {
            UInt16(data[data.startIndex + at]) | UInt16(data[data.startIndex + at + 1]) << 8
        }
        switch type.rawValue {
        case 0x01:
            // The Flags type may be longer in future versions; only the 1-byte form is typed.
            guard data.count == 1, let byte = data.first else { self = .other(type: type, data: data); return }
            self = .flags(ADFlags(rawValue: byte))
        case 0x02: self = .serviceUUIDs(uuidList(width: 2), isComplete: false)
        case 0x03: self = .serviceUUIDs(uuidList(width: 2), isComplete: true)
        case 0x04: self = .serviceUUIDs(uuidList(width: 4), isComplete: false)
        case 0x05: self = .serviceUUIDs(uuidList(width: 4), isComplete: true)
        case 0x06: self = .serviceUUIDs(uuidList(width: 16), isComplete: false)
        case 0x07: self = .serviceUUIDs(uuidList(width: 16), isComplete: true)
        case 0x08: self = .localName(LocalName(bytes: data, isComplete: false))
        case 0x09: self = .localName(LocalName(bytes: data, isComplete: true))
        case 0x0A:
            self = .txPowerLevel(Int8(bitPattern: data.first ?? 0))
        case 0x12:
            self = .peripheralConnectionIntervalRange(ConnectionIntervalRange(minimum: u16(0), maximum: u16(2)))
        case 0x14: self = .solicitedServiceUUIDs(uuidList(width: 2))
        case 0x1F: self = .solicitedServiceUUIDs(uuidList(width: 4))
        case 0x15: self = .solicitedServiceUUIDs(uuidList(width: 16))
        case 0x16, 0x20, 0x21:
            let width = type.rawValue == 0x16 ? 2 : (type.rawValue == 0x20 ? 4 : 16)
            let uuidEnd = data.startIndex + width
            self = .serviceData(ServiceData(unchecked: BluetoothUUID(littleEndian: data[..<uuidEnd]),
                                            width: width, data: data[uuidEnd...]))
        case 0x17, 0x18:
            let list = AddressList(unchecked: data)
            self = type.rawValue == 0x17 ? .publicTargetAddresses(list) : .randomTargetAddresses(list)
        case 0x19:
            self = .appearance(Appearance(u16(0)))
        case 0x1A:
            self = .advertisingInterval(AdvertisingInterval(unchecked: UInt32(u16(0)), width: 2))
        case 0x2F:
            var value: UInt32 = 0
            for (i, byte) in data.enumerated() { value |= UInt32(byte) << (8 * UInt32(i)) }
            self = .advertisingInterval(AdvertisingInterval(unchecked: value, width: data.count))
        case 0x1B:
            let list = AddressList(unchecked: data.prefix(6))
            self = .leDeviceAddress(LEDeviceAddress(address: list[0], flags: data[data.startIndex + 6]))
        case 0x1C:
            self = .leRole(LERole(rawValue: data.first ?? 0))
        case 0x24:
            self = .uri(URI(bytes: data))
        case 0xFF:
            self = .manufacturerData(ManufacturerData(companyID: u16(0), data: data.dropFirst(2)))
        default:
            self = .other(type: type, data: data)
        }
    }

    /// Writes the data bytes (everything after the type byte).
    public func encodeData(into writer: inout ByteWriter) {
        switch self {
        case let .flags(flags): writer.write(flags.rawValue)
        case let .serviceUUIDs(list, _): writer.write(contentsOf: list.bytes)
        case let .localName(name): writer.write(contentsOf: name.bytes)
        case let .txPowerLevel(level): writer.write(level)
        case let .peripheralConnectionIntervalRange(range):
            writer.write(range.minimum)
            writer.write(range.maximum)
        case let .solicitedServiceUUIDs(list): writer.write(contentsOf: list.bytes)
        case let .serviceData(data):
            writer.write(data.uuid, width: data.width)
            writer.write(contentsOf: data.data)
        case let .publicTargetAddresses(list), let .randomTargetAddresses(list):
            writer.write(contentsOf: list.bytes)
        case let .appearance(appearance): writer.write(appearance.rawValue)
        case let .advertisingInterval(interval):
            writer.writeLittleEndian(UInt64(interval.value), byteCount: interval.width)
        case let .leDeviceAddress(address):
            writer.write(address.address)
            writer.write(address.flags)
        case let .leRole(role): writer.write(role.rawValue)
        case let .uri(uri): writer.write(contentsOf: uri.bytes)
        case let .manufacturerData(data):
            writer.write(data.companyID)
            writer.write(contentsOf: data.data)
        case let .other(_, data): writer.write(contentsOf: data)
        }
    }

    /// The data bytes (everything after the type byte).
    public var data: [UInt8] {
        var writer = ByteWriter(capacity: 31)
        encodeData(into: &writer)
        return writer.bytes
    }

    /// `Complete Local Name: Polar H10 12345678`.
    public var description: String {
        let label = type.name ?? type.description
        let value: String
        switch self {
        case let .flags(flags): value = flags.description
        case let .serviceUUIDs(list, _), let .solicitedServiceUUIDs(list):
            value = list.map { uuid in uuid.name.map { "\(uuid) \($0)" } ?? uuid.description }
                .joined(separator: ", ")
        case let .localName(name): value = name.string
        case let .txPowerLevel(level): value = "\(level) dBm"
        case let .peripheralConnectionIntervalRange(range): value = range.description
        case let .serviceData(data): value = data.description
        case let .publicTargetAddresses(list), let .randomTargetAddresses(list): value = list.description
        case let .appearance(appearance): value = appearance.description
        case let .advertisingInterval(interval): value = interval.description
        case let .leDeviceAddress(address): value = address.description
        case let .leRole(role): value = role.description
        case let .uri(uri): value = uri.description
        case let .manufacturerData(data): value = data.description
        case let .other(type, data):
            return "\(type): \(Hex.encode(data))"
        }
        return "\(label): \(value)"
    }
}

extension ADStructure: WireEncodable, WireDecodable {
    /// Writes `length`, type and data. The data must fit one structure
    /// (at most ``maximumDataCount`` bytes); a longer one is a programming error.
    public func encode(into writer: inout ByteWriter) {
        let lengthIndex = writer.bytes.count
        writer.write(UInt8(0))
        writer.write(type.rawValue)
        encodeData(into: &writer)
        let dataCount = writer.bytes.count - lengthIndex - 2
        precondition(dataCount <= Self.maximumDataCount,
                     "AD structure data of \(dataCount) bytes does not fit (at most \(Self.maximumDataCount))")
        writer.bytes[lengthIndex] = UInt8(truncatingIfNeeded: dataCount + 1)
    }

    /// Decodes exactly one structure filling `bytes`. Strict: a known type with data of the
    /// wrong size throws, where ``AdvertisingData`` would keep it raw.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> ADStructure {
        var reader = ByteReader(bytes, context: "AD structure")
        let offset = reader.offset
        let length = Int(try reader.readUInt8())
        guard length > 0 else { throw reader.error(.invalidLength(0), at: offset) }
        let type = ADType(try reader.readUInt8())
        let data = try reader.readBytes(length - 1)
        try reader.expectEnd()
        return try ADStructure(type: type, data: data, offset: offset)
    }
}
