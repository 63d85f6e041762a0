import RawbleHCITransport
import RawbleHostCore
import RawbleWire

/// Why an operation of the host (``Adapter``, ``Connection``) failed. Each case reads as one
/// line a person can act on.
public enum HostError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The controller did not answer a command within its timeout.
    case commandTimedOut(HCIOpcode, seconds: Double)
    /// The controller refused or failed a command.
    case commandFailed(HCIOpcode, HCIStatus)
    /// The controller answered with return parameters that do not decode.
    case malformedReturn(HCIOpcode, WireError)
    /// The transport to the controller failed or ended.
    case transport(TransportError)
    /// The adapter was closed on this side.
    case closed
    /// The host holds too many commands already (a controller that stopped answering).
    case commandQueueFull
    /// Something else holds the resource (`what` says which: scanning, connection set-up).
    case busy(String)
    /// The connection attempt did not complete in time and was cancelled.
    case connectionTimedOut(DeviceAddress, seconds: Double)
    /// The controller reported the connection attempt failed.
    case connectionFailed(DeviceAddress, HCIStatus)
    /// The connection is gone (the reason the controller gave).
    case disconnected(HCIStatus)
    /// The controller lacks something the host needs.
    case unsupported(String)
    /// The kernel refused or failed the connection (`reason`: the kernel's, in words).
    case connectionRefused(DeviceAddress, reason: String)
    /// The link ended for the reason the kernel gave (in words): links made through its sockets.
    case linkLost(String)
    /// The system refused an operation for lack of a privilege; `what` says which and the fix.
    case permissionDenied(String)
    /// Advertising data or a scan response longer than the advertisement can carry (`what`
    /// says which; 31 bytes for legacy advertising, the controller's maximum for extended).
    case advertisingDataTooLong(String, length: Int, maximum: Int)
    /// The controller has stopped answering: the kernel (which sends the commands of a
    /// controller it owns) reported its commands timing out, or did not answer at all. `what`
    /// says what went unanswered. Only power-cycling the controller (or replugging it) helps.
    case controllerNotAnswering(String)
    /// The caller's task was cancelled while it waited (what the host started on its behalf,
    /// such as a connection attempt, was called off).
    case cancelled

    public var description: String {
        switch self {
        case let .commandTimedOut(opcode, seconds):
            "the controller did not answer \(opcode) within \(formatSeconds(seconds)) s"
        case let .commandFailed(opcode, status):
            "the controller refused \(opcode): \(status)"
        case let .malformedReturn(opcode, error):
            "the controller's answer to \(opcode) is malformed: \(error)"
        case .transport(let error):
            "transport to the controller: \(error)"
        case .closed:
            "the adapter is closed"
        case .commandQueueFull:
            "too many HCI commands outstanding: the controller stopped answering"
        case .busy(let what):
            "busy: \(what)"
        case let .connectionTimedOut(peer, seconds):
            "no connection to \(peer) within \(formatSeconds(seconds)) s: is it advertising and connectable?"
        case let .connectionFailed(peer, status):
            "connection to \(peer) failed: \(status)"
        case .disconnected(let reason):
            "disconnected: \(reason)"
        case .unsupported(let what):
            "the controller does not support \(what)"
        case let .connectionRefused(peer, reason):
            "connection to \(peer) failed: \(reason)"
        case .linkLost(let reason):
            "the link ended: \(reason)"
        case .permissionDenied(let what):
            what
        case let .advertisingDataTooLong(what, length, maximum):
            "\(what) of \(length) bytes does not fit: at most \(maximum) bytes can be advertised"
        case .controllerNotAnswering(let what):
            "\(what): the controller has stopped answering"
        case .cancelled:
            "cancelled"
        }
    }
}

func formatSeconds(_ seconds: Double) -> String {
    let tenths = (seconds * 10).rounded() / 10
    return tenths == tenths.rounded() ? String(Int(tenths)) : String(tenths)
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double { self / .seconds(1) }
}
