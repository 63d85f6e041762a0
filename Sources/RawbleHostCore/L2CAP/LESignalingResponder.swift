import RawbleWire

/// What the host does after the LE signaling channel received a C-frame.
public enum LESignalingAction: Hashable, Sendable {
    /// Put this command on the LE signaling channel (CID 0x0005) of the same connection.
    case send(LESignalingCommand)
    /// Issue HCI LE Connection Update with these parameters (after sending the accepting
    /// response, which precedes this action in the list).
    case updateConnectionParameters(LESignalingCommand.ConnectionParameters)
    /// Nothing to send; the reason, for a log line.
    case ignored(String)
}

/// The LE signaling channel (CID 0x0005) of one connection with the host as central, sans I/O
/// (Core Vol 3 Part A 4): answers what a peripheral asks so it does not drop the link.
///
/// The host opens no credit-based channels and sends no signaling requests, so:
/// - a valid Connection Parameter Update Request is accepted (response, then
///   ``LESignalingAction/updateConnectionParameters(_:)``), an invalid one rejected;
/// - LE / enhanced Credit Based Connection Requests are refused with "SPSM not supported",
///   a Credit Based Reconfigure Request with "Destination CID invalid";
/// - a Disconnection Request names a channel that is not open: Command Reject "invalid CID";
/// - unknown codes, and known requests whose data is malformed, get Command Reject
///   "command not understood"; a C-frame above ``signalingMTU`` gets "signaling MTU exceeded";
/// - responses, Command Rejects and credit indications are never answered (none were asked
///   for), nor is anything with identifier 0 (illegal, Part A 4) or shorter than a header.
///
/// Each call answers at most one command (LE carries one command per C-frame; bytes after the
/// first command make the frame malformed) and keeps no state but a counter: memory is flat.
public struct LESignalingResponder: Sendable {
    /// The smallest signaling MTU an LE device may have (MTUsig, Core Vol 3 Part A 4).
    public static let minimumSignalingMTU = 23

    /// Largest C-frame payload accepted; larger ones are answered with "signaling MTU
    /// exceeded". At least ``minimumSignalingMTU``.
    public let signalingMTU: Int

    /// How many Connection Parameter Update Requests were accepted so far.
    public private(set) var acceptedParameterUpdateCount = 0

    /// Whether this side is the link's peripheral: a Connection Parameter Update Request is
    /// then answered with Command Reject "command not understood" (only a peripheral sends
    /// it, Core Vol 3 Part A 4.20).
    public let isPeripheral: Bool

    /// - Parameters:
    ///   - signalingMTU: this side's MTUsig; values below 23 are raised to 23, values above
    ///     65535 lowered to 65535 (the reject carries it in 16 bits).
    ///   - isPeripheral: this side's role on the link (the central's by default).
    public init(signalingMTU: Int = LESignalingResponder.minimumSignalingMTU, isPeripheral: Bool = false) {
        self.signalingMTU = min(Int(UInt16.max), max(Self.minimumSignalingMTU, signalingMTU))
        self.isPeripheral = isPeripheral
    }

    /// Takes the payload of one C-frame received on CID 0x0005 and returns what to do, in order.
    /// Never throws or traps; returns exactly one action.
    public mutating func receive(_ payload: ArraySlice<UInt8>) -> [LESignalingAction] {
        guard let header = LESignalingHeader(peeking: payload) else {
            return [.ignored("LE signaling frame of \(payload.count) bytes is shorter than a command header")]
        }
        let code = header.code
        guard header.identifier != 0 else {
            return [.ignored("\(code) with the illegal identifier 0")]
        }
        let isAnswer = Self.isAnswer(code)
        if payload.count > signalingMTU {
            if isAnswer {
                return [.ignored("\(code) of \(payload.count) bytes above the signaling MTU \(signalingMTU); not answered")]
            }
            return [reject(header.identifier, .signalingMTUExceeded(actualMTU: UInt16(truncatingIfNeeded: signalingMTU)))]
        }
        let command: LESignalingCommand
        do {
            command = try LESignalingCommand.decode(payload)
        } catch {
            if isAnswer {
                return [.ignored("malformed \(code): \(error)")]
            }
            return [reject(header.identifier, .commandNotUnderstood)]
        }
        let identifier = command.identifier
        switch command.payload {
        case .connectionParameterUpdateRequest(let parameters):
            if isPeripheral { return [reject(identifier, .commandNotUnderstood)] }
            guard parameters.isValid else {
                return [.send(LESignalingCommand(identifier: identifier, .connectionParameterUpdateResponse(.rejected)))]
            }
            acceptedParameterUpdateCount += 1
            return [.send(LESignalingCommand(identifier: identifier, .connectionParameterUpdateResponse(.accepted))),
                    .updateConnectionParameters(parameters)]
        case .leCreditBasedConnectionRequest:
            return [.send(LESignalingCommand(identifier: identifier, .leCreditBasedConnectionResponse(
                destinationCID: .null, mtu: 0, mps: 0, initialCredits: 0, result: .spsmNotSupported)))]
        case .creditBasedConnectionRequest(_, _, _, _, let sourceCIDs):
            // One refused (0x0000) destination per requested channel (Part A 4.26).
            return [.send(LESignalingCommand(identifier: identifier, .creditBasedConnectionResponse(
                mtu: 0, mps: 0, initialCredits: 0, result: .spsmNotSupported,
                destinationCIDs: Array(repeating: .null, count: sourceCIDs.count))))]
        case .creditBasedReconfigureRequest:
            return [.send(LESignalingCommand(identifier: identifier, .creditBasedReconfigureResponse(.invalidDestinationCID)))]
        case .disconnectionRequest(let destination, let source):
            // Local endpoint first: the request's destination is ours (Part A 4.1, 4.6).
            return [reject(identifier, .invalidCIDInRequest(localCID: destination, remoteCID: source))]
        case .flowControlCreditIndication(let channel, let credits):
            return [.ignored("\(credits) credits for \(channel), a channel that is not open")]
        case .unknown:
            return [reject(identifier, .commandNotUnderstood)]
        case .commandReject, .disconnectionResponse, .connectionParameterUpdateResponse,
             .leCreditBasedConnectionResponse, .creditBasedConnectionResponse, .creditBasedReconfigureResponse:
            return [.ignored("\(command.code) (identifier \(identifier)) answers no request of ours")]
        }
    }

    /// Whether `code` is a response, a reject or a credit indication: never answered, even
    /// when malformed (answering one could start a reject loop between two hosts).
    private static func isAnswer(_ code: LESignalingCode) -> Bool {
        switch code {
        case .commandReject, .disconnectionResponse, .connectionParameterUpdateResponse,
             .leCreditBasedConnectionResponse, .flowControlCreditIndication,
             .creditBasedConnectionResponse, .creditBasedReconfigureResponse:
            true
        default:
            false
        }
    }

    private func reject(_ identifier: UInt8, _ reason: LESignalingCommand.RejectReason) -> LESignalingAction {
        .send(LESignalingCommand(identifier: identifier, .commandReject(reason)))
    }
}
