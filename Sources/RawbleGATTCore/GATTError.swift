import RawbleBearer
import RawbleWire

/// Why an ATT request or a GATT procedure failed. One line each, for a person.
public enum GATTError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The server answered with an Error Response (code, request opcode, handle).
    case att(ATTError)
    /// No response within the ATT transaction timeout (30 s by default); the bearer is closed
    /// and every later request fails with this error too (Core Vol 3 Part F 3.3.3).
    case timeout(request: ATTOpcode, seconds: Double)
    /// The bearer ended (disconnection, transport failure, closed).
    case bearer(BearerError)
    /// The server's response breaks the procedure's rules (handles that do not advance, out
    /// of range, the wrong response opcode …): what was wrong.
    case invalidResponse(String)
    /// A PDU from the server that does not decode.
    case malformedPDU(WireError)
    /// A value longer than the 512 bytes an attribute value may have.
    case valueTooLong(Int)
    /// The caller's task was cancelled before the request completed.
    case cancelled
    /// `limit` requests already wait for their turn on this bearer (`ATTClient.Configuration.requestQueueLimit`):
    /// this one was refused at once; the client is still up.
    case requestQueueFull(limit: Int)
    /// Something the caller asked for is not on the server (e.g. no CCCD to subscribe with).
    case notFound(String)

    public var description: String {
        switch self {
        case .att(let error): "the peer answered \(error)"
        case let .timeout(request, seconds): "no response to \(request) within \(seconds) s"
        case .bearer(let error): "the ATT bearer ended: \(error)"
        case .invalidResponse(let what): "invalid response from the peer: \(what)"
        case .malformedPDU(let error): "malformed PDU from the peer: \(error)"
        case .valueTooLong(let length): "a value of \(length) bytes exceeds the 512-byte maximum"
        case .cancelled: "cancelled"
        case .requestQueueFull(let limit): "\(limit) ATT requests already wait: the request queue is full"
        case .notFound(let what): "not found on the peer: \(what)"
        }
    }
}
