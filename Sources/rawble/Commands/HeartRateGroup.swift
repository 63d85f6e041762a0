import FoundationEssentials
import RawbleHost
import RawbleHostCore
import RawbleReport
import RawbleWire
import Synchronization

/// One strap of a group run (`rawble hr A B C`, `hr --all`): how its ``HeartRateSession`` finds
/// it (the shared scan), names it in every event and line, and where it shows (its table row
/// on a terminal, else lines that start with its name).
final class GroupMember: Sendable {
    /// The shared scan (with several adapters, `hr` looks through ``StrapAdapters`` instead:
    /// this is the first adapter's).
    let hub: StrapScanHub
    let table: StrapTable?
    let row: Int?
    private let current: Mutex<StrapLabel?>
    /// The address found for the target, kept across reconnections (two targets by name never
    /// swap straps).
    private let found = Mutex<BluetoothAddress?>(nil)
    /// What the row and lines call it before it was found (the target as typed).
    let placeholder: String
    /// The adapter its link goes through, in a run with several (``StrapAdapters``).
    private let adapter = Mutex<String?>(nil)

    init(hub: StrapScanHub, table: StrapTable?, target: StrapTarget, label: StrapLabel? = nil) {
        self.hub = hub
        self.table = table
        placeholder = label?.description ?? target.description
        current = Mutex(label)
        row = table?.add(name: placeholder)
        if let label {
            table?.update(row ?? 0) { $0.address = label.address }
        }
    }

    /// The strap's label once its address is known.
    var label: StrapLabel? { current.withLock { $0 } }

    /// The strap as a line or a row names it.
    var name: String { label?.description ?? placeholder }

    /// The target the next scan looks for: the address found, once there is one.
    func target(_ original: StrapTarget) -> StrapTarget {
        found.withLock { $0 }.map { .address($0) } ?? original
    }

    /// The scan found `device`: its address and advertised name label the strap from now on.
    func matched(_ device: DiscoveredDevice) {
        found.withLock { $0 = device.address.address }
        let label = current.withLock { label -> StrapLabel in
            let new = StrapLabel(address: "\(device.address.address)", name: label?.name ?? device.name)
            label = new
            return new
        }
        updateRow { $0.name = label.description; $0.address = label.address }
    }

    /// The strap's GATT Device Name, when it advertised none.
    func named(_ name: String?) {
        guard let name else { return }
        let label = current.withLock { label -> StrapLabel? in
            guard let old = label, old.name == nil else { return nil }
            label = StrapLabel(address: old.address, name: name)
            return label
        }
        if let label { updateRow { $0.name = label.description } }
    }

    /// Its link goes through the adapter `name` (a run with several): its row and events say so.
    func placed(on name: String) {
        adapter.withLock { $0 = name }
        updateRow { $0.adapter = name }
    }

    /// The label's fields for a JSON event (`address`, `name`, and `adapter` in a run with
    /// several), none before it was found.
    var eventFields: [(String, JSON)] {
        guard let label else { return [] }
        let on = adapter.withLock { $0 }.map { [("adapter", JSON.string($0))] } ?? []
        return [("address", .string(label.address)), ("name", JSON(label.name))] + on
    }

    func updateRow(_ change: (inout StrapTableModel.Row) -> Void) {
        guard let table, let row else { return }
        table.update(row, change)
    }

    func valueArrived(_ change: (inout StrapTableModel.Row) -> Void) {
        guard let table, let row else { return }
        table.valueArrived(row, change)
    }
}

/// Where a group member's waits are told: its row (on a terminal; lines about what was heard
/// go above the table), else lines on stderr that start with its name, and `status` events
/// (which name the strap) with `--json`.
struct GroupWaitDisplay: WaitDisplay {
    let member: GroupMember

    var showsStatus: Bool { member.table != nil }

    func showWait(_ text: String, elapsed: Duration) {}

    func hideWait() {}

    func printError(_ line: String) {
        let text = "\(member.name): \(line)"
        if let table = member.table { table.printError(text) } else { Output.error(text) }
    }

    func printLine(_ line: String) {
        Output.line(line)
    }
}

/// The files of a group run: one file with a strap column for all (`--csv session.csv`), or a
/// file per strap when the path names it (`--csv 'session-{name}.csv'`, `{address}`), opened
/// when the strap is found.
final class GroupFiles: Sendable {
    /// A path template's placeholders.
    static let placeholders = ["{name}", "{address}"]

    private let csvPath: String?
    private let jsonlPath: String?
    private let sharedCSV: AppendFile?
    private let sharedJSONL: AppendFile?
    /// The CSV header of every file (the command's labelled format).
    private let csvHeader: String?
    private let perStrap = Mutex<[String: (csv: AppendFile?, jsonl: AppendFile?)]>([:])

    /// Opens the shared files now (an error the user can fix before any strap is found);
    /// `csvHeader`: the command's labelled CSV header (`hr`'s unless given).
    init(csv: String?, jsonl: String?, csvHeader: String? = SessionFileWriter(format: .csv, labelled: true).header) throws {
        csvPath = csv
        jsonlPath = jsonl
        self.csvHeader = csvHeader
        sharedCSV = try csv.flatMap { Self.isTemplate($0) ? nil : try AppendFile(path: $0, header: csvHeader) }
        sharedJSONL = try jsonl.flatMap { Self.isTemplate($0) ? nil : try AppendFile(path: $0) }
    }

    static func isTemplate(_ path: String) -> Bool { placeholders.contains { path.contains($0) } }

    /// The files `label`'s lines go to. A file of its own that cannot be opened is one line on
    /// stderr; its lines are dropped.
    /// Every line of a group run names its strap, in a file of its own too (the same format
    /// as the shared file: `rawble report` reads either).
    func files(for label: StrapLabel) -> (csv: AppendFile?, jsonl: AppendFile?) {
        let own = perStrap.withLock { files -> (csv: AppendFile?, jsonl: AppendFile?) in
            if let opened = files[label.address] { return opened }
            let opened = (csv: open(csvPath, label, header: csvHeader),
                          jsonl: open(jsonlPath, label, header: nil))
            files[label.address] = opened
            return opened
        }
        return (sharedCSV ?? own.csv, sharedJSONL ?? own.jsonl)
    }

    private func open(_ template: String?, _ label: StrapLabel, header: String?) -> AppendFile? {
        guard let template, Self.isTemplate(template) else { return nil }
        let path = Self.path(template, for: label)
        do {
            return try AppendFile(path: path, header: header)
        } catch {
            Output.error("rawble: \(label): \(error)")
            return nil
        }
    }

    /// `template` with the strap's name (else its address) and address put in, each made safe
    /// for a file name (no `/`, no leading dot, no control characters; colons become dashes).
    static func path(_ template: String, for label: StrapLabel) -> String {
        let address = label.address.replacing(":", with: "-")
        return template.replacing("{name}", with: safe(label.name ?? address))
            .replacing("{address}", with: safe(address))
    }

    static func safe(_ text: String) -> String {
        var result = ""
        for character in text {
            if character == "/" || character == "\\" || character.isNewline || character.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                result.append("_")
            } else if character == " " {
                result.append("-")
            } else {
                result.append(character)
            }
        }
        while result.hasPrefix(".") { result.removeFirst() }
        return result.isEmpty ? "strap" : result
    }
}

extension HeartRate {
    /// `rawble hr A B C` or `hr --all`: a ``HeartRateSession`` per strap, all on one host and
    /// one shared scan (``StrapScanHub``) per adapter (`--transport A,B`: several, the straps
    /// spread over them, ``StrapAdapters``), each with its own link, reconnection and analysis;
    /// the run ends when every strap reached `--count`, at Ctrl-C, or when the controller goes
    /// (with several, the last of them).
    func runGroup() async throws {
        let lslStreams = try lsl.streams()
        let files = try GroupFiles(csv: csv, jsonl: jsonl)
        let display = try await serve.start(zones: zones.zones)
        // Made first: a Ctrl-C while the controller opens is kept for the run's task.
        let interrupt = InterruptWatcher()
        let hosts = try await openAdapters()
        let host = hosts[0]
        let json = output.json
        let table = !json && !output.quiet && Output.stdoutIsTerminal ? StrapTable() : nil
        // The table's rows, or lines that start with a strap's name, say what each strap waits
        // for: no status line beside them.
        let status = StatusLine(quiet: true)
        let gone = Mutex<HostError?>(nil)
        let work = Mutex<Task<Void, any Error>?>(nil)
        // With --all, until the first strap is found, what the run waits for and what it heard
        // (never a blank screen): a status event, or a line above the table.
        let lookingForAny = all ? WaitStatus(display: status, output: output) : nil
        let adapters = StrapAdapters(hosts.map { host in
            StrapAdapters.Member(name: "\(host.transport)", host: host,
                                 hub: StrapScanHub(central: host.central) { device in lookingForAny?.saw(device) })
        }, report: { line in
            if let table { table.printError(line) } else { Output.error(line) }
        })
        let members = Mutex<[(member: GroupMember, live: LiveAnalysis?, waits: WaitStatus)]>([])
        let analysed = json ? hrvEvery > 0 : true
        let (zones, every, quiet, count, resetEnergy, reconnect) = (zones.zones, hrvEvery, output.quiet, count, resetEnergy, reconnect)
        let timeout = Duration.milliseconds(Int(connection.timeout * 1000))
        let required = security.settings.required
        let controllerGone: @Sendable (HostError) -> Void = { error in
            gone.withLock { $0 = $0 ?? error }
            work.withLock { $0?.cancel() }
        }
        let session: @Sendable (StrapTarget, StrapLabel?) -> HeartRateSession = { target, label in
            let member = GroupMember(hub: adapters.members[0].hub, table: table, target: target, label: label)
            let waits = WaitStatus(display: GroupWaitDisplay(member: member), json: json, quiet: quiet, clock: ContinuousClock(),
                                   eventFields: { member.eventFields })
            let live = analysed ? LiveAnalysis(zones: zones, every: every, sparkline: false) : nil
            members.withLock { $0.append((member, live, waits)) }
            var session = HeartRateSession(
                host: host, status: status, waits: waits, target: target, count: count, resetEnergy: resetEnergy,
                reconnect: reconnect, json: json, timeout: timeout, security: required, csv: nil, jsonl: nil,
                live: live, controllerGone: controllerGone)
            session.member = member
            session.groupFiles = files
            session.adapters = adapters
            session.display = display?.feed()
            session.lsl = lslStreams
            return session
        }
        let running = Task(executorPreference: host.central.taskExecutor) {
            for adapter in adapters.members {
                try await adapter.hub.start(on: adapter.host)
            }
            try await StrapGroupRun(named: device.map(StrapTarget.init), limit: all ? max ?? 20 : 0, newStraps: adapters.newStraps,
                                    lookingForAny: lookingForAny, kind: "heart-rate straps") { target, label in
                let follower = session(target, label)
                return { try await follower.run() }
            }.run()
        }
        work.withLock { $0 = running }
        interrupt.onInterrupt { running.cancel() }
        let result = await running.result
        withExtendedLifetime(interrupt) {}
        lookingForAny?.stop()
        for adapter in adapters.members { await adapter.hub.close() }
        table?.finish()
        for (member, live, waits) in members.withLock({ $0 }) {
            waits.stop()
            if let line = live?.summaryLine(), !json { Output.line("\(member.name): \(line)") }
        }
        for host in hosts { await host.close() }
        await display?.close()
        if let error = gone.withLock({ $0 }), !interrupt.fired {
            if let removed = hosts.lazy.compactMap({ $0.removedAdapterError(error) }).first { throw removed }
            let controllers = hosts.count == 1 ? "the controller at \(host.transport)"
                : "the controllers at \(TransportList(adapters: hosts.map(\.transport)))"
            throw CLIError(.transport, "\(controllers) stopped answering while a strap was silent (\(error))",
                           fix: "is another program using it? A controller serves one host at a time: stop the other one and run hr again")
        }
        do {
            try result.get()
        } catch is CancellationError {
            if count != nil { throw CLIError.interrupted }
        }
    }

    /// The adapters `--transport` names (one, or several: `hci0,hci1`), each opened as a
    /// ``HostSession`` with an identity of its own; the ones already opened are closed when one
    /// cannot be. The capabilities the opening needed go once the last is open.
    private func openAdapters() async throws -> [HostSession] {
        let transports = try connection.resolvedTransports(environment: environment())
        let identities = transports.count > 1 ? OwnIdentities() : nil
        var hosts: [HostSession] = []
        do {
            for transport in transports {
                hosts.append(try await HostSession.open(connection, output: output, pairing: security.settings, adapter: transport,
                                                        identities: identities, lastOpened: hosts.count == transports.count - 1))
            }
        } catch {
            for host in hosts { await host.close() }
            throw error
        }
        return hosts
    }
}
