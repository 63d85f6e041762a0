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
    /// Pairing or encryption failed: the SMP reason (either side's), SMP's 30 s timeout, a
    /// key the peer refused, a level the pairing could not reach.
    case pairingFailed = 79
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
}
