import RawbleBearer
import RawbleHCITransport
import RawbleHostCore
import RawbleSMP
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
    /// The kernel refused or failed the connection (`reason`: the kernel's, in words), or the
    /// controller has no room for one more link (`reason` names its status, the links this
    /// adapter holds and what to do: another adapter).
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
    /// Pairing with the peer failed: the SMP reason (this side's or the peer's), or SMP's 30 s
    /// timeout, or a key the controller could not encrypt with.
    case pairingFailed(DeviceAddress, PairingFailure)
    /// The link could not be encrypted with a bond's key: the controller's status (Pin or Key
    /// Missing when the peer no longer has the bond).
    case encryptionFailed(DeviceAddress, HCIStatus)
    /// The link became secure, but less than was needed (e.g. Just Works pairing when an
    /// authenticated key was required: neither side has the input or output to compare).
    case insufficientSecurity(DeviceAddress, reached: LinkSecurity, required: LinkSecurity)
    /// Pairing or encryption did not finish in time.
    case securityTimedOut(DeviceAddress, seconds: Double)
    /// The adapter's configuration does not pair (``Adapter/Configuration/pairing`` is `nil`).
    case pairingDisabled
    /// ``Adapter/Configuration/identityForController`` could not say who the host is on this
    /// controller: its error, in words.
    case identityUnavailable(String)

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
        case let .pairingFailed(peer, failure):
            "pairing with \(peer) failed: \(Self.explain(failure))"
        case let .encryptionFailed(peer, status):
            if status == .pinOrKeyMissing {
                "\(peer) refused to encrypt with the stored key (\(status)): it no longer has the bond; remove it (rawble bonds remove \(peer.address)) and pair again"
            } else {
                "the link to \(peer) could not be encrypted: \(status)"
            }
        case let .insufficientSecurity(peer, reached, required):
            "the link to \(peer) is only \(Self.name(reached)), \(Self.name(required)) is required: pair with an input or output method both sides have (--io)"
        case let .securityTimedOut(peer, seconds):
            "pairing or encryption with \(peer) did not finish within \(formatSeconds(seconds)) s"
        case .pairingDisabled:
            "this adapter does not pair: its configuration has no pairing settings"
        case .identityUnavailable(let why):
            "no identity for this controller: \(why)"
        }
    }
}

extension HCIStatus {
    /// What a controller answers when it has no room for one more link (Core Vol 1 Part F):
    /// Memory Capacity Exceeded, Connection Limit Exceeded, Connection Rejected due to Limited
    /// Resources. Controllers differ in which, and in how many links they hold (two on a Marvell
    /// 88W8897, about five on CSR dongles).
    static let linkLimitStatuses: Set<HCIStatus> = [
        .memoryCapacityExceeded, .connectionLimitExceeded, .connectionRejectedDueToLimitedResources,
    ]
}

extension HostError {
    /// Why the controller refused one more link, as the second half of one line: its status,
    /// how many links this adapter holds, and what to do.
    package static func linkLimitReason(_ status: HCIStatus, holding links: Int) -> String {
        let code = "0x" + (status.rawValue < 0x10 ? "0" : "") + String(status.rawValue, radix: 16, uppercase: true)
        return linkLimitReason("the controller refused", what: "\(status.name), \(code)", holding: links)
    }

    /// The line's second half for a refusal `who` gave (`"the controller refused"`), `what`
    /// naming it (a status, or the kernel's errno and the statuses it stands for).
    package static func linkLimitReason(_ who: String, what: String, holding links: Int) -> String {
        guard links > 0 else {
            return "\(who) a link (\(what)) while this adapter holds none: another host on the controller may hold its links; close them or use another adapter"
        }
        return "\(who) a \(ordinal(links + 1)) link (\(what)) while this adapter holds \(links): use another adapter for more devices"
    }

    /// 1st, 2nd, 3rd, 4th … 11th, 12th, 13th … 21st.
    static func ordinal(_ number: Int) -> String {
        let suffix = switch (number % 10, number % 100) {
        case (_, 11...13): "th"
        case (1, _): "st"
        case (2, _): "nd"
        case (3, _): "rd"
        default: "th"
        }
        return "\(number)\(suffix)"
    }

    static func name(_ level: LinkSecurity) -> String {
        switch level {
        case .none: "not encrypted"
        case .encrypted: "encrypted (unauthenticated key)"
        case .authenticated: "encrypted with an authenticated key"
        }
    }

    /// The failure as one line, with what to do for the reasons a person can act on.
    static func explain(_ failure: PairingFailure) -> String {
        switch failure.reason {
        case .passkeyEntryFailed?: "\(failure) (the passkey was not entered, or wrongly)"
        case .confirmValueFailed?: "\(failure) (the passkeys differ, or the pairing was tampered with)"
        case .dhKeyCheckFailed?: "\(failure) (the keys do not agree: a wrong passkey or an attacker's public key)"
        case .numericComparisonFailed?: "\(failure) (the numbers were not confirmed on both sides)"
        case .authenticationRequirements?: "\(failure) (the peer cannot do the method asked for: try another --io)"
        case .pairingNotSupported?: "\(failure) (the peer does not pair)"
        default: failure.description
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
