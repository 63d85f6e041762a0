import RawbleHostCore
import RawbleWire
import Testing

/// A fake monotonic instant: the engine only compares and advances instants, so tests control
/// time exactly.
struct FakeInstant: InstantProtocol {
    var offset: Duration
    static let zero = FakeInstant(offset: .zero)
    func advanced(by duration: Duration) -> FakeInstant { FakeInstant(offset: offset + duration) }
    func duration(to other: FakeInstant) -> Duration { other.offset - offset }
    static func < (a: FakeInstant, b: FakeInstant) -> Bool { a.offset < b.offset }
    static func seconds(_ s: Double) -> FakeInstant { FakeInstant(offset: .milliseconds(Int64(s * 1000))) }
}

typealias Flow = CommandFlow<FakeInstant>

func complete(_ opcode: HCIOpcode, credits: UInt8 = 1, _ parameters: [UInt8] = [0x00]) -> HCIEvent {
    .commandComplete(.init(numHCICommandPackets: credits, opcode: opcode, returnParameters: parameters[...]))
}

func status(_ opcode: HCIOpcode, _ status: HCIStatus, credits: UInt8 = 1) -> HCIEvent {
    .commandStatus(.init(status: status, numHCICommandPackets: credits, opcode: opcode))
}

let t0 = FakeInstant.zero
let timeout = Duration.seconds(2)

@Suite("HCI command flow")
struct CommandFlowTests {
    @Test func oneCreditHoldsTheSecondCommandUntilTheFirstCompletes() throws {
        var flow = Flow()
        let a = try flow.submit(.reset, timeout: timeout, now: t0)
        let b = try flow.submit(.readBDADDR, timeout: timeout, now: t0)
        let first = flow.nextCommandsToSend(now: t0)
        #expect(first.map(\.token) == [a])
        #expect(first.first?.packet == [0x03, 0x0C, 0x00])
        #expect(flow.nextCommandsToSend(now: t0).isEmpty)
        #expect(flow.queuedCount == 1)

        let outcomes = flow.receive(complete(.reset), now: .seconds(0.1))
        #expect(outcomes == [.completed(a, .init(numHCICommandPackets: 1, opcode: .reset, returnParameters: [0x00]))])
        #expect(outcomes.first?.isSuccess == true)
        let second = flow.nextCommandsToSend(now: .seconds(0.1))
        #expect(second.map(\.token) == [b])
        #expect(second.first?.packet == [0x09, 0x10, 0x00])
    }

    @Test func zeroCreditsStopSendingUntilANOPCompleteGrantsCredits() throws {
        var flow = Flow()
        let a = try flow.submit(.reset, timeout: timeout, now: t0)
        let b = try flow.submit(.readBDADDR, timeout: timeout, now: t0)
        let c = try flow.submit(.readBufferSize, timeout: timeout, now: t0)
        #expect(flow.nextCommandsToSend(now: t0).map(\.token) == [a])
        #expect(flow.receive(complete(.reset, credits: 0), now: t0).first?.token == a)
        #expect(flow.credits == 0)
        #expect(flow.nextCommandsToSend(now: t0).isEmpty)

        // NOP: Command Complete for opcode 0x0000 carries only credits, no outcome.
        #expect(flow.receive(complete(HCIOpcode(0x0000), credits: 2, []), now: t0).isEmpty)
        #expect(flow.credits == 2)
        #expect(flow.nextCommandsToSend(now: t0).map(\.token) == [b, c])
        #expect(flow.credits == 0)
        // A Command Status NOP also only sets credits.
        #expect(flow.receive(status(HCIOpcode(0x0000), .success, credits: 5), now: t0).isEmpty)
        #expect(flow.credits == 5)
        #expect(flow.awaitingCount == 2)
    }

    @Test func commandStatusSuccessStartsTheCommandAndFailureRefusesIt() throws {
        var flow = Flow()
        let a = try flow.submit(.leCreateConnectionCancel, timeout: timeout, now: t0)
        _ = flow.nextCommandsToSend(now: t0)
        let started = flow.receive(status(.leCreateConnectionCancel, .success), now: t0)
        #expect(started == [.statusReceived(a, .success)])
        #expect(started.first?.isSuccess == true)
        #expect(flow.awaitingCount == 0)
        #expect(flow.nextDeadline == nil)

        let b = try flow.submit(.leCreateConnectionCancel, timeout: timeout, now: t0)
        _ = flow.nextCommandsToSend(now: t0)
        let refused = flow.receive(status(.leCreateConnectionCancel, .commandDisallowed), now: t0)
        #expect(refused == [.statusReceived(b, .commandDisallowed)])
        #expect(refused.first?.isSuccess == false)
        #expect(flow.awaitingCount == 0)
        // Nothing left to time out.
        #expect(flow.expire(now: .seconds(100)).isEmpty)
    }

    @Test func answersMatchTheirOpcodeWithTwoDifferentCommandsInFlight() throws {
        var flow = Flow()
        _ = try flow.submit(.reset, timeout: timeout, now: t0)
        _ = flow.nextCommandsToSend(now: t0)
        _ = flow.receive(complete(.reset, credits: 2), now: t0)

        let a = try flow.submit(.readBDADDR, timeout: timeout, now: t0)
        let b = try flow.submit(.readBufferSize, timeout: timeout, now: t0)
        #expect(flow.nextCommandsToSend(now: t0).map(\.token) == [a, b])
        // Answered out of order: each goes to its own command.
        #expect(flow.receive(complete(.readBufferSize, credits: 1, [0x00, 1, 2, 3, 4, 5, 6, 7]), now: t0).first?.token == b)
        #expect(flow.receive(complete(.readBDADDR, credits: 2, [0x00, 1, 2, 3, 4, 5, 6]), now: t0).first?.token == a)
        #expect(flow.awaitingCount == 0)
    }

    @Test func sameOpcodeTwiceMatchesTheOldestFirst() throws {
        var flow = Flow()
        _ = flow.receive(complete(HCIOpcode(0), credits: 2, []), now: t0)
        let a = try flow.submit(.readBDADDR, timeout: timeout, now: t0)
        let b = try flow.submit(.readBDADDR, timeout: timeout, now: t0)
        _ = flow.nextCommandsToSend(now: t0)
        #expect(flow.receive(complete(.readBDADDR), now: t0).first?.token == a)
        #expect(flow.receive(complete(.readBDADDR), now: t0).first?.token == b)
    }

    @Test func completeForANeverSentOpcodeIsUnexpectedAndLeavesPendingAlone() throws {
        var flow = Flow()
        let a = try flow.submit(.reset, timeout: timeout, now: t0)
        let b = try flow.submit(.readBDADDR, timeout: timeout, now: t0)
        _ = flow.nextCommandsToSend(now: t0)

        let stray = complete(.leRand, credits: 0, [0x00, 1, 2, 3, 4, 5, 6, 7, 8])
        #expect(flow.receive(stray, now: t0) == [.unexpected(stray)])
        // Queued-but-unsent commands are not matched either.
        let early = complete(.readBDADDR, credits: 0)
        #expect(flow.receive(early, now: t0) == [.unexpected(early)])
        let strayStatus = status(.disconnect, .success, credits: 1)
        #expect(flow.receive(strayStatus, now: t0) == [.unexpected(strayStatus)])
        #expect(flow.awaitingCount == 1)
        #expect(flow.queuedCount == 1)
        // Its credits were taken, so nothing leaks: the queued command goes out now.
        #expect(flow.credits == 1)
        #expect(flow.nextCommandsToSend(now: t0).map(\.token) == [b])
        _ = flow.receive(complete(HCIOpcode(0), credits: 1, []), now: t0)
        #expect(flow.receive(complete(.reset), now: t0).first?.token == a)
        #expect(flow.receive(complete(.readBDADDR), now: t0).first?.token == b)
    }

    @Test func eventsOtherThanCompleteAndStatusAreIgnored() {
        var flow = Flow()
        #expect(flow.receive(.hardwareError(code: 1), now: t0).isEmpty)
        #expect(flow.receive(.numberOfCompletedPackets([.init(connectionHandle: 1, count: 3)]), now: t0).isEmpty)
        #expect(flow.credits == 1)
    }

    @Test func timeoutNamesTheOpcodeAfterTheDeadlineAndNotBefore() throws {
        var flow = Flow()
        let a = try flow.submit(.leSetScanEnable(enable: true, filterDuplicates: false), timeout: .seconds(2), now: t0)
        let b = try flow.submit(.readBDADDR, timeout: .seconds(2), now: t0)
        #expect(flow.nextDeadline == nil)
        _ = flow.nextCommandsToSend(now: .seconds(1))
        #expect(flow.nextDeadline == .seconds(3))
        // Queued commands do not time out; the sent one not before its deadline.
        #expect(flow.expire(now: .seconds(2.999)).isEmpty)
        #expect(flow.credits == 0)
        #expect(flow.expire(now: .seconds(3)) == [.timedOut(a, .leSetScanEnable)])
        #expect(flow.nextDeadline == nil)
        // The lost command's credit is given back, so the queue moves on.
        #expect(flow.credits == 1)
        #expect(flow.nextCommandsToSend(now: .seconds(3)).map(\.token) == [b])
        // A late answer for the timed-out command is unexpected and does not end b.
        let late = complete(.leSetScanEnable)
        #expect(flow.receive(late, now: .seconds(3.5)) == [.unexpected(late)])
        #expect(flow.awaitingCount == 1)
        #expect(flow.expire(now: .seconds(5)) == [.timedOut(b, .readBDADDR)])
    }

    @Test func transportClosedFailsQueuedAndAwaitedCommands() throws {
        var flow = Flow()
        let a = try flow.submit(.reset, timeout: timeout, now: t0)
        let b = try flow.submit(.readBDADDR, timeout: timeout, now: t0)
        let c = try flow.submit(.leSetScanEnable(enable: true, filterDuplicates: true), timeout: timeout, now: t0)
        _ = flow.nextCommandsToSend(now: t0)
        _ = flow.receive(complete(.reset, credits: 0), now: t0)
        _ = flow.receive(complete(HCIOpcode(0), credits: 1, []), now: t0)
        _ = flow.nextCommandsToSend(now: t0)
        _ = flow.receive(status(HCIOpcode(0), .success, credits: 0), now: t0)
        let outcomes = flow.transportClosed()
        #expect(outcomes == [.transportClosed(c), .transportClosed(b)])
        #expect(!outcomes.contains { $0.token == a })
        #expect(flow.queuedCount == 0 && flow.awaitingCount == 0)
        #expect(flow.nextDeadline == nil)
        #expect(flow.expire(now: .seconds(100)).isEmpty)
        // Ready for a new transport: one credit, fresh tokens.
        #expect(flow.credits == 1)
        let d = try flow.submit(.reset, timeout: timeout, now: t0)
        #expect(d > c)
        #expect(flow.nextCommandsToSend(now: t0).map(\.token) == [d])
    }

    @Test func resetCancelsEverythingAndRestoresOneCredit() throws {
        var flow = Flow()
        let a = try flow.submit(.readBDADDR, timeout: timeout, now: t0)
        let b = try flow.submit(.readBufferSize, timeout: timeout, now: t0)
        _ = flow.nextCommandsToSend(now: t0)
        #expect(flow.reset() == [.cancelled(b), .cancelled(a)])
        #expect(flow.credits == 1)
        let stray = complete(.readBDADDR)
        #expect(flow.receive(stray, now: t0) == [.unexpected(stray)])
    }

    @Test func submitBeyondCapacityThrowsQueueFull() throws {
        var flow = Flow(capacity: 2)
        _ = try flow.submit(.reset, timeout: timeout, now: t0)
        _ = try flow.submit(.readBDADDR, timeout: timeout, now: t0)
        #expect(throws: CommandFlowError.queueFull(capacity: 2)) {
            _ = try flow.submit(.readBufferSize, timeout: timeout, now: t0)
        }
        // Sent but unanswered commands still count; answering frees room.
        _ = flow.nextCommandsToSend(now: t0)
        #expect(throws: CommandFlowError.queueFull(capacity: 2)) {
            _ = try flow.submit(.readBufferSize, timeout: timeout, now: t0)
        }
        _ = flow.receive(complete(.reset), now: t0)
        _ = try flow.submit(.readBufferSize, timeout: timeout, now: t0)
        #expect(Flow(capacity: 0).capacity == 1)
    }

    @Test func worksWithContinuousClockInstants() throws {
        var flow = CommandFlow<ContinuousClock.Instant>()
        let start = ContinuousClock.now
        let a = try flow.submit(.reset, timeout: .seconds(1), now: start)
        _ = flow.nextCommandsToSend(now: start)
        #expect(flow.nextDeadline == start + .seconds(1))
        #expect(flow.expire(now: start + .milliseconds(999)).isEmpty)
        #expect(flow.expire(now: start + .seconds(1)) == [.timedOut(a, .reset)])
    }
}

@Suite("CommandFlow: withdrawing queued commands")
struct CommandFlowWithdrawTests {
    @Test("a queued command can be withdrawn; a sent one cannot")
    func withdraw() throws {
        var flow = CommandFlow<ContinuousClock.Instant>()
        let now = ContinuousClock.now
        let first = try flow.submit(.reset, timeout: .seconds(1), now: now)
        let second = try flow.submit(.readBDADDR, timeout: .seconds(1), now: now)
        #expect(flow.nextCommandsToSend(now: now).map(\.token) == [first])
        #expect(flow.withdraw(first) == nil, "already sent")
        #expect(flow.withdraw(second) == .cancelled(second))
        #expect(flow.queuedCount == 0)
        #expect(flow.withdraw(second) == nil, "already ended")
    }
}
