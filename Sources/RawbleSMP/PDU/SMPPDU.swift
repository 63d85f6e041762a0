import RawbleWire

/// One Security Manager Protocol PDU, as sent on the LE Security Manager channel (CID 0x0006):
/// every command of Core Vol 3 Part H 3.5 and 3.6, typed, decoded strictly and encoded to the
/// exact bytes.
///
/// Decoding never traps. A PDU of the wrong length (`decode(_:)` is handed exactly one PDU), an
/// unknown command code or a field holding a value the specification reserves is a `WireError`
/// naming the byte: `.truncated` or `.trailingBytes` for the length, `.unknownValue` at byte 0
/// for the code, `.invalidValue` at the field for a reserved value. A pairing that receives one
/// answers Pairing Failed, Command Not Supported for an unknown code and Invalid Parameters for
/// the rest (Part H 3.5.5).
///
/// Reserved *bits* are not reserved *values*: the RFU bits of AuthReq and of the key
/// distribution fields are kept as received (the receiver ignores them, Part H 3.5.1), so every
/// PDU that decodes encodes back to the same bytes.
///
/// Multi-octet fields are little-endian on the wire; keys, random numbers and confirm and check
/// values are 128-bit numbers here (`UInt128`), so they compare directly with the
/// specification's sample data, which it prints most significant octet first.
public enum SMPPDU: Hashable, Sendable, WireEncodable, WireDecodable {
    /// The initiator's IO capability, OOB flag, authentication requirements, key size and key
    /// distribution: it starts pairing (3.5.1). The maximum key size is 7–16 octets.
    case pairingRequest(SMPPairingParameters)
    /// The responder's answer to a Pairing Request, in the same format (3.5.2).
    case pairingResponse(SMPPairingParameters)
    /// A confirm value: c1 in legacy pairing, f4 in LE Secure Connections (3.5.3).
    case pairingConfirm(UInt128)
    /// The random number the confirm value was computed with (3.5.4).
    case pairingRandom(UInt128)
    /// Pairing stopped, and why (3.5.5). Reasons the specification has not named yet are kept.
    case pairingFailed(SMPPairingFailureReason)
    /// The Long Term Key a side distributes (3.6.2).
    case encryptionInformation(longTermKey: UInt128)
    /// EDIV and Rand, which identify a legacy-pairing LTK on reconnection (3.6.3).
    case centralIdentification(encryptedDiversifier: UInt16, random: UInt64)
    /// The Identity Resolving Key a side distributes (3.6.4).
    case identityInformation(identityResolvingKey: UInt128)
    /// The public or static random address the IRK belongs to (3.6.5): the type is `.public` or
    /// `.random` (the other address types have no encoding here).
    case identityAddressInformation(DeviceAddress)
    /// The Connection Signature Resolving Key a side distributes (3.6.6).
    case signingInformation(signatureKey: UInt128)
    /// A peripheral asks the central to pair or to encrypt (3.6.7).
    case securityRequest(SMPAuthenticationRequirements)
    /// A side's P-256 public key, LE Secure Connections only (3.5.6).
    case pairingPublicKey(PairingPublicKey)
    /// The DHKey check value, f6 (3.5.7).
    case pairingDHKeyCheck(UInt128)
    /// Passkey Entry progress on a keyboard side that asked for keypress notifications (3.5.8).
    case keypressNotification(SMPKeypressNotificationType)

    /// The command code, the PDU's first byte.
    public var code: SMPCode {
        switch self {
        case .pairingRequest: .pairingRequest
        case .pairingResponse: .pairingResponse
        case .pairingConfirm: .pairingConfirm
        case .pairingRandom: .pairingRandom
        case .pairingFailed: .pairingFailed
        case .encryptionInformation: .encryptionInformation
        case .centralIdentification: .centralIdentification
        case .identityInformation: .identityInformation
        case .identityAddressInformation: .identityAddressInformation
        case .signingInformation: .signingInformation
        case .securityRequest: .securityRequest
        case .pairingPublicKey: .pairingPublicKey
        case .pairingDHKeyCheck: .pairingDHKeyCheck
        case .keypressNotification: .keypressNotification
        }
    }

    /// Decodes one PDU that fills `bytes` exactly; see the type's documentation for the errors.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> SMPPDU {
        var r = ByteReader(bytes, context: "SMP PDU")
        let start = r.offset
        let code = SMPCode(try r.readUInt8())
        r.context = "SMP \(code.name)"
        let pdu: SMPPDU
        switch code {
        case .pairingRequest: pdu = .pairingRequest(try readPairingParameters(&r))
        case .pairingResponse: pdu = .pairingResponse(try readPairingParameters(&r))
        case .pairingConfirm: pdu = .pairingConfirm(try r.readUInt128())
        case .pairingRandom: pdu = .pairingRandom(try r.readUInt128())
        case .pairingFailed: pdu = .pairingFailed(SMPPairingFailureReason(try r.readUInt8()))
        case .encryptionInformation: pdu = .encryptionInformation(longTermKey: try r.readUInt128())
        case .centralIdentification:
            pdu = .centralIdentification(encryptedDiversifier: try r.readUInt16(), random: try r.readUInt64())
        case .identityInformation: pdu = .identityInformation(identityResolvingKey: try r.readUInt128())
        case .identityAddressInformation:
            let typeOffset = r.offset
            let type: LEAddressType
            switch try r.readUInt8() {
            case 0x00: type = .public
            case 0x01: type = .random
            case let reserved:
                throw r.error(.invalidValue("address type 0x\(Hex.padded(reserved, digits: 2)) is reserved (0x00 public, 0x01 random)"), at: typeOffset)
            }
            pdu = .identityAddressInformation(DeviceAddress(try r.readAddress(), type: type))
        case .signingInformation: pdu = .signingInformation(signatureKey: try r.readUInt128())
        case .securityRequest: pdu = .securityRequest(SMPAuthenticationRequirements(rawValue: try r.readUInt8()))
        case .pairingPublicKey:
            pdu = .pairingPublicKey(PairingPublicKey(x: try r.readP256Coordinate(), y: try r.readP256Coordinate()))
        case .pairingDHKeyCheck: pdu = .pairingDHKeyCheck(try r.readUInt128())
        case .keypressNotification:
            let typeOffset = r.offset
            let raw = try r.readUInt8()
            guard let type = SMPKeypressNotificationType(rawValue: raw) else {
                throw r.error(.invalidValue("notification type 0x\(Hex.padded(raw, digits: 2)) is reserved (0x00–0x04)"), at: typeOffset)
            }
            pdu = .keypressNotification(type)
        default:
            throw WireError(.unknownValue(UInt64(code.rawValue)), at: start, in: "SMP PDU")
        }
        try r.expectEnd()
        return pdu
    }

    /// The six parameter bytes of a Pairing Request or Response, each reserved value refused.
    private static func readPairingParameters(_ r: inout ByteReader) throws(WireError) -> SMPPairingParameters {
        let ioOffset = r.offset
        let ioCapability = SMPIOCapability(try r.readUInt8())
        guard ioCapability.rawValue <= SMPIOCapability.keyboardDisplay.rawValue else {
            throw r.error(.invalidValue("IO capability 0x\(Hex.padded(ioCapability.rawValue, digits: 2)) is reserved (0x00–0x04)"), at: ioOffset)
        }
        let oobOffset = r.offset
        let oobDataFlag = try r.readUInt8()
        guard oobDataFlag <= 1 else {
            throw r.error(.invalidValue("OOB data flag 0x\(Hex.padded(oobDataFlag, digits: 2)) is reserved (0x00 absent, 0x01 present)"), at: oobOffset)
        }
        let authenticationRequirements = SMPAuthenticationRequirements(rawValue: try r.readUInt8())
        let keySizeOffset = r.offset
        let maximumKeySize = try r.readUInt8()
        guard SMPPDU.encryptionKeySizes.contains(maximumKeySize) else {
            throw r.error(.invalidValue("maximum encryption key size \(maximumKeySize) is outside 7–16 octets"), at: keySizeOffset)
        }
        return SMPPairingParameters(
            ioCapability: ioCapability, oobDataFlag: oobDataFlag,
            authenticationRequirements: authenticationRequirements, maximumEncryptionKeySize: maximumKeySize,
            initiatorKeyDistribution: SMPKeyDistribution(rawValue: try r.readUInt8()),
            responderKeyDistribution: SMPKeyDistribution(rawValue: try r.readUInt8()))
    }

    /// The encryption key sizes, in octets, a Pairing Request or Response may offer (3.5.1).
    public static let encryptionKeySizes: ClosedRange<UInt8> = 7...16

    public func encode(into writer: inout ByteWriter) {
        // The wire layer's SMPCommand writes these two already, in exactly this format (the
        // host's refusal of pairing reads them).
        if case .pairingRequest(let parameters) = self { return SMPCommand.pairingRequest(parameters).encode(into: &writer) }
        if case .pairingResponse(let parameters) = self { return SMPCommand.pairingResponse(parameters).encode(into: &writer) }
        writer.write(code.rawValue)
        switch self {
        case .pairingRequest, .pairingResponse:
            break  // written above
        case .pairingConfirm(let value), .pairingRandom(let value), .pairingDHKeyCheck(let value),
             .encryptionInformation(let value), .identityInformation(let value), .signingInformation(let value):
            writer.writeUInt128(value)
        case .pairingFailed(let reason):
            writer.write(reason.rawValue)
        case .centralIdentification(let ediv, let random):
            writer.write(ediv)
            writer.write(random)
        case .identityAddressInformation(let address):
            writer.write(address.smpAddressType)
            writer.write(address.address)
        case .securityRequest(let requirements):
            writer.write(requirements.rawValue)
        case .pairingPublicKey(let key):
            writer.writeP256Coordinate(key.x)
            writer.writeP256Coordinate(key.y)
        case .keypressNotification(let type):
            writer.write(type.rawValue)
        }
    }
}
