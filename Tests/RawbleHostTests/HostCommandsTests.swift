@testable import RawbleHost
import Logging
import RawbleHostCore
import RawbleTestSupport
import RawbleWire
import Testing

// HostCommands: a command's outcome reaches its caller even when it comes before the caller
// waits. Between `submit` and `wait(for:)` the adapter awaits, and any `await` may let it
// handle other work first (on a task that prefers the adapter's task executor, every one is a
// trip through the loop's queue): another command's release may send this one, and its answer
// may be handled, before the wait is filed.

/// Hands an actor-confined object to `within`'s task: the test uses it from one task at a time
/// (it waits for that task), as the adapter uses it from its own executor only.
private struct OneTaskAtATime<Value>: @unchecked Sendable {
    let value: Value
}

@Suite("HostCommands: outcomes that come before their caller waits")
struct HostCommandsTests {
    private static func commands() -> (HostCommands, AsyncStream<H4Packet>) {
        let (outbound, continuation) = AsyncStream.makeStream(of: H4Packet.self)
        let commands = HostCommands(outbound: continuation, clock: HostClock(ManualClock()),
                                    logger: Logger(label: "host-commands") { _ in RecordingLogHandler() })
        return (commands, outbound)
    }

    @Test("a Command Complete handled before its caller waits is kept for it and given at once; the next command, waited for first, gets its own")
    func answerBeforeTheWait() async throws {
        let (commands, _) = Self.commands()
        let token = try commands.submit(.reset, timeout: .seconds(10))
        _ = commands.release()
        commands.receive(ScriptedController.complete(.reset))
        // Bounded: before the fix, this wait was filed after its answer and never ended.
        let shared = OneTaskAtATime(value: commands)
        let outcome = try await within(seconds: 60) { await withCheckedContinuation { shared.value.wait(for: token, $0) } }
        guard case .completed(let answered, _) = outcome else {
            Issue.record("expected the kept Command Complete, got \(outcome)")
            return
        }
        #expect(answered == token)

        // The next command, waited for first, gets its own answer, not the one kept before.
        let next = try commands.submit(.reset, timeout: .seconds(10))
        _ = commands.release()
        let second = try await within(seconds: 60) { await withCheckedContinuation { continuation in
            shared.value.wait(for: next, continuation)
            shared.value.receive(ScriptedController.complete(.reset))
        } }
        guard case .completed(let secondToken, _) = second else {
            Issue.record("expected the second Command Complete, got \(second)")
            return
        }
        #expect(secondToken == next)
    }

    @Test("a caller cancelled before it waits (the command withdrawn, so no answer will come) learns it when it waits")
    func cancelledBeforeTheWait() async throws {
        let (commands, _) = Self.commands()
        let token = try commands.submit(.reset, timeout: .seconds(10))
        commands.stopWaiting(for: token)
        let shared = OneTaskAtATime(value: commands)
        let outcome = try await within(seconds: 60) { await withCheckedContinuation { shared.value.wait(for: token, $0) } }
        #expect(outcome == .cancelled(token))
    }
}

@Suite("ConnectionRecord: an LE Connection Update Complete that comes before the host's wait for it")
struct ConnectionRecordParameterUpdateTests {
    @Test("a Complete handled after the update was asked for and before its wait was filed (both in one read from the controller) ends that wait at once; one handled before the update was asked for does not")
    func completeBeforeTheWait() async throws {
        let record = ConnectionRecord(lifetime: LinkLifetime(id: 1, handle: 0x40), peer: ScriptedController.peer,
                                      parameters: LinkParameters(interval: 24, latency: 0, supervisionTimeout: 400),
                                      attBufferLimit: 16, isCentral: true, pairing: nil)
        let shared = OneTaskAtATime(value: record)
        record.parameterUpdateCompleted()  // an earlier update's, or one the controller made itself
        let before = record.parameterUpdatesCompleted
        record.parameterUpdateCompleted()  // this update's, handled before its wait is filed
        let timer = Task<Void, Never> { try? await Task.sleep(for: .seconds(3600)) }
        try await within(seconds: 60) {
            await withCheckedContinuation { shared.value.awaitParameterUpdate(id: 1, completedBefore: before, $0, timer: timer) }
        }
        #expect(timer.isCancelled, "the wait's timer is cancelled with it")

        // A wait counted from now is not ended by what came before.
        let now = record.parameterUpdatesCompleted
        let second = Task<Void, Never> { try? await Task.sleep(for: .seconds(3600)) }
        try await within(seconds: 60) {
            await withCheckedContinuation { continuation in
                shared.value.awaitParameterUpdate(id: 2, completedBefore: now, continuation, timer: second)
                #expect(!second.isCancelled, "filed: waiting for its own Complete")
                shared.value.parameterUpdateCompleted()
            }
        }
        #expect(second.isCancelled)
    }
}
