import RawbleHost
import RawbleHostCore
import RawbleWire

/// What the live scan table shows, sans I/O: the devices heard so far with when each was last
/// heard, and the lines to draw for a terminal of a given size at a given moment. Times are
/// seconds since the scan started, given by the caller, so tests draw it with no clock.
struct ScanTableModel: Sendable {
    struct Row {
        var device: DiscoveredDevice
        var lastSeen: Double
    }

    /// Most devices kept; past it, the one heard longest ago makes room (as the scan's own
    /// aggregator bounds its memory).
    let limit: Int
    private(set) var rows: [String: Row] = [:]

    init(limit: Int = 4096) {
        self.limit = max(1, limit)
    }

    /// A report of `device` heard at `time`.
    mutating func update(_ device: DiscoveredDevice, at time: Double) {
        let key = device.address.description
        if rows[key] == nil, rows.count >= limit,
           let oldest = rows.min(by: { $0.value.lastSeen < $1.value.lastSeen })?.key {
            rows[oldest] = nil
        }
        rows[key] = Row(device: device, lastSeen: time)
    }

    static let header = [pad("ADDRESS", 18), pad("TYPE", 7), pad("RSSI", 5), pad("CONN", 4), pad("SEEN", 8),
                         pad("NAME", 21), pad("SERVICES", 25), "MANUFACTURER"].joined(separator: " ")

    /// The lines to draw: the header, one row per device (strongest signal first, then by
    /// address), and a last line with the count. `now`: seconds since the scan started;
    /// `scanning`: whether it still runs (else the last line is the result). At most `height`
    /// lines (the rows left out are counted), none wider than `width` columns (a wrapped line
    /// would throw the redraw off).
    func lines(now: Double, scanning: Bool, width: Int, height: Int) -> [String] {
        let sorted = rows.values.sorted { a, b in
            let (ra, rb) = (Int(a.device.rssi ?? -128), Int(b.device.rssi ?? -128))
            return ra != rb ? ra > rb : a.device.address.description < b.device.address.description
        }
        let room = max(0, height - 2)
        let shown = sorted.count <= room ? sorted[...] : sorted.prefix(max(0, room - 1))
        var lines = [Self.header]
        lines += shown.map { Self.row($0, now: now) }
        if shown.count < sorted.count { lines.append("… and \(sorted.count - shown.count) more") }
        lines.append(footer(now: now, scanning: scanning))
        return lines.map { DisplayWidth.truncate(String($0.reversed().drop { $0 == " " }.reversed()), to: max(1, width - 1)) }
    }

    private func footer(now: Double, scanning: Bool) -> String {
        let seconds = Int(now)
        let count = rows.isEmpty ? "no devices found" : rows.count == 1 ? "1 device" : "\(rows.count) devices"
        return scanning ? "\(count) · scanning \(seconds) s · Ctrl-C stops" : "\(count) in \(seconds) s"
    }

    private static func row(_ row: Row, now: Double) -> String {
        let device = row.device
        let ago = Int(max(0, now - row.lastSeen))
        let seen = ago < 1 ? "now" : "\(ago) s ago"
        return [
            pad(device.address.address.description, 18),
            pad(device.address.type.description, 7),
            pad(device.rssi.map { String($0) } ?? "?", 5),
            pad(device.isConnectable ? "yes" : "no", 4),
            pad(seen, 8),
            pad(ScanRow.name(device), 21),
            pad(ScanRow.services(device), 25),
            ScanRow.manufacturer(device),
        ].joined(separator: " ")
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - DisplayWidth.of(text)))
    }
}

/// The cells both scan tables show for a device, safe to print: a device's name is the
/// advertiser's text and must not drive the terminal.
enum ScanRow {
    static func name(_ device: DiscoveredDevice) -> String {
        guard let name = device.name else { return device.dataError == nil ? "" : "(broken AD)" }
        return GATTString.escaped(name)
    }

    static func services(_ device: DiscoveredDevice) -> String {
        device.advertisingData.serviceUUIDs.map { $0.name ?? $0.description }.joined(separator: ",")
    }

    static func manufacturer(_ device: DiscoveredDevice) -> String {
        device.advertisingData.manufacturerData.map { entry in
            (entry.companyName ?? hex4(entry.companyID)) + " " + Hex.encode(entry.data)
        }.joined(separator: "; ")
    }

    /// `0x` and four uppercase hex digits, as the Bluetooth SIG lists company identifiers.
    private static func hex4(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
    }
}

/// How many terminal columns text takes: East Asian wide and emoji characters take two,
/// combining marks none. An approximation of wcwidth(3) good enough to keep a line from
/// wrapping.
enum DisplayWidth {
    static func of(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { $0 + of($1) }
    }

    static func of(_ scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if value == 0x200B { return 0 }
        let wide: [ClosedRange<UInt32>] = [
            0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
            0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD,
        ]
        return wide.contains { $0.contains(value) } ? 2 : 1
    }

    /// `text` cut to at most `columns` columns, with `…` where it was cut.
    static func truncate(_ text: String, to columns: Int) -> String {
        guard of(text) > columns else { return text }
        var out = ""
        var used = 0
        for character in text {
            let width = of(String(character))
            if used + width > columns - 1 { break }
            out.append(character)
            used += width
        }
        return out + "…"
    }
}
