import FoundationEssentials
import Synchronization

/// What `rawble hr` with several straps shows on a terminal: one row per strap, redrawn in
/// place. The model alone, with times given to it, so it is tested with plain values.
struct StrapTableModel: Sendable, Equatable {
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
        var state: LinkState = .scanning
        /// When its last value came (seconds on the table's clock).
        var lastValue: Double?
        var values = 0
    }

    private(set) var rows: [Row] = []

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
        var lines = [Self.format(["strap", "address", "bpm", "zone", "RMSSD", "batt", "link", "last"], width: width)]
        let room = max(1, height - 2)
        let shown = rows.count > room ? rows.prefix(room - 1) : rows[...]
        for row in shown {
            let age = row.lastValue.map { "\(Int((now - $0).rounded(.down))) s ago" } ?? "–"
            lines.append(Self.format([
                row.name, row.address, row.bpm.map(String.init) ?? "–",
                row.zone.map { $0 == 0 ? "rest" : "Z\($0)" } ?? "–",
                row.rmssd.map { "\(Int($0.rounded())) ms" } ?? "–",
                row.battery.map { "\($0) %" } ?? "–",
                row.state.text, age,
            ], width: width))
        }
        if shown.count < rows.count { lines.append("… and \(rows.count - shown.count) more (a taller terminal shows them)") }
        let streaming = rows.filter { $0.state == .streaming }.count
        lines.append("\(rows.count) strap\(rows.count == 1 ? "" : "s")" + (ended ? ": ended" : ", \(streaming) streaming (Ctrl-C ends)"))
        return lines.map { String($0.prefix(max(10, width))) }
    }

    /// Column widths: a row fits 80 columns; the line is cut to `width`.
    private static let widths = [16, 17, 3, 4, 6, 4, 14, 8]

    static func format(_ fields: [String], width: Int) -> String {
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

/// ``StrapTableModel`` drawn on stdout, redrawn in place at most five times a second (and
/// once a second for the ages); lines others print meanwhile go above it (``LiveView``).
final class StrapTable: LiveView {
    private struct State {
        var model = StrapTableModel()
        var screen = InPlaceLines()
        var dirty = false
        var finished = false
    }

    private let state = Mutex(State())
    private let started = ContinuousClock.now
    private let ticker = Mutex<Task<Void, Never>?>(nil)

    init() {
        StatusLine.makeActive(self)
        let task = Task { [weak self] in
            var tick = 0
            while !Task.isCancelled {
                do { try await Task.sleep(for: .milliseconds(200)) } catch { return }
                tick += 1
                guard let self else { return }
                if self.state.withLock({ $0.dirty }) || tick % 5 == 0 { self.draw() }
            }
        }
        ticker.withLock { $0 = task }
    }

    func add(name: String) -> Int {
        state.withLock { state in
            state.dirty = true
            return state.model.add(name: name)
        }
    }

    func update(_ index: Int, _ change: (inout StrapTableModel.Row) -> Void) {
        state.withLock { state in
            state.model.update(index, change)
            state.dirty = true
        }
    }

    /// A value from strap `index` now.
    func valueArrived(_ index: Int, _ change: (inout StrapTableModel.Row) -> Void) {
        let now = seconds()
        update(index) { row in
            change(&row)
            row.lastValue = now
            row.values += 1
            row.state = .streaming
        }
    }

    /// The last draw, then the cursor below the table.
    func finish() {
        ticker.withLock { $0?.cancel() }
        let now = seconds()
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            Self.redraw(&state, now: now, ended: true)
            Output.raw("\n")
        }
        StatusLine.resign(self)
    }

    func printError(_ line: String) {
        let now = seconds()
        state.withLock { state in
            guard !state.finished else { return Output.error(line) }
            Self.erase(&state)
            Output.error(line)
            Self.redraw(&state, now: now)
        }
    }

    private func draw() {
        let now = seconds()
        state.withLock { state in
            guard !state.finished else { return }
            Self.redraw(&state, now: now)
        }
    }

    private func seconds() -> Double {
        let elapsed = ContinuousClock.now - started
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    private static func erase(_ state: inout State) {
        Output.raw(state.screen.erase())
    }

    /// Draws the table over the last one, in one write(2) so it never shows half drawn.
    private static func redraw(_ state: inout State, now: Double, ended: Bool = false) {
        let (width, height) = Terminal.size(of: 1)
        Output.raw(state.screen.replace(with: state.model.lines(now: now, width: width, height: max(4, height - 1), ended: ended)))
        state.dirty = false
    }
}
