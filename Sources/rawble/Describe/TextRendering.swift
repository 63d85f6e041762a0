/// Renders a decoded JSON description for a person: the PDU's name on the first line, then
/// one `key: value` line per field, nested structures indented.
enum TextRendering {
    static func render(_ value: JSON, title: String? = nil) -> String {
        var lines: [String] = []
        if let title { lines.append(title) }
        append(value, indent: title == nil ? 0 : 1, into: &lines)
        return lines.joined(separator: "\n")
    }

    private static func append(_ value: JSON, indent: Int, into lines: inout [String]) {
        let pad = String(repeating: "  ", count: indent)
        switch value {
        case .object(let fields):
            for (key, field) in fields {
                if let scalar = scalarText(field) {
                    lines.append("\(pad)\(key): \(scalar)")
                } else {
                    lines.append("\(pad)\(key):")
                    append(field, indent: indent + 1, into: &lines)
                }
            }
        case .array(let items):
            for item in items {
                if let scalar = scalarText(item) {
                    lines.append("\(pad)- \(scalar)")
                } else if case .object(let fields) = item, fields.allSatisfy({ scalarText($0.1) != nil }) {
                    // A flat record on one line reads best in lists (reports, entries).
                    let text = fields.map { "\($0.0)=\(scalarText($0.1) ?? "")" }.joined(separator: " ")
                    lines.append("\(pad)- \(text)")
                } else {
                    lines.append("\(pad)-")
                    append(item, indent: indent + 1, into: &lines)
                }
            }
        default:
            lines.append(pad + (scalarText(value) ?? ""))
        }
    }

    private static func scalarText(_ value: JSON) -> String? {
        switch value {
        case .null: "none"
        case .bool(let b): b ? "yes" : "no"
        case .int(let i): String(i)
        case .double: value.serialized()
        case .string(let s): s.isEmpty ? "\"\"" : s
        case .array(let items):
            items.isEmpty ? "[]" : (items.allSatisfy { if case .string = $0 { true } else if case .int = $0 { true } else { false } }
                ? items.compactMap(scalarText).joined(separator: ", ") : nil)
        case .object(let fields): fields.isEmpty ? "{}" : nil
        }
    }
}
