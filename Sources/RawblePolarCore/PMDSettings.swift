import RawbleWire

/// The kind of one PMD setting: the first byte of a settings entry
/// `[setting u8][count u8][count × little-endian value]`.
public struct PMDSettingType: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    /// Sample rate in Hz (u16).
    public static let sampleRate = PMDSettingType(0)
    /// Resolution in bits (u16).
    public static let resolution = PMDSettingType(1)
    /// Range, ± in the stream's unit (u16; G for acceleration).
    public static let range = PMDSettingType(2)
    /// Range in milli-units (u32; Polar's Android SDK reads it, the 2024 online-measurement
    /// document calls it "not used").
    public static let rangeMilliunits = PMDSettingType(3)
    /// Channel count (u8).
    public static let channels = PMDSettingType(4)
    /// Factor (float32): what delta-compressed values are multiplied by. Devices send it in
    /// replies; a start request never carries it.
    public static let factor = PMDSettingType(5)
    /// Security (16 bytes, meaning not documented).
    public static let security = PMDSettingType(6)

    /// The size of one value of this setting, `nil` for a setting this library does not know
    /// (its entries cannot be measured, so nothing after them can be found).
    @inlinable
    public var valueSize: Int? {
        switch rawValue {
        case 0, 1, 2: 2
        case 3, 5: 4
        case 4: 1
        case 6: 16
        default: nil
        }
    }

    public var description: String {
        switch rawValue {
        case 0: "sample rate"
        case 1: "resolution"
        case 2: "range"
        case 3: "range (milli-units)"
        case 4: "channels"
        case 5: "factor"
        case 6: "security"
        default: "setting 0x\(hex(rawValue))"
        }
    }

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// Settings as a device sends them: in a get-settings reply, the values it offers (several
/// per setting); in a start reply, what it runs with (among them the ``factors`` that
/// delta-compressed frames need).
///
/// Decoding follows Polar's Android SDK: entries are read while at least two bytes remain, and
/// a last lone byte is ignored (an H10's start reply carries one "reserved" byte). A truncated
/// entry is `WireError.Kind.truncated`. An unknown setting type is
/// `WireError.Kind.unknownValue`, not skipped: its value size is unknown, so the entries
/// after it (a factor, say) could not be found, and quietly losing them would decode frames
/// wrongly later.
public struct PMDSettings: Hashable, Sendable {
    /// Sample rates in Hz.
    public var sampleRates: [UInt16] = []
    /// Resolutions in bits.
    public var resolutions: [UInt16] = []
    /// Ranges, ± in the stream's unit (G for acceleration).
    public var ranges: [UInt16] = []
    /// Ranges in milli-units.
    public var milliunitRanges: [UInt32] = []
    /// Channel counts.
    public var channels: [UInt8] = []
    /// Factors for delta-compressed values, as the float32 bit patterns sent (so that equality
    /// and hashing stay exact, NaN included); see ``factors``.
    public var factorBits: [UInt32] = []
    /// Security values (16 bytes each, as a little-endian number).
    public var security: [UInt128] = []

    public init(
        sampleRates: [UInt16] = [], resolutions: [UInt16] = [], ranges: [UInt16] = [],
        milliunitRanges: [UInt32] = [], channels: [UInt8] = [], factors: [Float] = [], security: [UInt128] = []
    ) {
        self.sampleRates = sampleRates
        self.resolutions = resolutions
        self.ranges = ranges
        self.milliunitRanges = milliunitRanges
        self.channels = channels
        self.factorBits = factors.map(\.bitPattern)
        self.security = security
    }

    /// Factors for delta-compressed values.
    public var factors: [Float] { factorBits.map(Float.init(bitPattern:)) }

    /// Whether no setting is present.
    public var isEmpty: Bool { self == PMDSettings() }
}

extension PMDSettings: WireDecodable, WireEncodable {
    /// Decodes settings entries (see the type's rules on a lone last byte and unknown types).
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> PMDSettings {
        var reader = ByteReader(bytes, context: "PMD settings")
        var settings = PMDSettings()
        while reader.count >= 2 {
            let typeOffset = reader.offset
            let type = PMDSettingType(try reader.readUInt8())
            let count = Int(try reader.readUInt8())
            guard let size = type.valueSize else {
                throw WireError(.unknownValue(UInt64(type.rawValue)), at: typeOffset, in: "PMD settings")
            }
            // At most 255 × 16 bytes: checked against the bytes present before reading any.
            var values = try reader.subReader(count * size)
            for _ in 0..<count {
                switch type {
                case .sampleRate: settings.sampleRates.append(try values.readUInt16())
                case .resolution: settings.resolutions.append(try values.readUInt16())
                case .range: settings.ranges.append(try values.readUInt16())
                case .rangeMilliunits: settings.milliunitRanges.append(try values.readUInt32())
                case .channels: settings.channels.append(try values.readUInt8())
                case .factor: settings.factorBits.append(try values.readUInt32())
                default: settings.security.append(try values.readUInt128())
                }
            }
        }
        return settings
    }

    /// Encodes every present setting, in setting-type order, each as one entry.
    public func encode(into writer: inout ByteWriter) {
        func entry<T>(_ type: PMDSettingType, _ values: [T], _ write: (inout ByteWriter, T) -> Void) {
            guard !values.isEmpty else { return }
            // A count is one byte: more than 255 values are written as several entries.
            var rest = values[...]
            while !rest.isEmpty {
                let chunk = rest.prefix(255)
                writer.write(type.rawValue)
                writer.write(UInt8(chunk.count))
                for value in chunk { write(&writer, value) }
                rest = rest.dropFirst(chunk.count)
            }
        }
        entry(.sampleRate, sampleRates) { $0.write($1) }
        entry(.resolution, resolutions) { $0.write($1) }
        entry(.range, ranges) { $0.write($1) }
        entry(.rangeMilliunits, milliunitRanges) { $0.write($1) }
        entry(.channels, channels) { $0.write($1) }
        entry(.factor, factorBits) { $0.write($1) }
        entry(.security, security) { $0.writeUInt128($1) }
    }
}

/// The settings chosen for a start request: one value per setting, each sent as an entry with
/// count 1, in setting-type order. It has no factor: a factor is the device's to tell, never
/// a request's.
public struct PMDSettingSelection: Hashable, Sendable {
    public var sampleRate: UInt16?
    public var resolution: UInt16?
    public var range: UInt16?
    public var milliunitRange: UInt32?
    public var channels: UInt8?
    public var security: UInt128?

    public init(
        sampleRate: UInt16? = nil, resolution: UInt16? = nil, range: UInt16? = nil,
        milliunitRange: UInt32? = nil, channels: UInt8? = nil, security: UInt128? = nil
    ) {
        self.sampleRate = sampleRate
        self.resolution = resolution
        self.range = range
        self.milliunitRange = milliunitRange
        self.channels = channels
        self.security = security
    }

    /// The H10's only ECG setting: 130 Hz, 14 bits.
    public static let h10ECG = PMDSettingSelection(sampleRate: 130, resolution: 14)

    /// H10 acceleration: `sampleRate` Hz (25, 50, 100 or 200), 16 bits, ±`range` G (2, 4 or 8).
    public static func h10Acceleration(sampleRate: UInt16 = 200, range: UInt16 = 8) -> PMDSettingSelection {
        PMDSettingSelection(sampleRate: sampleRate, resolution: 16, range: range)
    }
}

extension PMDSettingSelection: WireDecodable, WireEncodable {
    /// Decodes a start request's settings: every entry must have count 1, a setting must not
    /// repeat, and a factor is refused (`WireError.Kind.invalidValue`); unknown types and
    /// truncation as for ``PMDSettings``, but no byte may be left over.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> PMDSettingSelection {
        var reader = ByteReader(bytes, context: "PMD setting selection")
        var selection = PMDSettingSelection()
        var seen: UInt16 = 0
        while !reader.isAtEnd {
            let typeOffset = reader.offset
            let type = PMDSettingType(try reader.readUInt8())
            guard let size = type.valueSize else {
                throw reader.error(.unknownValue(UInt64(type.rawValue)), at: typeOffset)
            }
            guard type != .factor else { throw reader.error(.invalidValue("a factor is not selectable"), at: typeOffset) }
            guard seen & 1 << type.rawValue == 0 else {
                throw reader.error(.invalidValue("\(type) given twice"), at: typeOffset)
            }
            seen |= 1 << type.rawValue
            let countOffset = reader.offset
            let count = try reader.readUInt8()
            guard count == 1 else { throw reader.error(.invalidValue("\(count) values for \(type), not 1"), at: countOffset) }
            var value = try reader.subReader(size)
            switch type {
            case .sampleRate: selection.sampleRate = try value.readUInt16()
            case .resolution: selection.resolution = try value.readUInt16()
            case .range: selection.range = try value.readUInt16()
            case .rangeMilliunits: selection.milliunitRange = try value.readUInt32()
            case .channels: selection.channels = try value.readUInt8()
            default: selection.security = try value.readUInt128()
            }
        }
        return selection
    }

    public func encode(into writer: inout ByteWriter) {
        if let sampleRate { writer.write(contentsOf: [0, 1]); writer.write(sampleRate) }
        if let resolution { writer.write(contentsOf: [1, 1]); writer.write(resolution) }
        if let range { writer.write(contentsOf: [2, 1]); writer.write(range) }
        if let milliunitRange { writer.write(contentsOf: [3, 1]); writer.write(milliunitRange) }
        if let channels { writer.write(contentsOf: [4, 1]); writer.write(channels) }
        if let security { writer.write(contentsOf: [6, 1]); writer.writeUInt128(security) }
    }
}
