// What needs the rest of the Security Manager: a bond from a pairing's outcome, and a private
// address resolved with the bond's IRK (the ah function). Apart from Bond.swift, which imports the
// wire layer only, so Scripts/fuzz compiles the bond values and their file (BondFile.swift) with
// it, without swift-crypto.
import RawbleWire

extension Bond {
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

    /// How strong the bond's keys are: what pairing again with the peer must not lower.
    public var strength: KeyStrength {
        KeyStrength(authenticated: authenticated, secureConnections: secureConnections, keySize: keySize)
    }

    /// Whether `address` is this bond's peer: its identity address, or a resolvable private
    /// address its IRK resolves (the ah function, Part H 2.2.2).
    public func matches(_ address: DeviceAddress) -> Bool {
        if address == peer { return true }
        guard let irk = peerIdentityResolvingKey, address.type == .random else { return false }
        return address.address.isResolvable(with: irk)
    }

    /// Whether keeping this bond replaces `other` in a store: the same peer, or a peer whose
    /// address this bond's IRK resolves (the bond made before the peer distributed its identity).
    /// ``BondStore/save(_:)``'s rule, shared by every store.
    public func supersedes(_ other: Bond) -> Bool {
        other.peer == peer || matches(other.peer)
    }
}
