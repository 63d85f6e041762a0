import RawbleBearer
import RawbleHostCore
import RawbleReport
import RawbleWire
import Synchronization

/// What a command waits for: a device to advertise, the connection, pairing, a peer's answer,
/// the first value. A wait that lasts is never a blank screen (``WaitStatus``).
struct Wait: Sendable, Equatable {
    /// What kind of thing is awaited: the `waitingFor` of a `status` event.
    enum Kind: String, Sendable {
        /// The target to be heard advertising (a scan runs).
        case advertising
        case connection
        /// Pairing, or encrypting the link with a bond.
        case security
        /// A peer's answer: the MTU exchange, discovery, a read or a write.
        case response
        /// The first notification, measurement or sample of a subscription.
        case value

        /// Whether the devices heard while looking for the target say something about this
        /// wait: while scanning for it, and while connecting to it after that scan.
        var namesSeen: Bool { self == .advertising || self == .connection }
    }

    var kind: Kind
    /// Who is awaited: an address, or the strap looked for (`a heart-rate strap`, `“Polar H10”`).
    var target: String
    /// The wait as a person reads it on the status line: `waiting for C0:B1:E0:00:00:01 to advertise`.
    var text: String
    /// What the devices seen are, in the line that names them: `device`, or `strap` when only
    /// straps are named (`hr` and `ecg` looking for one by name or address).
    var seenKind = "device"

    /// `seenKind`: what the devices seen meanwhile are (see ``seenKind``).
    static func advertising(_ target: String, seenKind: String = "device") -> Wait {
        Wait(kind: .advertising, target: target, text: "waiting for \(target) to advertise", seenKind: seenKind)
    }

    /// `heard`: whether the scan before it heard the peer (`false`: the connection is tried blind).
    static func connection(to address: BluetoothAddress, name: String? = nil, heard: Bool? = nil) -> Wait {
        // The peer's name as it advertised it: one line, whatever it holds.
        let who = name.map { "\(GATTString.escaped($0)) (\(address))" } ?? "\(address)"
        return Wait(kind: .connection, target: "\(address)",
                    text: "connecting to \(who)" + (heard == false ? " (not heard advertising)" : ""))
    }

    /// `security`: the level asked for (`--security`); `nil`: pairing (`rawble pair`).
    static func security(_ address: BluetoothAddress, _ security: LinkSecurity?) -> Wait {
        let what = switch security {
        case .authenticated?: "authenticating the link to"
        case .encrypted?: "encrypting the link to"
        case .none?, nil: "pairing with"
        }
        return Wait(kind: .security, target: "\(address)", text: "\(what) \(address)")
    }

    /// `what`: what the answer is to, `Exchange MTU`, `discovering the services`.
    static func response(_ address: BluetoothAddress, _ what: String) -> Wait {
        Wait(kind: .response, target: "\(address)", text: "waiting for \(address) to answer (\(what))")
    }

    /// `what`: `notification of 2A37`, `measurement`, `ECG samples`.
    static func firstValue(_ what: String, from target: String) -> Wait {
        Wait(kind: .value, target: target, text: "waiting for the first \(what) from \(target)")
    }
}

/// The devices heard while looking for another, for the status that names them: at most
/// ``limit``, by address, each with its name once it advertised one.
struct SeenDevices: CustomStringConvertible, Sendable, Equatable {
    static let limit = 8
    struct Device: Sendable, Equatable {
        var address: BluetoothAddress
        var name: String?
    }

    private(set) var devices: [Device] = []

    var isEmpty: Bool { devices.isEmpty }
    var count: Int { devices.count }

    /// Adds `address` (or the name it was missing); whether a device was added.
    @discardableResult
    mutating func add(_ address: BluetoothAddress, name: String?) -> Bool {
        if let index = devices.firstIndex(where: { $0.address == address }) {
            if devices[index].name == nil { devices[index].name = name }
            return false
        }
        guard devices.count < Self.limit else { return false }
        devices.append(Device(address: address, name: name))
        return true
    }

    /// `rawble-strap (C0:B1:E0:00:00:01), C0:B1:E0:00:00:02`.
    var description: String {
        devices.map { device in device.name.map { "\(GATTString.escaped($0)) (\(device.address))" } ?? "\(device.address)" }
            .joined(separator: ", ")
    }

    /// `[{address, name}]`.
    var json: JSON {
        .array(devices.map { .object([("address", .string($0.address.description)), ("name", JSON($0.name))]) })
    }
}

/// When a wait is shown and told, decided from times given to it (the time since some start):
/// the logic of ``WaitStatus`` without a clock or an output, so it is tested with plain values.
///
/// A wait goes on the status line once it has lasted ``showDelay`` (the steps that take a
/// moment do not flicker by), and is told once it has lasted ``threshold``; told again only
/// when more devices were seen meanwhile (for waits that name them), at most once every
/// ``updateInterval``: one report per change, never a stream of repeats.
struct WaitReports {
    static let showDelay = Duration.milliseconds(500)
    static let threshold = Duration.seconds(2)
    static let updateInterval = Duration.seconds(5)

    struct Report: Sendable, Equatable {
        var wait: Wait
        var elapsed: Duration
        /// The devices seen, for a wait that names them; empty otherwise.
        var seen: SeenDevices
    }

    private(set) var wait: Wait?
    private var since = Duration.zero
    private var shown = false
    private var lastReport: Duration?
    private var reportedSeen = 0
    private(set) var seen = SeenDevices()

    /// A new wait starts at `now` (the same wait again changes nothing). Whether it goes on
    /// the status line at once: when the wait before it was there, it takes its place.
    mutating func begin(_ wait: Wait, at now: Duration) -> Bool {
        guard wait != self.wait else { return false }
        let replacesShown = self.wait != nil && shown
        self.wait = wait
        since = now
        shown = replacesShown
        lastReport = nil
        reportedSeen = 0
        return replacesShown
    }

    /// Nothing is awaited any more; whether the wait was on the status line (to take off).
    mutating func end() -> Bool {
        defer {
            wait = nil
            shown = false
            lastReport = nil
        }
        return wait != nil && shown
    }

    /// Forgets the devices seen (a new scan starts).
    mutating func forgetSeen() {
        seen = SeenDevices()
        reportedSeen = 0
    }

    /// A device heard that is not the target; whether it was new.
    @discardableResult
    mutating func saw(_ address: BluetoothAddress, name: String?) -> Bool {
        seen.add(address, name: name)
    }

    /// The wait to put on the status line at `now`, and how long it has lasted, if it is time
    /// (once per wait).
    mutating func show(at now: Duration) -> (wait: Wait, elapsed: Duration)? {
        guard let wait, !shown, now >= since + Self.showDelay else { return nil }
        shown = true
        return (wait, now - since)
    }

    /// The report due at `now`, if one is (it is then counted as made).
    mutating func report(at now: Duration) -> Report? {
        guard let wait, let due = nextReport(), now >= due else { return nil }
        lastReport = now
        let seen = wait.kind.namesSeen ? self.seen : SeenDevices()
        reportedSeen = seen.count
        return Report(wait: wait, elapsed: now - since, seen: seen)
    }

    /// When the status line or the next report comes due; `nil` when neither will without a
    /// new wait or a new device seen.
    func nextDue() -> Duration? {
        guard wait != nil else { return nil }
        let report = nextReport()
        guard !shown else { return report }
        return min(since + Self.showDelay, report ?? since + Self.showDelay)
    }

    private func nextReport() -> Duration? {
        guard let wait else { return nil }
        guard let lastReport else { return since + Self.threshold }
        guard wait.kind.namesSeen, seen.count > reportedSeen else { return nil }
        return lastReport + Self.updateInterval
    }
}

/// Where ``WaitStatus`` shows a wait: the status line (``StatusLine``, or `rawble shell`'s
/// ``Console``), lines on stderr and JSON lines on stdout.
protocol WaitDisplay: Sendable {
    /// Whether a status line is drawn (a terminal, without `--quiet`): it shows every wait
    /// at once, so lines on stderr only add what it cannot show.
    var showsStatus: Bool { get }
    /// Shows `text` on the status line, with a spinner and the seconds it has lasted
    /// (`elapsed` so far).
    func showWait(_ text: String, elapsed: Duration)
    /// Takes the status line's text away (the wait is over).
    func hideWait()
    func printError(_ line: String)
    func printLine(_ line: String)
}

/// Says what a command waits for, so no wait is a blank screen: on the status line after half
/// a second (a terminal), and once the wait has lasted 2 s what it waits for and what it has seen, as a
/// `status` event with `--json`, else as a line on stderr (on a terminal only when it names
/// devices seen: the status line says the rest). `--quiet` keeps stderr free of it; the JSON
/// events stay. Time comes from the clock given (``WaitReports`` decides from it).
final class WaitStatus: Sendable {
    private struct State {
        var reports = WaitReports()
        var timer: Task<Void, Never>?
        var stopped = false
    }

    private let display: any WaitDisplay
    private let json: Bool
    private let quiet: Bool
    private let now: @Sendable () -> Duration
    private let sleep: @Sendable (Duration) async throws -> Void
    private let onReport: (@Sendable (WaitReports.Report) -> Void)?
    /// Fields every `status` event carries after its time (a group run's strap: `address`, `name`).
    private let eventFields: @Sendable () -> [(String, JSON)]
    private let state = Mutex(State())

    /// Times come from `clock` (`Swift.Clock`: this module's `Clock` is the wall clock of
    /// timestamps); a test gives a manual one. `onReport`: called with every report that
    /// comes due, told or not (`--quiet`), after it went where it goes: a test waits for it
    /// before checking what was said.
    init<C: Swift.Clock & Sendable>(display: any WaitDisplay, json: Bool, quiet: Bool, clock: C,
                                    eventFields: @escaping @Sendable () -> [(String, JSON)] = { [] },
                                    onReport: (@Sendable (WaitReports.Report) -> Void)? = nil) where C.Duration == Duration {
        self.display = display
        self.json = json
        self.quiet = quiet
        self.eventFields = eventFields
        self.onReport = onReport
        let start = clock.now
        now = { start.duration(to: clock.now) }
        sleep = { try await clock.sleep(until: start.advanced(by: $0), tolerance: nil) }
    }

    /// On the real clock, as a command's output options say.
    convenience init(display: any WaitDisplay, output: OutputOptions) {
        self.init(display: display, json: output.json, quiet: output.quiet, clock: ContinuousClock())
    }

    /// `wait` starts now; the one before it is over (its place on the status line, if it had
    /// one, is the new one's at once).
    func begin(_ wait: Wait) {
        state.withLock { state in
            guard !state.stopped, state.reports.wait != wait else { return }
            if state.reports.begin(wait, at: now()) { display.showWait(wait.text, elapsed: .zero) }
            schedule(&state)
        }
    }

    /// A device heard while looking for another (named once the wait is told).
    func saw(_ device: DiscoveredDevice) {
        saw(device.address.address, name: device.name)
    }

    func saw(_ address: BluetoothAddress, name: String?) {
        state.withLock { state in
            guard !state.stopped, state.reports.saw(address, name: name) else { return }
            // Told now if due, else when the pause since the last report is over.
            if let report = state.reports.report(at: now()) { tell(report) }
            schedule(&state)
        }
    }

    /// Forgets the devices seen before a new scan.
    func forgetSeen() {
        state.withLock { $0.reports.forgetSeen() }
    }

    /// Nothing is awaited now: the status line's text goes (a live view may take its place).
    func end() {
        state.withLock { state in
            guard state.reports.wait != nil else { return }
            let shown = state.reports.end()
            state.timer?.cancel()
            state.timer = nil
            if shown { display.hideWait() }
        }
    }

    /// Ends the wait and tells nothing more.
    func stop() {
        end()
        state.withLock { $0.stopped = true }
    }

    /// Arms the timer for the next report due, replacing the one armed before.
    private func schedule(_ state: inout State) {
        state.timer?.cancel()
        state.timer = nil
        guard let due = state.reports.nextDue() else { return }
        state.timer = Task { [weak self, sleep] in
            guard (try? await sleep(due)) != nil else { return }
            self?.fire()
        }
    }

    private func fire() {
        state.withLock { state in
            guard !Task.isCancelled, !state.stopped else { return }
            let time = now()
            if let (wait, elapsed) = state.reports.show(at: time) { display.showWait(wait.text, elapsed: elapsed) }
            if let report = state.reports.report(at: time) { tell(report) }
            schedule(&state)
        }
    }

    private func tell(_ report: WaitReports.Report) {
        if json {
            display.printLine(Self.event(report, time: iso8601(unixMicroseconds: Clock.unixMicroseconds()),
                                         fields: eventFields()).serialized())
        } else if !quiet, !display.showsStatus || !report.seen.isEmpty {
            display.printError(Self.line(report))
        }
        onReport?(report)
    }

    /// `{"event": "status", time, waitingFor, target, elapsedSeconds, message, seen: [{address, name}]}`.
    static func event(_ report: WaitReports.Report, time: String, fields: [(String, JSON)] = []) -> JSON {
        .object([
            ("event", "status"),
            ("time", .string(time)),
        ] + fields + [
            ("waitingFor", .string(report.wait.kind.rawValue)),
            ("target", .string(report.wait.target)),
            ("elapsedSeconds", JSON(report.elapsed.components.seconds)),
            ("message", .string(report.wait.text)),
            ("seen", report.seen.json),
        ])
    }

    /// `waiting for C0:… to advertise (2 s); devices seen: rawble-strap (C0:…)`: no `rawble: `
    /// before it, which starts warnings and the error line.
    static func line(_ report: WaitReports.Report) -> String {
        var line = "\(report.wait.text) (\(report.elapsed.components.seconds) s)"
        if report.wait.kind.namesSeen {
            let kind = report.wait.seenKind
            line += report.seen.isEmpty ? "; no other \(kind) heard" : "; \(kind)s seen: \(report.seen)"
        }
        return line
    }
}
