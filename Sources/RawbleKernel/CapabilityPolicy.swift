import Synchronization
import SystemPackage

/// Which capabilities a run keeps, and until when: the one place that says it, from where the
/// Linux kernel checks them (docs/capabilities.md has the kernel's checks, call by call).
///
/// - A run that opens no kernel Bluetooth socket (``Use/offline``, or an H4 transport:
///   `tcp:`, `unix:`, `serial:`) keeps nothing: every set is emptied at the start.
/// - `user:hciN` keeps CAP_NET_ADMIN for the user channel's bind, and nothing once it is open:
///   the kernel checks no send on that channel.
/// - `hciN` keeps CAP_NET_ADMIN while it may still power the adapter on or bind a management
///   socket (the kernel makes a socket trusted at its bind only): up to the first scan's start
///   for ``Use/scan``, for the whole run when the run connects or serves, because the kernel's
///   pairing questions go to a trusted socket that is bound when a pairing starts. It keeps
///   CAP_NET_RAW while the raw channel is open: the kernel checks it at each send of an LE
///   command on that channel.
///
/// The capabilities kept live on one thread only (``Privileges``), raised around each call.
public struct CapabilityPolicy: Hashable, Sendable {
    /// What a command does with its transport.
    public enum Use: Hashable, Sendable, CaseIterable {
        /// Opens no Bluetooth socket that needs a capability: `decode`, `report`, `bonds`,
        /// `adapters` (the kernel's list and information ioctls check none), help, version,
        /// completion scripts.
        case offline
        /// Scans and nothing else (`scan`).
        case scan
        /// Connects to peers, which may ask to pair (`gatt`, `read`, `write`, `notify`,
        /// `shell`, `hr`, `ecg`, `pair`).
        case connect
        /// Advertises and accepts centrals, which may ask to pair (`peripheral`).
        case serve
    }

    /// The transport, as far as capabilities go.
    public enum Channel: Hashable, Sendable, CaseIterable {
        /// `tcp:`, `unix:`, `serial:`: no kernel Bluetooth socket.
        case h4
        /// `hciN`: the raw channel, the management channel, L2CAP sockets.
        case raw
        /// `hciN` with `--btsnoop` or `--trace`: the same and the monitor channel.
        case rawWithMonitor
        /// `user:hciN`: the user channel.
        case user
    }

    /// A point of the run after which fewer capabilities are kept.
    public enum Step: Hashable, Sendable, CaseIterable {
        /// The start, before anything is opened.
        case start
        /// The transport (and on `hciN` the monitor channel) is open.
        case opened
        /// The first scan started (on `hciN`: the kernel's discovery asked for, on its socket).
        case scanStarted
    }

    public var use: Use
    public var channel: Channel

    public init(use: Use, channel: Channel) {
        self.use = use
        self.channel = channel
    }

    /// What is kept from `step` on (each step keeps at most what the one before it kept).
    public func kept(after step: Step) -> Capabilities {
        if use == .offline { return [] }
        switch channel {
        case .h4:
            return []
        case .user:
            return step == .start ? .netAdmin : []
        case .raw, .rawWithMonitor:
            switch step {
            case .start, .opened: return .bluetooth
            case .scanStarted: return use == .scan ? .netRaw : .bluetooth
            }
        }
    }
}

extension Privileges {
    private static let policy = Mutex<CapabilityPolicy?>(nil)

    /// Starts the run under `policy`: keeps what it needs at the start (``start(keeping:)``).
    @discardableResult
    public static func start(_ policy: CapabilityPolicy) throws(Errno) -> Capabilities {
        self.policy.withLock { $0 = policy }
        return try start(keeping: policy.kept(after: .start))
    }

    /// The run reached `step`: what the policy no longer keeps is dropped, for good. Nothing
    /// happens without a policy (a library user, the tests).
    public static func reached(_ step: CapabilityPolicy.Step) {
        guard let policy = policy.withLock({ $0 }) else { return }
        keepOnly(policy.kept(after: step))
    }
}
