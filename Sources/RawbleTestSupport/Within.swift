import Synchronization

/// Thrown by ``within(seconds:fileID:line:_:)`` when the operation did not finish in time: it
/// names the wait that ran out (its bound and where it is), so a test with several bounded
/// waits says which one a rare timeout was.
public struct TestTimeout: Error, Hashable, Sendable, CustomStringConvertible {
    /// The bound that ran out, when the thrower knows it.
    public var seconds: Double?
    /// Where the wait is (`File.swift:LINE`), when the thrower knows it.
    public var location: String?

    public init(seconds: Double? = nil, location: String? = nil) {
        self.seconds = seconds
        self.location = location
    }

    public var description: String {
        var text = "TestTimeout"
        if let seconds {
            // Whole seconds without a fraction (60, not 60.0); no Foundation in this module.
            let shown = seconds.rounded() == seconds && abs(seconds) < 1e15 ? String(Int(seconds)) : String(seconds)
            text += ": no result within \(shown) s"
        }
        if let location { text += " (\(location))" }
        return text
    }
}

/// Runs `operation`, failing with ``TestTimeout`` after `seconds`: bounds every wait a test
/// does on a stream or a peer, so a broken peer fails the test instead of hanging it.
///
/// The bound guards against hangs; it is not a speed check. The default is generous because
/// the whole suite runs at once on Swift's cooperative pool (two threads on a 2-core machine)
/// while Bumble peers start: a test's awaits can wait their turn for many seconds. At 10 s, all
/// the Heart Rate tests (each a few dozen awaits on a scripted bearer) timed out together in
/// fresh-clone runs, then passed alone in 25 ms.
///
/// The deadline holds even when `operation` ignores cancellation: whichever of the operation
/// and the deadline comes first resumes the caller; a late operation is cancelled and left to
/// run out on its own (its result is dropped). Cancelling the caller throws `CancellationError`
/// at once, the same way.
public func within<T: Sendable>(
    seconds: Double = 60, fileID: String = #fileID, line: Int = #line,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let timeout = TestTimeout(seconds: seconds, location: "\(fileID.split(separator: "/").last ?? Substring(fileID)):\(line)")
    let race = FirstFinisher<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            race.start(continuation)
            let work = Task {
                do {
                    race.finish(.success(try await operation()))
                } catch {
                    race.finish(.failure(error))
                }
            }
            let deadline = Task {
                try? await Task.sleep(for: .seconds(seconds))
                race.finish(.failure(timeout))
            }
            race.own(work, deadline)
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// Resumes one continuation with the first result it is given, then cancels the tasks racing
/// for it. Thread-safe.
private final class FirstFinisher<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        /// A result that came before the continuation was stored (an early cancellation).
        var early: Result<T, any Error>?
        var done = false
        var tasks: [Task<Void, Never>] = []
    }
    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            if let early = state.early { return early }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    /// Keeps the racing tasks to cancel them once the race is decided (at once if it is).
    func own(_ tasks: Task<Void, Never>...) {
        let decided = state.withLock { state -> Bool in
            if state.done { return true }
            state.tasks += tasks
            return false
        }
        if decided { for task in tasks { task.cancel() } }
    }

    func finish(_ result: Result<T, any Error>) {
        let (continuation, tasks) = state.withLock { state -> (CheckedContinuation<T, any Error>?, [Task<Void, Never>]) in
            guard !state.done else { return (nil, []) }
            state.done = true
            defer {
                state.continuation = nil
                state.tasks = []
            }
            if state.continuation == nil { state.early = result }
            return (state.continuation, state.tasks)
        }
        continuation?.resume(with: result)
        for task in tasks { task.cancel() }
    }
}
