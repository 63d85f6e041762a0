import NIOCore
import NIOPosix
import RawbleHCITransport
import RawbleTestSupport
import Testing

/// What the sleepers of a test saw when they woke, in the order they woke.
private final class Wakes: Sendable {
    private let wakes = Recording<(name: String, now: ManualClock.Instant)>()

    func record(_ name: String, at now: ManualClock.Instant) {
        wakes.append((name, now))
    }

    var names: [String] { wakes.items.map(\.name) }
    var instants: [ManualClock.Instant] { wakes.items.map(\.now) }

    /// Waits (bounded) until `count` sleepers woke: woken by each wake as it is recorded.
    func waitFor(_ count: Int) async throws {
        try await wakes.wait(until: { $0.count >= count })
    }
}

private func at(_ seconds: Int) -> ManualClock.Instant {
    ManualClock.Instant(offset: .seconds(seconds))
}

@Suite("ManualClock: virtual time for timeout tests")
struct ManualClockTests {
    /// Sleepers run on one loop (a serial executor, first in first out), so they wake in the
    /// order the clock resumes them: what the order test checks.
    private let executor = EventLoopTaskExecutor(MultiThreadedEventLoopGroup.singleton.next())

    /// Starts a task that sleeps on `clock` until `deadline` and records its wake-up; returns
    /// once it sleeps, so sleepers are registered in the order they are started.
    private func sleeper(_ name: String, until deadline: ManualClock.Instant, on clock: ManualClock,
                         recordingIn wakes: Wakes) async throws -> Task<Void, any Error> {
        let sleeping = clock.sleeperCount
        let task = Task(executorPreference: executor) {
            try await clock.sleep(until: deadline, tolerance: nil)
            wakes.record(name, at: clock.now)
        }
        try await within(seconds: 60) { try await clock.waitForSleepers(sleeping + 1) }
        return task
    }

    @Test("time moves only when advanced, never back; a deadline not after now returns at once")
    func timeMovesOnlyWhenAdvanced() async throws {
        let clock = ManualClock()
        #expect(clock.now == at(0))
        try await clock.sleep(until: clock.now, tolerance: nil)
        try await clock.sleep(until: at(-1), tolerance: nil)
        #expect(clock.sleeperCount == 0 && clock.nextDeadline == nil)
        #expect(clock.advance(by: .seconds(5)) == 0, "nobody sleeps")
        #expect(clock.now == at(5))
        #expect(clock.advance(to: at(7)) == 0)
        #expect(clock.now == at(7))
        #expect(clock.advance(by: .zero) == 0)
        #expect(ManualClock(now: at(100)).now == at(100))
    }

    @Test("advance resumes exactly the sleepers due, earliest deadline first (equal deadlines in the order they slept); each sees the new time")
    func advanceResumesTheDueSleepersInDeadlineOrder() async throws {
        let clock = ManualClock()
        let wakes = Wakes()
        let c = try await sleeper("c", until: at(3), on: clock, recordingIn: wakes)
        let a = try await sleeper("a", until: at(1), on: clock, recordingIn: wakes)
        let b1 = try await sleeper("b1", until: at(2), on: clock, recordingIn: wakes)
        let b2 = try await sleeper("b2", until: at(2), on: clock, recordingIn: wakes)
        let late = try await sleeper("late", until: at(10), on: clock, recordingIn: wakes)
        #expect(clock.sleeperCount == 5)
        #expect(clock.nextDeadline == at(1))

        #expect(clock.advance(by: .seconds(2)) == 3, "a, b1 and b2 are due; c and late are not")
        try await wakes.waitFor(3)
        #expect(wakes.names == ["a", "b1", "b2"])
        #expect(wakes.instants == [at(2), at(2), at(2)], "woken by the advance, they see its time")
        #expect(clock.sleeperCount == 2)
        #expect(clock.nextDeadline == at(3))

        #expect(clock.advance(by: .milliseconds(999)) == 0, "c is due at 3 s, not 2.999 s")
        #expect(clock.advance(to: at(3)) == 1)
        try await wakes.waitFor(4)
        #expect(wakes.names == ["a", "b1", "b2", "c"])
        #expect(clock.sleeperCount == 1)
        for task in [a, b1, b2, c] { try await task.value }

        late.cancel()
        await #expect(throws: CancellationError.self) { try await within(seconds: 60) { try await late.value } }
        #expect(wakes.names.count == 4)
    }

    @Test("through any Clock<Duration>, as the shells hold it: sleep(for:) wakes at now + duration, not before")
    func sleepForThroughTheExistential() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(1))
        let erased: any Clock<Duration> = clock
        let wakes = Wakes()
        let sleeping = Task {
            try await erased.sleep(for: .seconds(30))
            wakes.record("slept", at: clock.now)
        }
        try await within(seconds: 60) { try await clock.waitForSleepers(dueWithin: .seconds(30)) }
        #expect(clock.nextDeadline == at(31))
        #expect(clock.advance(by: .milliseconds(29_999)) == 0)
        #expect(clock.sleeperCount == 1)
        #expect(clock.advance(by: .milliseconds(1)) == 1)
        try await within(seconds: 60) { try await sleeping.value }
        #expect(wakes.names == ["slept"])
        #expect(wakes.instants == [at(31)])
    }

    @Test("cancellation resumes a sleeper with CancellationError and removes it; a task already cancelled does not sleep")
    func cancellation() async throws {
        let clock = ManualClock()
        let sleeping = Task { try await clock.sleep(until: at(60), tolerance: nil) }
        try await within(seconds: 60) { try await clock.waitForSleepers() }
        sleeping.cancel()
        await #expect(throws: CancellationError.self) { try await within(seconds: 60) { try await sleeping.value } }
        #expect(clock.sleeperCount == 0)
        #expect(clock.advance(to: at(60)) == 0, "the cancelled sleeper is gone")

        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(until: at(120), tolerance: nil)
        }
        await #expect(throws: CancellationError.self) { try await within(seconds: 60) { try await cancelledFirst.value } }
        #expect(clock.sleeperCount == 0)
    }

    @Test("advanceOnceArmed waits for a timer due within the duration, then fires it; with none armed it ends in TestTimeout and time stays")
    func advanceOnceArmed() async throws {
        let clock = ManualClock()
        let wakes = Wakes()
        let arming = Task {
            try await within(seconds: 60) { try await clock.waitForWaiters() }  // armed after the test waits
            try await clock.sleep(for: .seconds(3))
            wakes.record("fired", at: clock.now)
        }
        #expect(try await clock.advanceOnceArmed(by: .seconds(3)) == 1)
        try await within(seconds: 60) { try await arming.value }
        #expect(wakes.instants == [at(3)])

        let later = Task { try await clock.sleep(for: .seconds(10)) }
        try await within(seconds: 60) { try await clock.waitForSleepers() }
        await #expect(throws: TestTimeout.self) { try await clock.advanceOnceArmed(by: .seconds(1), waitingAtMost: 0.1) }
        #expect(clock.now == at(3), "no timer due within a second: time did not move")
        later.cancel()
        await #expect(throws: CancellationError.self) { try await within(seconds: 60) { try await later.value } }
    }

    @Test("waitForSleepers returns once enough sleepers are due within the window, at once when they already are; cancelled, it throws")
    func waitForSleepers() async throws {
        let clock = ManualClock()
        let wakes = Wakes()
        try await clock.waitForSleepers(0)
        let far = try await sleeper("far", until: at(5), on: clock, recordingIn: wakes)
        try await clock.waitForSleepers(1)
        let returned = Wakes()
        let waiting = Task {
            try await clock.waitForSleepers(2, dueWithin: .seconds(1))
            returned.record("returned", at: clock.now)
        }
        let near = try await sleeper("near", until: at(1), on: clock, recordingIn: wakes)
        // Two sleep, but only one is due within a second: the waiter must still wait (one that
        // returned too early never waits, and this wait runs out).
        try await within(seconds: 60) { try await clock.waitForWaiters() }
        #expect(clock.waiterCount == 1)
        #expect(returned.names.isEmpty, "the sleeper due at 5 s is outside the window")
        let alsoNear = try await sleeper("alsoNear", until: at(1), on: clock, recordingIn: wakes)
        try await within(seconds: 60) { try await waiting.value }
        #expect(returned.names == ["returned"])
        // Time moved: the window counts from the new now.
        clock.advance(by: .seconds(1))
        try await wakes.waitFor(2)
        try await within(seconds: 60) { try await clock.waitForSleepers(1, dueWithin: .seconds(4)) }

        let cancelled = Task { try await clock.waitForSleepers(5) }
        try await within(seconds: 60) { try await clock.waitForWaiters() }  // waiting: the handler's path
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await within(seconds: 60) { try await cancelled.value } }
        #expect(clock.waiterCount == 0, "a cancelled waiter is gone")

        clock.advance(by: .seconds(4))
        for task in [far, near, alsoNear] { try await within(seconds: 60) { try await task.value } }
        // The two due at 1 s woke in the same advance: in either order (their tasks race to
        // record), both before the one due at 5 s.
        #expect(wakes.names.count == 3 && Set(wakes.names.prefix(2)) == ["near", "alsoNear"] && wakes.names.last == "far",
                "\(wakes.names)")
    }
}

@Suite("ManualClock.run: time moved on while an operation waits through its timeouts")
struct ManualClockRunTests {
    private struct Failure: Error, Equatable {}

    @Test("fires each timer within the window exactly at its deadline until the operation ends; a sleeper due later is left alone")
    func firesTheTimersOfTheOperation() async throws {
        let clock = ManualClock()
        let later = Task { try await clock.sleep(until: at(100), tolerance: nil) }
        try await within(seconds: 60) { try await clock.waitForSleepers() }
        let woke = try await within(seconds: 60) {
            try await clock.run(advancingToDeadlinesWithin: .seconds(1)) { () async throws -> [ManualClock.Instant] in
                var woke: [ManualClock.Instant] = []
                for pause in [Duration.seconds(1), .milliseconds(250), .milliseconds(750)] {
                    try await clock.sleep(for: pause)
                    woke.append(clock.now)
                }
                return woke
            }
        }
        #expect(woke == [at(1), ManualClock.Instant(offset: .milliseconds(1250)), at(2)])
        #expect(clock.now == at(2))
        #expect(clock.sleeperCount == 1, "the sleeper due at 100 s still sleeps")
        later.cancel()
        await #expect(throws: CancellationError.self) { try await within(seconds: 60) { try await later.value } }
    }

    @Test("the operation's error comes through, after the time it took")
    func passesTheErrorThrough() async throws {
        let clock = ManualClock()
        await #expect(throws: Failure()) {
            try await within(seconds: 60) {
                try await clock.run(advancingToDeadlinesWithin: .seconds(5)) { () async throws -> Int in
                    try await clock.sleep(for: .seconds(5))
                    throw Failure()
                }
            }
        }
        #expect(clock.now == at(5))
    }
}
