import Synchronization

/// The buffer between the bearer's thread and the one consumer of a profile's event sequence
/// (``HeartRateEvents``, and `PMDEvents` in RawblePolar, which shares it with `package` access).
/// Generic, and specialized for its element where it is used in this module (the point of not
/// using `AsyncThrowingStream`, see ``HeartRateEvents``); RawblePolar's calls cross the module
/// boundary unspecialized, at a PMD stream's few frames a second.
package final class EventChannel<Event: Sendable>: Sendable {
    private struct State {
        /// Buffered events from `head` on (the array is reset whenever the consumer catches up).
        var buffer: [Event] = []
        var head = 0
        var waiter: UnsafeContinuation<Event?, any Error>?
        /// Set by ``finish(throwing:)``: the end, after the buffered events.
        var finished = false
        var failure: (any Error)?
        /// Set by ``cancel()``: nothing more is delivered.
        var cancelled = false
        var onCancel: (@Sendable () -> Void)?
        /// Tests waiting until the consumer waits (``waitForConsumer()``).
        var consumerWatchers: [CheckedContinuation<Void, Never>] = []

        var count: Int { buffer.count - head }

        mutating func pop() -> Event? {
            guard head < buffer.count else { return nil }
            let event = buffer[head]
            head += 1
            if head == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                head = 0
            }
            return event
        }
    }

    private let state = Mutex(State())
    private let limit: Int

    /// `limit`: events kept for a consumer that is behind (the oldest go first).
    package init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Called once, outside any lock, when the consumer goes away first (cancelled, or the
    /// iterator dropped) — not after ``finish(throwing:)``.
    package func onCancel(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.onCancel = handler }
    }

    /// Hands `event` to the consumer; `false` when an older one had to be dropped for it.
    package func yield(_ event: Event) -> Bool {
        let (waiter, kept) = state.withLock { state -> (UnsafeContinuation<Event?, any Error>?, Bool) in
            guard !state.finished, !state.cancelled else { return (nil, true) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, true)
            }
            var kept = true
            if state.count >= limit {
                state.head += 1  // the oldest goes
                kept = false
                // Release what was dropped once it is half the array: memory stays within
                // twice the limit however long the consumer lags, at O(1) amortized.
                if state.head >= limit {
                    state.buffer.removeSubrange(0..<state.head)
                    state.head = 0
                }
            }
            state.buffer.append(event)
            return (nil, kept)
        }
        waiter?.resume(returning: event)
        return kept
    }

    /// Ends the sequence after the buffered events: with `error`, or normally when `nil`.
    package func finish(throwing error: (any Error)? = nil) {
        let waiter = state.withLock { state -> UnsafeContinuation<Event?, any Error>? in
            guard !state.finished, !state.cancelled else { return nil }
            state.finished = true
            state.onCancel = nil
            // A waiting consumer has nothing buffered: it takes the end now; else `next()` does.
            guard let waiter = state.waiter else {
                state.failure = error
                return nil
            }
            state.waiter = nil
            return waiter
        }
        guard let waiter else { return }
        if let error { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
    }

    /// Whether the consumer waits in `next()` (for tests).
    package var hasWaiter: Bool { state.withLock { $0.waiter != nil } }

    /// Returns once the consumer waits in `next()`, at once if it does (for tests: a value
    /// yielded then goes straight to it). Bound it with the caller's own timeout.
    package func waitForConsumer() async {
        await withCheckedContinuation { (watcher: CheckedContinuation<Void, Never>) in
            let waiting = state.withLock { state -> Bool in
                if state.waiter != nil { return true }
                state.consumerWatchers.append(watcher)
                return false
            }
            if waiting { watcher.resume() }
        }
    }

    /// Events waiting for the consumer.
    package var bufferedCount: Int { state.withLock { $0.count } }

    /// Events the channel holds in memory, dropped ones not yet released included (for tests).
    package var storedCount: Int { state.withLock { $0.buffer.count } }

    /// The consumer went away: drop what is buffered, end a waiting `next()` with `nil`.
    package func cancel() {
        let (waiter, handler) = state.withLock { state -> (UnsafeContinuation<Event?, any Error>?, (@Sendable () -> Void)?) in
            guard !state.cancelled else { return (nil, nil) }
            state.cancelled = true
            state.buffer = []
            state.head = 0
            defer {
                state.waiter = nil
                state.onCancel = nil
            }
            return (state.waiter, state.finished ? nil : state.onCancel)
        }
        waiter?.resume(returning: nil)
        handler?()
    }

    /// What the consumer's next step is.
    private enum Step {
        case event(Event)
        case end((any Error)?)
        case wait
    }

    package func next() async throws -> Event? {
        func take(_ state: inout State) -> Step {
            if let event = state.pop() { return .event(event) }
            if state.cancelled { return .end(nil) }
            if state.finished {
                defer { state.failure = nil }  // the error once, then nil
                return .end(state.failure)
            }
            return .wait
        }
        switch state.withLock({ take(&$0) }) {
        case .event(let event): return event
        case .end(let error?): throw error
        case .end(nil): return nil
        case .wait: break
        }
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Event?, any Error>) in
                var watchers: [CheckedContinuation<Void, Never>] = []
                let step = state.withLock { state -> Step in
                    let step = take(&state)
                    if case .wait = step {
                        if Task.isCancelled { return .end(nil) }
                        state.waiter = continuation
                        if !state.consumerWatchers.isEmpty { swap(&watchers, &state.consumerWatchers) }
                    }
                    return step
                }
                for watcher in watchers { watcher.resume() }
                switch step {
                case .event(let event): continuation.resume(returning: event)
                case .end(let error?): continuation.resume(throwing: error)
                case .end(nil): continuation.resume(returning: nil)
                case .wait: break
                }
            }
        } onCancel: {
            cancel()
        }
    }
}
