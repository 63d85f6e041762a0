/// A Security Manager Protocol command code (Core Vol 3 Part H 3.3). Unknown codes keep
/// their number.
public struct SMPCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let pairingRequest = SMPCode(0x01)
    public static let pairingResponse = SMPCode(0x02)
    public static let pairingConfirm = SMPCode(0x03)
    public static let pairingRandom = SMPCode(0x04)
    public static let pairingFailed = SMPCode(0x05)
    public static let encryptionInformation = SMPCode(0x06)
    public static let centralIdentification = SMPCode(0x07)
    public static let identityInformation = SMPCode(0x08)
    public static let identityAddressInformation = SMPCode(0x09)
    public static let signingInformation = SMPCode(0x0A)
    public static let securityRequest = SMPCode(0x0B)
    public static let pairingPublicKey = SMPCode(0x0C)
    public static let pairingDHKeyCheck = SMPCode(0x0D)
    public static let keypressNotification = SMPCode(0x0E)

    public var name: String {
        switch rawValue {
        case 0x01: "Pairing Request"
        case 0x02: "Pairing Response"
        case 0x03: "Pairing Confirm"
        case 0x04: "Pairing Random"
        case 0x05: "Pairing Failed"
        case 0x06: "Encryption Information"
        case 0x07: "Central Identification"
        case 0x08: "Identity Information"
        case 0x09: "Identity Address Information"
        case 0x0A: "Signing Information"
        case 0x0B: "Security Request"
        case 0x0C: "Pairing Public Key"
        case 0x0D: "Pairing DHKey Check"
        case 0x0E: "Pairing Keypress Notification"
        default: "Unknown SMP Command"
        }
    }

    /// `Pairing Failed (0x05)`.
    public var description: String { "\(name) (0x\(hex(rawValue)))" }
}

/// Why pairing failed: the reason in an SMP Pairing Failed command (Core Vol 3 Part H 3.5.5).
public struct SMPPairingFailureReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let passkeyEntryFailed = Self(0x01)
    public static let oobNotAvailable = Self(0x02)
    public static let authenticationRequirements = Self(0x03)
    public static let confirmValueFailed = Self(0x04)
    /// What a host without pairing support answers to Pairing/Security Requests.
    public static let pairingNotSupported = Self(0x05)
    public static let encryptionKeySize = Self(0x06)
    public static let commandNotSupported = Self(0x07)
    public static let unspecifiedReason = Self(0x08)
    public static let repeatedAttempts = Self(0x09)
    public static let invalidParameters = Self(0x0A)
    public static let dhKeyCheckFailed = Self(0x0B)
    public static let numericComparisonFailed = Self(0x0C)
    public static let brEDRPairingInProgress = Self(0x0D)
    public static let crossTransportKeyDerivationNotAllowed = Self(0x0E)
    public static let keyRejected = Self(0x0F)

    public var name: String {
        switch rawValue {
        case 0x01: "Passkey Entry Failed"
        case 0x02: "OOB Not Available"
        case 0x03: "Authentication Requirements"
        case 0x04: "Confirm Value Failed"
        case 0x05: "Pairing Not Supported"
        case 0x06: "Encryption Key Size"
        case 0x07: "Command Not Supported"
        case 0x08: "Unspecified Reason"
        case 0x09: "Repeated Attempts"
        case 0x0A: "Invalid Parameters"
        case 0x0B: "DHKey Check Failed"
        case 0x0C: "Numeric Comparison Failed"
        case 0x0D: "BR/EDR Pairing In Progress"
        case 0x0E: "Cross-transport Key Derivation/Generation Not Allowed"
        case 0x0F: "Key Rejected"
        default: "Reserved"
        }
    }

    /// `Pairing Not Supported (0x05)`.
    public var description: String { "\(name) (0x\(hex(rawValue)))" }
}

/// SMP IO capability (Core Vol 3 Part H 3.5.1).
public struct SMPIOCapability: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let displayOnly = Self(0x00)
    public static let displayYesNo = Self(0x01)
    public static let keyboardOnly = Self(0x02)
    public static let noInputNoOutput = Self(0x03)
    public static let keyboardDisplay = Self(0x04)

    public var name: String {
        switch rawValue {
        case 0x00: "DisplayOnly"
        case 0x01: "DisplayYesNo"
        case 0x02: "KeyboardOnly"
        case 0x03: "NoInputNoOutput"
        case 0x04: "KeyboardDisplay"
        default: "Reserved"
        }
    }

    public var description: String { "\(name) (0x\(hex(rawValue)))" }
}

/// The AuthReq field of Pairing Request/Response and Security Request. Bits 0–1 are the
/// bonding flags (`01` = bonding); reserved bits are kept.
public struct SMPAuthenticationRequirements: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let bonding = Self(rawValue: 0x01)
    /// Man-in-the-middle protection requested.
    public static let mitm = Self(rawValue: 0x04)
    /// LE Secure Connections pairing supported.
    public static let secureConnections = Self(rawValue: 0x08)
    public static let keypress = Self(rawValue: 0x10)
    /// Support of the h7 function for cross-transport key derivation.
    public static let ct2 = Self(rawValue: 0x20)
}

/// Which keys a side distributes after pairing (Initiator/Responder Key Distribution).
public struct SMPKeyDistribution: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// LTK (legacy pairing: EDIV/Rand too).
    public static let encryptionKey = Self(rawValue: 0x01)
    /// IRK and identity address.
    public static let identityKey = Self(rawValue: 0x02)
    /// CSRK.
    public static let signingKey = Self(rawValue: 0x04)
    /// Derive the BR/EDR link key.
    public static let linkKey = Self(rawValue: 0x08)
}

/// The parameters of a Pairing Request or Pairing Response (6 bytes after the code).
public struct SMPPairingParameters: Hashable, Sendable {
    public var ioCapability: SMPIOCapability
    /// OOB data flag: 0 not present, 1 present, other values reserved (kept as received).
    public var oobDataFlag: UInt8
    public var authenticationRequirements: SMPAuthenticationRequirements
    /// Maximum encryption key size in bytes (7...16 are valid).
    public var maximumEncryptionKeySize: UInt8
    public var initiatorKeyDistribution: SMPKeyDistribution
    public var responderKeyDistribution: SMPKeyDistribution

    public init(
        ioCapability: SMPIOCapability, oobDataFlag: UInt8 = 0,
        authenticationRequirements: SMPAuthenticationRequirements, maximumEncryptionKeySize: UInt8 = 16,
        initiatorKeyDistribution: SMPKeyDistribution, responderKeyDistribution: SMPKeyDistribution
    ) {
        self.ioCapability = ioCapability
        self.oobDataFlag = oobDataFlag
        self.authenticationRequirements = authenticationRequirements
        self.maximumEncryptionKeySize = maximumEncryptionKeySize
        self.initiatorKeyDistribution = initiatorKeyDistribution
        self.responderKeyDistribution = responderKeyDistribution
    }

    /// Whether the sender has OOB authentication data for the peer.
    @inlinable public var isOOBDataPresent: Bool { oobDataFlag == 1 }
}

/// One SMP command on CID 0x0006 (Core Vol 3 Part H 3). The commands a central without
/// pairing must recognise to refuse pairing are typed; the rest are kept raw with their code.
///
/// Typed commands must have exactly their specified size; a malformed one is a ``WireError``
/// (the host answers it with Pairing Failed, Invalid Parameters or Pairing Not Supported).
public enum SMPCommand: Hashable, Sendable, WireEncodable, WireDecodable {
    case pairingRequest(SMPPairingParameters)
    case pairingResponse(SMPPairingParameters)
    case pairingFailed(SMPPairingFailureReason)
    /// A peripheral asks the central to start pairing or encryption.
    case securityRequest(SMPAuthenticationRequirements)
    /// Any other command, with its parameters as received. `code` must not be a typed one.
    case other(code: SMPCode, parameters: ArraySlice<UInt8>)

    /// The command code.
    public var code: SMPCode {
        switch self {
        case .pairingRequest: .pairingRequest
        case .pairingResponse: .pairingResponse
        case .pairingFailed: .pairingFailed
        case .securityRequest: .securityRequest
        case .other(let code, _): code
        }
    }

    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> SMPCommand {
        var r = ByteReader(bytes, context: "SMP command")
        let code = SMPCode(try r.readUInt8())
        let command: SMPCommand
        switch code.rawValue {
        case 0x01, 0x02:
            r.context = code.rawValue == 0x01 ? "SMP Pairing Request" : "SMP Pairing Response"
            let parameters = SMPPairingParameters(
                ioCapability: SMPIOCapability(try r.readUInt8()),
                oobDataFlag: try r.readUInt8(),
                authenticationRequirements: SMPAuthenticationRequirements(rawValue: try r.readUInt8()),
                maximumEncryptionKeySize: try r.readUInt8(),
                initiatorKeyDistribution: SMPKeyDistribution(rawValue: try r.readUInt8()),
                responderKeyDistribution: SMPKeyDistribution(rawValue: try r.readUInt8()))
            command = code.rawValue == 0x01 ? .pairingRequest(parameters) : .pairingResponse(parameters)
        case 0x05:
            r.context = "SMP Pairing Failed"
            command = .pairingFailed(SMPPairingFailureReason(try r.readUInt8()))
        case 0x0B:
            r.context = "SMP Security Request"
            command = .securityRequest(SMPAuthenticationRequirements(rawValue: try r.readUInt8()))
        default:
            command = .other(code: code, parameters: r.readRemaining())
        }
        try r.expectEnd()
        return command
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(code.rawValue)
        switch self {
        case .pairingRequest(let p), .pairingResponse(let p):
            writer.write(p.ioCapability.rawValue)
            writer.write(p.oobDataFlag)
            writer.write(p.authenticationRequirements.rawValue)
            writer.write(p.maximumEncryptionKeySize)
            writer.write(p.initiatorKeyDistribution.rawValue)
            writer.write(p.responderKeyDistribution.rawValue)
        case .pairingFailed(let reason):
            writer.write(reason.rawValue)
        case .securityRequest(let auth):
            writer.write(auth.rawValue)
        case .other(_, let parameters):
            writer.write(contentsOf: parameters)
        }
    }
}
