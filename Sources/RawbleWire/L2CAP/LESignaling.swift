/// The code of an L2CAP signaling command (Core Vol 3 Part A 4). Codes this layer does not
/// type (BR/EDR-only ones, future ones) keep their number.
public struct LESignalingCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let commandReject = LESignalingCode(0x01)
    public static let disconnectionRequest = LESignalingCode(0x06)
    public static let disconnectionResponse = LESignalingCode(0x07)
    public static let connectionParameterUpdateRequest = LESignalingCode(0x12)
    public static let connectionParameterUpdateResponse = LESignalingCode(0x13)
    public static let leCreditBasedConnectionRequest = LESignalingCode(0x14)
    public static let leCreditBasedConnectionResponse = LESignalingCode(0x15)
    public static let flowControlCreditIndication = LESignalingCode(0x16)
    public static let creditBasedConnectionRequest = LESignalingCode(0x17)
    public static let creditBasedConnectionResponse = LESignalingCode(0x18)
    public static let creditBasedReconfigureRequest = LESignalingCode(0x19)
    public static let creditBasedReconfigureResponse = LESignalingCode(0x1A)

    /// The specification's name, e.g. `"Connection Parameter Update Request"`.
    public var name: String {
        switch rawValue {
        case 0x01: "Command Reject"
        case 0x02: "Connection Request"
        case 0x03: "Connection Response"
        case 0x04: "Configuration Request"
        case 0x05: "Configuration Response"
        case 0x06: "Disconnection Request"
        case 0x07: "Disconnection Response"
        case 0x08: "Echo Request"
        case 0x09: "Echo Response"
        case 0x0A: "Information Request"
        case 0x0B: "Information Response"
        case 0x12: "Connection Parameter Update Request"
        case 0x13: "Connection Parameter Update Response"
        case 0x14: "LE Credit Based Connection Request"
        case 0x15: "LE Credit Based Connection Response"
        case 0x16: "Flow Control Credit Indication"
        case 0x17: "Credit Based Connection Request"
        case 0x18: "Credit Based Connection Response"
        case 0x19: "Credit Based Reconfigure Request"
        case 0x1A: "Credit Based Reconfigure Response"
        default: "Unknown Signaling Command"
        }
    }

    /// `Command Reject (0x01)`.
    public var description: String { "\(name) (0x\(hex(rawValue)))" }
}

/// The 4-byte header of a signaling command, read without decoding its data: lets a host
/// answer a command it cannot decode with Command Reject using the peer's identifier.
public struct LESignalingHeader: Hashable, Sendable {
    /// Size of the header on the wire.
    public static let size = 4

    public var code: LESignalingCode
    /// The peer's identifier, echoed in the answer.
    public var identifier: UInt8
    /// Number of data bytes after the header.
    public var length: UInt16

    @inlinable
    public init(code: LESignalingCode, identifier: UInt8, length: UInt16) {
        self.code = code
        self.identifier = identifier
        self.length = length
    }

    /// Reads the header from the first 4 bytes of `bytes`; `nil` when fewer are present.
    @inlinable
    public init?(peeking bytes: ArraySlice<UInt8>) {
        guard bytes.count >= Self.size else { return nil }
        let i = bytes.startIndex
        code = LESignalingCode(bytes[i])
        identifier = bytes[i + 1]
        length = UInt16(bytes[i + 2]) | UInt16(bytes[i + 3]) << 8
    }

    @inlinable
    public init?(peeking bytes: [UInt8]) { self.init(peeking: bytes[...]) }
}

/// One command on the LE signaling channel (CID 0x0005): code, identifier, length and typed
/// data (Core Vol 3 Part A 4).
///
/// On LE a signaling C-frame carries exactly one command, so ``decode(_:)`` reads one command
/// that must fill the input: the length field must equal the data bytes present. Known commands
/// must have exactly their specified data size (as BlueZ requires); codes not typed here are kept
/// in ``Payload/unknown(code:data:)`` so the host can answer them with Command Reject.
public struct LESignalingCommand: Hashable, Sendable, WireEncodable, WireDecodable {
    /// Matches a response to its request; a request's identifier must not be 0.
    public var identifier: UInt8
    /// The typed command data.
    public var payload: Payload

    @inlinable
    public init(identifier: UInt8, _ payload: Payload) {
        self.identifier = identifier
        self.payload = payload
    }

    /// The command code of ``payload``.
    @inlinable public var code: LESignalingCode { payload.code }

    /// The data of each signaling command.
    public enum Payload: Hashable, Sendable {
        /// 0x01: the peer did not accept a command.
        case commandReject(RejectReason)
        /// 0x06: close a credit-based channel. CIDs are from the receiver's point of view of
        /// the sender: destination is the receiver's endpoint.
        case disconnectionRequest(destinationCID: L2CAPChannelID, sourceCID: L2CAPChannelID)
        /// 0x07: the channel is closed.
        case disconnectionResponse(destinationCID: L2CAPChannelID, sourceCID: L2CAPChannelID)
        /// 0x12: a peripheral asks the central to change connection parameters.
        case connectionParameterUpdateRequest(ConnectionParameters)
        /// 0x13: the central's answer to 0x12.
        case connectionParameterUpdateResponse(ConnectionParameterUpdateResult)
        /// 0x14: open an LE credit-based channel.
        case leCreditBasedConnectionRequest(
            spsm: UInt16, sourceCID: L2CAPChannelID, mtu: UInt16, mps: UInt16, initialCredits: UInt16)
        /// 0x15: answer to 0x14.
        case leCreditBasedConnectionResponse(
            destinationCID: L2CAPChannelID, mtu: UInt16, mps: UInt16, initialCredits: UInt16,
            result: LECreditBasedConnectionResult)
        /// 0x16: more credits for a credit-based channel.
        case flowControlCreditIndication(channelID: L2CAPChannelID, credits: UInt16)
        /// 0x17: open up to five enhanced credit-based channels at once.
        case creditBasedConnectionRequest(
            spsm: UInt16, mtu: UInt16, mps: UInt16, initialCredits: UInt16, sourceCIDs: [L2CAPChannelID])
        /// 0x18: answer to 0x17; a refused channel has destination CID 0.
        case creditBasedConnectionResponse(
            mtu: UInt16, mps: UInt16, initialCredits: UInt16, result: CreditBasedConnectionResult,
            destinationCIDs: [L2CAPChannelID])
        /// 0x19: change MTU/MPS of enhanced credit-based channels.
        case creditBasedReconfigureRequest(mtu: UInt16, mps: UInt16, destinationCIDs: [L2CAPChannelID])
        /// 0x1A: answer to 0x19.
        case creditBasedReconfigureResponse(CreditBasedReconfigureResult)
        /// A command whose code this layer does not type (kept so it re-encodes unchanged).
        case unknown(code: LESignalingCode, data: ArraySlice<UInt8>)

        /// The command code for this payload.
        public var code: LESignalingCode {
            switch self {
            case .commandReject: .commandReject
            case .disconnectionRequest: .disconnectionRequest
            case .disconnectionResponse: .disconnectionResponse
            case .connectionParameterUpdateRequest: .connectionParameterUpdateRequest
            case .connectionParameterUpdateResponse: .connectionParameterUpdateResponse
            case .leCreditBasedConnectionRequest: .leCreditBasedConnectionRequest
            case .leCreditBasedConnectionResponse: .leCreditBasedConnectionResponse
            case .flowControlCreditIndication: .flowControlCreditIndication
            case .creditBasedConnectionRequest: .creditBasedConnectionRequest
            case .creditBasedConnectionResponse: .creditBasedConnectionResponse
            case .creditBasedReconfigureRequest: .creditBasedReconfigureRequest
            case .creditBasedReconfigureResponse: .creditBasedReconfigureResponse
            case .unknown(let code, _): code
            }
        }
    }

    /// Why a command was rejected (Command Reject reason and its data).
    public enum RejectReason: Hashable, Sendable, CustomStringConvertible {
        /// 0x0000: the command was not understood (also the answer to unknown codes).
        case commandNotUnderstood
        /// 0x0001: the command exceeded the signaling MTU; carries the receiver's MTU.
        case signalingMTUExceeded(actualMTU: UInt16)
        /// 0x0002: the request named a CID that is not open.
        case invalidCIDInRequest(localCID: L2CAPChannelID, remoteCID: L2CAPChannelID)
        /// A reason this layer does not know, with its raw data.
        case other(reason: UInt16, data: ArraySlice<UInt8>)

        /// The reason code on the wire.
        public var rawValue: UInt16 {
            switch self {
            case .commandNotUnderstood: 0x0000
            case .signalingMTUExceeded: 0x0001
            case .invalidCIDInRequest: 0x0002
            case .other(let reason, _): reason
            }
        }

        public var description: String {
            switch self {
            case .commandNotUnderstood: "Command not understood"
            case .signalingMTUExceeded(let mtu): "Signaling MTU exceeded (MTU \(mtu))"
            case .invalidCIDInRequest(let local, let remote):
                "Invalid CID in request (local 0x\(l2capHex4(local.rawValue)), remote 0x\(l2capHex4(remote.rawValue)))"
            case .other(let reason, _): "Reason 0x\(l2capHex4(reason))"
            }
        }
    }

    /// Connection parameters a peripheral requests (Connection Parameter Update Request), in
    /// the units the Link Layer uses.
    public struct ConnectionParameters: Hashable, Sendable {
        /// Minimum connection interval, units of 1.25 ms.
        public var minimumInterval: UInt16
        /// Maximum connection interval, units of 1.25 ms.
        public var maximumInterval: UInt16
        /// Number of connection events the peripheral may skip.
        public var peripheralLatency: UInt16
        /// Supervision timeout, units of 10 ms.
        public var timeoutMultiplier: UInt16

        @inlinable
        public init(minimumInterval: UInt16, maximumInterval: UInt16, peripheralLatency: UInt16, timeoutMultiplier: UInt16) {
            self.minimumInterval = minimumInterval
            self.maximumInterval = maximumInterval
            self.peripheralLatency = peripheralLatency
            self.timeoutMultiplier = timeoutMultiplier
        }

        /// Whether the parameters lie in the ranges the specification allows, so a central may
        /// accept them: intervals 6...3200 with min <= max, latency 0...499, timeout 10...3200,
        /// and the timeout longer than twice the effective interval:
        /// `timeout × 10 ms > (1 + latency) × maximumInterval × 1.25 ms × 2`.
        public var isValid: Bool {
            let intervals: ClosedRange<UInt16> = 6...3200
            guard intervals.contains(minimumInterval), intervals.contains(maximumInterval),
                  minimumInterval <= maximumInterval,
                  peripheralLatency <= 499,
                  (10...3200).contains(timeoutMultiplier) else { return false }
            // timeout × 10 > (1 + latency) × max × 2.5  ⇔  timeout × 4 > (1 + latency) × max
            return Int(timeoutMultiplier) * 4 > (1 + Int(peripheralLatency)) * Int(maximumInterval)
        }

        /// Supervision timeout in milliseconds.
        @inlinable public var supervisionTimeoutMilliseconds: Int { Int(timeoutMultiplier) * 10 }
    }

    /// Result of a Connection Parameter Update Request.
    public struct ConnectionParameterUpdateResult: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt16
        @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
        @inlinable public init(_ rawValue: UInt16) { self.rawValue = rawValue }

        public static let accepted = ConnectionParameterUpdateResult(0x0000)
        public static let rejected = ConnectionParameterUpdateResult(0x0001)

        public var name: String {
            switch rawValue {
            case 0: "Connection Parameters accepted"
            case 1: "Connection Parameters rejected"
            default: "Reserved"
            }
        }

        public var description: String { "\(name) (0x\(l2capHex4(rawValue)))" }
    }

    /// Result of an LE Credit Based Connection Request (0x15).
    public struct LECreditBasedConnectionResult: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt16
        @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
        @inlinable public init(_ rawValue: UInt16) { self.rawValue = rawValue }

        public static let successful = Self(0x0000)
        public static let spsmNotSupported = Self(0x0002)
        public static let noResourcesAvailable = Self(0x0004)
        public static let insufficientAuthentication = Self(0x0005)
        public static let insufficientAuthorization = Self(0x0006)
        public static let encryptionKeySizeTooShort = Self(0x0007)
        public static let insufficientEncryption = Self(0x0008)
        public static let invalidSourceCID = Self(0x0009)
        public static let sourceCIDAlreadyAllocated = Self(0x000A)
        public static let unacceptableParameters = Self(0x000B)

        @inlinable public var isSuccess: Bool { rawValue == 0 }

        public var name: String {
            switch rawValue {
            case 0x0000: "Connection successful"
            case 0x0002: "Connection refused - SPSM not supported"
            case 0x0004: "Connection refused - no resources available"
            case 0x0005: "Connection refused - insufficient authentication"
            case 0x0006: "Connection refused - insufficient authorization"
            case 0x0007: "Connection refused - encryption key size too short"
            case 0x0008: "Connection refused - insufficient encryption"
            case 0x0009: "Connection refused - invalid Source CID"
            case 0x000A: "Connection refused - Source CID already allocated"
            case 0x000B: "Connection refused - unacceptable parameters"
            default: "Reserved"
            }
        }

        public var description: String { "\(name) (0x\(l2capHex4(rawValue)))" }
    }

    /// Result of an (enhanced) Credit Based Connection Request (0x18).
    public struct CreditBasedConnectionResult: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt16
        @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
        @inlinable public init(_ rawValue: UInt16) { self.rawValue = rawValue }

        public static let allSuccessful = Self(0x0000)
        public static let spsmNotSupported = Self(0x0002)
        public static let someInsufficientResources = Self(0x0004)
        public static let insufficientAuthentication = Self(0x0005)
        public static let insufficientAuthorization = Self(0x0006)
        public static let encryptionKeySizeTooShort = Self(0x0007)
        public static let insufficientEncryption = Self(0x0008)
        public static let someInvalidSourceCID = Self(0x0009)
        public static let someSourceCIDAlreadyAllocated = Self(0x000A)
        public static let unacceptableParameters = Self(0x000B)
        public static let invalidParameters = Self(0x000C)
        public static let pendingNoFurtherInformation = Self(0x000D)
        public static let pendingAuthentication = Self(0x000E)
        public static let pendingAuthorization = Self(0x000F)

        @inlinable public var isSuccess: Bool { rawValue == 0 }

        public var name: String {
            switch rawValue {
            case 0x0000: "All connections successful"
            case 0x0002: "All connections refused - SPSM not supported"
            case 0x0004: "Some connections refused - insufficient resources available"
            case 0x0005: "All connections refused - insufficient authentication"
            case 0x0006: "All connections refused - insufficient authorization"
            case 0x0007: "All connections refused - encryption key size too short"
            case 0x0008: "All connections refused - insufficient encryption"
            case 0x0009: "Some connections refused - invalid Source CID"
            case 0x000A: "Some connections refused - Source CID already allocated"
            case 0x000B: "All connections refused - unacceptable parameters"
            case 0x000C: "All connections refused - invalid parameters"
            case 0x000D: "All connections pending - no further information available"
            case 0x000E: "All connections pending - authentication pending"
            case 0x000F: "All connections pending - authorization pending"
            default: "Reserved"
            }
        }

        public var description: String { "\(name) (0x\(l2capHex4(rawValue)))" }
    }

    /// Result of a Credit Based Reconfigure Request (0x1A).
    public struct CreditBasedReconfigureResult: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt16
        @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
        @inlinable public init(_ rawValue: UInt16) { self.rawValue = rawValue }

        public static let successful = Self(0x0000)
        public static let mtuReductionNotAllowed = Self(0x0001)
        public static let mpsReductionNotAllowed = Self(0x0002)
        public static let invalidDestinationCID = Self(0x0003)
        public static let unacceptableParameters = Self(0x0004)

        @inlinable public var isSuccess: Bool { rawValue == 0 }

        public var name: String {
            switch rawValue {
            case 0x0000: "Reconfiguration successful"
            case 0x0001: "Reconfiguration failed - reduction in size of MTU not allowed"
            case 0x0002: "Reconfiguration failed - reduction in size of MPS not allowed for more than one channel at a time"
            case 0x0003: "Reconfiguration failed - one or more Destination CIDs invalid"
            case 0x0004: "Reconfiguration failed - other unacceptable parameters"
            default: "Reserved"
            }
        }

        public var description: String { "\(name) (0x\(l2capHex4(rawValue)))" }
    }
}

extension LESignalingCommand {
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> LESignalingCommand {
        var reader = ByteReader(bytes, context: "LE signaling command")
        let code = LESignalingCode(try reader.readUInt8())
        let identifier = try reader.readUInt8()
        let length = Int(try reader.readUInt16())
        if length > reader.count {
            throw reader.error(.truncated(needed: length, available: reader.count))
        }
        if length < reader.count {
            // LE allows one command per C-frame: anything after it is an error.
            throw reader.error(.trailingBytes(count: reader.count - length), at: reader.offset + length)
        }
        reader.context = "LE signaling " + code.name
        let payload = try decodePayload(code: code, &reader)
        try reader.expectEnd()
        return LESignalingCommand(identifier: identifier, payload)
    }

    private static func decodePayload(code: LESignalingCode, _ r: inout ByteReader) throws(WireError) -> Payload {
        switch code.rawValue {
        case 0x01:
            let reason = try r.readUInt16()
            switch reason {
            case 0x0000: return .commandReject(.commandNotUnderstood)
            case 0x0001: return .commandReject(.signalingMTUExceeded(actualMTU: try r.readUInt16()))
            case 0x0002:
                return .commandReject(.invalidCIDInRequest(localCID: try r.readChannelID(), remoteCID: try r.readChannelID()))
            default: return .commandReject(.other(reason: reason, data: r.readRemaining()))
            }
        case 0x06:
            return .disconnectionRequest(destinationCID: try r.readChannelID(), sourceCID: try r.readChannelID())
        case 0x07:
            return .disconnectionResponse(destinationCID: try r.readChannelID(), sourceCID: try r.readChannelID())
        case 0x12:
            return .connectionParameterUpdateRequest(ConnectionParameters(
                minimumInterval: try r.readUInt16(), maximumInterval: try r.readUInt16(),
                peripheralLatency: try r.readUInt16(), timeoutMultiplier: try r.readUInt16()))
        case 0x13:
            return .connectionParameterUpdateResponse(ConnectionParameterUpdateResult(try r.readUInt16()))
        case 0x14:
            return .leCreditBasedConnectionRequest(
                spsm: try r.readUInt16(), sourceCID: try r.readChannelID(), mtu: try r.readUInt16(),
                mps: try r.readUInt16(), initialCredits: try r.readUInt16())
        case 0x15:
            return .leCreditBasedConnectionResponse(
                destinationCID: try r.readChannelID(), mtu: try r.readUInt16(), mps: try r.readUInt16(),
                initialCredits: try r.readUInt16(), result: LECreditBasedConnectionResult(try r.readUInt16()))
        case 0x16:
            return .flowControlCreditIndication(channelID: try r.readChannelID(), credits: try r.readUInt16())
        case 0x17:
            return .creditBasedConnectionRequest(
                spsm: try r.readUInt16(), mtu: try r.readUInt16(), mps: try r.readUInt16(),
                initialCredits: try r.readUInt16(), sourceCIDs: try readChannelIDList(&r))
        case 0x18:
            return .creditBasedConnectionResponse(
                mtu: try r.readUInt16(), mps: try r.readUInt16(), initialCredits: try r.readUInt16(),
                result: CreditBasedConnectionResult(try r.readUInt16()), destinationCIDs: try readChannelIDList(&r))
        case 0x19:
            return .creditBasedReconfigureRequest(
                mtu: try r.readUInt16(), mps: try r.readUInt16(), destinationCIDs: try readChannelIDList(&r))
        case 0x1A:
            return .creditBasedReconfigureResponse(CreditBasedReconfigureResult(try r.readUInt16()))
        default:
            return .unknown(code: code, data: r.readRemaining())
        }
    }

    /// Reads 2-byte CIDs until the end; an odd byte left over is an error.
    private static func readChannelIDList(_ r: inout ByteReader) throws(WireError) -> [L2CAPChannelID] {
        if r.count % 2 != 0 {
            throw r.error(.invalidValue("CID list of \(r.count) bytes is not a multiple of 2"))
        }
        var cids: [L2CAPChannelID] = []
        cids.reserveCapacity(r.count / 2)
        while !r.isAtEnd { cids.append(try r.readChannelID()) }
        return cids
    }

    /// Writes code, identifier, length and data. Data longer than 65535 bytes cannot be encoded
    /// (the length field wraps).
    public func encode(into writer: inout ByteWriter) {
        writer.write(code.rawValue)
        writer.write(identifier)
        let lengthIndex = writer.bytes.count
        writer.write(UInt16(0))
        let start = writer.bytes.count
        switch payload {
        case .commandReject(let reason):
            writer.write(reason.rawValue)
            switch reason {
            case .commandNotUnderstood: break
            case .signalingMTUExceeded(let mtu): writer.write(mtu)
            case .invalidCIDInRequest(let local, let remote): writer.write(local); writer.write(remote)
            case .other(_, let data): writer.write(contentsOf: data)
            }
        case .disconnectionRequest(let destination, let source), .disconnectionResponse(let destination, let source):
            writer.write(destination)
            writer.write(source)
        case .connectionParameterUpdateRequest(let p):
            writer.write(p.minimumInterval)
            writer.write(p.maximumInterval)
            writer.write(p.peripheralLatency)
            writer.write(p.timeoutMultiplier)
        case .connectionParameterUpdateResponse(let result):
            writer.write(result.rawValue)
        case .leCreditBasedConnectionRequest(let spsm, let source, let mtu, let mps, let credits):
            writer.write(spsm); writer.write(source); writer.write(mtu); writer.write(mps); writer.write(credits)
        case .leCreditBasedConnectionResponse(let destination, let mtu, let mps, let credits, let result):
            writer.write(destination); writer.write(mtu); writer.write(mps); writer.write(credits)
            writer.write(result.rawValue)
        case .flowControlCreditIndication(let cid, let credits):
            writer.write(cid); writer.write(credits)
        case .creditBasedConnectionRequest(let spsm, let mtu, let mps, let credits, let sources):
            writer.write(spsm); writer.write(mtu); writer.write(mps); writer.write(credits)
            for cid in sources { writer.write(cid) }
        case .creditBasedConnectionResponse(let mtu, let mps, let credits, let result, let destinations):
            writer.write(mtu); writer.write(mps); writer.write(credits); writer.write(result.rawValue)
            for cid in destinations { writer.write(cid) }
        case .creditBasedReconfigureRequest(let mtu, let mps, let destinations):
            writer.write(mtu); writer.write(mps)
            for cid in destinations { writer.write(cid) }
        case .creditBasedReconfigureResponse(let result):
            writer.write(result.rawValue)
        case .unknown(_, let data):
            writer.write(contentsOf: data)
        }
        let length = UInt16(truncatingIfNeeded: writer.bytes.count - start)
        writer.bytes[lengthIndex] = UInt8(truncatingIfNeeded: length)
        writer.bytes[lengthIndex + 1] = UInt8(truncatingIfNeeded: length >> 8)
    }
}
