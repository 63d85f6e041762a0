import RawbleSMP
import RawbleWire
import Testing

// Known answers. Every value is written as its source prints it, most significant octet first.
// The Bluetooth Core Specification's sample data (Vol 3 Part H: the worked examples of 2.2.3 and
// 2.2.4, and Appendix D) was read from public implementations that carry it: Google Bumble's
// tests/smp_test.py (github.com/google/bumble), cross-checked against other open-source SMP test
// suites that print the same tables with their section numbers. The AES-CMAC examples are RFC
// 4493's own (section 4), which Appendix D.1 reproduces.

/// A P-256 coordinate from 64 hex digits printed most significant octet first, spaces allowed.
private func coordinate(_ hex: String) throws -> P256Coordinate {
    try #require(P256Coordinate(bigEndianBytes: try Hex.decode(hex)))
}

@Suite("SMP cryptographic toolbox: AES-128 and AES-CMAC")
struct AESTests {
    /// RFC 4493 section 4 (and Core Vol 3 Part H Appendix D.1): the key of every example.
    static let rfc4493Key: UInt128 = 0x2b7e1516_28aed2a6_abf71588_09cf4f3c

    @Test func theSecurityFunctionEIsAES128OfOneBlock() throws {
        // FIPS-197 Appendix C.1, the AES-128 example.
        #expect(SMPCrypto.encrypt(0x00112233_44556677_8899aabb_ccddeeff, key: 0x00010203_04050607_08090a0b_0c0d0e0f)
            == 0x69c4e0d8_6a7b0430_d8cdb780_70b4c55a)
        // RFC 4493 section 4, subkey generation: AES-128(K, 0).
        #expect(SMPCrypto.encrypt(0, key: Self.rfc4493Key) == 0x7df76b0c_1ab899b3_3e42f047_b91b546f)
        // Core Vol 3 Part H Appendix D.7: the AES_128 line of ah's sample data.
        #expect(SMPCrypto.encrypt(0x708194, key: 0xec0234a3_57c8ad05_341010a6_0a397d9b)
            == 0x159d5fb7_2ebe2311_a48c1bdc_c40dfbaa)
    }

    @Test func rfc4493Example1EmptyMessage() {
        #expect(SMPCrypto.cmac([], key: Self.rfc4493Key) == 0xbb1d6929_e9593728_7fa37d12_9b756746)
    }

    @Test func rfc4493Example2OneWholeBlock() throws {
        let message = try Hex.decode("6bc1bee2 2e409f96 e93d7e11 7393172a")
        #expect(SMPCrypto.cmac(message, key: Self.rfc4493Key) == 0x070a16b4_6b4d4144_f79bdd9d_d04a287c)
    }

    @Test func rfc4493Example3TwoAndAHalfBlocks() throws {
        let message = try Hex.decode("""
            6bc1bee2 2e409f96 e93d7e11 7393172a ae2d8a57 1e03ac9c 9eb76fac 45af8e51
            30c81c46 a35ce411
            """)
        #expect(message.count == 40)
        #expect(SMPCrypto.cmac(message, key: Self.rfc4493Key) == 0xdfa66747_de9ae630_30ca3261_1497c827)
    }

    @Test func rfc4493Example4FourWholeBlocks() throws {
        let message = try Hex.decode("""
            6bc1bee2 2e409f96 e93d7e11 7393172a ae2d8a57 1e03ac9c 9eb76fac 45af8e51
            30c81c46 a35ce411 e5fbc119 1a0a52ef f69f2445 df4f9b17 ad2b417b e66c3710
            """)
        #expect(message.count == 64)
        #expect(SMPCrypto.cmac(message, key: Self.rfc4493Key) == 0x51f0bebf_7e3b9d92_fc497417_79363cfe)
    }
}

@Suite("SMP cryptographic toolbox: LE Secure Connections (Core Vol 3 Part H Appendix D)")
struct SecureConnectionsFunctionTests {
    // The inputs Appendix D's tables share.
    static let u = "20b003d2 f297be2c 5e2c83a7 e9f9a5b9 eff49111 acf4fddb cc030148 0e359de6"
    static let v = "55188b3d 32f6bb9a 900afcfb eed4e72a 59cb9ac2 f19d7cfb 6b4fdd49 f47fc5fd"
    static let n1: UInt128 = 0xd5cb8454_d177733e_ffffb2ec_712baeab
    static let n2: UInt128 = 0xa6e8e7cc_25a75f6e_216583f7_ff3dc4cf
    /// A1 = 00561237 37bfce: type 0 (public), address 56:12:37:37:BF:CE.
    static let a1 = DeviceAddress(BluetoothAddress(0x56_12_37_37_BF_CE), type: .public)
    /// A2 = 00a71370 2dcfc1: type 0 (public), address A7:13:70:2D:CF:C1.
    static let a2 = DeviceAddress(BluetoothAddress(0xA7_13_70_2D_CF_C1), type: .public)

    @Test func f4D2() throws {
        let value = SMPCrypto.confirmValue(u: try coordinate(Self.u), v: try coordinate(Self.v), x: Self.n1, z: 0)
        #expect(value == 0xf2c916f1_07a9bd1c_f1eda1be_a974872d)
    }

    @Test func f5D3() throws {
        let w = try coordinate("ec0234a3 57c8ad05 341010a6 0a397d9b 99796b13 b4f866f1 868d34f3 73bfa698")
        let keys = SMPCrypto.macKeyAndLongTermKey(w: w, n1: Self.n1, n2: Self.n2, a1: Self.a1, a2: Self.a2)
        #expect(keys.macKey == 0x2965f176_a1084a02_fd3f6a20_ce636e20)
        #expect(keys.longTermKey == 0x69867911_69d7cd23_980522b5_94750a38)
        // The table's intermediate T: AES-CMAC of W keyed with the SALT of 2.2.7.
        #expect(SMPCrypto.cmac(w.bigEndianBytes, key: 0x6C888391_AAF5A538_60370BDB_5A6083BE)
            == 0x3c128f20_de883288_97624bdb_8dac6989)
    }

    @Test func f6D4() throws {
        // IOcap = 010102: AuthReq 0x01 (bonding), OOB data flag 0x01, IO capability 0x02 (KeyboardOnly).
        let ioCapabilities = SMPPairingParameters(
            ioCapability: .keyboardOnly, oobDataFlag: 1, authenticationRequirements: .bonding,
            initiatorKeyDistribution: [], responderKeyDistribution: [])
        let value = SMPCrypto.checkValue(
            w: 0x2965f176_a1084a02_fd3f6a20_ce636e20, n1: Self.n1, n2: Self.n2, r: 0x12a3343b_b453bb54_08da42d2_0c2d0fc8,
            ioCapabilities: ioCapabilities, a1: Self.a1, a2: Self.a2)
        #expect(value == 0xe3c47398_9cd0e8c5_d26c0b09_da958f61)
    }

    @Test func f5AndF6TellTheAddressTypesApart() throws {
        // Not sample data: the same inputs with A1 random must give other keys, or the type octet is lost.
        let w = try coordinate("ec0234a3 57c8ad05 341010a6 0a397d9b 99796b13 b4f866f1 868d34f3 73bfa698")
        let random = DeviceAddress(Self.a1.address, type: .random)
        let keys = SMPCrypto.macKeyAndLongTermKey(w: w, n1: Self.n1, n2: Self.n2, a1: random, a2: Self.a2)
        #expect(keys.macKey != 0x2965f176_a1084a02_fd3f6a20_ce636e20)
        #expect(keys.longTermKey != 0x69867911_69d7cd23_980522b5_94750a38)
        // A public identity address is public.
        let identity = DeviceAddress(Self.a1.address, type: .publicIdentity)
        #expect(SMPCrypto.macKeyAndLongTermKey(w: w, n1: Self.n1, n2: Self.n2, a1: identity, a2: Self.a2).macKey
            == 0x2965f176_a1084a02_fd3f6a20_ce636e20)
    }

    @Test func g2D5() throws {
        let value = SMPCrypto.numericComparisonValue(u: try coordinate(Self.u), v: try coordinate(Self.v), x: Self.n1, y: Self.n2)
        #expect(value == 0x2f9ed5ba)
        // What both sides display: the value modulo 10^6.
        #expect(value % 1_000_000 == 938_554)
    }
}

@Suite("SMP cryptographic toolbox: legacy pairing and privacy")
struct LegacyAndPrivacyFunctionTests {
    @Test func c1WorkedExampleOf2_2_3() throws {
        // preq = 0x07071000000101 and pres = 0x05000800000302: the PDUs, first wire octet least significant.
        guard case .pairingRequest(let request) = try SMPPDU.decode(Hex.decode("01 01 00 00 10 07 07")),
              case .pairingResponse(let response) = try SMPPDU.decode(Hex.decode("02 03 00 00 08 00 05"))
        else {
            Issue.record("the example's PDUs did not decode as a Pairing Request and Response")
            return
        }
        // iat = 1 (random), rat = 0 (public); ia = A1A2A3A4A5A6, ra = B1B2B3B4B5B6.
        let value = SMPCrypto.legacyConfirmValue(
            k: 0, r: 0x5783D521_56AD6F0E_6388274E_C6702EE0, pairingRequest: request, pairingResponse: response,
            initiator: DeviceAddress(BluetoothAddress(0xA1A2_A3A4_A5A6), type: .random),
            responder: DeviceAddress(BluetoothAddress(0xB1B2_B3B4_B5B6), type: .public))
        #expect(value == 0x1e1e3fef_878988ea_d2a74dc5_bef13b86)
    }

    @Test func s1WorkedExampleOf2_2_4() {
        let value = SMPCrypto.legacyShortTermKey(
            k: 0, r1: 0x000F0E0D_0C0B0A09_11223344_55667788, r2: 0x01020304_05060708_99AABBCC_DDEEFF00)
        #expect(value == 0x9a1fe1f0_e8b0f49b_5b4216ae_796da062)
    }

    static let irk: UInt128 = 0xec0234a3_57c8ad05_341010a6_0a397d9b

    @Test func ahD7() {
        #expect(SMPCrypto.randomAddressHash(irk: Self.irk, prand: 0x708194) == 0x0dfbaa)
        // Bits above the 24 of prand are not part of r.
        #expect(SMPCrypto.randomAddressHash(irk: Self.irk, prand: 0xFF70_8194) == 0x0dfbaa)
    }

    @Test func aResolvablePrivateAddressResolvesWithItsIRKOnly() throws {
        // D.7's prand and hash make the address 70:81:94:0D:FB:AA (prand's top bits 01: resolvable).
        let address = try #require(BluetoothAddress("70:81:94:0D:FB:AA"))
        #expect(address.isResolvable(with: Self.irk))
        #expect(!address.isResolvable(with: Self.irk ^ 1))
        #expect(!(try #require(BluetoothAddress("70:81:94:0D:FB:AB"))).isResolvable(with: Self.irk))
        // The same 46 low bits under another random-address kind are not a resolvable address.
        #expect(!(try #require(BluetoothAddress("F0:81:94:0D:FB:AA"))).isResolvable(with: Self.irk))
    }
}

@Suite("P-256 keys and the DHKey")
struct PairingKeyPairTests {
    // The specification's P-256 sample data (data set 1), as Bumble's tests/smp_test.py test_ecc
    // carries it "from the spec". Private A and public A are also the SMP debug key pair of
    // Core Vol 3 Part H 2.3.5.6.1; the DHKey is Appendix D.3's W.
    static let privateA = "3f49f6d4 a3c55f38 74c9b3e3 d2103f50 4aff607b eb40b799 5899b8a6 cd3c1abd"
    static let privateB = "55188b3d 32f6bb9a 900afcfb eed4e72a 59cb9ac2 f19d7cfb 6b4fdd49 f47fc5fd"
    static let publicAX = "20b003d2 f297be2c 5e2c83a7 e9f9a5b9 eff49111 acf4fddb cc030148 0e359de6"
    static let publicAY = "dc809c49 652aeb6d 63329abf 5a52155c 766345c2 8fed3024 741c8ed0 1589d28b"
    static let publicBX = "1ea1f0f0 1faf1d96 09592284 f19e4c00 47b58afd 8615a69f 559077b2 2faaa190"
    static let publicBY = "4c55f33e 429dad37 7356703a 9ab85160 472d1130 e28e3676 5f89aff9 15b1214a"
    static let dhKey = "ec0234a3 57c8ad05 341010a6 0a397d9b 99796b13 b4f866f1 868d34f3 73bfa698"

    /// The field's prime p of P-256.
    static let prime = P256Coordinate(high: 0xffffffff_00000001_00000000_00000000, low: 0x00000000_ffffffff_ffffffff_ffffffff)
    /// The curve's order n.
    static let order = P256Coordinate(high: 0xffffffff_00000000_ffffffff_ffffffff, low: 0xbce6faad_a7179e84_f3b9cac2_fc632551)

    @Test func theSampleKeysGiveTheSamplePublicKeysAndDHKey() throws {
        let a = try PairingKeyPair(privateKey: coordinate(Self.privateA))
        let b = try PairingKeyPair(privateKey: coordinate(Self.privateB))
        #expect(try a.publicKey == PairingPublicKey(x: coordinate(Self.publicAX), y: coordinate(Self.publicAY)))
        #expect(try b.publicKey == PairingPublicKey(x: coordinate(Self.publicBX), y: coordinate(Self.publicBY)))
        #expect(try a.dhKey(with: b.publicKey) == coordinate(Self.dhKey))
        #expect(try b.dhKey(with: a.publicKey) == coordinate(Self.dhKey))
    }

    @Test func freshKeyPairsAgreeAndDiffer() throws {
        let a = PairingKeyPair()
        let b = PairingKeyPair()
        #expect(a.publicKey != b.publicKey)
        #expect(try a.dhKey(with: b.publicKey) == b.dhKey(with: a.publicKey))
    }

    /// The DHKey with `key`, or the error.
    private func dhKeyResult(_ key: PairingPublicKey) throws -> Result<P256Coordinate, SMPKeyError> {
        let a = try PairingKeyPair(privateKey: coordinate(Self.privateA))
        do throws(SMPKeyError) {
            return .success(try a.dhKey(with: key))
        } catch {
            return .failure(error)
        }
    }

    @Test func aPublicKeyOffTheCurveByOneIsRefused() throws {
        let y = try coordinate(Self.publicBY)
        let key = PairingPublicKey(x: try coordinate(Self.publicBX), y: P256Coordinate(high: y.high, low: y.low + 1))
        #expect(try dhKeyResult(key) == .failure(.publicKeyNotOnCurve))
    }

    @Test func aPublicKeyWithItsYZeroedIsRefused() throws {
        // CVE-2018-5383: an attacker in the middle zeroes Y; only X reaches f4 and g2.
        let key = PairingPublicKey(x: try coordinate(Self.publicBX), y: P256Coordinate(high: 0, low: 0))
        #expect(try dhKeyResult(key) == .failure(.publicKeyNotOnCurve))
    }

    @Test func theOriginIsRefused() throws {
        let zero = P256Coordinate(high: 0, low: 0)
        #expect(try dhKeyResult(PairingPublicKey(x: zero, y: zero)) == .failure(.publicKeyNotOnCurve))
    }

    @Test func aCoordinateNotBelowThePrimeIsRefused() throws {
        #expect(try dhKeyResult(PairingPublicKey(x: Self.prime, y: try coordinate(Self.publicBY))) == .failure(.publicKeyNotOnCurve))
        let ones = P256Coordinate(high: .max, low: .max)
        #expect(try dhKeyResult(PairingPublicKey(x: ones, y: ones)) == .failure(.publicKeyNotOnCurve))
    }

    @Test func swappedCoordinatesAreRefused() throws {
        let key = PairingPublicKey(x: try coordinate(Self.publicBY), y: try coordinate(Self.publicBX))
        #expect(try dhKeyResult(key) == .failure(.publicKeyNotOnCurve))
    }

    @Test func ourOwnPublicKeySentBackIsRefused() throws {
        let a = try PairingKeyPair(privateKey: coordinate(Self.privateA))
        #expect(try dhKeyResult(a.publicKey) == .failure(.publicKeyHasOurX))
    }

    @Test func theSameKeysUnchangedAreAccepted() throws {
        // The counterpart of the refusals above: only the change made each of them fail.
        let key = PairingPublicKey(x: try coordinate(Self.publicBX), y: try coordinate(Self.publicBY))
        #expect(try dhKeyResult(key) == .success(coordinate(Self.dhKey)))
    }

    @Test func privateKeysOutsideOneToTheOrderAreRefused() throws {
        for scalar in [P256Coordinate(high: 0, low: 0), Self.order, P256Coordinate(high: .max, low: .max)] {
            #expect(throws: SMPKeyError.invalidPrivateKey) { try PairingKeyPair(privateKey: scalar) }
        }
        // The largest valid one, n − 1, is accepted.
        let largest = P256Coordinate(high: Self.order.high, low: Self.order.low - 1)
        #expect(throws: Never.self) { try PairingKeyPair(privateKey: largest) }
    }

    @Test func coordinatesConvertFromAndToTheirBytes() throws {
        let x = try coordinate(Self.publicAX)
        #expect(x.high == 0x20b003d2_f297be2c_5e2c83a7_e9f9a5b9)
        #expect(x.low == 0xeff49111_acf4fddb_cc030148_0e359de6)
        #expect(x.bigEndianBytes == (try Hex.decode(Self.publicAX)))
        #expect(x.description == String(Self.publicAX.filter { $0 != " " }))
        #expect(P256Coordinate(bigEndianBytes: [UInt8](repeating: 1, count: 31)) == nil)
        #expect(P256Coordinate(bigEndianBytes: [UInt8](repeating: 1, count: 33)) == nil)
    }
}
