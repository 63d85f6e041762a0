import RawbleSMP
import RawbleTestSupport
import RawbleWire
import Testing

typealias Engine = SMPPairing<ContinuousClock.Instant>

/// Two engines on one link: every PDU one sends is encoded to bytes and handed to the other,
/// Start Encryption is carried out (the responder's LTK request answered by its engine, then
/// both told the link is encrypted), and the users answer as the test says.
struct PairingLink {
    var central: Engine
    var peripheral: Engine
    let now = ContinuousClock.now
    /// What each user typed when asked for a passkey (nil: the passkey the other side shows).
    var centralTypes: UInt32?
    var peripheralTypes: UInt32?
    /// How each user answers a numeric comparison.
    var centralAccepts = true
    var peripheralAccepts = true
    /// Whether the central's yes comes from a person who compared (else an option's, unseen).
    var centralComparedByPerson = true

    // What happened, for the test to check.
    var shown: [UInt32] = []
    var compared: [(central: Bool, value: UInt32)] = []
    var sent: [(fromCentral: Bool, pdu: SMPPDU)] = []
    var centralOutcome: PairingOutcome?
    var peripheralOutcome: PairingOutcome?
    var centralFailure: PairingFailure?
    var peripheralFailure: PairingFailure?
    var encryptedWith: UInt128?
    /// The responder's answer to the LTK request, when it had one.
    var responderKey: UInt128?
    var waitedForDisplay = 0

    static let centralAddress = DeviceAddress(BluetoothAddress(0xC0_00_00_00_00_01), type: .public)
    static let peripheralAddress = DeviceAddress(BluetoothAddress(0xD5_00_00_00_00_02), type: .random)

    /// `centralKey`, `peripheralKey`: the P-256 key pairs of LE Secure Connections (new ones when nil).
    init(central: PairingConfiguration, peripheral: PairingConfiguration, seed: UInt64 = 1,
         centralKey: PairingKeyPair? = nil, peripheralKey: PairingKeyPair? = nil) {
        let c = Self.centralAddress, p = Self.peripheralAddress
        self.central = Engine(role: .initiator, configuration: central, localAddress: c, peerAddress: p,
                              random: SplitMix64(state: seed), keyPair: centralKey)
        self.peripheral = Engine(role: .responder, configuration: peripheral, localAddress: p, peerAddress: c,
                                 random: SplitMix64(state: seed &+ 1000), keyPair: peripheralKey)
    }

    /// Starts the pairing and carries every action out until nothing is left to do.
    mutating func run() {
        var queue = central.start(now: now).map { (true, $0) }
        var steps = 0
        while !queue.isEmpty, steps < 500 {
            steps += 1
            let (fromCentral, action) = queue.removeFirst()
            queue += carryOut(action, fromCentral: fromCentral)
        }
    }

    /// Hands `bytes` to one side as if received, and carries out the answers.
    mutating func deliver(_ bytes: [UInt8], toCentral: Bool) -> [(Bool, PairingAction)] {
        let actions = toCentral ? central.receive(bytes[...], now: now) : peripheral.receive(bytes[...], now: now)
        return actions.map { (toCentral, $0) }
    }

    private mutating func carryOut(_ action: PairingAction, fromCentral: Bool) -> [(Bool, PairingAction)] {
        switch action {
        case .send(let pdu):
            sent.append((fromCentral, pdu))
            return deliver(pdu.encoded, toCentral: !fromCentral)
        case .displayPasskey(let passkey):
            shown.append(passkey)
            return []
        case .requestPasskey:
            // The user types the test's number, or what the other side shows: a user who waits
            // for it to appear (the prompt goes back in the queue, a few times at most; with
            // nothing shown, as when both sides type, both type 123456).
            if (fromCentral ? centralTypes : peripheralTypes) == nil, shown.isEmpty, waitedForDisplay < 10 {
                waitedForDisplay += 1
                return [(fromCentral, .requestPasskey)]
            }
            let typed = (fromCentral ? centralTypes : peripheralTypes) ?? shown.last ?? 123_456
            let answers = fromCentral ? central.enterPasskey(typed, now: now) : peripheral.enterPasskey(typed, now: now)
            return answers.map { (fromCentral, $0) }
        case .confirmNumericComparison(let value):
            compared.append((fromCentral, value))
            let answers = fromCentral ? central.confirmNumericComparison(centralAccepts, comparedByPerson: centralComparedByPerson, now: now)
                : peripheral.confirmNumericComparison(peripheralAccepts, now: now)
            return answers.map { (fromCentral, $0) }
        case .startEncryption(let key, let ediv, let rand):
            encryptedWith = key
            var refused: [(Bool, PairingAction)] = []
            switch peripheral.longTermKeyRequested(encryptedDiversifier: ediv, random: rand, now: now) {
            case .pairingKey(let key): responderKey = key
            case .refuse(let actions): refused = actions.map { (false, $0) }
            case .notPairing: break
            }
            let status: UInt8 = responderKey == key ? 0x00 : 0x06  // PIN or Key Missing
            let p = peripheral.encryptionChanged(status: status, now: now).map { (false, $0) }
            let c = central.encryptionChanged(status: status, now: now).map { (true, $0) }
            return refused + p + c
        case .completed(let outcome):
            if fromCentral { centralOutcome = outcome } else { peripheralOutcome = outcome }
            return []
        case .failed(let failure):
            if fromCentral { centralFailure = failure } else { peripheralFailure = failure }
            return []
        case .securityRequested, .ignored:
            return []
        }
    }
}

@Suite("SMP pairing: the method from both sides' IO capabilities (Core Vol 3 Part H Table 2.8)")
struct PairingMethodTests {
    static func parameters(_ io: SMPIOCapability, mitm: Bool = true) -> SMPPairingParameters {
        SMPPairingParameters(ioCapability: io, authenticationRequirements: mitm ? [.mitm, .bonding] : [.bonding],
                             initiatorKeyDistribution: [], responderKeyDistribution: [])
    }

    @Test func neitherAskingForMITMIsJustWorks() {
        let method = PairingMethod.select(initiator: Self.parameters(.keyboardDisplay, mitm: false),
                                          responder: Self.parameters(.keyboardDisplay, mitm: false),
                                          secureConnections: true, localIsInitiator: true)
        #expect(method == .justWorks)
    }

    @Test("the cells that differ between LE Secure Connections and legacy pairing, and who displays",
          arguments: [
            (SMPIOCapability.displayYesNo, SMPIOCapability.displayYesNo, true, PairingMethod.numericComparison, PairingMethod.numericComparison),
            (.displayYesNo, .displayYesNo, false, .justWorks, .justWorks),
            (.keyboardDisplay, .keyboardDisplay, true, .numericComparison, .numericComparison),
            (.keyboardDisplay, .keyboardDisplay, false, .passkeyEntry(localDisplays: true), .passkeyEntry(localDisplays: false)),
            (.keyboardDisplay, .displayYesNo, false, .passkeyEntry(localDisplays: false), .passkeyEntry(localDisplays: true)),
            (.displayOnly, .keyboardOnly, true, .passkeyEntry(localDisplays: true), .passkeyEntry(localDisplays: false)),
            (.keyboardOnly, .displayOnly, true, .passkeyEntry(localDisplays: false), .passkeyEntry(localDisplays: true)),
            (.keyboardOnly, .keyboardOnly, true, .passkeyEntry(localDisplays: false), .passkeyEntry(localDisplays: false)),
            (.noInputNoOutput, .keyboardDisplay, true, .justWorks, .justWorks),
            (.displayOnly, .displayYesNo, true, .justWorks, .justWorks),
          ])
    func table(initiator: SMPIOCapability, responder: SMPIOCapability, secureConnections: Bool,
               atInitiator: PairingMethod, atResponder: PairingMethod) {
        let request = Self.parameters(initiator), response = Self.parameters(responder)
        #expect(PairingMethod.select(initiator: request, responder: response, secureConnections: secureConnections,
                                     localIsInitiator: true) == atInitiator)
        #expect(PairingMethod.select(initiator: request, responder: response, secureConnections: secureConnections,
                                     localIsInitiator: false) == atResponder)
    }
}

@Suite("SMP pairing: two engines on one link, each method, both roles")
struct PairingEndToEndTests {
    static let identity = PairingIdentity(identityResolvingKey: 0x0102_0304_0506_0708_090A_0B0C_0D0E_0F10,
                                          address: DeviceAddress(BluetoothAddress(0xC0_11_22_33_44_55), type: .random))

    /// Both completed with the same key and method, each holding what the other distributed.
    static func expectAgreement(_ link: PairingLink, method central: PairingMethod, secureConnections: Bool,
                                sourceLocation: SourceLocation = #_sourceLocation) throws {
        let c = try #require(link.centralOutcome, "central: \(String(describing: link.centralFailure))", sourceLocation: sourceLocation)
        let p = try #require(link.peripheralOutcome, "peripheral: \(String(describing: link.peripheralFailure))", sourceLocation: sourceLocation)
        #expect(c.method == central, sourceLocation: sourceLocation)
        #expect(c.secureConnections == secureConnections && p.secureConnections == secureConnections, sourceLocation: sourceLocation)
        #expect(c.linkKey == p.linkKey && c.linkKey != 0, sourceLocation: sourceLocation)
        #expect(link.encryptedWith == c.linkKey && link.responderKey == c.linkKey, sourceLocation: sourceLocation)
        #expect(c.peer == p.local && p.peer == c.local, sourceLocation: sourceLocation)
        #expect(c.keySize == 16 && p.keySize == 16, sourceLocation: sourceLocation)
    }

    @Test func secureConnectionsJustWorksBondsWithIdentityAndSigningKeys() throws {
        var central = PairingConfiguration(identity: Self.identity, distributesSigningKey: true)
        central.ioCapability = .noInputNoOutput
        let peripheral = PairingConfiguration(identity: PairingIdentity(identityResolvingKey: 0xAA, address: DeviceAddress(BluetoothAddress(0xD5_00_00_00_00_02), type: .random)))
        var link = PairingLink(central: central, peripheral: peripheral)
        link.run()
        try Self.expectAgreement(link, method: .justWorks, secureConnections: true)
        let outcome = try #require(link.peripheralOutcome)
        #expect(outcome.bonded)
        #expect(outcome.peer.identity == Self.identity)
        #expect(outcome.peer.signatureKey != nil)
        #expect(outcome.peer.longTermKey == nil, "LE Secure Connections derives the LTK: none is sent")
        #expect(link.centralOutcome?.peer.identity?.identityResolvingKey == 0xAA)
        // The order of Part H: Pairing Request, Response, both public keys, the responder's
        // confirm, both nonces, both checks, then the responder's keys before the initiator's.
        #expect(link.sent.map { $0.pdu.code } == [
            .pairingRequest, .pairingResponse, .pairingPublicKey, .pairingPublicKey, .pairingConfirm, .pairingRandom,
            .pairingRandom, .pairingDHKeyCheck, .pairingDHKeyCheck, .identityInformation, .identityAddressInformation,
            .identityInformation, .identityAddressInformation, .signingInformation,
        ])
        #expect(link.sent.map(\.fromCentral) == [true, false, true, false, false, true, false, true, false, false, false, true, true, true])
    }

    @Test func secureConnectionsNumericComparisonShowsTheSameSixDigitsOnBothSides() throws {
        let config = PairingConfiguration(ioCapability: .displayYesNo, mitm: true)
        var link = PairingLink(central: config, peripheral: config)
        link.run()
        try Self.expectAgreement(link, method: .numericComparison, secureConnections: true)
        #expect(link.compared.count == 2)
        #expect(Set(link.compared.map(\.central)) == [true, false])
        #expect(link.compared.first?.value == link.compared.last?.value)
        #expect((link.compared.first?.value ?? 1_000_000) < 1_000_000)
        #expect(link.centralOutcome?.isAuthenticated == true)
    }

    @Test("a comparison refused on either side fails both: Numeric Comparison Failed", arguments: [true, false])
    func numericComparisonRefused(byCentral: Bool) throws {
        let config = PairingConfiguration(ioCapability: .displayYesNo, mitm: true)
        var link = PairingLink(central: config, peripheral: config)
        if byCentral { link.centralAccepts = false } else { link.peripheralAccepts = false }
        link.run()
        #expect(link.centralOutcome == nil && link.peripheralOutcome == nil)
        let local = byCentral ? link.centralFailure : link.peripheralFailure
        let remote = byCentral ? link.peripheralFailure : link.centralFailure
        #expect(local == .failed(.numericComparisonFailed))
        #expect(remote == .peerFailed(.numericComparisonFailed))
        #expect(link.encryptedWith == nil)
    }

    @Test("Passkey Entry, LE Secure Connections: 20 rounds, the passkey shown on one side and typed on the other",
          arguments: [(SMPIOCapability.displayOnly, SMPIOCapability.keyboardOnly), (.keyboardOnly, .displayOnly)])
    func secureConnectionsPasskey(centralIO: SMPIOCapability, peripheralIO: SMPIOCapability) throws {
        var link = PairingLink(central: PairingConfiguration(ioCapability: centralIO, mitm: true),
                               peripheral: PairingConfiguration(ioCapability: peripheralIO, mitm: true))
        link.run()
        try Self.expectAgreement(link, method: .passkeyEntry(localDisplays: centralIO == .displayOnly), secureConnections: true)
        #expect(link.shown.count == 1)
        #expect(link.sent.filter { $0.pdu.code == .pairingConfirm }.count == 40)
        #expect(link.sent.filter { $0.pdu.code == .pairingRandom }.count == 40)
    }

    @Test("a wrong passkey fails at the first round whose bit differs: Confirm Value Failed, no key", arguments: [true, false])
    func wrongPasskey(secureConnections: Bool) throws {
        var link = PairingLink(
            central: PairingConfiguration(ioCapability: .displayOnly, mitm: true, secureConnections: secureConnections),
            peripheral: PairingConfiguration(ioCapability: .keyboardOnly, mitm: true, secureConnections: secureConnections))
        link.peripheralTypes = 999_999  // whatever the central shows, not this (seeded: checked below)
        link.run()
        #expect(link.shown.count == 1 && link.shown.first != 999_999)
        #expect(link.centralOutcome == nil && link.peripheralOutcome == nil)
        let failures = [link.centralFailure, link.peripheralFailure]
        #expect(failures.contains(.failed(.confirmValueFailed)) && failures.contains(.peerFailed(.confirmValueFailed)), "\(failures)")
        #expect(link.encryptedWith == nil)
    }

    @Test func legacyJustWorksDistributesTheLTKWithEDIVAndRand() throws {
        let config = PairingConfiguration(secureConnections: false)  // legacy only: legacy allowed
        var link = PairingLink(central: config, peripheral: config)
        link.run()
        try Self.expectAgreement(link, method: .justWorks, secureConnections: false)
        let central = try #require(link.centralOutcome)
        let key = try #require(central.reconnectionKey(asCentral: true))
        #expect(key.longTermKey == link.peripheralOutcome?.local.longTermKey)
        #expect(key.encryptedDiversifier == link.peripheralOutcome?.local.encryptedDiversifier)
        #expect(link.peripheralOutcome?.reconnectionKey(asCentral: false)?.longTermKey == key.longTermKey)
        #expect(key.longTermKey != central.linkKey, "the STK encrypts this connection only")
    }

    @Test func legacyPasskeyEntry() throws {
        var link = PairingLink(central: PairingConfiguration(ioCapability: .keyboardOnly, mitm: true, secureConnections: false),
                               peripheral: PairingConfiguration(ioCapability: .displayOnly, mitm: true, secureConnections: false))
        link.run()
        try Self.expectAgreement(link, method: .passkeyEntry(localDisplays: false), secureConnections: false)
        #expect(link.peripheralOutcome?.isAuthenticated == true)
    }

    @Test("one side without LE Secure Connections: legacy pairing where the other allows it; refused by default (Authentication Requirements)")
    func secureConnectionsOnly() throws {
        var link = PairingLink(central: PairingConfiguration(secureConnections: false),
                               peripheral: PairingConfiguration(allowsLegacyPairing: true))
        link.run()
        try Self.expectAgreement(link, method: .justWorks, secureConnections: false)

        var strict = PairingLink(central: PairingConfiguration(secureConnections: false), peripheral: PairingConfiguration())
        strict.run()
        #expect(strict.peripheralFailure == .legacyPairingRefused)
        #expect(strict.centralFailure == .peerFailed(.authenticationRequirements))
        #expect(strict.sent.map(\.pdu.code) == [.pairingRequest, .pairingFailed], "refused before any Pairing Response")
    }

    @Test("a key size below the minimum either side accepts: Encryption Key Size")
    func keySize() {
        var link = PairingLink(central: PairingConfiguration(maximumKeySize: 7, minimumKeySize: 7), peripheral: PairingConfiguration(minimumKeySize: 16))
        link.run()
        #expect(link.peripheralFailure == .failed(.encryptionKeySize))
        #expect(link.centralFailure == .peerFailed(.encryptionKeySize))

        var shorter = PairingLink(central: PairingConfiguration(maximumKeySize: 10, minimumKeySize: 10),
                                  peripheral: PairingConfiguration(minimumKeySize: 7))
        shorter.run()
        let outcome = shorter.centralOutcome
        #expect(outcome?.keySize == 10)
        #expect((outcome?.linkKey ?? 0) >> 80 == 0, "the key keeps its 10 least significant octets")
        #expect(outcome?.linkKey == shorter.peripheralOutcome?.linkKey)
    }

    @Test func withoutBondingNoKeysAreDistributed() throws {
        let config = PairingConfiguration(bonding: false, identity: Self.identity)
        var link = PairingLink(central: config, peripheral: config)
        link.run()
        let outcome = try #require(link.centralOutcome)
        #expect(!outcome.bonded)
        #expect(outcome.peer == DistributedKeys() && outcome.local == DistributedKeys())
        #expect(!link.sent.contains { $0.pdu.code == .identityInformation })
    }
}

@Suite("SMP pairing: bad input from the peer, the user and the clock")
struct PairingBadInputTests {
    static let central = DeviceAddress(BluetoothAddress(0xC0_00_00_00_00_01), type: .public)
    static let peripheral = DeviceAddress(BluetoothAddress(0xD5_00_00_00_00_02), type: .random)

    static func responder() -> Engine {
        Engine(role: .responder, configuration: PairingConfiguration(), localAddress: peripheral, peerAddress: central,
               random: SplitMix64(state: 7))
    }

    static func initiator(_ configuration: PairingConfiguration = PairingConfiguration()) -> Engine {
        Engine(role: .initiator, configuration: configuration, localAddress: central, peerAddress: peripheral,
               random: SplitMix64(state: 8))
    }

    static let request = SMPPDU.pairingRequest(SMPPairingParameters(
        ioCapability: .noInputNoOutput, authenticationRequirements: [.bonding, .secureConnections],
        initiatorKeyDistribution: [.encryptionKey], responderKeyDistribution: [.encryptionKey, .identityKey]))

    @Test("public keys that are not on P-256 fail the pairing: DHKey Check Failed (CVE-2018-5383)")
    func invalidCurvePoints() throws {
        let valid = PairingKeyPair().publicKey
        var offByOne = valid
        offByOne.y.low ^= 1
        let points = [offByOne, PairingPublicKey(x: P256Coordinate(high: 0, low: 0), y: P256Coordinate(high: 0, low: 0)),
                      PairingPublicKey(x: valid.y, y: valid.x)]
        for point in points {
            var engine = Self.responder()
            let now = ContinuousClock.now
            _ = engine.receive(Self.request.encoded[...], now: now)
            let actions = engine.receive(SMPPDU.pairingPublicKey(point).encoded[...], now: now)
            #expect(actions == [.send(.pairingFailed(.dhKeyCheckFailed)), .failed(.failed(.dhKeyCheckFailed))], "\(point.x)")
            #expect(!engine.isPairing)
        }
    }

    @Test("a PDU out of order fails with Unspecified Reason; one that does not decode, Invalid Parameters or Command Not Supported")
    func outOfOrderAndMalformed() {
        let now = ContinuousClock.now
        var engine = Self.responder()
        _ = engine.receive(Self.request.encoded[...], now: now)
        #expect(engine.receive(SMPPDU.pairingDHKeyCheck(1).encoded[...], now: now)
            == [.send(.pairingFailed(.unspecifiedReason)), .failed(.failed(.unspecifiedReason))])

        var truncated = Self.responder()
        _ = truncated.receive(Self.request.encoded[...], now: now)
        #expect(truncated.receive([0x0C, 0x01, 0x02][...], now: now)
            == [.send(.pairingFailed(.invalidParameters)), .failed(.failed(.invalidParameters))])

        var unknown = Self.responder()
        _ = unknown.receive(Self.request.encoded[...], now: now)
        #expect(unknown.receive([0x3F, 0x00][...], now: now)
            == [.send(.pairingFailed(.commandNotSupported)), .failed(.failed(.commandNotSupported))])

        // Outside a pairing, garbage gets no answer; a malformed Pairing Request its refusal.
        var idle = Self.responder()
        #expect(idle.receive([0x3F][...], now: now).allSatisfy { if case .ignored = $0 { true } else { false } })
        #expect(idle.receive([0x01, 0x09, 0, 0, 16, 0, 0][...], now: now).first == .send(.pairingFailed(.invalidParameters)))
    }

    @Test("the peer's Pairing Failed ends the pairing with its reason")
    func peerAborts() {
        let now = ContinuousClock.now
        var engine = Self.initiator()
        _ = engine.start(now: now)
        #expect(engine.receive(SMPPDU.pairingFailed(.pairingNotSupported).encoded[...], now: now)
            == [.failed(.peerFailed(.pairingNotSupported))])
        #expect(!engine.isPairing)
    }

    @Test("30 s without an SMP command: the pairing fails, and the connection takes no more SMP (Part H 3.4)")
    func timeout() {
        let now = ContinuousClock.now
        var engine = Self.initiator()
        _ = engine.start(now: now)
        #expect(engine.deadline == now + .seconds(30))
        #expect(engine.expire(now: now + .seconds(29)).isEmpty)
        #expect(engine.expire(now: now + .seconds(30)) == [.failed(.timedOut)])
        #expect(engine.deadline == nil)
        let late = engine.receive(SMPPDU.pairingFailed(.unspecifiedReason).encoded[...], now: now + .seconds(31))
        #expect(late.count == 1 && { if case .ignored = late[0] { true } else { false } }())
        #expect(engine.start(now: now + .seconds(32)) == [.failed(.timedOut)])
    }

    @Test("a flood of Security Requests is reported once until the host pairs")
    func securityRequestFlood() {
        let now = ContinuousClock.now
        var engine = Self.initiator()
        var reported = 0
        for _ in 0..<1_000 {
            for action in engine.receive(SMPPDU.securityRequest([.bonding]).encoded[...], now: now) {
                if case .securityRequested = action { reported += 1 }
            }
        }
        #expect(reported == 1)
        _ = engine.start(now: now)
        _ = engine.cancel(now: now)
        let again = engine.receive(SMPPDU.securityRequest([.bonding]).encoded[...], now: now)
        #expect(again == [.securityRequested([.bonding])])
    }

    @Test("a typed passkey above 999 999 fails the pairing: Passkey Entry Failed")
    func passkeyOutOfRange() {
        var link = PairingLink(central: PairingConfiguration(ioCapability: .keyboardOnly, mitm: true),
                               peripheral: PairingConfiguration(ioCapability: .displayOnly, mitm: true))
        link.centralTypes = 1_000_000
        link.run()
        #expect(link.centralFailure == .failed(.passkeyEntryFailed))
        #expect(link.peripheralFailure == .peerFailed(.passkeyEntryFailed))
    }

    @Test("a responder that distributes keys nobody asked for: the initiator refuses the response (Invalid Parameters)")
    func responseWiderThanRequest() {
        let now = ContinuousClock.now
        var engine = Self.initiator(PairingConfiguration(bonding: true))
        _ = engine.start(now: now)
        let wide = SMPPDU.pairingResponse(SMPPairingParameters(
            ioCapability: .noInputNoOutput, authenticationRequirements: [.bonding, .secureConnections],
            initiatorKeyDistribution: [.encryptionKey], responderKeyDistribution: [.encryptionKey, .linkKey]))
        #expect(engine.receive(wide.encoded[...], now: now)
            == [.send(.pairingFailed(.invalidParameters)), .failed(.failed(.invalidParameters))])
    }
}

@Suite("SMP pairing: random PDUs in any order never trap, hang or grow")
struct PairingRandomInputTests {
    /// A PDU of a random kind with random fields, or random bytes, or a truncated PDU.
    static func randomPayload(_ generator: inout SplitMix64) -> [UInt8] {
        let value = UInt128(generator.next()) << 64 | UInt128(generator.next())
        let pdus: [SMPPDU] = [
            PairingBadInputTests.request,
            .pairingResponse(SMPPairingParameters(ioCapability: SMPIOCapability(UInt8(generator.next() % 5)),
                                                  authenticationRequirements: SMPAuthenticationRequirements(rawValue: UInt8(truncatingIfNeeded: generator.next())),
                                                  maximumEncryptionKeySize: UInt8(7 + generator.next() % 10),
                                                  initiatorKeyDistribution: SMPKeyDistribution(rawValue: UInt8(generator.next() % 16)),
                                                  responderKeyDistribution: SMPKeyDistribution(rawValue: UInt8(generator.next() % 16)))),
            .pairingConfirm(value), .pairingRandom(value), .pairingDHKeyCheck(value),
            .pairingFailed(SMPPairingFailureReason(UInt8(generator.next() % 16))),
            .pairingPublicKey(PairingPublicKey(x: P256Coordinate(high: value, low: ~value), y: P256Coordinate(high: ~value, low: value))),
            .encryptionInformation(longTermKey: value), .centralIdentification(encryptedDiversifier: 1, random: 2),
            .identityInformation(identityResolvingKey: value), .signingInformation(signatureKey: value),
            .securityRequest([.bonding]), .keypressNotification(.passkeyDigitEntered),
        ]
        var bytes = pdus[Int(generator.next() % UInt64(pdus.count))].encoded
        switch generator.next() % 6 {
        case 0: bytes = Array(bytes.prefix(Int(generator.next() % UInt64(bytes.count))))  // truncated
        case 1: bytes = (0..<Int(generator.next() % 70)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        default: break
        }
        return bytes
    }

    /// One key pair for every random run: generating a P-256 key pair per run (BoringSSL is
    /// built without optimisation in debug builds) held a test thread for over a minute and
    /// starved the rest of the suite. What the runs test is the engine's state machine.
    static let sharedKeyPair = PairingKeyPair()

    @Test("2,000 runs of up to 40 random PDUs, user answers and encryption reports, in both roles")
    func randomSequences() {
        let base = ContinuousClock.now
        for seed in UInt64(1)...2_000 {
            var generator = SplitMix64(state: seed)
            let role: Engine.Role = seed % 2 == 0 ? .initiator : .responder
            var engine = Engine(role: role, configuration: PairingConfiguration(ioCapability: SMPIOCapability(UInt8(seed % 5)), mitm: seed % 3 == 0),
                                localAddress: PairingBadInputTests.central, peerAddress: PairingBadInputTests.peripheral,
                                random: SplitMix64(state: seed &* 31), keyPair: Self.sharedKeyPair)
            var now = base
            if role == .initiator { _ = engine.start(now: now) }
            for _ in 0..<Int(generator.next() % 40) {
                now = now + .milliseconds(Int(generator.next() % 2_000))
                let actions: [PairingAction]
                switch generator.next() % 10 {
                case 0: actions = engine.enterPasskey(UInt32(truncatingIfNeeded: generator.next()) % 1_200_000, now: now)
                case 1: actions = engine.confirmNumericComparison(generator.next() % 2 == 0, now: now)
                case 2: actions = engine.encryptionChanged(status: UInt8(generator.next() % 2), now: now)
                case 3: actions = engine.expire(now: now)
                default: actions = engine.receive(Self.randomPayload(&generator)[...], now: now)
                }
                #expect(actions.count <= 8, "seed \(seed): \(actions)")
                if actions.contains(where: { if case .failed = $0 { true } else { false } }) {
                    #expect(!engine.isPairing, "seed \(seed): still pairing after a failure")
                    #expect(engine.deadline == nil, "seed \(seed)")
                }
                if engine.isPairing { #expect(engine.deadline != nil, "seed \(seed): pairing without a timer") }
            }
        }
    }
}
