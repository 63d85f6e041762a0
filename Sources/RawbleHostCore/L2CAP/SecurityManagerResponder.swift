import RawbleWire

/// What the host does after the Security Manager channel received a command.
public enum SecurityManagerAction: Hashable, Sendable {
    /// Put this command on the Security Manager channel (CID 0x0006) of the same connection.
    case send(SMPCommand)
    /// Nothing to send; the reason, for a log line.
    case ignored(String)
}

/// The Security Manager Protocol channel (CID 0x0006) of one connection, for a host that does
/// not pair, sans I/O (Core Vol 3 Part H 3): refuses pairing politely so the peer stops asking.
///
/// A well-formed Pairing Request or Security Request is answered with Pairing Failed, reason
/// Pairing Not Supported (0x05, Part H 3.5.5). Everything else (the peer's own Pairing Failed,
/// commands of a pairing that never started, malformed commands) is ignored with a reason:
/// with no pairing in progress there is nothing to fail. One action per command; no state but
/// a counter.
public struct SecurityManagerResponder: Sendable {
    /// How many Pairing or Security Requests were refused so far.
    public private(set) var refusedPairingCount = 0

    public init() {}

    /// Takes the payload of one frame received on CID 0x0006 and returns what to do.
    /// Never throws or traps; returns exactly one action.
    public mutating func receive(_ payload: ArraySlice<UInt8>) -> [SecurityManagerAction] {
        let command: SMPCommand
        do {
            command = try SMPCommand.decode(payload)
        } catch {
            return [.ignored("malformed SMP command: \(error)")]
        }
        switch command {
        case .pairingRequest, .securityRequest:
            refusedPairingCount += 1
            return [.send(.pairingFailed(.pairingNotSupported))]
        case .pairingFailed(let reason):
            return [.ignored("peer reported Pairing Failed: \(reason)")]
        case .pairingResponse:
            return [.ignored("Pairing Response to a pairing this host never requested")]
        case .other(let code, let parameters):
            return [.ignored("\(code) with \(parameters.count) parameter bytes outside any pairing")]
        }
    }
}
