#if canImport(Glibc)
import Glibc
import RawbleGATTCore
import RawbleHostCore
import RawbleWire
#elseif canImport(Musl)
import Musl
#endif
import ArgumentParser
import RawbleBearer
import RawbleGATT
import RawbleHost
import RawbleReport
import RawbleTransport
import Synchronization

/// `rawble shell`: one host session, a link made once, then GATT commands typed at a prompt
/// (line editing, history, Tab completion) or read from stdin one per line (for scripts).
/// Each command does what the one-shot command of that name does, through the same code.
struct Shell: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shell",
        abstract: "Connect once, then read, write, subscribe and scan with commands (gatttool -I).",
        discussion: """
            Commands (`help` lists them): connect ADDRESS, disconnect, services,
            read TARGET, write TARGET HEX [--without-response], notify TARGET
            [--indicate], unsubscribe TARGET, mtu, scan [SECONDS], sleep SECONDS, help,
            quit (or exit, or Ctrl-D). TARGET is 0x001D (a handle) or a characteristic
            UUID (2A37), as for `read`.

            On a terminal: line editing, history (up/down, kept in ~/.rawble_history), Tab
            completes commands, handles, UUIDs and scanned addresses; values notified print
            above the prompt. Ctrl-C stops the running command; at the prompt it clears the
            line and ends the subscriptions (unsubscribing, as unsubscribe does). A failed
            command prints one line and the shell goes on; quit and Ctrl-D exit 0.

            Not a terminal: one command per line from stdin, no prompt; a line starting
            with # is a comment. Output is plain lines (with --json, one JSON object per
            result, as the one-shot commands print them). Exit status: 0 when every
            command succeeded, else the status of the last one that failed (see
            `rawble --help`); Ctrl-C ends the script with 78.

            On rawble's own host (user:hciN, serial:, tcp:, unix:) a peer bonded before
            (rawble pair) is encrypted with its bond when it asks; --security makes each
            link `connect` makes encrypted (or authenticated) first, pairing when there
            is no bond; --io, --passkey, --confirm and --legacy say how to pair (a
            passkey or comparison is asked on the terminal, Enter ending the answer).

            Examples:
              rawble shell C0:B1:E0:00:00:01
              rawble shell --transport tcp:127.0.0.1:9000
              printf 'read 2A19\\nmtu\\n' | rawble shell C0:B1:E0:00:00:01 --json
            """)

    @Argument(help: "Connect to this device first (AA:BB:CC:DD:EE:FF); else use `connect`.",
              transform: BluetoothAddress.parse)
    var address: BluetoothAddress?
    @Option(name: .customLong("address-type"), help: "public or random, for ADDRESS.") var addressType: AddressTypeArgument?
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var security: SecurityOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let host = try await HostSession.open(connection, output: output, pairing: security.settings)
        let session = ShellSession(host: host, timeout: .milliseconds(Int(connection.timeout * 1000)), output: output,
                                   security: security.settings.required)
        let status = await session.run(connectingTo: address, addressType: addressType)
        await session.close()
        if status != .success {
            Logs.finish(failed: true)
            Glibc.exit(status.rawValue)
        }
    }
}

/// What `rawble shell` knows between commands: the link (when there is one), its
/// subscriptions, the database discovered (for completion) and the last failure (the exit
/// status). Commands run one at a time; subscriptions and the link's watcher print meanwhile.
final class ShellSession: Sendable {
    private struct Link {
        var peer: PeerSession
        /// Says once when the link goes without a `disconnect`.
        var watcher: Task<Void, Never>
        var subscriptions: [UInt16: Subscription] = [:]
        var database: GATTDatabase?
    }

    private struct Subscription {
        var subscription: GATTSubscription
        var printer: Task<Void, Never>
    }

    private struct State {
        var link: Link?
        /// The link's loss was told (by its watcher or by the command it broke).
        var lossReported = false
        var lastFailure: ExitStatus?
        /// Addresses seen by `scan`, for completion.
        var addresses: [String] = []
        /// The command running now, which Ctrl-C cancels.
        var running: Task<Void, any Error>?
        /// A person's line is being read (the terminal in raw mode, where Ctrl-C is a key, not a
        /// signal): a SIGINT then comes from elsewhere and ends the shell.
        var atPrompt = false
        /// A Ctrl-C that came after a line was accepted and before its command started: the
        /// command is cancelled as it starts (the shell itself goes on).
        var interruptPending = false
    }

    let host: HostSession
    let timeout: Duration
    let json: Bool
    /// The level each link `connect` makes must reach first (`--security`), on rawble's own host.
    let security: LinkSecurity?
    let console: Console
    /// Says what a command waits for (on the console's status line, as lines or JSON events).
    let waits: WaitStatus
    /// Whether lines come from a person at a terminal.
    let interactive: Bool
    private let rawMode: RawMode?
    private let state = Mutex(State())
    /// Set when Ctrl-C (or SIGTERM) ended a script, or SIGTERM came at the prompt.
    private let stopped = Atomic<Bool>(false)

    init(host: HostSession, timeout: Duration, output: OutputOptions, security: LinkSecurity? = nil) {
        self.host = host
        self.timeout = timeout
        json = output.json
        self.security = security
        console = Console(status: StatusLine(quiet: output.quiet))
        waits = WaitStatus(display: console, output: output)
        rawMode = RawMode()
        interactive = rawMode != nil
    }

    // MARK: The loop

    /// Connects to `address` when given, then runs commands until quit or the end of input;
    /// returns the exit status (0, or the last failure's).
    func run(connectingTo address: BluetoothAddress?, addressType: AddressTypeArgument?) async -> ExitStatus {
        let source: any LineSource = if let rawMode {
            TerminalLineSource(
                rawMode: rawMode, console: console, history: History(entries: HistoryFile.load()),
                prompt: { [weak self] in self?.prompt ?? Self.disconnectedPrompt },
                words: { [weak self] in self?.completionWords ?? CompletionWords() },
                remember: { HistoryFile.append($0) },
                interruptible: { [weak self] in self?.subscribed ?? false })
        } else {
            PlainLineSource()
        }
        let interactive = self.interactive
        let interrupt = InterruptWatcher { [weak self] in
            guard let self else { return }
            let (running, betweenLines) = state.withLock { state in
                // A person's Ctrl-C between the line and its command: for the command.
                let between = interactive && state.running == nil && !state.atPrompt
                if between { state.interruptPending = true }
                return (state.running, between)
            }
            if betweenLines { return }
            if let running {
                running.cancel()
                // A script ends at its Ctrl-C; a person only stops the command.
                guard !interactive else { return }
            }
            stopped.store(true, ordering: .relaxed)
            source.stop()
        }
        defer { withExtendedLifetime(interrupt) {} }
        if interactive { console.print("rawble shell: `help` lists the commands; Ctrl-D or `quit` ends.", error: true) }
        if let address {
            await runCommand(["connect", address.description] + (addressType.map { ["--address-type", $0.rawValue] } ?? []))
        }
        while !stopped.load(ordering: .relaxed), let input = await nextInput(from: source) {
            guard case .line(let line) = input else {
                // Ctrl-C at the prompt while values are notified: they stop.
                await runCommand { [self] in try await unsubscribeAll() }
                continue
            }
            let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
            guard let first = words.first, !first.hasPrefix("#") else { continue }
            if first == "quit" || first == "exit" { break }
            await runCommand(words)
        }
        // A person saw each failure as it happened: leaving is not one.
        if interactive { return .success }
        if stopped.load(ordering: .relaxed) { return .interrupted }
        return state.withLock { $0.lastFailure } ?? .success
    }

    /// The next line (or key) from `source`; meanwhile a SIGINT is not a person's Ctrl-C, and
    /// one that came between two commands is forgotten.
    private func nextInput(from source: any LineSource) async -> ShellInput? {
        state.withLock { $0.atPrompt = true; $0.interruptPending = false }
        defer { state.withLock { $0.atPrompt = false } }
        return await source.nextInput()
    }

    /// Runs one command as a task Ctrl-C cancels; its failure is one line, and the shell goes on.
    private func runCommand(_ words: [String]) async {
        await runCommand { [self] in try await execute(words) }
    }

    /// Runs `body` as a command: a task Ctrl-C cancels, its failure one line; what it waited
    /// for is over when it ends.
    private func runCommand(_ body: @escaping @Sendable () async throws -> Void) async {
        let task = Task(executorPreference: host.central.taskExecutor) { try await body() }
        let interrupted = state.withLock { state in
            defer { state.interruptPending = false }
            state.running = task
            return state.interruptPending
        }
        if interrupted { task.cancel() }
        let result = await task.result
        state.withLock { $0.running = nil }
        waits.end()
        guard case .failure(let error) = result else { return }
        let failure = cliError(error, cancelled: task.isCancelled)
        // A command broken by the link going: the loss is what to say, once.
        if failure.status != .usage, let lost = lostLink() {
            reportLoss(of: lost)
            await endLink(of: lost, politely: false)
            return
        }
        // A person's Ctrl-C stopped what they asked for: said, but not a failure.
        if failure.status == .interrupted, interactive {
            console.print("interrupted", error: true)
            return
        }
        state.withLock { $0.lastFailure = failure.status }
        console.print("rawble: \(failure)", error: true)
    }

    private func cliError(_ error: any Error, cancelled: Bool) -> CLIError {
        if cancelled, error is CancellationError || (error as? GATTError).map(isCancellation) == true {
            return .interrupted
        }
        if let peer = state.withLock({ $0.link?.peer }) { return peer.cliError(error) }
        switch error {
        case let error as CLIError: return error
        case let error as HostError: return host.cliError(error)
        case is CancellationError: return .interrupted
        default: return CLIError(.internalError, "\(error)")
        }
    }

    private func isCancellation(_ error: GATTError) -> Bool {
        if case .cancelled = error { return true }
        if case .bearer(.cancelled) = error { return true }
        return false
    }

    /// Unsubscribes, disconnects and closes the host.
    func close() async {
        waits.stop()
        console.status?.stop()
        await endLink(politely: true)
        await host.close()
    }

    // MARK: Commands

    /// Every command: its arguments, what it does, and the flags Tab completes.
    private static let commands: [(name: String, usage: String, summary: String, flags: [String])] = [
        ("connect", "connect ADDRESS [--address-type public|random]", "connect (one link at a time)", ["--address-type"]),
        ("disconnect", "disconnect", "unsubscribe everything and disconnect", []),
        ("services", "services", "the whole database and its readable values, as `rawble gatt` prints it", []),
        ("read", "read TARGET", "read a value (0x001D, a handle, or a UUID such as 2A19)", []),
        ("write", "write TARGET HEX [--without-response]", "write a value", ["--without-response"]),
        ("notify", "notify TARGET [--indicate]", "subscribe; values print as they come", ["--indicate"]),
        ("unsubscribe", "unsubscribe TARGET", "stop a subscription", []),
        ("mtu", "mtu", "the link's ATT MTU", []),
        ("scan", "scan [SECONDS]", "list advertising devices for SECONDS (5)", []),
        ("sleep", "sleep SECONDS", "wait, printing what arrives (for scripts)", []),
        ("help", "help [COMMAND]", "this list", []),
        ("quit", "quit", "unsubscribe, disconnect and leave (also exit, Ctrl-D)", []),
    ]

    private func execute(_ words: [String]) async throws {
        guard let name = words.first else { return }
        let arguments = Array(words.dropFirst())
        switch name {
        case "help": help(arguments)
        case "connect":
            let parsed = try parse(ConnectArguments.self, arguments, for: name)
            try await connect(parsed.address, addressType: parsed.addressType)
        case "disconnect":
            _ = try parse(NoArguments.self, arguments, for: name)
            _ = try await requireLink()
            await endLink(politely: true)
            report("disconnected", event: [("event", .string("disconnected")), ("reason", .string("asked"))])
        case "services":
            _ = try parse(NoArguments.self, arguments, for: name)
            let peer = try await requireLink()
            let lines = try await peer.describeDatabase(json: json)
            if let database = try? await peer.gatt.discoverAll() {
                state.withLock { $0.link?.database = database }
            }
            console.print(lines.joined(separator: "\n"))
        case "read":
            let parsed = try parse(TargetArguments.self, arguments, for: name)
            console.print(try await requireLink().readValue(of: parsed.target, json: json))
        case "write":
            let parsed = try parse(WriteArguments.self, arguments, for: name)
            guard parsed.value.bytes.count <= 512 else { throw CLIError(.usage, "a value is at most 512 bytes") }
            if let line = try await requireLink().writeValue(parsed.value.bytes, to: parsed.target,
                                                             withoutResponse: parsed.withoutResponse, json: json) {
                console.print(line)
            }
        case "notify":
            let parsed = try parse(NotifyArguments.self, arguments, for: name)
            try await subscribe(parsed.target, indications: parsed.indicate)
        case "unsubscribe":
            let parsed = try parse(TargetArguments.self, arguments, for: name)
            try await unsubscribe(parsed.target)
        case "mtu":
            _ = try parse(NoArguments.self, arguments, for: name)
            let mtu = try await requireLink().gatt.mtu
            console.print(json ? JSON.object([("mtu", JSON(mtu))]).serialized() : "\(mtu)")
        case "scan":
            let parsed = try parse(ScanArguments.self, arguments, for: name)
            try await scan(seconds: parsed.seconds ?? 5)
        case "sleep":
            let parsed = try parse(SleepArguments.self, arguments, for: name)
            try await Task.sleep(for: .milliseconds(Int(parsed.seconds * 1000)))
        default:
            let known = Self.commands.map(\.name)
            let near = known.first { $0.hasPrefix(name) || name.hasPrefix($0) }
            throw CLIError(.usage, "unknown command \"\(name)\"", fix: near.map { "did you mean \($0)? (help lists the commands)" }
                           ?? "help lists the commands")
        }
    }

    private func help(_ arguments: [String]) {
        let shown = Self.commands.filter { arguments.isEmpty || arguments.contains($0.name) }
        let width = shown.map(\.usage.count).max() ?? 0
        var lines = shown.map { $0.usage.padding(to: width) + "  " + $0.summary }
        if arguments.isEmpty {
            lines.append("TARGET: 0x001D (a handle) or a characteristic UUID (2A37); HEX: bytes in hex (0100).")
        }
        console.print(lines.joined(separator: "\n"))
    }

    /// `words` as `T`'s arguments, or a usage error naming the command and what is wrong.
    private func parse<T: ParsableArguments>(_ type: T.Type, _ words: [String], for name: String) throws -> T {
        do {
            return try T.parse(words)
        } catch {
            let usage = Self.commands.first { $0.name == name }?.usage ?? name
            let message = T.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
            throw CLIError(.usage, "\(message)", fix: "usage: \(usage)")
        }
    }

    // MARK: The link

    /// The link commands use, or "not connected" (after saying the link was lost, when it was).
    private func requireLink() async throws -> PeerSession {
        if let lost = lostLink() {
            reportLoss(of: lost)
            await endLink(of: lost, politely: false)
        }
        guard let peer = state.withLock({ $0.link?.peer }) else {
            throw CLIError(.usage, "not connected", fix: "connect ADDRESS first (scan lists what advertises)")
        }
        return peer
    }

    private func connect(_ address: BluetoothAddress, addressType: AddressTypeArgument?) async throws {
        if let lost = lostLink() {
            reportLoss(of: lost)
            await endLink(of: lost, politely: false)
        }
        if let current = state.withLock({ $0.link?.peer.connection.peer }) {
            throw CLIError(.usage, "already connected to \(current.address)", fix: "disconnect first")
        }
        let peer = try await PeerSession.connect(on: host, to: address, addressType: addressType, timeout: timeout,
                                                 security: security, waits: waits)
        // The database, for completion and for targets by UUID: a failure here is not the
        // connection's (a command needing it will say).
        let database = try? await peer.gatt.discoverAll()
        let connection = peer.connection
        let watcher = Task { [weak self] in
            _ = await connection.waitUntilDisconnected()
            // Cancelled: `disconnect` (or the end) came first, and that is no loss.
            guard !Task.isCancelled, let self else { return }
            reportLoss(of: connection)
            await endLink(of: connection, politely: false)
        }
        state.withLock {
            $0.link = Link(peer: peer, watcher: watcher, database: database)
            $0.lossReported = false
        }
        let mtu = await peer.gatt.mtu
        let device = peer.connection.peer
        report("connected to \(device.address) (\(device.type)), MTU \(mtu)", event: [
            ("event", .string("connected")), ("address", .string(device.address.description)),
            ("addressType", .string(device.type.description)), ("mtu", JSON(mtu)),
        ])
    }

    /// The link, when it ended without a `disconnect`.
    private func lostLink() -> (any CentralLink)? {
        state.withLock { state in
            guard let connection = state.link?.peer.connection, connection.ending != nil else { return nil }
            return connection
        }
    }

    /// Says once that `connection` went, and why; the next `connect` starts afresh.
    private func reportLoss(of connection: any CentralLink) {
        let first = state.withLock { state in
            guard state.link?.peer.connection === connection, !state.lossReported else { return false }
            state.lossReported = true
            state.lastFailure = .peerError
            return true
        }
        guard first else { return }
        let reason: String = switch connection.ending {
        case .disconnected(let reason)?: reason.description
        case let ending?: ending.description
        case nil: "the link ended"
        }
        console.print("rawble: link to \(connection.peer.address) lost: \(reason) (connect to try again)", error: true)
        console.change(prompt: Self.disconnectedPrompt)
        if json {
            console.print(JSON.object([("event", .string("disconnected")), Self.now, ("reason", .string(reason))]).serialized())
        }
    }

    /// Stops the subscriptions (writing their CCCDs back to 0 when `politely` and the link is
    /// up), then disconnects. `connection`: only when the link is still that one (a watcher
    /// ending a lost link must not end the next one).
    private func endLink(of connection: (any CentralLink)? = nil, politely: Bool) async {
        guard let link = state.withLock({ state -> Link? in
            guard let link = state.link, connection.map({ $0 === link.peer.connection }) ?? true else { return nil }
            state.link = nil
            return link
        }) else { return }
        link.watcher.cancel()
        for subscription in link.subscriptions.values {
            subscription.printer.cancel()
            if politely, link.peer.connection.ending == nil {
                _ = await Task.detached { try? await subscription.subscription.cancel() }.value
            }
        }
        await link.peer.disconnect()
    }

    // MARK: Subscriptions

    private func subscribe(_ target: AttributeTarget, indications: Bool) async throws {
        let peer = try await requireLink()
        let characteristic = try await peer.subscribableCharacteristic(for: target, indications: indications)
        let handle = characteristic.valueHandle
        if state.withLock({ $0.link?.subscriptions[handle] != nil }) {
            throw CLIError(.usage, "already subscribed to \(characteristic.uuid) at \(handleText(handle))",
                           fix: "unsubscribe \(handleText(handle)) first")
        }
        let subscription = try await peer.subscribe(to: characteristic, indications: indications)
        let (console, json) = (self.console, self.json)
        let kind = indications ? "indication" : "notification"
        let label = "\(kind) \(handleText(handle)) \(characteristic.uuid)"
        // Said before the first value is printed (the peer may send one at once).
        report("subscribed to \(characteristic.uuid) at \(handleText(handle))", event: [
            ("event", .string("subscribed")), ("handle", .handle(handle)), ("uuid", .uuid(characteristic.uuid)),
            ("indications", .bool(indications)),
        ])
        let printer = Task {
            var lines = NotificationPrinter(characteristic: characteristic, json: json)
            do {
                for try await update in subscription {
                    if json {
                        console.print(bytes: lines.line(for: update))
                    } else {
                        console.print("\(label): \(ValueText.person(update.value, characteristic: characteristic))")
                    }
                }
            } catch {
                // The link ended: its watcher says so.
            }
        }
        state.withLock { $0.link?.subscriptions[handle] = Subscription(subscription: subscription, printer: printer) }
    }

    /// Whether values are being notified (a Ctrl-C at the prompt then ends the subscriptions).
    private var subscribed: Bool {
        state.withLock { !($0.link?.subscriptions.isEmpty ?? true) }
    }

    /// Ends every subscription, each as `unsubscribe` does (Ctrl-C at the prompt).
    private func unsubscribeAll() async throws {
        let handles = state.withLock { $0.link?.subscriptions.keys.sorted() ?? [] }
        for handle in handles { try await unsubscribe(.handle(handle)) }
    }

    private func unsubscribe(_ target: AttributeTarget) async throws {
        let peer = try await requireLink()
        let subscriptions = state.withLock { $0.link?.subscriptions ?? [:] }
        let found = subscriptions.first { handle, entry in
            switch target {
            case .handle(let wanted): handle == wanted || entry.subscription.characteristic.declarationHandle == wanted
            case .uuid(let uuid): entry.subscription.characteristic.uuid == uuid
            }
        }
        guard let (handle, entry) = found else {
            throw CLIError(.usage, "not subscribed to \(target)",
                           fix: subscriptions.isEmpty ? "notify TARGET subscribes"
                               : "subscribed: \(subscriptions.keys.sorted().map(handleText).joined(separator: ", "))")
        }
        entry.printer.cancel()
        state.withLock { _ = $0.link?.subscriptions.removeValue(forKey: handle) }
        try await peer.gatt.unsubscribe(entry.subscription)
        report("unsubscribed from \(entry.subscription.characteristic.uuid) at \(handleText(handle))", event: [
            ("event", .string("unsubscribed")), ("handle", .handle(handle)), ("uuid", .uuid(entry.subscription.characteristic.uuid)),
        ])
    }

    // MARK: Scanning

    private func scan(seconds: Double) async throws {
        let devices: AsyncThrowingStream<DiscoveredDevice, any Error>
        do {
            devices = try await host.central.scan(ScanOptions(active: true, filter: ScanFilter()))
        } catch {
            throw host.cliError(error)
        }
        let (console, json) = (self.console, self.json)
        let listing = Task { () -> [String] in
            var seen: [String] = []
            do {
                for try await device in devices where !seen.contains(device.address.address.description) {
                    let address = device.address.address.description
                    seen.append(address)
                    if json {
                        console.print(device.json.serialized())
                    } else {
                        let rssi = device.rssi.map { "\($0) dBm" } ?? "? dBm"
                        let services = device.advertisingData.serviceUUIDs.map { $0.name ?? $0.description }
                        console.print("\(address) (\(device.address.type))  \(rssi)  \(device.name.map { GATTString.escaped($0) } ?? "(no name)")"
                                      + (services.isEmpty ? "" : "  [\(services.joined(separator: ", "))]")
                                      + (device.isConnectable ? "" : "  not connectable"))
                    }
                }
            } catch {
            }
            return seen
        }
        let stop = Task {
            try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            listing.cancel()
        }
        let seen = await withTaskCancellationHandler {
            await listing.value
        } onCancel: {
            listing.cancel()
        }
        stop.cancel()
        try? await host.central.stopScanning()
        state.withLock { state in
            for address in seen where !state.addresses.contains(address) { state.addresses.append(address) }
        }
        if !json, seen.isEmpty { console.print("no devices found") }
        try Task.checkCancellation()
    }

    // MARK: Prompt, completion, events

    private static let disconnectedPrompt = "rawble> "

    private var prompt: String {
        state.withLock { state in
            guard let link = state.link, link.peer.connection.ending == nil else { return Self.disconnectedPrompt }
            return "\(link.peer.connection.peer.address)> "
        }
    }

    private var completionWords: CompletionWords {
        state.withLock { state in
            var words = CompletionWords()
            for command in Self.commands { words.commands[command.name] = command.flags }
            words.targetCommands = ["read", "write", "notify", "unsubscribe"]
            words.addressCommands = ["connect"]
            words.commandCommands = ["help"]
            words.addresses = state.addresses
            for characteristic in state.link?.database?.characteristics ?? [] {
                words.targets.append(characteristic.characteristic.uuid.description)
                words.targets.append(handleText(characteristic.characteristic.valueHandle))
                words.targets += characteristic.descriptors.map { handleText($0.handle) }
            }
            return words
        }
    }

    /// A change of the link or its subscriptions: a line on stderr for a person, or a JSON
    /// event (with its time) on stdout.
    private func report(_ text: String, event fields: [(String, JSON)]) {
        if json {
            var fields = fields
            fields.insert(Self.now, at: min(1, fields.count))
            console.print(JSON.object(fields).serialized())
        } else {
            console.print(text, error: true)
        }
    }

    private static var now: (String, JSON) { ("time", .string(iso8601(unixMicroseconds: Clock.unixMicroseconds()))) }
}

// MARK: The commands' arguments (parsed with the same transforms as the one-shot commands)

private struct NoArguments: ParsableArguments {}

private struct TargetArguments: ParsableArguments {
    @Argument(transform: AttributeTarget.parse) var target: AttributeTarget
}

private struct WriteArguments: ParsableArguments {
    @Argument(transform: AttributeTarget.parse) var target: AttributeTarget
    @Argument var value: HexBytes
    @Flag(name: .customLong("without-response")) var withoutResponse = false
}

private struct NotifyArguments: ParsableArguments {
    @Argument(transform: AttributeTarget.parse) var target: AttributeTarget
    @Flag var indicate = false
}

private struct ConnectArguments: ParsableArguments {
    @Argument(transform: BluetoothAddress.parse) var address: BluetoothAddress
    @Option(name: .customLong("address-type")) var addressType: AddressTypeArgument?
}

private struct ScanArguments: ParsableArguments {
    @Argument var seconds: Double?

    func validate() throws {
        if let seconds, !(seconds > 0 && seconds <= 3600) { throw ValidationError("seconds must be between 0 and 3600") }
    }
}

private struct SleepArguments: ParsableArguments {
    @Argument var seconds: Double

    func validate() throws {
        if !(seconds >= 0 && seconds <= 3600) { throw ValidationError("seconds must be between 0 and 3600") }
    }
}

/// `~/.rawble_history`: one line per command entered at a terminal, newest last. The shell
/// keeps the last ``limit``; the file is cut back to them when it has grown to twice as many
/// (as bash's HISTFILESIZE), and at most its last ``readLimit`` bytes are ever read.
enum HistoryFile {
    static let limit = 1000
    static let readLimit = 256 * 1024

    static var path: String? {
        guard let home = getenv("HOME").map({ String(cString: $0) }), !home.isEmpty else { return nil }
        return home + "/.rawble_history"
    }

    static func load() -> [String] {
        guard let path else { return [] }
        return load(from: path)
    }

    /// The last ``limit`` lines of the file at `path` (none when it cannot be read); the file
    /// is rewritten with just those when it holds twice as many or more than ``readLimit`` bytes.
    /// A symbolic link is not followed: nothing is read (and ``append(_:)`` writes nothing).
    static func load(from path: String) -> [String] {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return [] }
        guard let file = fdopen(descriptor, "r") else {
            close(descriptor)
            return []
        }
        var bytes: [UInt8] = []
        var cut = false
        if fseeko(file, 0, SEEK_END) == 0 {
            let size = ftello(file)
            cut = size > readLimit
            _ = fseeko(file, max(0, size - off_t(readLimit)), SEEK_SET)
        }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while bytes.count < readLimit {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            guard count > 0 else { break }
            bytes += chunk.prefix(min(count, readLimit - bytes.count))
        }
        fclose(file)
        var lines = bytes.split(separator: 0x0A)
        // Read from the middle: the first line is a tail of one.
        if cut, !lines.isEmpty { lines.removeFirst() }
        let kept = lines.suffix(limit).map { String(decoding: $0, as: UTF8.self) }
        if cut || lines.count >= 2 * limit { rewrite(path, with: kept) }
        return kept
    }

    /// Replaces the file with `lines` (a new file renamed over it: a crash never leaves half).
    private static func rewrite(_ path: String, with lines: [String]) {
        let temporary = path + ".new"
        guard let descriptor = try? PrivateFile.replace(temporary) else { return }
        var text = lines.map { $0 + "\n" }.joined()
        let written = text.withUTF8 { writeAll($0, to: descriptor) }
        if close(descriptor) != 0 || !written || rename(temporary, path) != 0 { unlink(temporary) }
    }

    /// Appends `line` to the file at ``path``, made mode 0600 (an older history's mode too: the
    /// lines typed can hold a passkey); nothing when the file is refused (a symbolic link,
    /// another user's) or cannot be written — the shell goes on without it.
    static func append(_ line: String) {
        guard !line.trimmingWhitespace.isEmpty, let path else { return }
        append(line, to: path)
    }

    static func append(_ line: String, to path: String) {
        guard let descriptor = try? PrivateFile.openForAppending(path).descriptor else { return }
        defer { close(descriptor) }
        _ = fchmod(descriptor, 0o600)
        var text = line + "\n"
        _ = text.withUTF8 { writeAll($0, to: descriptor) }
    }

    /// `write(2)` of all of `bytes`; whether it all went.
    private static func writeAll(_ bytes: UnsafeBufferPointer<UInt8>, to descriptor: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count, let base = bytes.baseAddress {
            let count = write(descriptor, base + offset, bytes.count - offset)
            if count > 0 {
                offset += count
            } else if count < 0, errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }
}

extension String {
    /// The text with spaces after it up to `width` characters.
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
