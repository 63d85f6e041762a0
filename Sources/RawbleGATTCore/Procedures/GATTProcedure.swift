import RawbleWire

/// What a GATT procedure wants next: a request to send, or its result.
public enum GATTProcedureStep<Output: Sendable>: Sendable {
    /// Send this request and hand its response (or Error Response) to ``GATTProcedure/receive(_:)``.
    case send(ATTPDU)
    /// The procedure is over.
    case finished(Output)
}

/// One GATT client procedure as a sans-I/O state machine: it emits requests and consumes the
/// matching responses, and decides when it is done. No I/O, no clocks: the client drives it
/// one request at a time; tests drive it with scripted PDUs.
///
/// Every procedure terminates whatever the server answers: each step either advances past
/// the previous request's start handle or ends, with a ``GATTError`` where the server broke
/// the rules.
public protocol GATTProcedure: Sendable {
    associatedtype Output: Sendable
    /// The first step (usually the first request).
    mutating func start() -> GATTProcedureStep<Output>
    /// The server's answer to the last request: its response, or `.errorResponse`.
    mutating func receive(_ response: ATTPDU) throws(GATTError) -> GATTProcedureStep<Output>
}
