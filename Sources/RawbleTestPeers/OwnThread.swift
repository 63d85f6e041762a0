import Foundation
#if canImport(Glibc)
import Glibc
#endif

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
        let data = output.fileHandleForReading.readToEndRetryingInterrupts()
        process.waitUntilExit()
        return (data, process.terminationStatus)
    }
}

extension FileHandle {
    /// Everything up to the end of file, read with `read(2)` and retried when a signal
    /// interrupts it. Foundation's `readDataToEndOfFile()` and `availableData` trap on EINTR
    /// (a `try!` inside), and a test process gets signals: each child process that ends sends
    /// SIGCHLD, which Foundation's `Process` handles. One such trap ended a whole test run.
    public func readToEndRetryingInterrupts() -> Data {
        var data = Data()
        while let chunk = readAvailableRetryingInterrupts(), !chunk.isEmpty {
            data.append(chunk)
        }
        return data
    }

    /// What one `read(2)` returns (at most 64 KiB), retried on EINTR: empty at the end of file;
    /// `nil` on another error (treated as the end by callers).
    public func readAvailableRetryingInterrupts() -> Data? {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fileDescriptor, $0.baseAddress, $0.count) }
            if count >= 0 { return Data(buffer[0..<count]) }
            if errno != EINTR { return nil }
        }
    }
}
