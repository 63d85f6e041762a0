import FoundationEssentials
import RawbleHost
import RawbleHostCore
import RawblePolarCore
import RawbleReport
import RawbleWire
import Synchronization

extension ECG {
    /// `rawble ecg A B` or `ecg --all`: an ``ECGSession`` per H10, all on one host and one
    /// shared scan (``StrapScanHub``, announcing Polar H10s), each with its own link, PMD
    /// streams, R-peaks, gaps and reconnection; found, named and shown as `hr`'s straps are
    /// (``GroupMember``, ``GroupFiles``, a ``StrapTable`` row each). The run ends when every
    /// H10 reached `--count` or `--duration`, at Ctrl-C, or when the controller goes.
    func runGroup() async throws {
        let lslStreams = try lsl.streams()
        let files = try GroupFiles(csv: csv, jsonl: jsonl, csvHeader: ECGSessionWriter(format: .csv, labelled: true).header)
        // Made first: a Ctrl-C while the controller opens is kept for the run's task.
        let interrupt = InterruptWatcher()
        let host = try await HostSession.open(connection, output: output, pairing: nil)
        let json = output.json
        let table = !json && !output.quiet && Output.stdoutIsTerminal ? StrapTable(columns: .ecg) : nil
        // The rows, or lines that start with an H10's name, say what each waits for.
        let status = StatusLine(quiet: true)
        let lookingForAny = all ? WaitStatus(display: status, output: output) : nil
        let hub = StrapScanHub(central: host.central, onHeard: { device in lookingForAny?.saw(device) }, announcing: Self.isH10)
        let sessions = Mutex<[(member: GroupMember, session: ECGSession, waits: WaitStatus)]>([])
        let quiet = output.quiet
        let acceleration = acc ? PMDSettingSelection.h10Acceleration(sampleRate: accRate, range: accRange) : nil
        let (count, reconnect) = (count, reconnect)
        let duration = duration.map { Duration.milliseconds(Int64($0 * 1000)) }
        let timeout = Duration.milliseconds(Int(connection.timeout * 1000))
        let follower: @Sendable (StrapTarget, StrapLabel?) -> ECGSession = { target, label in
            let member = GroupMember(hub: hub, table: table, target: target, label: label)
            let waits = WaitStatus(display: GroupWaitDisplay(member: member), json: json, quiet: quiet, clock: ContinuousClock(),
                                   eventFields: { member.eventFields })
            var session = ECGSession(
                host: host, status: status, waits: waits, target: target, acceleration: acceleration, count: count,
                duration: duration, reconnect: reconnect, json: json, timeout: timeout, csv: nil, jsonl: nil)
            session.member = member
            session.groupFiles = files
            session.lsl = lslStreams
            sessions.withLock { $0.append((member, session, waits)) }
            return session
        }
        let running = Task(executorPreference: host.central.taskExecutor) {
            try await hub.start(on: host)
            try await StrapGroupRun(named: device.map(StrapTarget.init), limit: all ? max ?? 20 : 0, newStraps: hub.newStraps,
                                    lookingForAny: lookingForAny, kind: "Polar H10s") { target, label in
                let session = follower(target, label)
                return { try await session.run() }
            }.run()
        }
        interrupt.onInterrupt { running.cancel() }
        let result = await running.result
        withExtendedLifetime(interrupt) {}
        lookingForAny?.stop()
        await hub.close()
        table?.finish()
        for (member, session, waits) in sessions.withLock({ $0 }) {
            waits.stop()
            if !json, let line = session.summaryLine() { Output.line(member.line(line)) }
        }
        await host.close()
        do {
            try result.get()
        } catch is CancellationError {
            if count != nil || duration != nil { throw CLIError.interrupted }
        } catch let error as HostError {
            // The shared scan's failure (the controller gone): one line naming it.
            throw host.cliError(error)
        }
    }

    /// A Polar H10 as `ecg --all` takes one: its advertised name says so.
    static func isH10(_ device: DiscoveredDevice) -> Bool {
        device.name?.contains("Polar H10") == true
    }
}
