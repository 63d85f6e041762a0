#if canImport(Glibc)
import Glibc
import RawbleHostCore
import RawbleWire
#elseif canImport(Musl)
import Musl
#endif
import RawbleHost
import Synchronization

/// The scan table on a terminal: drawn in place on stdout and redrawn as reports come in
/// (RSSI and "seen" change, rows sorted by signal), with the device count on its last line.
/// At most a few redraws a second, and once a second for the ages; lines printed meanwhile by
/// others (`--trace`, `-v`) go above it (``LiveView``).
final class LiveScanTable: LiveView {
    private struct State {
        var model = ScanTableModel()
        var screen = InPlaceLines()
        var dirty = false
        var finished = false
    }

    private let state = Mutex(State())
    private let started = ContinuousClock.now
    private let ticker = Mutex<Task<Void, Never>?>(nil)

    init() {
        StatusLine.makeActive(self)
        draw()
        let task = Task { [weak self] in
            var tick = 0
            while !Task.isCancelled {
                do { try await Task.sleep(for: .milliseconds(200)) } catch { return }
                tick += 1
                guard let self else { return }
                // Every report marks the table; ages change once a second.
                if self.state.withLock({ $0.dirty }) || tick % 5 == 0 { self.draw() }
            }
        }
        ticker.withLock { $0 = task }
    }

    func update(_ device: DiscoveredDevice) {
        let now = seconds()
        state.withLock { state in
            state.model.update(device, at: now)
            state.dirty = true
        }
    }

    /// The last draw, the result on its last line, then the cursor below the table.
    func finish() {
        ticker.withLock { $0?.cancel() }
        let now = seconds()
        // Drawn for the last time before it resigns: a line from elsewhere meanwhile waits for
        // the lock, then prints plainly below the table.
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            Self.redraw(&state, now: now, scanning: false)
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
            Self.redraw(&state, now: now, scanning: true)
        }
    }

    private func draw() {
        let now = seconds()
        state.withLock { state in
            guard !state.finished else { return }
            Self.redraw(&state, now: now, scanning: true)
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
    private static func redraw(_ state: inout State, now: Double, scanning: Bool) {
        let (width, height) = Terminal.size(of: 1)
        Output.raw(state.screen.replace(with: state.model.lines(now: now, scanning: scanning, width: width, height: max(3, height - 1))))
        state.dirty = false
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
