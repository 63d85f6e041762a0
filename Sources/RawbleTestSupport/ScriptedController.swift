import RawbleHCITransport
import RawbleWire
import Synchronization

/// A controller played by the test on an ``InMemoryHCITransport``: each command the host sends
/// is answered with the events `answer` returns for it (`nil`: never answered); ACL packets are
/// recorded and completed at once, as Bumble's controller does. One answer table for every
/// host test: ``minimal(_:)`` is what the start-up sequence needs; a test overrides the
/// commands it is about and falls back to it for the rest.
public final class ScriptedController: Sendable {
    /// The host's side: open the adapter on it (`Adapter.open(controller.transport, …)`).
    public let transport = InMemoryHCITransport()
    /// The events each command is answered with (`nil`: never answered).
    public let answer: @Sendable (HCICommand) -> [HCIEvent]?
    private let sentCommands = Recording<HCICommand>()
    private let sentACL = Recording<ACLPacket>()

    /// What the peer sends back for each ACL packet the host sends (by default nothing).
    public let answerACL: @Sendable (ACLPacket) -> [H4Packet]
    /// Packets that follow a command's answer, in order after its events (by default none):
    /// e.g. the peer's SMP keys once the Encryption Change reached the host.
    public let followCommand: @Sendable (HCICommand) -> [H4Packet]
    /// Whether each ACL packet's buffer is returned at once (Number Of Completed Packets), as
    /// Bumble's controller does; `false`: only when the test calls ``completeSentPackets()``.
    public let completesACLAtOnce: Bool
    private let completedACL = Mutex(0)

    /// A controller answering each command with `answer` (by default ``minimal(_:)``; a
    /// trailing closure is `answer`, unless `completesACLAtOnce` comes before it).
    /// - Parameters:
    ///   - answer: the events each command is answered with (`nil`: never answered).
    ///   - completesACLAtOnce: return each ACL buffer at once (`false`: the test returns them
    ///     with ``completeSentPackets()``, to hold the host at its flow-control limit).
    ///   - answerACL: the peer's packets sent back for each ACL packet (e.g. an ATT response).
    ///   - followCommand: packets delivered after a command's answer (see ``followCommand``).
    public init(answer: @escaping @Sendable (HCICommand) -> [HCIEvent]? = ScriptedController.minimal,
                completesACLAtOnce: Bool = true,
                answerACL: @escaping @Sendable (ACLPacket) -> [H4Packet] = { _ in [] },
                followCommand: @escaping @Sendable (HCICommand) -> [H4Packet] = { _ in [] }) {
        self.completesACLAtOnce = completesACLAtOnce
        self.answerACL = answerACL
        self.followCommand = followCommand
        self.answer = answer
    }

    /// Every command the host sent, decoded, in order.
    public var commands: [HCICommand] { sentCommands.items }
    /// Every ACL packet the host sent, in order.
    public var aclPackets: [ACLPacket] { sentACL.items }

    /// Starts playing the controller: every packet the host sends is answered inside the
    /// transport's `send`, so no test depends on a task being scheduled in time. (The task
    /// returned has nothing left to do; tests cancel it for symmetry.)
    @discardableResult
    public func run() -> Task<Void, Never> {
        transport.respond { [self] packet in
            switch packet.type {
            case .command:
                guard let command = try? HCICommand.decode(packet.bytes) else { return [] }
                sentCommands.append(command)
                return (answer(command) ?? []).map { H4Packet(type: .event, bytes: $0.encoded) } + followCommand(command)
            case .acl:
                guard let acl = try? ACLPacket.decode(packet.bytes) else { return [] }
                sentACL.append(acl)
                var answers: [H4Packet] = []
                if completesACLAtOnce {
                    completedACL.withLock { $0 += 1 }
                    let completed = HCIEvent.numberOfCompletedPackets([.init(connectionHandle: acl.handle, count: 1)])
                    answers.append(H4Packet(type: .event, bytes: completed.encoded))
                }
                return answers + answerACL(acl)
            default:
                return []
            }
        }
        return Task {}
    }

    /// Returns the buffer of every ACL packet sent and not yet completed, one Number Of
    /// Completed Packets event each, as a controller does once it transmitted them; returns
    /// how many (for a controller made with `completesACLAtOnce: false`).
    @discardableResult
    public func completeSentPackets() -> Int {
        let sent = aclPackets
        // Packets completed at once (`completesACLAtOnce`) may have been counted after `sent`
        // was read: never index past the snapshot.
        let done = completedACL.withLock { done -> Int in
            defer { done = max(done, sent.count) }
            return min(done, sent.count)
        }
        for packet in sent[done...] {
            transport.inject(.numberOfCompletedPackets([.init(connectionHandle: packet.handle, count: 1)]))
        }
        return sent.count - done
    }

    /// Plays a controller that transmits every ACL packet as it comes: completes each one
    /// (``completeSentPackets()``) once the host has sent it, woken by the send, until the
    /// task returned is cancelled (for a controller made with `completesACLAtOnce: false`).
    public func completingSentPackets() -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                let completed = completedACL.withLock { $0 }
                guard (try? await sentACL.wait(until: { $0.count > completed }, timeout: .seconds(3600))) != nil else { return }
                completeSentPackets()
            }
        }
    }

    // MARK: Waiting for what the host sends

    /// Waits until the host has sent a command matching `matches` (returns at once when it
    /// already has) and returns the first such command. Woken by the send itself: no polling.
    /// - Throws: ``WaitTimeout`` (naming the commands sent) when none came within `timeout`
    ///   of real time: a hang guard, generous for a loaded machine, not a speed check.
    @discardableResult
    public func waitForCommand(where matches: @escaping @Sendable (HCICommand) -> Bool,
                               timeout: Duration = .seconds(60),
                               fileID: StaticString = #fileID, line: UInt = #line) async throws -> HCICommand {
        let found = try await waitForCommands(1, where: matches, timeout: timeout, fileID: fileID, line: line)
        return found[0]
    }

    /// Waits until the host has sent `command` (see ``waitForCommand(where:timeout:fileID:line:)``).
    public func waitForCommand(_ command: HCICommand, timeout: Duration = .seconds(60),
                               fileID: StaticString = #fileID, line: UInt = #line) async throws {
        _ = try await waitForCommands(until: { $0.contains(command) }, timeout: timeout,
                                      wanted: String(describing: command), fileID: fileID, line: line)
    }

    /// Waits until the host has sent `count` commands matching `matches` and returns every
    /// matching command sent so far, in order (at least `count`).
    /// - Throws: ``WaitTimeout`` when fewer came within `timeout` (see ``waitForCommand(where:timeout:fileID:line:)``).
    @discardableResult
    public func waitForCommands(_ count: Int, where matches: @escaping @Sendable (HCICommand) -> Bool,
                                timeout: Duration = .seconds(60),
                                fileID: StaticString = #fileID, line: UInt = #line) async throws -> [HCICommand] {
        try await waitForCommands(until: { $0.count(where: matches) >= count }, timeout: timeout,
                                  wanted: "\(count) matching command\(count == 1 ? "" : "s")", fileID: fileID, line: line)
            .filter(matches)
    }

    /// Waits until the commands sent so far, in order, satisfy `condition` (e.g. the last one
    /// is a given command) and returns them. `condition` runs under the controller's lock: it
    /// must not call the controller.
    /// - Throws: ``WaitTimeout`` when they did not within `timeout`.
    @discardableResult
    public func waitForCommands(until condition: @escaping @Sendable ([HCICommand]) -> Bool,
                                timeout: Duration = .seconds(60),
                                fileID: StaticString = #fileID, line: UInt = #line) async throws -> [HCICommand] {
        try await waitForCommands(until: condition, timeout: timeout, wanted: "the commands the test waits for",
                                  fileID: fileID, line: line)
    }

    private func waitForCommands(until condition: @escaping @Sendable ([HCICommand]) -> Bool, timeout: Duration,
                                 wanted: String, fileID: StaticString, line: UInt) async throws -> [HCICommand] {
        do {
            return try await sentCommands.wait(until: condition, timeout: timeout)
        } catch is TestTimeout {
            throw WaitTimeout(place: "\(fileID):\(line)", wanted: wanted, timeout: timeout,
                              sent: commands.map { String(describing: $0) })
        }
    }

    /// Waits until the host has sent `count` ACL packets (at most `timeout`) and returns every
    /// ACL packet sent so far; fewer when the time ran out (the caller checks the count).
    public func waitForACL(count: Int, timeout: Duration = .seconds(5)) async -> [ACLPacket] {
        (try? await sentACL.wait(until: { $0.count >= count }, timeout: timeout)) ?? aclPackets
    }

    /// What a wait on a ``ScriptedController`` throws when the host did not send what the
    /// test waits for in time: where the test waited, what for, and every command it sent.
    public struct WaitTimeout: Error, CustomStringConvertible, Sendable {
        /// The test's file and line.
        public let place: String
        /// What the test waited for.
        public let wanted: String
        public let timeout: Duration
        /// The commands the host sent, in order.
        public let sent: [String]

        public var description: String {
            "\(place): the host did not send \(wanted) within \(timeout); it sent \(sent.count) command"
                + "\(sent.count == 1 ? "" : "s"): \(sent.joined(separator: ", "))"
        }
    }

    /// Command Complete for `opcode` with these return parameters (by default: success).
    public static func complete(_ opcode: HCIOpcode, _ parameters: [UInt8] = [0x00]) -> HCIEvent {
        .commandComplete(.init(numHCICommandPackets: 1, opcode: opcode, returnParameters: parameters[...]))
    }

    /// Command Status for `opcode`.
    public static func status(_ opcode: HCIOpcode, _ status: HCIStatus = .success) -> HCIEvent {
        .commandStatus(.init(status: status, numHCICommandPackets: 1, opcode: opcode))
    }

    /// The peer of ``connectionComplete(status:handle:role:)``: a random static address.
    public static let peer = DeviceAddress(BluetoothAddress(0xC1_22_33_44_55_66), type: .random)
    /// The connection handle ``connectionComplete(status:handle:role:)`` gives by default.
    public static let handle: UInt16 = 0x0040

    /// LE Connection Complete with ``peer``.
    public static func connectionComplete(status: HCIStatus = .success, handle: UInt16 = handle,
                                   role: LEConnectionComplete.Role = .central) -> HCIEvent {
        .le(.connectionComplete(LEConnectionComplete(
            status: status, connectionHandle: handle, role: role, peerAddressType: peer.type,
            peerAddress: peer.address, connectionInterval: 24, peripheralLatency: 0,
            supervisionTimeout: 400, centralClockAccuracy: 0)))
    }

    /// A controller with only what the start-up sequence requires (Reset, LE Read Buffer
    /// Size, LE Set Random Address), legacy scanning and connections; every other command is
    /// answered "Unknown HCI Command", as the specification says a controller must.
    @Sendable public static func minimal(_ command: HCICommand) -> [HCIEvent]? {
        switch command {
        case .reset, .leSetRandomAddress, .leSetScanParameters, .leSetScanEnable, .leCreateConnectionCancel:
            [complete(command.opcode)]
        case .leReadBufferSize:
            [complete(command.opcode, [0x00, 27, 0x00, 3])]
        case .leCreateConnection:
            [status(command.opcode), connectionComplete()]
        case .disconnect(let handle, _):
            [status(command.opcode), .disconnectionComplete(.init(status: .success, connectionHandle: handle, reason: .connectionTerminatedByLocalHost))]
        case .leConnectionUpdate:
            [status(command.opcode)]
        default:
            [complete(command.opcode, [HCIStatus.unknownCommand.rawValue])]
        }
    }
}
