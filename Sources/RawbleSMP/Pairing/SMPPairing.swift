import RawbleWire

/// One connection's pairing, sans I/O, in either role (Core Vol 3 Part H 2.3): LE Secure
/// Connections (P-256, f4, f5, f6, g2) and LE legacy pairing (c1, s1), by Just Works, Passkey
/// Entry or Numeric Comparison, then the key distribution.
///
/// The host feeds it what arrives on the Security Manager channel (``receive(_:now:)``), what
/// the user answers (``enterPasskey(_:now:)``, ``confirmNumericComparison(_:comparedByPerson:now:)``), what the
/// controller reports about encryption (``encryptionChanged(status:now:)``; a peripheral asks
/// ``longTermKeyRequested(encryptedDiversifier:random:now:)`` on an LTK request), and the time
/// (``expire(now:)`` at ``deadline``); each returns the ``PairingAction``s to carry out, in order.
/// It reads no clock and opens no socket; random numbers come from the generator it is given,
/// and the P-256 key pair from swift-crypto.
///
/// The central is the initiator (``start(now:)`` sends the Pairing Request); the peripheral
/// the responder (a Pairing Request starts it; ``requestSecurity(now:)`` asks the central to).
///
/// Bad input is a failed pairing, never a trap: a PDU that does not decode is answered with
/// Pairing Failed (Command Not Supported for an unknown code, Invalid Parameters otherwise, a
/// maximum key size outside 7–16 among them: SweynTooth's CVE-2019-19196); a PDU the current
/// step does not expect with Unspecified Reason; a confirm value, DHKey check or public key
/// that does not hold with Confirm Value Failed, DHKey Check Failed (a public key off the curve
/// too, CVE-2018-5383). After a failure the engine takes a new Pairing Request (responder) or
/// ``start(now:)`` (initiator); after the 30 s timeout nothing more on this connection, as
/// Part H 3.4 requires.
///
/// The published attacks on a host's Security Manager fail, in both roles:
/// - a peer public key with our own X coordinate (ours reflected, with Y or with p − Y:
///   CVE-2020-26558, Passkey Entry impersonation) fails with DHKey Check Failed (0x0B) as soon
///   as it arrives, before any confirm value or nonce is sent. Zephyr and the Linux kernel
///   answer Unspecified Reason (0x08) there; this engine answers as for a point off the curve,
///   its sibling check on the same key, so the host reports both as the keys that did not
///   agree (an attacker's public key) rather than as an unexplained failure;
/// - LE legacy pairing: a peer confirm value or nonce equal to our own (reflected) fails with
///   Confirm Value Failed (0x04), before our nonce is revealed;
/// - a negotiated key size below ``PairingConfiguration/minimumKeySize`` (16 by default)
///   fails with Encryption Key Size (0x06), and a peer offering only LE legacy pairing, unless
///   ``PairingConfiguration/allowsLegacyPairing``, with Authentication Requirements (0x03);
/// - a pairing weaker than the bond kept with the peer (``bondToKeep``) fails with
///   Authentication Requirements before any key is made;
/// - an LTK request or an Encryption Change out of order during a pairing (SweynTooth's zero
///   LTK, CVE-2019-19194, and its DHKey-check skip) fails the pairing: no key is given or used
///   before the confirm values and the DHKey checks held;
/// - a distributed identity address that is neither public nor static random fails the
///   pairing (Invalid Parameters): no bond.
public struct SMPPairing<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// Which side of the pairing this is.
    public enum Role: Hashable, Sendable {
        /// The central: sends the Pairing Request.
        case initiator
        /// The peripheral: answers it.
        case responder
    }

    /// How long the pairing may wait for the next SMP command (Part H 3.4).
    public static var timeout: Duration { .seconds(30) }

    public let role: Role
    /// What this side offers; a change takes effect at the next pairing (e.g. MITM protection
    /// required because a read needs an authenticated link).
    public var configuration: PairingConfiguration
    /// This side's and the peer's address as the link uses them (f5, f6 and c1 take them).
    public let localAddress: DeviceAddress
    public let peerAddress: DeviceAddress

    /// When ``expire(now:)`` must be called: 30 s after the last SMP command queued, while a
    /// pairing runs; `nil` otherwise.
    public private(set) var deadline: Instant?

    /// The strength of the bond kept with this peer, which a pairing must not lower: a pairing
    /// whose keys would be weaker (``KeyStrength/isWeaker(than:)``) fails with Authentication
    /// Requirements as soon as its method and key size are known, before any key is made.
    /// `nil`: no bond. The host sets it before a pairing starts.
    public var bondToKeep: KeyStrength?

    private var random: any RandomNumberGenerator & Sendable
    private var suppliedKeyPair: PairingKeyPair?
    private var step: Step = .idle
    private var pairing: Pairing?
    /// After the timeout, Part H 3.4: no further SMP on this connection.
    private var timedOut = false
    /// A Security Request was reported and the host has not started a pairing since.
    private var securityRequestReported = false

    /// What the engine waits for.
    private enum Step: Hashable, Sendable {
        case idle
        case awaitingPairingResponse
        case awaitingPublicKey
        case awaitingConfirm
        case awaitingRandom
        case awaitingDHKeyCheck
        case awaitingEncryption
        case distributingKeys
        case completed
        case failed
    }

    /// The state of the pairing in progress.
    private struct Pairing: Sendable {
        var request: SMPPairingParameters
        var response: SMPPairingParameters
        var secureConnections: Bool
        var method: PairingMethod
        var keySize: UInt8
        var bonded: Bool
        /// The keys each side distributes (the request's fields as the response narrowed them).
        var initiatorKeys: SMPKeyDistribution
        var responderKeys: SMPKeyDistribution
        // LE Secure Connections
        var keyPair: PairingKeyPair?
        var peerPublicKey: PairingPublicKey?
        var dhKey: P256Coordinate?
        var macKey: UInt128 = 0
        var longTermKey: UInt128 = 0
        /// The peer's DHKey check, kept while this side's user has not confirmed (responder).
        var pendingPeerCheck: UInt128?
        /// Numeric Comparison: the six digits were shown, and the user's answer (nil: not yet).
        var comparisonAsked = false
        var userConfirmed: Bool?
        /// The comparison was accepted without a person comparing: the key is not authenticated.
        var comparisonUnseen = false
        /// LE Secure Connections, initiator: its DHKey check went out.
        var localCheckSent = false
        // The passkey (nil until shown or typed), and the round of the 20 (Passkey Entry).
        var passkey: UInt32?
        var passkeyRound = 0
        // The nonces and confirm values of the current round.
        var localNonce: UInt128 = 0
        var peerNonce: UInt128 = 0
        var peerConfirm: UInt128?
        var localConfirmSent = false
        /// Legacy pairing: the confirm value this side sent (a peer sending it back reflects it).
        var localConfirm: UInt128?
        // Legacy pairing: the STK once computed.
        var shortTermKey: UInt128 = 0
        // Key distribution
        var localKeys = DistributedKeys()
        var peerKeys = DistributedKeys()
        var expectedFromPeer: [SMPCode] = []
        var sentLocalKeys = false

        /// How strong the keys will be, as far as known (an accepted comparison may still be unseen).
        var strength: KeyStrength {
            KeyStrength(authenticated: method.isAuthenticated && !comparisonUnseen, secureConnections: secureConnections, keySize: keySize)
        }
    }

    /// An engine for one connection. `random`: where nonces, passkeys and distributed keys come
    /// from (the system's secure generator unless a test gives its own); `keyPair`: the P-256
    /// key pair for LE Secure Connections (a new one per pairing when `nil`).
    public init(role: Role, configuration: PairingConfiguration, localAddress: DeviceAddress, peerAddress: DeviceAddress,
                random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(), keyPair: PairingKeyPair? = nil) {
        self.role = role
        self.configuration = configuration
        self.localAddress = localAddress
        self.peerAddress = peerAddress
        self.random = random
        self.suppliedKeyPair = keyPair
    }

    /// Whether the pairing timed out (Part H 3.4): the connection takes no more SMP, and a new
    /// pairing needs a new link.
    public var hasTimedOut: Bool { timedOut }

    /// Whether a pairing is under way (from the Pairing Request to its end).
    public var isPairing: Bool {
        switch step {
        case .idle, .completed, .failed: false
        default: true
        }
    }

    // MARK: Starting

    /// Initiator: starts a pairing by sending the Pairing Request. Ignored while one runs.
    public mutating func start(now: Instant) -> [PairingAction] {
        guard role == .initiator else { return [.ignored("only the initiator sends a Pairing Request")] }
        guard !timedOut else { return [.failed(.timedOut)] }
        guard !isPairing else { return [.ignored("a pairing is already under way")] }
        let request = SMPPairingParameters(
            ioCapability: configuration.ioCapability, oobDataFlag: 0,
            authenticationRequirements: configuration.authenticationRequirements,
            maximumEncryptionKeySize: configuration.maximumKeySize,
            initiatorKeyDistribution: configuration.offeredKeys, responderKeyDistribution: configuration.acceptedKeys)
        pairing = Pairing(request: request, response: request, secureConnections: false, method: .justWorks, keySize: 0,
                          bonded: false, initiatorKeys: [], responderKeys: [])
        securityRequestReported = false
        step = .awaitingPairingResponse
        return [send(.pairingRequest(request), now: now)]
    }

    /// Responder: asks the central to pair or encrypt (Security Request). Ignored while pairing.
    public mutating func requestSecurity(now: Instant) -> [PairingAction] {
        guard role == .responder else { return [.ignored("only the responder sends a Security Request")] }
        guard !timedOut, !isPairing else { return [.ignored("a pairing is already under way")] }
        return [.send(.securityRequest(configuration.authenticationRequirements))]
    }

    // MARK: Receiving

    /// Takes the payload of one frame received on CID 0x0006.
    public mutating func receive(_ payload: ArraySlice<UInt8>, now: Instant) -> [PairingAction] {
        guard !timedOut else { return [.ignored("SMP after the pairing timed out: ignored until the link is new (Part H 3.4)")] }
        let pdu: SMPPDU
        do {
            pdu = try SMPPDU.decode(payload)
        } catch {
            // An unknown code is Command Not Supported; a known one that does not decode,
            // Invalid Parameters (Part H 3.5.5).
            let unknown = payload.first.map { $0 == 0 || $0 > SMPCode.keypressNotification.rawValue } ?? false
            let reason: SMPPairingFailureReason = unknown ? .commandNotSupported : .invalidParameters
            if isPairing { return fail(reason, now: now) }
            // Outside a pairing only a malformed Pairing Request gets an answer (the responder's
            // refusal); anything else is dropped, so garbage never makes this side talk.
            if role == .responder, payload.first == SMPCode.pairingRequest.rawValue {
                return [.send(.pairingFailed(reason)), .ignored("malformed Pairing Request: \(error)")]
            }
            return [.ignored("malformed SMP PDU: \(error)")]
        }
        if case .pairingFailed(let reason) = pdu {
            guard isPairing else { return [.ignored("Pairing Failed (\(reason)) outside a pairing")] }
            end(.failed)
            return [.failed(.peerFailed(reason))]
        }
        if case .keypressNotification = pdu {
            return [.ignored("Keypress Notification: progress of the peer's passkey entry")]
        }
        switch (role, step, pdu) {
        case (.responder, .idle, .pairingRequest(let request)), (.responder, .completed, .pairingRequest(let request)),
             (.responder, .failed, .pairingRequest(let request)):
            return answer(request, now: now)
        case (.initiator, .idle, .securityRequest(let requirements)), (.initiator, .completed, .securityRequest(let requirements)),
             (.initiator, .failed, .securityRequest(let requirements)):
            // One report until the host starts a pairing: a flood of Security Requests from a
            // hostile peer asks the host once.
            guard !securityRequestReported else { return [.ignored("another Security Request before the host acted")] }
            securityRequestReported = true
            return [.securityRequested(requirements)]
        case (.initiator, _, .securityRequest):
            return [.ignored("Security Request during a pairing")]
        case (.initiator, .awaitingPairingResponse, .pairingResponse(let response)):
            return accept(response, now: now)
        case (_, .awaitingPublicKey, .pairingPublicKey(let key)):
            return receivePublicKey(key, now: now)
        case (_, .awaitingConfirm, .pairingConfirm(let value)):
            return receiveConfirm(value, now: now)
        case (_, .awaitingRandom, .pairingRandom(let value)):
            return receiveRandom(value, now: now)
        case (_, .awaitingDHKeyCheck, .pairingDHKeyCheck(let value)):
            return receiveDHKeyCheck(value, now: now)
        case (_, .distributingKeys, _) where isKeyDistribution(pdu):
            return receiveKey(pdu, now: now)
        case (_, .idle, _), (_, .completed, _), (_, .failed, _):
            return [.ignored("\(pdu.code) outside a pairing")]
        default:
            return fail(.unspecifiedReason, now: now)
        }
    }

    // MARK: The user

    /// The passkey the user typed (0–999 999), after ``PairingAction/requestPasskey``. A number
    /// above 999 999 fails the pairing (Passkey Entry Failed), as does ``cancel(now:)``.
    public mutating func enterPasskey(_ passkey: UInt32, now: Instant) -> [PairingAction] {
        guard isPairing, var current = pairing, case .passkeyEntry(false) = current.method, current.passkey == nil else {
            return [.ignored("no passkey was asked for")]
        }
        guard passkey <= 999_999 else { return fail(.passkeyEntryFailed, now: now) }
        current.passkey = passkey
        pairing = current
        return passkeyKnown(now: now)
    }

    /// The user's answer to ``PairingAction/confirmNumericComparison(_:)``: `false` fails the
    /// pairing (Numeric Comparison Failed). `comparedByPerson`: `false` when nobody compared the
    /// digits (an option that always answers yes): the pairing goes on, its key unauthenticated,
    /// as Just Works would make it; and where that is weaker than ``bondToKeep`` it fails.
    public mutating func confirmNumericComparison(_ accepted: Bool, comparedByPerson: Bool = true, now: Instant) -> [PairingAction] {
        guard isPairing, var current = pairing, current.comparisonAsked, current.userConfirmed == nil else {
            return [.ignored("no comparison was asked for")]
        }
        guard accepted else { return fail(.numericComparisonFailed, now: now) }
        current.userConfirmed = true
        current.comparisonUnseen = !comparedByPerson
        if let bond = bondToKeep, current.strength.isWeaker(than: bond) {
            return refuse(.weakerThanBond(bond: bond, offered: current.strength), now: now)
        }
        pairing = current
        switch role {
        case .initiator:
            return sendDHKeyCheck(now: now)
        case .responder:
            guard let check = current.pendingPeerCheck else { return [] }
            return verifyAndAnswerDHKeyCheck(check, now: now)
        }
    }

    /// Stops the pairing in progress (the user cancelled): Pairing Failed, Passkey Entry Failed
    /// while a passkey was awaited, Unspecified Reason otherwise.
    public mutating func cancel(now: Instant) -> [PairingAction] {
        guard isPairing else { return [.ignored("no pairing to cancel")] }
        if case .passkeyEntry = pairing?.method, pairing?.passkey == nil { return fail(.passkeyEntryFailed, now: now) }
        return fail(.unspecifiedReason, now: now)
    }

    // MARK: The controller and the clock

    /// The controller's Encryption Change (or Encryption Key Refresh Complete) for this
    /// connection: status 0 with encryption on moves on to the key distribution. One before
    /// the pairing asked for encryption (SweynTooth's DHKey-check skip: the link encrypted with
    /// a key the pairing never vouched for) fails it with Unspecified Reason.
    public mutating func encryptionChanged(status: UInt8, now: Instant) -> [PairingAction] {
        guard isPairing else { return [.ignored("an encryption change outside a pairing")] }
        guard step == .awaitingEncryption, var current = pairing else {
            return fail(.unspecifiedReason, now: now) + [.ignored("an encryption change before the pairing asked for one")]
        }
        guard status == 0 else {
            end(.failed)
            return [.failed(.encryptionFailed(status: status))]
        }
        step = .distributingKeys
        let peerKeys = role == .initiator ? current.responderKeys : current.initiatorKeys
        current.expectedFromPeer = Self.expectedPDUs(for: peerKeys, secureConnections: current.secureConnections)
        pairing = current
        // The responder distributes first, then the initiator (Part H 3.6.1).
        if role == .responder { return sendLocalKeys(now: now) + finishIfDone() }
        return finishIfDone(now: now)
    }

    /// How to answer the controller's LE Long Term Key Request (peripheral).
    public enum LongTermKeyAnswer: Hashable, Sendable {
        /// Reply with this key: the pairing's STK or LE Secure Connections' LTK, once its
        /// checks held.
        case pairingKey(UInt128)
        /// Reply negatively: the request came during a pairing that has no key to give yet (or
        /// named another key), and the pairing failed; carry out the actions.
        case refuse([PairingAction])
        /// No pairing is under way: the bond's key or a negative reply is the host's to give.
        case notPairing
    }

    /// Peripheral: the answer to the controller's LE Long Term Key Request during a pairing.
    /// Only once the pairing asked for encryption (the confirm values and, in LE Secure
    /// Connections, the DHKey check held), with EDIV and Rand 0, is its key given; any other
    /// request while pairing (SweynTooth's zero LTK, CVE-2019-19194: encryption started before
    /// a key exists) fails the pairing and gets a negative reply, never a zero key nor a bond's.
    public mutating func longTermKeyRequested(encryptedDiversifier: UInt16, random: UInt64, now: Instant) -> LongTermKeyAnswer {
        guard isPairing else { return .notPairing }
        guard role == .responder, step == .awaitingEncryption, let current = pairing,
              encryptedDiversifier == 0, random == 0 else {
            return .refuse(fail(.unspecifiedReason, now: now))
        }
        let key = current.secureConnections ? current.longTermKey : current.shortTermKey
        guard key != 0 else { return .refuse(fail(.unspecifiedReason, now: now)) }
        return .pairingKey(key)
    }

    /// The clock: at or after ``deadline`` the pairing fails (Part H 3.4) and the connection
    /// takes no more SMP.
    public mutating func expire(now: Instant) -> [PairingAction] {
        guard let deadline, deadline <= now, isPairing else { return [] }
        end(.failed)
        timedOut = true
        return [.failed(.timedOut)]
    }

    // MARK: Phase 1: the feature exchange

    /// Responder: a Pairing Request.
    private mutating func answer(_ request: SMPPairingParameters, now: Instant) -> [PairingAction] {
        let secureConnections = request.authenticationRequirements.contains(.secureConnections)
            && configuration.authenticationRequirements.contains(.secureConnections)
        let bonded = request.authenticationRequirements.contains(.bonding) && configuration.bonding
        let response = SMPPairingParameters(
            ioCapability: configuration.ioCapability, oobDataFlag: 0,
            authenticationRequirements: configuration.authenticationRequirements,
            maximumEncryptionKeySize: configuration.maximumKeySize,
            initiatorKeyDistribution: bonded ? request.initiatorKeyDistribution.intersection(configuration.acceptedKeys) : [],
            responderKeyDistribution: bonded ? request.responderKeyDistribution.intersection(configuration.offeredKeys) : [])
        pairing = Pairing(request: request, response: response, secureConnections: secureConnections, method: .justWorks,
                          keySize: 0, bonded: bonded, initiatorKeys: response.initiatorKeyDistribution,
                          responderKeys: response.responderKeyDistribution)
        step = .awaitingPublicKey  // a pairing is under way: a refusal below is a failed one
        if let refusal = settle(request: request, response: response, secureConnections: secureConnections) {
            return refuse(refusal, now: now)
        }
        var actions = [send(.pairingResponse(response), now: now)]
        if secureConnections {
            step = .awaitingPublicKey
        } else {
            step = .awaitingConfirm
            actions += preparePasskey()
        }
        return actions
    }

    /// Initiator: the Pairing Response.
    private mutating func accept(_ response: SMPPairingParameters, now: Instant) -> [PairingAction] {
        guard var current = pairing else { return fail(.unspecifiedReason, now: now) }
        let request = current.request
        // The responder may only narrow what was asked (Part H 3.5.2).
        guard response.initiatorKeyDistribution.isSubset(of: request.initiatorKeyDistribution),
              response.responderKeyDistribution.isSubset(of: request.responderKeyDistribution) else {
            return fail(.invalidParameters, now: now)
        }
        current.response = response
        current.secureConnections = request.authenticationRequirements.contains(.secureConnections)
            && response.authenticationRequirements.contains(.secureConnections)
        current.bonded = request.authenticationRequirements.contains(.bonding)
            && response.authenticationRequirements.contains(.bonding)
        current.initiatorKeys = current.bonded ? response.initiatorKeyDistribution : []
        current.responderKeys = current.bonded ? response.responderKeyDistribution : []
        pairing = current
        if let refusal = settle(request: request, response: response, secureConnections: current.secureConnections) {
            return refuse(refusal, now: now)
        }
        guard let settled = pairing else { return fail(.unspecifiedReason, now: now) }
        if settled.secureConnections {
            step = .awaitingPublicKey
            return [send(.pairingPublicKey(ensureKeyPair().publicKey), now: now)]
        }
        step = .awaitingConfirm
        let prompt = preparePasskey()
        // Legacy pairing: the initiator's confirm goes first, once the TK is known.
        guard settled.method == .justWorks || pairing?.passkey != nil else { return prompt }
        return prompt + sendLegacyConfirm(now: now)
    }

    /// Both roles, once request and response are known: the key size and the method, or why
    /// this side refuses them.
    private mutating func settle(request: SMPPairingParameters, response: SMPPairingParameters,
                                 secureConnections: Bool) -> PairingFailure? {
        guard var current = pairing else { return .failed(.unspecifiedReason) }
        let keySize = min(request.maximumEncryptionKeySize, response.maximumEncryptionKeySize)
        guard keySize >= configuration.effectiveMinimumKeySize else { return .failed(.encryptionKeySize) }
        if !secureConnections && !configuration.acceptsLegacyPairing { return .legacyPairingRefused }
        // This side never gives out-of-band data, so a peer that says it has ours is wrong: LE
        // Secure Connections would use OOB as soon as one side has the other's (Part H 2.3.5.1).
        // Legacy pairing uses OOB only when both have it, and this side never does.
        let peer = role == .responder ? request : response
        if secureConnections && peer.isOOBDataPresent { return .failed(.oobNotAvailable) }
        current.keySize = keySize
        current.method = PairingMethod.select(initiator: request, responder: response, secureConnections: secureConnections,
                                              localIsInitiator: role == .initiator)
        if let bond = bondToKeep, current.strength.isWeaker(than: bond) {
            return .weakerThanBond(bond: bond, offered: current.strength)
        }
        pairing = current
        return nil
    }

    // MARK: Phase 2: authentication

    /// Shows a new passkey when this side displays it, or asks the user for one; nothing for the
    /// other methods.
    private mutating func preparePasskey() -> [PairingAction] {
        guard var current = pairing, case .passkeyEntry(let displays) = current.method, current.passkey == nil else { return [] }
        if displays {
            let passkey = configuration.testingFixedDisplayedPasskey.map { $0 % 1_000_000 } ?? UInt32.random(in: 0...999_999, using: &random)
            current.passkey = passkey
            pairing = current
            return [.displayPasskey(passkey)]
        }
        return [.requestPasskey]
    }

    /// The passkey became known (typed): send what waited for it.
    private mutating func passkeyKnown(now: Instant) -> [PairingAction] {
        guard let current = pairing else { return [] }
        if !current.secureConnections {
            // Legacy: the initiator sends its confirm; the responder answers one already received.
            if role == .initiator, step == .awaitingConfirm, !current.localConfirmSent { return sendLegacyConfirm(now: now) }
            if role == .responder, step == .awaitingConfirm, current.peerConfirm != nil { return sendLegacyConfirm(now: now) }
            return []
        }
        guard current.dhKey != nil else { return [] }
        // LE Secure Connections: the initiator starts round 0; the responder answers the
        // initiator's confirm if it came before the user typed.
        if role == .initiator, step == .awaitingConfirm, !current.localConfirmSent { return sendPasskeyRoundConfirm(now: now) }
        if role == .responder, step == .awaitingConfirm, current.peerConfirm != nil { return sendPasskeyRoundConfirm(now: now) }
        return []
    }

    /// The peer's public key (LE Secure Connections).
    private mutating func receivePublicKey(_ key: PairingPublicKey, now: Instant) -> [PairingAction] {
        guard var current = pairing else { return fail(.unspecifiedReason, now: now) }
        let keyPair = ensureKeyPair()
        current = pairing ?? current
        do {
            current.dhKey = try keyPair.dhKey(with: key)
        } catch {
            // Off the curve (CVE-2018-5383) or our own X reflected (CVE-2020-26558): before this
            // side sends its own key (responder), a confirm value or a nonce.
            return fail(.dhKeyCheckFailed, now: now)
        }
        current.peerPublicKey = key
        current.keyPair = keyPair
        pairing = current
        var actions: [PairingAction] = []
        if role == .responder { actions.append(send(.pairingPublicKey(keyPair.publicKey), now: now)) }
        switch current.method {
        case .justWorks, .numericComparison:
            if role == .responder {
                // The responder commits first: Cb = f4(PKbx, PKax, Nb, 0).
                actions += sendCommitment(now: now)
                step = .awaitingRandom
            } else {
                step = .awaitingConfirm
            }
        case .passkeyEntry:
            step = .awaitingConfirm
            actions += preparePasskey()
            if role == .initiator, pairing?.passkey != nil { actions += sendPasskeyRoundConfirm(now: now) }
        }
        return actions
    }

    /// Responder, Just Works or Numeric Comparison: a new nonce and its commitment.
    private mutating func sendCommitment(now: Instant) -> [PairingAction] {
        guard var current = pairing, let keyPair = current.keyPair, let peer = current.peerPublicKey else { return [] }
        current.localNonce = nonce()
        pairing = current
        let confirm = SMPCrypto.confirmValue(u: keyPair.publicKey.x, v: peer.x, x: current.localNonce, z: 0)
        return [send(.pairingConfirm(confirm), now: now)]
    }

    /// Passkey Entry, LE Secure Connections: this side's confirm of the current round,
    /// f4(own X, peer X, nonce, 0x80 | the round's bit of the passkey).
    private mutating func sendPasskeyRoundConfirm(now: Instant) -> [PairingAction] {
        guard var current = pairing, let keyPair = current.keyPair, let peer = current.peerPublicKey,
              let passkey = current.passkey else { return [] }
        current.localNonce = nonce()
        current.localConfirmSent = true
        pairing = current
        let confirm = SMPCrypto.confirmValue(u: keyPair.publicKey.x, v: peer.x, x: current.localNonce, z: passkeyBit(passkey, current.passkeyRound))
        if role == .responder { step = .awaitingRandom }
        return [send(.pairingConfirm(confirm), now: now)]
    }

    /// Legacy pairing: this side's confirm, c1(TK, rand, preq, pres, initiator, responder).
    private mutating func sendLegacyConfirm(now: Instant) -> [PairingAction] {
        guard var current = pairing else { return [] }
        current.localNonce = nonce()
        let confirm = legacyConfirm(current.localNonce, current)
        // The responder's confirm follows the initiator's: equal to it, one would be a reflection.
        if current.peerConfirm == confirm { return fail(.confirmValueFailed, now: now) }
        current.localConfirmSent = true
        current.localConfirm = confirm
        pairing = current
        if role == .responder { step = .awaitingRandom }
        return [send(.pairingConfirm(confirm), now: now)]
    }

    private mutating func receiveConfirm(_ value: UInt128, now: Instant) -> [PairingAction] {
        guard var current = pairing else { return fail(.unspecifiedReason, now: now) }
        // Legacy pairing: our own confirm sent back. c1 takes the same inputs on both sides, so
        // with our nonce reflected next it would check: fail before the nonce goes out.
        if !current.secureConnections, let local = current.localConfirm, value == local {
            return fail(.confirmValueFailed, now: now)
        }
        current.peerConfirm = value
        pairing = current
        switch (role, current.secureConnections, current.method) {
        case (.initiator, true, .justWorks), (.initiator, true, .numericComparison):
            // The responder committed; reveal our nonce.
            current.localNonce = nonce()
            pairing = current
            step = .awaitingRandom
            return [send(.pairingRandom(current.localNonce), now: now)]
        case (.initiator, _, _):
            // Passkey round or legacy: our confirm went first; now our nonce.
            guard current.localConfirmSent else { return fail(.unspecifiedReason, now: now) }
            step = .awaitingRandom
            return [send(.pairingRandom(current.localNonce), now: now)]
        case (.responder, true, .passkeyEntry):
            return current.passkey == nil ? [] : sendPasskeyRoundConfirm(now: now)
        case (.responder, false, _):
            if case .passkeyEntry = current.method, current.passkey == nil { return [] }
            return sendLegacyConfirm(now: now)
        case (.responder, true, _):
            // Just Works and Numeric Comparison: the responder commits, never the initiator.
            return fail(.unspecifiedReason, now: now)
        }
    }

    private mutating func receiveRandom(_ value: UInt128, now: Instant) -> [PairingAction] {
        guard var current = pairing else { return fail(.unspecifiedReason, now: now) }
        // Every Pairing Random answers a confirm value the peer committed to, except the
        // initiator's nonce in Just Works and Numeric Comparison, where only the responder commits.
        let responderOnlyCommits = current.secureConnections && role == .responder && !current.method.isPasskeyEntry
        guard let peerConfirm = current.peerConfirm ?? (responderOnlyCommits ? 0 : nil) else {
            return fail(.unspecifiedReason, now: now)
        }
        current.peerNonce = value
        pairing = current
        if !current.secureConnections {
            // Our own nonce sent back is a reflection, whatever the confirm value said.
            guard value != current.localNonce, legacyConfirm(value, current) == peerConfirm else {
                return fail(.confirmValueFailed, now: now)
            }
            let (mrand, srand) = role == .initiator ? (current.localNonce, value) : (value, current.localNonce)
            current.shortTermKey = masked(SMPCrypto.legacyShortTermKey(k: UInt128(current.passkey ?? 0), r1: srand, r2: mrand), to: current.keySize)
            pairing = current
            step = .awaitingEncryption
            if role == .responder { return [send(.pairingRandom(current.localNonce), now: now)] }
            return [.startEncryption(longTermKey: current.shortTermKey, encryptedDiversifier: 0, random: 0)]
        }
        guard let keyPair = current.keyPair, let peer = current.peerPublicKey else { return fail(.unspecifiedReason, now: now) }
        switch current.method {
        case .justWorks, .numericComparison:
            if role == .initiator {
                // Cb = f4(PKbx, PKax, Nb, 0).
                guard SMPCrypto.confirmValue(u: peer.x, v: keyPair.publicKey.x, x: value, z: 0) == peerConfirm else {
                    return fail(.confirmValueFailed, now: now)
                }
                if current.method == .justWorks { return sendDHKeyCheck(now: now) }
                step = .awaitingDHKeyCheck
                pairing?.comparisonAsked = true
                return [.confirmNumericComparison(comparisonValue(current))]
            }
            step = .awaitingDHKeyCheck
            var actions = [send(.pairingRandom(current.localNonce), now: now)]
            if current.method == .numericComparison {
                pairing?.comparisonAsked = true
                actions.append(.confirmNumericComparison(comparisonValue(current)))
            }
            return actions
        case .passkeyEntry:
            guard let passkey = current.passkey else { return fail(.unspecifiedReason, now: now) }
            let bit = passkeyBit(passkey, current.passkeyRound)
            guard SMPCrypto.confirmValue(u: peer.x, v: keyPair.publicKey.x, x: value, z: bit) == peerConfirm else {
                return fail(.confirmValueFailed, now: now)
            }
            var actions: [PairingAction] = []
            if role == .responder { actions.append(send(.pairingRandom(current.localNonce), now: now)) }
            current.passkeyRound += 1
            current.peerConfirm = nil
            current.localConfirmSent = false
            pairing = current
            if current.passkeyRound < 20 {
                step = .awaitingConfirm
                if role == .initiator { actions += sendPasskeyRoundConfirm(now: now) }
                return actions
            }
            if role == .initiator { return actions + sendDHKeyCheck(now: now) }
            step = .awaitingDHKeyCheck
            return actions
        }
    }

    /// Initiator: f5 for the MacKey and LTK, then Ea = f6(MacKey, Na, Nb, rb, IOcapA, A, B).
    private mutating func sendDHKeyCheck(now: Instant) -> [PairingAction] {
        guard var current = pairing else { return fail(.unspecifiedReason, now: now) }
        deriveKeys(&current)
        current.localCheckSent = true
        pairing = current
        step = .awaitingDHKeyCheck
        let check = SMPCrypto.checkValue(w: current.macKey, n1: current.localNonce, n2: current.peerNonce, r: r(current),
                                         ioCapabilities: current.request, a1: localAddress, a2: peerAddress)
        return [send(.pairingDHKeyCheck(check), now: now)]
    }

    private mutating func receiveDHKeyCheck(_ value: UInt128, now: Instant) -> [PairingAction] {
        guard var current = pairing else { return fail(.unspecifiedReason, now: now) }
        switch role {
        case .initiator:
            // Before our own check went out (Numeric Comparison not yet confirmed), too early.
            guard current.localCheckSent else { return fail(.unspecifiedReason, now: now) }
            // Eb = f6(MacKey, Nb, Na, ra, IOcapB, B, A).
            let expected = SMPCrypto.checkValue(w: current.macKey, n1: current.peerNonce, n2: current.localNonce, r: r(current),
                                                ioCapabilities: current.response, a1: peerAddress, a2: localAddress)
            guard value == expected else { return fail(.dhKeyCheckFailed, now: now) }
            step = .awaitingEncryption
            return [.startEncryption(longTermKey: current.longTermKey, encryptedDiversifier: 0, random: 0)]
        case .responder:
            if current.method == .numericComparison && current.userConfirmed != true {
                current.pendingPeerCheck = value
                pairing = current
                return []
            }
            return verifyAndAnswerDHKeyCheck(value, now: now)
        }
    }

    /// Responder: checks Ea, then answers Eb = f6(MacKey, Nb, Na, ra, IOcapB, B, A).
    private mutating func verifyAndAnswerDHKeyCheck(_ value: UInt128, now: Instant) -> [PairingAction] {
        guard var current = pairing else { return fail(.unspecifiedReason, now: now) }
        deriveKeys(&current)
        pairing = current
        let expected = SMPCrypto.checkValue(w: current.macKey, n1: current.peerNonce, n2: current.localNonce, r: r(current),
                                            ioCapabilities: current.request, a1: peerAddress, a2: localAddress)
        guard value == expected else { return fail(.dhKeyCheckFailed, now: now) }
        let check = SMPCrypto.checkValue(w: current.macKey, n1: current.localNonce, n2: current.peerNonce, r: r(current),
                                         ioCapabilities: current.response, a1: localAddress, a2: peerAddress)
        step = .awaitingEncryption
        return [send(.pairingDHKeyCheck(check), now: now)]
    }

    /// f5 with the initiator's nonce and address first: the MacKey and the LTK (masked to the
    /// key size).
    private func deriveKeys(_ current: inout Pairing) {
        guard let dhKey = current.dhKey else { return }
        let (na, nb) = role == .initiator ? (current.localNonce, current.peerNonce) : (current.peerNonce, current.localNonce)
        let (a, b) = role == .initiator ? (localAddress, peerAddress) : (peerAddress, localAddress)
        let keys = SMPCrypto.macKeyAndLongTermKey(w: dhKey, n1: na, n2: nb, a1: a, a2: b)
        current.macKey = keys.macKey
        current.longTermKey = masked(keys.longTermKey, to: current.keySize)
    }

    /// The r of f6: the passkey for Passkey Entry, 0 for the other methods.
    private func r(_ current: Pairing) -> UInt128 {
        if case .passkeyEntry = current.method { return UInt128(current.passkey ?? 0) }
        return 0
    }

    /// The six digits of Numeric Comparison: g2(PKax, PKbx, Na, Nb) mod 10⁶.
    private func comparisonValue(_ current: Pairing) -> UInt32 {
        guard let keyPair = current.keyPair, let peer = current.peerPublicKey else { return 0 }
        let (pka, pkb) = role == .initiator ? (keyPair.publicKey.x, peer.x) : (peer.x, keyPair.publicKey.x)
        let (na, nb) = role == .initiator ? (current.localNonce, current.peerNonce) : (current.peerNonce, current.localNonce)
        return SMPCrypto.numericComparisonValue(u: pka, v: pkb, x: na, y: nb) % 1_000_000
    }

    /// c1 of `rand` with the pairing's TK (0 for Just Works, the passkey) and PDUs.
    private func legacyConfirm(_ rand: UInt128, _ current: Pairing) -> UInt128 {
        let (initiator, responder) = role == .initiator ? (localAddress, peerAddress) : (peerAddress, localAddress)
        return SMPCrypto.legacyConfirmValue(k: UInt128(current.passkey ?? 0), r: rand, pairingRequest: current.request,
                                            pairingResponse: current.response, initiator: initiator, responder: responder)
    }

    // MARK: Phase 3: key distribution

    private static func expectedPDUs(for keys: SMPKeyDistribution, secureConnections: Bool) -> [SMPCode] {
        var codes: [SMPCode] = []
        if keys.contains(.encryptionKey) && !secureConnections { codes += [.encryptionInformation, .centralIdentification] }
        if keys.contains(.identityKey) { codes += [.identityInformation, .identityAddressInformation] }
        if keys.contains(.signingKey) { codes.append(.signingInformation) }
        return codes
    }

    private func isKeyDistribution(_ pdu: SMPPDU) -> Bool {
        switch pdu {
        case .encryptionInformation, .centralIdentification, .identityInformation, .identityAddressInformation, .signingInformation: true
        default: false
        }
    }

    private mutating func sendLocalKeys(now: Instant) -> [PairingAction] {
        guard var current = pairing, !current.sentLocalKeys else { return [] }
        current.sentLocalKeys = true
        let keys = role == .initiator ? current.initiatorKeys : current.responderKeys
        var actions: [PairingAction] = []
        if keys.contains(.encryptionKey) && !current.secureConnections {
            let ltk = masked(nonce(), to: current.keySize)
            let ediv = UInt16.random(in: .min ... .max, using: &random)
            let rand = UInt64.random(in: .min ... .max, using: &random)
            current.localKeys.longTermKey = ltk
            current.localKeys.encryptedDiversifier = ediv
            current.localKeys.random = rand
            actions.append(send(.encryptionInformation(longTermKey: ltk), now: now))
            actions.append(send(.centralIdentification(encryptedDiversifier: ediv, random: rand), now: now))
        }
        if keys.contains(.identityKey), let identity = configuration.identity {
            current.localKeys.identity = identity
            actions.append(send(.identityInformation(identityResolvingKey: identity.identityResolvingKey), now: now))
            actions.append(send(.identityAddressInformation(identity.address), now: now))
        }
        if keys.contains(.signingKey) {
            let csrk = nonce()
            current.localKeys.signatureKey = csrk
            actions.append(send(.signingInformation(signatureKey: csrk), now: now))
        }
        pairing = current
        return actions
    }

    private mutating func receiveKey(_ pdu: SMPPDU, now: Instant) -> [PairingAction] {
        guard var current = pairing, let next = current.expectedFromPeer.first, next == pdu.code else {
            return fail(.unspecifiedReason, now: now)
        }
        current.expectedFromPeer.removeFirst()
        switch pdu {
        case .encryptionInformation(let ltk): current.peerKeys.longTermKey = ltk
        case .centralIdentification(let ediv, let rand):
            current.peerKeys.encryptedDiversifier = ediv
            current.peerKeys.random = rand
        case .identityInformation(let irk): current.peerKeys.identity = PairingIdentity(identityResolvingKey: irk, address: peerAddress)
        case .identityAddressInformation(let address):
            // An identity address is public or static random (Part H 3.6.5); a resolvable or
            // non-resolvable private one would name a bond after an address that changes, or
            // let a peer claim another's. No bond then.
            guard address.kind == .public || address.kind == .randomStatic else { return fail(.invalidParameters, now: now) }
            current.peerKeys.identity = PairingIdentity(identityResolvingKey: current.peerKeys.identity?.identityResolvingKey ?? 0, address: address)
        case .signingInformation(let csrk): current.peerKeys.signatureKey = csrk
        default: break
        }
        pairing = current
        deadline = now.advanced(by: Self.timeout)
        guard current.expectedFromPeer.isEmpty else { return [] }
        // The responder's keys are all in: the initiator sends its own.
        if role == .initiator { return sendLocalKeys(now: now) + finishIfDone() }
        return finishIfDone()
    }

    /// Completes when the peer's keys are all in and ours are sent.
    private mutating func finishIfDone(now: Instant? = nil) -> [PairingAction] {
        guard var current = pairing, current.expectedFromPeer.isEmpty else { return [] }
        var actions: [PairingAction] = []
        if !current.sentLocalKeys, let now {
            actions += sendLocalKeys(now: now)
            current = pairing ?? current
        }
        guard current.sentLocalKeys else { return actions }
        let outcome = PairingOutcome(
            method: current.method, secureConnections: current.secureConnections, bonded: current.bonded,
            keySize: current.keySize, linkKey: current.secureConnections ? current.longTermKey : current.shortTermKey,
            local: current.localKeys, peer: current.peerKeys, comparisonUnseen: current.comparisonUnseen)
        end(.completed)
        return actions + [.completed(outcome)]
    }

    // MARK: Helpers

    /// Sends `pdu`; every SMP command queued restarts the 30 s timer (Part H 3.4).
    private mutating func send(_ pdu: SMPPDU, now: Instant) -> PairingAction {
        deadline = now.advanced(by: Self.timeout)
        return .send(pdu)
    }

    /// Tells the peer `reason` and ends the pairing.
    private mutating func fail(_ reason: SMPPairingFailureReason, now: Instant) -> [PairingAction] {
        refuse(.failed(reason), now: now)
    }

    /// Tells the peer the SMP reason of `failure` and ends the pairing, reporting `failure`.
    private mutating func refuse(_ failure: PairingFailure, now: Instant) -> [PairingAction] {
        let reason = failure.reason ?? .unspecifiedReason
        let wasPairing = isPairing
        end(.failed)
        guard wasPairing else { return [.send(.pairingFailed(reason))] }
        return [.send(.pairingFailed(reason)), .failed(failure)]
    }

    private mutating func end(_ final: Step) {
        step = final
        deadline = nil
        pairing = nil
    }

    private mutating func ensureKeyPair() -> PairingKeyPair {
        if let existing = pairing?.keyPair { return existing }
        let keyPair = suppliedKeyPair ?? PairingKeyPair()
        pairing?.keyPair = keyPair
        return keyPair
    }

    private mutating func nonce() -> UInt128 {
        UInt128(random.next() as UInt64) << 64 | UInt128(random.next() as UInt64)
    }

    private func passkeyBit(_ passkey: UInt32, _ round: Int) -> UInt8 {
        0x80 | UInt8((passkey >> UInt32(round)) & 1)
    }

    /// The key with only its `size` least significant octets kept (Part H 2.3.4).
    private func masked(_ key: UInt128, to size: UInt8) -> UInt128 {
        size >= 16 ? key : key & ((1 << (8 * UInt128(size))) - 1)
    }
}
