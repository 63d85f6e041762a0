import Crypto

/// Why a P-256 key was refused.
public enum SMPKeyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The private key is 0 or not below the curve's order.
    case invalidPrivateKey
    /// The peer's public key is not a point on P-256 (or a coordinate is not below the field's
    /// prime). Computing a DHKey with such a point leaks the private key: the invalid-curve attack,
    /// CVE-2018-5383. Pairing fails.
    case publicKeyNotOnCurve
    /// The peer's public key has our own X coordinate: our key sent back, or its mirror image
    /// (X, p − Y), which is on the curve too and which a whole-point compare misses. f4 and g2
    /// take only X, so with it a peer can reflect each of our Passkey Entry confirm values and
    /// nonces and learn the passkey bit by bit (CVE-2020-26558). No honest peer sends it (a
    /// fresh key pair has our X with probability 2⁻²⁵⁵). Pairing fails.
    case publicKeyHasOurX

    public var description: String {
        switch self {
        case .invalidPrivateKey: "the P-256 private key is 0 or not below the curve's order"
        case .publicKeyNotOnCurve: "the peer's public key is not a point on P-256"
        case .publicKeyHasOurX: "the peer's public key has our own X coordinate (a reflected key, CVE-2020-26558)"
        }
    }
}

/// One side's P-256 key pair for LE Secure Connections (Core Vol 3 Part H 2.3.5.6): the public key
/// it sends in Pairing Public Key, and the DHKey it computes with the peer's.
///
/// The elliptic-curve arithmetic is swift-crypto's `P256.KeyAgreement` (BoringSSL). A received
/// public key is checked to be a point on the curve before it is used, as the specification
/// requires since CVE-2018-5383.
public struct PairingKeyPair: Sendable {
    private let privateKey: P256.KeyAgreement.PrivateKey
    /// The public key, as Pairing Public Key carries it.
    public let publicKey: PairingPublicKey

    /// A new key pair from the system's secure random number generator: one per pairing.
    public init() {
        // Any point, not only those swift-crypto's default picks so the key has a compact form.
        self.init(P256.KeyAgreement.PrivateKey(compactRepresentable: false))
    }

    /// The key pair whose private key is `privateKey`, a number below the curve's order: for
    /// the specification's debug key pair (2.3.5.6.1) and its sample data.
    public init(privateKey: P256Coordinate) throws(SMPKeyError) {
        let key: P256.KeyAgreement.PrivateKey
        do {
            key = try P256.KeyAgreement.PrivateKey(rawRepresentation: privateKey.bigEndianBytes)
        } catch {
            throw .invalidPrivateKey
        }
        self.init(key)
    }

    private init(_ privateKey: P256.KeyAgreement.PrivateKey) {
        self.privateKey = privateKey
        // X then Y, 32 octets each, most significant first.
        let raw = Array(privateKey.publicKey.rawRepresentation)
        publicKey = PairingPublicKey(x: P256Coordinate(folding: raw.prefix(32)), y: P256Coordinate(folding: raw.dropFirst(32)))
    }

    /// The DHKey shared with the peer whose public key is `peerKey`: the X coordinate of the
    /// point this private key and that public key agree on. Throws
    /// ``SMPKeyError/publicKeyNotOnCurve`` for a point off the curve and
    /// ``SMPKeyError/publicKeyHasOurX`` for a key with our own X coordinate (ours reflected,
    /// whatever its Y: the X alone is what f4 commits to, so the X alone is compared, as the
    /// Bluetooth SIG's advisory for CVE-2020-26558, Zephyr and NimBLE do).
    public func dhKey(with peerKey: PairingPublicKey) throws(SMPKeyError) -> P256Coordinate {
        guard peerKey.x != publicKey.x else { throw .publicKeyHasOurX }
        let secret: SharedSecret
        do {
            // swift-crypto (BoringSSL's EC_KEY_set_public_key_affine_coordinates) refuses a point
            // off the curve or a coordinate not below the prime.
            let peer = try P256.KeyAgreement.PublicKey(rawRepresentation: peerKey.x.bigEndianBytes + peerKey.y.bigEndianBytes)
            secret = try privateKey.sharedSecretFromKeyAgreement(with: peer)
        } catch {
            throw .publicKeyNotOnCurve
        }
        return secret.withUnsafeBytes { P256Coordinate(folding: $0) }
    }
}
