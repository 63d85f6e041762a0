import FoundationEssentials
import RawbleWire
import Synchronization

/// A view redrawn in place on the terminal (the status line, the live scan table): lines that
/// others print while it shows (the `--trace`, `-v`'s log records) must go above it.
protocol LiveView: AnyObject, Sendable {
    /// Prints `line` on stderr above the view, then draws the view again.
    func printError(_ line: String)
}

/// The status line on stderr for long work: what is happening and for how long (a spinner),
/// or a heart that beats at the measured rate. Only on a terminal and without `--quiet`;
/// otherwise every call does nothing. Lines printed meanwhile go through ``printLine(_:)`` so
/// they never mix with the status.
final class StatusLine: LiveView {
    private struct State {
        var text = ""
        /// Whether the text gets a spinner and the seconds since it was shown (a wait), or is
        /// shown as it is (a live view that says its own time).
        var counting = true
        var since = ContinuousClock.now
        var beatsPerMinute: Int?
        var lastBeat = ContinuousClock.now
        var heartOn = false
        var frame = 0
        var shown = false
        /// Set by ``stop()``: nothing is drawn again (a redraw racing the stop would leave the
        /// line on screen, the shell prompt glued to it).
        var stopped = false
        /// Set while a question is asked on the terminal (a passkey): the line stays away.
        var paused = false
    }

    let enabled: Bool
    private let state = Mutex(State())
    private let ticker = Mutex<Task<Void, Never>?>(nil)

    /// The status line on screen now, if any: lines printed by others that do not hold it
    /// (the `--trace`, printed where packets pass) go above it through ``printErrorAboveActive(_:)``.
    private static let active = Mutex<(any LiveView)?>(nil)

    /// Makes `view` the one lines from elsewhere go above (``printErrorAboveActive(_:)``).
    static func makeActive(_ view: any LiveView) {
        active.withLock { $0 = view }
    }

    /// `view` is no longer drawn: lines from elsewhere print plainly again.
    static func resign(_ view: any LiveView) {
        active.withLock { if $0 === view { $0 = nil } }
    }

    init(quiet: Bool) {
        enabled = !quiet && Output.stderrIsTerminal
        guard enabled else { return }
        Self.makeActive(self)
        let task = Task { [weak self] in
            while !Task.isCancelled {
                do { try await Task.sleep(for: .milliseconds(100)) } catch { return }
                self?.redraw()
            }
        }
        ticker.withLock { $0 = task }
    }

    /// Shows `text` with a spinner and the seconds it has been going on (since `startedAgo`
    /// before now); with `counting` false, as it is (a live view that shows its own time).
    func show(_ text: String, counting: Bool = true, startedAgo: Duration = .zero) {
        guard enabled else { return }
        // A wait names a peer as it names itself: one line, no control character of its own.
        let text = GATTString.escaped(text)
        state.withLock {
            $0.text = text
            $0.counting = counting
            $0.since = .now - startedAgo
            $0.beatsPerMinute = nil
        }
        redraw()
    }

    /// Takes the text away: nothing shows until the next ``show(_:counting:startedAgo:)`` or ``beat(_:_:)``.
    func hide() {
        guard enabled else { return }
        state.withLock { state in
            state.text = ""
            if state.shown { Output.status("\r\u{1B}[2K") }
            state.shown = false
        }
    }

    /// Runs `body` (a question asked on the terminal) with the active status line, if any,
    /// taken off the screen meanwhile, so the question and the answer typed are not drawn over.
    static func pausingActive<T: Sendable>(_ body: () async -> T) async -> T {
        let status = active.withLock { $0 } as? StatusLine
        status?.setPaused(true)
        defer { status?.setPaused(false) }
        return await body()
    }

    private func setPaused(_ paused: Bool) {
        guard enabled else { return }
        state.withLock { state in
            state.paused = paused
            if paused, state.shown {
                Output.status("\r\u{1B}[2K")
                state.shown = false
            }
        }
    }

    /// Shows a heart beating at `bpm`, with `text` beside it.
    /// `text` is only made when the line is shown (on a terminal, without --quiet): the live
    /// analysis' status recomputes the window's HRV.
    func beat(_ bpm: Int, _ text: @autoclosure () -> String) {
        guard enabled else { return }
        let text = text()
        state.withLock {
            $0.text = text
            $0.beatsPerMinute = bpm
        }
        redraw()
    }

    /// Prints a line on stdout without tearing the status line.
    func printLine(_ line: String) {
        printing { Output.line(line) }
    }

    /// Prints whole lines given as bytes (newlines included) on stdout, like ``printLine(_:)``.
    func printLine(bytes: [UInt8]) {
        printing { Output.lineBytes(bytes) }
    }

    /// Prints a line on stderr (a warning) without tearing the status line.
    func printError(_ line: String) {
        // Not drawn (not a terminal, --quiet, or a live view in its place): above the view
        // that is drawn, if any (`hr`'s table of straps).
        guard enabled else { return Self.printErrorAboveActive(line) }
        printing { Output.error(line) }
    }

    /// Prints a line on stderr above the active status line (see ``active``), or plainly when
    /// none shows.
    static func printErrorAboveActive(_ line: String) {
        if let status = active.withLock({ $0 }) {
            status.printError(line)
        } else {
            Output.error(line)
        }
    }

    /// Clears the status, writes, draws the status again: all under the lock, so the ticker's
    /// redraw never lands in between.
    private func printing(_ write: () -> Void) {
        guard enabled else { return write() }
        state.withLock { state in
            if state.shown {
                Output.status("\r\u{1B}[2K")
                state.shown = false
            }
            write()
            if let line = Self.text(&state) { Output.status("\r\u{1B}[2K" + line) }
        }
    }

    func stop() {
        Self.resign(self)
        ticker.withLock { $0?.cancel() }
        state.withLock { $0.stopped = true }
        clear()
    }

    private func clear() {
        guard enabled else { return }
        // Written under the lock, so a redraw cannot land between this clear and what follows.
        state.withLock { state in
            if state.shown { Output.status("\r\u{1B}[2K") }
            state.shown = false
        }
    }

    private func redraw() {
        guard enabled else { return }
        state.withLock { state in
            guard let line = Self.text(&state) else { return }
            Output.status("\r\u{1B}[2K" + line)
        }
    }

    /// The line to draw now, or `nil` (nothing to show, or stopped).
    private static func text(_ state: inout State) -> String? {
        guard !state.text.isEmpty, !state.stopped, !state.paused else { return nil }
        let now = ContinuousClock.now
        state.shown = true
        if let bpm = state.beatsPerMinute, bpm > 0 {
            // Lit for a short moment at every beat, like a pulse.
            let period = Duration.milliseconds(60_000 / bpm)
            if now - state.lastBeat >= period { state.lastBeat = now }
            state.heartOn = now - state.lastBeat < .milliseconds(200)
            return (state.heartOn ? "\u{1B}[31m♥\u{1B}[0m " : "♡ ") + state.text
        }
        guard state.counting else { return state.text }
        state.frame = (state.frame + 1) % Self.spinner.count
        let seconds = Int((now - state.since).components.seconds)
        return "\(Self.spinner[state.frame]) \(state.text) \(seconds) s"
    }

    private static let spinner = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
}

extension StatusLine: WaitDisplay {
    var showsStatus: Bool { enabled }
    func showWait(_ text: String, elapsed: Duration) { show(text, startedAgo: elapsed) }
    func hideWait() { hide() }
}
