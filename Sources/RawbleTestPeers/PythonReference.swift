import Foundation
import RawbleTestSupport

/// A Python reference script of the project's (`Scripts/python/NAME`) that failed: its name,
/// exit status and the last line it wrote on stderr.
public struct PythonReferenceFailure: Error, CustomStringConvertible {
    public var description: String
}

/// Runs `Scripts/python/<script>` of the package at `root` under the project's venv
/// (`Scripts/venv-python`, which names the fix when the venv is missing), with `input` as its
/// standard input, and returns what it printed, line by line. One process for a whole batch:
/// the independent implementations the tests compare rawble with (NeuroKit2's HRV, a PMD
/// decoder) answer one line per input line.
///
/// The input goes through a file, not a pipe: a script that exits early cannot raise SIGPIPE
/// in the test process. Output and exit are bounded by `seconds`.
public func runPythonReference(_ script: String, root: URL, input: String, seconds: Double) async throws -> [Substring] {
    let process = Process()
    process.executableURL = root.appendingPathComponent("Scripts/venv-python")
    process.arguments = [root.appendingPathComponent("Scripts/python/\(script)").path]
    let inputURL = FileManager.default.temporaryDirectory
        .appendingPathComponent("rawble-reference-\(getpid())-\(UUID().uuidString.prefix(8)).txt")
    try Data(input.utf8).write(to: inputURL)
    defer { try? FileManager.default.removeItem(at: inputURL) }
    let output = Pipe(), errors = Pipe()
    process.standardInput = try FileHandle(forReadingFrom: inputURL)
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    defer { if process.isRunning { process.terminate() } }
    let reader = output.fileHandleForReading
    let errorReader = errors.fileHandleForReading
    // The reads and the wait block: on threads of their own (``onOwnThread(_:)``), not Swift's
    // cooperative pool, which a reference running for minutes would take from every other test.
    let (data, errorData) = try await within(seconds: seconds) {
        async let out = onOwnThread { reader.readToEndRetryingInterrupts() }
        async let err = onOwnThread { errorReader.readToEndRetryingInterrupts() }
        return try await (out, err)
    }
    try await within(seconds: 60) { try await onOwnThread { process.waitUntilExit() } }
    guard process.terminationStatus == 0 else {
        let last = String(decoding: errorData, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
        throw PythonReferenceFailure(description: "\(script) exited with status \(process.terminationStatus): \(last)")
    }
    return String(decoding: data, as: UTF8.self).split(separator: "\n")
}
