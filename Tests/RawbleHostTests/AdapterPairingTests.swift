import Logging
import RawbleBearer
import RawbleHost
import RawbleHostCore
import RawbleSMP
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

// The host's pairing and encryption plumbing on a scripted controller: SMP frames in and out of
// the fixed channel (fragmented to the controller's 27-byte buffers and reassembled), LE Enable
// Encryption, the LE Long Term Key Request and its replies, the Encryption Change, the bond
// store, the clock. The peer's Security Manager is RawbleSMP's engine (whose values the engine
// tests recompute with Bumble's own cryptography); Bumble itself pairs with the host over H4 in
// the CLI and interop suites.

/// The peer's Security Manager behind a scripted controller: takes the host's SMP frames,
/// answers on the same link, plays the controller's side of encryption (an LTK Request to the
/// host when the peer is central; the check of the host's key when the peer is peripheral).
final class ScriptedSMPPeer: Sendable {
    typealias Engine = SMPPairing<ContinuousClock.Instant>

    private struct State {
        var engine: Engine
        var partial: [UInt8] = []
        var outcome: PairingOutcome?
        var failure: PairingFailure?
        var shownPasskey: UInt32?
        /// The key the peer (as central) encrypts with, until the host's reply is checked.
        var encryptingWith: UInt128?
        /// Whether the peer answers SMP at all.
        var silent = false
        /// The SMP PDUs the host sent, and the peer's failures: each awaitable.
        let received = Recording<SMPPDU>()
        let failures = Recording<PairingFailure>()
    }

    let address: DeviceAddress
    let hostAddress: DeviceAddress
    let isCentral: Bool
    private let configuration: PairingConfiguration
    private let state: Mutex<State>

    init(isCentral: Bool, configuration: PairingConfiguration, address: DeviceAddress = ScriptedController.peer,
         hostAddress: DeviceAddress, silent: Bool = false) {
        self.address = address
        self.hostAddress = hostAddress
        self.isCentral = isCentral
        self.configuration = configuration
        var state = State(engine: Self.engine(isCentral: isCentral, configuration: configuration, address: address, hostAddress: hostAddress))
        state.silent = silent
        self.state = Mutex(state)
    }

    private static func engine(isCentral: Bool, configuration: PairingConfiguration, address: DeviceAddress,
                               hostAddress: DeviceAddress) -> Engine {
        Engine(role: isCentral ? .initiator : .responder, configuration: configuration, localAddress: address,
               peerAddress: hostAddress)
    }

    var outcome: PairingOutcome? { state.withLock { $0.outcome } }
    var failure: PairingFailure? { state.withLock { $0.failure } }
    var shownPasskey: UInt32? { state.withLock { $0.shownPasskey } }
    var received: [SMPPDU] { receivedPDUs.items }
    /// The SMP PDUs the host sent, to wait for (``received``).
    var receivedPDUs: Recording<SMPPDU> { state.withLock { $0.received } }
    /// The peer's failures, to wait for (``failure``).
    var failures: Recording<PairingFailure> { state.withLock { $0.failures } }

    /// A new link: a new engine; the outcome (the peer's bond) is kept, and as central the
    /// peer encrypts with the bond's key.
    func newLink() {
        state.withLock { state in
            state.engine = Self.engine(isCentral: isCentral, configuration: configuration, address: address, hostAddress: hostAddress)
            state.encryptingWith = isCentral ? state.outcome?.reconnectionKey(asCentral: true)?.longTermKey : nil
        }
    }

    /// Peer as central: starts pairing (the Pairing Request), as packets for the host.
    func startPairing() -> [H4Packet] {
        state.withLock { state in Self.packets(for: state.engine.start(now: .now), &state) }
    }

    /// One ACL packet from the host: the peer's answers once a whole SMP frame is in.
    func receive(_ packet: ACLPacket) -> [H4Packet] {
        state.withLock { state in
            if packet.packetBoundary == .continuation { state.partial += packet.payload } else { state.partial = Array(packet.payload) }
            guard state.partial.count >= 4 else { return [] }
            let length = Int(state.partial[0]) | Int(state.partial[1]) << 8
            guard state.partial.count >= 4 + length else { return [] }
            let channel = UInt16(state.partial[2]) | UInt16(state.partial[3]) << 8
            let payload = state.partial[4..<(4 + length)]
            state.partial = []
            guard channel == 0x0006 else { return [] }
            if let pdu = try? SMPPDU.decode(payload) { state.received.append(pdu) }
            guard !state.silent else { return [] }
            return Self.packets(for: state.engine.receive(payload, now: .now), &state)
        }
    }

    /// Peer as peripheral: the key the controller finds for the host's LE Enable Encryption:
    /// the pairing's, or the bond's when EDIV and Rand name it.
    func key(encryptedDiversifier: UInt16, random: UInt64) -> UInt128? {
        state.withLock { state in
            switch state.engine.longTermKeyRequested(encryptedDiversifier: encryptedDiversifier, random: random, now: .now) {
            case .pairingKey(let key): return key
            case .refuse: return nil
            case .notPairing: break
            }
            guard let bond = state.outcome?.reconnectionKey(asCentral: false),
                  bond.encryptedDiversifier == encryptedDiversifier, bond.random == random else { return nil }
            return bond.longTermKey
        }
    }

    /// Peer as central: the key it encrypts with, to compare with the host's LTK reply.
    var encryptingWith: UInt128? { state.withLock { $0.encryptingWith } }

    /// The link is encrypted (the host has had the Encryption Change): the peer's next packets.
    func encrypted() -> [H4Packet] {
        state.withLock { state in Self.packets(for: state.engine.encryptionChanged(status: 0, now: .now), &state) }
    }

    private static func packets(for actions: [PairingAction], _ state: inout State) -> [H4Packet] {
        var packets: [H4Packet] = []
        for action in actions {
            switch action {
            case .send(let pdu):
                let frame = L2CAPFrame(channelID: .securityManager, payload: pdu.encoded).encoded
                packets.append(H4Packet(type: .acl, bytes: ACLPacket(handle: ScriptedController.handle, packetBoundary: .firstFlushable,
                                                                     payload: frame[...]).encoded))
            case let .startEncryption(key, diversifier, random):
                state.encryptingWith = key
                let request = LEMetaEvent.LongTermKeyRequest(connectionHandle: ScriptedController.handle, random: random,
                                                             encryptedDiversifier: diversifier)
                packets.append(H4Packet(type: .event, bytes: HCIEvent.le(.longTermKeyRequest(request)).encoded))
            case .displayPasskey(let passkey):
                state.shownPasskey = passkey
            case .completed(let outcome):
                state.outcome = outcome
            case .failed(let failure):
                state.failure = failure
                state.failures.append(failure)
            case .requestPasskey, .confirmNumericComparison, .securityRequested, .ignored:
                break
            }
        }
        return packets
    }
}

/// The controller's side of encryption between the host and `peer`, over the minimal
/// controller: LE Enable Encryption checked against the peer's key (PIN or Key Missing when it
/// has none, as a controller reports the peer's reject); the host's LTK reply checked against
/// the key the peer encrypts with.
private func encryptingController(_ peer: ScriptedSMPPeer) -> ScriptedController {
    ScriptedController(
        answer: { command in
            switch command {
            case let .leEnableEncryption(handle, random, diversifier, key):
                let agreed = peer.key(encryptedDiversifier: diversifier, random: random) == key
                return [ScriptedController.status(command.opcode),
                        .encryptionChange(.init(status: agreed ? .success : .pinOrKeyMissing, connectionHandle: handle,
                                                encryptionEnabled: agreed ? 1 : 0))]
            case let .leLongTermKeyRequestReply(handle, key):
                let agreed = peer.encryptingWith == key
                return [ScriptedController.complete(command.opcode, [0x00, UInt8(handle & 0xFF), UInt8(handle >> 8)]),
                        .encryptionChange(.init(status: agreed ? .success : .connectionTerminatedDueToMICFailure,
                                                connectionHandle: handle, encryptionEnabled: agreed ? 1 : 0))]
            case .leLongTermKeyRequestNegativeReply(let handle):
                return [ScriptedController.complete(command.opcode, [0x00, UInt8(handle & 0xFF), UInt8(handle >> 8)])]
            case .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData, .leSetAdvertisingEnable:
                return [ScriptedController.complete(command.opcode)]
            default:
                return ScriptedController.minimal(command)
            }
        },
        answerACL: { peer.receive($0) },
        followCommand: { command in
            switch command {
            case let .leEnableEncryption(_, random, diversifier, key) where peer.key(encryptedDiversifier: diversifier, random: random) == key:
                peer.encrypted()
            case .leLongTermKeyRequestReply(_, let key) where peer.encryptingWith == key:
                peer.encrypted()
            default:
                []
            }
        })
}

private let hostAddress = BluetoothAddress(0xC3_11_22_33_44_55)
/// LE legacy pairing only (no LE Secure Connections).
private let legacyPairing = PairingConfiguration(secureConnections: false)

/// The scripted controller playing `peer`'s side, running, and the adapter opened on it.
private func open(against peer: ScriptedSMPPeer, _ configuration: Adapter.Configuration) async throws
    -> (controller: ScriptedController, pump: Task<Void, Never>, adapter: Adapter) {
    let controller = encryptingController(peer)
    let pump = controller.run()
    return (controller, pump, try await Adapter.open(controller.transport, configuration: configuration))
}
private let peerIdentity = PairingIdentity(identityResolvingKey: 0x0123_4567_89AB_CDEF_0011_2233_4455_6677,
                                           address: DeviceAddress(BluetoothAddress(0xC9_88_77_66_55_44), type: .random))

private func configuration(pairing: PairingConfiguration? = PairingConfiguration(), bonds: any BondStore = InMemoryBondStore(),
                           agent: (any PairingAgent)? = nil, clock: any Clock<Duration> = ContinuousClock()) -> Adapter.Configuration {
    var configuration = quietConfiguration(clock: clock)
    configuration.ownAddress = .randomStatic(hostAddress)
    configuration.pairing = pairing
    configuration.bonds = bonds
    configuration.pairingAgent = agent
    return configuration
}

/// The commands of one kind the controller got.
private func sent<T>(_ controller: ScriptedController, _ pick: (HCICommand) -> T?) -> [T] {
    controller.commands.compactMap(pick)
}

private func enableEncryption(_ command: HCICommand) -> (random: UInt64, diversifier: UInt16, key: UInt128)? {
    if case let .leEnableEncryption(_, random, diversifier, key) = command { return (random, diversifier, key) }
    return nil
}

/// A central link from the scripted controller's central (the peer) to the adapter, as the
/// peripheral: the first connection on `incomingConnections`, bounded.
private func acceptCentral(_ adapter: Adapter, _ controller: ScriptedController) async throws -> Connection {
    try await adapter.stopAdvertising()
    try await adapter.advertise(Advertisement(data: AdvertisingData(localName: "rawble"), restart: .never))
    controller.transport.inject(ScriptedController.connectionComplete(role: .peripheral))
    return try await within(seconds: 60) {
        for await connection in adapter.incomingConnections { return connection }
        throw TestTimeout()
    }
}

/// Answers with the passkey the scripted peer shows, as a user reading it off the peer's screen.
private struct ReadsThePeersPasskey: PairingAgent {
    let peer: ScriptedSMPPeer
    func displayPasskey(_ passkey: UInt32, for peer: DeviceAddress) async {}
    func passkey(for address: DeviceAddress) async -> UInt32? { peer.shownPasskey }
    func confirm(_ number: UInt32, for peer: DeviceAddress) async -> Bool { false }
}

@Suite("Adapter: pairing and encryption (a scripted controller, RawbleSMP's engine as the peer)")
struct AdapterPairingTests {
    private let host = DeviceAddress(hostAddress, type: .random)

    @Test("central: secure() pairs (LE Secure Connections, Just Works): LE Enable Encryption carries the pairing's LTK with EDIV and Rand 0; the link, its bearer and the peer all agree; the bond is kept under the peer's identity, with its IRK")
    func centralPairsWithSecureConnections() async throws {
        var peerConfiguration = PairingConfiguration()
        peerConfiguration.identity = peerIdentity
        let peer = ScriptedSMPPeer(isCentral: false, configuration: peerConfiguration, hostAddress: host)
        let bonds = InMemoryBondStore()
        let (controller, pump, adapter) = try await open(against: peer, configuration(bonds: bonds))
        let connection = try await adapter.connect(to: ScriptedController.peer)
        #expect(connection.security == .none)
        #expect(connection.att.linkSecurity() == LinkSecurity.none)

        let reached = try await within(seconds: 60) { try await connection.secure() }
        #expect(reached == .encrypted)
        #expect(connection.security == .encrypted)
        #expect(connection.att.linkSecurity() == .encrypted)
        let outcome = try #require(peer.outcome, "the peer completed too (failure: \(String(describing: peer.failure)))")
        #expect(outcome.secureConnections && outcome.method == .justWorks)
        let encryptions = sent(controller, enableEncryption)
        #expect(encryptions.count == 1)
        #expect(encryptions.first?.key == outcome.linkKey)
        #expect(encryptions.first?.diversifier == 0 && encryptions.first?.random == 0)
        // The public key (65 bytes) does not fit the controller's 27-byte buffers: it went in
        // fragments, and the peer reassembled it.
        #expect(controller.aclPackets.contains { (packet: ACLPacket) in packet.packetBoundary == .continuation }, "the public key went in fragments")

        let kept = await bonds.bonds()
        #expect(kept.count == 1)
        #expect(kept.first?.peer == peerIdentity.address, "kept under the identity the peer distributed")
        #expect(kept.first?.peerIdentityResolvingKey == peerIdentity.identityResolvingKey)
        #expect(kept.first?.centralKey == Bond.LongTermKey(value: outcome.linkKey))
        #expect(kept.first?.secureConnections == true && kept.first?.authenticated == false)

        #expect(try await within(seconds: 60) { try await connection.secure() } == .encrypted, "already secure: at once")
        #expect(sent(controller, enableEncryption).count == 1)
        await adapter.close()
        pump.cancel()
    }

    @Test("central, legacy pairing: the bond keeps the peer's LTK, EDIV and Rand; the next link to the peer is encrypted with them before connect returns, with no SMP")
    func centralReconnectsWithTheBond() async throws {
        let peer = ScriptedSMPPeer(isCentral: false, configuration: legacyPairing, hostAddress: host)
        let (controller, pump, adapter) = try await open(against: peer, configuration(pairing: legacyPairing))
        let first = try await adapter.connect(to: ScriptedController.peer)
        let outcome = try await within(seconds: 60) { try await first.pair() }
        #expect(outcome?.secureConnections == false)
        let peerKeys = try #require(peer.outcome?.local)
        let distributed = try #require(peerKeys.longTermKey)
        try await first.disconnect()

        peer.newLink()
        let smpBefore = peer.received.count
        let second = try await adapter.connect(to: ScriptedController.peer)
        #expect(second.security == .encrypted, "encrypted before connect returned")
        let last = try #require(sent(controller, enableEncryption).last)
        #expect(last.key == distributed && last.diversifier == peerKeys.encryptedDiversifier && last.random == peerKeys.random)
        #expect(peer.received.count == smpBefore, "no SMP on the bonded link")
        await adapter.close()
        pump.cancel()
    }

    @Test("central, on the adapter's own task executor (as rawble's commands run it): the Encryption Change for a bond's key handled before connect's wait for it is filed still ends that wait, encrypted")
    func bondEncryptionSettledBeforeItsWaitIsFiled() async throws {
        // On a task that prefers the adapter's task executor, every `await` inside the host is
        // a real hop through the loop's queue (the actor runs its jobs on the loop's serial
        // executor, not on the task executor the task prefers), so what the loop already
        // holds runs first. The Encryption Change is put there the moment the host logs that
        // it encrypts: before its wait, which comes after that line, is filed.
        let bond = Bond(peer: ScriptedController.peer, centralKey: Bond.LongTermKey(value: 0x42), peripheralKey: Bond.LongTermKey(value: 0x42),
                        authenticated: false, secureConnections: true, keySize: 16)
        let controller = ScriptedController(answer: { command in
            if case .leEnableEncryption = command { return [ScriptedController.status(command.opcode)] }
            return ScriptedController.minimal(command)
        })
        let transport = controller.transport
        let log = RecordingLogHandler(level: .debug) { record in
            guard record.message.hasPrefix("encrypting the link to "), record.message.hasSuffix(" with its bond") else { return }
            transport.inject(.encryptionChange(.init(status: .success, connectionHandle: ScriptedController.handle, encryptionEnabled: 1)))
        }
        var settings = configuration(bonds: InMemoryBondStore([bond]))
        settings.logger = Logger(label: "bond-race") { _ in log }
        let pump = controller.run()
        let adapter = try await Adapter.open(transport, configuration: settings)
        for round in 1...3 {
            let link = try await within(seconds: 60) {
                try await withTaskExecutorPreference(adapter.taskExecutor) { try await adapter.connect(to: ScriptedController.peer) }
            }
            #expect(link.security == .encrypted, "link \(round): encrypted before connect returned")
            #expect(!log.lines.contains { $0.contains("is not encrypted with its bond") }, "\(log.lines)")
            try await within(seconds: 60) { try await link.disconnect() }
        }
        await adapter.close()
        pump.cancel()
    }

    @Test("central: the peer's Pairing Failed ends secure() with its reason, in one line")
    func peerRefusesThePairing() async throws {
        var strict = PairingConfiguration()
        strict.minimumKeySize = 16
        let peer = ScriptedSMPPeer(isCentral: false, configuration: strict, hostAddress: host)
        var short = PairingConfiguration()
        short.maximumKeySize = 7
        short.minimumKeySize = 7
        let (controller, pump, adapter) = try await open(against: peer, configuration(pairing: short))
        let connection = try await adapter.connect(to: ScriptedController.peer)
        await #expect(throws: HostError.pairingFailed(ScriptedController.peer, .peerFailed(.encryptionKeySize))) {
            try await within(seconds: 60) { try await connection.secure() }
        }
        #expect(HostError.pairingFailed(ScriptedController.peer, .peerFailed(.encryptionKeySize)).description.contains("Encryption Key Size"))
        #expect(connection.security == .none)
        #expect(sent(controller, enableEncryption).isEmpty)
        await adapter.close()
        pump.cancel()
    }

    @Test("central: a bond the peer no longer has (PIN or Key Missing): connect logs it and leaves the link unencrypted; secure() throws the reason with the fix")
    func peerLostTheBond() async throws {
        let peer = ScriptedSMPPeer(isCentral: false, configuration: PairingConfiguration(), hostAddress: host)
        let stale = Bond(peer: ScriptedController.peer, centralKey: Bond.LongTermKey(value: 0x42), peripheralKey: Bond.LongTermKey(value: 0x42),
                         authenticated: false, secureConnections: true, keySize: 16)
        let (controller, pump, adapter) = try await open(against: peer, configuration(bonds: InMemoryBondStore([stale])))
        let connection = try await adapter.connect(to: ScriptedController.peer)
        #expect(sent(controller, enableEncryption).map(\.key) == [0x42])
        #expect(connection.security == .none)
        let error = await #expect(throws: HostError.encryptionFailed(ScriptedController.peer, .pinOrKeyMissing)) {
            try await within(seconds: 60) { try await connection.secure() }
        }
        #expect(error?.description.contains("rawble bonds remove") == true, "\(String(describing: error))")
        #expect(peer.received.isEmpty, "no pairing behind the user's back")
        await adapter.close()
        pump.cancel()
    }

    @Test("peripheral: a central's legacy pairing is answered; the LTK Request gets the STK; a later link's LTK Request gets the bond's key when EDIV and Rand name it, a negative reply when they do not")
    func peripheralPairsAndAnswersKeyRequests() async throws {
        let peer = ScriptedSMPPeer(isCentral: true, configuration: legacyPairing, hostAddress: host)
        let bonds = InMemoryBondStore()
        let (controller, pump, adapter) = try await open(against: peer, configuration(pairing: legacyPairing, bonds: bonds))
        let connection = try await acceptCentral(adapter, controller)
        for packet in peer.startPairing() { controller.transport.inject(packet) }
        try await within(seconds: 60) { try await bonds.waitForBonds() }
        let outcome = try #require(peer.outcome, "the peer completed (failure: \(String(describing: peer.failure)))")
        #expect(connection.security == .encrypted)
        let bond = try #require(await bonds.bonds().first)
        let hostKey = try #require(outcome.peer.longTermKey, "the host distributed an LTK")
        #expect(bond.peripheralKey == Bond.LongTermKey(value: hostKey, encryptedDiversifier: outcome.peer.encryptedDiversifier,
                                                       random: outcome.peer.random))

        // The next link: the central encrypts with what the host distributed.
        controller.transport.inject(.disconnectionComplete(.init(status: .success, connectionHandle: ScriptedController.handle,
                                                                 reason: .remoteUserTerminatedConnection)))
        _ = await connection.waitUntilDisconnected()
        peer.newLink()
        let second = try await acceptCentral(adapter, controller)
        controller.transport.inject(.le(.longTermKeyRequest(.init(connectionHandle: ScriptedController.handle, random: outcome.peer.random,
                                                                  encryptedDiversifier: outcome.peer.encryptedDiversifier))))
        try await controller.waitForCommand(.leLongTermKeyRequestReply(handle: ScriptedController.handle, longTermKey: hostKey))
        #expect(try await within(seconds: 60) { try await second.waitForSecurity(atLeast: .encrypted) } == .encrypted)

        controller.transport.inject(.le(.longTermKeyRequest(.init(connectionHandle: ScriptedController.handle, random: 7,
                                                                  encryptedDiversifier: 7))))
        try await controller.waitForCommand(.leLongTermKeyRequestNegativeReply(handle: ScriptedController.handle))
        await adapter.close()
        pump.cancel()
    }

    @Test("Passkey Entry (LE Secure Connections): the host types the passkey the peer shows, through its agent; the link is authenticated; no agent: Passkey Entry Failed")
    func passkeyEntry() async throws {
        var display = PairingConfiguration(ioCapability: .displayOnly)
        display.mitm = true
        var keyboard = PairingConfiguration(ioCapability: .keyboardOnly)
        keyboard.mitm = true

        let peer = ScriptedSMPPeer(isCentral: false, configuration: display, hostAddress: host)
        let (_, pump, adapter) = try await open(against: peer, configuration(pairing: keyboard, agent: ReadsThePeersPasskey(peer: peer)))
        let connection = try await adapter.connect(to: ScriptedController.peer)
        #expect(try await within(seconds: 60) { try await connection.secure(.authenticated) } == .authenticated)
        #expect(connection.att.linkSecurity() == .authenticated)
        #expect(peer.outcome?.method == .passkeyEntry(localDisplays: true), "the peer displayed, the host typed")
        await adapter.close()
        pump.cancel()

        let refused = ScriptedSMPPeer(isCentral: false, configuration: display, hostAddress: host)
        let (_, pump2, adapter2) = try await open(against: refused, configuration(pairing: keyboard))
        let connection2 = try await adapter2.connect(to: ScriptedController.peer)
        await #expect(throws: HostError.pairingFailed(ScriptedController.peer, .failed(.passkeyEntryFailed))) {
            try await within(seconds: 60) { try await connection2.secure(.authenticated) }
        }
        #expect(refused.failure == .peerFailed(.passkeyEntryFailed))
        await adapter2.close()
        pump2.cancel()
    }

    @Test("a peer that stops answering SMP: secure() fails with SMP's timeout after 30 s of virtual time, not before; the link takes no more pairing")
    func pairingTimesOut() async throws {
        let peer = ScriptedSMPPeer(isCentral: false, configuration: PairingConfiguration(), hostAddress: host, silent: true)
        let clock = ManualClock()
        let (_, pump, adapter) = try await open(against: peer, configuration(clock: clock))
        let connection = try await adapter.connect(to: ScriptedController.peer)
        let securing = Task { try await connection.secure(timeout: .seconds(60)) }
        try await peer.receivedPDUs.wait(until: { !$0.isEmpty })
        // 20 s on: the command timers still armed from start-up are past (the Pairing Request
        // went at 0 s, so SMP's deadline is 30 s, an absolute instant however late its timer
        // is armed). Then only that timer is due within the next 10 s.
        clock.advance(by: .seconds(20))
        try await within(seconds: 60) { try await clock.waitForSleepers(dueWithin: .seconds(10)) }
        #expect(clock.advance(by: .seconds(10) - .milliseconds(1)) == 0, "not a millisecond early")
        #expect(clock.advance(by: .milliseconds(1)) == 1)
        await #expect(throws: HostError.pairingFailed(ScriptedController.peer, .timedOut)) {
            try await within(seconds: 60) { try await securing.value }
        }
        await #expect(throws: HostError.pairingFailed(ScriptedController.peer, .timedOut)) {
            try await within(seconds: 60) { try await connection.secure() }
        }
        #expect(peer.received.count == 1, "one Pairing Request, nothing after the timeout")
        await adapter.close()
        pump.cancel()
    }
}

@Suite("Adapter: a bond is never replaced by a weaker one; the key size is part of the link's security; no key out of order")
struct AdapterPairingHardeningTests {
    private let host = DeviceAddress(hostAddress, type: .random)
    /// An authenticated LE Secure Connections bond with the scripted peer (whose engine does not
    /// have its key: only the bond's strength matters here).
    static let authenticatedBond = Bond(peer: ScriptedController.peer, centralKey: Bond.LongTermKey(value: 0x42),
                                        peripheralKey: Bond.LongTermKey(value: 0x42), authenticated: true, secureConnections: true, keySize: 16)

    @Test("peripheral with an authenticated bond: a central re-pairing Just Works from the bonded address is refused (Authentication Requirements) before a Pairing Response; the bond stays")
    func peripheralRefusesAWeakerRepairing() async throws {
        let peer = ScriptedSMPPeer(isCentral: true, configuration: PairingConfiguration(), hostAddress: host)
        let bonds = InMemoryBondStore([Self.authenticatedBond])
        let (controller, pump, adapter) = try await open(against: peer, configuration(bonds: bonds))
        _ = try await acceptCentral(adapter, controller)
        for packet in peer.startPairing() { controller.transport.inject(packet) }
        try await peer.failures.wait(until: { !$0.isEmpty })
        #expect(peer.failure == .peerFailed(.authenticationRequirements))
        #expect(peer.received == [.pairingFailed(.authenticationRequirements)], "refused before any Pairing Response")
        #expect(await bonds.bonds() == [Self.authenticatedBond])
        await adapter.close()
        pump.cancel()
    }

    @Test("central with an authenticated bond: pair() with a peer that can only do Just Works fails (weaker than the bond), one line; the bond stays")
    func centralRefusesAWeakerRepairing() async throws {
        let peer = ScriptedSMPPeer(isCentral: false, configuration: PairingConfiguration(), hostAddress: host)
        let bonds = InMemoryBondStore([Self.authenticatedBond])
        let (_, pump, adapter) = try await open(against: peer, configuration(bonds: bonds))
        let connection = try await adapter.connect(to: ScriptedController.peer)
        let weaker = KeyStrength(authenticated: false, secureConnections: true, keySize: 16)
        let error = await #expect(throws: HostError.pairingFailed(ScriptedController.peer,
                                                                  .weakerThanBond(bond: Self.authenticatedBond.strength, offered: weaker))) {
            try await within(seconds: 60) { try await connection.pair() }
        }
        #expect(error?.description.contains("weaker than the bond kept") == true, "\(String(describing: error))")
        #expect(peer.failure == .peerFailed(.authenticationRequirements))
        #expect(await bonds.bonds() == [Self.authenticatedBond])
        await adapter.close()
        pump.cancel()
    }

    @Test("a 12-octet key, where both sides allow it: the link, its bearer and the bond say 12; the next link, encrypted with the bond, says 12 too")
    func keySizeInTheLinkSecurity() async throws {
        let allows12 = PairingConfiguration(maximumKeySize: 12, minimumKeySize: 7)
        let peer = ScriptedSMPPeer(isCentral: false, configuration: PairingConfiguration(minimumKeySize: 7), hostAddress: host)
        let bonds = InMemoryBondStore()
        let (_, pump, adapter) = try await open(against: peer, configuration(pairing: allows12, bonds: bonds))
        let first = try await adapter.connect(to: ScriptedController.peer)
        #expect(first.encryptionKeySize == nil)
        #expect(try await within(seconds: 60) { try await first.secure() } == .encrypted)
        #expect(first.encryptionKeySize == 12 && first.att.encryptionKeySize() == 12)
        #expect(await bonds.bonds().first?.keySize == 12)
        try await first.disconnect()

        peer.newLink()
        let second = try await adapter.connect(to: ScriptedController.peer)
        #expect(second.security == .encrypted, "encrypted with the bond before connect returned")
        #expect(second.encryptionKeySize == 12 && second.att.encryptionKeySize() == 12)
        await adapter.close()
        pump.cancel()
    }

    @Test("peripheral: an LTK Request right after the central's Pairing Request gets a negative reply, never the bond's key")
    func longTermKeyRequestMidPairing() async throws {
        let peer = ScriptedSMPPeer(isCentral: true, configuration: PairingConfiguration(), hostAddress: host)
        let bond = Bond(peer: ScriptedController.peer, centralKey: Bond.LongTermKey(value: 0x42), peripheralKey: Bond.LongTermKey(value: 0x42),
                        authenticated: false, secureConnections: true, keySize: 16)
        let (controller, pump, adapter) = try await open(against: peer, configuration(bonds: InMemoryBondStore([bond])))
        _ = try await acceptCentral(adapter, controller)
        for packet in peer.startPairing() { controller.transport.inject(packet) }
        controller.transport.inject(.le(.longTermKeyRequest(.init(connectionHandle: ScriptedController.handle, random: 0, encryptedDiversifier: 0))))
        try await controller.waitForCommand(.leLongTermKeyRequestNegativeReply(handle: ScriptedController.handle))
        #expect(!controller.commands.contains(.leLongTermKeyRequestReply(handle: ScriptedController.handle, longTermKey: 0x42)))
        await adapter.close()
        pump.cancel()
        #expect(!controller.commands.contains(.leLongTermKeyRequestReply(handle: ScriptedController.handle, longTermKey: 0x42)))
    }
}

@Suite("Adapter: a peer claiming a bonded device's identity from another address")
struct AdapterIdentityClaimTests {
    private let host = DeviceAddress(hostAddress, type: .random)

    @Test("central: a peer pairs Just Works from its own address and distributes the identity of a device bonded with authenticated keys: the link is encrypted (unauthenticated), the authenticated bond is kept")
    func weakerBondUnderAClaimedIdentityIsNotKept() async throws {
        let bonded = DeviceAddress(BluetoothAddress(0xC9_88_77_66_55_44), type: .random)
        let kept = Bond(peer: bonded, peerIdentityResolvingKey: 0x99, centralKey: Bond.LongTermKey(value: 0x42), peripheralKey: Bond.LongTermKey(value: 0x42),
                        authenticated: true, secureConnections: true, keySize: 16)
        var claims = PairingConfiguration()
        claims.identity = PairingIdentity(identityResolvingKey: 0x1234, address: bonded)
        let peer = ScriptedSMPPeer(isCentral: false, configuration: claims, hostAddress: host)
        let bonds = InMemoryBondStore([kept])
        let (_, pump, adapter) = try await open(against: peer, configuration(bonds: bonds))
        let connection = try await adapter.connect(to: ScriptedController.peer)
        let outcome = try await within(seconds: 60) { try await connection.pair() }
        #expect(outcome?.peer.identity?.address == bonded && outcome?.isAuthenticated == false)
        #expect(connection.security == .encrypted)
        #expect(await bonds.bonds() == [kept], "the authenticated bond stays; the claim is not kept")
        await adapter.close()
        pump.cancel()
    }
}

@Suite("Adapter: a bond whose key is shorter than the configuration accepts is not used to encrypt")
struct AdapterShortBondTests {
    private let host = DeviceAddress(hostAddress, type: .random)
    /// A bond made under a 7-octet minimum (before 16 was the default).
    static let shortBond = Bond(peer: ScriptedController.peer, centralKey: Bond.LongTermKey(value: 0x42), peripheralKey: Bond.LongTermKey(value: 0x42, encryptedDiversifier: 5, random: 6),
                                authenticated: false, secureConnections: true, keySize: 7)

    @Test("central: connect does not encrypt with a 7-octet bond; secure() pairs again (16 octets), and the new bond replaces it")
    func centralPairsAgain() async throws {
        let peer = ScriptedSMPPeer(isCentral: false, configuration: PairingConfiguration(), hostAddress: host)
        let bonds = InMemoryBondStore([Self.shortBond])
        let (controller, pump, adapter) = try await open(against: peer, configuration(bonds: bonds))
        let connection = try await adapter.connect(to: ScriptedController.peer)
        #expect(sent(controller, enableEncryption).isEmpty, "the short bond's key was not used")
        #expect(try await within(seconds: 60) { try await connection.secure() } == .encrypted)
        #expect(connection.encryptionKeySize == 16)
        let outcome = try #require(peer.outcome)
        #expect(sent(controller, enableEncryption).map(\.key) == [outcome.linkKey])
        #expect(await bonds.bonds().map(\.keySize) == [16])
        await adapter.close()
        pump.cancel()
    }

    @Test("peripheral: an LTK Request naming a 7-octet bond gets a negative reply")
    func peripheralRefusesTheShortBond() async throws {
        let peer = ScriptedSMPPeer(isCentral: true, configuration: PairingConfiguration(), hostAddress: host)
        let (controller, pump, adapter) = try await open(against: peer, configuration(bonds: InMemoryBondStore([Self.shortBond])))
        _ = try await acceptCentral(adapter, controller)
        controller.transport.inject(.le(.longTermKeyRequest(.init(connectionHandle: ScriptedController.handle, random: 6, encryptedDiversifier: 5))))
        try await controller.waitForCommand(.leLongTermKeyRequestNegativeReply(handle: ScriptedController.handle))
        #expect(!controller.commands.contains(.leLongTermKeyRequestReply(handle: ScriptedController.handle, longTermKey: 0x42)))
        await adapter.close()
        pump.cancel()
    }
}
