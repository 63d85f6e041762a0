import RawbleHCITransport
import RawbleWire
import Synchronization

/// Controllers joined in memory, as Bumble's `LocalLink` joins its virtual controllers: what one
/// advertises the others' scans report, a connection made by one is complete on both, the ACL
/// data one host sends reaches the other's, and LE encryption starts when the two hosts' long
/// term keys match. Two rawble stacks then talk to each other in one process, with no Python
/// and no socket, so central ↔ peripheral, pairing both ways and GATT client ↔ server run as
/// byte streams through two real hosts.
///
/// Every answer is computed inside the host's `send` (see ``InMemoryHCITransport/respond(with:)``)
/// and nothing waits on a clock: advertising reports are delivered when scanning and
/// advertising are both on (once per change, as a scan filtering duplicates reports), and a
/// connection is made the moment an initiator's target advertises. Time in the hosts above is
/// theirs (`Adapter.Configuration.clock`). Commands the link does not model are answered as
/// ``ScriptedController/minimal(_:)`` answers them.
///
/// Keep Bumble for what only a second implementation proves (interoperability); this link is
/// for rawble against rawble.
public final class VirtualLink: Sendable {
    /// The controllers, in the order given; open one host on each `transport`.
    public let controllers: [VirtualController]
    private let state: Mutex<State>

    /// `count` controllers (at least two); each has a public address (`00:00:00:00:00:0N`, N
    /// from 1) unless `publicAddresses` is `false` (then Read BD_ADDR answers all zeros, as a
    /// controller without one does).
    public init(count: Int = 2, publicAddresses: Bool = true) {
        precondition(count >= 2, "a link joins at least two controllers")
        let made = (0..<count).map { index in
            VirtualController(index: index, publicAddress: publicAddresses ? BluetoothAddress(UInt64(index + 1)) : nil)
        }
        controllers = made
        state = Mutex(State(nodes: Array(repeating: Node(), count: count), publicAddresses: made.map(\.publicAddress)))
        for controller in made {
            let index = controller.index
            controller.transport.respond { [weak self] packet in
                guard let self else { return [] }
                return self.receive(packet, from: index)
            }
        }
    }

    /// The connections open now (each once).
    public var connectionCount: Int { state.withLock { $0.connections.count } }

    // MARK: State

    private struct Node {
        var randomAddress: BluetoothAddress?
        var advertising = HCICommand.AdvertisingParameters(intervalMin: 0x0800, intervalMax: 0x0800)
        var advertisingData: [UInt8] = []
        var scanResponseData: [UInt8] = []
        var advertises = false
        var scanType = HCICommand.ScanType.passive
        var scans = false
        var initiating: HCICommand.CreateConnection?
        var nextHandle: UInt16 = 0x0040
    }

    private struct End: Hashable {
        var node: Int
        var handle: UInt16
    }

    private struct Connection {
        var central: End
        var peripheral: End
        var encrypted = false
        /// The key the central asked to encrypt with, until the peripheral's host answers.
        var pendingKey: UInt128?

        func peer(of end: End) -> End? {
            end == central ? peripheral : end == peripheral ? central : nil
        }
    }

    private struct State {
        var nodes: [Node]
        let publicAddresses: [BluetoothAddress?]
        var connections: [Connection] = []

        init(nodes: [Node], publicAddresses: [BluetoothAddress?]) {
            self.nodes = nodes
            self.publicAddresses = publicAddresses
        }

        func connection(_ node: Int, _ handle: UInt16) -> Int? {
            let end = End(node: node, handle: handle)
            return connections.firstIndex { $0.central == end || $0.peripheral == end }
        }
    }

    /// What one packet from a host makes happen: the answers to its own host (returned from
    /// `send`), then the packets for the other controllers' hosts, in order.
    private struct Outcome {
        var answers: [H4Packet] = []
        var deliveries: [(node: Int, packet: H4Packet)] = []

        mutating func answer(_ event: HCIEvent) { answers.append(H4Packet(type: .event, bytes: event.encoded)) }
        mutating func deliver(_ event: HCIEvent, to node: Int) {
            deliveries.append((node, H4Packet(type: .event, bytes: event.encoded)))
        }
        /// An event for `node`'s host: returned from its own `send` when it is the sender
        /// (`asAnswer`), else delivered to it.
        mutating func deliver(_ event: HCIEvent, to node: Int, asAnswer: Bool) {
            if asAnswer { answer(event) } else { deliver(event, to: node) }
        }
    }

    private func receive(_ packet: H4Packet, from index: Int) -> [H4Packet] {
        let controller = controllers[index]
        var outcome = Outcome()
        switch packet.type {
        case .command:
            guard let command = try? HCICommand.decode(packet.bytes) else { return [] }
            controller.record(command)
            state.withLock { state in handle(command, from: index, in: &state, into: &outcome) }
        case .acl:
            guard let acl = try? ACLPacket.decode(packet.bytes) else { return [] }
            state.withLock { state in forward(acl, from: index, in: &state, into: &outcome) }
        default:
            return []
        }
        // The sender's answers first, then the others' packets: a peer that reacts at once (an
        // ACL packet after its Encryption Change) must not overtake what the sender's host is
        // told first, as on a real link, where the controller reports before the air carries.
        for answer in outcome.answers { controller.transport.inject(answer) }
        for delivery in outcome.deliveries { controllers[delivery.node].transport.inject(delivery.packet) }
        return []
    }

    // MARK: Commands

    private func handle(_ command: HCICommand, from index: Int, in state: inout State, into outcome: inout Outcome) {
        let complete = { (parameters: [UInt8]) in ScriptedController.complete(command.opcode, parameters) }
        switch command {
        case .reset:
            for connection in state.connections where connection.central.node == index || connection.peripheral.node == index {
                let other = connection.central.node == index ? connection.peripheral : connection.central
                outcome.deliver(.disconnectionComplete(.init(status: .success, connectionHandle: other.handle,
                                                             reason: .remoteUserTerminatedConnection)), to: other.node)
            }
            state.connections.removeAll { $0.central.node == index || $0.peripheral.node == index }
            state.nodes[index] = Node()
            outcome.answer(complete([0x00]))
        case .readBDADDR:
            var writer = ByteWriter()
            writer.write(UInt8(0x00))
            writer.write(state.publicAddresses[index] ?? .any)
            outcome.answer(complete(writer.bytes))
        case .leReadBufferSize:
            outcome.answer(complete([0x00, 0xFB, 0x00, 8]))  // 251-byte ACL packets, 8 buffers
        case .leSetRandomAddress(let address):
            state.nodes[index].randomAddress = address
            outcome.answer(complete([0x00]))
        case .leSetAdvertisingParameters(let parameters):
            state.nodes[index].advertising = parameters
            outcome.answer(complete([0x00]))
        case .leSetAdvertisingData(let payload):
            state.nodes[index].advertisingData = payload.bytes
            outcome.answer(complete([0x00]))
            if state.nodes[index].advertises { report(index, toScannersIn: state, into: &outcome) }
        case .leSetScanResponseData(let payload):
            state.nodes[index].scanResponseData = payload.bytes
            outcome.answer(complete([0x00]))
        case .leSetAdvertisingEnable(let enable):
            state.nodes[index].advertises = enable
            outcome.answer(complete([0x00]))
            if enable {
                report(index, toScannersIn: state, into: &outcome)
                for initiator in state.nodes.indices where state.nodes[initiator].initiating != nil {
                    connectIfAdvertising(initiator, sender: index, in: &state, into: &outcome)
                }
            }
        case .leSetScanParameters(let parameters):
            state.nodes[index].scanType = parameters.type
            outcome.answer(complete([0x00]))
        case .leSetScanEnable(let enable, _):
            state.nodes[index].scans = enable
            outcome.answer(complete([0x00]))
            if enable {
                for advertiser in state.nodes.indices where advertiser != index && state.nodes[advertiser].advertises {
                    for event in reports(of: advertiser, for: index, in: state) { outcome.answer(event) }
                }
            }
        case .leCreateConnection(let request):
            guard state.nodes[index].initiating == nil else {
                outcome.answer(ScriptedController.status(command.opcode, .commandDisallowed))
                return
            }
            state.nodes[index].initiating = request
            outcome.answer(ScriptedController.status(command.opcode))
            connectIfAdvertising(index, sender: index, in: &state, into: &outcome)
        case .leCreateConnectionCancel:
            guard let request = state.nodes[index].initiating else {
                outcome.answer(complete([HCIStatus.commandDisallowed.rawValue]))
                return
            }
            state.nodes[index].initiating = nil
            outcome.answer(complete([0x00]))
            outcome.answer(.le(.connectionComplete(LEConnectionComplete(
                status: .unknownConnectionIdentifier, connectionHandle: 0, role: .central,
                peerAddressType: request.peerAddressType, peerAddress: request.peerAddress,
                connectionInterval: 0, peripheralLatency: 0, supervisionTimeout: 0, centralClockAccuracy: 0))))
        case .disconnect(let handle, let reason):
            guard let found = state.connection(index, handle) else {
                outcome.answer(ScriptedController.status(command.opcode, .unknownConnectionIdentifier))
                return
            }
            let connection = state.connections.remove(at: found)
            let own = End(node: index, handle: handle)
            outcome.answer(ScriptedController.status(command.opcode))
            outcome.answer(.disconnectionComplete(.init(status: .success, connectionHandle: handle, reason: .connectionTerminatedByLocalHost)))
            if let peer = connection.peer(of: own) {
                outcome.deliver(.disconnectionComplete(.init(status: .success, connectionHandle: peer.handle, reason: reason)), to: peer.node)
            }
        case .leEnableEncryption(let handle, let random, let diversifier, let key):
            guard let found = state.connection(index, handle), state.connections[found].central.node == index else {
                outcome.answer(ScriptedController.status(command.opcode, .unknownConnectionIdentifier))
                return
            }
            state.connections[found].pendingKey = key
            outcome.answer(ScriptedController.status(command.opcode))
            let peripheral = state.connections[found].peripheral
            outcome.deliver(.le(.longTermKeyRequest(.init(connectionHandle: peripheral.handle, random: random,
                                                          encryptedDiversifier: diversifier))), to: peripheral.node)
        case .leLongTermKeyRequestReply(let handle, let key):
            outcome.answer(complete([0x00, UInt8(truncatingIfNeeded: handle), UInt8(truncatingIfNeeded: handle >> 8)]))
            guard let found = state.connection(index, handle), let asked = state.connections[found].pendingKey else { return }
            let connection = state.connections[found]
            state.connections[found].pendingKey = nil
            guard asked == key else {
                // Different keys: each side's MIC check fails on the first encrypted PDU.
                state.connections.remove(at: found)
                outcome.answer(.disconnectionComplete(.init(status: .success, connectionHandle: handle, reason: .connectionTerminatedDueToMICFailure)))
                outcome.deliver(.disconnectionComplete(.init(status: .success, connectionHandle: connection.central.handle,
                                                             reason: .connectionTerminatedDueToMICFailure)), to: connection.central.node)
                return
            }
            if connection.encrypted {
                outcome.answer(.encryptionKeyRefreshComplete(status: .success, connectionHandle: handle))
                outcome.deliver(.encryptionKeyRefreshComplete(status: .success, connectionHandle: connection.central.handle),
                                to: connection.central.node)
            } else {
                state.connections[found].encrypted = true
                outcome.answer(.encryptionChange(.init(status: .success, connectionHandle: handle, encryptionEnabled: 1)))
                outcome.deliver(.encryptionChange(.init(status: .success, connectionHandle: connection.central.handle, encryptionEnabled: 1)),
                                to: connection.central.node)
            }
        case .leLongTermKeyRequestNegativeReply(let handle):
            outcome.answer(complete([0x00, UInt8(truncatingIfNeeded: handle), UInt8(truncatingIfNeeded: handle >> 8)]))
            guard let found = state.connection(index, handle), state.connections[found].pendingKey != nil else { return }
            state.connections[found].pendingKey = nil
            let central = state.connections[found].central
            outcome.deliver(.encryptionChange(.init(status: .pinOrKeyMissing, connectionHandle: central.handle, encryptionEnabled: 0)),
                            to: central.node)
        default:
            for event in ScriptedController.minimal(command) ?? [] { outcome.answer(event) }
        }
    }

    // MARK: Advertising and connections

    /// The address a node uses for `type` (`public` or `random`, the resolvable kinds as
    /// their fallback: the link resolves no private address).
    private static func address(of node: Int, _ type: HCICommand.OwnAddressType, in state: State) -> DeviceAddress {
        switch type {
        case .random, .resolvableOrRandom:
            DeviceAddress(state.nodes[node].randomAddress ?? .any, type: .random)
        default:
            DeviceAddress(state.publicAddresses[node] ?? .any, type: .public)
        }
    }

    /// The reports `scanner` gets of `advertiser`'s advertising: its data, and with an active
    /// scan of a scannable advertisement its scan response.
    private func reports(of advertiser: Int, for scanner: Int, in state: State) -> [HCIEvent] {
        let node = state.nodes[advertiser]
        let address = Self.address(of: advertiser, node.advertising.ownAddressType, in: state)
        let type: AdvertisingReport.LegacyEventType
        switch node.advertising.type {
        case .connectableUndirected: type = .advInd
        case .scannableUndirected: type = .advScanInd
        case .nonConnectableUndirected: type = .advNonconnInd
        default: type = .advDirectInd
        }
        var events: [HCIEvent] = [.le(.advertisingReport([AdvertisingReport(
            legacy: type, addressType: address.type, address: address.address, rssi: -42,
            data: type == .advDirectInd ? [] : node.advertisingData[...])]))]
        if state.nodes[scanner].scanType == .active, type == .advInd || type == .advScanInd {
            events.append(.le(.advertisingReport([AdvertisingReport(
                legacy: .scanRsp, addressType: address.type, address: address.address, rssi: -42,
                data: node.scanResponseData[...])])))
        }
        return events
    }

    private func report(_ advertiser: Int, toScannersIn state: State, into outcome: inout Outcome) {
        for scanner in state.nodes.indices where scanner != advertiser && state.nodes[scanner].scans {
            for event in reports(of: advertiser, for: scanner, in: state) { outcome.deliver(event, to: scanner) }
        }
    }

    /// Completes `initiator`'s connection attempt when its target advertises connectably.
    private func connectIfAdvertising(_ initiator: Int, sender: Int, in state: inout State, into outcome: inout Outcome) {
        guard let request = state.nodes[initiator].initiating else { return }
        let target = state.nodes.indices.first { node in
            guard node != initiator, state.nodes[node].advertises else { return false }
            let parameters = state.nodes[node].advertising
            guard parameters.type != .scannableUndirected, parameters.type != .nonConnectableUndirected else { return false }
            let address = Self.address(of: node, parameters.ownAddressType, in: state)
            // Public (0) and public identity (2) are public; random (1) and random identity (3) random.
            return address.address == request.peerAddress && (address.type.rawValue & 1) == (request.peerAddressType.rawValue & 1)
        }
        guard let peripheral = target else { return }
        state.nodes[initiator].initiating = nil
        state.nodes[peripheral].advertises = false  // legacy advertising ends with the connection
        let centralHandle = state.nodes[initiator].nextHandle
        let peripheralHandle = state.nodes[peripheral].nextHandle
        state.nodes[initiator].nextHandle += 1
        state.nodes[peripheral].nextHandle += 1
        state.connections.append(Connection(central: End(node: initiator, handle: centralHandle),
                                            peripheral: End(node: peripheral, handle: peripheralHandle)))
        let peripheralAddress = Self.address(of: peripheral, state.nodes[peripheral].advertising.ownAddressType, in: state)
        let centralAddress = Self.address(of: initiator, request.ownAddressType, in: state)
        let parameters = request.connection
        func complete(_ handle: UInt16, _ role: LEConnectionComplete.Role, _ peer: DeviceAddress) -> HCIEvent {
            .le(.connectionComplete(LEConnectionComplete(
                status: .success, connectionHandle: handle, role: role, peerAddressType: peer.type,
                peerAddress: peer.address, connectionInterval: parameters.intervalMax, peripheralLatency: parameters.maxLatency,
                supervisionTimeout: parameters.supervisionTimeout, centralClockAccuracy: 0)))
        }
        outcome.deliver(complete(centralHandle, .central, peripheralAddress), to: initiator, asAnswer: sender == initiator)
        outcome.deliver(complete(peripheralHandle, .peripheral, centralAddress), to: peripheral, asAnswer: sender == peripheral)
    }

    // MARK: ACL

    private func forward(_ packet: ACLPacket, from index: Int, in state: inout State, into outcome: inout Outcome) {
        guard let found = state.connection(index, packet.handle),
              let peer = state.connections[found].peer(of: End(node: index, handle: packet.handle)) else { return }
        outcome.answer(.numberOfCompletedPackets([.init(connectionHandle: packet.handle, count: 1)]))
        let delivered = ACLPacket(handle: peer.handle,
                                  packetBoundary: packet.packetBoundary == .continuation ? .continuation : .firstFlushable,
                                  payload: packet.payload)
        outcome.deliveries.append((peer.node, H4Packet(type: .acl, bytes: delivered.encoded)))
    }
}

/// One controller of a ``VirtualLink``: open a host on its ``transport``.
public final class VirtualController: Sendable {
    /// Its place in the link's ``VirtualLink/controllers``.
    public let index: Int
    /// The address Read BD_ADDR answers (`nil`: all zeros, no public address).
    public let publicAddress: BluetoothAddress?
    /// The host's side.
    public let transport = InMemoryHCITransport()
    private let sent = Mutex<[HCICommand]>([])

    init(index: Int, publicAddress: BluetoothAddress?) {
        self.index = index
        self.publicAddress = publicAddress
    }

    /// Every command its host sent, decoded, in order.
    public var commands: [HCICommand] { sent.withLock { $0 } }

    fileprivate func record(_ command: HCICommand) {
        sent.withLock { $0.append(command) }
    }
}
