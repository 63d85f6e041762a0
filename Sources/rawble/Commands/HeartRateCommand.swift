import ArgumentParser
import FoundationEssentials
import RawbleBearer
import RawbleGATT
import RawbleGATTCore
import RawbleHeartRate
import RawbleHost
import RawbleHostCore
import RawbleReport
import RawbleWire
import Synchronization

/// `rawble hr`: find a heart-rate strap, connect, show and log every beat; when the link
/// drops, scan again and resume (with backoff) until --count or Ctrl-C.
struct HeartRate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hr",
        abstract: "Find a heart-rate strap, connect, and show and log every beat.",
        discussion: """
            Examples:
              rawble hr                      (the first strap advertising Heart Rate)
              rawble hr "Polar H10" --csv session.csv --max-hr 185
              rawble hr --json --count 60 --transport tcp:127.0.0.1:9000
              rawble hr C0:B1:E0:00:00:01 --security encrypted  (pair, or use the bond)
              rawble hr "Polar H10 A1" "Polar H10 B2" --csv team.csv  (several)
              rawble hr --all --max 10 --csv 'session-{name}.csv'  (all in range)
              rawble hr --all --max 20 --transport hci0,hci1  (over two adapters)

            With several straps (or --all) a terminal shows one row per strap, redrawn in
            place; every JSON event names its strap (address, name); --csv and --jsonl
            write one file with a strap column, or a file per strap when the path holds
            {name} or {address}; --count applies to each strap. A strap that fails
            (a GATT error, a controller that refuses one more link) is tried again after
            a pause while the others go on. --transport A,B spreads the straps over
            several adapters: each strap connects through the least loaded one that hears
            it, and through another when one is full (a line says which); rows and
            events (from connected on) name each strap's adapter; if one adapter goes,
            its straps move to the others.

            On rawble's own host (user:hciN, serial:, tcp:, unix:) a strap bonded before
            (rawble pair) is encrypted with its bond on every connection and
            reconnection, without pairing again; --security makes each link encrypted
            (or authenticated) before subscribing, pairing the first time.
            """)

    @Argument(help: "Device addresses or names (default: the first strap advertising Heart Rate); several are followed at once.")
    var device: [String] = []
    @Flag(help: "Follow every heart-rate strap in range, up to --max.")
    var all = false
    @Option(help: ArgumentHelp("With --all: the most straps followed at once (default 20).", valueName: "n"))
    var max: Int?
    @Option(parsing: .unconditional, help: "Stop after this many valid measurements.") var count: Int?
    @Option(help: ArgumentHelp("Append every measurement to a CSV file.", valueName: "file")) var csv: String?
    @Option(help: ArgumentHelp("Append every measurement to a JSON lines file.", valueName: "file")) var jsonl: String?
    @Flag(name: .customLong("reset-energy"), help: "Reset Energy Expended through the Heart Rate Control Point.")
    var resetEnergy = false
    @Flag(inversion: .prefixedNo, help: "Scan again and reconnect when the link drops.")
    var reconnect = true
    @Option(name: .customLong("hrv-every"), help: ArgumentHelp(
        "With --json, an hrv event every this many seconds: HRV of the beats since the last one, artifacts corrected, the zone (0: none).",
        valueName: "seconds"))
    var hrvEvery: Double = 30
    @OptionGroup var zones: ZoneOptions
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var security: SecurityOptions
    @OptionGroup var output: OutputOptions
    @OptionGroup var serve: ServeOptions
    @OptionGroup var lsl: LSLOptions

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        try StrapGroupChoice(devices: device, all: all, max: max, ends: count != nil, endNames: "--count", csv: csv, jsonl: jsonl)
            .validate()
        if let transport = connection.transport, transport.adapters.count > 1, !isGroup {
            throw ValidationError("several adapters (--transport \(transport)) go with several straps: name them (hr A B) or give --all")
        }
        if hrvEvery != 0, !(5...86_400).contains(hrvEvery) {
            throw ValidationError("--hrv-every must be 0 (no hrv events) or between 5 and 86400 seconds")
        }
    }

    /// Whether this run follows several straps (the table, the strap fields).
    private var isGroup: Bool { all || device.count > 1 }

    func run() async throws {
        if isGroup { return try await runGroup() }
        let lslStreams = try lsl.streams()
        let csvFile = try csv.map { try AppendFile(path: $0, header: SessionFileWriter(format: .csv).header) }
        let jsonlFile = try jsonl.map { try AppendFile(path: $0) }
        let display = try await serve.start(zones: zones.zones)
        // Made first: a Ctrl-C while the controller opens is kept for the monitor's task.
        let interrupt = InterruptWatcher()
        let host = try await HostSession.open(connection, output: output, pairing: security.settings)
        let status = StatusLine(quiet: output.quiet)
        let waits = WaitStatus(display: status, output: output)
        let gone = Mutex<HostError?>(nil)
        let work = Mutex<Task<Void, any Error>?>(nil)
        // Analysed live where someone sees it: hrv events, or the status line and a last line.
        let analysed = output.json ? hrvEvery > 0 : true
        let monitor = HeartRateSession(
            host: host, status: status, waits: waits, target: StrapTarget(device.first), count: count, resetEnergy: resetEnergy,
            reconnect: reconnect, json: output.json, timeout: .milliseconds(Int(connection.timeout * 1000)),
            security: security.settings.required, csv: csvFile, jsonl: jsonlFile,
            live: analysed ? LiveAnalysis(zones: zones.zones, every: hrvEvery, sparkline: !output.json) : nil,
            controllerGone: { error in
                gone.withLock { $0 = $0 ?? error }
                work.withLock { $0?.cancel() }
            }, display: display?.feed(), lsl: lslStreams)
        // On the host's event loop, where the measurements are decoded: none waits for a hop.
        let running = Task(executorPreference: host.central.taskExecutor) { try await monitor.run() }
        work.withLock { $0 = running }
        interrupt.onInterrupt { running.cancel() }
        let result = await running.result
        withExtendedLifetime(interrupt) {}
        waits.stop()
        status.stop()
        if !output.json, let line = monitor.live?.summaryLine() { Output.line(line) }
        await host.close()
        await display?.close()
        if let error = gone.withLock({ $0 }), !interrupt.fired {
            // The strap's silence and the adapter's removal can come in either order (6.12 is
            // faster to notice the silence): name the removal when that is what happened.
            if let removed = host.removedAdapterError(error) { throw removed }
            throw CLIError(.transport, "the controller at \(host.transport) stopped answering while the strap was silent (\(error))",
                           fix: "is another program using it? A controller serves one host at a time: stop the other one and run hr again")
        }
        do {
            try result.get()
        } catch is CancellationError {
            // Ctrl-C: the normal end of a live view, unless it came before --count.
            if count != nil { throw CLIError.interrupted }
        }
    }
}

/// Which strap `rawble hr` looks for.
enum StrapTarget: Sendable, CustomStringConvertible {
    case anyStrap
    case address(BluetoothAddress)
    case name(String)

    init(_ argument: String?) {
        guard let argument, !argument.isEmpty else { self = .anyStrap; return }
        if let address = BluetoothAddress(argument) { self = .address(address) } else { self = .name(argument) }
    }

    var filter: ScanFilter {
        switch self {
        case .anyStrap: ScanFilter(services: [.heartRateService])
        case .address(let address): ScanFilter(addresses: [address])
        case .name(let name): ScanFilter(nameSubstring: name)
        }
    }

    var description: String {
        switch self {
        case .anyStrap: "a heart-rate strap"
        case .address(let address): "\(address)"
        case .name(let name): "“\(name)”"
        }
    }
}

/// One `rawble hr` run: scan, connect, subscribe, print and log; reconnect when the link drops.
struct HeartRateSession: Sendable {
    let host: HostSession
    let status: StatusLine
    /// Says what the run waits for: the strap, the connection, the first measurement.
    let waits: WaitStatus
    let target: StrapTarget
    let count: Int?
    let resetEnergy: Bool
    let reconnect: Bool
    let json: Bool
    let timeout: Duration
    /// The level each link must reach before subscribing (`--security`), on rawble's own host.
    let security: LinkSecurity?
    let csv: AppendFile?
    let jsonl: AppendFile?
    /// The live HRV and zones (status line, `hrv` events), when asked for.
    let live: LiveAnalysis?
    /// Each measurement's time, the same for the files and the live analysis.
    let clock = SessionClock()
    /// In a group run, whether this strap already had its line for a value that does not decode.
    let invalidShown = OnceFlag()
    /// Called when the strap went silent and the controller did not answer either: the run
    /// must end (the controller is gone or another host took it).
    let controllerGone: @Sendable (HostError) -> Void
    /// In a group run (several straps): how this strap is found, named and shown; `nil` for
    /// the one strap of a plain run.
    var member: GroupMember? = nil
    /// In a group run: the files (shared, or one per strap), opened once the strap is found.
    var groupFiles: GroupFiles? = nil
    /// In a group run: the adapters it looks and connects through (one, or several with
    /// `--transport A,B`).
    var adapters: StrapAdapters? = nil
    /// With `--serve`: this strap's tile on the live display.
    var display: LiveDisplayFeed? = nil
    /// With `--lsl`: the run's Lab Streaming Layer outlets.
    var lsl: LSLStreams? = nil

    /// Why one connection ended.
    private enum LinkEnd: Error {
        case done
        /// The link went; `ending` is the host's reason when it knows one; `transportFailed`:
        /// the ATT bearer saw the transport under it fail (the controller is gone).
        case lost(String, ending: HostError? = nil, transportFailed: Bool = false)

        /// The link ended: why, as the host knows it, else as the ATT bearer saw it (a transport
        /// that failed under the bearer before the host noticed is as fatal as the host's).
        static func lost(_ connection: any CentralLink, _ bearer: BearerError? = nil, otherwise fallback: String) -> LinkEnd {
            switch connection.ending {
            case .disconnected(let reason)?: return .lost(reason.description, ending: connection.ending)
            case let ending?: return .lost(ending.description, ending: ending)
            case nil: break
            }
            if case .transport(let failure)? = bearer { return .lost(failure, transportFailed: true) }
            // The reason alone: the line that reports it says "disconnected" itself.
            if case .disconnected(let reason)? = bearer { return .lost(reason) }
            return .lost(fallback)
        }
    }

    func run() async throws {
        defer { display?.ended() }
        var received = 0
        var energyReset = !resetEnergy
        var pause = ReconnectPause()
        var reconnecting = false
        var lost: ContinuousClock.Instant?
        var lastFailure: String?
        while true {
            let device = try await findStrap(reconnecting: reconnecting, heardAfter: lost)
            // The adapter of a run with several that the link went through.
            var adapter: Int?
            do {
                try await follow(device, heardAfter: lost, reconnecting: reconnecting, received: &received,
                                 energyReset: &energyReset, adapter: &adapter)
                member?.updateRow { $0.state = .done }
                return
            } catch LinkEnd.done {
                member?.updateRow { $0.state = .done }
                return
            } catch let error as CLIError where member != nil && !error.endsAGroupRun {
                // One strap's own failure (a broken or hostile strap, a controller that refuses
                // one more link): its row and one line say it, the others go on; it is tried
                // again after the pause.
                try Task.checkCancellation()
                report(failed: error, repeated: lastFailure == error.description)
                lastFailure = error.description
                member?.updateRow { $0.state = .failed(error.message) }
                guard reconnect else { return }
                lost = .now
                reconnecting = true
                try await pause.wait()
            } catch LinkEnd.lost(let reason, let ending, let transportFailed) {
                // Ctrl-C closes the link under a running read: that is the end asked for, not a loss.
                try Task.checkCancellation()
                // The controller gone, or no reconnection: the error line alone says it on
                // stderr (a JSON event still says it on stdout).
                let linkHost = adapter.flatMap { adapters?.members[$0].host } ?? host
                let ended: CLIError? = switch ending {
                case .transport?, .closed?: ending.map(linkHost.cliError)
                default: transportFailed ? CLIError(.transport, "\(linkHost.transport): \(reason)") : nil
                }
                // With several adapters, the one that went is left and the strap reconnects
                // through another.
                let movesOn = ended.map { error in adapter.map { adapters?.failOver($0, error) ?? false } ?? false } ?? false
                let fatal = movesOn ? nil : ended
                report(disconnected: reason, onStderr: fatal == nil && reconnect, retryIn: pause.duration)
                if let fatal { throw fatal }
                guard reconnect else {
                    // In a group run this strap is over; the others go on.
                    guard let member else { throw StrapTarget.notReconnecting(device, disconnected: reason) }
                    member.updateRow { $0.state = .failed("disconnected: \(reason)") }
                    return
                }
                reconnecting = true
                lost = .now
                progress(.waiting(pause.duration), reconnecting: true)
                try await pause.wait()
            }
        }
    }

    /// Scans until the target advertises (see ``StrapFinder``); in a group run, waits for the
    /// shared scan to hear it (after `heardAfter`: the link was lost then).
    private func findStrap(reconnecting: Bool, heardAfter: ContinuousClock.Instant?) async throws -> DiscoveredDevice {
        progress(.scanning, reconnecting: reconnecting)
        guard let member, let adapters else { return try await StrapFinder(host: host, waits: waits, target: target).find() }
        member.updateRow { $0.state = .scanning }
        let looking = member.target(target)
        waits.begin(.advertising(looking.description, seenKind: "strap"))
        let device = try await adapters.next(looking, heardAfter: heardAfter, owner: ObjectIdentifier(member))
        member.matched(device)
        return device
    }

    /// Connects to `device` (found after `heardAfter`) and shows its measurements until `count`
    /// or the link ends; in a run with several adapters, `adapter` is the one it went through.
    private func follow(_ device: DiscoveredDevice, heardAfter: ContinuousClock.Instant?, reconnecting: Bool,
                        received: inout Int, energyReset: inout Bool, adapter: inout Int?) async throws {
        progress(.connecting(device), reconnecting: reconnecting)
        let connection: any CentralLink
        // The host the link is on, and what it does when its controller goes.
        var host = host
        var controllerGone = controllerGone
        var placement: StrapAdapters.Placement?
        defer { if let placement { adapters?.release(placement) } }
        if let member, let adapters {
            let placed = try await adapters.connect(device, heardAfter: heardAfter, owner: ObjectIdentifier(member),
                                                    timeout: timeout) { LinkEnd.lost($0) }
            placement = placed
            connection = placed.link
            adapter = placed.index
            host = adapters.members[placed.index].host
            if adapters.several {
                let name = adapters.members[placed.index].name
                member.placed(on: name)
                for refusal in placed.refusedBy { report(full: refusal, connectedThrough: name) }
                let index = placed.index
                controllerGone = { [controllerGone] error in
                    if !adapters.failOver(index, error) { controllerGone(error) }
                }
            }
        } else {
            connection = try await host.connectStrap(device, timeout: timeout) { LinkEnd.lost($0) }
        }
        if let security, let link = connection as? Connection {
            waits.begin(.security(device.address.address, security))
            do {
                // Bounded past SMP's own 30 s timeout, so its line is the one shown.
                try await link.secure(security, timeout: max(timeout, PeerSession.pairingBound))
            } catch {
                try? await connection.disconnect(timeout: .seconds(3))
                switch error {
                case .disconnected, .linkLost: throw LinkEnd.lost(connection, otherwise: error.description)
                default: throw host.cliError(error)
                }
            }
        }
        let gatt = GATTClient.onStrapLink(connection, timeout: timeout)
        defer { gatt.closeInBackground(disconnecting: connection) }
        do {
            waits.begin(.response(device.address.address, "Exchange MTU"))
            try await gatt.exchangeMTU()
            waits.begin(.response(device.address.address, "discovering the Heart Rate service"))
            let monitor = try await HeartRateMonitor.attach(to: gatt)
            var info = await monitor.deviceInfo()
            if info.name == nil { info.name = device.name }
            member?.named(info.name)
            report(connected: connection.peer, info)
            var outlets = try lsl?.heartRate(LSLStrap(address: connection.peer.address, name: info.name,
                                                      manufacturer: info.manufacturer, model: info.model))
            if !energyReset {
                energyReset = true
                do {
                    try await monitor.resetEnergyExpended()
                    report(energyReset: nil)
                } catch {
                    report(energyReset: error)
                }
            }
            let events = try await monitor.measurements()
            waits.begin(.firstValue("measurement", from: device.name.map { GATTString.escaped($0) } ?? "\(device.address.address)"))
            var rate = ArrivalRate()
            // One buffer for the JSON lines of this connection, written with one write(2)
            // whenever no further value is already at hand (see Iterator.bufferedCount).
            var batch: [UInt8] = []
            batch.reserveCapacity(4096)
            var lines = SessionFileWriter(format: .jsonLines, labelled: member != nil)
            let strap = member?.label
            let files = strap.flatMap { groupFiles?.files(for: $0) } ?? (csv: csv, jsonl: jsonl)
            defer { flush(&batch) }
            let silence = SilenceWatch(after: timeout, status: status, device: device, central: host.central,
                                       controllerGone: controllerGone)
            defer { silence.cancel() }
            var iterator = events.makeAsyncIterator()
            var first = true
            while let event = try await iterator.next() {
                silence.heard()
                if first {
                    first = false
                    waits.end()
                }
                switch event {
                case let .measurement(measurement, raw):
                    outlets?.push(measurement)
                    // The arrival rate is only shown to a person (JSON lines carry times).
                    var perSecond: Double?
                    if !json {
                        rate.record(at: .now)
                        perSecond = rate.perSecond
                    }
                    report(measurement, raw: raw, rate: perSecond, strap: strap, files: files, batch: &batch, lines: &lines)
                    received += 1
                    if let count, received >= count {
                        flush(&batch)
                        await monitor.unsubscribe()
                        try? await connection.disconnect(timeout: .seconds(3))
                        throw LinkEnd.done
                    }
                case let .invalid(raw, error):
                    flush(&batch)
                    report(invalid: raw, error: error)
                }
                if iterator.bufferedCount == 0 || batch.count >= Self.batchLimit { flush(&batch) }
            }
            if Task.isCancelled {
                // Ctrl-C: tell the strap to stop before the link goes (not cancelled with us).
                _ = await Task.detached { await monitor.unsubscribe() }.value
                throw CancellationError()
            }
            throw LinkEnd.lost(connection, otherwise: "the link ended")
        } catch let error as HeartRateError {
            if case .gatt(.bearer(let bearer)) = error { throw LinkEnd.lost(connection, bearer, otherwise: error.description) }
            throw CLIError(.peerError, "\(device.address.address): \(error)")
        } catch let error as GATTError {
            if case .bearer(let bearer) = error { throw LinkEnd.lost(connection, bearer, otherwise: error.description) }
            throw CLIError(error.isTimeout ? .timeout : .peerError, "\(device.address.address): \(error)")
        } catch let error as BearerError {
            throw LinkEnd.lost(connection, error, otherwise: "the link ended")
        }
    }

    // MARK: Output

    private func report(connected peer: DeviceAddress, _ info: HeartRateDeviceInfo) {
        display?.connected("\(peer.address)", name: member?.label?.name ?? info.name, battery: info.batteryLevel)
        if json {
            emit(.object([
                ("event", "connected"),
                Self.now,
                ("address", .string(peer.address.description)),
                ("name", JSON(info.name)),
                ("manufacturer", JSON(info.manufacturer)),
                ("model", JSON(info.model)),
                ("bodySensorLocation", info.bodySensorLocation.map { location in
                    location.name.map { JSON.string($0) } ?? JSON(location.rawValue)
                } ?? .null),
                ("battery", info.batteryLevel.map { JSON($0) } ?? .null),
            ]))
        } else if let member, member.table != nil {
            member.updateRow { row in
                row.state = .connected
                row.battery = info.batteryLevel
            }
        } else {
            // The strap's own strings, one line each whatever they hold (a name of escape
            // sequences, a newline that would forge a line of another strap's).
            let text = { (string: String) in GATTString.escaped(string) }
            var parts = ["connected to \(info.name.map(text) ?? peer.address.description) (\(peer.address))"]
            if let manufacturer = info.manufacturer { parts.append(text(manufacturer) + (info.model.map { " \(text($0))" } ?? "")) }
            if let battery = info.batteryLevel { parts.append("battery \(battery) %") }
            if let location = info.bodySensorLocation { parts.append("sensor on the \(location)") }
            printText(parts.joined(separator: ", "))
        }
    }

    /// A batch of JSON lines is written once it reaches this many bytes, even mid-batch.
    private static let batchLimit = 64 * 1024

    /// Writes the batched JSON lines on stdout, with one write(2), and empties the batch.
    private func flush(_ batch: inout [UInt8]) {
        guard !batch.isEmpty else { return }
        status.printLine(bytes: batch)
        batch.removeAll(keepingCapacity: true)
    }

    /// With `--json`, the measurement's line (written by `lines`, the same line as `--jsonl`'s)
    /// is appended to `batch` (for ``flush(_:)``); otherwise it is shown at once.
    private func report(_ measurement: HeartRateMeasurement, raw: [UInt8], rate: Double?, strap: StrapLabel?,
                        files: (csv: AppendFile?, jsonl: AppendFile?), batch: inout [UInt8], lines: inout SessionFileWriter) {
        let time = clock.unixMicroseconds()
        display?.measured(bpm: measurement.bpm, at: time)
        if json || files.jsonl != nil {
            let start = batch.count
            lines.append(measurement, raw: raw, time: time, strap: strap, to: &batch)
            files.jsonl?.append(line: batch[start...])
            if !json { batch.removeAll(keepingCapacity: true) }  // only the file wanted it
        }
        if let event = live?.add(measurement, at: time), json {
            batch += Array(labelled(event).serialized().utf8)
            batch.append(UInt8(ascii: "\n"))
        }
        if let csv = files.csv {
            var writer = SessionFileWriter(format: .csv, labelled: strap != nil)
            var line: [UInt8] = []
            writer.append(measurement, raw: raw, time: time, strap: strap, to: &line)
            csv.append(line: line[...])
        }
        guard !json else { return }
        if let member, member.table != nil {
            let figures = live?.rowFigures()
            member.valueArrived { row in
                row.bpm = measurement.bpm
                row.zone = figures?.zone
                row.rmssd = figures?.rmssd
            }
            return
        }
        let arrival = rate.map { " (\(formatRate($0))/s)" } ?? ""
        printText("♥ \(measurement.summary)\(arrival)")
        if member == nil {
            status.beat(Int(measurement.bpm), live?.statusText(bpm: measurement.bpm) ?? "\(measurement.bpm) bpm")
        }
    }

    /// A line for a person on stdout; in a group run it starts with the strap's name.
    private func printText(_ line: String) {
        if let member {
            status.printLine(member.line(line))
        } else {
            status.printLine(line)
        }
    }

    /// A line on stderr; in a group run it starts with the strap's name (above the table, if drawn).
    private func printError(_ line: String) {
        if let member {
            StatusLine.printErrorAboveActive(member.errorLine(line))
        } else {
            status.printError(line)
        }
    }

    /// `event` with the strap's `address` and `name` after its `time`, in a group run.
    private func labelled(_ event: JSON) -> JSON {
        member?.labelled(event) ?? event
    }

    /// A strap's own failure in a group run: an `error` event, or its line on stderr (once per
    /// distinct failure: a strap that keeps failing the same way is not a stream of lines).
    private func report(failed error: CLIError, repeated: Bool) {
        display?.linkDropped(reconnecting: reconnect)
        if json {
            emit(.object([("event", "error"), Self.now, ("status", JSON(Int(error.status.rawValue))),
                          ("message", .string(error.description))]))
        } else if !repeated {
            printError("rawble: \(error.description) (trying again)")
        }
    }

    /// With several adapters: `refusal`'s adapter refused the link (full), and it went through
    /// `adapter`: an `adapterFull` event, or a line on stderr.
    private func report(full refusal: (name: String, links: Int, reason: String), connectedThrough adapter: String) {
        if json {
            emit(.object([("event", "adapterFull"), Self.now, ("full", .string(refusal.name)), ("links", JSON(refusal.links)),
                          ("message", .string(refusal.reason))]))
        } else {
            printError("rawble: \(refusal.name) is full (\(refusal.reason)): connected through \(adapter)")
        }
    }

    /// A value that does not decode: an `invalid` event (each one), or a line on stderr; in a
    /// group run only its first one (a broken or hostile strap sending nothing else must not
    /// bury the other straps' lines), the rest in its JSON events alone.
    private func report(invalid raw: [UInt8], error: WireError) {
        if json {
            emit(.object([("event", "invalid"), Self.now, ("raw", .hex(raw)), ("error", .string(error.description))]))
        } else if member == nil {
            printError("rawble: a measurement that does not decode (\(Self.hexPreview(raw))): \(error)")
        } else if invalidShown.first() {
            printError("rawble: a measurement that does not decode (\(Self.hexPreview(raw))): \(error) (its further ones are not shown)")
        }
    }

    /// The most bytes of a value a line shows.
    static let previewLimit = 32

    /// `raw` in hex for a line: whole up to ``previewLimit`` bytes, else its start, `…` and its
    /// length (a peer's PDU can be 64 KiB: one line still fits a terminal).
    static func hexPreview(_ raw: [UInt8]) -> String {
        guard raw.count > previewLimit else { return Hex.encode(raw) }
        return Hex.encode(Array(raw.prefix(previewLimit))) + "… (\(raw.count) bytes)"
    }

    /// The link ended: a JSON event, or a line on stderr unless an error line follows (with
    /// what happens next, `retryIn`: a log read later shows why values stopped and that the
    /// run is waiting, not hung).
    private func report(disconnected reason: String, onStderr: Bool, retryIn: Duration) {
        display?.linkDropped(reconnecting: onStderr)
        if json {
            emit(.object([("event", "disconnected"), Self.now, ("reason", .string(reason))]))
        } else if onStderr {
            member?.updateRow { $0.state = .reconnecting(seconds: Int(retryIn.components.seconds)) }
            if member?.table == nil { printError(target.reconnectingLine(disconnected: reason, pause: retryIn)) }
        }
    }

    /// What the run waits for before measurements flow (again).
    private enum Progress {
        /// The pause before scanning again after a lost link.
        case waiting(Duration)
        case scanning
        case connecting(DiscoveredDevice)
    }

    /// Says what the run is waiting for: as every wait is (``WaitStatus``), and while
    /// reconnecting also as a `reconnecting` JSON event (`state`: `waiting` with `seconds`,
    /// `scanning` with `target`, `connecting` with `address`), so a program reading `--json`
    /// can tell a strap being looked for from a hung run. The first connection's steps have no
    /// `reconnecting` event: `connected` follows them, or an error line (and a `status` event
    /// for a step that lasts 2 s).
    private func progress(_ step: Progress, reconnecting: Bool) {
        let fields: [(String, JSON)]
        switch step {
        case .waiting(let pause):
            // A pause of its own, not a wait for the strap: shown as it is.
            waits.end()
            if member == nil { status.show("link lost; scanning again in \(pause.components.seconds) s") }
            fields = [("state", "waiting"), ("seconds", JSON(Int(pause.components.seconds)))]
        case .scanning:
            // The scan itself begins the wait (StrapFinder).
            fields = [("state", "scanning"), ("target", .string(target.description))]
        case .connecting(let device):
            waits.begin(.connection(to: device.address.address, name: device.name))
            fields = [("state", "connecting"), ("address", .string(device.address.address.description))]
                + (device.name.map { [("name", JSON.string($0))] } ?? [])
        }
        if json, reconnecting {
            emit(.object([("event", "reconnecting"), Self.now] + fields))
        }
    }

    /// The peer's answer to the Reset Energy Expended write (`nil`: success).
    private func report(energyReset error: HeartRateError?) {
        if json {
            emit(.object([("event", "energyReset"), Self.now, ("ok", .bool(error == nil))]
                         + (error.map { [("error", JSON.string($0.description))] } ?? [])))
        } else if let error {
            printError("rawble: energy expended not reset: \(error)")
        } else {
            printText("energy expended reset")
        }
    }

    /// The `time` field every event carries, as `measurement` has it: now, ISO 8601 UTC.
    private static var now: (String, JSON) { ("time", .string(iso8601(unixMicroseconds: Clock.unixMicroseconds()))) }

    private func emit(_ value: JSON) {
        status.printLine(labelled(value).serialized())
    }

    private func formatRate(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}

/// Set once, read once: ``first()`` is true for its first caller only.
final class OnceFlag: Sendable {
    private let taken = Atomic<Bool>(false)

    func first() -> Bool { !taken.exchange(true, ordering: .relaxed) }
}

/// Warns (once per silence) when a connected strap sends nothing for a while: usually a strap
/// not worn (no skin contact), which many straps answer by going quiet.
final class SilenceWatch: Sendable {
    /// How many values were heard: one relaxed increment per value (no clock read, no lock on
    /// the hot path); the watcher notices, once a second, whether it moved.
    private let heardCount = Atomic<UInt64>(0)
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// After `limit` without a value it asks `central` whether the controller still answers:
    /// if not, `controllerGone` (the strap is not the problem); if so, a line about the strap.
    init(after limit: Duration, status: StatusLine, device: DiscoveredDevice, central: any Central,
         controllerGone: @escaping @Sendable (HostError) -> Void) {
        let watcher = Task { [weak self] in
            var warned = false
            var lastCount: UInt64 = 0
            var lastHeard = ContinuousClock.now
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                guard let self else { return }
                let count = self.heardCount.load(ordering: .relaxed)
                if count != lastCount {
                    lastCount = count
                    lastHeard = .now
                }
                let silent = ContinuousClock.now - lastHeard
                if silent >= limit, !warned {
                    warned = true
                    do throws(HostError) {
                        try await central.checkController(timeout: min(limit, .seconds(3)))
                    } catch .cancelled {
                        return
                    } catch {
                        controllerGone(error)
                        return
                    }
                    let name = device.name.map { GATTString.escaped($0) } ?? device.address.address.description
                    status.printError("rawble: no measurement from \(name) for \(silent.components.seconds) s: is the strap worn and its contact moist? (still waiting)")
                } else if silent < limit {
                    warned = false
                }
            }
        }
        task.withLock { $0 = watcher }
    }

    func heard() { heardCount.add(1, ordering: .relaxed) }
    func cancel() { task.withLock { $0?.cancel() } }
}

extension GATTError {
    var isTimeout: Bool {
        if case .timeout = self { return true }
        return false
    }
}
