import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Waits until `condition` holds for a file another process writes (a peer's log), woken by the
/// kernel each time a file in `file`'s directory is created, written or closed after writing
/// (inotify), not by a timer: `condition` is checked at once, then after each such change, and
/// a last time at the bound. `true` once it holds; `false` when it still does not after
/// `timeout`. Runs on a thread of its own (it blocks in poll(2)).
///
/// The watch is on the directory, so a file that does not exist yet counts too; it is in
/// place before the first check, so no write between the check and the wait is missed.
func waitForChanges(
    of file: String, timeout: Duration, until condition: @escaping @Sendable () throws -> Bool
) async throws -> Bool {
    let directory = URL(fileURLWithPath: file).deletingLastPathComponent().path
    return try await onOwnThread {
        let watch = inotify_init1(O_CLOEXEC)
        guard watch >= 0 else { throw FileWatchError(operation: "inotify_init1", path: directory, errno: errno) }
        defer { _ = close(watch) }
        let events = UInt32(IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO)
        guard inotify_add_watch(watch, directory, events) >= 0 else {
            throw FileWatchError(operation: "inotify_add_watch", path: directory, errno: errno)
        }
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if try condition() { return true }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            var entry = pollfd(fd: watch, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            let ready = poll(&entry, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready >= 0 else { throw FileWatchError(operation: "poll", path: directory, errno: errno) }
            if ready == 0 { return try condition() }
            // The changes so far: what they were does not matter, the condition is checked anew.
            _ = buffer.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
        }
    }
}

/// Watching a directory for changes failed (inotify or poll refused): one line naming the call.
struct FileWatchError: Error, CustomStringConvertible {
    var operation: String
    var path: String
    var errno: Int32

    var description: String { "watching \(path) for changes: \(operation) failed: \(String(cString: strerror(errno)))" }
}
