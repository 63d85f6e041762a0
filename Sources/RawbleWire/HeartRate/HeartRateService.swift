extension BluetoothUUID {
    /// Heart Rate service.
    public static let heartRateService = BluetoothUUID(0x180D)
    /// Heart Rate Measurement characteristic (notify): ``HeartRateMeasurement``.
    public static let heartRateMeasurement = BluetoothUUID(0x2A37)
    /// Body Sensor Location characteristic (read): ``BodySensorLocation``.
    public static let bodySensorLocation = BluetoothUUID(0x2A38)
    /// Heart Rate Control Point characteristic (write): ``HeartRateControlPoint``.
    public static let heartRateControlPoint = BluetoothUUID(0x2A39)
}

/// Where a heart-rate sensor sits (Body Sensor Location characteristic `2A38`, one byte).
/// Values the specification does not define are kept as they are.
public struct BodySensorLocation: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    /// The specification's "Other" (0).
    public static let other = BodySensorLocation(0)
    public static let chest = BodySensorLocation(1)
    public static let wrist = BodySensorLocation(2)
    public static let finger = BodySensorLocation(3)
    public static let hand = BodySensorLocation(4)
    public static let earLobe = BodySensorLocation(5)
    public static let foot = BodySensorLocation(6)

    /// Lower-case name as the CLI prints it (`chest`, `ear-lobe`, written like the
    /// `not-detected` contact value); `nil` for values the specification does not define.
    @inlinable
    public var name: String? {
        switch rawValue {
        case 0: "other"
        case 1: "chest"
        case 2: "wrist"
        case 3: "finger"
        case 4: "hand"
        case 5: "ear-lobe"
        case 6: "foot"
        default: nil
        }
    }

    /// Whether the specification defines this value (0...6).
    @inlinable
    public var isKnown: Bool { rawValue <= 6 }

    /// The name, or the number when unknown.
    public var description: String { name ?? "\(rawValue)" }
}

extension BodySensorLocation: WireDecodable, WireEncodable {
    /// Decodes the characteristic value: exactly one byte.
    @inlinable
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> BodySensorLocation {
        var reader = ByteReader(bytes, context: "Body Sensor Location")
        let value = try reader.readUInt8()
        try reader.expectEnd()
        return BodySensorLocation(value)
    }

    @inlinable
    public func encode(into writer: inout ByteWriter) {
        writer.write(rawValue)
    }
}

/// A command written to the Heart Rate Control Point (`2A39`, one byte). Only `01` Reset
/// Energy Expended is defined; a server answers any other value with ATT error `0x80`
/// (``valueNotSupportedError``). Unknown values are kept as they are.
public struct HeartRateControlPoint: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    /// Resets the Energy Expended field to 0.
    public static let resetEnergyExpended = HeartRateControlPoint(0x01)

    /// The ATT application error a Heart Rate server returns for an unsupported command
    /// ("Heart Rate Control Point Not Supported").
    public static let valueNotSupportedError: UInt8 = 0x80

    /// `reset energy expended`, `nil` for undefined values.
    @inlinable
    public var name: String? { rawValue == 0x01 ? "reset energy expended" : nil }

    public var description: String { name ?? "0x\(hex(rawValue))" }
}

extension HeartRateControlPoint: WireDecodable, WireEncodable {
    /// Decodes a written value: exactly one byte.
    @inlinable
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> HeartRateControlPoint {
        var reader = ByteReader(bytes, context: "Heart Rate Control Point")
        let value = try reader.readUInt8()
        try reader.expectEnd()
        return HeartRateControlPoint(value)
    }

    @inlinable
    public func encode(into writer: inout ByteWriter) {
        writer.write(rawValue)
    }
}
