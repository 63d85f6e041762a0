import RawbleWire

/// Field-by-field JSON of any decoded value, read with `Mirror`, for the many PDUs whose
/// fields are printed as they are (HCI commands and events, signaling, SMP). Leaf values
/// print as people read them: bytes as hex, codes with their names, addresses and UUIDs in
/// their usual forms.
enum Reflection {
    static func json(_ value: Any) -> JSON {
        switch value {
        case let v as JSON: return v
        case let v as Bool: return .bool(v)
        case let v as Int: return .int(v)
        case let v as Int8: return JSON(v)
        case let v as Int16: return JSON(v)
        case let v as Int32: return JSON(v)
        case let v as Int64: return .int(Int(v))
        case let v as UInt8: return JSON(v)
        case let v as UInt16: return JSON(v)
        case let v as UInt32: return JSON(v)
        case let v as UInt64: return v <= UInt64(Int.max) ? .int(Int(v)) : .string(String(v))
        case let v as Double: return .double(v)
        case let v as String: return .string(v)
        case let v as ArraySlice<UInt8>: return .hex(v)
        case let v as [UInt8]: return .hex(v)
        case let v as BluetoothAddress: return .string(v.description)
        case let v as BluetoothUUID:
            return v.name.map { .string("\(v) (\($0))") } ?? .string(v.description)
        case let v as LEAddressType: return .string(v.description)
        // A number, as every `opcode` field is; the name is printed beside it where it matters.
        case let v as HCIOpcode: return JSON(v.rawValue)
        case let v as HCIStatus: return .string(v.description)
        default: break
        }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional:
            return mirror.children.first.map { json($0.value) } ?? .null
        case .collection, .set:
            return .array(mirror.children.map { json($0.value) })
        case .enum:
            guard let payload = mirror.children.first else { return .string(caseName(value)) }
            return .object([(payload.label ?? "value", json(payload.value))])
        case .tuple:
            return .object(mirror.children.enumerated().map { index, child in
                (child.label.map { $0.hasPrefix(".") ? "field\(index)" : $0 } ?? "field\(index)", json(child.value))
            })
        case .struct, .class:
            // Code-like wrappers (RawRepresentable with a name) print as their description.
            if value is any RawRepresentable {
                if let described = value as? any CustomStringConvertible { return .string(described.description) }
                if let raw = (value as? any RawRepresentable)?.rawValue { return json(raw) }
            }
            if let sequence = value as? any Collection, !(value is any RawRepresentable) {
                return .array(sequence.map { json($0) })
            }
            if mirror.children.isEmpty {
                return .string(String(describing: value))
            }
            var fields: [(String, JSON)] = mirror.children.map { (($0.label ?? "field"), json($0.value)) }
            if let described = value as? any CustomStringConvertible, fields.isEmpty {
                fields = [("value", .string(described.description))]
            }
            return .object(fields)
        default:
            return .string(String(describing: value))
        }
    }

    /// `advInd` for an enum case without payload.
    private static func caseName(_ value: Any) -> String {
        if let described = value as? any CustomStringConvertible { return described.description }
        return String(describing: value)
    }
}
