import NIOCore
import NIOPosix
import RawbleHCITransport
import RawbleTestSupport
import RawbleTransport
import Testing

@Suite("EventLoopClock: sleeps on the loop's own timers")
struct EventLoopClockTests {
    private let loop = MultiThreadedEventLoopGroup.singleton.next()

    /// The thread check guards the pacing `rawble peripheral` relies on (a sleeper preferring the
    /// loop resumes there); it would hold for any clock, so it is not what tells this one apart.
    @Test("a sleep on the loop's timer lasts until its deadline, and a task preferring the loop wakes on the loop's thread")
    func sleepsUntilTheDeadlineOnTheLoop() async throws {
        let clock = EventLoopClock(loop)
        let executor = EventLoopTaskExecutor(loop)
        let loop = self.loop
        let (deadline, woke, onLoop) = try await Task(executorPreference: executor) {
            let deadline = clock.now.advanced(by: .milliseconds(20))
            try await clock.sleep(until: deadline, tolerance: nil)
            return (deadline, ContinuousClock.now, loop.inEventLoop)
        }.value
        #expect(woke >= deadline)
        #expect(onLoop, "resumed on the loop's thread")
    }

    @Test("a deadline already past returns at once; cancellation ends a long sleep with CancellationError")
    func pastDeadlineAndCancellation() async throws {
        let clock = EventLoopClock(loop)
        try await clock.sleep(until: clock.now.advanced(by: .seconds(-1)), tolerance: nil)
        let sleeper = Task { try await clock.sleep(until: clock.now.advanced(by: .seconds(3600)), tolerance: nil) }
        sleeper.cancel()
        let outcome = try await within(seconds: 60) { await sleeper.result }
        #expect(throws: CancellationError.self) { try outcome.get() }
    }
}
