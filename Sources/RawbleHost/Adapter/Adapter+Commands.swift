// Running HCI commands: the waiting, cancellation and timers around the adapter's
// ``HostCommands`` (whose sans-I/O `CommandFlow` decides what goes when).

import RawbleHostCore
import RawbleWire

extension Adapter {
    /// Sends `command` and waits for its Command Complete or Command Status (bounded by
    /// `timeout`, else the configured command timeout).
    /// - Throws: ``HostError/cancelled`` when the task is cancelled meanwhile: a command still
    ///   waiting for a credit is withdrawn (never sent); one already sent is no longer awaited
    ///   (its answer, when it comes, is only logged).
    public func send(_ command: HCICommand, timeout: Duration? = nil) async throws(HostError) -> CommandOutcome {
        if let failure { throw failure }
        if Task.isCancelled { throw .cancelled }
        let limit = timeout ?? configuration.commandTimeout
        let token = try commands.submit(command, timeout: limit)
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                commands.wait(for: token, continuation)
                releaseCommands()
                if commands.hasQueued {
                    // Waiting for a command credit is bounded too: a controller that set its
                    // credits to 0 and never grants more must not wedge the host.
                    Task {
                        try? await self.clock.sleep(for: limit)
                        self.commands.withdrawIfStillQueued(token, opcode: command.opcode)
                    }
                }
            }
        } onCancel: {
            Task { await self.stopWaiting(for: token) }
        }
        if case .cancelled = outcome { throw .cancelled }
        return outcome
    }

    private func stopWaiting(for token: CommandToken) {
        commands.stopWaiting(for: token)
    }

    /// Runs a command that ends with Command Complete and returns its decoded return
    /// parameters. A failure status, a timeout or a malformed answer throws.
    @discardableResult
    public func execute(_ command: HCICommand, timeout: Duration? = nil) async throws(HostError) -> CommandReturn {
        let outcome = try await send(command, timeout: timeout)
        let opcode = command.opcode
        switch outcome {
        case .completed(_, let complete):
            let decoded: CommandReturn
            do {
                decoded = try CommandReturn.decode(opcode: complete.opcode, returnParameters: complete.returnParameters)
            } catch {
                throw .malformedReturn(opcode, error)
            }
            if let status = decoded.status, !status.isSuccess { throw .commandFailed(opcode, status) }
            return decoded
        case .statusReceived(_, let status):
            guard status.isSuccess else { throw .commandFailed(opcode, status) }
            return .success(opcode)
        default:
            throw error(for: outcome, opcode: opcode, timeout: timeout)
        }
    }

    /// Runs a command that starts with Command Status (connections, disconnection) and
    /// returns once the controller accepted it.
    func start(_ command: HCICommand, timeout: Duration? = nil) async throws(HostError) {
        let outcome = try await send(command, timeout: timeout)
        switch outcome {
        case .statusReceived(_, let status):
            guard status.isSuccess else { throw .commandFailed(command.opcode, status) }
        case .completed(_, let complete):
            // Not the documented answer, but a clear one: honour its status.
            if let status = complete.status, !status.isSuccess { throw .commandFailed(command.opcode, status) }
        default:
            throw error(for: outcome, opcode: command.opcode, timeout: timeout)
        }
    }

    private func error(for outcome: CommandOutcome, opcode: HCIOpcode, timeout: Duration?) -> HostError {
        switch outcome {
        case .timedOut:
            .commandTimedOut(opcode, seconds: (timeout ?? configuration.commandTimeout).seconds)
        default:
            failure ?? .closed
        }
    }

    /// Writes every command the credits allow and arms the timer for the earliest deadline.
    func releaseCommands() {
        guard let deadline = commands.release() else { return }
        startCommandTimer(for: deadline)
    }

    private func startCommandTimer(for deadline: HostClock.Instant) {
        Task {
            try? await self.clock.sleep(until: deadline, tolerance: .milliseconds(5))
            await self.commandTimerFired(scheduledFor: deadline)
        }
    }

    /// Times out unanswered commands, but not before what already arrived was handled (see
    /// ``HostCommands/timerFired(scheduledFor:)`` for the host's own slowness).
    private func commandTimerFired(scheduledFor deadline: HostClock.Instant) async {
        commands.timerEnded()
        await Task.yield()
        switch commands.timerFired(scheduledFor: deadline) {
        case .rearm(let instant):
            if commands.claimTimer(at: instant) { startCommandTimer(for: instant) }
        case .expired:
            releaseCommands()
        }
    }
}
