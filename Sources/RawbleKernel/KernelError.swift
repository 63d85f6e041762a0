#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemPackage

/// Why a kernel Bluetooth operation failed: one case per thing a person can act on, each with a
/// one-line description that says what to do. The raw errno stays in the cases that carry one
/// (swift-system's `Errno`), so a caller can still tell `EPERM` from `EACCES`.
public enum KernelError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The running kernel has no Bluetooth (`socket(AF_BLUETOOTH, …)` → EAFNOSUPPORT).
    case noBluetoothInKernel
    /// The kernel has Bluetooth but no adapter is registered.
    case noAdapter
    /// No adapter by that name (`hci3`) or index; `available` lists the names there are.
    case noSuchAdapter(String, available: [String])
    /// The adapter is down and this process may not bring it up (HCIDEVUP → EPERM/EACCES);
    /// `user` is the account the line asks an administrator to add to the group.
    case adapterDownWithoutPermission(adapter: String, user: String)
    /// The operation needs CAP_NET_RAW / CAP_NET_ADMIN, which this process lacks (EPERM/EACCES
    /// on a socket call): `operation` names it, `user` is the account the line asks an
    /// administrator to add to the group that may use them.
    case missingCapability(operation: String, errno: Errno, user: String)
    /// The user channel is taken: the adapter is up or another program (bluetoothd, btmon -…,
    /// another rawble) holds it (bind → EBUSY).
    case userChannelBusy(adapter: String)
    /// rfkill blocks the adapter (HCIDEVUP → ERFKILL).
    case rfkillBlocked(adapter: String)
    /// The adapter went away while in use (ENODEV: unplugged, rfkill, the module unloaded).
    case adapterRemoved(adapter: String)
    /// The adapter is down (ENETDOWN on a raw-channel send): bring it up first.
    case adapterDown(adapter: String)
    /// An LE connection attempt did not complete in time (the peer is absent, out of range, or
    /// is not advertising connectably, or the address type is wrong).
    case connectTimeout(peer: String, seconds: Double)
    /// The kernel refused or failed the connection: `reason` is its errno's meaning (the HCI
    /// reason the kernel mapped to it, e.g. ECONNREFUSED for "connection rejected").
    case connectFailed(peer: String, errno: Errno, reason: String)
    /// Any other failed system call: what was being done and its errno.
    case system(operation: String, errno: Errno)

    public var description: String {
        switch self {
        case .noBluetoothInKernel:
            "this kernel has no Bluetooth support (AF_BLUETOOTH: address family not supported): load it with `sudo modprobe bluetooth`, or use a kernel built with CONFIG_BT, or another transport (serial:, tcp:)"
        case .noAdapter:
            "no Bluetooth adapter found: plug one in (check `rfkill list` and dmesg), or use another transport (serial:, tcp:)"
        case let .noSuchAdapter(name, available):
            available.isEmpty
                ? "no adapter \(name): there is no Bluetooth adapter"
                : "no adapter \(name): the adapters are \(available.joined(separator: ", "))"
        case let .adapterDownWithoutPermission(adapter, user):
            "\(adapter) is down and rawble may not bring it up for you: run `bluetoothctl power on` (or `sudo hciconfig \(adapter) up`), or \(Self.groupLine(user: user))"
        case let .missingCapability(operation, errno, user):
            "\(operation): \(errno.rawValue == EACCES ? "permission denied" : "operation not permitted"): rawble has no CAP_NET_RAW and CAP_NET_ADMIN for you: \(Self.groupLine(user: user)), or run it as root"
        case .userChannelBusy(let adapter):
            "the user channel of \(adapter) is busy: the adapter is up or another program holds it. Free it with `sudo systemctl stop bluetooth && sudo hciconfig \(adapter) down` (or `btmgmt -i \(adapter) power off`), or use the raw channel (--transport \(adapter))"
        case .rfkillBlocked(let adapter):
            "\(adapter) is blocked by rfkill: unblock it with `rfkill unblock bluetooth` (or the laptop's wireless switch)"
        case .adapterRemoved(let adapter):
            "\(adapter) was removed (unplugged, blocked by rfkill, or its driver unloaded): plug it back in (or `rfkill unblock bluetooth`), then run the command again"
        case .adapterDown(let adapter):
            "\(adapter) is down: bring it up with `sudo hciconfig \(adapter) up` (or `bluetoothctl power on`)"
        case let .connectTimeout(peer, seconds):
            "connecting to \(peer) timed out after \(Self.format(seconds)) s: check it is advertising, in range, and the address type (public/random) is right"
        case let .connectFailed(peer, errno, reason):
            "connecting to \(peer) failed: \(reason) (errno \(errno.rawValue))"
        case let .system(operation, errno):
            "\(operation) failed: \(Self.message(errno)) (errno \(errno.rawValue))"
        }
    }

    /// ERFKILL: the operation is not possible due to RF-kill (132 on Linux).
    static let erfkill: Int32 = 132

    /// The group whose members the installed binary gives CAP_NET_RAW and CAP_NET_ADMIN
    /// (`Scripts/install` and the Debian package make it; membership is the power to record
    /// every Bluetooth packet on the machine, so an administrator grants it).
    public static let group = "rawble"

    /// What a person without the capabilities does: ask for the group, with the exact line.
    public static func groupLine(user: String) -> String {
        "ask an administrator to add you to the \(group) group (`sudo adduser \(user) \(group)`, then log in again; see SECURITY.md)"
    }

    /// The name of the account running this process (its real user id), `$USER` when it has
    /// none in the user database.
    public static var userName: String {
        guard let entry = getpwuid(getuid()), let name = entry.pointee.pw_name else { return "$USER" }
        return String(cString: name)
    }

    /// The errno's text (strerror), for the descriptions.
    static func message(_ errno: Errno) -> String {
        String(cString: strerror(errno.rawValue))
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }

    /// The typed error for a socket call's errno: the cases every kernel operation shares
    /// (no Bluetooth, no capability, adapter gone or down), else ``system(operation:errno:)``.
    public static func classify(_ errno: Errno, operation: String, adapter: String? = nil) -> KernelError {
        switch errno {
        case .addressFamilyNotSupported: return .noBluetoothInKernel
        case .notPermitted, .permissionDenied:
            return .missingCapability(operation: operation, errno: errno, user: userName)
        case .operationNotSupportedByDevice:
            if let adapter { return .adapterRemoved(adapter: adapter) }
            return .system(operation: operation, errno: errno)
        case .networkDown:
            if let adapter { return .adapterDown(adapter: adapter) }
            return .system(operation: operation, errno: errno)
        default: return .system(operation: operation, errno: errno)
        }
    }
}
