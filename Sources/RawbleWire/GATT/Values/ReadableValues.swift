/// A decoded field in a form any output can print: JSON-friendly (numbers, text, lists,
/// records with their keys in order) without the wire layer knowing JSON.
public indirect enum ValueField: Hashable, Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    case integer(Int64)
    case unsigned(UInt64)
    case number(Double)
    case text(String)
    case list([ValueField])
    case record([Member])

    /// One keyed field of a record.
    public struct Member: Hashable, Sendable {
        public let name: String
        public let value: ValueField
        public init(_ name: String, _ value: ValueField) {
            self.name = name
            self.value = value
        }
    }

    /// `.text`, or `.null` for `nil`.
    static func text(_ value: String?) -> ValueField { value.map { .text($0) } ?? .null }
    /// A handle as the CLI writes it, `0x001D`.
    static func handle(_ value: UInt16) -> ValueField { .text("0x" + Hex.padded(value, digits: 4)) }

    /// Compact text (for `--as`, and a fallback for tests): numbers as Swift prints them.
    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .integer(let value): String(value)
        case .unsigned(let value): String(value)
        case .number(let value): value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
        case .text(let value): value
        case .list(let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .record(let members): "{" + members.map { "\($0.name): \($0.value)" }.joined(separator: ", ") + "}"
        }
    }
}

/// A characteristic or descriptor value made readable: what it means when its format is known
/// (by UUID, or asked for with a ``ValueFormat``), else its hex, and why it is hex.
public struct ReadableValue: Hashable, Sendable {
    /// How the bytes were understood.
    public enum Outcome: Hashable, Sendable {
        /// The format is known and the bytes fit it.
        case decoded(text: String, fields: [ValueField.Member])
        /// The format is known and the bytes do not fit it: the error says where.
        case malformed(WireError)
        /// No format is known for this UUID: the value is shown as hex.
        case unknown
    }

    /// The bytes as received.
    public let bytes: [UInt8]
    /// The format's name (`Battery Level`, `u16`), `nil` when none is known.
    public let format: String?
    public let outcome: Outcome
    /// Whether the readable form is the value's own text (a string): no hex needs to go beside it.
    public let isText: Bool

    public init(bytes: [UInt8], format: String?, outcome: Outcome, isText: Bool = false) {
        self.bytes = bytes
        self.format = format
        self.outcome = outcome
        self.isText = isText
    }

    /// The readable form: `87 %`, `chest`, `"rawble-sim"`; for an unknown or malformed value its
    /// hex (`(empty)` for no bytes).
    public var text: String {
        if case .decoded(let text, _) = outcome { return text }
        return bytes.isEmpty ? "(empty)" : Hex.encode(bytes)
    }

    /// The decoded fields, `nil` unless the value decoded.
    public var fields: [ValueField.Member]? {
        if case .decoded(_, let fields) = outcome { return fields }
        return nil
    }

    /// The decoding error, `nil` unless the format is known and the bytes do not fit it.
    public var error: WireError? {
        if case .malformed(let error) = outcome { return error }
        return nil
    }

    /// Whether a format is known for the value (decoded or malformed).
    public var isKnownFormat: Bool {
        if case .unknown = outcome { return false }
        return true
    }
}

/// The registry of well-known characteristic and descriptor formats: from a UUID and the
/// bytes read or notified, what they mean. Unknown UUIDs and values that do not decode give
/// their hex (and, for the latter, why).
public enum ReadableValues {
    /// Whether the registry knows a format for `uuid`.
    public static func knows(_ uuid: BluetoothUUID) -> Bool { entry(for: uuid) != nil }

    /// The value of an attribute of type `uuid`, made readable.
    public static func describe(_ bytes: [UInt8], of uuid: BluetoothUUID) -> ReadableValue {
        guard let entry = entry(for: uuid) else {
            return ReadableValue(bytes: bytes, format: nil, outcome: .unknown)
        }
        do {
            let (text, fields) = try entry.decode(bytes[...])
            return ReadableValue(bytes: bytes, format: entry.name, outcome: .decoded(text: text, fields: fields), isText: entry.isText)
        } catch {
            return ReadableValue(bytes: bytes, format: entry.name, outcome: .malformed(error), isText: entry.isText)
        }
    }

    /// The value read as `format` (what `--as` asks for): `{type, value}` fields.
    public static func describe(_ bytes: [UInt8], as format: ValueFormat) -> ReadableValue {
        do {
            let field = try format.decode(bytes[...])
            let text = try format.text(bytes[...])
            let fields = [ValueField.Member("type", .text(format.rawValue)), ValueField.Member("value", field)]
            return ReadableValue(bytes: bytes, format: format.rawValue, outcome: .decoded(text: text, fields: fields),
                                 isText: format == .utf8)
        } catch {
            return ReadableValue(bytes: bytes, format: format.rawValue, outcome: .malformed(error), isText: format == .utf8)
        }
    }

    /// The value of a characteristic whose Presentation Format descriptor says how to read it
    /// (its exponent and unit applied to a number): used for UUIDs the registry does not know.
    public static func describe(_ bytes: [UInt8], presentedAs presentation: PresentationFormat) -> ReadableValue {
        guard let format = ValueFormat(presentationFormat: presentation.format) else {
            return ReadableValue(bytes: bytes, format: nil, outcome: .unknown)
        }
        do {
            let field = try format.decode(bytes[...])
            var text = try format.text(bytes[...])
            var fields = [ValueField.Member("type", .text(format.rawValue)), ValueField.Member("value", field)]
            let scaled: Bool
            switch field {
            case .integer, .unsigned: scaled = presentation.exponent != 0
            default: scaled = false
            }
            if scaled {
                // stored × 10^exponent, written exactly as a decimal.
                let mantissa: Int64
                switch field {
                case .integer(let v): mantissa = v
                case .unsigned(let v): mantissa = Int64(clamping: v)
                default: mantissa = 0
                }
                let decimal = MedicalFloat(mantissa: Int32(clamping: mantissa), exponent: presentation.exponent)
                if Int64(decimal.mantissa) == mantissa {
                    text = decimal.description
                    fields.append(ValueField.Member("scaled", .number(decimal.doubleValue)))
                }
            }
            if format != .utf8, let short = presentation.unit.uuid16, short != 0x2700 {
                text += presentation.unitSymbol.map { " \($0)" } ?? (presentation.unitName.map { " (\($0))" } ?? "")
                fields.append(ValueField.Member("unit", .text(presentation.unit.description)))
                fields.append(ValueField.Member("unitName", .text(presentation.unitName)))
            }
            if format == .utf8 { text = "\"" + GATTString.escaped(text, quote: true) + "\"" }
            return ReadableValue(bytes: bytes, format: format.rawValue, outcome: .decoded(text: text, fields: fields),
                                 isText: format == .utf8)
        } catch {
            return ReadableValue(bytes: bytes, format: format.rawValue, outcome: .malformed(error), isText: format == .utf8)
        }
    }

    /// One registered format: its name and how to read it.
    struct Entry {
        let name: String
        let isText: Bool
        let decode: (ArraySlice<UInt8>) throws(WireError) -> (String, [ValueField.Member])

        init(_ name: String, isText: Bool = false,
             _ decode: @escaping (ArraySlice<UInt8>) throws(WireError) -> (String, [ValueField.Member])) {
            self.name = name
            self.isText = isText
            self.decode = decode
        }
    }

    /// The registry: a switch on the 16-bit UUID (no table to build at start-up).
    static func entry(for uuid: BluetoothUUID) -> Entry? {
        guard let short = uuid.uuid16 else { return nil }
        switch short {
        case 0x2A00, 0x2A24, 0x2A25, 0x2A26, 0x2A27, 0x2A28, 0x2A29, 0x2901:
            return Entry(AssignedNumbers.name(uuid16: short) ?? "UTF-8 string", isText: true, string)
        case 0x2A01: return Entry("Appearance", appearance)
        case 0x2A05: return Entry("Service Changed", serviceChanged)
        case 0x2A08: return Entry("Date Time", dateTime)
        case 0x2A19: return Entry("Battery Level", batteryLevel)
        case 0x2A1C: return Entry("Temperature Measurement", temperature)
        case 0x2A23: return Entry("System ID", systemID)
        case 0x2A37: return Entry("Heart Rate Measurement", heartRate)
        case 0x2A38: return Entry("Body Sensor Location", bodySensorLocation)
        case 0x2A50: return Entry("PnP ID", pnpID)
        case 0x2A53: return Entry("RSC Measurement", rsc)
        case 0x2A5B: return Entry("CSC Measurement", csc)
        case 0x2900: return Entry("Characteristic Extended Properties", extendedProperties)
        case 0x2902: return Entry("Client Characteristic Configuration", cccd)
        case 0x2904: return Entry("Characteristic Presentation Format", presentationFormat)
        default: return nil
        }
    }

    private typealias Member = ValueField.Member

    private static func string(_ bytes: ArraySlice<UInt8>) throws(WireError) -> (String, [Member]) {
        let value = try GATTString.decode(bytes)
        return (value.description, [Member("text", .text(value.text))])
    }

    private static func appearance(_ bytes: ArraySlice<UInt8>) throws(WireError) -> (String, [Member]) {
        let value = try Appearance.decode(bytes)
        return (value.description, [
            Member("code", .unsigned(UInt64(value.rawValue))),
            Member("category", .text(value.categoryName)),
            Member("subcategory", .text(value.subcategoryName)),
        ])
    }

    private static func serviceChanged(_ bytes: ArraySlice<UInt8>) throws(WireError) -> (String, [Member]) {
        let value = try ServiceChanged.decode(bytes)
        // A broken server may send an end below the start: said, not shown as a range.
        guard value.handles != nil else {
            throw WireError(.invalidValue("end handle 0x\(Hex.padded(value.endHandle, digits: 4)) is below the start 0x\(Hex.padded(value.startHandle, digits: 4))"),
                            at: bytes.startIndex + 2, in: "Service Changed")
        }
        return (value.description, [Member("start", .handle(value.startHandle)), Member("end", .handle(value.endHandle))])
    }

    private static func dateTime(_ bytes: ArraySlice<UInt8>) throws(WireError) -> (String, [Member]) {
        let value = try GATTDateTime.decode(bytes)
        return (value.description, [Member("time", .text(value.iso8601))])
    }

    private static func batteryLevel(_ bytes: ArraySlice<UInt8>) throws(WireError) -> (String, [Member]) {
        let value = try BatteryLevel.decode(bytes)
        return (value.description, [Member("percent", .unsigned(UInt64(value.percent)))])
    }

    private static func temperature(_ bytes: ArraySlice<UInt8>) throws(WireError) -> (String, [Member]) {
        let value = try TemperatureMeasurement.decode(bytes)
        let number = value.temperature.doubleValue
        return (value.description, [
            Member("temperature", number.isFinite ? .number(number) : .null),
            Member("temperatureText", .text(value.temperature.description)),
            Member("unit", .text(value.fahrenheit ? "fahrenheit" : "celsius")),
            Member("time", .text(value.timestamp?.iso8601)),
            Member("type", .text(value.type.map { $0.name ?? "reserved" })),
            Member("typeCode", value.type.map { .unsigned(UInt64($0.rawValue)) } ?? .null),
        ])
    }

    private static func systemID(_ bytes: ArraySlice<UInt8>) throws(WireError) -> (String, [Member]) {
        let value = try SystemID.decode(bytes)
        return (value.description, [
            Member("manufacturerIdentifier", .unsigned(value.manufacturerIdentifier)),
            Member("organizationallyUniqueIdentifier", .unsigned(UInt64(value.organizationallyUniqueIdentifier))),
        ])
    }

    private static func heartRate(_ bytes: ArraySlice<UInt8>) throws(WireError) -> (String, [Member]) {
        let value = try HeartRateMeasurement.decode(bytes)
        return (value.readableSummary, [
            Member("bpm", .unsigned(UInt64(value.bpm))),
            Member("contact", .text(value.contact.name)),
            Member("energyExpended", value.energyExpended.map { .unsigned(UInt64($0)) } ?? .null),
            Member("rrIntervals", .list(value.rrIntervals.map { .number($0.seconds) })),
        ])
    }

    private static func bodySensorLocation(_ bytes: ArraySlice<UInt8>) throws(WireError) -> (String, [Member]) {
        let value = try BodySensorLocation.decode(bytes)
        return (value.name ?? "\(value.rawValue) (reserved)", [
            Member("location", .text(value.name)),
            Member("code", .unsigned(UInt64(value.rawValue))),
        ])
    }

    private static func pnpID(_ bytes: ArraySlice<UInt8>) throws(WireError) -> (String, [Member]) {
        let value = try PnPID.decode(bytes)
        return (value.description, [
            Member("vendorIdSource", .unsigned(UInt64(value.vendorIDSource.rawValue))),
            Member("vendorIdSourceName", .text(value.vendorIDSource.name)),
            Member("vendorId", .unsigned(UInt64(value.vendorID))),
            Member("vendorName", .text(value.vendorName)),
            Member("productId", .unsigned(UInt64(value.productID))),
            Member("productVersion", .unsigned(UInt64(value.productVersion))),
            Member("productVersionText", .text(value.versionText)),
        ])
    }

    private static func rsc(_ bytes: ArraySlice<UInt8>) throws(WireError) -> (String, [Member]) {
        let value = try RSCMeasurement.decode(bytes)
        return (value.description, [
            Member("running", .bool(value.running)),
            Member("speedMetresPerSecond", .number(value.metresPerSecond)),
            Member("cadencePerMinute", .unsigned(UInt64(value.cadence))),
            Member("strideLengthMetres", value.strideLengthMetres.map { .number($0) } ?? .null),
            Member("totalDistanceMetres", value.totalDistanceMetres.map { .number($0) } ?? .null),
        ])
    }

    private static func csc(_ bytes: ArraySlice<UInt8>) throws(WireError) -> (String, [Member]) {
        let value = try CSCMeasurement.decode(bytes)
        return (value.description, [
            Member("wheelRevolutions", value.wheel.map { .unsigned(UInt64($0.revolutions)) } ?? .null),
            Member("lastWheelEventSeconds", value.wheel.map { .number(Double($0.lastEventTime) / 1024) } ?? .null),
            Member("crankRevolutions", value.crank.map { .unsigned(UInt64($0.revolutions)) } ?? .null),
            Member("lastCrankEventSeconds", value.crank.map { .number(Double($0.lastEventTime) / 1024) } ?? .null),
        ])
    }

    private static func extendedProperties(_ bytes: ArraySlice<UInt8>) throws(WireError) -> (String, [Member]) {
        let value = try CharacteristicExtendedProperties.decode(bytes)
        return (value.description, [
            Member("reliableWrite", .bool(value.contains(.reliableWrite))),
            Member("writableAuxiliaries", .bool(value.contains(.writableAuxiliaries))),
        ])
    }

    private static func cccd(_ bytes: ArraySlice<UInt8>) throws(WireError) -> (String, [Member]) {
        let value = try ClientCharacteristicConfiguration.decode(bytes)
        return (value.description, [
            Member("notifications", .bool(value.contains(.notify))),
            Member("indications", .bool(value.contains(.indicate))),
        ])
    }

    private static func presentationFormat(_ bytes: ArraySlice<UInt8>) throws(WireError) -> (String, [Member]) {
        let value = try PresentationFormat.decode(bytes)
        return (value.description, [
            Member("format", .unsigned(UInt64(value.format))),
            Member("formatName", .text(value.formatName)),
            Member("exponent", .integer(Int64(value.exponent))),
            Member("unit", .text(value.unit.description)),
            Member("unitName", .text(value.unitName)),
            Member("namespace", .unsigned(UInt64(value.namespace))),
            Member("description", .unsigned(UInt64(value.descriptionCode))),
            Member("descriptionName", .text(value.descriptionName)),
        ])
    }
}

extension HeartRateMeasurement {
    /// One line for a person, as `decode hrm` and `notify` print it: `72 bpm, contact detected,
    /// energy 8 kJ, RR 548.0 ms 551.0 ms`.
    public var readableSummary: String {
        var parts = ["\(bpm) bpm", "contact \(contact.name)"]
        if let energyExpended { parts.append("energy \(energyExpended) kJ") }
        if !rrIntervals.isEmpty {
            parts.append("RR " + rrIntervals.map { interval in
                let tenths = Int((interval.milliseconds * 10).rounded())
                return "\(tenths / 10).\(tenths % 10) ms"
            }.joined(separator: " "))
        }
        return parts.joined(separator: ", ")
    }
}
