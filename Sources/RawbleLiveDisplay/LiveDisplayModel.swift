/// The live display's state, sans I/O: every strap's tile, merged from ``StrapUpdate``s, and the
/// Server-Sent Events that carry it (a snapshot of all, then one event per update). Time is an
/// input (each bpm's, Unix seconds); memory is bounded (``maxStraps`` tiles, ``trendWindow`` of trend with
/// at most one point per ``trendSpacing``, names cut at ``maxNameLength`` characters).
struct LiveDisplayModel: Sendable {
    /// The most tiles kept; updates of further straps are dropped.
    static let maxStraps = 256
    /// The trend a tile draws, in seconds.
    static let trendWindow = 60.0
    /// The trend keeps a point per this many seconds (and the newest value): ~120 points a tile.
    static let trendSpacing = 0.5
    /// The most points a trend keeps, whatever the times given.
    static let maxTrendPoints = Int(trendWindow / trendSpacing) + 2
    /// The longest name shown, in characters.
    static let maxNameLength = 64

    struct Strap: Sendable {
        var id: String
        var name: String?
        var bpm: Int?
        var zone: Int?
        var battery: Int?
        var link: LinkState?
        /// (Unix milliseconds, bpm), oldest first.
        var trend: [(time: Int64, bpm: Int)] = []
    }

    /// The tiles in the order their straps first appeared.
    private(set) var straps: [Strap] = []
    private var index: [String: Int] = [:]

    /// Merges `update` and returns its event (`event: strap`), or `nil`
    /// when the update is dropped (a new strap beyond ``maxStraps``, an empty key).
    mutating func apply(_ update: StrapUpdate) -> String? {
        let id = Self.cut(update.id)
        guard !id.isEmpty else { return nil }
        let position: Int
        if let known = index[id] {
            position = known
        } else {
            guard straps.count < Self.maxStraps else { return nil }
            position = straps.count
            index[id] = position
            straps.append(Strap(id: id))
        }
        var point: (time: Int64, bpm: Int)?
        var strap = straps[position]
        if let name = update.name { strap.name = Self.cut(name) }
        // A zone goes with its bpm: a bpm without one (no zones asked for, a value outside
        // them) leaves the tile without a zone colour.
        if update.bpm != nil { strap.zone = update.zone } else if let zone = update.zone { strap.zone = zone }
        if let battery = update.battery { strap.battery = battery }
        if let link = update.link { strap.link = link }
        if let bpm = update.bpm { strap.bpm = bpm }
        if let bpm = update.bpm, let seconds = update.time, seconds.isFinite, abs(seconds) < 1e11 {
            let time = Int64((seconds * 1000).rounded())
            // The last point is the newest value; it stays as a point of its own once it is
            // trendSpacing after the one before it, else the next value takes its place.
            let count = strap.trend.count
            if count >= 2, Double(strap.trend[count - 1].time - strap.trend[count - 2].time) < Self.trendSpacing * 1000 {
                strap.trend.removeLast()
            }
            strap.trend.append((time, bpm))
            let oldest = time - Int64(Self.trendWindow * 1000)
            if let keep = strap.trend.firstIndex(where: { $0.time >= oldest }), keep > 0 {
                strap.trend.removeFirst(keep)
            }
            // Times that go back and forth (a clock stepped) stay bounded too.
            if strap.trend.count > Self.maxTrendPoints { strap.trend.removeFirst(strap.trend.count - Self.maxTrendPoints) }
            point = (time, bpm)
        }
        straps[position] = strap
        var fields = Self.fields(strap)
        if let point { fields.append("\"point\":[\(point.time),\(point.bpm)]") }
        return Self.event("strap", "{" + fields.joined(separator: ",") + "}")
    }

    /// Every tile with its trend, as the first event a page gets (`event: snapshot`): a page
    /// loaded or reconnected at any time is whole at once.
    func snapshot() -> String {
        let all = straps.map { strap in
            let trend = strap.trend.map { "[\($0.time),\($0.bpm)]" }.joined(separator: ",")
            return "{" + (Self.fields(strap) + ["\"trend\":[\(trend)]"]).joined(separator: ",") + "}"
        }
        return Self.event("snapshot", "{\"straps\":[" + all.joined(separator: ",") + "]}")
    }

    /// One Server-Sent Event: its type and one `data` line (JSON holds no raw newline).
    static func event(_ type: String, _ json: String) -> String {
        "event: \(type)\ndata: \(json)\n\n"
    }

    private static func fields(_ strap: Strap) -> [String] {
        [
            "\"id\":" + jsonString(strap.id),
            "\"name\":" + (strap.name.map(jsonString) ?? "null"),
            "\"bpm\":" + (strap.bpm.map { "\($0)" } ?? "null"),
            "\"zone\":" + (strap.zone.map { "\($0)" } ?? "null"),
            "\"battery\":" + (strap.battery.map { "\($0)" } ?? "null"),
            "\"link\":" + (strap.link.map { jsonString($0.rawValue) } ?? "null"),
        ]
    }

    private static func cut(_ text: String) -> String {
        text.count > maxNameLength ? String(text.prefix(maxNameLength)) + "…" : text
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped, and `<`,
    /// `>`, `&`, U+2028 and U+2029 too (a strap's name is the strap's to choose).
    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "<", ">", "&", "\u{2028}", "\u{2029}":
                out += unicodeEscape(scalar.value)
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F { out += unicodeEscape(scalar.value) } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out + "\""
    }

    private static func unicodeEscape(_ value: UInt32) -> String {
        let hex = String(value, radix: 16)
        return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
