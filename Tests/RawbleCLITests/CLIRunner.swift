import Foundation
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// Runs the built `rawble` executable as a user would and captures what it prints.
struct CLIResult {
    var status: Int32
    var stdout: String
    var stderr: String
    /// True when the process was killed by a signal (a trap), which is never acceptable.
    var killedBySignal: Bool
    /// False when the process never printed what a `CLI.run(_:when:…)` waited for.
    var reachedReady = true

    var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }
    var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
    /// stderr's lines but those saying what the command waited for (`waiting for … (2 s)…`,
    /// `connecting to … (2 s)`): any wait that lasts 2 s adds one, as a loaded machine may
    /// make any wait do. What a test that counts the other lines counts.
    var stderrLinesExceptWaits: [String] { stderrLines.filter { !CLIResult.isWaitLine($0) } }
    /// stdout's lines but `--json`'s `status` events, which a wait that lasted 2 s adds before
    /// the result (as a loaded machine may make any wait): what a test of the result reads.
    var stdoutLinesExceptStatus: [String] { stdoutLines.filter { !$0.hasPrefix(#"{"event":"status","#) } }
    /// stdout without those lines, each line ending in a newline.
    var stdoutExceptStatus: String { stdoutLinesExceptStatus.map { $0 + "\n" }.joined() }
    /// stderr without those lines, each line ending in a newline.
    var stderrExceptWaits: String { stderrLinesExceptWaits.map { $0 + "\n" }.joined() }

    /// Whether `line` is one of ``WaitStatus``'s lines (`rawble/Support/Waits.swift`).
    static func isWaitLine(_ line: some StringProtocol) -> Bool {
        line.range(of: #"^(waiting for|connecting to|pairing with|encrypting the link to|authenticating the link to) .* \([0-9]+ s\)(;.*)?$"#,
                   options: .regularExpression) != nil
    }
}

enum CLI {
    /// A launcher (see ``run(_:environment:launcher:)``) that runs the binary on a
    /// pseudo-terminal from util-linux's `script`, after `setup` (shell commands) when given.
    /// `script` runs its command through `$SHELL -c` (dash when unset, as under CI): `exec`
    /// makes the binary that shell's replacement, so a Ctrl-C typed on the terminal reaches
    /// the binary alone (dash would die of it, and `script -e` report 130 for the session).
    static func terminalLauncher(setup: String = "") -> [String] {
        let command = (setup.isEmpty ? "" : setup + "; ") + #"exec $0 $*"#
        return ["/bin/sh", "-c", #"exec /usr/bin/script -q -e -c ""# + command + #"" /dev/null"#]
    }

    /// The `rawble` binary beside the test bundle (same build folder).
    static var executable: URL {
        var directory = Bundle.main.bundleURL
        if directory.pathExtension == "xctest" { directory.deleteLastPathComponent() }
        return directory.appendingPathComponent("rawble")
    }

    /// Runs the binary on a thread of its own, so the many CLI tests running in parallel never
    /// block the cooperative pool that the host's own async tests need.
    /// `launcher`: a command the binary is run through (its path appended, then `arguments`).
    static func run(_ arguments: [String], environment: [String: String] = [:], launcher: [String] = []) async throws -> CLIResult {
        try await onOwnThread { try runBlocking(arguments, environment: environment, launcher: launcher) }
    }

    /// Runs the binary as user and group nobody (65534) through util-linux's `setpriv`, so a
    /// test run as root can meet permissions; `nil` when `setpriv` is not installed. Nobody
    /// runs a copy in a folder of its own that every user may enter: the checkout may be
    /// closed to other users (a 0700 home, as root's `/root` is).
    static func runAsNobody(_ arguments: [String]) async throws -> CLIResult? {
        guard let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            return nil
        }
        return try await onOwnThread {
            let folder = try TemporaryFolder.make()
            defer { TemporaryFolder.remove(folder) }
            let copy = folder.appendingPathComponent("rawble")
            try FileManager.default.copyItem(at: executable.resolvingSymlinksInPath(), to: copy)
            guard chmod(folder.path, 0o755) == 0, chmod(copy.path, 0o755) == 0 else { throw CocoaError(.fileWriteNoPermission) }
            let launcher = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
            return try runBlocking(arguments, executable: copy, launcher: launcher)
        }
    }

    /// Runs the binary and, once what it printed so far satisfies `ready` (stdout, stderr),
    /// does `action` (by default Ctrl-C: SIGINT to the process); then waits at most `limit` for
    /// it to exit (then SIGKILL, which the caller sees as `killedBySignal`). When `ready` is not
    /// met within `readyLimit`, the process is killed and the result says so (`reachedReady`
    /// false): no test passes for a reason other than its name.
    static func run(_ arguments: [String], environment: [String: String] = [:],
                    when ready: @escaping @Sendable (_ stdout: String, _ stderr: String) -> Bool,
                    readyLimit: Duration = .seconds(30), limit: Duration = .seconds(15),
                    do action: @escaping @Sendable (_ pid: Int32) -> Void = { kill($0, SIGINT) }) async throws -> CLIResult {
        try await onOwnThread {
            try runBlocking(arguments, environment: environment,
                            trigger: Trigger(ready: ready, readyLimit: readyLimit, action: action), limit: limit)
        }
    }

    /// Runs the binary and sends it SIGINT (Ctrl-C) as soon as stderr contains `text`.
    static func runInterrupted(_ arguments: [String], environment: [String: String] = [:],
                               whenStderrContains text: String) async throws -> CLIResult {
        try await run(arguments, environment: environment, when: { _, stderr in stderr.contains(text) })
    }

    /// When to act on a running process, and how.
    struct Trigger: Sendable {
        var ready: @Sendable (String, String) -> Bool
        var readyLimit: Duration
        var action: @Sendable (Int32) -> Void
    }

    /// `launcher`: a command the binary is run through (its path appended, then `arguments`).
    /// A new empty directory for one run's `XDG_STATE_HOME` (the caller removes it).
    static func freshStateDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-state-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        return directory
    }

    static func runBlocking(_ arguments: [String], environment: [String: String] = [:], executable binary: URL? = nil,
                            launcher: [String] = [], trigger: Trigger? = nil, limit: Duration = .seconds(120)) throws -> CLIResult {
        let process = Process()
        let binary = binary ?? executable
        if let first = launcher.first {
            process.executableURL = URL(fileURLWithPath: first)
            process.arguments = Array(launcher.dropFirst()) + [binary.path] + arguments
        } else {
            process.executableURL = binary
            process.arguments = arguments
        }
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "RAWBLE_TRANSPORT")
        env.removeValue(forKey: "RAWBLE_LOG")
        env["SWIFT_BACKTRACE"] = "enable=no"
        // rawble keeps an identity and bonds in its state directory: each run gets an empty one
        // (a fresh machine's), unless the test gives its own, so no run sees another's bonds.
        let state = try CLI.freshStateDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        env["XDG_STATE_HOME"] = state.path
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let pid = process.processIdentifier
        // Read both pipes to the end as they fill, so a large output cannot block the child and
        // the trigger sees each chunk as it comes. Each on a thread of its own: a blocking read
        // on `DispatchQueue.global()` takes a thread of the pool Swift's tasks run on (on Linux
        // the same Dispatch root queue), and four CLI runs at once (eight readers) starved the
        // test process's own tasks for 5 s, until Dispatch had added threads one a second.
        let output = OutputSoFar(trigger: trigger, pid: pid)
        let group = DispatchGroup()
        for (pipe, isStdout) in [(out, true), (err, false)] {
            group.enter()
            Thread.detachNewThread {
                while true {
                    let chunk = pipe.fileHandleForReading.readAvailableRetryingInterrupts() ?? Data()
                    if chunk.isEmpty { break }
                    output.append(chunk, stdout: isStdout)
                }
                group.leave()
            }
        }
        var reachedReady = true
        if let trigger {
            reachedReady = output.readySignal.wait(timeout: .now() + trigger.readyLimit.dispatch) == .success
            if !reachedReady { kill(pid, SIGKILL) }
        }
        if group.wait(timeout: .now() + limit.dispatch) == .timedOut {
            // SIGTERM first: a launcher (vm-test) stops what it started, and says so.
            kill(pid, SIGTERM)
            if group.wait(timeout: .now() + 5) == .timedOut {
                kill(pid, SIGKILL)
                // A grandchild may still hold a pipe: what was read so far is the result.
                _ = group.wait(timeout: .now() + 5)
            }
        }
        process.waitUntilExit()
        let (stdout, stderr) = output.text
        return CLIResult(
            status: process.terminationStatus,
            stdout: stdout,
            stderr: stderr,
            killedBySignal: process.terminationReason == .uncaughtSignal,
            reachedReady: reachedReady)
    }

    /// Parses one JSON line into a dictionary, failing the test when it is not an object.
    static func jsonObject(_ line: String) throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(line.utf8))
        guard let object = value as? [String: Any] else {
            throw CLIRunnerError.notAnObject(line)
        }
        return object
    }
}

enum CLIRunnerError: Error { case notAnObject(String) }

/// What a running process printed so far; fires its trigger once, the first time it is ready.
private final class OutputSoFar: @unchecked Sendable {
    private let lock = NSLock()
    private var stdout = Data(), stderr = Data()
    private let trigger: CLI.Trigger?
    private let pid: Int32
    private var fired = false
    let readySignal = DispatchSemaphore(value: 0)

    init(trigger: CLI.Trigger?, pid: Int32) {
        self.trigger = trigger
        self.pid = pid
    }

    var text: (String, String) {
        lock.lock()
        defer { lock.unlock() }
        return (String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    func append(_ chunk: Data, stdout isStdout: Bool) {
        lock.lock()
        if isStdout { stdout.append(chunk) } else { stderr.append(chunk) }
        var fire = false
        if let trigger, !fired,
           trigger.ready(String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self)) {
            fired = true
            fire = true
        }
        lock.unlock()
        if fire, let trigger {
            trigger.action(pid)
            readySignal.signal()
        }
    }
}

extension Duration {
    /// The same span for Dispatch's waits.
    var dispatch: DispatchTimeInterval {
        .milliseconds(Int(components.seconds) * 1000 + Int(components.attoseconds / 1_000_000_000_000_000))
    }
}

/// A TCP port on 127.0.0.1 that nothing listens on (bound, then released).
func freePort() throws -> UInt16 { try LocalPort.unused() }
