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
    private let sentCommands = Mutex<[HCICommand]>([])
    private let sentACL = Mutex<[ACLPacket]>([])

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
    public var commands: [HCICommand] { sentCommands.withLock { $0 } }
    /// Every ACL packet the host sent, in order.
    public var aclPackets: [ACLPacket] { sentACL.withLock { $0 } }

    /// Starts playing the controller: every packet the host sends is answered inside the
    /// transport's `send`, so no test depends on a task being scheduled in time. (The task
    /// returned has nothing left to do; tests cancel it for symmetry.)
    @discardableResult
    public func run() -> Task<Void, Never> {
        transport.respond { [self] packet in
            switch packet.type {
            case .command:
                guard let command = try? HCICommand.decode(packet.bytes) else { return [] }
                sentCommands.withLock { $0.append(command) }
                return (answer(command) ?? []).map { H4Packet(type: .event, bytes: $0.encoded) } + followCommand(command)
            case .acl:
                guard let acl = try? ACLPacket.decode(packet.bytes) else { return [] }
                sentACL.withLock { $0.append(acl) }
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

    /// Waits (bounded) until `count` ACL packets were sent.
    public func waitForACL(count: Int, timeout: Duration = .seconds(5)) async -> [ACLPacket] {
        let end = ContinuousClock.now + timeout
        while ContinuousClock.now < end {
            let packets = aclPackets
            if packets.count >= count { return packets }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return aclPackets
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
