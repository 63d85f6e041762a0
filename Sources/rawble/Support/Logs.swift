import Logging
import RawbleReport
import RawbleWire
import Synchronization

/// Where the stack's swift-log records go. The CLI promises exactly one stderr line per
/// failure, so by default no record is written while a command runs: warnings and errors are
/// held back and written after a command that ends well (they may say what a person should
/// know, e.g. values dropped), and dropped when it fails (the error line says what went wrong).
/// With `-v` (repeatable) or `RAWBLE_LOG=LEVEL`, records at that level and above go to stderr
/// as they happen.
enum Logs {
    /// The most records held back for the end of a run; more are counted, not kept.
    static let heldLimit = 20

    fileprivate struct State {
        /// The level records stream live at; `nil`: none live, warnings and errors held back.
        var live: Logger.Level?
        var held: [(text: String, count: Int)] = []
        var heldDropped = 0
        var finished = false
    }

    fileprivate static let state = Mutex(State())

    /// Routes every logger to ``CLILogHandler``; called first thing in `main`, so no record
    /// ever reaches swift-log's default (stdout) handler. `RAWBLE_LOG` applies from here on.
    static func bootstrap(environment: [String: String]) throws(CLIError) {
        let level = try level(fromEnvironment: environment)
        state.withLock { $0.live = level }
        LoggingSystem.bootstrap { label in CLILogHandler(label: label) }
    }

    /// Applies a command's `-v` flags: the more verbose of them and `RAWBLE_LOG` wins.
    static func setUp(_ options: OutputOptions) {
        guard let level = options.verboseLogLevel else { return }
        state.withLock { state in
            if state.live.map({ level < $0 }) ?? true { state.live = level }
        }
    }

    /// Ends logging: after a success the held-back records are written (one line each, the
    /// same record repeated counted once); after a failure they are dropped, so the error line
    /// is the only one. Records logged later are dropped.
    static func finish(failed: Bool) {
        let (held, dropped) = state.withLock { state in
            defer {
                state.finished = true
                state.held = []
            }
            return (state.held, state.heldDropped)
        }
        guard !failed else { return }
        for record in held {
            Output.error(record.count > 1 ? "\(record.text) (\(record.count) times)" : record.text)
        }
        if dropped > 0 {
            Output.error("rawble: \(dropped) more log records not shown (run with -v to see them as they happen)")
        }
    }

    /// `RAWBLE_LOG`: a swift-log level name (trace, debug, info, notice, warning, error,
    /// critical); unset or empty: no live logging.
    static func level(fromEnvironment environment: [String: String]) throws(CLIError) -> Logger.Level? {
        guard let value = environment["RAWBLE_LOG"], !value.isEmpty else { return nil }
        guard let level = Logger.Level(rawValue: value.lowercased()) else {
            throw CLIError(.usage, "RAWBLE_LOG=\(value) is not a log level",
                           fix: "use trace, debug, info, notice, warning, error or critical")
        }
        return level
    }

    fileprivate static func record(_ level: Logger.Level, label: String, text: String) {
        enum Route { case live(String), none }
        let route = state.withLock { state -> Route in
            guard !state.finished else { return .none }
            if let live = state.live {
                return level >= live ? .live(text) : .none
            }
            guard level >= .warning else { return .none }
            let line = "rawble: \(level): \(text)"
            if let index = state.held.firstIndex(where: { $0.text == line }) {
                state.held[index].count += 1
            } else if state.held.count < heldLimit {
                state.held.append((line, 1))
            } else {
                state.heldDropped += 1
            }
            return .none
        }
        if case .live(let text) = route {
            StatusLine.printErrorAboveActive("\(iso8601(unixMicroseconds: Clock.unixMicroseconds())) \(level) \(label): \(text)")
        }
    }

    /// The lowest level any record can have to be kept: handlers answer it as their level, so
    /// loggers skip building messages nobody will see.
    fileprivate static var threshold: Logger.Level {
        state.withLock { $0.live ?? .warning }
    }
}

/// A swift-log handler that hands every record to ``Logs`` (live on stderr or held back).
struct CLILogHandler: LogHandler {
    let label: String
    var metadata: Logger.Metadata = [:]
    /// A level a library sets on its own logger; otherwise the CLI's (``Logs``) applies.
    private var explicitLevel: Logger.Level?

    init(label: String) {
        self.label = label
    }

    var logLevel: Logger.Level {
        get { max(explicitLevel ?? .trace, Logs.threshold) }
        set { explicitLevel = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.level >= logLevel else { return }
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { $1 } }
        let prefix = all.isEmpty ? "" : all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ") + " "
        Logs.record(event.level, label: label, text: prefix + "\(event.message)")
    }
}
