
/// What `rawble hr` (or `ecg`) with several straps shows on a terminal: one row per strap,
/// redrawn in place. The model alone, with times given to it, so it is tested with plain values.
struct StrapTableModel: Sendable, Equatable {
    /// Which command's figures the rows show.
    enum Columns: Sendable, Equatable {
        /// `hr`: bpm, zone, RMSSD, battery.
        case heartRate
        /// `ecg`: the ECG's bpm (its R-peaks), the strap's own bpm, the samples received.
        case ecg
    }

    /// A strap's link, as its row says it.
    enum LinkState: Sendable, Equatable {
        case scanning
        case connecting
        case connected
        case streaming
        /// Lost; scanning again after the pause.
        case reconnecting(seconds: Int)
        /// The strap's own failure (a hostile or broken strap): the row says it, the others go on.
        case failed(String)
        case done

        var text: String {
            switch self {
            case .scanning: "scanning"
            case .connecting: "connecting"
            case .connected: "connected"
            case .streaming: "streaming"
            case .reconnecting(let seconds): "lost; \(seconds) s"
            case .failed(let why): "failed: \(why)"
            case .done: "done"
            }
        }
    }

    struct Row: Sendable, Equatable {
        var name: String
        var address: String = ""
        var bpm: UInt16?
        var zone: Int?
        var rmssd: Double?
        var battery: Int?
        /// `ecg`: the heart rate the strap itself sends, beside the ECG's (``bpm``).
        var strapBPM: UInt16?
        /// `ecg`: the ECG samples received.
        var samples = 0
        var state: LinkState = .scanning
        /// The adapter its link goes through, in a run with several (a column then shows it).
        var adapter = ""
        /// When its last value came (seconds on the table's clock).
        var lastValue: Double?
        var values = 0
    }

    private(set) var rows: [Row] = []
    let columns: Columns

    init(columns: Columns = .heartRate) {
        self.columns = columns
    }

    /// Adds a row for a strap; its index, which later updates name.
    mutating func add(name: String) -> Int {
        rows.append(Row(name: name))
        return rows.count - 1
    }

    mutating func update(_ index: Int, _ change: (inout Row) -> Void) {
        guard rows.indices.contains(index) else { return }
        change(&rows[index])
    }

    /// The table's lines at `now`: a header, a row per strap (cut to `width`; at most
    /// `height - 2` rows, then how many more), and a last line with the count (`ended`: the
    /// run is over, the last drawing).
    func lines(now: Double, width: Int, height: Int, ended: Bool = false) -> [String] {
        // Several adapters (`--transport A,B`): a column after the address says which one each
        // strap is on ("via").
        let adapters = rows.contains { !$0.adapter.isEmpty }
        let widths = Self.widths(columns, adapter: adapters)
        func format(_ fields: [String], adapter: String) -> String {
            var fields = fields
            if adapters { fields.insert(adapter.count > 5 ? "…" + adapter.suffix(4) : adapter, at: 2) }
            return Self.format(fields, width: width, widths: widths)
        }
        var lines = [format(Self.header(columns), adapter: "via")]
        let room = max(1, height - 2)
        let shown = rows.count > room ? rows.prefix(room - 1) : rows[...]
        for row in shown {
            let age = row.lastValue.map { "\(Int((now - $0).rounded(.down))) s ago" } ?? "–"
            let bpm: String = row.bpm.map { String($0) } ?? "–"
            var fields: [String] = [row.name, row.address, bpm]
            switch columns {
            case .heartRate:
                let zone: String = row.zone.map { $0 == 0 ? "rest" : "Z\($0)" } ?? "–"
                let rmssd: String = row.rmssd.map { "\(Int($0.rounded())) ms" } ?? "–"
                let battery: String = row.battery.map { "\($0) %" } ?? "–"
                fields += [zone, rmssd, battery]
            case .ecg:
                let strap: String = row.strapBPM.map { String($0) } ?? "–"
                fields += [strap, "\(row.samples)"]
            }
            fields += [row.state.text, age]
            lines.append(format(fields, adapter: row.adapter))
        }
        if shown.count < rows.count { lines.append("… and \(rows.count - shown.count) more (a taller terminal shows them)") }
        let streaming = rows.filter { $0.state == .streaming }.count
        lines.append("\(rows.count) strap\(rows.count == 1 ? "" : "s")" + (ended ? ": ended" : ", \(streaming) streaming (Ctrl-C ends)"))
        return lines.map { String($0.prefix(max(10, width))) }
    }

    /// The header's fields.
    private static func header(_ columns: Columns) -> [String] {
        switch columns {
        case .heartRate: ["strap", "address", "bpm", "zone", "RMSSD", "batt", "link", "last"]
        case .ecg: ["H10", "address", "bpm", "strap", "samples", "link", "last"]
        }
    }

    /// Column widths: a row fits 80 columns; the line is cut to `width`. With the adapter
    /// column (`adapter`), still within 80 columns (a long transport shows its end: `hci1`,
    /// `…9001`).
    private static func widths(_ columns: Columns, adapter: Bool = false) -> [Int] {
        switch (columns, adapter) {
        case (.heartRate, false): [16, 17, 3, 4, 6, 4, 14, 8]
        case (.heartRate, true): [15, 17, 5, 3, 4, 6, 4, 10, 8]
        // An H10's name, "Polar H10 " and its 8-digit ID, whole: the ID tells the rows apart.
        case (.ecg, false): [18, 17, 3, 5, 7, 14, 8]
        case (.ecg, true): [18, 17, 5, 3, 5, 7, 10, 8]
        }
    }

    static func format(_ fields: [String], width: Int, widths: [Int] = widths(.heartRate)) -> String {
        var line = ""
        for (index, field) in fields.enumerated() {
            let room = widths[min(index, widths.count - 1)]
            var text = String(field.prefix(room))
            if index < fields.count - 1 { text += String(repeating: " ", count: room - text.count + 1) }
            line += text
        }
        return String(line.prefix(max(10, width)))
    }
}

/// `hr`'s straps on a terminal (``LiveTable``): a row each.
typealias StrapTable = LiveTable<StrapTableModel>

extension StrapTableModel: LiveTableModel {}

extension LiveTable where Model == StrapTableModel {
    convenience init(columns: StrapTableModel.Columns = .heartRate) {
        // Drawn at once: before any strap is found it says so ("0 straps").
        self.init(StrapTableModel(columns: columns), minimumHeight: 4, drawAtOnce: true)
    }

    /// A row for a new strap; its index.
    func add(name: String) -> Int {
        change { model, _ in model.add(name: name) }
    }

    func update(_ index: Int, _ change: (inout StrapTableModel.Row) -> Void) {
        self.change { model, _ in model.update(index, change) }
    }

    /// A value from strap `index` now.
    func valueArrived(_ index: Int, _ change: (inout StrapTableModel.Row) -> Void) {
        self.change { model, now in
            model.update(index) { row in
                change(&row)
                row.lastValue = now
                row.values += 1
                row.state = .streaming
            }
        }
    }
}
