// The ATT client's sans-I/O input side: what one PDU received from the peer means for a client
// with (or without) an outstanding request. No I/O, no clocks, no imports beyond the wire layer,
// so the fuzzer drives it directly with raw bytes.

import RawbleWire

/// What the ATT client does with one PDU received from the peer.
public enum ATTInbound: Sendable {
    /// The answer to the outstanding request: its response, or an Error Response naming it.
    case response(ATTPDU)
    /// A PDU with the outstanding request's response opcode that does not decode: the server
    /// answered, but the answer is broken (the transaction is over).
    case malformedResponse(WireError)
    /// A Handle Value Notification or Indication for `handle` (value is a slice of the
    /// received PDU, no copy).
    case update(handle: UInt16, value: ArraySlice<UInt8>, isIndication: Bool)
    /// A Multiple Handle Value Notification (0x23): one update per tuple.
    case multipleUpdates([ATTPDU.HandleValue])
    /// The peer, acting as a client, sent a request: answer it with this PDU.
    case answerPeerRequest(ATTPDU)
    /// The peer, acting as a client, exchanges the MTU: answer it with `answer` (our receive
    /// MTU); the bearer's ATT_MTU becomes the smaller of the two.
    case answerPeerMTURequest(clientMTU: UInt16, answer: ATTPDU)
    /// Dropped: logged and otherwise ignored.
    case dropped(ATTDropReason)

    /// Classifies `bytes` (one whole ATT PDU from the peer) for a client whose outstanding
    /// request has opcode `outstanding` (`nil`: none), answering an Exchange MTU Request from
    /// the peer with `receiveMTU`.
    public static func classify(_ bytes: [UInt8], outstanding: ATTOpcode?, receiveMTU: UInt16) -> ATTInbound {
        guard let first = bytes.first else { return .dropped(.empty) }
        let opcode = ATTOpcode(first)
        // Hot path: notifications decode without the general decoder.
        if opcode == .handleValueNotification, bytes.count >= 3 {
            return .update(handle: UInt16(bytes[1]) | UInt16(bytes[2]) << 8, value: bytes[3...], isIndication: false)
        }
        switch opcode.kind {
        case .response:
            guard let outstanding else { return .dropped(.unsolicitedResponse(opcode)) }
            let pdu: ATTPDU
            do {
                pdu = try ATTPDU.decode(bytes)
            } catch {
                if opcode == outstanding.responseOpcode { return .malformedResponse(error) }
                return .dropped(.malformed(error))
            }
            if case .errorResponse(let requestOpcode, _, _) = pdu {
                return requestOpcode == outstanding ? .response(pdu) : .dropped(.errorResponseForAnotherRequest(requestOpcode))
            }
            return opcode == outstanding.responseOpcode ? .response(pdu) : .dropped(.wrongResponseOpcode(opcode, expected: outstanding))
        case .notification, .indication:
            let pdu: ATTPDU
            do { pdu = try ATTPDU.decode(bytes) } catch { return .dropped(.malformed(error)) }
            switch pdu {
            case .handleValueNotification(let handle, let value):
                return .update(handle: handle, value: value, isIndication: false)
            case .handleValueIndication(let handle, let value):
                return .update(handle: handle, value: value, isIndication: true)
            case .multipleHandleValueNotification(let tuples):
                return .multipleUpdates(tuples)
            default:
                return .dropped(.unexpected(opcode))
            }
        case .request, .unknown:
            // The peer acts as a client. An unknown opcode without the command bit is a request
            // too (Core Vol 3 Part F 3.4.9): it gets Request Not Supported.
            if case .exchangeMTURequest(let clientMTU)? = try? ATTPDU.decode(bytes) {
                return .answerPeerMTURequest(clientMTU: clientMTU, answer: .exchangeMTUResponse(serverMTU: receiveMTU))
            }
            return .answerPeerRequest(.errorResponse(requestOpcode: opcode, handle: 0, errorCode: .requestNotSupported))
        case .command, .confirmation:
            return .dropped(.peerCommand(opcode))
        }
    }
}

/// Why the ATT client dropped a PDU from the peer (for a log line).
public enum ATTDropReason: Hashable, Sendable, CustomStringConvertible {
    /// A zero-length PDU.
    case empty
    /// The PDU does not decode.
    case malformed(WireError)
    /// A response while no request is outstanding (a late answer to a cancelled or timed-out
    /// request lands here too).
    case unsolicitedResponse(ATTOpcode)
    /// A response whose opcode does not answer the outstanding request.
    case wrongResponseOpcode(ATTOpcode, expected: ATTOpcode)
    /// An Error Response naming a request other than the outstanding one.
    case errorResponseForAnotherRequest(ATTOpcode)
    /// A command or confirmation from the peer: a client ignores them.
    case peerCommand(ATTOpcode)
    /// Any other PDU this client has no use for.
    case unexpected(ATTOpcode)

    public var description: String {
        switch self {
        case .empty: "empty PDU"
        case .malformed(let error): "malformed PDU: \(error)"
        case .unsolicitedResponse(let opcode): "\(opcode) with no request outstanding"
        case let .wrongResponseOpcode(opcode, expected): "\(opcode) does not answer the outstanding \(expected)"
        case .errorResponseForAnotherRequest(let opcode): "Error Response for \(opcode), which is not the outstanding request"
        case .peerCommand(let opcode): "\(opcode) from the peer ignored"
        case .unexpected(let opcode): "unexpected \(opcode)"
        }
    }
}
