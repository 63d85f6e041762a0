import Foundation
import Glibc
import RawbleWire
import Synchronization

/// A running `Scripts/bumble-peer`: Google Bumble's virtual controller served as H4 on TCP or a
/// unix socket, with LE peripherals (heart-rate strap, beacon, thermometer, broken advertiser,
/// and with `--lab` the GATT test device `rawble-lab`) on its virtual link. Each test starts its
/// own peer and stops it (also on deinit).
public final class BumblePeer: Sendable {
    /// Where the controller is served, as the ready line says: `tcp:HOST:PORT` or `unix:PATH`.
    public let transport: String
    /// The TCP host, for a `tcp:` transport.
    public let host: String?
    /// The TCP port, for a `tcp:` transport.
    public let port: UInt16?
    /// The unix socket path, for a `unix:` transport.
    public let socketPath: String?
    /// Every controller served on the peer's one link, in port order (`ports:` of ``start(arguments:ports:environment:readyTimeout:)``):
    /// the first is ``transport``. Each is driven by its own host, and all see the same link.
    public let controllers: [ServedController]
    /// Every served controller's transport string (`tcp:127.0.0.1:PORT` or `unix:PATH`), in order.
    public var transports: [String] { controllers.map(\.transport) }
    /// What each peripheral advertises, from the ready line.
    public let devices: [Device]
    /// The heart-rate straps among ``devices``: `rawble-strap` (unless `--strap-only --straps N`)
    /// and `rawble-strap-01` ... of `--straps N`, in that order.
    public var straps: [Device] { devices.filter { $0.heartRate != nil } }
    /// The peer process.
    public let pid: Int32
    /// The JSON-lines file where the strap logs each Heart Rate Measurement it sends.
    public let logPath: String
    /// The file holding the peer's stderr (its logs).
    public let stderrPath: String
    /// The JSON-lines file where `rawble-lab` logs each completed write and Service Changed.
    public let writeLogPath: String
    /// The JSON-lines file where `rawble-lab` logs each stream value it sends and a summary per run.
    public let streamLogPath: String

    private let state: Mutex<State>

    private struct State {
        var stdinFD: Int32
        var stopped = false
    }
    /// The process's end, once reaped (by the thread `stop()` starts).
    private let processExit = ProcessExit()

    private init(ready: ReadyLine, pid: Int32, stdinFD: Int32, logPath: String, stderrPath: String,
                 writeLogPath: String, streamLogPath: String) {
        transport = ready.transport
        controllers = ready.controllers ?? [ServedController(transport: ready.transport, publicAddress: "00:00:00:00:00:00")]
        devices = ready.devices
        self.pid = pid
        self.logPath = logPath
        self.stderrPath = stderrPath
        self.writeLogPath = writeLogPath
        self.streamLogPath = streamLogPath
        state = Mutex(State(stdinFD: stdinFD))
        if ready.transport.hasPrefix("tcp:") {
            let rest = ready.transport.dropFirst(4)
            let colon = rest.lastIndex(of: ":")
            host = colon.map { String(rest[..<$0]) }
            port = colon.flatMap { UInt16(rest[rest.index(after: $0)...]) }
            socketPath = nil
        } else if ready.transport.hasPrefix("unix:") {
            socketPath = String(ready.transport.dropFirst(5))
            host = nil
            port = nil
        } else {
            socketPath = nil
            host = nil
            port = nil
        }
    }

    deinit { stop() }

    /// The executable that is run: `RAWBLE_BUMBLE_PEER` if set, else `Scripts/bumble-peer` in
    /// this package (a launcher that runs the peer with the project's own Python environment,
    /// the one `Scripts/bootstrap` makes: `RAWBLE_VENV`, default `.build/venv`).
    public static var scriptPath: String {
        if let path = ProcessInfo.processInfo.environment["RAWBLE_BUMBLE_PEER"], !path.isEmpty {
            return path
        }
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent("Scripts/bumble-peer").path
    }

    /// Starts `Scripts/bumble-peer` with `arguments` (e.g. `["--unix", path]`,
    /// `["--hr-count", "5"]`) and waits at most `readyTimeout` for its ready line. Throws
    /// ``BumblePeerError/bumbleNotInstalled`` when the project's Python environment or Bumble in
    /// it is missing (fix: `Scripts/bootstrap`). `environment` is added to this process's
    /// environment for the peer (e.g. `RAWBLE_VENV`, `BUMBLE_SNOOPER`). `ports` > 1 serves that
    /// many controllers on the one link (``controllers``), each for its own host: e.g. rawble's
    /// peripheral on one and rawble's central on another.
    public static func start(
        arguments: [String] = [], ports: Int = 1, environment: [String: String] = [:],
        readyTimeout: Duration = .seconds(30)
    ) async throws -> BumblePeer {
        let arguments = ports > 1 ? arguments + ["--ports", "\(ports)"] : arguments
        let (peer, output) = try await launch(script: scriptPath, arguments: arguments, environment: environment,
                                              readyTimeout: readyTimeout)
        _ = close(output)
        return peer
    }

    /// Starts `script` as ``start(arguments:ports:environment:readyTimeout:)`` does and returns
    /// the peer with its stdout, still open after the ready line (the caller reads or closes it).
    static func launch(
        script: String, arguments: [String], environment: [String: String], readyTimeout: Duration
    ) async throws -> (BumblePeer, output: Int32) {
        guard FileManager.default.isExecutableFile(atPath: script) else {
            throw BumblePeerError.scriptNotFound(path: script)
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("rawble-bumble-peer-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let stderrPath = directory.appendingPathComponent("stderr.log").path
        var logPath = directory.appendingPathComponent("heart-rate.jsonl").path
        var arguments = arguments
        if let index = arguments.firstIndex(of: "--log"), index + 1 < arguments.count {
            logPath = arguments[index + 1]
        } else {
            arguments += ["--log", logPath]
        }
        var writeLogPath = directory.appendingPathComponent("lab-writes.jsonl").path
        if let index = arguments.firstIndex(of: "--write-log"), index + 1 < arguments.count {
            writeLogPath = arguments[index + 1]
        } else {
            arguments += ["--write-log", writeLogPath]
        }
        var streamLogPath = directory.appendingPathComponent("lab-stream.jsonl").path
        if let index = arguments.firstIndex(of: "--stream-log"), index + 1 < arguments.count {
            streamLogPath = arguments[index + 1]
        } else {
            arguments += ["--stream-log", streamLogPath]
        }

        let child = try ChildProcess.spawn([script] + arguments, environment: environment, stderrPath: stderrPath)
        let line: String?
        do {
            line = try await ChildProcess.readLine(fd: child.stdoutFD, timeout: readyTimeout)
        } catch {
            _ = close(child.stdoutFD)
            await child.terminated()
            throw error
        }
        guard let line else {
            _ = close(child.stdoutFD)
            let status = await child.terminated()
            let last = ChildProcess.lastLine(ofFile: stderrPath)
            // Scripts/venv-python's one line (no environment, or no Bumble in it), or Python's
            // own when the environment lost Bumble.
            if last.contains("run Scripts/bootstrap") || last.contains("No module named 'bumble'") {
                throw BumblePeerError.bumbleNotInstalled
            }
            throw BumblePeerError.exitedBeforeReady(status: status, lastStderrLine: last)
        }
        guard let ready = try? JSONDecoder().decode(ReadyLine.self, from: Data(line.utf8)), ready.ready else {
            _ = close(child.stdoutFD)
            await child.terminated()
            throw BumblePeerError.malformedReadyLine(String(line.prefix(200)))
        }
        let peer = BumblePeer(ready: ready, pid: child.pid, stdinFD: child.stdinFD, logPath: logPath,
                              stderrPath: stderrPath, writeLogPath: writeLogPath, streamLogPath: streamLogPath)
        return (peer, child.stdoutFD)
    }

    /// Writes `line` and a newline to the peer's stdin (requests to `--central`); false once
    /// the peer is stopped or its stdin is closed.
    func writeInputLine(_ line: String) -> Bool {
        state.withLock { state in
            guard !state.stopped else { return false }
            // A peer that has exited makes the write fail with EPIPE and raise SIGPIPE, which
            // would end the test process: blocked on this thread for the write, a pending one
            // taken back before the mask is restored.
            var pipeSignal = sigset_t()
            var previous = sigset_t()
            sigemptyset(&pipeSignal)
            sigaddset(&pipeSignal, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
            defer {
                var pending = sigset_t()
                sigpending(&pending)
                if sigismember(&pending, SIGPIPE) == 1 && sigismember(&previous, SIGPIPE) == 0 {
                    var zero = timespec(tv_sec: 0, tv_nsec: 0)
                    _ = sigtimedwait(&pipeSignal, nil, &zero)
                }
                pthread_sigmask(SIG_SETMASK, &previous, nil)
            }
            let bytes = Array((line + "\n").utf8)
            var written = 0
            while written < bytes.count {
                let count = bytes[written...].withUnsafeBytes { write(state.stdinFD, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                written += count
            }
            return true
        }
    }

    /// Stops the peer and returns at once: closes its stdin and sends SIGTERM, then waits at
    /// most 3 s for it to exit (then SIGKILL) and reaps it on a thread of its own. Tests call
    /// it in `defer`, on one of Swift's cooperative threads (two on a 2-core machine): waiting
    /// there for Python to shut down held a thread every other test of the run needs, up to
    /// 3 s per peer. ``stopAndWait()`` also waits for the process to be gone. Idempotent.
    public func stop() {
        let stdinFD: Int32? = state.withLock { state in
            if state.stopped { return nil }
            state.stopped = true
            return state.stdinFD
        }
        guard let stdinFD else { return }
        let (pid, processExit) = (self.pid, self.processExit)
        Thread.detachNewThread { processExit.finish(ChildProcess.terminate(pid: pid, stdinFD: stdinFD)) }
    }

    /// Stops the peer as ``stop()`` does and returns once it exited and was reaped, with its
    /// exit code (or 128 + the signal that ended it).
    @discardableResult
    public func stopAndWait() async -> Int32 {
        stop()
        return await processExit.status()
    }

    /// The strap's log as written so far; `nil` before the strap wrote its first line.
    private func logText() throws -> String? {
        guard FileManager.default.fileExists(atPath: logPath) else { return nil }
        do {
            return try String(contentsOfFile: logPath, encoding: .utf8)
        } catch {
            throw BumblePeerError.unreadableLog(path: logPath, reason: "\(error)")
        }
    }

    /// The Heart Rate Measurement values the strap has sent so far, in order, from its log
    /// (invalid ones included: ``sentHeartRateMeasurements(strap:)`` says which).
    public func sentHeartRateValues() throws -> [[UInt8]] {
        guard let text = try logText() else { return [] }
        var values: [[UInt8]] = []
        for line in text.split(separator: "\n") where !line.isEmpty {
            if (try? JSONDecoder().decode(LogKind.self, from: Data(line.utf8)))?.kind != nil { continue }
            guard let entry = try? JSONDecoder().decode(LogLine.self, from: Data(line.utf8)),
                  let bytes = try? Hex.decode(entry.value)
            else {
                throw BumblePeerError.unreadableLog(path: logPath, reason: "bad line: \(line.prefix(100))")
            }
            values.append(bytes)
        }
        return values
    }

    /// Every line of the strap's log so far, typed, in order (an unfinished last line is
    /// ignored); with `strap`, only the lines of the strap at that address (`--straps`: every
    /// strap logs to the one file, each line naming its strap).
    public func heartRateLog(strap: String? = nil) throws -> [HeartRateLogEntry] {
        guard let text = try logText() else { return [] }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()
        let decoder = JSONDecoder()
        var entries: [HeartRateLogEntry] = []
        for line in lines where !line.isEmpty {
            let data = Data(line.utf8)
            do {
                let raw = try decoder.decode(StrapLogLine.self, from: data)
                if let strap, raw.strap != strap { continue }
                entries.append(try raw.entry(decoder: decoder, data: data))
            } catch {
                throw BumblePeerError.unreadableLog(path: logPath, reason: "bad line: \(line.prefix(100))")
            }
        }
        return entries
    }

    /// The strap's values so far with their validity, in order (``sentHeartRateValues()`` has the
    /// same bytes); with `strap`, only those of the strap at that address.
    public func sentHeartRateMeasurements(strap: String? = nil) throws -> [SentHeartRateValue] {
        try heartRateLog(strap: strap).compactMap { if case .sent(let value) = $0 { value } else { nil } }
    }

    /// The strap's deliberate disconnects so far, in order; with `strap`, only that strap's.
    public func strapDisconnects(strap: String? = nil) throws -> [StrapDisconnect] {
        try heartRateLog(strap: strap).compactMap { if case .disconnect(let event) = $0 { event } else { nil } }
    }

    /// The strap's pairing, encryption and address steps so far, in order.
    public func securityLog() throws -> [SecurityEvent] {
        try heartRateLog().compactMap { if case .security(let event) = $0 { event } else { nil } }
    }

    /// The pairings the strap completed so far, in order (its side: role `peripheral`).
    public func pairings() throws -> [PairingRecord] {
        try securityLog().compactMap(\.pairing)
    }


    /// The writes `rawble-lab` completed so far, in order.
    public func completedWrites() throws -> [CompletedWrite] {
        try Self.entries(ofKind: "write", inLog: writeLogPath)
    }

    /// The Service Changed events `rawble-lab` made so far.
    public func serviceChanges() throws -> [ServiceChange] {
        try Self.entries(ofKind: "service-changed", inLog: writeLogPath)
    }

    /// The Service Changed events `rawble-lab` made, once it has logged at least `count` (it logs
    /// one when its indication was confirmed, or when it gave up): waits for the peer's writes to
    /// its log, at most `timeout`.
    /// - Throws: ``BumblePeerError/logEntriesMissing(kind:count:path:within:)`` when fewer are
    ///   logged by then; ``BumblePeerError/unreadableLog(path:reason:)``.
    @discardableResult
    public func waitForServiceChanges(count: Int = 1, timeout: Duration = .seconds(30)) async throws -> [ServiceChange] {
        try await Self.waitForEntries(ofKind: "service-changed", inLog: writeLogPath, count: count, timeout: timeout)
    }

    /// The stream values `rawble-lab` sent so far, in order (empty with `--no-stream-log-values`);
    /// complete for a run once ``streamSummaries()`` lists it (values are flushed in batches).
    public func sentStreamValues() throws -> [StreamValue] {
        try Self.entries(ofKind: "stream", inLog: streamLogPath)
    }

    /// One summary per finished (or cancelled) stream run, in order.
    public func streamSummaries() throws -> [StreamSummary] {
        try Self.entries(ofKind: "stream-summary", inLog: streamLogPath)
    }

    /// The summaries of `rawble-lab`'s stream runs, once it has logged at least `count` (a run's
    /// values are then complete in ``sentStreamValues()``): waits for the peer's writes to its
    /// log, at most `timeout`.
    /// - Throws: ``BumblePeerError/logEntriesMissing(kind:count:path:within:)`` when fewer are
    ///   logged by then; ``BumblePeerError/unreadableLog(path:reason:)``.
    @discardableResult
    public func waitForStreamSummaries(count: Int = 1, timeout: Duration = .seconds(30)) async throws -> [StreamSummary] {
        try await Self.waitForEntries(ofKind: "stream-summary", inLog: streamLogPath, count: count, timeout: timeout)
    }

    /// The Heart Rate Measurement values `rawble-lab` (not the strap) notified so far, in order.
    public func sentLabHeartRateValues() throws -> [[UInt8]] {
        let lines: [LogLine] = try Self.entries(ofKind: "heart-rate", inLog: streamLogPath)
        return try lines.map { line in
            guard let bytes = try? Hex.decode(line.value) else {
                throw BumblePeerError.unreadableLog(path: streamLogPath, reason: "bad hex: \(line.value.prefix(100))")
            }
            return bytes
        }
    }

    /// ``entries(ofKind:inLog:)`` once there are at least `count`, re-read as the peer writes
    /// the log (``waitForChanges(of:timeout:until:)``), at most `timeout`.
    private static func waitForEntries<T: Decodable & Sendable>(
        ofKind kind: String, inLog path: String, count: Int, timeout: Duration
    ) async throws -> [T] {
        let logged = try await waitForChanges(of: path, timeout: timeout) {
            (try entries(ofKind: kind, inLog: path) as [T]).count >= count
        }
        guard logged else { throw BumblePeerError.logEntriesMissing(kind: kind, count: count, path: path, within: timeout) }
        return try entries(ofKind: kind, inLog: path)
    }

    /// Every line of the JSON-lines file at `path` whose `kind` is `kind`, decoded as `T`.
    private static func entries<T: Decodable>(ofKind kind: String, inLog path: String) throws -> [T] {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw BumblePeerError.unreadableLog(path: path, reason: "\(error)")
        }
        let decoder = JSONDecoder()
        var entries: [T] = []
        // A line the peer is still writing has no newline yet: only whole lines count.
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()
        for line in lines where !line.isEmpty {
            let data = Data(line.utf8)
            guard let tag = try? decoder.decode(LogKind.self, from: data) else {
                throw BumblePeerError.unreadableLog(path: path, reason: "bad line: \(line.prefix(100))")
            }
            guard tag.kind == kind else { continue }
            do {
                entries.append(try decoder.decode(T.self, from: data))
            } catch {
                throw BumblePeerError.unreadableLog(path: path, reason: "bad \(kind) line: \(line.prefix(100))")
            }
        }
        return entries
    }
}


/// Why a ``BumblePeer`` could not start or be read; each description is one actionable line.
public enum BumblePeerError: Error, Hashable, Sendable, CustomStringConvertible {
    case scriptNotFound(path: String)
    case bumbleNotInstalled
    case launchFailed(errno: Int32)
    case exitedBeforeReady(status: Int32, lastStderrLine: String)
    case notReady(within: Duration)
    case malformedReadyLine(String)
    case unreadableLog(path: String, reason: String)
    /// Fewer than `count` lines of `kind` in the peer's log at `path` after waiting `within`.
    case logEntriesMissing(kind: String, count: Int, path: String, within: Duration)

    public var description: String {
        switch self {
        case .scriptNotFound(let path):
            "bumble-peer launcher not found (or not executable) at \(path): set RAWBLE_BUMBLE_PEER (RAWBLE_BUMBLE_CENTRAL for bumble-central) or run from the rawble checkout"
        case .bumbleNotInstalled:
            "bumble 0.0.236 is not installed in the project's Python environment (RAWBLE_VENV, default .build/venv): run Scripts/bootstrap, or set \(TestRequirements.withoutBumbleVariable)=1 to deselect the Bumble-backed tests"
        case .launchFailed(let code):
            "could not launch Scripts/bumble-peer: \(String(cString: strerror(code)))"
        case .exitedBeforeReady(let status, let line):
            "bumble-peer exited with status \(status) before it was ready: \(line)"
        case .notReady(let timeout):
            "bumble-peer was not ready within \(timeout.components.seconds) s"
        case .malformedReadyLine(let line):
            "bumble-peer printed an unreadable ready line (script and support out of step?): \(line)"
        case .unreadableLog(let path, let reason):
            "bumble-peer's log \(path) is unreadable: \(reason)"
        case .logEntriesMissing(let kind, let count, let path, let timeout):
            "bumble-peer logged fewer than \(count) \"\(kind)\" lines in \(path) within \(timeout.components.seconds) s: the peer did not get that far (see its stderr log, stderrPath)"
        }
    }
}
