import RawbleSMP
import RawbleTestSupport
import RawbleWire
import Testing

// The published attacks on a host's Security Manager, each performed on the engine as bytes:
// the attacker is the test, its values computed from the victim's own messages with the
// engine's crypto primitives, exactly as the attack computes them.

/// One engine under attack: what it answered, and helpers to read it.
struct Victim {
    var engine: Engine
    let now = ContinuousClock.now
    /// Every action the engine returned, in order.
    var actions: [PairingAction] = []

    static let centralAddress = PairingBadInputTests.central
    static let peripheralAddress = PairingBadInputTests.peripheral

    init(_ role: Engine.Role, _ configuration: PairingConfiguration, seed: UInt64 = 11, keyPair: PairingKeyPair? = nil) {
        let (local, peer) = role == .initiator ? (Self.centralAddress, Self.peripheralAddress) : (Self.peripheralAddress, Self.centralAddress)
        engine = Engine(role: role, configuration: configuration, localAddress: local, peerAddress: peer,
                        random: SplitMix64(state: seed), keyPair: keyPair)
    }

    /// Delivers `pdu` as bytes; returns what the engine answered.
    @discardableResult
    mutating func receive(_ pdu: SMPPDU) -> [PairingAction] {
        receive(pdu.encoded)
    }

    @discardableResult
    mutating func receive(_ bytes: [UInt8]) -> [PairingAction] {
        let answer = engine.receive(bytes[...], now: now)
        actions += answer
        return answer
    }

    @discardableResult
    mutating func start() -> [PairingAction] {
        let answer = engine.start(now: now)
        actions += answer
        return answer
    }

    /// The PDUs the engine sent so far.
    var sent: [SMPPDU] { actions.compactMap { if case .send(let pdu) = $0 { pdu } else { nil } } }
    /// How the pairing ended, if it failed.
    var failure: PairingFailure? { actions.lazy.compactMap { if case .failed(let failure) = $0 { failure } else { nil } }.first }
    /// Whether the engine ever asked to encrypt the link or completed.
    var madeKeys: Bool {
        actions.contains {
            switch $0 {
            case .startEncryption, .completed: true
            default: false
            }
        }
    }

    /// The last public key the engine sent.
    var publicKey: PairingPublicKey? { sent.lazy.compactMap { if case .pairingPublicKey(let key) = $0 { key } else { nil } }.last }
    var confirms: [UInt128] { sent.compactMap { if case .pairingConfirm(let value) = $0 { value } else { nil } } }
    var randoms: [UInt128] { sent.compactMap { if case .pairingRandom(let value) = $0 { value } else { nil } } }
    var response: SMPPairingParameters? { sent.lazy.compactMap { if case .pairingResponse(let value) = $0 { value } else { nil } }.first }
    var request: SMPPairingParameters? { sent.lazy.compactMap { if case .pairingRequest(let value) = $0 { value } else { nil } }.first }
}

/// Pairing Request or Response parameters an attacker sends.
func parameters(_ io: SMPIOCapability, _ requirements: SMPAuthenticationRequirements = [.bonding, .mitm, .secureConnections],
                keySize: UInt8 = 16, keys: SMPKeyDistribution = [.encryptionKey]) -> SMPPairingParameters {
    SMPPairingParameters(ioCapability: io, authenticationRequirements: requirements, maximumEncryptionKeySize: keySize,
                         initiatorKeyDistribution: keys, responderKeyDistribution: keys)
}

@Suite("SMP attacks: a reflected public key (CVE-2020-26558) fails before any confirm value or nonce, in both roles")
struct ReflectedPublicKeyTests {
    /// The field prime of P-256.
    static let prime = P256Coordinate(high: 0xFFFFFFFF_00000001_00000000_00000000, low: 0x00000000_FFFFFFFF_FFFFFFFF_FFFFFFFF)

    /// The point's mirror image (X, p − Y): on the curve too, with the same X.
    static func mirrored(_ key: PairingPublicKey) -> PairingPublicKey {
        let borrow: UInt128 = prime.low < key.y.low ? 1 : 0
        let y = P256Coordinate(high: prime.high &- key.y.high &- borrow, low: prime.low &- key.y.low)
        return PairingPublicKey(x: key.x, y: y)
    }

    @Test("the mirror image is a valid point another key pair takes: only the X check refuses it")
    func theMirrorImageIsOnTheCurve() throws {
        let key = PairingKeyPair().publicKey
        let image = Self.mirrored(key)
        #expect(image.x == key.x && image.y != key.y)
        #expect(Self.mirrored(image) == key)
        // A whole-point compare would let it through: the point is on P-256.
        #expect(throws: Never.self) { try PairingKeyPair().dhKey(with: image) }
    }

    @Test("initiator, Passkey Entry: the responder answers our key with (X, p − Y) or (X, Y): DHKey Check Failed, no passkey shown, no confirm, no nonce",
          arguments: [true, false])
    func initiator(mirroredY: Bool) throws {
        var victim = Victim(.initiator, PairingConfiguration(ioCapability: .displayOnly, mitm: true))
        victim.start()
        victim.receive(.pairingResponse(parameters(.keyboardOnly)))
        let ours = try #require(victim.publicKey, "the victim sent its public key")
        let answer = victim.receive(.pairingPublicKey(mirroredY ? Self.mirrored(ours) : ours))
        #expect(answer == [.send(.pairingFailed(.dhKeyCheckFailed)), .failed(.failed(.dhKeyCheckFailed))])
        #expect(victim.confirms.isEmpty && victim.randoms.isEmpty)
        #expect(!victim.actions.contains { if case .displayPasskey = $0 { true } else { false } })
        #expect(!victim.engine.isPairing)
    }

    @Test("responder, Passkey Entry: an initiator that learned our key in an earlier pairing sends its mirror image: refused before our own key goes out",
          arguments: [true, false])
    func responder(mirroredY: Bool) throws {
        // A responder that keeps its key pair across pairings (as many devices do).
        var victim = Victim(.responder, PairingConfiguration(ioCapability: .displayOnly, mitm: true), keyPair: PairingKeyPair())
        victim.receive(.pairingRequest(parameters(.keyboardOnly)))
        victim.receive(.pairingPublicKey(PairingKeyPair().publicKey))
        let learned = try #require(victim.publicKey, "the first pairing showed the victim's key")
        victim.receive(.pairingFailed(.passkeyEntryFailed))

        victim.actions = []
        victim.receive(.pairingRequest(parameters(.keyboardOnly)))
        let answer = victim.receive(.pairingPublicKey(mirroredY ? Self.mirrored(learned) : learned))
        #expect(answer == [.send(.pairingFailed(.dhKeyCheckFailed)), .failed(.failed(.dhKeyCheckFailed))])
        #expect(victim.publicKey == nil && victim.confirms.isEmpty && victim.randoms.isEmpty)
    }
}

@Suite("SMP attacks: LE legacy pairing's reflected confirm value fails before our nonce")
struct ReflectedLegacyConfirmTests {
    @Test("initiator: the responder sends our Mconfirm back as Sconfirm: Confirm Value Failed, Mrand never sent",
          arguments: [(SMPIOCapability.noInputNoOutput, SMPIOCapability.noInputNoOutput), (.displayOnly, .keyboardOnly)])
    func initiator(victimIO: SMPIOCapability, attackerIO: SMPIOCapability) throws {
        var victim = Victim(.initiator, PairingConfiguration(ioCapability: victimIO, mitm: victimIO != .noInputNoOutput, allowsLegacyPairing: true))
        victim.start()
        victim.receive(.pairingResponse(parameters(attackerIO, [.bonding, .mitm])))
        let mconfirm = try #require(victim.confirms.first, "the victim committed first")
        let answer = victim.receive(.pairingConfirm(mconfirm))
        #expect(answer == [.send(.pairingFailed(.confirmValueFailed)), .failed(.failed(.confirmValueFailed))])
        #expect(victim.randoms.isEmpty)
        #expect(!victim.madeKeys)
    }

    @Test("responder: an initiator that predicts our nonce commits to our own confirm value: Confirm Value Failed, ours never sent")
    func responder() throws {
        let seed: UInt64 = 42
        var victim = Victim(.responder, PairingConfiguration(allowsLegacyPairing: true), seed: seed)
        let request = parameters(.noInputNoOutput, [.bonding])
        victim.receive(.pairingRequest(request))
        let response = try #require(victim.response)
        // The victim's generator, copied: its Srand is the first nonce it draws.
        var predicted = SplitMix64(state: seed)
        let srand = UInt128(predicted.next()) << 64 | UInt128(predicted.next())
        let sconfirm = SMPCrypto.legacyConfirmValue(k: 0, r: srand, pairingRequest: request, pairingResponse: response,
                                                    initiator: Victim.centralAddress, responder: Victim.peripheralAddress)
        let answer = victim.receive(.pairingConfirm(sconfirm))
        #expect(answer == [.send(.pairingFailed(.confirmValueFailed)), .failed(.failed(.confirmValueFailed))])
        #expect(victim.confirms.isEmpty && !victim.madeKeys)
    }
}

@Suite("SMP attacks: key sizes (SweynTooth CVE-2019-19196, KNOB) and legacy-only peers")
struct KeySizeAndLegacyTests {
    /// A Pairing Request or Response whose maximum key size is `size`, as bytes (the PDU type
    /// refuses to hold it).
    static func bytes(_ code: UInt8, keySize size: UInt8) -> [UInt8] {
        [code, SMPIOCapability.noInputNoOutput.rawValue, 0x00, 0x09, size, 0x01, 0x01]
    }

    @Test("a maximum key size outside 7–16 is Invalid Parameters, in both roles", arguments: [UInt8(17), 6, 0, 255])
    func outsideTheRange(size: UInt8) {
        var responder = Victim(.responder, PairingConfiguration())
        #expect(responder.receive(Self.bytes(0x01, keySize: size)).first == .send(.pairingFailed(.invalidParameters)))
        #expect(responder.response == nil && !responder.engine.isPairing)

        var initiator = Victim(.initiator, PairingConfiguration())
        initiator.start()
        #expect(initiator.receive(Self.bytes(0x02, keySize: size))
            == [.send(.pairingFailed(.invalidParameters)), .failed(.failed(.invalidParameters))])
        #expect(initiator.publicKey == nil)
    }

    @Test("by default only a 16-octet key: 15 is Encryption Key Size, in both roles")
    func sixteenByDefault() {
        var responder = Victim(.responder, PairingConfiguration())
        #expect(responder.receive(.pairingRequest(parameters(.noInputNoOutput, keySize: 15))).first == .send(.pairingFailed(.encryptionKeySize)))
        #expect(responder.response == nil)

        var initiator = Victim(.initiator, PairingConfiguration())
        initiator.start()
        #expect(initiator.receive(.pairingResponse(parameters(.noInputNoOutput, keySize: 15)))
            == [.send(.pairingFailed(.encryptionKeySize)), .failed(.failed(.encryptionKeySize))])
    }

    @Test("the minimum is configurable 7…16; a value outside is taken as the nearest end",
          arguments: [(UInt8(7), UInt8(7), true), (10, 9, false), (10, 10, true), (3, 7, true), (30, 15, false), (30, 16, true)])
    func configurableMinimum(minimum: UInt8, offered: UInt8, accepted: Bool) {
        var responder = Victim(.responder, PairingConfiguration(minimumKeySize: minimum))
        responder.receive(.pairingRequest(parameters(.noInputNoOutput, keySize: offered)))
        #expect((responder.response != nil) == accepted)
        #expect(responder.failure == (accepted ? nil : .failed(.encryptionKeySize)))
    }

    @Test("a negotiated key shorter than 16 octets, allowed: the outcome says its size")
    func shorterKeyAllowed() {
        var link = PairingLink(central: PairingConfiguration(maximumKeySize: 12, minimumKeySize: 7),
                               peripheral: PairingConfiguration(minimumKeySize: 12))
        link.run()
        #expect(link.centralOutcome?.keySize == 12 && link.peripheralOutcome?.keySize == 12)
        #expect(link.centralOutcome?.strength == KeyStrength(authenticated: false, secureConnections: true, keySize: 12))
    }

    @Test("a peer that offers only LE legacy pairing is refused (Authentication Requirements) unless legacy is allowed, in both roles")
    func legacyOnlyPeer() throws {
        var initiator = Victim(.initiator, PairingConfiguration())
        initiator.start()
        #expect(initiator.receive(.pairingResponse(parameters(.noInputNoOutput, [.bonding])))
            == [.send(.pairingFailed(.authenticationRequirements)), .failed(.legacyPairingRefused)])
        #expect(initiator.confirms.isEmpty)

        var responder = Victim(.responder, PairingConfiguration())
        #expect(responder.receive(.pairingRequest(parameters(.noInputNoOutput, [.bonding])))
            == [.send(.pairingFailed(.authenticationRequirements)), .failed(.legacyPairingRefused)])

        var allowed = PairingLink(central: PairingConfiguration(secureConnections: false),
                                  peripheral: PairingConfiguration(allowsLegacyPairing: true))
        allowed.run()
        let outcome = try #require(allowed.peripheralOutcome)
        #expect(!outcome.secureConnections)
    }
}

@Suite("SMP attacks: SweynTooth's host cases (zero LTK, DHKey check skipped, malformed public key)")
struct SweynToothTests {
    /// An attacker central that runs LE Secure Connections Just Works with the victim
    /// peripheral up to the DHKey check, then stops: its key pair, and the victim.
    static func responderAwaitingDHKeyCheck() throws -> Victim {
        var victim = Victim(.responder, PairingConfiguration())
        victim.receive(.pairingRequest(parameters(.noInputNoOutput)))
        victim.receive(.pairingPublicKey(PairingKeyPair().publicKey))
        #expect(victim.confirms.count == 1, "the responder committed")
        victim.receive(.pairingRandom(0x1234))
        #expect(victim.randoms.count == 1, "the responder revealed its nonce and waits for the DHKey check")
        #expect(victim.engine.isPairing)
        return victim
    }

    @Test("peripheral: the central skips its DHKey check and starts encryption: negative reply, the pairing fails, no key")
    func dhKeyCheckSkipped() throws {
        var victim = try Self.responderAwaitingDHKeyCheck()
        let answer = victim.engine.longTermKeyRequested(encryptedDiversifier: 0, random: 0, now: victim.now)
        #expect(answer == .refuse([.send(.pairingFailed(.unspecifiedReason)), .failed(.failed(.unspecifiedReason))]))
        #expect(!victim.engine.isPairing)
        // The pairing's key is never given afterwards either: the host's bond lookup decides.
        #expect(victim.engine.longTermKeyRequested(encryptedDiversifier: 0, random: 0, now: victim.now) == .notPairing)
    }

    @Test("peripheral: an LTK request right after the Pairing Request (the zero LTK, CVE-2019-19194): negative reply, the pairing fails",
          arguments: [true, false])
    func zeroLongTermKey(secureConnections: Bool) {
        var victim = Victim(.responder, PairingConfiguration(allowsLegacyPairing: true))
        victim.receive(.pairingRequest(parameters(.noInputNoOutput, secureConnections ? [.bonding, .secureConnections] : [.bonding])))
        #expect(victim.response != nil)
        if case .refuse(let actions) = victim.engine.longTermKeyRequested(encryptedDiversifier: 0, random: 0, now: victim.now) {
            #expect(actions == [.send(.pairingFailed(.unspecifiedReason)), .failed(.failed(.unspecifiedReason))])
        } else {
            Issue.record("an LTK request mid-pairing was not refused")
        }
        #expect(!victim.engine.isPairing)
    }

    @Test("peripheral: mid-pairing, a request naming another key (EDIV, Rand) is refused too; an honest pairing's own request gets its key")
    func onlyThePairingsOwnRequest() throws {
        var victim = try Self.responderAwaitingDHKeyCheck()
        if case .refuse = victim.engine.longTermKeyRequested(encryptedDiversifier: 0x1234, random: 0x5678, now: victim.now) {} else {
            Issue.record("a request for another key mid-pairing was answered")
        }
        #expect(!victim.engine.isPairing)

        var honest = PairingLink(central: PairingConfiguration(), peripheral: PairingConfiguration())
        honest.run()
        #expect(honest.responderKey != nil && honest.responderKey != 0 && honest.responderKey == honest.centralOutcome?.linkKey)
    }

    @Test("central: an Encryption Change before the pairing asked for one fails it (before the confirm, and while waiting for the responder's DHKey check)")
    func encryptionOutOfOrder() throws {
        var early = Victim(.initiator, PairingConfiguration())
        early.start()
        early.receive(.pairingResponse(parameters(.noInputNoOutput)))
        let answer = early.engine.encryptionChanged(status: 0, now: early.now)
        #expect(answer.prefix(2) == [.send(.pairingFailed(.unspecifiedReason)), .failed(.failed(.unspecifiedReason))])
        #expect(!early.engine.isPairing)

        // The responder plays fair until its DHKey check, then has the link encrypted instead.
        var victim = Victim(.initiator, PairingConfiguration())
        let attacker = PairingKeyPair()
        victim.start()
        victim.receive(.pairingResponse(parameters(.noInputNoOutput)))
        let ours = try #require(victim.publicKey)
        let nb: UInt128 = 0xB0B
        victim.receive(.pairingPublicKey(attacker.publicKey))
        victim.receive(.pairingConfirm(SMPCrypto.confirmValue(u: attacker.publicKey.x, v: ours.x, x: nb, z: 0)))
        victim.receive(.pairingRandom(nb))
        #expect(victim.sent.last?.code == .pairingDHKeyCheck, "the victim sent its DHKey check")
        victim.actions += victim.engine.encryptionChanged(status: 0, now: victim.now)
        #expect(victim.failure == .failed(.unspecifiedReason))
        #expect(!victim.madeKeys)
    }

    @Test("a malformed Pairing Public Key (truncated, or coordinates not below the prime) fails cleanly, in both roles",
          arguments: [true, false])
    func malformedPublicKey(truncated: Bool) {
        let ones = P256Coordinate(high: .max, low: .max)
        let bytes = truncated ? [0x0C] + [UInt8](repeating: 0xAB, count: 40) : SMPPDU.pairingPublicKey(PairingPublicKey(x: ones, y: ones)).encoded
        let reason: SMPPairingFailureReason = truncated ? .invalidParameters : .dhKeyCheckFailed

        var responder = Victim(.responder, PairingConfiguration())
        responder.receive(.pairingRequest(parameters(.noInputNoOutput)))
        #expect(responder.receive(bytes) == [.send(.pairingFailed(reason)), .failed(.failed(reason))])

        var initiator = Victim(.initiator, PairingConfiguration())
        initiator.start()
        initiator.receive(.pairingResponse(parameters(.noInputNoOutput)))
        #expect(initiator.receive(bytes) == [.send(.pairingFailed(reason)), .failed(.failed(reason))])
        #expect(!initiator.madeKeys && !responder.madeKeys)
    }
}

@Suite("SMP attacks: a bond is never replaced by a weaker one; identity addresses are checked")
struct BondDowngradeTests {
    static let authenticatedBond = KeyStrength(authenticated: true, secureConnections: true, keySize: 16)

    @Test("peripheral bonded with authenticated keys: a central re-pairing Just Works is refused (Authentication Requirements) before any key")
    func justWorksOverAuthenticated() {
        var victim = Victim(.responder, PairingConfiguration(ioCapability: .displayYesNo, mitm: true))
        victim.engine.bondToKeep = Self.authenticatedBond
        let answer = victim.receive(.pairingRequest(parameters(.noInputNoOutput, [.bonding, .secureConnections])))
        let offered = KeyStrength(authenticated: false, secureConnections: true, keySize: 16)
        #expect(answer == [.send(.pairingFailed(.authenticationRequirements)),
                           .failed(.weakerThanBond(bond: Self.authenticatedBond, offered: offered))])
        #expect(victim.response == nil)
    }

    @Test("central: a re-pairing that would be weaker fails in each way (unauthenticated, legacy, shorter key)",
          arguments: [
            (KeyStrength(authenticated: true, secureConnections: true, keySize: 16), parameters(.noInputNoOutput, [.bonding, .secureConnections])),
            (KeyStrength(authenticated: false, secureConnections: true, keySize: 16), parameters(.noInputNoOutput, [.bonding])),
            (KeyStrength(authenticated: false, secureConnections: true, keySize: 16), parameters(.noInputNoOutput, [.bonding, .secureConnections], keySize: 12)),
          ])
    func weakerInEachWay(bond: KeyStrength, response: SMPPairingParameters) {
        var victim = Victim(.initiator, PairingConfiguration(ioCapability: .keyboardDisplay, mitm: true, allowsLegacyPairing: true, minimumKeySize: 7))
        victim.engine.bondToKeep = bond
        victim.start()
        let answer = victim.receive(.pairingResponse(response))
        #expect(answer.first == .send(.pairingFailed(.authenticationRequirements)))
        if case .weakerThanBond(let kept, _)? = victim.failure { #expect(kept == bond) } else { Issue.record("\(answer)") }
        #expect(victim.publicKey == nil && victim.confirms.isEmpty)
    }

    @Test("a re-pairing as strong as the bond goes ahead")
    func asStrong() throws {
        var link = PairingLink(central: PairingConfiguration(), peripheral: PairingConfiguration())
        link.peripheral.bondToKeep = KeyStrength(authenticated: false, secureConnections: true, keySize: 16)
        link.central.bondToKeep = link.peripheral.bondToKeep
        link.run()
        #expect(link.centralOutcome != nil && link.peripheralOutcome != nil)
    }

    @Test("a comparison accepted unseen over an authenticated bond: weaker, refused")
    func unseenComparisonOverAuthenticated() {
        let config = PairingConfiguration(ioCapability: .displayYesNo, mitm: true)
        var link = PairingLink(central: config, peripheral: config)
        link.central.bondToKeep = Self.authenticatedBond
        link.centralComparedByPerson = false
        link.run()
        #expect(link.centralOutcome == nil && link.peripheralOutcome == nil)
        if case .weakerThanBond? = link.centralFailure {} else { Issue.record("\(String(describing: link.centralFailure))") }
        #expect(link.encryptedWith == nil)
    }

    @Test("a distributed identity address that is neither public nor static random fails the pairing on the side that receives it: no outcome, no bond",
          arguments: [(UInt64(0x40_11_22_33_44_55), false), (0x00_11_22_33_44_55, false), (0xC0_11_22_33_44_55, true)])
    func identityAddress(random: UInt64, valid: Bool) throws {
        let identity = PairingIdentity(identityResolvingKey: 0x77, address: DeviceAddress(BluetoothAddress(random), type: .random))
        var link = PairingLink(central: PairingConfiguration(), peripheral: PairingConfiguration(identity: identity))
        link.run()
        if valid {
            #expect(link.centralOutcome?.peer.identity == identity)
        } else {
            #expect(link.centralOutcome == nil)
            #expect(link.centralFailure == .failed(.invalidParameters))
            // The responder distributes first and, with nothing to receive (LE Secure
            // Connections derives the LTK), completed before the central's refusal came.
            #expect(link.sent.last?.pdu == .pairingFailed(.invalidParameters) && link.sent.last?.fromCentral == true)
        }
    }

    @Test("peripheral: a central distributing a resolvable private address as its identity: the pairing fails, no outcome")
    func identityAddressFromTheCentral() {
        let identity = PairingIdentity(identityResolvingKey: 0x77, address: DeviceAddress(BluetoothAddress(0x40_11_22_33_44_55), type: .random))
        var link = PairingLink(central: PairingConfiguration(identity: identity), peripheral: PairingConfiguration())
        link.run()
        #expect(link.peripheralOutcome == nil)
        #expect(link.peripheralFailure == .failed(.invalidParameters))
    }

    @Test("a public identity address is accepted")
    func publicIdentity() {
        let identity = PairingIdentity(identityResolvingKey: 0x77, address: DeviceAddress(BluetoothAddress(0x00_11_22_33_44_55), type: .public))
        var link = PairingLink(central: PairingConfiguration(), peripheral: PairingConfiguration(identity: identity))
        link.run()
        #expect(link.centralOutcome?.peer.identity == identity)
    }
}

@Suite("SMP: options that would overstate security, and Passkey Entry's rounds")
struct OverstatedSecurityTests {
    @Test("a Numeric Comparison accepted unseen is not authenticated (the side that compared is)")
    func unseenComparison() throws {
        let config = PairingConfiguration(ioCapability: .displayYesNo, mitm: true)
        var link = PairingLink(central: config, peripheral: config)
        link.centralComparedByPerson = false
        link.run()
        let central = try #require(link.centralOutcome)
        #expect(central.method == .numericComparison && !central.isAuthenticated && !central.strength.authenticated)
        #expect(link.peripheralOutcome?.isAuthenticated == true)
    }

    @Test("a displayed passkey is new at each pairing")
    func passkeyPerPairing() {
        var link = PairingLink(central: PairingConfiguration(ioCapability: .displayOnly, mitm: true),
                               peripheral: PairingConfiguration(ioCapability: .keyboardOnly, mitm: true))
        link.run()
        link.run()
        link.run()
        #expect(link.shown.count == 3)
        #expect(Set(link.shown).count == 3, "\(link.shown)")
        #expect(link.centralOutcome != nil)
    }

    /// A responder that displays a passkey, paired by an honest scripted initiator through all
    /// 20 rounds: the victim, the initiator's key pair and the passkey.
    static func twentyRounds() throws -> (Victim, PairingKeyPair, UInt32) {
        var victim = Victim(.responder, PairingConfiguration(ioCapability: .displayOnly, mitm: true))
        let initiator = PairingKeyPair()
        victim.receive(.pairingRequest(parameters(.keyboardOnly)))
        victim.receive(.pairingPublicKey(initiator.publicKey))
        let responderKey = try #require(victim.publicKey)
        let passkey = try #require(victim.actions.lazy.compactMap { if case .displayPasskey(let p) = $0 { p } else { nil } }.first)
        for round in 0..<20 {
            let bit = 0x80 | UInt8((passkey >> UInt32(round)) & 1)
            let nonce = UInt128(round + 1)
            victim.receive(.pairingConfirm(SMPCrypto.confirmValue(u: initiator.publicKey.x, v: responderKey.x, x: nonce, z: bit)))
            victim.receive(.pairingRandom(nonce))
        }
        return (victim, initiator, passkey)
    }

    @Test("Passkey Entry: 20 rounds and no more; a 21st confirm fails the pairing")
    func twentyRoundsCap() throws {
        var (victim, _, _) = try Self.twentyRounds()
        #expect(victim.confirms.count == 20 && victim.randoms.count == 20 && victim.failure == nil)
        let answer = victim.receive(.pairingConfirm(1))
        #expect(answer == [.send(.pairingFailed(.unspecifiedReason)), .failed(.failed(.unspecifiedReason))])
        #expect(victim.confirms.count == 20)
    }

    @Test("Passkey Entry: a confirm repeated within a round fails the pairing")
    func repeatedConfirm() throws {
        var victim = Victim(.responder, PairingConfiguration(ioCapability: .displayOnly, mitm: true))
        victim.receive(.pairingRequest(parameters(.keyboardOnly)))
        victim.receive(.pairingPublicKey(PairingKeyPair().publicKey))
        victim.receive(.pairingConfirm(5))
        #expect(victim.confirms.count == 1)
        #expect(victim.receive(.pairingConfirm(5)) == [.send(.pairingFailed(.unspecifiedReason)), .failed(.failed(.unspecifiedReason))])
    }
}
