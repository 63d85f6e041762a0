import RawbleWire

/// Which strap a line of a session file is from, in a file that holds several (`rawble hr A B`,
/// `rawble hr --all`): its address, which keys it, and the name it advertised or its GATT
/// Device Name, which a person reads.
///
/// The fields are rendered once, when the label is made (a strap's name is the peer's text,
/// so it is escaped for JSON and quoted for CSV here, not on every line).
public struct StrapLabel: Hashable, Sendable, CustomStringConvertible {
    /// The strap's address, `XX:XX:XX:XX:XX:XX`.
    public let address: String
    /// Its name, when it has one (control characters and anything past 64 bytes dropped).
    public let name: String?
    /// `"address":"…","name":"…",` for a JSON lines file (`null` without a name).
    package let jsonFields: [UInt8]
    /// `…,…,` (address, then the name quoted as CSV needs) for a CSV file.
    let csvFields: [UInt8]

    /// The longest name kept, in UTF-8 bytes (a Complete Local Name fits in 29; a GATT Device
    /// Name may be 248).
    public static let maxNameLength = 64

    public init(address: String, name: String?) {
        self.address = address
        let cleaned = name.map(Self.cleaned).flatMap { $0.isEmpty ? nil : $0 }
        self.name = cleaned
        var json = Array(#""address":"#.utf8) + Self.jsonString(address) + Array(#","name":"#.utf8)
        json += cleaned.map(Self.jsonString) ?? Array("null".utf8)
        json.append(UInt8(ascii: ","))
        jsonFields = json
        csvFields = Self.csvField(address) + [UInt8(ascii: ",")] + Self.csvField(cleaned ?? "") + [UInt8(ascii: ",")]
    }

    /// What a labelled line says when its strap was not given.
    static let unnamed = StrapLabel(address: "", name: nil)

    /// The name, else the address: what a row or a line prefix shows.
    public var description: String { name ?? address }

    /// `name` without control characters, at most ``maxNameLength`` bytes (whole characters).
    static func cleaned(_ name: String) -> String {
        var result = ""
        var length = 0
        for character in name where !character.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            length += character.utf8.count
            guard length <= maxNameLength else { break }
            result.append(character)
        }
        return result.trimmingSpaces
    }

    /// `text` as a JSON string, quotes included.
    static func jsonString(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "\"")]
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                bytes += [UInt8(ascii: "\\"), byte]
            case 0..<0x20:
                // Control characters are cleaned out of names; an address has none.
                bytes += Array("\\u00".utf8) + Hex.encode([byte]).utf8
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
        return bytes
    }

    /// `text` as one CSV field: quoted (quotes doubled) when it holds a comma or a quote.
    static func csvField(_ text: String) -> [UInt8] {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") }) else { return Array(text.utf8) }
        var bytes: [UInt8] = [UInt8(ascii: "\"")]
        for byte in text.utf8 {
            bytes.append(byte)
            if byte == UInt8(ascii: "\"") { bytes.append(byte) }
        }
        bytes.append(UInt8(ascii: "\""))
        return bytes
    }
}

private extension String {
    var trimmingSpaces: String {
        var scalars = Substring(self)
        while scalars.first?.isWhitespace == true { scalars.removeFirst() }
        while scalars.last?.isWhitespace == true { scalars.removeLast() }
        return String(scalars)
    }
}
