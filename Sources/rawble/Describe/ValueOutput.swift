import ArgumentParser
import RawbleWire

/// How a characteristic or descriptor value is shown: read, notified, in the `gatt` tree, or
/// decoded. Every command that prints a value goes through here, so they all say the same.
enum ValueOutput {
    /// The value made readable: as `format` when `--as` names one, else by the attribute's
    /// UUID (hex when the UUID is unknown or not given).
    static func readable(_ bytes: [UInt8], uuid: BluetoothUUID?, as format: ValueFormat?) -> ReadableValue {
        if let format { return ReadableValues.describe(bytes, as: format) }
        guard let uuid else { return ReadableValue(bytes: bytes, format: nil, outcome: .unknown) }
        return ReadableValues.describe(bytes, of: uuid)
    }
}

extension ReadableValue {
    /// One line for a person: the readable form (`87 %`, `"rawble-sim"`, `chest`); a value that
    /// does not fit its format is its hex and why; an unknown one its hex exactly as before
    /// formats were known (an empty value an empty line), which scripts may rely on.
    var line: String {
        switch outcome {
        case .decoded(let text, _): text
        case .malformed(let error): "\(text) (does not decode: \(error))"
        case .unknown: Hex.encode(bytes)
        }
    }

    /// The fields JSON output adds beside `value`: `decoded` (an object) for a known format,
    /// `decoded: null` and `decodeError` when the bytes do not fit it, nothing when no format
    /// is known.
    var jsonFields: [(String, JSON)] {
        switch outcome {
        case .decoded(_, let fields): [("decoded", .object(fields.map { ($0.name, $0.value.json) }))]
        case .malformed(let error): [("decoded", .null), ("decodeError", .string(error.description))]
        case .unknown: []
        }
    }

    /// `jsonFields` written as the text that goes before an object's closing brace
    /// (`,"decoded":{…}`), for outputs that write their lines in place.
    var jsonSuffix: String {
        jsonFields.map { "," + String(JSON.object([$0]).serialized().dropFirst().dropLast()) }.joined()
    }

    /// The `gatt` tree's form: the readable form, with the hex beside it for a short value (up
    /// to 4 bytes: a number, a code) that is not text; the hex and a printable text for
    /// unknown formats.
    var treeText: String {
        switch outcome {
        case .decoded(let text, _):
            return isText || bytes.count > 4 ? text : "\(text)  (\(Hex.encode(bytes)))"
        case .malformed(let error):
            return "\(Self.hexWithText(bytes)) (does not decode: \(error))"
        case .unknown:
            return Self.hexWithText(bytes)
        }
    }

    /// Hex, plus the text when the value is printable UTF-8 (names, model numbers).
    static func hexWithText(_ value: [UInt8]) -> String {
        if value.isEmpty { return "(empty)" }
        let hex = value.count > 32 ? Hex.encode(value.prefix(32)) + "… (\(value.count) bytes)" : Hex.encode(value)
        guard value.count >= 3, let text = String(validating: value, as: UTF8.self),
              text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else { return hex }
        return "\(hex) \"\(text)\""
    }
}

extension ValueField {
    /// The field as JSON (an unsigned value beyond what a JSON number holds exactly is a
    /// decimal string).
    var json: JSON {
        switch self {
        case .null: .null
        case .bool(let value): .bool(value)
        case .integer(let value): .int(Int(value))
        case .unsigned(let value): value <= UInt64(Int.max) ? .int(Int(value)) : .string(String(value))
        case .number(let value): value.isFinite ? .double(value) : .null
        case .text(let value): .string(value)
        case .list(let items): .array(items.map(\.json))
        case .record(let members): .object(members.map { ($0.name, $0.value.json) })
        }
    }
}

extension ValueFormat: ExpressibleByArgument {
    public init?(argument: String) { self.init(name: argument) }

    /// `--as TYPE`, or a usage error listing the types.
    static func parse(_ text: String) throws -> ValueFormat {
        guard let format = ValueFormat(name: text) else {
            throw ValidationError("'\(text)' is not a type: --as takes \(ValueFormat.names)")
        }
        return format
    }

    /// The bytes of a value given as text in this format, or a usage error saying what the
    /// format accepts.
    func bytes(of text: String) throws -> [UInt8] {
        guard let bytes = encode(text) else {
            throw ValidationError("'\(text)' is not a \(rawValue) value: --as \(rawValue) takes \(accepts)")
        }
        return bytes
    }
}
