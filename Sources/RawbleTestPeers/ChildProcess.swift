import Foundation
import Glibc
import Synchronization

/// A child process (the Bumble scripts) with its stdin and stdout on pipes and its stderr in a
/// file: spawned with nothing else of this process open in it, its first line read with a time
/// limit, then stopped and reaped on threads of their own, never on Swift's cooperative pool.
struct ChildProcess {
    var pid: pid_t
    var stdinFD: Int32
    var stdoutFD: Int32

    /// posix_spawn (via PATH) with stdin and stdout on pipes and stderr to a file.
    static func spawn(_ argv: [String], environment: [String: String], stderrPath: String) throws -> ChildProcess {
        var stdinPipe: [Int32] = [-1, -1]
        var stdoutPipe: [Int32] = [-1, -1]
        guard makePipe(&stdinPipe) else { throw BumblePeerError.launchFailed(errno: errno) }
        guard makePipe(&stdoutPipe) else {
            let saved = errno
            _ = close(stdinPipe[0]); _ = close(stdinPipe[1])
            throw BumblePeerError.launchFailed(errno: saved)
        }
        let stderrFD = open(stderrPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer {
            _ = close(stdinPipe[0])
            _ = close(stdoutPipe[1])
            if stderrFD >= 0 { _ = close(stderrFD) }
        }
        guard stderrFD >= 0 else {
            let saved = errno
            _ = close(stdinPipe[1]); _ = close(stdoutPipe[0])
            throw BumblePeerError.launchFailed(errno: saved)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrFD, 2)
        // Nothing else of this process reaches the peer: a descriptor without FD_CLOEXEC (SwiftNIO
        // opens its sockets without it) would otherwise stay open in the peer for its whole life,
        // and the other end of such a socket would not see it close.
        // (glibc 2.34's posix_spawn_file_actions_addclosefrom_np, which the Glibc module does not
        // import: looked up by name.)
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        }

        var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        var cEnvironment: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { cEnvironment.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, argv[0], &actions, nil, &cArguments, &cEnvironment)
        guard status == 0 else {
            _ = close(stdinPipe[1]); _ = close(stdoutPipe[0])
            throw BumblePeerError.launchFailed(errno: status)
        }
        return ChildProcess(pid: pid, stdinFD: stdinPipe[1], stdoutFD: stdoutPipe[0])
    }

    /// A pipe whose both ends close on exec (the spawn's dup2 clears it on the child's copies).
    private static func makePipe(_ fds: inout [Int32]) -> Bool {
        guard pipe(&fds) == 0 else { return false }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        return true
    }

    /// Reads one line from `fd` on its own thread, giving up after `timeout` (then the caller
    /// kills the child, which ends the read). `nil` at end of file.
    static func readLine(fd: Int32, timeout: Duration) async throws -> String? {
        let (stream, continuation) = AsyncStream.makeStream(of: String?.self)
        let thread = Thread {
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while true {
                let count = read(fd, &byte, 1)
                if count == 1 {
                    if byte == UInt8(ascii: "\n") { break }
                    if line.count < 16 << 20 { line.append(byte) }
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    continuation.yield(nil)
                    continuation.finish()
                    return
                }
            }
            continuation.yield(String(decoding: line, as: UTF8.self))
            continuation.finish()
        }
        thread.start()
        return try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                for await line in stream { return line }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw BumblePeerError.notReady(within: timeout)
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { return nil }
            return first
        }
    }

    /// The child terminated as `terminate(pid:stdinFD:)` does, on a thread of its own (it waits
    /// up to 3 s: not on the cooperative pool). Returns its exit code (-1 if no thread ran it).
    @discardableResult
    func terminated() async -> Int32 {
        let (pid, stdinFD) = (self.pid, self.stdinFD)
        return (try? await onOwnThread { Self.terminate(pid: pid, stdinFD: stdinFD) }) ?? -1
    }

    /// SIGTERM, wait ≤ 3 s, SIGKILL, reap: blocks its thread. Returns the wait status's exit
    /// code (or 128+signal).
    @discardableResult
    static func terminate(pid: pid_t, stdinFD: Int32) -> Int32 {
        _ = close(stdinFD)
        var status: Int32 = 0
        if let code = reap(pid, &status) { return code }
        _ = kill(pid, SIGTERM)
        for _ in 0..<150 {
            if let code = reap(pid, &status) { return code }
            usleep(20_000)
        }
        _ = kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return exitCode(status)
    }

    private static func reap(_ pid: pid_t, _ status: inout Int32) -> Int32? {
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid { return exitCode(status) }
        if result < 0 && errno == ECHILD { return -1 }
        return nil
    }

    private static func exitCode(_ status: Int32) -> Int32 {
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// The last line of the file at `path` (of its last 4 KiB), or empty.
    static func lastLine(ofFile path: String) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { return "" }
        let text = String(decoding: data.suffix(4096), as: UTF8.self)
        return text.split(separator: "\n").last.map(String.init) ?? ""
    }
}

/// A child process's end, once reaped: any number of tasks wait for it.
final class ProcessExit: Sendable {
    private struct State {
        var code: Int32?
        var waiters: [CheckedContinuation<Int32, Never>] = []
    }
    private let state = Mutex(State())

    /// Records the exit code and resumes every waiter.
    func finish(_ code: Int32) {
        let waiters = state.withLock { state in
            state.code = code
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: code) }
    }

    /// The exit code, once `finish(_:)` recorded it.
    func status() async -> Int32 {
        await withCheckedContinuation { continuation in
            let code = state.withLock { state -> Int32? in
                if state.code == nil { state.waiters.append(continuation) }
                return state.code
            }
            if let code { continuation.resume(returning: code) }
        }
    }
}
