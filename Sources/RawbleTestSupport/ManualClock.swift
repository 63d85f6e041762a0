import Synchronization

/// A clock whose time moves only when the test moves it: virtual time for the timeouts of
/// rawble's async shells (`Adapter`, `ATTClient`, `GATTServer` take a clock in their
/// configuration).
///
/// A timeout test on the real clock waits the whole timeout, and on a loaded machine the
/// timers of every other test compete with it; on this clock it waits for nothing. The test
/// waits until the shell armed its timer (``waitForSleepers(_:dueWithin:)``), then moves time
/// past the deadline (``advance(by:)``), and the shell sees its timeout at once:
///
/// ```swift
/// let clock = ManualClock()
/// var configuration = ATTClient.Configuration()
/// configuration.clock = clock
/// configuration.transactionTimeout = .seconds(30)
/// let client = ATTClient(bearer: bearer, configuration: configuration)
/// let read = Task { try await client.transact(.readRequest(handle: 3)) }
/// try await clock.waitForSleepers(dueWithin: .seconds(30))   // the request is out, its timer armed
/// clock.advance(by: .seconds(30))                           // the timeout fires
/// ```
///
/// A sleep whose deadline is not past suspends until an ``advance(by:)`` reaches it, or until
/// its task is cancelled (it then throws `CancellationError`, as `Task.sleep` does). Time never
/// moves by itself and never goes back. Thread-safe: any task may sleep, advance or wait.
public final class ManualClock: Clock, Sendable {
    public typealias Duration = Swift.Duration

    /// A point in the clock's virtual time: how far it lies after the clock's start.
    public struct Instant: InstantProtocol, Hashable, Sendable, CustomStringConvertible {
        public typealias Duration = Swift.Duration

        /// The time since the clock's start.
        public var offset: Duration

        /// The instant `offset` after the clock's start.
        public init(offset: Duration) {
            self.offset = offset
        }

        public func advanced(by duration: Duration) -> Instant {
            Instant(offset: offset + duration)
        }

        public func duration(to other: Instant) -> Duration {
            other.offset - offset
        }

        public static func < (a: Instant, b: Instant) -> Bool {
            a.offset < b.offset
        }

        public var description: String { "ManualClock.Instant(\(offset))" }
    }

    /// A task suspended in ``sleep(until:tolerance:)``.
    private struct Sleeper {
        let id: UInt64
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    /// A task suspended in ``waitForSleepers(_:dueWithin:)``.
    private struct SleeperWaiter {
        let id: UInt64
        let count: Int
        let window: Duration?
        let continuation: CheckedContinuation<Void, any Error>
    }

    /// What became of a sleep when it came to register.
    private enum Registration {
        case sleeping, due, cancelled
    }

    private struct State {
        var now: Instant
        /// In registration order; ``ManualClock/advance(to:)`` sorts the due ones by deadline.
        var sleepers: [Sleeper] = []
        var waiters: [SleeperWaiter] = []
        /// Tasks suspended in ``ManualClock/waitForWaiters(_:)``: each until that many tasks wait
        /// in ``ManualClock/waitForSleepers(_:dueWithin:)``.
        var waiterWatchers: [(id: UInt64, count: Int, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextID: UInt64 = 0

        /// Sleepers due at or before `now + window` (every sleeper when `window` is nil).
        func sleeperCount(dueWithin window: Duration?) -> Int {
            guard let window else { return sleepers.count }
            let limit = now.advanced(by: window)
            return sleepers.count(where: { $0.deadline <= limit })
        }

        /// Removes and returns the waiters whose condition now holds.
        mutating func satisfiedWaiters() -> [CheckedContinuation<Void, any Error>] {
            var satisfied: [CheckedContinuation<Void, any Error>] = []
            var waiting: [SleeperWaiter] = []
            for waiter in waiters {
                if sleeperCount(dueWithin: waiter.window) >= waiter.count {
                    satisfied.append(waiter.continuation)
                } else {
                    waiting.append(waiter)
                }
            }
            waiters = waiting
            return satisfied
        }
    }

    private let state: Mutex<State>

    /// A clock whose time starts at `now` (the zero instant by default).
    public init(now: Instant = Instant(offset: .zero)) {
        state = Mutex(State(now: now))
    }

    /// The clock's current time: where the last ``advance(by:)`` left it.
    public var now: Instant {
        state.withLock { $0.now }
    }

    /// Zero: a sleeper wakes at exactly its deadline.
    public var minimumResolution: Duration { .zero }

    /// How many tasks sleep on the clock now.
    public var sleeperCount: Int {
        state.withLock { $0.sleepers.count }
    }

    /// The earliest deadline of a sleeping task, or nil when none sleeps.
    public var nextDeadline: Instant? {
        state.withLock { $0.sleepers.lazy.map(\.deadline).min() }
    }

    /// Suspends until the clock is advanced to `deadline` or past it; returns at once when
    /// `deadline` is not after ``now``. `tolerance` is ignored: virtual time is exact.
    /// - Throws: `CancellationError` when the task is cancelled before (or while) it sleeps.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state -> UInt64? in
            guard deadline > state.now else { return nil }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (registration, woken) = state.withLock { state -> (Registration, [CheckedContinuation<Void, any Error>]) in
                    // Cancelled after the check above: the handler found nothing to resume.
                    if Task.isCancelled { return (.cancelled, []) }
                    // Advanced past the deadline between the check above and now.
                    if deadline <= state.now { return (.due, []) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return (.sleeping, state.satisfiedWaiters())
                }
                switch registration {
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .due: continuation.resume()
                case .sleeping: break  // an advance or the cancellation handler resumes it
                }
                for waiter in woken { waiter.resume() }
            }
        } onCancel: {
            state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index).continuation
            }?.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward by `duration` (see ``advance(to:)``).
    /// - Returns: how many sleepers were resumed.
    @discardableResult
    public func advance(by duration: Duration) -> Int {
        precondition(duration >= .zero, "ManualClock: time does not go back (advance by \(duration))")
        return state.withLock { state in
            Self.advance(&state, to: state.now.advanced(by: duration))
        }.resumeAll()
    }

    /// Moves time forward to `instant` and resumes exactly the sleepers whose deadline is at
    /// or before it, earliest deadline first (in the order they slept for equal deadlines).
    /// Every one of them sees ``now`` at `instant`: a timer resumed late sees how late, as it
    /// would after the real clock jumped. Sleepers armed by the resumed tasks are not resumed
    /// by this call, whatever their deadline: the next advance decides.
    /// - Returns: how many sleepers were resumed.
    @discardableResult
    public func advance(to instant: Instant) -> Int {
        state.withLock { state in
            precondition(instant >= state.now, "ManualClock: time does not go back (\(state.now) to \(instant))")
            return Self.advance(&state, to: instant)
        }.resumeAll()
    }

    private static func advance(_ state: inout State, to instant: Instant) -> [CheckedContinuation<Void, any Error>] {
        state.now = instant
        var due: [Sleeper] = []
        state.sleepers.removeAll { sleeper in
            guard sleeper.deadline <= instant else { return false }
            due.append(sleeper)
            return true
        }
        // Equal deadlines keep their registration order (ids grow with it).
        due.sort { ($0.deadline, $0.id) < ($1.deadline, $1.id) }
        return due.map(\.continuation)
    }

    /// Suspends until at least `count` tasks sleep on the clock, counting only those due
    /// within `window` of ``now`` when it is given: a test calls it before ``advance(by:)`` to
    /// know the shell has armed its timer (advancing earlier would move time past a deadline
    /// not yet set, and the timeout would never fire). Returns at once if they already do.
    /// Bound the wait (`within(seconds:fileID:line:_:)`) where a shell that never arms its timer would
    /// otherwise hang the test.
    /// - Throws: `CancellationError` when the task is cancelled first.
    public func waitForSleepers(_ count: Int = 1, dueWithin window: Duration? = nil) async throws {
        try await suspend(
            until: { $0.sleeperCount(dueWithin: window) >= count },
            filing: { state, id, continuation in
                state.waiters.append(SleeperWaiter(id: id, count: count, window: window, continuation: continuation))
            },
            takingBack: { state, id in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            },
            // A new waiter may be what a ``waitForWaiters(_:)`` waits for.
            filed: { self.resumeWaiterWatchers() })
    }

    /// Suspends the caller until `condition` holds: checked at once, else the continuation is
    /// filed in the state (`filing`) for whoever makes the condition true to resume, and `filed`
    /// runs outside the lock; cancelled, `takingBack` removes it and it throws `CancellationError`.
    private func suspend(
        until condition: @escaping (State) -> Bool,
        filing: @escaping (inout State, UInt64, CheckedContinuation<Void, any Error>) -> Void,
        takingBack: @escaping @Sendable (inout State, UInt64) -> CheckedContinuation<Void, any Error>?,
        filed: () -> Void = {}
    ) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state -> UInt64? in
            guard !condition(state) else { return nil }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    if condition(state) { return true }
                    filing(&state, id, continuation)
                    return nil
                }
                switch outcome {
                case true?: continuation.resume()
                case false?: continuation.resume(throwing: CancellationError())
                case nil: filed()
                }
            }
        } onCancel: {
            state.withLock { takingBack(&$0, id) }?.resume(throwing: CancellationError())
        }
    }

    /// How many tasks wait in ``waitForSleepers(_:dueWithin:)`` now.
    public var waiterCount: Int {
        state.withLock { $0.waiters.count }
    }

    /// Suspends until at least `count` tasks wait in ``waitForSleepers(_:dueWithin:)`` (or
    /// ``advanceOnceArmed(by:waitingAtMost:)``): a test of the clock itself arms a timer, or
    /// cancels a waiter, only once the waiter is known to wait, with no real-time pause.
    /// Returns at once if they already do. Bound it with ``within(seconds:fileID:line:_:)``.
    /// - Throws: `CancellationError` when the task is cancelled first.
    public func waitForWaiters(_ count: Int = 1) async throws {
        try await suspend(
            until: { $0.waiters.count >= count },
            filing: { state, id, continuation in state.waiterWatchers.append((id, count, continuation)) },
            takingBack: { state, id in
                guard let index = state.waiterWatchers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiterWatchers.remove(at: index).continuation
            })
    }

    /// Resumes the ``waitForWaiters(_:)`` calls whose count of waiters is reached.
    private func resumeWaiterWatchers() {
        state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            let waiting = state.waiters.count
            let ready = state.waiterWatchers.filter { $0.count <= waiting }.map(\.continuation)
            state.waiterWatchers.removeAll { $0.count <= waiting }
            return ready
        }.forEach { $0.resume() }
    }

    /// Waits until a sleeper is due within `duration` (the timer of the timeout under test is
    /// armed), then advances by `duration`: the timeout fires with no real wait. The wait is
    /// bounded by `seconds` of real time (``within(seconds:fileID:line:_:)``), so a shell that never arms
    /// its timer fails the test with ``TestTimeout`` instead of hanging it.
    /// - Returns: how many sleepers were resumed.
    @discardableResult
    public func advanceOnceArmed(by duration: Duration, waitingAtMost seconds: Double = 60) async throws -> Int {
        try await within(seconds: seconds) { try await self.waitForSleepers(dueWithin: duration) }
        return advance(by: duration)
    }

    /// Runs `operation` while moving time on: whenever a sleeper is due within `window` of
    /// ``now``, advances to the earliest deadline (so each timer fires exactly on time), until
    /// `operation` returns or throws; returns its result or rethrows its error. Sleepers due
    /// later than `window` are left alone.
    ///
    /// For an operation that goes through a series of timeouts with nothing else to wait for
    /// (a controller that answers no command, one timeout after another). Where something must
    /// happen before a timer fires (an answer to be handled first), wait for it and then
    /// ``advance(by:)`` by hand: this moves time as soon as a timer is armed.
    public func run<T: Sendable>(
        advancingToDeadlinesWithin window: Duration, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask { () async throws -> T? in
                while true {
                    try await self.waitForSleepers(dueWithin: window)
                    let limit = self.now.advanced(by: window)
                    if let next = self.nextDeadline, next <= limit { self.advance(to: next) }
                }
            }
            defer { group.cancelAll() }
            while let finished = try await group.next() {
                if let result = finished { return result }
            }
            preconditionFailure("ManualClock.run: the operation ended without a result")
        }
    }
}

extension [CheckedContinuation<Void, any Error>] {
    /// Resumes every continuation in order (outside the clock's lock); returns how many.
    fileprivate func resumeAll() -> Int {
        for continuation in self { continuation.resume() }
        return count
    }
}
