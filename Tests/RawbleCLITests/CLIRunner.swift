import Foundation
import Testing

/// Runs the built `rawble` executable as a user would and captures what it prints.
struct CLIResult {
    var status: Int32
    var stdout: String
    var stderr: String
    /// True when the process was killed by a signal (a trap), which is never acceptable.
    var killedBySignal: Bool

    var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }
    var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
}

enum CLI {
    /// The `rawble` binary beside the test bundle (same build folder).
    static var executable: URL {
        var directory = Bundle.main.bundleURL
        if directory.pathExtension == "xctest" { directory.deleteLastPathComponent() }
        return directory.appendingPathComponent("rawble")
    }

    /// Runs the binary on a thread of its own, so the many CLI tests running in parallel never
    /// block the cooperative pool that the host's own async tests need.
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> CLIResult {
        try await onOwnThread { try runBlocking(arguments, environment: environment) }
    }

    /// Runs the binary as user and group nobody (65534) through util-linux's `setpriv`, so a
    /// test run as root can meet permissions; `nil` when `setpriv` is not installed.
    static func runAsNobody(_ arguments: [String]) async throws -> CLIResult? {
        guard let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            return nil
        }
        let launcher = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
        return try await onOwnThread { try runBlocking(arguments, launcher: launcher) }
    }

    /// Runs the binary, sends it SIGINT (Ctrl-C) after `delay`, and waits at most `limit` for it
    /// to exit (then SIGKILL, which the caller sees as `killedBySignal`).
    static func runInterrupted(_ arguments: [String], after delay: Duration, limit: Duration = .seconds(15)) async throws -> CLIResult {
        try await onOwnThread { try runBlocking(arguments, interruptAfter: delay, limit: limit) }
    }

    private static func onOwnThread(_ body: @escaping @Sendable () throws -> CLIResult) async throws -> CLIResult {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    /// `launcher`: a command the binary is run through (its path appended, then `arguments`).
    static func runBlocking(_ arguments: [String], environment: [String: String] = [:], launcher: [String] = [],
                            interruptAfter delay: Duration? = nil, limit: Duration = .seconds(120)) throws -> CLIResult {
        let process = Process()
        if let first = launcher.first {
            process.executableURL = URL(fileURLWithPath: first)
            process.arguments = Array(launcher.dropFirst()) + [executable.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "RAWBLE_TRANSPORT")
        env["SWIFT_BACKTRACE"] = "enable=no"
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes to the end before waiting, so a large output cannot block the child.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data(), errData = Data()
        group.enter()
        DispatchQueue.global().async { outData = out.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        group.enter()
        DispatchQueue.global().async { errData = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        if let delay {
            Thread.sleep(forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)
            kill(process.processIdentifier, SIGINT)
        }
        if group.wait(timeout: .now() + .seconds(Int(limit.components.seconds))) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            group.wait()
        }
        process.waitUntilExit()
        return CLIResult(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self),
            killedBySignal: process.terminationReason == .uncaughtSignal)
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
