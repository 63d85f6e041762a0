import ArgumentParser
import FoundationEssentials
import RawbleAnalysis
import RawbleBearer
import RawbleGATT
import RawbleGATTCore
import RawbleHeartRate
import RawbleHost
import RawbleHostCore
import RawblePolar
import RawblePolarCore
import RawbleReport
import RawbleWire
import Synchronization

/// `rawble ecg`: raw ECG (and acceleration) from a Polar H10 over Polar's Measurement Data
/// service: shown live, logged one sample a line; when the link drops, scan again and resume.
struct ECG: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ecg",
        abstract: "Stream raw ECG (and acceleration) from a Polar H10.",
        discussion: """
            Examples:
              rawble ecg                                 (the first "Polar H10" heard)
              rawble ecg "Polar H10 A1B2C3D4" --csv ecg.csv --duration 300
              rawble ecg --acc --jsonl session.jsonl     (ECG 130 Hz, acceleration 200 Hz)
              rawble ecg --json --count 1300             (ten seconds of ECG, as JSON)
              rawble ecg "Polar H10 A1B2C3D4" "Polar H10 0E1F2A3B" --csv ecg.csv
              rawble ecg --all --max 4 --csv 'ecg-{name}.csv'  (every H10 in range)

            With several H10s (or --all) each streams on its own link: its own ECG, R-peaks
            and gaps, a row each on a terminal, every JSON event naming its strap (address,
            name). --csv and --jsonl write one file with strap columns, or a file per strap
            when the path holds {name} or {address}; rawble report reports each strap.
            --count and --duration count per strap.

            The strap must be worn (moist electrodes): without skin contact an H10 sends no
            ECG. Ctrl-C stops the streams on the strap before disconnecting, so it does not
            stay on until its battery runs out.
            """)

    @Argument(help: "Device addresses or names (default: the first device whose name contains \"Polar H10\"); several are followed at once.")
    var device: [String] = []
    @Flag(help: "Follow every Polar H10 in range, up to --max.")
    var all = false
    @Option(help: ArgumentHelp("With --all: the most H10s followed at once (default 20).", valueName: "n"))
    var max: Int?
    @Flag(help: "Stream acceleration (x, y, z in mG) as well as ECG.") var acc = false
    @Option(name: .customLong("acc-rate"), help: ArgumentHelp("Acceleration samples per second: 25, 50, 100 or 200.", valueName: "Hz"))
    var accRate: UInt16 = 200
    @Option(name: .customLong("acc-range"), help: ArgumentHelp("Acceleration range: 2, 4 or 8 G.", valueName: "G"))
    var accRange: UInt16 = 8
    @Option(parsing: .unconditional, help: "Stop after this many ECG samples.") var count: Int?
    @Option(help: ArgumentHelp("Stop after this many seconds of streaming.", valueName: "seconds")) var duration: Double?
    @Option(help: ArgumentHelp("Append every sample to a CSV file.", valueName: "file")) var csv: String?
    @Option(help: ArgumentHelp("Append every sample to a JSON lines file.", valueName: "file")) var jsonl: String?
    @Flag(inversion: .prefixedNo, help: "Scan again and reconnect when the link drops.")
    var reconnect = true
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions
    @OptionGroup var lsl: LSLOptions

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let duration, !(duration > 0 && duration <= 86_400 * 7) {
            throw ValidationError("--duration must be more than 0 and at most a week (604800 seconds)")
        }
        if ![25, 50, 100, 200].contains(accRate) { throw ValidationError("--acc-rate must be 25, 50, 100 or 200 (what an H10 offers)") }
        if ![2, 4, 8].contains(accRange) { throw ValidationError("--acc-range must be 2, 4 or 8 (G, what an H10 offers)") }
        try StrapGroupChoice(devices: device, all: all, max: max, ends: count != nil || duration != nil,
                             endNames: "--count or --duration", csv: csv, jsonl: jsonl).validate()
    }

    /// Whether this run follows several H10s (the table, the strap fields).
    private var isGroup: Bool { all || device.count > 1 }

    func run() async throws {
        if isGroup { return try await runGroup() }
        let lslStreams = try lsl.streams()
        let csvFile = try csv.map { try AppendFile(path: $0, header: ECGSessionWriter(format: .csv).header) }
        let jsonlFile = try jsonl.map { try AppendFile(path: $0) }
        let interrupt = InterruptWatcher()
        let host = try await HostSession.open(connection, output: output, pairing: nil)
        let status = StatusLine(quiet: output.quiet)
        let waits = WaitStatus(display: status, output: output)
        let session = ECGSession(
            host: host, status: status, waits: waits, target: StrapTarget(device.first ?? "Polar H10"),
            acceleration: acc ? .h10Acceleration(sampleRate: accRate, range: accRange) : nil,
            count: count, duration: duration.map { .milliseconds(Int64($0 * 1000)) }, reconnect: reconnect,
            json: output.json, timeout: .milliseconds(Int(connection.timeout * 1000)), csv: csvFile, jsonl: jsonlFile, lsl: lslStreams)
        let running = Task(executorPreference: host.central.taskExecutor) { try await session.run() }
        interrupt.onInterrupt { running.cancel() }
        let result = await running.result
        withExtendedLifetime(interrupt) {}
        waits.stop()
        status.stop()
        if !output.json, let line = session.summaryLine() { Output.line(line) }
        await host.close()
        do {
            try result.get()
        } catch is CancellationError {
            if count != nil || duration != nil { throw CLIError.interrupted }
        }
    }
}

/// One `rawble ecg` run: find the H10, connect, start the streams, print and log every sample;
/// reconnect when the link drops (the samples after it follow a `gap` line).
struct ECGSession: Sendable {
    let host: HostSession
    let status: StatusLine
    /// Says what the run waits for: the strap, the connection, the first samples.
    let waits: WaitStatus
    let target: StrapTarget
    /// The acceleration settings, when `--acc` asked for it.
    let acceleration: PMDSettingSelection?
    let count: Int?
    let duration: Duration?
    let reconnect: Bool
    let json: Bool
    let timeout: Duration
    let csv: AppendFile?
    let jsonl: AppendFile?
    /// In a group run (several H10s): how this strap is found, named and shown; `nil` for the
    /// one H10 of a plain run.
    var member: GroupMember? = nil
    /// In a group run: the files (shared, or one per strap), opened once the strap is found.
    var groupFiles: GroupFiles? = nil
    /// With `--lsl`: the run's Lab Streaming Layer outlets.
    var lsl: LSLStreams? = nil

    /// What the run has done so far, across reconnections.
    final class Progress: Sendable {
        struct State {
            var ecgSamples = 0
            var accelerationVectors = 0
            /// Host time of the last sample written (a reconnection's gap is measured from it).
            var lastSampleMicroseconds: Int64?
            var streamingSince: ContinuousClock.Instant?
            var strapBPM: Int?
            /// The heart rate from the ECG's last R-peaks.
            var ecgBPM: Int?
        }
        let state = Mutex(State())
    }

    private enum LinkEnd: Error {
        case done
        case lost(String)
    }

    /// What the run did, across reconnections.
    let progress = Progress()

    /// The line a person sees last: what was received, and the heart rates.
    func summaryLine() -> String? {
        let state = progress.state.withLock { $0 }
        guard state.ecgSamples > 0 || state.accelerationVectors > 0 else { return nil }
        var parts = ["\(state.ecgSamples) ECG samples"]
        if state.accelerationVectors > 0 { parts.append("\(state.accelerationVectors) acceleration vectors") }
        if let since = state.streamingSince {
            parts[parts.count - 1] += " in \((ContinuousClock.now - since).components.seconds) s"
        }
        var line = parts.joined(separator: " and ")
        if let bpm = state.ecgBPM { line += "; ECG \(bpm) bpm" }
        if let bpm = state.strapBPM { line += ", strap \(bpm) bpm" }
        return line
    }

    func run() async throws {
        let progress = self.progress
        var pause = ReconnectPause()
        var reconnecting = false
        var lost: ContinuousClock.Instant?
        var lastFailure: String?
        while true {
            if json, reconnecting { emit([("event", "reconnecting"), ("state", "scanning"), ("target", .string(target.description))]) }
            let device = if let member {
                try await member.find(target, waits: waits, heardAfter: lost)
            } else {
                try await StrapFinder(host: host, waits: waits, target: target).find()
            }
            do {
                try await follow(device, progress: progress)
                member?.updateRow { $0.state = .done }
                return
            } catch LinkEnd.done {
                member?.updateRow { $0.state = .done }
                return
            } catch let error as CLIError where member != nil && !error.endsAGroupRun {
                // One H10's own failure: its row and one line say it, the others go on; it is
                // tried again after the pause.
                try Task.checkCancellation()
                if json {
                    emit([("event", "error"), ("status", JSON(Int(error.status.rawValue))), ("message", .string(error.description))])
                } else if lastFailure != error.description {
                    printError("rawble: \(error.description)\(reconnect ? " (trying again)" : "")")
                }
                lastFailure = error.description
                member?.updateRow { $0.state = .failed(error.message) }
                guard reconnect else { return }
                lost = .now
                reconnecting = true
                try await pause.wait()
            } catch LinkEnd.lost(let reason) {
                try Task.checkCancellation()
                if json {
                    emit([("event", "disconnected"), ("reason", .string(reason))])
                } else if reconnect {
                    member?.updateRow { $0.state = .reconnecting(seconds: Int(pause.duration.components.seconds)) }
                    if member?.table == nil { printError(target.reconnectingLine(disconnected: reason, pause: pause.duration)) }
                }
                guard reconnect else {
                    // In a group run this H10 is over; the others go on.
                    guard let member else { throw StrapTarget.notReconnecting(device, disconnected: reason) }
                    member.updateRow { $0.state = .failed("disconnected: \(reason)") }
                    return
                }
                reconnecting = true
                lost = .now
                waits.end()
                if member == nil { status.show("link lost; scanning again in \(pause.duration.components.seconds) s") }
                try await pause.wait()
            }
        }
    }

    /// The files this H10's lines go to: its own or the shared ones in a group run.
    private var files: (csv: AppendFile?, jsonl: AppendFile?) {
        member?.label.flatMap { groupFiles?.files(for: $0) } ?? (csv: csv, jsonl: jsonl)
    }

    /// A writer of this run's file lines: in a group run each names its strap.
    private func writer(_ format: SessionFileFormat) -> ECGSessionWriter {
        ECGSessionWriter(format: format, labelled: member != nil, strap: member?.label)
    }

    /// Connects to `device`, starts the streams and writes their samples until the count, the
    /// duration, Ctrl-C, or the link's end.
    private func follow(_ device: DiscoveredDevice, progress: Progress) async throws {
        waits.begin(.connection(to: device.address.address, name: device.name))
        let connection = if let member {
            try await member.connect(device, host: host, timeout: timeout) { LinkEnd.lost($0) }
        } else {
            try await host.connectStrap(device, timeout: timeout) { LinkEnd.lost($0) }
        }
        let gatt = GATTClient.onStrapLink(connection, timeout: timeout)
        defer { gatt.closeInBackground(disconnecting: connection) }
        let pmd: PMDClient
        do {
            waits.begin(.response(device.address.address, "Exchange MTU"))
            let mtu = try await gatt.exchangeMTU()
            waits.begin(.response(device.address.address, "discovering the Polar Measurement Data service"))
            pmd = try await PMDClient.attach(to: gatt)
            let features = try await pmd.features()
            for (type, wanted) in [(PMDMeasurementType.ecg, true), (.acceleration, acceleration != nil)] where wanted && !features.contains(type) {
                throw CLIError(.peerError, "\(device.address.address): \(PMDError.notOffered(type, offered: features))")
            }
            report(connected: connection.peer, name: device.name, mtu: mtu)
        } catch let error as PMDError {
            throw lostOrFailed(error, device: device, connection: connection)
        } catch let error as GATTError {
            throw lostOrFailed(PMDError.gatt(error), device: device, connection: connection)
        }
        // With --lsl: the strap's streams, its Device Information in their metadata.
        var outlets: (pmd: PMDOutlets, heartRate: HeartRateOutlets)?
        if let lsl {
            let info = try? await HeartRateMonitor.attach(to: gatt).deviceInfo()
            let strap = LSLStrap(address: device.address.address, name: info?.name ?? device.name,
                                 manufacturer: info?.manufacturer, model: info?.model)
            outlets = (try lsl.pmd(strap, accelerationRate: acceleration?.sampleRate), try lsl.heartRate(strap))
        }
        // On the host's loop, like the frames: a notification is handled where it arrives.
        let files = self.files
        let heartRate = Task(executorPreference: host.central.taskExecutor) { [outlets] in
            await followHeartRate(gatt, progress: progress, files: files, lsl: outlets?.heartRate)
        }
        defer { heartRate.cancel() }
        let events = await pmd.events()
        do {
            waits.begin(.response(device.address.address, "starting ECG"))
            try await pmd.start(.ecg, settings: .h10ECG)
            emitStarted(.ecg, PMDSettingSelection.h10ECG)
            if let acceleration {
                try await pmd.start(.acceleration, settings: acceleration)
                emitStarted(.acceleration, acceleration)
            }
        } catch {
            throw lostOrFailed(error, device: device, connection: connection)
        }
        waits.begin(.firstValue("ECG samples", from: device.name.map { GATTString.escaped($0) } ?? "\(device.address.address)"))
        do {
            try await stream(events, from: pmd, progress: progress, files: files, lsl: outlets?.pmd)
        } catch is CancellationError {
            // Ctrl-C: stop the streams on the strap before the link goes (not cancelled with us).
            _ = await Task.detached { await pmd.close() }.value
            throw CancellationError()
        } catch LinkEnd.done {
            await pmd.close()
            try? await connection.disconnect(timeout: .seconds(3))
            throw LinkEnd.done
        } catch let error as PMDError {
            throw lostOrFailed(error, device: device, connection: connection)
        }
        if Task.isCancelled {
            _ = await Task.detached { await pmd.close() }.value
            throw CancellationError()
        }
        throw LinkEnd.lost(connection.ending?.description ?? "the link ended")
    }

    /// Writes each frame's samples until the count or the duration.
    private func stream(_ events: PMDEvents, from pmd: PMDClient, progress: Progress,
                        files: (csv: AppendFile?, jsonl: AppendFile?), lsl outlets: PMDOutlets?) async throws {
        let (csv, jsonl) = files
        var outlets = outlets
        var ecgLines = writer(.jsonLines)
        var csvLines = writer(.csv)
        var eventLines = ECGEventLines(strap: member?.label)
        var batch: [UInt8] = []
        var csvBatch: [UInt8] = []
        /// `--json`'s `ecg`, `acc` and `beat` events, written on stdout with the files' lines.
        var eventBatch: [UInt8] = []
        batch.reserveCapacity(16 * 1024)
        // The trace is drawn only on a terminal (and without --json or --quiet).
        let drawing = !json && status.enabled
        var trace = ECGTrace(width: 64)
        var beats = LiveBeats()
        /// Device time → host time (µs), measured on the first frame of this connection.
        var offset: Int64?
        var gapMarked = false
        // --duration counts from the first start, across reconnections.
        let deadline = progress.state.withLock { state -> ContinuousClock.Instant? in
            let since = state.streamingSince ?? .now
            state.streamingSince = since
            return duration.map { since + $0 }
        }
        var iterator = events.makeAsyncIterator()
        // At the deadline the streams stop (the client's close ends the sequence normally).
        let deadlineTask = deadline.map { deadline in
            Task {
                guard (try? await Task.sleep(until: deadline)) != nil else { return }
                await pmd.close()
            }
        }
        defer { deadlineTask?.cancel() }
        var first = true
        while true {
            guard let event = try await iterator.next() else {
                try Task.checkCancellation()
                if let deadline, ContinuousClock.now >= deadline {
                    flush(&batch, &csvBatch, &eventBatch, to: files)
                    throw LinkEnd.done
                }
                flush(&batch, &csvBatch, &eventBatch, to: files)
                return
            }
            if first {
                first = false
                waits.end()
            }
            let now = Clock.unixMicroseconds()
            func hostTime(_ device: UInt64) -> Int64 {
                let deviceMicroseconds = Int64(clamping: device / 1000)
                if offset == nil { offset = now - deviceMicroseconds }
                return deviceMicroseconds &+ (offset ?? 0)
            }
            if !gapMarked {
                gapMarked = true
                if let last = progress.state.withLock({ $0.lastSampleMicroseconds }) {
                    let milliseconds = (now - last) / 1000
                    if json {
                        flush(&batch, &csvBatch, &eventBatch, to: files)
                        emit([("event", "gap"), ("seconds", .double(Double(milliseconds) / 1000))])
                    }
                    if jsonl != nil { ecgLines.appendGap(milliseconds: milliseconds, time: now, to: &batch) }
                    if csv != nil { csvLines.appendGap(milliseconds: milliseconds, time: now, to: &csvBatch) }
                }
            }
            switch event {
            case .ecg(let frame):
                var written = progress.state.withLock { $0.ecgSamples }
                let wanted = count.map { max(0, $0 - written) } ?? frame.microvolts.count
                let samples = min(wanted, frame.microvolts.count)
                if jsonl != nil || csv != nil || drawing {
                    for index in 0..<samples {
                        let value = frame.microvolts[index]
                        if jsonl != nil || csv != nil {
                            let time = hostTime(frame.times[index])
                            if jsonl != nil { ecgLines.appendECG(value, deviceTime: frame.times[index], time: time, to: &batch) }
                            if csv != nil { csvLines.appendECG(value, deviceTime: frame.times[index], time: time, to: &csvBatch) }
                        }
                        if drawing { trace.add(value) }
                    }
                }
                for beat in beats.add(frame) where json {
                    eventLines.appendBeat(deviceTime: beat.deviceTime,
                                          rrSeconds: beat.rrMilliseconds.map { ($0 * 10).rounded() / 10_000 },
                                          time: now, to: &eventBatch)
                }
                if let bpm = beats.heartRate { progress.state.withLock { $0.ecgBPM = bpm } }
                outlets?.push(frame, count: samples)
                written += samples
                progress.state.withLock { state in
                    state.ecgSamples = written
                    state.lastSampleMicroseconds = now
                }
                if json, samples > 0 { eventLines.appendECG(frame, count: samples, time: now, to: &eventBatch) }
                if drawing { showTrace(trace, progress: progress) }
                if member?.table != nil {
                    let bpm = beats.heartRate
                    member?.valueArrived { row in
                        row.bpm = bpm.map { UInt16(clamping: $0) }
                        row.samples = written
                    }
                }
                if let count, written >= count {
                    flush(&batch, &csvBatch, &eventBatch, to: files)
                    throw LinkEnd.done
                }
            case .acceleration(let frame):
                if jsonl != nil || csv != nil {
                    for index in frame.vectors.indices {
                        let vector = frame.vectors[index]
                        let time = hostTime(frame.times[index])
                        if jsonl != nil { ecgLines.appendAcceleration(vector, deviceTime: frame.times[index], time: time, to: &batch) }
                        if csv != nil { csvLines.appendAcceleration(vector, deviceTime: frame.times[index], time: time, to: &csvBatch) }
                    }
                }
                outlets?.push(frame)
                progress.state.withLock { state in
                    state.accelerationVectors += frame.vectors.count
                    state.lastSampleMicroseconds = now
                }
                if json { eventLines.appendAcceleration(frame, time: now, to: &eventBatch) }
            case .frame(let frame):
                if json { flush(&batch, &csvBatch, &eventBatch, to: files); emit([("event", "frame"), ("type", .string(frame.type.description))]) }
            case let .invalid(raw, error):
                if json {
                    flush(&batch, &csvBatch, &eventBatch, to: files)
                    emit([("event", "invalid"), ("raw", .hex(raw)), ("error", .string(error.description))])
                } else {
                    printError("rawble: a PMD frame that does not decode (\(Hex.encode(raw.prefix(32)))\(raw.count > 32 ? "…" : "")): \(error)")
                }
            case .stopped(let streams):
                if json { flush(&batch, &csvBatch, &eventBatch, to: files); emit([("event", "stopped"), ("streams", .array(streams.map { .string($0.description) }))]) }
            }
            if iterator.bufferedCount == 0 || batch.count + csvBatch.count + eventBatch.count >= 64 * 1024 {
                flush(&batch, &csvBatch, &eventBatch, to: files)
            }
        }
    }

    /// The file lines and the `--json` events gathered, written (each with one write(2)).
    private func flush(_ batch: inout [UInt8], _ csvBatch: inout [UInt8], _ eventBatch: inout [UInt8],
                       to files: (csv: AppendFile?, jsonl: AppendFile?)) {
        let (csv, jsonl) = files
        if !eventBatch.isEmpty {
            status.printLine(bytes: eventBatch)
            eventBatch.removeAll(keepingCapacity: true)
        }
        if !batch.isEmpty {
            jsonl?.append(line: batch[...])
            batch.removeAll(keepingCapacity: true)
        }
        if !csvBatch.isEmpty {
            csv?.append(line: csvBatch[...])
            csvBatch.removeAll(keepingCapacity: true)
        }
    }

    /// The strap's own heart rate (its Heart Rate service), for the status line and `hr` events.
    private func followHeartRate(_ gatt: GATTClient, progress: Progress, files: (csv: AppendFile?, jsonl: AppendFile?),
                                 lsl outlets: HeartRateOutlets?) async {
        let (csv, jsonl) = files
        var outlets = outlets
        do {
            let monitor = try await HeartRateMonitor.attach(to: gatt)
            var jsonlWriter = writer(.jsonLines)
            var csvWriter = writer(.csv)
            for try await event in try await monitor.measurements() {
                guard case .measurement(let measurement, let raw) = event else { continue }
                progress.state.withLock { $0.strapBPM = Int(measurement.bpm) }
                outlets?.push(measurement)
                member?.updateRow { $0.strapBPM = measurement.bpm }
                let now = Clock.unixMicroseconds()
                if let jsonl {
                    var line: [UInt8] = []
                    jsonlWriter.appendHeartRate(raw: raw, time: now, to: &line)
                    jsonl.append(line: line[...])
                }
                if let csv {
                    var line: [UInt8] = []
                    csvWriter.appendHeartRate(raw: raw, time: now, to: &line)
                    csv.append(line: line[...])
                }
                if json {
                    emit([("event", "hr"), ("bpm", JSON(Int(measurement.bpm))),
                          ("rrIntervals", .array(measurement.rrIntervals.map { .double($0.milliseconds / 1000) }))])
                }
            }
        } catch {
            // The strap's heart rate is extra: without it, the ECG goes on.
        }
    }

    private func showTrace(_ trace: ECGTrace, progress: Progress) {
        let (samples, strap, ecg, since) = progress.state.withLock { ($0.ecgSamples, $0.strapBPM, $0.ecgBPM, $0.streamingSince) }
        let elapsed = since.map { ContinuousClock.now - $0 } ?? .seconds(Double(samples) / 130)
        let seconds = elapsed.components.seconds
        let clock = "\(seconds / 60):\(seconds % 60 < 10 ? "0" : "")\(seconds % 60)"
        let strapText = strap.map { " · strap \($0) bpm" } ?? ""
        let ecgText = ecg.map { " \($0) bpm" } ?? " – bpm"
        // Its own clock shown: no spinner and no seconds after it.
        status.show("ECG \(trace.rendered)\(ecgText)\(strapText) · \(clock) · \(samples) samples", counting: false)
    }

    /// A failure as the run's end: the link's loss (reconnect) or one line for the person.
    private func lostOrFailed(_ error: any Error, device: DiscoveredDevice, connection: any CentralLink) -> any Error {
        let pmdError = PMDError(error)
        switch pmdError {
        case .gatt(.bearer), .closed:
            return LinkEnd.lost(connection.ending?.description ?? pmdError.description)
        case .silent, .stoppedByDevice:
            // The strap stopped sending: a new connection starts the streams again.
            if reconnect { return LinkEnd.lost(pmdError.description) }  // follow's exit disconnects
            return CLIError(.peerError, "\(device.address.address): \(pmdError)")
        case .gatt(let gattError) where gattError.isTimeout:
            return CLIError(.timeout, "\(device.address.address): \(pmdError)")
        case .noResponse:
            return CLIError(.timeout, "\(device.address.address): \(pmdError)")
        default:
            if let cli = error as? CLIError { return cli }
            return CLIError(.peerError, "\(device.address.address): \(pmdError)")
        }
    }

    private func report(connected peer: DeviceAddress, name: String?, mtu: UInt16) {
        if json {
            emit([("event", "connected"), ("address", .string(peer.address.description)), ("name", JSON(name)), ("mtu", JSON(Int(mtu)))])
        } else {
            // The peer's name as it sent it could hold terminal escapes or a newline.
            let line = "connected to \(name.map { GATTString.escaped($0) } ?? peer.address.description) (\(peer.address)), ATT MTU \(mtu)"
            if let member {
                member.updateRow { $0.state = .connected }
                if member.table == nil { status.printLine(member.line(line)) }
            } else {
                status.printLine(line)
            }
        }
    }

    private func emitStarted(_ type: PMDMeasurementType, _ settings: PMDSettingSelection) {
        guard json else { return }
        emit([("event", "started"), ("type", .string(type.description)),
              ("sampleRate", settings.sampleRate.map { JSON(Int($0)) } ?? .null),
              ("range", settings.range.map { JSON(Int($0)) } ?? .null)])
    }

    /// One JSON event, with the time it is written (in a group run, and the strap's address and name).
    private func emit(_ fields: [(String, JSON)]) {
        let now = ("time", JSON.string(iso8601(unixMicroseconds: Clock.unixMicroseconds())))
        let event = JSON.object([fields[0], now] + fields.dropFirst())
        status.printLine((member?.labelled(event) ?? event).serialized())
    }

    /// A line on stderr; in a group run it starts with the strap's name (above the table, if drawn).
    private func printError(_ line: String) {
        if let member {
            StatusLine.printErrorAboveActive(member.errorLine(line))
        } else {
            status.printError(line)
        }
    }
}

/// R-peaks found live in the ECG frames of one stream (``StreamingRPeakDetector``), each with
/// its device time and the RR interval before it, and the heart rate from the last few.
struct LiveBeats: Sendable {
    struct Beat: Sendable {
        /// The R-peak's time on the device (PMD time, ns).
        var deviceTime: UInt64
        /// The interval since the previous R-peak, ms (nil for the stream's first).
        var rrMilliseconds: Double?
    }

    private var detector = StreamingRPeakDetector(samplingRate: 130)
    /// The recent frames' first sample index and times: a peak is reported up to
    /// `maximumLatency` samples late, so its frame is among these.
    private var frames: [(first: Int, times: PMDSampleTimes)] = []
    private var received = 0
    private var lastPeakTime: UInt64?
    private var recent: [Double] = []
    /// The frame's samples as the detector takes them, reused from frame to frame.
    private var scratch: [Double] = []

    /// The frame's samples fed to the detector; the R-peaks it confirmed.
    mutating func add(_ frame: PMDECGFrame) -> [Beat] {
        frames.append((received, frame.times))
        received += frame.microvolts.count
        let reach = detector.maximumLatency + 2 * frame.microvolts.count
        frames.removeAll { $0.first + $0.times.count < received - reach }
        var beats: [Beat] = []
        scratch.removeAll(keepingCapacity: true)
        for sample in frame.microvolts { scratch.append(Double(sample)) }
        for peak in detector.append(scratch) {
            guard let owner = frames.last(where: { $0.first <= peak }), peak - owner.first < owner.times.count else { continue }
            let time = owner.times[peak - owner.first]
            let rr = lastPeakTime.flatMap { time > $0 ? Double(time - $0) / 1e6 : nil }
            lastPeakTime = time
            if let rr {
                recent.append(rr)
                if recent.count > 8 { recent.removeFirst() }
            }
            beats.append(Beat(deviceTime: time, rrMilliseconds: rr))
        }
        return beats
    }

    /// Beats per minute from the last (up to eight) RR intervals; nil before two beats.
    var heartRate: Int? {
        guard !recent.isEmpty else { return nil }
        let mean = recent.reduce(0, +) / Double(recent.count)
        return mean > 0 ? Int((60_000 / mean).rounded()) : nil
    }
}

/// The last few seconds of ECG as one line of Braille dots: each character two samples wide
/// and four dots high, scaled to the window's own minimum and maximum.
struct ECGTrace: Sendable {
    private var samples: [Int32] = []
    private let capacity: Int
    /// The newest sample's position in `samples` once full (a ring).
    private var next = 0

    /// A trace `width` characters wide (`2 × width` samples: at 130 Hz, 64 characters are 1 s).
    init(width: Int) {
        capacity = max(1, width) * 2
        samples.reserveCapacity(capacity)
    }

    mutating func add(_ sample: Int32) {
        if samples.count < capacity {
            samples.append(sample)
        } else {
            samples[next] = sample
            next = (next + 1) % capacity
        }
    }

    /// Oldest first.
    var ordered: [Int32] { Array(samples[next...] + samples[..<next]) }

    var rendered: String {
        let values = ordered
        guard let low = values.min(), let high = values.max() else { return "" }
        let span = max(1, Int64(high) - Int64(low))
        // Braille dots, bottom to top, left column then right column (U+2800 + bits).
        let left: [UInt32] = [0x40, 0x04, 0x02, 0x01]
        let right: [UInt32] = [0x80, 0x20, 0x10, 0x08]
        func level(_ value: Int32) -> Int { Int((Int64(value) - Int64(low)) * 3 / span) }
        var text = ""
        var index = 0
        while index < values.count {
            var bits = left[level(values[index])]
            if index + 1 < values.count { bits |= right[level(values[index + 1])] }
            text.unicodeScalars.append(Unicode.Scalar(0x2800 + bits) ?? " ")
            index += 2
        }
        return text
    }
}
