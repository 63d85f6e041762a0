#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@preconcurrency import Dispatch
import Synchronization

// `rawble shell`'s terminal side: the console every line goes through (so a value arriving
// while a line is typed is printed above the prompt, and the line is drawn again below it),
// the terminal's raw mode, and the two ways lines come in: edited on a terminal, or read
// plainly from a pipe or a file.

/// Where `rawble shell` prints: straight to stdout/stderr when no prompt is shown, else above
/// the prompt and the line being typed, which are then drawn again. Every write happens under
/// one lock, so lines from subscriptions never cut into each other or into the prompt. While a
/// command runs (no prompt), what it waits for shows on `status` (``WaitDisplay``), and lines
/// go above that too.
final class Console: Sendable {
    private struct State {
        var prompt = ""
        var line: [Character] = []
        var cursor = 0
        var promptShown = false
    }

    private let state = Mutex(State())
    /// The status line of a running command's waits (drawn only on a terminal).
    let status: StatusLine?

    init(status: StatusLine? = nil) {
        self.status = status
    }

    /// Prints `text` (one or more lines, newline added) on stdout, or stderr with `error`.
    func print(_ text: String, error: Bool = false) {
        state.withLock { state in
            if state.promptShown { Output.status("\r\u{1B}[2K") }
            switch (status, error) {
            case (let status?, true): status.printError(text)
            case (let status?, false): status.printLine(text)
            case (nil, true): Output.error(text)
            case (nil, false): Output.line(text)
            }
            if state.promptShown { Self.draw(state) }
        }
    }

    /// Prints whole lines given as bytes (newline included) on stdout, like ``print(_:error:)``.
    func print(bytes: [UInt8]) {
        state.withLock { state in
            if state.promptShown { Output.status("\r\u{1B}[2K") }
            if let status { status.printLine(bytes: bytes) } else { Output.lineBytes(bytes) }
            if state.promptShown { Self.draw(state) }
        }
    }

    /// Shows `prompt` and the line being edited, the cursor where it stands.
    func show(prompt: String, line: [Character], cursor: Int) {
        state.withLock { state in
            state.prompt = prompt
            state.line = line
            state.cursor = cursor
            state.promptShown = true
            Self.draw(state)
        }
    }

    /// Changes the prompt shown (the link went while a line is typed), drawing it again.
    func change(prompt: String) {
        state.withLock { state in
            state.prompt = prompt
            if state.promptShown { Self.draw(state) }
        }
    }

    /// Leaves the prompt and the line on screen as they are, ends the line with `ending`
    /// ("" for a line entered, "^C" for one dropped), and stops redrawing them.
    func finishLine(_ ending: String = "") {
        state.withLock { state in
            guard state.promptShown else { return }
            Self.draw(State(prompt: state.prompt, line: state.line, cursor: state.line.count, promptShown: true))
            Output.status(ending + "\n")  // output processing stays on: "\n" is CR LF
            state.promptShown = false
        }
    }

    /// Writes terminal control text (bell, clear screen) as it is.
    func control(_ text: String) {
        state.withLock { _ in Output.status(text) }
    }

    /// The prompt and the part of the line that fits the row from the left edge, the rest of
    /// the row cleared, the cursor moved back to its place (wide characters take two columns).
    private static func draw(_ state: State) {
        let widths = state.line.map { DisplayWidth.of(String($0)) }
        let window = VisibleLine(widths: widths, cursor: state.cursor, columns: columns - DisplayWidth.of(state.prompt))
        let shown = state.line[window.start..<(window.start + window.count)]
        var text = "\r" + state.prompt + String(shown) + "\u{1B}[K"
        let back = widths[window.start..<(window.start + window.count)].reduce(0, +) - window.cursorColumn
        if back > 0 { text += "\u{1B}[\(back)D" }
        Output.status(text)
    }

    /// The terminal's width (stderr's, where the prompt is drawn), 80 when it does not say.
    private static var columns: Int { Terminal.size(of: 2).columns }
}

extension Console: WaitDisplay {
    var showsStatus: Bool { status?.enabled ?? false }
    func showWait(_ text: String, elapsed: Duration) { status?.show(text, startedAgo: elapsed) }
    func hideWait() { status?.hide() }
    func printError(_ line: String) { print(line, error: true) }
    func printLine(_ line: String) { print(line) }
}

/// The terminal on stdin in raw mode while a line is edited (bytes as typed, no echo, Ctrl-C a
/// byte rather than a signal), and as it was otherwise, so a running command's Ctrl-C is the
/// ordinary SIGINT. Output processing stays on: "\n" still starts a new line.
final class RawMode: Sendable {
    private let original: Mutex<termios?>

    /// Reads the terminal's settings now; `nil` when stdin is not a terminal.
    init?() {
        var settings = termios()
        guard isatty(0) == 1, tcgetattr(0, &settings) == 0 else { return nil }
        original = Mutex(settings)
    }

    /// Switches to raw input.
    func enter() {
        guard var raw = original.withLock({ $0 }) else { return }
        raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        _ = tcsetattr(0, TCSADRAIN, &raw)
    }

    /// Restores the settings the terminal had at the start.
    func leave() {
        guard var settings = original.withLock({ $0 }) else { return }
        _ = tcsetattr(0, TCSADRAIN, &settings)
    }
}

/// Reads stdin a chunk at a time on a thread of its own, giving up when ``stop()`` is called
/// (it polls, so a pending read never outlives the shell).
final class InputReader: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let queue = DispatchQueue(label: "rawble.shell.stdin")

    /// Makes the reads give up: the next ``read()`` (and one in progress) returns `nil`.
    func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    var isStopped: Bool { stopped.load(ordering: .relaxed) }

    /// The next bytes from stdin, at most `limit`; `nil` at its end, on an error, or once
    /// stopped. Blocking: call it on ``queue`` only (see ``onQueue(_:)``).
    func read(limit: Int = 4096) -> [UInt8]? {
        var descriptor = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        while !isStopped {
            let ready = poll(&descriptor, 1, 200)
            if ready < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if ready == 0 { continue }
            var buffer = [UInt8](repeating: 0, count: max(1, limit))
            let count = buffer.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count > 0 else { return nil }
            return Array(buffer.prefix(count))
        }
        return nil
    }

    /// Runs blocking `work` on the reading thread and waits for it without holding up a task.
    func onQueue<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }
}

/// What `rawble shell` reads next: a line, or a Ctrl-C typed at the prompt that has something
/// to stop (the subscriptions printing).
enum ShellInput: Equatable, Sendable {
    case line(String)
    case interrupt
}

/// Where `rawble shell` takes its lines: a person at a terminal, or a script.
protocol LineSource: Sendable {
    /// The next line (without its newline) or Ctrl-C; `nil` at the end of input (or once stopped).
    func nextInput() async -> ShellInput?
    /// Makes a waiting ``nextInput()`` return `nil` (Ctrl-C in a script, SIGTERM).
    func stop()
}

/// Lines from a pipe or a file: no prompt, no echo, one command per line (`\r\n` accepted).
final class PlainLineSource: LineSource {
    private let reader = InputReader()
    private let buffered = Mutex<(bytes: [UInt8], ended: Bool)>(([], false))

    func nextInput() async -> ShellInput? {
        await nextLine().map { .line($0) }
    }

    private func nextLine() async -> String? {
        await reader.onQueue { [self] in
            while true {
                let line: String?? = buffered.withLock { state in
                    if let newline = state.bytes.firstIndex(of: 0x0A) {
                        var line = Array(state.bytes[..<newline])
                        state.bytes.removeSubrange(...newline)
                        if line.last == 0x0D { line.removeLast() }
                        return .some(String(decoding: line, as: UTF8.self))
                    }
                    if state.ended {
                        defer { state.bytes = [] }
                        return .some(state.bytes.isEmpty ? nil : String(decoding: state.bytes, as: UTF8.self))
                    }
                    return nil
                }
                if let line { return line }
                if let more = reader.read() {
                    buffered.withLock { $0.bytes.append(contentsOf: more) }
                } else {
                    buffered.withLock { $0.ended = true }
                }
            }
        }
    }

    func stop() { reader.stop() }
}

/// Lines edited at a terminal: raw mode while a line is typed (restored before it is run, so
/// the terminal is never left raw), history with up/down, Tab completion from `words`.
final class TerminalLineSource: LineSource {
    private let reader = InputReader()
    private let rawMode: RawMode
    private let console: Console
    private let prompt: @Sendable () -> String
    private let words: @Sendable () -> CompletionWords
    private let editor: Mutex<LineEditor>
    private let decoder = Mutex(KeyDecoder())
    /// Keys decoded after the line that was accepted: the next line's.
    private let leftover = Mutex<[Key]>([])
    /// Called with each line entered, for a history file.
    private let remember: @Sendable (String) -> Void
    private let lastRemembered: Mutex<String?>
    /// Whether a Ctrl-C at the prompt has something to stop (values being notified): it is
    /// then returned as ``ShellInput/interrupt``; otherwise it only drops the line.
    private let interruptible: @Sendable () -> Bool

    init(rawMode: RawMode, console: Console, history: History, prompt: @escaping @Sendable () -> String,
         words: @escaping @Sendable () -> CompletionWords, remember: @escaping @Sendable (String) -> Void,
         interruptible: @escaping @Sendable () -> Bool = { false }) {
        self.rawMode = rawMode
        self.console = console
        self.prompt = prompt
        self.words = words
        self.remember = remember
        self.interruptible = interruptible
        editor = Mutex(LineEditor(history: history))
        lastRemembered = Mutex(history.entries.last)
    }

    func stop() { reader.stop() }

    func nextInput() async -> ShellInput? {
        await reader.onQueue { [self] in
            rawMode.enter()
            defer { rawMode.leave() }
            let prompt = self.prompt()
            redraw(prompt)
            // One byte at a time, as readline reads: what was typed after the line that ends the
            // shell (`quit`) stays in the terminal for the program after it, the shell that
            // started rawble (a pasted block's later lines were lost).
            while let keys = takeLeftover() ?? reader.read(limit: 1).map({ bytes in decoder.withLock { $0.keys(from: bytes) } }) {
                for (index, key) in keys.enumerated() {
                    let words = key == .tab ? self.words() : CompletionWords()
                    switch editor.withLock({ $0.handle(key, words: words) }) {
                    case .redraw:
                        redraw(prompt)
                    case .accepted(let line):
                        console.show(prompt: prompt, line: Array(line), cursor: line.count)
                        // The terminal leaves raw mode before the line ends on screen: once it
                        // has, Ctrl-C is a signal again, for the command the line runs.
                        rawMode.leave()
                        console.finishLine()
                        // As the history keeps it: no blank line, no repeat of the line before.
                        let repeated = lastRemembered.withLock { last in
                            defer { last = line }
                            return last == line
                        }
                        if !repeated { remember(line) }
                        leftover.withLock { $0 = Array(keys[(index + 1)...]) }
                        return .line(line)
                    case .interrupted:
                        console.finishLine("^C")
                        if interruptible() {
                            leftover.withLock { $0 = Array(keys[(index + 1)...]) }
                            return .interrupt
                        }
                        redraw(prompt)
                    case .endOfInput:
                        console.finishLine()
                        return nil
                    case .list(let candidates):
                        console.print(candidates.joined(separator: "  "))
                    case .bell:
                        console.control("\u{07}")
                    case .clearScreen:
                        console.control("\u{1B}[H\u{1B}[2J")
                        redraw(prompt)
                    }
                }
            }
            console.finishLine()
            return nil
        }
    }

    /// The keys left after the last accepted line, once.
    private func takeLeftover() -> [Key]? {
        leftover.withLock { keys in
            defer { keys = [] }
            return keys.isEmpty ? nil : keys
        }
    }

    private func redraw(_ prompt: String) {
        let (line, cursor) = editor.withLock { ($0.line, $0.cursor) }
        console.show(prompt: prompt, line: line, cursor: cursor)
    }
}
