import Synchronization

/// A list a test double appends to (what the host sent, the PDUs a bearer wrote) that a test
/// awaits: each append wakes the waits it satisfies, so a test waits for the event itself,
/// never polls on a timer. Thread-safe.
///
/// ```swift
/// let sent = Recording<[UInt8]>()
/// …                                                  // the double calls sent.append(pdu)
/// try await sent.wait(until: { $0.contains([0x1E]) })  // the confirmation went out
/// ```
public final class Recording<Element: Sendable>: Sendable {
    private struct Waiter {
        let id: UInt64
        let condition: @Sendable ([Element]) -> Bool
        let continuation: CheckedContinuation<[Element], any Error>
    }

    private struct State {
        var items: [Element] = []
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Everything appended so far, in order.
    public var items: [Element] { state.withLock { $0.items } }

    /// Appends `item` and wakes every wait its condition now satisfies.
    public func append(_ item: Element) {
        let woken = state.withLock { state -> [(CheckedContinuation<[Element], any Error>, [Element])] in
            state.items.append(item)
            var woken: [(CheckedContinuation<[Element], any Error>, [Element])] = []
            state.waiters.removeAll { waiter in
                guard waiter.condition(state.items) else { return false }
                woken.append((waiter.continuation, state.items))
                return true
            }
            return woken
        }
        for (continuation, items) in woken { continuation.resume(returning: items) }
    }

    /// The items once `condition` holds for them (at once when it already does). `condition`
    /// runs under the recording's lock: it must not call the recording.
    /// - Throws: ``TestTimeout`` after `timeout` of real time (a hang guard, not a speed
    ///   check); `CancellationError` when the task is cancelled first.
    @discardableResult
    public func wait(until condition: @escaping @Sendable ([Element]) -> Bool,
                     timeout: Duration = .seconds(60)) async throws -> [Element] {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        return try await within(seconds: seconds) { try await self.wait(until: condition) }
    }

    private func wait(until condition: @escaping @Sendable ([Element]) -> Bool) async throws -> [Element] {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[Element], any Error>) in
                let outcome = state.withLock { state -> Result<[Element], any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if condition(state.items) { return .success(state.items) }
                    state.waiters.append(Waiter(id: id, condition: condition, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            state.withLock { state -> CheckedContinuation<[Element], any Error>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }?.resume(throwing: CancellationError())
        }
    }
}
