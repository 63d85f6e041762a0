import Foundation

/// Runs `body`, which blocks (waits for a child process, reads a pipe to its end), on a thread of
/// its own and returns its result. Blocking on Swift's cooperative pool instead stalls every
/// other task of the test run: on a 2-core machine the pool has two threads, so two such
/// waits at once (a `swift package dump-package`, a CLI run to its timeout) starved every other
/// test into its time limit.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// Runs `executable` with `arguments` to its end on a thread of its own (see ``onOwnThread(_:)``)
/// and returns its standard output and exit status; its standard error is discarded.
public func runToEnd(_ executable: String, _ arguments: [String]) async throws -> (output: Data, status: Int32) {
    try await onOwnThread {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (data, process.terminationStatus)
    }
}
