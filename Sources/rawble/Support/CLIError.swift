import ArgumentParser

/// Exit statuses: one per class of failure, all below 128, stable for scripts.
/// The numbers follow BSD sysexits where one fits.
enum ExitStatus: Int32, CaseIterable {
    case success = 0
    /// Bad command line (argument-parser uses 64 for validation errors too).
    case usage = 64
    /// Input that does not decode: bad hex, malformed packet, broken capture file.
    case malformedInput = 65
    /// A file named on the command line cannot be opened.
    case cannotOpen = 66
    /// No bond with the address given (`bonds remove`); sysexits' "addressee unknown".
    case noBond = 67
    /// No adapter, or the requested capability is not available in this build.
    case unavailable = 69
    /// A bug in rawble.
    case internalError = 70
    /// The system lacks what any Swift program needs to run: `/proc` is not mounted
    /// (sysexits' EX_OSERR).
    case system = 71
    /// The transport failed (socket closed, device gone, I/O error).
    case transport = 74
    /// Something did not answer in time.
    case timeout = 75
    /// The peer answered with an error (ATT error, connection refused).
    case peerError = 76
    /// Missing capability or permission (CAP_NET_RAW, CAP_NET_ADMIN, file permissions).
    case permission = 77
    /// Interrupted by Ctrl-C after a clean shutdown.
    case interrupted = 78
    /// Pairing or encryption failed otherwise: a reason this side gave that is none of the
    /// classes below (a comparison declined here), a key the peer no longer has, a key the
    /// controller could not encrypt with.
    case pairingFailed = 79
    /// The passkey was wrong or not entered: Passkey Entry Failed (either side), or Confirm
    /// Value Failed (either side) in a pairing where a passkey was shown or typed.
    case wrongPasskey = 80
    /// Confirm Value Failed (either side) in a pairing without a passkey (Just Works, Numeric
    /// Comparison): a confirm value did not match its random value.
    case confirmMismatch = 81
    /// DHKey Check Failed (either side; LE Secure Connections).
    case dhKeyCheckFailed = 82
    /// The peer stopped the pairing with a reason not in the classes above or below (Numeric
    /// Comparison Failed, Unspecified Reason, Pairing Not Supported, Repeated Attempts, ...).
    case peerAborted = 83
    /// SMP's 30 s timeout (Core Vol 3 Part H 3.4): no SMP command in time; or the host's own
    /// bound on pairing or encrypting ran out.
    case pairingTimedOut = 84
    /// No method both sides can do reaches what was needed: Authentication Requirements or OOB
    /// Not Available (either side), or `--security authenticated` reached only Just Works.
    case methodUnavailable = 85
    /// The session holds nothing of what an export needs: no RR interval for RR text, no ECG
    /// for EDF+ (`report --export`).
    case nothingToExport = 86
}

/// An expected failure: printed as one line on stderr (cause, then the fix), then a distinct
/// exit status. Never a stack trace.
struct CLIError: Error, CustomStringConvertible {
    var status: ExitStatus
    var message: String
    var fix: String?

    init(_ status: ExitStatus, _ message: String, fix: String? = nil) {
        self.status = status
        self.message = message
        self.fix = fix
    }

    var description: String {
        if let fix { return "\(message): \(fix)" }
        return message
    }

    /// Ctrl-C (or SIGTERM) stopped a command before its own end: everything was closed cleanly.
    /// A command whose end is Ctrl-C (scan or peripheral without --duration, notify or hr
    /// without --count) exits 0 instead.
    static let interrupted = CLIError(.interrupted, "interrupted")

    /// Whether this failure ends a run that follows several straps: the transport, a missing
    /// privilege, Ctrl-C, a bug. The rest (a strap's GATT errors, timeouts, pairing, a
    /// controller that refuses one more link) are one strap's, and the others go on.
    var endsAGroupRun: Bool {
        switch status {
        case .transport, .permission, .unavailable, .interrupted, .internalError, .usage, .system, .cannotOpen: true
        default: false
        }
    }
}
