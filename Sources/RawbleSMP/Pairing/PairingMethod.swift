import RawbleWire

/// How a pairing authenticates the two sides (Core Vol 3 Part H 2.3.5.1), chosen from their IO
/// capabilities, MITM flags and whether both do LE Secure Connections.
public enum PairingMethod: Hashable, Sendable, CustomStringConvertible {
    /// No user involved: no protection against a man in the middle (an unauthenticated key).
    case justWorks
    /// A six-digit passkey shown on one side and typed on the other (or typed on both when
    /// neither can show it). `localDisplays`: this side shows it; otherwise its user types it.
    case passkeyEntry(localDisplays: Bool)
    /// Both sides show the same six digits and each user confirms them (LE Secure Connections
    /// only).
    case numericComparison

    /// Whether the method protects against a man in the middle (an authenticated key).
    public var isAuthenticated: Bool { self != .justWorks }

    /// Passkey Entry, whichever side displays.
    var isPasskeyEntry: Bool {
        if case .passkeyEntry = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .justWorks: "Just Works"
        case .passkeyEntry(let displays): displays ? "Passkey Entry (this side displays)" : "Passkey Entry (this side types)"
        case .numericComparison: "Numeric Comparison"
        }
    }

    /// The method for a pairing between `initiator` (the Pairing Request's IO capability and
    /// flags) and `responder` (the Pairing Response's), seen from the initiator's side when
    /// `localIsInitiator`, else the responder's: Part H 2.3.5.1, Table 2.8. Neither side asking
    /// for MITM protection means Just Works whatever they can do.
    public static func select(initiator: SMPPairingParameters, responder: SMPPairingParameters,
                              secureConnections: Bool, localIsInitiator: Bool) -> PairingMethod {
        let mitm = initiator.authenticationRequirements.contains(.mitm) || responder.authenticationRequirements.contains(.mitm)
        guard mitm else { return .justWorks }
        switch entry(initiator: initiator.ioCapability, responder: responder.ioCapability, secureConnections: secureConnections) {
        case .justWorks: return .justWorks
        case .numericComparison: return .numericComparison
        case .passkey(let initiatorDisplays, let responderDisplays):
            return .passkeyEntry(localDisplays: localIsInitiator ? initiatorDisplays : responderDisplays)
        }
    }

    /// One cell of Table 2.8: the method, and for Passkey Entry which sides display.
    private enum Entry {
        case justWorks
        case numericComparison
        case passkey(initiatorDisplays: Bool, responderDisplays: Bool)
    }

    private static func entry(initiator: SMPIOCapability, responder: SMPIOCapability, secureConnections: Bool) -> Entry {
        // The side that can only display shows the passkey; the side with a keyboard types it.
        let initiatorShows = Entry.passkey(initiatorDisplays: true, responderDisplays: false)
        let responderShows = Entry.passkey(initiatorDisplays: false, responderDisplays: true)
        // Where both can compare six digits, LE Secure Connections compares; legacy pairing
        // falls back to the passkey (or to Just Works for two yes/no displays).
        let compareOr = { (legacy: Entry) in secureConnections ? Entry.numericComparison : legacy }
        if initiator == .noInputNoOutput || responder == .noInputNoOutput { return .justWorks }
        switch (initiator, responder) {
        case (.displayOnly, .displayOnly), (.displayOnly, .displayYesNo), (.displayYesNo, .displayOnly):
            return .justWorks
        case (.displayOnly, .keyboardOnly), (.displayOnly, .keyboardDisplay), (.displayYesNo, .keyboardOnly),
             (.keyboardDisplay, .keyboardOnly):
            return initiatorShows
        case (.displayYesNo, .displayYesNo):
            return compareOr(.justWorks)
        case (.displayYesNo, .keyboardDisplay), (.keyboardDisplay, .keyboardDisplay):
            return compareOr(initiatorShows)
        case (.keyboardOnly, .displayOnly), (.keyboardOnly, .displayYesNo), (.keyboardOnly, .keyboardDisplay),
             (.keyboardDisplay, .displayOnly):
            return responderShows
        case (.keyboardDisplay, .displayYesNo):
            return compareOr(responderShows)
        case (.keyboardOnly, .keyboardOnly):
            return .passkey(initiatorDisplays: false, responderDisplays: false)
        default:
            // Reserved capabilities do not decode (SMPPDU); a caller's own is treated as none.
            return .justWorks
        }
    }
}

/// A side's identity, distributed during pairing so the peer can resolve its private addresses:
/// its Identity Resolving Key and its public or static random identity address.
public struct PairingIdentity: Hashable, Sendable {
    public var identityResolvingKey: UInt128
    public var address: DeviceAddress

    public init(identityResolvingKey: UInt128, address: DeviceAddress) {
        self.identityResolvingKey = identityResolvingKey
        self.address = address
    }
}

/// What this side can do and asks for when it pairs.
///
/// The defaults are the strict ones: LE Secure Connections only (a peer that offers only LE
/// legacy pairing is refused with Authentication Requirements unless ``allowsLegacyPairing``),
/// and a 16-octet key (KNOB for LE: a shorter key is refused with Encryption Key Size unless
/// ``minimumKeySize`` allows it).
public struct PairingConfiguration: Hashable, Sendable {
    /// What this side's user can see and type (`.noInputNoOutput`: Just Works only).
    public var ioCapability: SMPIOCapability
    /// Keep the keys (bond): ask the peer to distribute its keys and distribute ours.
    public var bonding: Bool
    /// Ask for protection against a man in the middle (an authenticated method).
    public var mitm: Bool
    /// Offer LE Secure Connections (P-256). Off: LE legacy pairing only (which then is allowed,
    /// whatever ``allowsLegacyPairing`` says).
    public var secureConnections: Bool
    /// Accept LE legacy pairing when the peer cannot do LE Secure Connections. Off (the
    /// default): such a peer is refused with Authentication Requirements (0x03), since legacy
    /// pairing's Just Works and Passkey Entry keys are open to a passive eavesdropper.
    public var allowsLegacyPairing: Bool
    /// The largest encryption key size, in octets, this side offers (7–16).
    public var maximumKeySize: UInt8
    /// The smallest encryption key size, in octets, this side accepts: 7–16 (a value outside is
    /// taken as the nearest end), 16 by default. A shorter negotiated size fails the pairing
    /// with Encryption Key Size (0x06): a short key is what KNOB downgrades a link to.
    public var minimumKeySize: UInt8
    /// This side's IRK and identity address, distributed when bonding; `nil` distributes none.
    public var identity: PairingIdentity?
    /// Distribute a Connection Signature Resolving Key when bonding.
    public var distributesSigningKey: Bool
    /// The passkey this side shows in Passkey Entry instead of a new random one: for tests only,
    /// which must know it in advance (reachable with `@testable import`). A passkey shown twice
    /// is open to the next man in the middle: Passkey Entry reveals it bit by bit.
    var testingFixedDisplayedPasskey: UInt32?

    /// Bonding with LE Secure Connections only, Just Works unless `ioCapability` and the peer
    /// allow more, 16-octet keys only.
    public init(ioCapability: SMPIOCapability = .noInputNoOutput, bonding: Bool = true, mitm: Bool = false,
                secureConnections: Bool = true, allowsLegacyPairing: Bool = false,
                maximumKeySize: UInt8 = 16, minimumKeySize: UInt8 = 16,
                identity: PairingIdentity? = nil, distributesSigningKey: Bool = false) {
        self.ioCapability = ioCapability
        self.bonding = bonding
        self.mitm = mitm
        self.secureConnections = secureConnections
        self.allowsLegacyPairing = allowsLegacyPairing
        self.maximumKeySize = maximumKeySize
        self.minimumKeySize = minimumKeySize
        self.identity = identity
        self.distributesSigningKey = distributesSigningKey
    }

    /// Whether LE legacy pairing is accepted: allowed, or the only pairing this side offers.
    var acceptsLegacyPairing: Bool { allowsLegacyPairing || !secureConnections }

    /// ``minimumKeySize`` within 7–16.
    var effectiveMinimumKeySize: UInt8 { min(16, max(7, minimumKeySize)) }

    /// Whether a key of `size` octets is long enough for this side (``minimumKeySize``): a
    /// host encrypts with no shorter bond's key, whatever the bond was made under.
    public func accepts(keySize size: UInt8) -> Bool { size >= effectiveMinimumKeySize }

    /// The AuthReq this side sends.
    var authenticationRequirements: SMPAuthenticationRequirements {
        var requirements: SMPAuthenticationRequirements = []
        if bonding { requirements.insert(.bonding) }
        if mitm { requirements.insert(.mitm) }
        if secureConnections { requirements.insert(.secureConnections) }
        return requirements
    }

    /// The keys this side distributes when bonding (in LE Secure Connections the LTK is derived,
    /// not sent: the encryption-key bit then only says the peer may keep it).
    var offeredKeys: SMPKeyDistribution {
        guard bonding else { return [] }
        var keys: SMPKeyDistribution = [.encryptionKey]
        if identity != nil { keys.insert(.identityKey) }
        if distributesSigningKey { keys.insert(.signingKey) }
        return keys
    }

    /// The keys this side takes from a peer when bonding.
    var acceptedKeys: SMPKeyDistribution {
        bonding ? [.encryptionKey, .identityKey, .signingKey] : []
    }
}

/// The keys one side distributed in a pairing (Core Vol 3 Part H 3.6).
public struct DistributedKeys: Hashable, Sendable {
    /// The LTK of legacy pairing, with the EDIV and Rand that name it on reconnection.
    public var longTermKey: UInt128?
    public var encryptedDiversifier: UInt16
    public var random: UInt64
    /// The IRK and identity address.
    public var identity: PairingIdentity?
    /// The CSRK.
    public var signatureKey: UInt128?

    public init(longTermKey: UInt128? = nil, encryptedDiversifier: UInt16 = 0, random: UInt64 = 0,
                identity: PairingIdentity? = nil, signatureKey: UInt128? = nil) {
        self.longTermKey = longTermKey
        self.encryptedDiversifier = encryptedDiversifier
        self.random = random
        self.identity = identity
        self.signatureKey = signatureKey
    }
}

/// How strong a pairing's keys are: what a bond keeps, and what pairing again with the same
/// peer must not lower.
public struct KeyStrength: Hashable, Sendable, CustomStringConvertible {
    /// Protected against a man in the middle (Passkey Entry, or a Numeric Comparison a person
    /// confirmed).
    public var authenticated: Bool
    /// LE Secure Connections (else LE legacy pairing).
    public var secureConnections: Bool
    /// The encryption key size, in octets.
    public var keySize: UInt8

    public init(authenticated: Bool, secureConnections: Bool, keySize: UInt8) {
        self.authenticated = authenticated
        self.secureConnections = secureConnections
        self.keySize = keySize
    }

    /// Whether keys of this strength are weaker than `other`'s in any way: unauthenticated
    /// where `other` is authenticated, legacy where it is LE Secure Connections, or a shorter
    /// key. Such keys never replace a bond (BlueZ's `JustWorksRepairing=never`): a peer that
    /// pairs Just Works from a bonded peer's address would otherwise take its place.
    public func isWeaker(than other: KeyStrength) -> Bool {
        (!authenticated && other.authenticated) || (!secureConnections && other.secureConnections) || keySize < other.keySize
    }

    /// `authenticated, LE Secure Connections, 16-octet key`.
    public var description: String {
        "\(authenticated ? "authenticated" : "unauthenticated"), "
            + "\(secureConnections ? "LE Secure Connections" : "LE legacy pairing"), \(keySize)-octet key"
    }
}

/// A pairing that completed: how, and the keys a bond keeps.
public struct PairingOutcome: Hashable, Sendable {
    public var method: PairingMethod
    /// LE Secure Connections (else LE legacy pairing).
    public var secureConnections: Bool
    /// Both sides set the bonding flag: keep the keys.
    public var bonded: Bool
    /// The encryption key size, in octets.
    public var keySize: UInt8
    /// The key the link is encrypted with now: the LTK of LE Secure Connections (also the one to
    /// encrypt with on reconnection) or the STK of legacy pairing (for this connection only).
    public var linkKey: UInt128
    /// What this side distributed and what the peer did.
    public var local: DistributedKeys
    public var peer: DistributedKeys
    /// A Numeric Comparison this side accepted without a person comparing the digits (an
    /// option that answers yes): the method protects nothing then, and the key is not
    /// authenticated.
    public var comparisonUnseen: Bool

    public init(method: PairingMethod, secureConnections: Bool, bonded: Bool, keySize: UInt8, linkKey: UInt128,
                local: DistributedKeys, peer: DistributedKeys, comparisonUnseen: Bool = false) {
        self.method = method
        self.secureConnections = secureConnections
        self.bonded = bonded
        self.keySize = keySize
        self.linkKey = linkKey
        self.local = local
        self.peer = peer
        self.comparisonUnseen = comparisonUnseen
    }

    /// Whether the key is authenticated (MITM protection): an authenticated method, and for
    /// Numeric Comparison a person who compared.
    public var isAuthenticated: Bool { method.isAuthenticated && !comparisonUnseen }

    /// The keys' strength, as a bond keeps it.
    public var strength: KeyStrength {
        KeyStrength(authenticated: isAuthenticated, secureConnections: secureConnections, keySize: keySize)
    }

    /// The LTK a central encrypts with on reconnection, with its EDIV and Rand: LE Secure
    /// Connections' own LTK (EDIV and Rand 0), or in legacy pairing the one the peripheral
    /// distributed. A peripheral answers the LTK request with ``local``'s (legacy) or the same
    /// LTK (LE Secure Connections).
    public func reconnectionKey(asCentral: Bool) -> (longTermKey: UInt128, encryptedDiversifier: UInt16, random: UInt64)? {
        if secureConnections { return (linkKey, 0, 0) }
        let keys = asCentral ? peer : local
        guard let key = keys.longTermKey else { return nil }
        return (key, keys.encryptedDiversifier, keys.random)
    }
}

/// Why a pairing ended without keys.
public enum PairingFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The peer sent Pairing Failed with this reason.
    case peerFailed(SMPPairingFailureReason)
    /// This side stopped the pairing and told the peer this reason.
    case failed(SMPPairingFailureReason)
    /// No SMP command for 30 s (Part H 3.4): no more SMP on this connection.
    case timedOut
    /// The controller could not encrypt the link with the key pairing made (HCI status).
    case encryptionFailed(status: UInt8)
    /// This side refused LE legacy pairing, all the peer offered (Authentication Requirements
    /// was sent): ``PairingConfiguration/allowsLegacyPairing`` accepts it.
    case legacyPairingRefused
    /// This side refused a pairing whose keys would be weaker than the bond kept with the peer
    /// (Authentication Requirements was sent); the bond stays. `bond`: the kept bond's strength,
    /// `offered`: the pairing's.
    case weakerThanBond(bond: KeyStrength, offered: KeyStrength)

    /// The SMP reason, for either side's failure.
    public var reason: SMPPairingFailureReason? {
        switch self {
        case .peerFailed(let reason), .failed(let reason): reason
        case .legacyPairingRefused, .weakerThanBond: .authenticationRequirements
        case .timedOut, .encryptionFailed: nil
        }
    }

    public var description: String {
        switch self {
        case .peerFailed(let reason): "the peer stopped the pairing: \(reason)"
        case .failed(let reason): "pairing failed: \(reason)"
        case .timedOut: "the pairing timed out: no SMP command for 30 s"
        case .encryptionFailed(let status): "the link could not be encrypted with the new key (HCI status 0x\(Hex.padded(status, digits: 2)))"
        case .legacyPairingRefused: "the peer offers only LE legacy pairing, which this side does not accept"
        case let .weakerThanBond(bond, offered): "the pairing (\(offered)) is weaker than the bond kept (\(bond)): the bond stays"
        }
    }
}

/// What the host does after the pairing engine took an input.
public enum PairingAction: Hashable, Sendable {
    /// Put this PDU on the Security Manager channel (CID 0x0006).
    case send(SMPPDU)
    /// Show this six-digit passkey to the user, who types it on the peer.
    case displayPasskey(UInt32)
    /// Ask the user for the passkey the peer shows: answer with `enterPasskey(_:now:)`.
    case requestPasskey
    /// Show these six digits and ask the user whether the peer shows the same: answer with
    /// `confirmNumericComparison(_:comparedByPerson:now:)`.
    case confirmNumericComparison(UInt32)
    /// Central: encrypt the link with this key (LE Enable Encryption), then report the
    /// Encryption Change with `encryptionChanged(status:now:)`.
    case startEncryption(longTermKey: UInt128, encryptedDiversifier: UInt16, random: UInt64)
    /// Central, not pairing: the peripheral asked for security with these requirements.
    case securityRequested(SMPAuthenticationRequirements)
    /// The pairing completed.
    case completed(PairingOutcome)
    /// The pairing ended without keys.
    case failed(PairingFailure)
    /// Nothing to do; why, for a log line.
    case ignored(String)
}
