import Logging
import RawbleHostCore
import RawbleWire

/// The host's HCI command state, owned by one ``Adapter`` and used only on its executor: the
/// sans-I/O `CommandFlow` plus who waits for each command, the timer's deadline and what the
/// writer has not written yet. It decides and writes; the adapter does the awaiting and timers.
/// Its time is the adapter's clock (``Adapter/Configuration/clock``).
final class HostCommands {
    private var flow = CommandFlow<HostClock.Instant>(capacity: 64)
    private let clock: HostClock
    private var waiters: [CommandToken: CheckedContinuation<CommandOutcome, Never>] = [:]
    /// Commands submitted whose caller has not started waiting yet, and the outcomes that
    /// came for them meanwhile: any `await` between the two may let the adapter handle the
    /// answer first (on a task that prefers the adapter's task executor, every one is a trip
    /// through the loop's queue). Each entry goes when its caller waits.
    private var unclaimed: Set<CommandToken> = []
    private var early: [CommandToken: CommandOutcome] = [:]
    /// The deadline a timer is armed for (the adapter's task), if any.
    private var timerDeadline: HostClock.Instant?
    /// Command packets handed to the writer and not yet written, and when the last one was:
    /// a command's time to answer only really starts once it has left the host.
    private var unwritten = 0
    private var lastWritten: HostClock.Instant
    /// Set once the host stopped: nothing more is written, late answers are only logged at debug.
    private var stopped = false
    private let outbound: AsyncStream<H4Packet>.Continuation
    private let logger: Logger

    /// Whether other hosts send commands on the same controller (the kernel, on its raw HCI
    /// channel): their answers reach this host too and are normal, not worth a warning.
    private let controllerShared: Bool

    init(outbound: AsyncStream<H4Packet>.Continuation, clock: HostClock, logger: Logger, controllerShared: Bool = false) {
        self.outbound = outbound
        self.clock = clock
        lastWritten = clock.now
        self.logger = logger
        self.controllerShared = controllerShared
    }

    /// Whether commands wait for a credit (their wait must be bounded too).
    var hasQueued: Bool { flow.queuedCount > 0 }

    /// Queues `command`; ``HostError/commandQueueFull`` when the engine holds too many.
    func submit(_ command: HCICommand, timeout: Duration) throws(HostError) -> CommandToken {
        do {
            let token = try flow.submit(command, timeout: timeout, now: clock.now)
            unclaimed.insert(token)
            return token
        } catch {
            throw .commandQueueFull
        }
    }

    /// Registers who waits for `token`'s outcome.
    func wait(for token: CommandToken, _ continuation: CheckedContinuation<CommandOutcome, Never>) {
        unclaimed.remove(token)
        if let outcome = early.removeValue(forKey: token) {
            continuation.resume(returning: outcome)
        } else {
            waiters[token] = continuation
        }
    }

    /// The caller of the command was cancelled: withdraw it if it still waits for a credit,
    /// else stop waiting for its answer.
    func stopWaiting(for token: CommandToken) {
        _ = flow.withdraw(token)
        if unclaimed.contains(token) {
            early[token] = .cancelled(token)
        } else {
            waiters.removeValue(forKey: token)?.resume(returning: .cancelled(token))
        }
    }

    /// The command's credit did not come in time: withdraw it (if still queued) as timed out.
    func withdrawIfStillQueued(_ token: CommandToken, opcode: HCIOpcode) {
        guard flow.withdraw(token) != nil else { return }
        logger.warning("the controller granted no command credit for \(opcode) in time")
        deliver([.timedOut(token, opcode)])
    }

    /// Writes every command the credits allow; returns a deadline to arm a timer for when
    /// none is armed for it or earlier.
    func release() -> HostClock.Instant? {
        guard !stopped else { return nil }
        for outgoing in flow.nextCommandsToSend(now: clock.now) {
            unwritten += 1
            outbound.yield(H4Packet(type: .command, bytes: outgoing.packet))
        }
        guard let deadline = flow.nextDeadline else { return nil }
        return claimTimer(at: deadline) ? deadline : nil
    }

    /// Records a timer for `deadline`; `false` when one is already armed for then or earlier.
    func claimTimer(at deadline: HostClock.Instant) -> Bool {
        if let armed = timerDeadline, armed <= deadline { return false }
        timerDeadline = deadline
        return true
    }

    /// The writer wrote a command packet.
    func written() {
        unwritten -= 1
        lastWritten = clock.now
    }

    /// A Command Complete or Command Status: its command's waiter learns the outcome.
    func receive(_ event: HCIEvent) {
        deliver(flow.receive(event, now: clock.now))
    }

    /// What a timer that fired does next.
    enum TimerAction {
        /// Arm a timer again for this instant (the host was the slow one: a grace period).
        case rearm(HostClock.Instant)
        /// Overdue commands were timed out; release what the credits now allow.
        case expired
    }

    /// The timer armed for `deadline` fired (after what had already arrived was handled).
    /// Times out unanswered commands, unless the host itself was the slow one (commands still
    /// unwritten, or the timer ran late because the process was starved of CPU): then the
    /// controller gets a short grace period, bounded so a stuck writer cannot postpone for ever.
    func timerFired(scheduledFor deadline: HostClock.Instant) -> TimerAction {
        let grace = Duration.milliseconds(100)
        let now = clock.now
        let hostWasSlow = unwritten > 0 || now - deadline > grace || now - lastWritten < grace
        if hostWasSlow, let overdue = flow.nextDeadline, now < overdue + .seconds(2) {
            return .rearm(now + grace)
        }
        let outcomes = flow.expire(now: clock.now)
        for case .timedOut(_, let opcode) in outcomes {
            logger.warning("the controller did not answer \(opcode) in time")
        }
        deliver(outcomes)
        return .expired
    }

    /// A timer is no longer armed (it fired).
    func timerEnded() {
        timerDeadline = nil
    }

    /// The host stopped: every command pending fails as the transport's end, nothing more is written.
    func stop() {
        stopped = true
        deliver(flow.transportClosed())
    }

    private func deliver(_ outcomes: [CommandOutcome]) {
        for outcome in outcomes {
            if let token = outcome.token {
                if let waiter = waiters.removeValue(forKey: token) {
                    waiter.resume(returning: outcome)
                } else if unclaimed.contains(token), early[token] == nil {
                    early[token] = outcome
                }
            } else if case .unexpected(let event) = outcome {
                if controllerShared {
                    logger.trace("the controller answered another host's command: \(event.name)")
                } else if !stopped {
                    logger.warning("controller answered a command that is not pending: \(event.name)")
                } else {
                    // Closing (or failed): what was pending was dropped, so a late answer to it
                    // is expected here and nothing a person must act on.
                    logger.debug("after the host stopped, the controller answered: \(event.name)")
                }
            }
        }
    }
}
