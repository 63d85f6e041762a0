// HCI command flow control (Core Vol 4 Part E 4.4): the host may send a command only while the
// controller has granted it Num_HCI_Command_Packets credits; each Command Complete or Command
// Status sets that number anew. This engine queues commands, releases them FIFO within the
// credits, matches answers to the oldest sent command with the answer's opcode, and times out
// commands the controller never answers. Sans I/O: no sockets, no clocks; time is passed in.

import RawbleWire

/// Identifies one submitted command for its whole life in a ``CommandFlow``.
/// Tokens are never reused within one engine (a 64-bit counter).
public struct CommandToken: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The token's number, increasing in submission order.
    public let rawValue: UInt64

    /// Makes a token from its number (engines hand them out; tests may build them).
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// `#3` style.
    public var description: String { "#\(rawValue)" }
}

/// What happened to a submitted command, or an answer the engine could not place.
///
/// Every case but ``unexpected(_:)`` is terminal: a token appears in exactly one outcome.
public enum CommandOutcome: Hashable, Sendable {
    /// The controller answered with Command Complete; the raw event carries the return
    /// parameters (decode them with `CommandReturn.decode(opcode:returnParameters:)`). A
    /// failure status inside the return parameters is still `completed`.
    case completed(CommandToken, HCIEvent.CommandComplete)
    /// The controller answered with Command Status. With `HCIStatus.success` the command
    /// started and finishes with another event (e.g. LE Connection Complete), which the caller
    /// awaits; any other status means the controller refused it.
    case statusReceived(CommandToken, HCIStatus)
    /// A Command Complete or Command Status that matches no sent, unanswered command (never
    /// sent, already answered or already timed out). Its credits were still taken; log it.
    case unexpected(HCIEvent)
    /// The command was sent but not answered before its deadline.
    case timedOut(CommandToken, HCIOpcode)
    /// The command was dropped by ``CommandFlow/reset()`` (queued or awaiting an answer).
    case cancelled(CommandToken)
    /// The command was dropped by ``CommandFlow/transportClosed()``.
    case transportClosed(CommandToken)

    /// The command this outcome ends, or `nil` for ``unexpected(_:)``.
    public var token: CommandToken? {
        switch self {
        case .completed(let token, _), .statusReceived(let token, _), .timedOut(let token, _),
             .cancelled(let token), .transportClosed(let token):
            return token
        case .unexpected:
            return nil
        }
    }

    /// Whether the command succeeded as far as this engine can tell: completed (whatever the
    /// return status says) or started (Command Status success).
    public var isSuccess: Bool {
        switch self {
        case .completed: return true
        case .statusReceived(_, let status): return status.isSuccess
        default: return false
        }
    }
}

/// Why ``CommandFlow/submit(_:timeout:now:)`` refused a command.
public enum CommandFlowError: Error, Hashable, Sendable {
    /// The engine already holds `capacity` commands (queued plus awaiting an answer).
    case queueFull(capacity: Int)
}

/// A command the engine releases for sending, with the token its outcome will carry.
public struct OutgoingCommand: Hashable, Sendable {
    public let token: CommandToken
    public let command: HCICommand

    public init(token: CommandToken, command: HCICommand) {
        self.token = token
        self.command = command
    }

    /// The command packet to write (opcode, length, parameters), without the H4 type byte.
    public var packet: [UInt8] { command.encoded }
}

/// Sans-I/O HCI command flow engine: a bounded FIFO queue of commands, released only within the
/// controller's command credits, answers matched by opcode, and per-command deadlines.
///
/// `Instant` is whatever monotonic time the driver uses (`ContinuousClock.Instant` in the
/// async host, a fake instant in tests); the engine never reads a clock.
///
/// Choices:
/// - Credits start at 1 (the state after power-on or HCI Reset) and each Command Complete or
///   Command Status *sets* them to its Num_HCI_Command_Packets, even when the event matches
///   nothing; `0` stops sending until an event (often a Command Complete for opcode `0x0000`,
///   which only carries credits) grants more.
/// - A deadline runs from the moment the command is released for sending; commands waiting in
///   the queue for credits do not time out.
/// - A timed-out command is assumed lost by the controller: the engine gives back one credit
///   (up to 255) so the host cannot wedge waiting for an answer that will never come. If the
///   answer does arrive later it is reported as ``CommandOutcome/unexpected(_:)`` and its
///   credit count overrides the guess.
public struct CommandFlow<Instant: InstantProtocol>: Sendable {
    /// A command released for sending and not yet answered.
    private struct InFlight: Sendable {
        var token: CommandToken
        var opcode: HCIOpcode
        var deadline: Instant
    }

    /// A submitted command waiting for a credit.
    private struct Queued: Sendable {
        var token: CommandToken
        var command: HCICommand
        var timeout: Instant.Duration
    }

    /// Most commands the engine holds at once (queued plus awaiting an answer).
    public let capacity: Int
    /// Commands the controller currently accepts (Num_HCI_Command_Packets), 0...255.
    public private(set) var credits: Int = 1

    private var queue: [Queued] = []
    private var inFlight: [InFlight] = []
    private var nextToken: UInt64 = 1

    /// An engine holding at most `capacity` commands (at least 1), with 1 credit.
    public init(capacity: Int = 64) {
        self.capacity = max(1, capacity)
    }

    /// Commands waiting for a credit.
    public var queuedCount: Int { queue.count }
    /// Commands sent and not yet answered.
    public var awaitingCount: Int { inFlight.count }

    /// The earliest deadline of a sent, unanswered command: when the driver should call
    /// ``expire(now:)`` next; `nil` when nothing is awaited.
    public var nextDeadline: Instant? { inFlight.lazy.map(\.deadline).min() }

    /// Queues `command`; it is answered within `timeout` of being sent or times out.
    /// - Throws: ``CommandFlowError/queueFull(capacity:)`` when the engine is full.
    public mutating func submit(_ command: HCICommand, timeout: Instant.Duration, now: Instant) throws(CommandFlowError) -> CommandToken {
        guard queue.count + inFlight.count < capacity else { throw .queueFull(capacity: capacity) }
        let token = CommandToken(rawValue: nextToken)
        nextToken &+= 1
        queue.append(Queued(token: token, command: command, timeout: timeout))
        return token
    }

    /// Releases queued commands, oldest first, as far as the credits allow; the caller must
    /// write them in this order. Each one's deadline starts `now`.
    public mutating func nextCommandsToSend(now: Instant) -> [OutgoingCommand] {
        let count = min(credits, queue.count)
        guard count > 0 else { return [] }
        var out: [OutgoingCommand] = []
        out.reserveCapacity(count)
        for item in queue.prefix(count) {
            inFlight.append(InFlight(token: item.token, opcode: item.command.opcode, deadline: now.advanced(by: item.timeout)))
            out.append(OutgoingCommand(token: item.token, command: item.command))
        }
        queue.removeFirst(count)
        credits -= count
        return out
    }

    /// Takes an event from the controller. Command Complete and Command Status update the
    /// credits and end the oldest sent command with their opcode (opcode `0x0000` only carries
    /// credits); an answer matching nothing yields ``CommandOutcome/unexpected(_:)``. Other
    /// events are not this engine's and yield nothing.
    public mutating func receive(_ event: HCIEvent, now: Instant) -> [CommandOutcome] {
        switch event {
        case .commandComplete(let complete):
            credits = Int(complete.numHCICommandPackets)
            if complete.opcode.rawValue == 0 { return [] }
            guard let token = takeOldest(complete.opcode) else { return [.unexpected(event)] }
            return [.completed(token, complete)]
        case .commandStatus(let status):
            credits = Int(status.numHCICommandPackets)
            if status.opcode.rawValue == 0 { return [] }
            guard let token = takeOldest(status.opcode) else { return [.unexpected(event)] }
            return [.statusReceived(token, status.status)]
        default:
            return []
        }
    }

    /// Times out every sent command whose deadline is at or before `now`, giving back one
    /// credit for each (see the type's documentation).
    public mutating func expire(now: Instant) -> [CommandOutcome] {
        var outcomes: [CommandOutcome] = []
        inFlight.removeAll { item in
            guard item.deadline <= now else { return false }
            outcomes.append(.timedOut(item.token, item.opcode))
            return true
        }
        credits = min(255, credits + outcomes.count)
        return outcomes
    }

    /// Withdraws a command still waiting for a credit (never sent), ending it with
    /// ``CommandOutcome/cancelled(_:)``; `nil` when it was already sent or has ended. Lets a
    /// driver bound the wait of a command the controller never grants a credit for.
    public mutating func withdraw(_ token: CommandToken) -> CommandOutcome? {
        guard let index = queue.firstIndex(where: { $0.token == token }) else { return nil }
        queue.remove(at: index)
        return .cancelled(token)
    }

    /// Drops every queued and awaited command with ``CommandOutcome/cancelled(_:)`` (queued
    /// first, each group oldest first) and sets the credits back to 1, as after HCI Reset.
    public mutating func reset() -> [CommandOutcome] {
        drainAll(CommandOutcome.cancelled)
    }

    /// Drops every queued and awaited command with ``CommandOutcome/transportClosed(_:)``;
    /// the engine is then empty with 1 credit, ready for a new transport.
    public mutating func transportClosed() -> [CommandOutcome] {
        drainAll(CommandOutcome.transportClosed)
    }

    private mutating func drainAll(_ outcome: (CommandToken) -> CommandOutcome) -> [CommandOutcome] {
        let outcomes = queue.map { outcome($0.token) } + inFlight.map { outcome($0.token) }
        queue.removeAll()
        inFlight.removeAll()
        credits = 1
        return outcomes
    }

    /// Removes and returns the oldest sent command with `opcode`.
    private mutating func takeOldest(_ opcode: HCIOpcode) -> CommandToken? {
        guard let index = inFlight.firstIndex(where: { $0.opcode == opcode }) else { return nil }
        return inFlight.remove(at: index).token
    }
}
