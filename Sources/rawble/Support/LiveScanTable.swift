#if canImport(Glibc)
import Glibc
import RawbleHostCore
import RawbleWire
#elseif canImport(Musl)
import Musl
#endif
import RawbleHost
import Synchronization

/// What a ``LiveTable`` draws: its lines at `now` (seconds since the table appeared) for a
/// terminal of `width` × `height`; `ended`: the run is over (the last drawing).
protocol LiveTableModel: Sendable {
    func lines(now: Double, width: Int, height: Int, ended: Bool) -> [String]
}

/// A table on a terminal (the scan's devices, `hr`'s straps): drawn in place on stdout and
/// redrawn as its model changes, at most five times a second, and once a second for the ages
/// it shows; lines printed meanwhile by others (`--trace`, `-v`, a strap's error) go above it
/// (``LiveView``).
final class LiveTable<Model: LiveTableModel>: LiveView {
    private struct State {
        var model: Model
        var screen = InPlaceLines()
        var dirty = false
        var finished = false
    }

    private let state: Mutex<State>
    private let started = ContinuousClock.now
    private let ticker = Mutex<Task<Void, Never>?>(nil)
    /// The fewest lines it is drawn in, however short the terminal.
    private let minimumHeight: Int

    /// `drawAtOnce`: drawn before the first change (the scan's empty table says it scans).
    init(_ model: Model, minimumHeight: Int, drawAtOnce: Bool) {
        state = Mutex(State(model: model))
        self.minimumHeight = minimumHeight
        StatusLine.makeActive(self)
        if drawAtOnce { draw() }
        let task = Task { [weak self] in
            var tick = 0
            while !Task.isCancelled {
                do { try await Task.sleep(for: .milliseconds(200)) } catch { return }
                tick += 1
                guard let self else { return }
                // Every change marks the table; ages change once a second.
                if self.state.withLock({ $0.dirty }) || tick % 5 == 0 { self.draw() }
            }
        }
        ticker.withLock { $0 = task }
    }

    /// Changes the model (given the seconds since the table appeared); drawn at the next tick.
    func change<T>(_ body: (inout Model, Double) -> T) -> T {
        let now = seconds()
        return state.withLock { state in
            state.dirty = true
            return body(&state.model, now)
        }
    }

    /// The last draw, then the cursor below the table.
    func finish() {
        ticker.withLock { $0?.cancel() }
        let now = seconds()
        // Drawn for the last time before it resigns: a line from elsewhere meanwhile waits for
        // the lock, then prints plainly below the table.
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            redraw(&state, now: now, ended: true)
            Output.raw("\n")
        }
        StatusLine.resign(self)
    }

    func printError(_ line: String) {
        let now = seconds()
        state.withLock { state in
            guard !state.finished else { return Output.error(line) }
            Output.raw(state.screen.erase())
            Output.error(line)
            redraw(&state, now: now, ended: false)
        }
    }

    private func draw() {
        let now = seconds()
        state.withLock { state in
            guard !state.finished else { return }
            redraw(&state, now: now, ended: false)
        }
    }

    private func seconds() -> Double {
        let elapsed = ContinuousClock.now - started
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// Draws the table over the last one, in one write(2) so it never shows half drawn.
    private func redraw(_ state: inout State, now: Double, ended: Bool) {
        let (width, height) = Terminal.size(of: 1)
        Output.raw(state.screen.replace(with: state.model.lines(now: now, width: width, height: max(minimumHeight, height - 1), ended: ended)))
        state.dirty = false
    }
}

/// The scan table on a terminal: rows sorted by signal, RSSI and "seen" as reports come in,
/// the device count on its last line.
typealias LiveScanTable = LiveTable<ScanTableModel>

extension LiveTable where Model == ScanTableModel {
    convenience init() {
        self.init(ScanTableModel(), minimumHeight: 3, drawAtOnce: true)
    }

    func update(_ device: DiscoveredDevice) {
        change { model, now in model.update(device, at: now) }
    }
}

extension ScanTableModel: LiveTableModel {
    func lines(now: Double, width: Int, height: Int, ended: Bool) -> [String] {
        lines(now: now, scanning: !ended, width: width, height: height)
    }
}

/// Lines drawn in place on a terminal, the cursor on the last of them: what replaces them, or
/// takes them away, as one text (written with one write(2), never half drawn).
struct InPlaceLines {
    /// How many lines are on screen.
    private(set) var drawn = 0

    /// Back to the first line drawn and clear to the end of the screen; empty when none are.
    mutating func erase() -> String {
        defer { drawn = 0 }
        return drawn > 0 ? "\r" + (drawn > 1 ? "\u{1B}[\(drawn - 1)A" : "") + "\u{1B}[J" : ""
    }

    /// `lines` over the ones drawn before.
    mutating func replace(with lines: [String]) -> String {
        let text = erase() + lines.joined(separator: "\n")
        drawn = lines.count
        return text
    }
}

/// A terminal's size.
enum Terminal {
    /// Columns and rows of the terminal on `descriptor`, 80×24 when it does not say.
    static func size(of descriptor: Int32) -> (columns: Int, rows: Int) {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }
}
