import Crypto
import CryptoExtras
import RawbleWire

/// The Security Manager's cryptographic toolbox (Core Vol 3 Part H 2.2): the AES-128 function
/// `e`, AES-CMAC, and the functions pairing is built from — f4, f5, f6 and g2 for LE Secure
/// Connections, c1 and s1 for LE legacy pairing, ah for resolvable private addresses.
///
/// The AES and AES-CMAC underneath are swift-crypto's (`AES.permute` for one block and
/// `AES.CMAC`, RFC 4493, from CryptoExtras, both BoringSSL's): no cipher code of rawble's own.
///
/// Byte order: the specification defines these functions on numbers and prints its sample data
/// most significant octet first, and AES and AES-CMAC take their keys, blocks and messages in
/// that order. So every 128-bit input and output here is a `UInt128`, every 256-bit one a
/// ``P256Coordinate``, and a test writes the specification's values as they are printed. The
/// wire's little-endian order is the PDUs' business (``SMPPDU``), not the toolbox's.
///
/// The parameters keep the specification's letters (U, V, X, Z, W, N1, ...), because f6 is
/// called with its arguments swapped for the two sides' check values: the letters, not the
/// roles, say which is which.
public enum SMPCrypto {
    // MARK: AES-128 and AES-CMAC

    /// The security function e (2.2.1): AES-128 of one block, `plaintext` encrypted with `key`.
    public static func encrypt(_ plaintext: UInt128, key: UInt128) -> UInt128 {
        var block = plaintext.bigEndianBytes
        do {
            try AES.permute(&block, key: SymmetricKey(data: key.bigEndianBytes))
        } catch {
            // swift-crypto refuses only a block or a key of the wrong size; both are 16 octets by type.
            preconditionFailure("AES-128 of a 16-octet block with a 16-octet key failed: \(error)")
        }
        return UInt128(bigEndianBytes: block)
    }

    /// AES-CMAC with a 128-bit key (RFC 4493; Part H 2.2.5): the full 128-bit tag of `message`.
    public static func cmac(_ message: [UInt8], key: UInt128) -> UInt128 {
        let tag: [UInt8]
        do {
            var mac = try AES.CMAC(key: SymmetricKey(data: key.bigEndianBytes))
            message.withUnsafeBytes { mac.update(bufferPointer: $0) }
            tag = mac.finalize().withUnsafeBytes { Array($0) }
        } catch {
            // swift-crypto refuses only a key that is not 128, 192 or 256 bits; this one is 128 by type.
            preconditionFailure("AES-CMAC with a 16-octet key failed: \(error)")
        }
        return UInt128(bigEndianBytes: tag)
    }

    // MARK: LE Secure Connections

    /// f4 (2.2.6): the confirm value of LE Secure Connections, AES-CMAC keyed with `x` of
    /// `u ‖ v ‖ z`. `u` and `v` are the X coordinates of the two public keys, `x` the sender's
    /// nonce, `z` 0 for Just Works and Numeric Comparison or the passkey bit (0x80 | bit) for
    /// Passkey Entry.
    public static func confirmValue(u: P256Coordinate, v: P256Coordinate, x: UInt128, z: UInt8) -> UInt128 {
        cmac(u.bigEndianBytes + v.bigEndianBytes + [z], key: x)
    }

    /// The SALT of f5 (2.2.7).
    static let keyGenerationSalt: UInt128 = 0x6C88_8391_AAF5_A538_6037_0BDB_5A60_83BE

    /// f5 (2.2.7): the MacKey and the LTK, from the DHKey `w`, the nonces `n1` and `n2` and the
    /// two addresses `a1` and `a2` (each with its type: public or random). `T` is AES-CMAC of
    /// `w` keyed with the SALT; each key is AES-CMAC keyed with `T` of
    /// `counter ‖ "btle" ‖ n1 ‖ n2 ‖ a1 ‖ a2 ‖ 256`, counter 0 for the MacKey and 1 for the LTK.
    /// Both sides call it with the initiator's nonce and address first.
    public static func macKeyAndLongTermKey(
        w: P256Coordinate, n1: UInt128, n2: UInt128, a1: DeviceAddress, a2: DeviceAddress
    ) -> (macKey: UInt128, longTermKey: UInt128) {
        let t = cmac(w.bigEndianBytes, key: keyGenerationSalt)
        let keyID: [UInt8] = Array("btle".utf8)
        let rest = keyID + n1.bigEndianBytes + n2.bigEndianBytes
            + a1.smpTypedAddressBytes + a2.smpTypedAddressBytes + [0x01, 0x00]
        return (macKey: cmac([0] + rest, key: t), longTermKey: cmac([1] + rest, key: t))
    }

    /// f6 (2.2.8): a DHKey check value, AES-CMAC keyed with the MacKey `w` of
    /// `n1 ‖ n2 ‖ r ‖ IOcap ‖ a1 ‖ a2`, where IOcap is the AuthReq, OOB data flag and IO capability
    /// of `ioCapabilities` (the sender's Pairing Request or Response). The initiator's check value
    /// is f6(MacKey, Na, Nb, rb, IOcapA, A, B) and the responder's f6(MacKey, Nb, Na, ra, IOcapB, B, A).
    public static func checkValue(
        w: UInt128, n1: UInt128, n2: UInt128, r: UInt128, ioCapabilities: SMPPairingParameters,
        a1: DeviceAddress, a2: DeviceAddress
    ) -> UInt128 {
        let ioCap = [ioCapabilities.authenticationRequirements.rawValue, ioCapabilities.oobDataFlag,
                     ioCapabilities.ioCapability.rawValue]
        let message = n1.bigEndianBytes + n2.bigEndianBytes + r.bigEndianBytes + ioCap
            + a1.smpTypedAddressBytes + a2.smpTypedAddressBytes
        return cmac(message, key: w)
    }

    /// g2 (2.2.9): the numeric comparison value, the least significant 32 bits of AES-CMAC keyed
    /// with `x` of `u ‖ v ‖ y`. The six digits both sides show are this value modulo 1 000 000.
    public static func numericComparisonValue(u: P256Coordinate, v: P256Coordinate, x: UInt128, y: UInt128) -> UInt32 {
        UInt32(truncatingIfNeeded: cmac(u.bigEndianBytes + v.bigEndianBytes + y.bigEndianBytes, key: x))
    }

    // MARK: LE legacy pairing

    /// c1 (2.2.3): the confirm value of legacy pairing,
    /// `e(k, e(k, r ⊕ p1) ⊕ p2)` with `p1 = pres ‖ preq ‖ rat ‖ iat` and `p2 = padding ‖ ia ‖ ra`.
    /// `k` is the TK, `r` the sender's random number, `pairingRequest` and `pairingResponse` the
    /// two PDUs exchanged (their 7 octets as sent), `initiator` and `responder` the two addresses
    /// with their types.
    public static func legacyConfirmValue(
        k: UInt128, r: UInt128, pairingRequest: SMPPairingParameters, pairingResponse: SMPPairingParameters,
        initiator: DeviceAddress, responder: DeviceAddress
    ) -> UInt128 {
        // The PDUs as numbers: their first octet on the wire is the least significant.
        let preq = UInt128(bigEndianBytes: SMPPDU.pairingRequest(pairingRequest).encoded.reversed())
        let pres = UInt128(bigEndianBytes: SMPPDU.pairingResponse(pairingResponse).encoded.reversed())
        let p1 = pres << 72 | preq << 16 | UInt128(responder.smpAddressType) << 8 | UInt128(initiator.smpAddressType)
        let p2 = UInt128(initiator.address.value) << 48 | UInt128(responder.address.value)
        return encrypt(encrypt(r ^ p1, key: k) ^ p2, key: k)
    }

    /// s1 (2.2.4): the STK of legacy pairing, `e(k, r1' ‖ r2')` where r1' and r2' are the least
    /// significant 64 bits of `r1` and `r2`. Called with the TK, the responder's random number
    /// (Srand) as `r1` and the initiator's (Mrand) as `r2`.
    public static func legacyShortTermKey(k: UInt128, r1: UInt128, r2: UInt128) -> UInt128 {
        let lower64: UInt128 = 0xFFFF_FFFF_FFFF_FFFF
        return encrypt((r1 & lower64) << 64 | (r2 & lower64), key: k)
    }

    // MARK: Privacy

    /// ah (2.2.2): the random address hash, `e(k, padding ‖ r) mod 2²⁴`, with the IRK `k` and the
    /// 24-bit `r` (prand; higher bits are ignored). The result is in the low 24 bits.
    public static func randomAddressHash(irk k: UInt128, prand r: UInt32) -> UInt32 {
        UInt32(truncatingIfNeeded: encrypt(UInt128(r & 0xFF_FFFF), key: k)) & 0xFF_FFFF
    }
}

extension BluetoothAddress {
    /// Whether this is a resolvable private address made with `irk` (Core Vol 6 Part B 1.3.2.3):
    /// its two most significant bits are `01`, and the hash in its low 24 bits is ah of the IRK
    /// and prand, its high 24 bits. Only meaningful for an address whose type is random.
    public func isResolvable(with irk: UInt128) -> Bool {
        guard randomKind == .resolvablePrivate else { return false }
        let prand = UInt32(truncatingIfNeeded: value >> 24)
        let hash = UInt32(truncatingIfNeeded: value) & 0xFF_FFFF
        return SMPCrypto.randomAddressHash(irk: irk, prand: prand) == hash
    }
}

extension BluetoothAddress {
    /// A fresh resolvable private address made with `irk` (Core Vol 6 Part B 1.3.2.2): prand's
    /// two most significant bits `01` and its 22 random bits neither all 0 nor all 1, in the
    /// high 24 bits; ah(`irk`, prand) in the low 24. A peer holding the IRK (distributed when
    /// bonding) resolves it with ``isResolvable(with:)``; to anyone else it is a random number
    /// that changes with every rotation.
    public static func resolvablePrivate<Generator: RandomNumberGenerator>(
        irk: UInt128, using generator: inout Generator
    ) -> BluetoothAddress {
        while true {
            let random = UInt32(truncatingIfNeeded: generator.next()) & 0x3F_FFFF
            guard random != 0, random != 0x3F_FFFF else { continue }
            let prand = 0x40_0000 | random
            let hash = SMPCrypto.randomAddressHash(irk: irk, prand: prand)
            return BluetoothAddress(UInt64(prand) << 24 | UInt64(hash))
        }
    }

    /// ``resolvablePrivate(irk:using:)`` with the system's random number generator.
    public static func resolvablePrivate(irk: UInt128) -> BluetoothAddress {
        var generator = SystemRandomNumberGenerator()
        return resolvablePrivate(irk: irk, using: &generator)
    }
}
