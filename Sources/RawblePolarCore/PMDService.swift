import RawbleWire

// Polar Measurement Data (PMD): the service, its measurement types and the features a device
// announces. Facts from Polar's PMD specification and SDKs; see docs in the Polar topic.

extension BluetoothUUID {
    /// Polar Measurement Data service (`FB005C80-02E7-F387-1CAD-8ACD2D8DF0C8`): raw ECG,
    /// acceleration and other streams of Polar sensors such as the H10 strap.
    public static let polarMeasurementDataService = BluetoothUUID(
        high: 0xFB00_5C80_02E7_F387, low: 0x1CAD_8ACD_2D8D_F0C8)
    /// PMD control point (`FB005C81-…`; read, write, indicate): reads as ``PMDFeatures``,
    /// takes a ``PMDControlPointRequest`` and indicates a ``PMDControlPointIndication``.
    public static let polarMeasurementDataControlPoint = BluetoothUUID(
        high: 0xFB00_5C81_02E7_F387, low: 0x1CAD_8ACD_2D8D_F0C8)
    /// PMD data (`FB005C82-…`; notify): carries ``PMDDataFrame``s.
    public static let polarMeasurementDataData = BluetoothUUID(
        high: 0xFB00_5C82_02E7_F387, low: 0x1CAD_8ACD_2D8D_F0C8)
}

/// What a PMD stream measures: the low bits of a PMD type byte.
///
/// On the control point the type byte is `recording << 7 | type` (see ``PMDRecording``); in a
/// data frame the type is the first byte masked with `0x3F`. Types this library does not name
/// are kept as their number, never rejected, so a newer device's stream can still be started,
/// stopped and passed through.
public struct PMDMeasurementType: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The type number (`0...127`).
    public let rawValue: UInt8
    /// A type from its number; bit 7 (the recording bit of a type byte) is dropped.
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue & 0x7F }
    @inlinable public init(_ rawValue: UInt8) { self.init(rawValue: rawValue) }

    /// Electrocardiogram (`00`), in µV.
    public static let ecg = PMDMeasurementType(0x00)
    /// Photoplethysmogram (`01`).
    public static let ppg = PMDMeasurementType(0x01)
    /// Acceleration (`02`), in mG.
    public static let acceleration = PMDMeasurementType(0x02)
    /// Peak-to-peak intervals (`03`).
    public static let ppi = PMDMeasurementType(0x03)
    /// Gyroscope (`05`).
    public static let gyroscope = PMDMeasurementType(0x05)
    /// Magnetometer (`06`).
    public static let magnetometer = PMDMeasurementType(0x06)
    /// Skin temperature (`07`).
    public static let skinTemperature = PMDMeasurementType(0x07)
    /// SDK mode (`09`).
    public static let sdkMode = PMDMeasurementType(0x09)
    /// Location (`0A`).
    public static let location = PMDMeasurementType(0x0A)
    /// Pressure (`0B`).
    public static let pressure = PMDMeasurementType(0x0B)
    /// Temperature (`0C`).
    public static let temperature = PMDMeasurementType(0x0C)
    /// Offline recording (`0D`).
    public static let offlineRecording = PMDMeasurementType(0x0D)
    /// Offline heart rate (`0E`).
    public static let offlineHeartRate = PMDMeasurementType(0x0E)

    /// Lower-case name (`ecg`, `acc`, `skin-temperature`); `nil` for a type without a name.
    public var name: String? {
        switch rawValue {
        case 0x00: "ecg"
        case 0x01: "ppg"
        case 0x02: "acc"
        case 0x03: "ppi"
        case 0x05: "gyro"
        case 0x06: "mag"
        case 0x07: "skin-temperature"
        case 0x09: "sdk-mode"
        case 0x0A: "location"
        case 0x0B: "pressure"
        case 0x0C: "temperature"
        case 0x0D: "offline-recording"
        case 0x0E: "offline-hr"
        default: nil
        }
    }

    /// The name, or `type 0x..` for a type without one.
    public var description: String { name ?? "type 0x\(hex(rawValue))" }

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// Whether a control-point command concerns the live stream or the device's own recording:
/// bit 7 of the type byte.
public enum PMDRecording: UInt8, Hashable, Sendable, CaseIterable {
    /// Streamed over the data characteristic (bit 7 clear).
    case online = 0
    /// Recorded on the device (bit 7 set).
    case offline = 1
}

/// A measurement type with its recording kind: one type byte of the control point.
public struct PMDStream: Hashable, Sendable, CustomStringConvertible {
    public var type: PMDMeasurementType
    public var recording: PMDRecording

    @inlinable
    public init(_ type: PMDMeasurementType, recording: PMDRecording = .online) {
        self.type = type
        self.recording = recording
    }

    /// From a type byte: `recording << 7 | type`.
    @inlinable
    public init(typeByte: UInt8) {
        self.init(PMDMeasurementType(typeByte), recording: typeByte & 0x80 == 0 ? .online : .offline)
    }

    /// The type byte: `recording << 7 | type`.
    @inlinable
    public var typeByte: UInt8 { recording.rawValue << 7 | type.rawValue }

    public var description: String { recording == .online ? type.description : "offline \(type)" }
}

/// The measurement types a device offers: the control point's read value.
///
/// The value is `0F` followed by feature bytes; bit `n` (bit `n % 8` of feature byte `n / 8`)
/// announces measurement type `n`. For byte 1 that is b0 ECG, b1 PPG, b2 ACC, b3 PPI, b5 GYRO,
/// b6 MAG, b7 skin temperature; for byte 2, b1 SDK mode and b2–b6 location, pressure,
/// temperature, offline recording, offline heart rate. An H10 reads `0F 05 00 …` (17 bytes):
/// ECG and ACC. Bits without a named type are kept as unnamed types.
public struct PMDFeatures: Hashable, Sendable, CustomStringConvertible {
    /// The feature bits, bit `n` = type `n` (the first 16 feature bytes; later bytes, for
    /// types above 127 that a type byte cannot carry, are ignored).
    public let bits: UInt128

    @inlinable public init(bits: UInt128) { self.bits = bits }

    /// A set announcing exactly `types`.
    public init(_ types: some Sequence<PMDMeasurementType>) {
        var bits: UInt128 = 0
        for type in types { bits |= 1 << UInt128(type.rawValue) }
        self.bits = bits
    }

    /// Whether the device announces `type`.
    @inlinable
    public func contains(_ type: PMDMeasurementType) -> Bool { bits >> UInt128(type.rawValue) & 1 != 0 }

    /// The announced types, lowest number first.
    public var types: [PMDMeasurementType] {
        (0..<128).compactMap { n in bits >> UInt128(n) & 1 != 0 ? PMDMeasurementType(UInt8(n)) : nil }
    }

    /// `ecg acc`.
    public var description: String { types.map(\.description).joined(separator: " ") }
}

extension PMDFeatures: WireDecodable, WireEncodable {
    /// The byte every control-point read value starts with.
    public static let marker: UInt8 = 0x0F

    /// Decodes the control point's read value: `0F`, then feature bytes (none is an empty set).
    /// Anything else first is `WireError.Kind.unknownValue` at byte 0.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> PMDFeatures {
        var reader = ByteReader(bytes, context: "PMD features")
        let offset = reader.offset
        let marker = try reader.readUInt8()
        guard marker == Self.marker else { throw WireError(.unknownValue(UInt64(marker)), at: offset, in: "PMD features") }
        var bits: UInt128 = 0
        for (n, byte) in reader.readRemaining().prefix(16).enumerated() {
            bits |= UInt128(byte) << UInt128(8 * n)
        }
        return PMDFeatures(bits: bits)
    }

    /// `0F` and 16 feature bytes, as an H10 sends them.
    public func encode(into writer: inout ByteWriter) {
        writer.write(Self.marker)
        writer.writeUInt128(bits)
    }
}
