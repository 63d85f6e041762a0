import RawbleTestSupport
import Synchronization
import Testing

/// A wait that ignores cancellation: it ends only when ``open()`` is called.
private final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    var isOpen: Bool { state.withLock { $0.isOpen } }

    func wait() async {
        await withCheckedContinuation { continuation in
            let open = state.withLock { state -> Bool in
                if state.isOpen { return true }
                state.waiter = continuation
                return false
            }
            if open { continuation.resume() }
        }
    }

    func open() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.isOpen = true
            defer { state.waiter = nil }
            return state.waiter
        }?.resume()
    }
}

@Suite("within(seconds:): the bound of every test wait")
struct WithinTests {
    @Test("an operation that ignores cancellation is still bounded: TestTimeout at the deadline, the operation left running")
    func boundsANonCooperativeOperation() async throws {
        let gate = Gate()
        // Only so that a broken `within` ends the test instead of hanging it. Long: at the
        // start of a full run the cooperative pool can be busy for over a minute (seen: 75 s),
        // and a watchdog that fires first would fail a `within` that works.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(300))
            gate.open()
        }
        let timeout = await #expect(throws: TestTimeout.self) {
            try await within(seconds: 0.2) { await gate.wait() }
        }
        // Its line is the expansion's of #expect, one up from `within`'s own.
        #expect(timeout?.description.hasPrefix("TestTimeout: no result within 0.2 s (WithinTests.swift:") == true,
                "the timeout names its bound and where it is: \(String(describing: timeout))")
        #expect(!gate.isOpen, "within returned before the operation ended, not after it")
        watchdog.cancel()
        gate.open()
    }

    @Test("the operation's result and errors come through unchanged")
    func passesResultsThrough() async throws {
        #expect(try await within(seconds: 10) { 42 } == 42)
        struct Failure: Error, Equatable {}
        await #expect(throws: Failure()) {
            try await within(seconds: 10) { () async throws -> Int in throw Failure() }
        }
    }

    @Test("cancelling the caller ends the wait at once with CancellationError, even around a non-cooperative operation")
    func callerCancellation() async throws {
        let gate = Gate()
        let watchdog = Task {
            try await Task.sleep(for: .seconds(10))
            gate.open()
        }
        let waiting = Task { try await within(seconds: 60) { await gate.wait() } }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(!gate.isOpen)
        watchdog.cancel()
        gate.open()
    }
}
