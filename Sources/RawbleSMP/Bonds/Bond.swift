import RawbleWire

/// What a host keeps of a pairing with one peer, to encrypt later links without pairing again
/// and to recognise the peer behind its resolvable private addresses (Core Vol 3 Part H 2.4.1,
/// Part C 10.3).
///
/// A bond is named by the peer's identity: its identity address when it distributed one (the
/// IRK's address), else the address it paired from. Values only: a ``BondStore`` keeps them.
public struct Bond: Hashable, Sendable {
    /// The peer's identity address (the one a store looks bonds up by).
    public var peer: DeviceAddress
    /// The peer's Identity Resolving Key, when it distributed one: its resolvable private
    /// addresses resolve to ``peer`` with it.
    public var peerIdentityResolvingKey: UInt128?
    /// The key to encrypt with as central, with the EDIV and Rand that name it (LE Secure
    /// Connections: the pairing's LTK, EDIV and Rand 0; legacy: the LTK the peer distributed).
    /// `nil` when this side cannot encrypt as central (a legacy peer that sent no LTK).
    public var centralKey: LongTermKey?
    /// The key to answer the controller's LTK request with as peripheral (LE Secure
    /// Connections: the same LTK; legacy: the LTK this side distributed, with its EDIV and
    /// Rand). `nil` when this side cannot encrypt as peripheral.
    public var peripheralKey: LongTermKey?
    /// The peer's Connection Signature Resolving Key, when it distributed one.
    public var peerSignatureKey: UInt128?
    /// Whether the keys are authenticated (Passkey Entry, Numeric Comparison, Out of Band).
    public var authenticated: Bool
    /// Whether they came from LE Secure Connections (else LE legacy pairing).
    public var secureConnections: Bool
    /// The encryption key size, in octets (7–16).
    public var keySize: UInt8

    /// A Long Term Key with the EDIV and Rand that name it on the air.
    public struct LongTermKey: Hashable, Sendable {
        public var value: UInt128
        public var encryptedDiversifier: UInt16
        public var random: UInt64

        public init(value: UInt128, encryptedDiversifier: UInt16 = 0, random: UInt64 = 0) {
            self.value = value
            self.encryptedDiversifier = encryptedDiversifier
            self.random = random
        }
    }

    public init(peer: DeviceAddress, peerIdentityResolvingKey: UInt128? = nil, centralKey: LongTermKey?,
                peripheralKey: LongTermKey?, peerSignatureKey: UInt128? = nil, authenticated: Bool,
                secureConnections: Bool, keySize: UInt8) {
        self.peer = peer
        self.peerIdentityResolvingKey = peerIdentityResolvingKey
        self.centralKey = centralKey
        self.peripheralKey = peripheralKey
        self.peerSignatureKey = peerSignatureKey
        self.authenticated = authenticated
        self.secureConnections = secureConnections
        self.keySize = keySize
    }

    /// The bond a completed pairing with `peerAddress` (the address the link used) leaves;
    /// `nil` when either side did not ask to bond.
    public init?(_ outcome: PairingOutcome, peerAddress: DeviceAddress) {
        guard outcome.bonded else { return nil }
        let identity = outcome.peer.identity
        self.init(
            peer: identity?.address ?? peerAddress,
            peerIdentityResolvingKey: identity?.identityResolvingKey,
            centralKey: outcome.reconnectionKey(asCentral: true).map {
                LongTermKey(value: $0.longTermKey, encryptedDiversifier: $0.encryptedDiversifier, random: $0.random)
            },
            peripheralKey: outcome.reconnectionKey(asCentral: false).map {
                LongTermKey(value: $0.longTermKey, encryptedDiversifier: $0.encryptedDiversifier, random: $0.random)
            },
            peerSignatureKey: outcome.peer.signatureKey,
            authenticated: outcome.isAuthenticated,
            secureConnections: outcome.secureConnections,
            keySize: outcome.keySize)
    }

    /// Whether `address` is this bond's peer: its identity address, or a resolvable private
    /// address its IRK resolves (the ah function, Part H 2.2.2).
    public func matches(_ address: DeviceAddress) -> Bool {
        if address == peer { return true }
        guard let irk = peerIdentityResolvingKey, address.type == .random else { return false }
        return address.address.isResolvable(with: irk)
    }
}

/// Where a host keeps its bonds: one set per local identity (the adapter's address). rawble's
/// host uses ``InMemoryBondStore`` unless given another; the CLI keeps them in files.
///
/// Implementations are untrusted storage to the host: a store that throws makes the host
/// log one line and go on without the bond (pairing again, or refusing to encrypt), never crash.
public protocol BondStore: Sendable {
    /// Every bond kept.
    func bonds() async throws -> [Bond]
    /// Keeps `bond`, replacing any bond with the same peer (``Bond/peer``) or one whose IRK
    /// resolves to it.
    func save(_ bond: Bond) async throws
    /// Forgets the bond with `peer`; `false` when there was none.
    @discardableResult
    func removeBond(with peer: DeviceAddress) async throws -> Bool
}

extension BondStore {
    /// The bond whose peer is `address` or whose IRK resolves it; `nil` when none is.
    public func bond(for address: DeviceAddress) async throws -> Bond? {
        let all = try await bonds()
        return all.first { $0.peer == address } ?? all.first { $0.matches(address) }
    }
}

/// Bonds kept in memory, for one process's life (the host's default; tests).
public actor InMemoryBondStore: BondStore {
    private var kept: [Bond]

    public init(_ bonds: [Bond] = []) {
        kept = bonds
    }

    public func bonds() -> [Bond] { kept }

    public func save(_ bond: Bond) {
        kept.removeAll { $0.peer == bond.peer || bond.matches($0.peer) }
        kept.append(bond)
    }

    @discardableResult
    public func removeBond(with peer: DeviceAddress) -> Bool {
        let before = kept.count
        kept.removeAll { $0.peer == peer }
        return kept.count != before
    }
}
