import RawbleTestPeers
import RawbleTestSupport
import Testing

private struct Ended: Error, Equatable {}

/// The growing log BumbleCentral and the two-port fixture wait on: what a wait finds, when it
/// fails, and that a cancelled wait leaves nothing behind.
@Suite("ObservedLog: waiting on a growing log")
struct ObservedLogTests {
    @Test("a wait finds an element already there, at or after its position, with the position")
    func findsWhatIsThere() async throws {
        let log = ObservedLog<Int>()
        log.append(contentsOf: [5, 7, 5, 9])
        #expect(try await log.firstIndexed(within: 10) { $0 == 5 } == (0, 5))
        #expect(try await log.firstIndexed(from: 1, within: 10) { $0 == 5 } == (2, 5))
        #expect(try await log.first(from: 3, within: 10) { $0 > 6 } == 9)
        #expect(log.elements == [5, 7, 5, 9] && log.count == 4)
    }

    @Test("a wait is resumed by the append that brings its element, not by one before it")
    func resumedByALaterAppend() async throws {
        let log = ObservedLog<Int>()
        log.append(1)
        let waiting = Task { try await log.firstIndexed(from: 1, within: 10) { $0 == 1 } }
        log.append(contentsOf: [2, 1])
        let found = try await waiting.value
        #expect(found == (2, 1))
    }

    @Test("the log's end fails the waits left and later ones that find nothing; what is there is still found")
    func endFailsTheWaits() async throws {
        let log = ObservedLog<Int>()
        log.append(3)
        let waiting = Task { try await log.first(within: 10) { $0 == 4 } }
        log.end(with: Ended())
        await #expect(throws: Ended.self) { try await waiting.value }
        await #expect(throws: Ended.self) { try await log.first(within: 10) { $0 == 4 } }
        #expect(try await log.first(within: 10) { $0 == 3 } == 3)
    }

    @Test("a wait with nothing to find times out with TestTimeout")
    func timesOut() async {
        let log = ObservedLog<Int>()
        await #expect(throws: TestTimeout.self) { try await log.first(within: 0.05) { $0 == 1 } }
    }

    @Test("a cancelled wait throws CancellationError, and the log goes on serving later waits")
    func cancelledWaitIsRemoved() async throws {
        let log = ObservedLog<Int>()
        let waiting = Task { try await log.first(within: 10) { $0 == 1 } }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        log.append(1)
        #expect(try await log.first(within: 10) { $0 == 1 } == 1)
    }
}
