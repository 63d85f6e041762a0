import Synchronization

/// A log that only grows (packets a transport delivered, lines a peer printed) and lets a test
/// wait, bounded and cancellable, for the first element at or after a position that matches.
/// Every element is kept, so a wait started late still finds what came before it; the log's
/// end (``end(with:)``) fails the waits that are left and every later one that finds nothing.
public final class ObservedLog<Element: Sendable>: Sendable {
    private struct Waiter {
        var id: Int
        var from: Int
        var match: @Sendable (Element) -> Bool
        var continuation: CheckedContinuation<Int, any Error>
    }

    private struct State {
        var elements: [Element] = []
        var waiters: [Waiter] = []
        var ended: (any Error)?
        var nextID = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Every element so far, in order.
    public var elements: [Element] { state.withLock { $0.elements } }

    /// How many elements so far (the position the next one will take).
    public var count: Int { state.withLock { $0.elements.count } }

    /// Adds `elements` at the end and resumes the waiters whose element is among them.
    public func append(contentsOf elements: some Sequence<Element>) {
        let ready: [(CheckedContinuation<Int, any Error>, Int)] = state.withLock { state in
            let start = state.elements.count
            state.elements.append(contentsOf: elements)
            var ready: [(CheckedContinuation<Int, any Error>, Int)] = []
            state.waiters.removeAll { waiter in
                for index in max(start, waiter.from)..<state.elements.count where waiter.match(state.elements[index]) {
                    ready.append((waiter.continuation, index))
                    return true
                }
                return false
            }
            return ready
        }
        for (continuation, index) in ready { continuation.resume(returning: index) }
    }

    /// Adds one element at the end.
    public func append(_ element: Element) { append(contentsOf: CollectionOfOne(element)) }

    /// The log will not grow (its source ended): the waits left, and later ones that find
    /// nothing, fail with `error`.
    public func end(with error: any Error) {
        let waiters = state.withLock { state in
            state.ended = error
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(throwing: error) }
    }

    /// The first element at or after position `from` that `match` accepts (already there or
    /// to come), with its position; waits at most `seconds`, then throws ``TestTimeout``.
    public func firstIndexed(from: Int = 0, within seconds: Double,
                             where match: @escaping @Sendable (Element) -> Bool) async throws -> (index: Int, element: Element) {
        let index = try await within(seconds: seconds) { try await self.index(from: from, where: match) }
        let element = state.withLock { state in state.elements.indices.contains(index) ? state.elements[index] : nil }
        guard let element else { throw TestTimeout() }
        return (index, element)
    }

    /// ``firstIndexed(from:within:where:)`` without the position.
    public func first(from: Int = 0, within seconds: Double,
                      where match: @escaping @Sendable (Element) -> Bool) async throws -> Element {
        try await firstIndexed(from: from, within: seconds, where: match).element
    }

    /// The position of the first match at or after `from`, waiting for it without a bound.
    private func index(from: Int, where match: @escaping @Sendable (Element) -> Bool) async throws -> Int {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int, any Error>) in
                let outcome: Result<Int, any Error>? = state.withLock { state in
                    if from < state.elements.count,
                       let found = (max(from, 0)..<state.elements.count).first(where: { match(state.elements[$0]) }) {
                        return .success(found)
                    }
                    if let ended = state.ended { return .failure(ended) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters.append(Waiter(id: id, from: from, match: match, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }
}
