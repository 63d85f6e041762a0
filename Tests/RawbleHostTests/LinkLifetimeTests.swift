@testable import RawbleHost
import RawbleBearer
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

@Suite("ConnectionRecord: no security wait outlives its record")
struct ConnectionRecordTests {
    /// Seen once in a full run: `rawble pair` hung in `connect`, the runtime reporting that
    /// `waitForSecurity` leaked its continuation, so a link's record had gone with a waiter in
    /// it and nothing would ever wake that waiter (its timer looks the record up by lifetime).
    /// Whatever drops a record, its waiters now learn it.
    @Test("a record dropped without ending its link settles its security waiters (linkLost), instead of leaking them")
    func droppedRecordSettlesItsWaiters() async throws {
        let (results, sink) = AsyncStream.makeStream(of: Result<LinkSecurity, HostError>?.self)
        Task {
            var record: ConnectionRecord? = ConnectionRecord(
                lifetime: LinkLifetime(id: 1, handle: 0x40),
                peer: DeviceAddress(BluetoothAddress(0xC0_B1_E0_00_00_01), type: .random),
                parameters: LinkParameters(interval: 24, latency: 0, supervisionTimeout: 72),
                attBufferLimit: 16, isCentral: true, pairing: nil)
            let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<LinkSecurity, HostError>, Never>) in
                record?.securityWaiters[7] = continuation
                record = nil
            }
            sink.yield(result)
        }
        // Bounded: a leaked waiter never yields; the watchdog ends the stream so the test fails.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(30))
            sink.yield(nil)
        }
        defer { watchdog.cancel() }
        var iterator = results.makeAsyncIterator()
        let first = await iterator.next() ?? nil
        guard case .failure(.linkLost) = first else {
            Issue.record("the waiter got \(String(describing: first)), not linkLost")
            return
        }
    }
}

@Suite("LinkLifetime: waiting for the link's security")
struct LinkSecurityWaitTests {
    /// What a wait for `level` on a new link gets when `events` run right after it registered,
    /// in the same synchronous step: the wait is woken by them, never finds them already done.
    private func wait(for level: LinkSecurity, then events: @escaping @Sendable (LinkLifetime) -> Void) async throws
        -> Result<LinkSecurity, HostError> {
        let lifetime = LinkLifetime(id: 1, handle: 0x40)
        return try await within(seconds: 60) {
            await withCheckedContinuation { continuation in
                lifetime.register(continuation, waitingFor: level, id: lifetime.makeWaiterID())
                events(lifetime)
            }
        }
    }

    @Test("a wait for a level is woken when the host sets it, with the level reached")
    func aWaitIsWokenByTheLevel() async throws {
        #expect(try await wait(for: .encrypted) { $0.security = .authenticated } == .success(.authenticated))
    }

    @Test("a lower level does not end a wait for a higher one; the link's end does, with its reason")
    func aLowerLevelDoesNotEndTheWait() async throws {
        let result = try await wait(for: .authenticated) { lifetime in
            lifetime.security = .encrypted
            lifetime.end(.disconnected(.remoteUserTerminatedConnection))
        }
        #expect(result == .failure(.disconnected(.remoteUserTerminatedConnection)))
    }

    @Test("a link already that secure returns at once; an ended link throws its end; a cancelled wait throws cancelled")
    func atOnceEndedAndCancelled() async throws {
        let secure = LinkLifetime(id: 1, handle: 0x40)
        secure.security = .authenticated
        #expect(try await within(seconds: 60) { try await secure.waitForSecurity(atLeast: .encrypted) } == .authenticated)

        let ended = LinkLifetime(id: 2, handle: 0x41)
        ended.end(.closed)
        await #expect(throws: HostError.closed) { try await within(seconds: 60) { try await ended.waitForSecurity(atLeast: .encrypted) } }

        let waiting = LinkLifetime(id: 3, handle: 0x42)
        let pending = Task { try await waiting.waitForSecurity(atLeast: .encrypted) }
        pending.cancel()
        await #expect(throws: HostError.cancelled) { try await within(seconds: 60) { try await pending.value } }
    }
}
