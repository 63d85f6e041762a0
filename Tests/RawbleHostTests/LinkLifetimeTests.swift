@testable import RawbleHost
import RawbleHostCore
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

// LinkLifetime: the waiters of one link, registered and resumed from many tasks at once.

@Suite("LinkLifetime: waiters")
struct LinkLifetimeTests {
    @Test("concurrent waiters each get their own id: resuming one by its id never resumes another")
    func concurrentRegistrationsKeepTheirIDs() async throws {
        let lifetime = LinkLifetime(id: 1, handle: 0x40)
        let rounds = 20_000
        // Each task registers and at once resumes its waiter by the id it was given, with an
        // error naming the task. A task handed another waiter's id resumes that one instead
        // (and its own hangs): a watchdog ends the link then, so the test fails instead of hanging.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(60))
            lifetime.end(.closed)
        }
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var wrong = 0
                    for round in 0..<(rounds / 4) {
                        let mine = HostError.busy("\(worker)/\(round)")
                        let got = await withCheckedContinuation { continuation in
                            let id = lifetime.register(continuation)
                            lifetime.resume(waiter: id, with: mine)
                        }
                        if got != mine { wrong += 1 }
                    }
                    return wrong
                }
            }
            return await group.reduce(0, +)
        }
        watchdog.cancel()
        #expect(mismatches == 0, "a waiter was resumed with another waiter's result")
    }
}
