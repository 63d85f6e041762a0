import RawbleHostCore
import RawbleWire

/// Switches scanning on and off for an ``Adapter`` whose controller another host owns (the
/// Linux kernel, ``ControllerOwner/kernel``), through that host: the adapter then sends no
/// scan command of its own and reads the advertising reports of the owner's scan on its
/// channel (the kernel copies every event to its raw sockets).
///
/// Why not send the scan commands itself: the kernel tracks the controller's scan state and
/// arbitrates it between its own users (bluetoothd's discovery, its passive scan for pending
/// connections). Scan commands behind its back change that state without it knowing: beside a
/// discovering bluetoothd they are refused (Command Disallowed) or stop the daemon's scan, and
/// after them a Linux 6.12 kernel makes no LE connection at all. A scan asked of the kernel is
/// one it knows about, and when another program already scans, its reports serve as well.
public protocol ScanControl: Sendable {
    /// Has the owner scan: `active` (scan requests, so scan responses arrive too) or passive.
    /// Returns once it scans, whoever started the scan, or how the adapter must do without.
    /// - Throws: a ``HostError`` (e.g. ``HostError/permissionDenied(_:)``) when the owner
    ///   refuses for a reason the caller has to act on.
    func startScanning(active: Bool) async throws(HostError) -> ScanControlOutcome

    /// Stops what ``startScanning(active:)`` asked for; another program's scan keeps running.
    func stopScanning() async throws(HostError)
}

/// What came of asking the controller's owner to scan.
public enum ScanControlOutcome: Hashable, Sendable {
    /// The owner scans (for this process, or for another program whose reports serve as well).
    case scanning
    /// The owner cannot scan as asked (`reason` says why: e.g. passive, or a privilege the
    /// process lacks): the adapter sends the scan commands itself, as a host without a
    /// ``ScanControl`` does.
    case declined(reason: String)
}
