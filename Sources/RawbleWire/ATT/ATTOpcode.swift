/// An ATT PDU opcode (Core Vol 3 Part F 3.3): the method in bits 0–5, the command flag in
/// bit 6 and the authentication-signature flag in bit 7. Unknown opcodes keep their value.
public struct ATTOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let errorResponse = ATTOpcode(0x01)
    public static let exchangeMTURequest = ATTOpcode(0x02)
    public static let exchangeMTUResponse = ATTOpcode(0x03)
    public static let findInformationRequest = ATTOpcode(0x04)
    public static let findInformationResponse = ATTOpcode(0x05)
    public static let findByTypeValueRequest = ATTOpcode(0x06)
    public static let findByTypeValueResponse = ATTOpcode(0x07)
    public static let readByTypeRequest = ATTOpcode(0x08)
    public static let readByTypeResponse = ATTOpcode(0x09)
    public static let readRequest = ATTOpcode(0x0A)
    public static let readResponse = ATTOpcode(0x0B)
    public static let readBlobRequest = ATTOpcode(0x0C)
    public static let readBlobResponse = ATTOpcode(0x0D)
    public static let readMultipleRequest = ATTOpcode(0x0E)
    public static let readMultipleResponse = ATTOpcode(0x0F)
    public static let readByGroupTypeRequest = ATTOpcode(0x10)
    public static let readByGroupTypeResponse = ATTOpcode(0x11)
    public static let writeRequest = ATTOpcode(0x12)
    public static let writeResponse = ATTOpcode(0x13)
    public static let writeCommand = ATTOpcode(0x52)
    public static let signedWriteCommand = ATTOpcode(0xD2)
    public static let prepareWriteRequest = ATTOpcode(0x16)
    public static let prepareWriteResponse = ATTOpcode(0x17)
    public static let executeWriteRequest = ATTOpcode(0x18)
    public static let executeWriteResponse = ATTOpcode(0x19)
    public static let handleValueNotification = ATTOpcode(0x1B)
    public static let handleValueIndication = ATTOpcode(0x1D)
    public static let handleValueConfirmation = ATTOpcode(0x1E)
    public static let readMultipleVariableRequest = ATTOpcode(0x20)
    public static let readMultipleVariableResponse = ATTOpcode(0x21)
    public static let multipleHandleValueNotification = ATTOpcode(0x23)

    /// Bit 6: a command, which gets no response (an unknown command is ignored, an unknown
    /// request is answered with Request Not Supported).
    @inlinable public var isCommand: Bool { rawValue & 0x40 != 0 }
    /// Bit 7: the PDU ends with a 12-byte authentication signature.
    @inlinable public var isSigned: Bool { rawValue & 0x80 != 0 }
    /// Bits 0–5.
    @inlinable public var method: UInt8 { rawValue & 0x3F }

    /// The role a PDU with this opcode plays in the ATT transaction model.
    public enum Kind: Hashable, Sendable {
        /// Client to server; exactly one response (or an Error Response) follows.
        case request
        /// Server to client, answering a request.
        case response
        /// Client to server, no response.
        case command
        /// Server to client, no confirmation.
        case notification
        /// Server to client; the client must confirm.
        case indication
        /// Client to server, confirming an indication.
        case confirmation
        /// An opcode this layer does not know.
        case unknown
    }

    /// What kind of PDU this opcode is. Unknown opcodes with bit 6 set are ``Kind/command``.
    public var kind: Kind {
        switch rawValue {
        case 0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20: .request
        case 0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x21: .response
        case 0x1B, 0x23: .notification
        case 0x1D: .indication
        case 0x1E: .confirmation
        default: isCommand ? .command : .unknown
        }
    }

    /// The opcode of the successful answer to this request, or Handle Value Confirmation for
    /// an indication (`nil` otherwise). A request may also be answered with ``errorResponse``.
    public var responseOpcode: ATTOpcode? {
        switch rawValue {
        case 0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20: ATTOpcode(rawValue + 1)
        case 0x1D: .handleValueConfirmation
        default: nil
        }
    }

    /// The request this response answers, or Handle Value Indication for a confirmation (`nil`
    /// otherwise, and for Error Response, which names its request in its parameters).
    public var requestOpcode: ATTOpcode? {
        switch rawValue {
        case 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x21: ATTOpcode(rawValue - 1)
        case 0x1E: .handleValueIndication
        default: nil
        }
    }

    /// The specification's name, e.g. `"Read By Type Request"`.
    public var name: String {
        switch rawValue {
        case 0x01: "Error Response"
        case 0x02: "Exchange MTU Request"
        case 0x03: "Exchange MTU Response"
        case 0x04: "Find Information Request"
        case 0x05: "Find Information Response"
        case 0x06: "Find By Type Value Request"
        case 0x07: "Find By Type Value Response"
        case 0x08: "Read By Type Request"
        case 0x09: "Read By Type Response"
        case 0x0A: "Read Request"
        case 0x0B: "Read Response"
        case 0x0C: "Read Blob Request"
        case 0x0D: "Read Blob Response"
        case 0x0E: "Read Multiple Request"
        case 0x0F: "Read Multiple Response"
        case 0x10: "Read By Group Type Request"
        case 0x11: "Read By Group Type Response"
        case 0x12: "Write Request"
        case 0x13: "Write Response"
        case 0x52: "Write Command"
        case 0xD2: "Signed Write Command"
        case 0x16: "Prepare Write Request"
        case 0x17: "Prepare Write Response"
        case 0x18: "Execute Write Request"
        case 0x19: "Execute Write Response"
        case 0x1B: "Handle Value Notification"
        case 0x1D: "Handle Value Indication"
        case 0x1E: "Handle Value Confirmation"
        case 0x20: "Read Multiple Variable Request"
        case 0x21: "Read Multiple Variable Response"
        case 0x23: "Multiple Handle Value Notification"
        default: "Unknown Opcode"
        }
    }

    /// `Read Request (0x0A)`.
    public var description: String { "\(name) (0x\(hex(rawValue)))" }
}

/// An ATT error code from an Error Response (Core Vol 3 Part F 3.4.1.1; Core Specification
/// Supplement Part B for the common profile errors). Unknown codes keep their value.
public struct ATTErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let invalidHandle = Self(0x01)
    public static let readNotPermitted = Self(0x02)
    public static let writeNotPermitted = Self(0x03)
    public static let invalidPDU = Self(0x04)
    public static let insufficientAuthentication = Self(0x05)
    public static let requestNotSupported = Self(0x06)
    public static let invalidOffset = Self(0x07)
    public static let insufficientAuthorization = Self(0x08)
    public static let prepareQueueFull = Self(0x09)
    /// Also how discovery procedures learn they have reached the end.
    public static let attributeNotFound = Self(0x0A)
    public static let attributeNotLong = Self(0x0B)
    public static let encryptionKeySizeTooShort = Self(0x0C)
    public static let invalidAttributeValueLength = Self(0x0D)
    public static let unlikelyError = Self(0x0E)
    public static let insufficientEncryption = Self(0x0F)
    public static let unsupportedGroupType = Self(0x10)
    public static let insufficientResources = Self(0x11)
    public static let databaseOutOfSync = Self(0x12)
    public static let valueNotAllowed = Self(0x13)
    public static let writeRequestRejected = Self(0xFC)
    public static let cccdImproperlyConfigured = Self(0xFD)
    public static let procedureAlreadyInProgress = Self(0xFE)
    public static let outOfRange = Self(0xFF)

    /// 0x80–0x9F: defined by the service or application.
    @inlinable public var isApplicationError: Bool { (0x80...0x9F).contains(rawValue) }
    /// 0xE0–0xFF: common profile and service error codes.
    @inlinable public var isCommonProfileError: Bool { rawValue >= 0xE0 }

    /// The specification's name, e.g. `"Attribute Not Found"`.
    public var name: String {
        switch rawValue {
        case 0x01: "Invalid Handle"
        case 0x02: "Read Not Permitted"
        case 0x03: "Write Not Permitted"
        case 0x04: "Invalid PDU"
        case 0x05: "Insufficient Authentication"
        case 0x06: "Request Not Supported"
        case 0x07: "Invalid Offset"
        case 0x08: "Insufficient Authorization"
        case 0x09: "Prepare Queue Full"
        case 0x0A: "Attribute Not Found"
        case 0x0B: "Attribute Not Long"
        case 0x0C: "Encryption Key Size Too Short"
        case 0x0D: "Invalid Attribute Value Length"
        case 0x0E: "Unlikely Error"
        case 0x0F: "Insufficient Encryption"
        case 0x10: "Unsupported Group Type"
        case 0x11: "Insufficient Resources"
        case 0x12: "Database Out Of Sync"
        case 0x13: "Value Not Allowed"
        case 0x80...0x9F: "Application Error"
        case 0xFC: "Write Request Rejected"
        case 0xFD: "Client Characteristic Configuration Descriptor Improperly Configured"
        case 0xFE: "Procedure Already in Progress"
        case 0xFF: "Out of Range"
        case 0xE0...0xFB: "Common Profile Error"
        default: "Reserved Error"
        }
    }

    /// `Read Not Permitted (0x02)`.
    public var description: String { "\(name) (0x\(hex(rawValue)))" }
}

/// An ATT request that failed: what an Error Response reports, as a Swift error.
public struct ATTError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why the request failed.
    public var code: ATTErrorCode
    /// The opcode of the request that failed.
    public var requestOpcode: ATTOpcode
    /// The handle the error concerns (0 when none applies).
    public var handle: UInt16

    @inlinable
    public init(code: ATTErrorCode, requestOpcode: ATTOpcode, handle: UInt16) {
        self.code = code
        self.requestOpcode = requestOpcode
        self.handle = handle
    }

    /// The error an Error Response PDU reports; `nil` for any other PDU.
    public init?(_ pdu: ATTPDU) {
        guard case let .errorResponse(requestOpcode, handle, code) = pdu else { return nil }
        self.init(code: code, requestOpcode: requestOpcode, handle: handle)
    }

    /// `Read Not Permitted (0x02) for Read Request on handle 0x0003`.
    public var description: String {
        "\(code) for \(requestOpcode.name) on handle 0x\(l2capHex4(handle))"
    }
}
