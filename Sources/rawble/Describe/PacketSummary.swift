import RawbleWire

extension PacketDescription {
    /// The packet kind as `decode btsnoop --json` names it in `type`.
    static func typeName(_ type: H4PacketType) -> String {
        switch type {
        case .command: "command"
        case .event: "event"
        case .acl: "acl"
        case .sco: "sco"
        case .iso: "iso"
        }
    }

    /// One line for a person from a packet's decoded fields (``json(_:session:)``): the packet
    /// kind and name, and the fields that matter. `decode btsnoop` prints it per record and
    /// `--trace` per packet, so both read the same.
    static func summary(_ fields: [(String, JSON)]) -> String {
        func field(_ key: String, in list: [(String, JSON)]) -> JSON? { list.first { $0.0 == key }?.1 }
        func text(_ value: JSON?) -> String {
            guard let value else { return "" }
            if case .string(let s) = value { return s }
            return value.serialized()
        }
        let type = text(field("type", in: fields))
        switch type {
        case "command":
            let parameters = field("parameters", in: fields).map(keyFacts) ?? ""
            return "command \(text(field("name", in: fields)))" + (parameters.isEmpty ? "" : ": \(parameters)")
        case "event":
            var line = "event \(text(field("name", in: fields)))"
            if case .array(let reports)? = field("reports", in: fields) {
                let devices = reports.compactMap { report -> String? in
                    guard case .object(let r) = report else { return nil }
                    let name = field("name", in: r).flatMap { if case .string(let s) = $0 { s } else { nil } }
                    let scanResponse = field("scanResponse", in: r) == .bool(true) ? " scan response" : ""
                    return text(field("address", in: r)) + scanResponse + (name.map { " \"\($0)\"" } ?? "")
                        + " \(text(field("rssi", in: r))) dBm"
                }
                line += ": " + devices.joined(separator: ", ")
            } else if let command = field("command", in: fields) {
                line += ": \(text(command)) \(text(field("status", in: fields)))"
            } else if let facts = field("fields", in: fields).map(keyFacts), !facts.isEmpty {
                line += ": \(facts)"
            }
            return line
        case "acl":
            var line = "acl handle \(text(field("handle", in: fields))) \(text(field("channelName", in: fields)))"
            if case .object(let att)? = field("att", in: fields) {
                line += ": \(text(field("name", in: att)))"
                if let mtu = field("mtu", in: att) { line += " mtu \(text(mtu))" }
                if let start = field("startHandle", in: att), let end = field("endHandle", in: att) {
                    line += " \(text(start))-\(text(end))"
                }
                if let type = field("type", in: att) {
                    line += " \(text(type))" + (field("typeName", in: att).map { " (\(text($0)))" } ?? "")
                }
                if let handle = field("handle", in: att) { line += " \(text(handle))" }
                if let value = field("value", in: att) { line += " \(text(value))" }
                if let request = field("request", in: att), let error = field("errorName", in: att) {
                    line += ": \(text(request)) \(text(error))"
                }
                if case .array(let entries)? = field("entries", in: att) {
                    line += " (\(entries.count) \(entries.count == 1 ? "entry" : "entries"))"
                }
                if let name = field("characteristicName", in: att) { line += " (\(text(name)))" }
                if let summary = field("summary", in: att) { line += ": \(text(summary))" }
                if let location = field("bodySensorLocation", in: att) { line += ": \(text(location))" }
            } else if case .object(let sig)? = field("signaling", in: fields) ?? field("smp", in: fields) {
                line += ": \(text(field("name", in: sig)))"
            } else if let length = field("l2capLength", in: fields), field("fragmented", in: fields) != nil {
                line += ": " + (field("attName", in: fields).map { "\(text($0)), " } ?? "") + "first fragment of a \(text(length))-byte PDU"
            } else if field("fragment", in: fields) != nil {
                line += "continuation fragment"
            }
            return line
        default:
            return type
        }
    }

    /// The fields a person follows a link by, from a command's parameters or an event's fields
    /// (looked for one object deep, where events nest them): `handle 1 C0:B1:E0:00:00:05
    /// Success (0x00), reason Remote User Terminated Connection (0x13)`. Empty when none is there.
    private static func keyFacts(_ value: JSON) -> String {
        guard case .object(var fields) = value else { return "" }
        if fields.count == 1, case .object(let inner) = fields[0].1 { fields = inner }
        func scalar(_ key: String) -> String? {
            switch fields.first(where: { $0.0 == key })?.1 {
            case .string(let s)?: s
            case .int(let n)?: String(n)
            case .bool(let b)?: b ? "on" : "off"
            default: nil
            }
        }
        var facts: [String] = []
        if let handle = scalar("connectionHandle") ?? scalar("handle") { facts.append("handle \(handle)") }
        if let address = scalar("peerAddress"), address != "00:00:00:00:00:00" { facts.append(address) }
        // `enable`, or a command's one flag (LE Set Advertising Enable's).
        if let enable = scalar("enable") ?? (fields.count == 1 && fields[0].1.isBool ? scalar(fields[0].0) : nil) {
            facts.append(enable)
        }
        if let status = scalar("status") { facts.append(status) }
        let line = facts.joined(separator: " ")
        guard let reason = scalar("reason") else { return line }
        return line + (line.isEmpty ? "" : ", ") + "reason \(reason)"
    }
}

private extension JSON {
    var isBool: Bool {
        if case .bool = self { true } else { false }
    }
}
