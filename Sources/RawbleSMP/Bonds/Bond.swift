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
}
