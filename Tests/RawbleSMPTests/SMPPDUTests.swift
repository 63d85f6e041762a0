import RawbleSMP
import RawbleWire
import Testing

/// Why `input` does not decode, or `nil` when it does.
private func decodingError(_ input: [UInt8]) -> WireError? {
    do {
        _ = try SMPPDU.decode(input)
        return nil
    } catch {
        return error
    }
}

/// A 128-bit value's 16 wire octets, least significant first.
private func wire(_ value: UInt128) -> [UInt8] {
    (0..<16).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
}

@Suite("SMP PDUs")
struct SMPPDUTests {
    static let value: UInt128 = 0xf2c916f1_07a9bd1c_f1eda1be_a974872d
    /// The debug public key (Core Vol 3 Part H 2.3.5.6.1).
    static let debugKey = PairingPublicKey(
        x: P256Coordinate(high: 0x20b003d2_f297be2c_5e2c83a7_e9f9a5b9, low: 0xeff49111_acf4fddb_cc030148_0e359de6),
        y: P256Coordinate(high: 0xdc809c49_652aeb6d_63329abf_5a52155c, low: 0x766345c2_8fed3024_741c8ed0_1589d28b))

    /// One of every PDU, with its bytes as a peer sends them.
    static func examples() throws -> [(SMPPDU, [UInt8])] {
        let phone = SMPPairingParameters(
            ioCapability: .keyboardDisplay, oobDataFlag: 0,
            authenticationRequirements: [.bonding, .mitm, .secureConnections, .ct2], maximumEncryptionKeySize: 16,
            initiatorKeyDistribution: [.encryptionKey, .identityKey, .signingKey, .linkKey],
            responderKeyDistribution: [.encryptionKey, .identityKey, .signingKey, .linkKey])
        let strap = SMPPairingParameters(
            ioCapability: .noInputNoOutput, authenticationRequirements: .bonding, maximumEncryptionKeySize: 7,
            initiatorKeyDistribution: [], responderKeyDistribution: .encryptionKey)
        let valueBytes = try Hex.decode("2d 87 74 a9 be a1 ed f1 1c bd a9 07 f1 16 c9 f2")
        let debugKeyBytes = try Hex.decode("""
            e6 9d 35 0e 48 01 03 cc db fd f4 ac 11 91 f4 ef b9 a5 f9 e9 a7 83 2c 5e 2c be 97 f2 d2 03 b0 20
            8b d2 89 15 d0 8e 1c 74 24 30 ed 8f c2 45 63 76 5c 15 52 5a bf 9a 32 63 6d eb 2a 65 49 9c 80 dc
            """)
        // One statement each, so the type checker never sees one long literal of operators.
        var examples: [(SMPPDU, [UInt8])] = []
        examples.append((.pairingRequest(phone), try Hex.decode("01 04 00 2D 10 0F 0F")))
        examples.append((.pairingResponse(strap), try Hex.decode("02 03 00 01 07 00 01")))
        examples.append((.pairingConfirm(Self.value), [0x03] + valueBytes))
        examples.append((.pairingRandom(Self.value), [0x04] + valueBytes))
        examples.append((.pairingFailed(.dhKeyCheckFailed), [0x05, 0x0B]))
        examples.append((.encryptionInformation(longTermKey: Self.value), [0x06] + valueBytes))
        examples.append((.centralIdentification(encryptedDiversifier: 0x1234, random: 0x1122_3344_5566_7788),
                         try Hex.decode("07 34 12 88 77 66 55 44 33 22 11")))
        examples.append((.identityInformation(identityResolvingKey: Self.value), [0x08] + valueBytes))
        examples.append((.identityAddressInformation(DeviceAddress(BluetoothAddress(0x56_12_37_37_BF_CE), type: .public)),
                         try Hex.decode("09 00 CE BF 37 37 12 56")))
        examples.append((.signingInformation(signatureKey: Self.value), [0x0A] + valueBytes))
        examples.append((.securityRequest([.bonding, .mitm, .secureConnections]), [0x0B, 0x0D]))
        examples.append((.pairingPublicKey(Self.debugKey), [0x0C] + debugKeyBytes))
        examples.append((.pairingDHKeyCheck(Self.value), [0x0D] + valueBytes))
        examples.append((.keypressNotification(.passkeyDigitEntered), [0x0E, 0x01]))
        return examples
    }

    @Test func everyPDUDecodesFromAndEncodesToItsBytes() throws {
        let examples = try Self.examples()
        #expect(examples.map { $0.0.code.rawValue } == Array(UInt8(0x01)...0x0E))
        for (pdu, bytes) in examples {
            #expect(try SMPPDU.decode(bytes) == pdu, "\(pdu.code)")
            #expect(pdu.encoded == bytes, "\(pdu.code)")
            #expect(pdu.code == SMPCode(bytes[0]))
        }
    }

    @Test func everyPDUHasTheLengthOfPartH3() throws {
        // Code octet included (Core Vol 3 Part H 3.5 and 3.6).
        let lengths: [UInt8: Int] = [
            0x01: 7, 0x02: 7, 0x03: 17, 0x04: 17, 0x05: 2, 0x06: 17, 0x07: 11,
            0x08: 17, 0x09: 8, 0x0A: 17, 0x0B: 2, 0x0C: 65, 0x0D: 17, 0x0E: 2,
        ]
        for (pdu, _) in try Self.examples() {
            #expect(pdu.encoded.count == lengths[pdu.code.rawValue], "\(pdu.code)")
        }
    }

    @Test func multiOctetValuesAreLittleEndianOnTheWire() throws {
        #expect(SMPPDU.pairingConfirm(1).encoded == [0x03, 0x01] + [UInt8](repeating: 0, count: 15))
        #expect(SMPPDU.pairingRandom(Self.value).encoded == [0x04] + wire(Self.value))
        // Public key: X's least significant octet first, then Y's.
        let key = SMPPDU.pairingPublicKey(PairingPublicKey(
            x: P256Coordinate(high: 0, low: 0x01), y: P256Coordinate(high: 0x02 << 120, low: 0))).encoded
        #expect(key[1] == 0x01 && key[64] == 0x02)
        #expect(key.filter { $0 != 0 } == [0x0C, 0x01, 0x02])
    }

    @Test func aTruncatedPDUIsRefused() throws {
        for (pdu, bytes) in try Self.examples() {
            let error = decodingError(Array(bytes.dropLast()))
            guard case .truncated? = error?.kind else {
                Issue.record("\(pdu.code) one octet short: \(String(describing: error))")
                continue
            }
        }
        #expect(decodingError([])?.kind == .truncated(needed: 1, available: 0))
    }

    @Test func anOverlongPDUIsRefused() throws {
        for (pdu, bytes) in try Self.examples() {
            let error = decodingError(bytes + [0x00])
            #expect(error?.kind == .trailingBytes(count: 1), "\(pdu.code)")
            #expect(error?.offset == bytes.count, "\(pdu.code)")
            #expect(error?.context == "SMP \(pdu.code.name)")
        }
    }

    @Test(arguments: [UInt8(0x00), 0x0F, 0x10, 0x7F, 0xFF])
    func anUnknownCodeIsRefusedAtByteZero(code: UInt8) {
        for input in [[code], [code, 0x01], [code] + [UInt8](repeating: 0xAA, count: 16)] {
            let error = decodingError(input)
            #expect(error?.kind == .unknownValue(UInt64(code)))
            #expect(error?.offset == 0)
            #expect(error?.context == "SMP PDU")
        }
    }

    @Test func reservedValuesAreRefusedAtTheirField() throws {
        let cases: [(String, Int)] = [
            ("01 05 00 01 10 00 00", 1),  // IO capability 0x05
            ("02 FF 00 01 10 00 00", 1),  // IO capability 0xFF
            ("01 03 02 01 10 00 00", 2),  // OOB data flag 0x02
            ("01 03 00 01 06 00 00", 4),  // key size 6
            ("02 03 00 01 11 00 00", 4),  // key size 17
            ("01 03 00 01 00 00 00", 4),  // key size 0
            ("0E 05", 1),  // keypress notification type 0x05
            ("0E FF", 1),
            ("09 02 CE BF 37 37 12 56", 1),  // identity address type 0x02
        ]
        for (hex, offset) in cases {
            let error = decodingError(try Hex.decode(hex))
            guard case .invalidValue? = error?.kind else {
                Issue.record("\(hex): \(String(describing: error))")
                continue
            }
            #expect(error?.offset == offset, "\(hex)")
        }
    }

    @Test func theEdgesOfEachRangeAreAccepted() throws {
        for keySize in SMPPDU.encryptionKeySizes {
            #expect(decodingError([0x01, 0x04, 0x01, 0x00, keySize, 0x00, 0x00]) == nil)
        }
        #expect(SMPPDU.encryptionKeySizes == 7...16)
        for type in SMPKeypressNotificationType.allCases {
            #expect(try SMPPDU.decode([0x0E, type.rawValue]) == .keypressNotification(type))
        }
        #expect(try SMPPDU.decode(Hex.decode("09 01 CE BF 37 37 12 F6"))
            == .identityAddressInformation(DeviceAddress(BluetoothAddress(0xF6_12_37_37_BF_CE), type: .random)))
    }

    @Test func reservedBitsAndUnnamedReasonsAreKept() throws {
        // AuthReq's and the key distributions' RFU bits are ignored on receipt, so kept as received.
        let input = try Hex.decode("01 00 00 FF 10 FF F0")
        guard case .pairingRequest(let parameters) = try SMPPDU.decode(input) else {
            Issue.record("not a Pairing Request")
            return
        }
        #expect(parameters.authenticationRequirements.rawValue == 0xFF)
        #expect(parameters.initiatorKeyDistribution.rawValue == 0xFF)
        #expect(parameters.responderKeyDistribution.rawValue == 0xF0)
        #expect(SMPPDU.pairingRequest(parameters).encoded == input)
        #expect(try SMPPDU.decode([0x0B, 0xC0]) == .securityRequest(SMPAuthenticationRequirements(rawValue: 0xC0)))
        // A peer's failure reason is a failure whatever its number.
        #expect(try SMPPDU.decode([0x05, 0x42]) == .pairingFailed(SMPPairingFailureReason(0x42)))
        #expect(SMPPairingFailureReason(0x42).name == "Reserved")
    }

    @Test func everyAuthReqBitIsReadByItsName() throws {
        // Bonding flags 01, MITM, SC, keypress, CT2: 0b0011_1101.
        guard case .securityRequest(let requirements) = try SMPPDU.decode([0x0B, 0x3D]) else {
            Issue.record("not a Security Request")
            return
        }
        #expect(requirements == [.bonding, .mitm, .secureConnections, .keypress, .ct2])
        #expect(try SMPPDU.decode([0x0B, 0x00]) == .securityRequest([]))
    }

    @Test func theKeypressNotificationTypesHaveTheirSpecNames() {
        #expect(SMPKeypressNotificationType.allCases.map(\.description) == [
            "Passkey entry started", "Passkey digit entered", "Passkey digit erased", "Passkey cleared",
            "Passkey entry completed",
        ])
    }

    @Test func arbitraryBytesNeverTrapAndWhatDecodesEncodesBack() {
        // Every code with every length up to 70 octets, the octets from a fixed-seed generator:
        // the decoder throws or returns, and what it returns is exactly the input again.
        var state: UInt64 = 0x5EED_5A1E
        var decoded = 0
        for code in 0...255 {
            for length in 0...70 {
                var input: [UInt8] = [UInt8(code)]
                for _ in 0..<length {
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    // Small values often, so the reserved-value checks also pass.
                    let byte = UInt8(truncatingIfNeeded: state >> 56)
                    input.append(state & 1 == 0 ? byte % 17 : byte)
                }
                if let pdu = try? SMPPDU.decode(input) {
                    decoded += 1
                    #expect(pdu.encoded == input, "\(input)")
                }
            }
        }
        // Some of each PDU's exact-length inputs decode (the rest hit a reserved value).
        #expect(decoded >= 10)
    }
}
