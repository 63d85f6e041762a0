import NIOCore
import RawbleBearer
import RawbleHCITransport
import RawbleHost
import RawbleHostCore
import RawbleKernel
import RawbleTransport
import RawbleWire

/// A link the kernel made: an L2CAP socket on the LE ATT channel (see `KernelATTBearer`).
public final class KernelLink: CentralLink {
    public let peer: DeviceAddress
    public let att: KernelATTBearer

    init(peer: DeviceAddress, att: KernelATTBearer) {
        self.peer = peer
        self.att = att
    }

    /// Why the link ended (the kernel's reason, in words), or `nil` while it is up.
    public var ending: HostError? { att.end.map(Self.hostError) }

    /// Closes the socket: the kernel disconnects once no socket uses the link (it waits a
    /// moment first, as it does for every L2CAP link). Closing is local and prompt, so
    /// `timeout` has nothing to bound here.
    public func disconnect(timeout: Duration) async throws(HostError) {
        await att.close()
    }

    public func waitUntilDisconnected() async -> HostError {
        guard let end = await att.waitUntilEnded() else { return .cancelled }
        return Self.hostError(end)
    }

    static func hostError(_ end: BearerError) -> HostError {
        switch end {
        case .closed: .closed
        case .disconnected(let reason): .linkLost(reason)
        default: .linkLost(end.description)
        }
    }
}

/// Opens links through the kernel's L2CAP sockets, from the adapter at `local`.
public struct KernelL2CAPOpener: KernelLinkOpener {
    /// The adapter's address (`.any`: the kernel chooses).
    public var local: BluetoothAddress
    /// The adapter the links start from, when known (``init(adapter:)``): its name and index
    /// for messages about it, e.g. that it was removed.
    public var adapter: KernelAdapterInfo?

    /// Links from the adapter at `local`, or from the one the kernel chooses.
    public init(local: BluetoothAddress = .any) {
        self.local = local
        adapter = nil
    }

    /// Links from `adapter`, which the central then names (`KernelCentral.adapter`).
    public init(adapter: KernelAdapterInfo) {
        local = adapter.address
        self.adapter = adapter
    }

    public func openLink(to peer: DeviceAddress, timeout: Duration, holding: Int, on eventLoop: any EventLoop) async throws(HostError) -> KernelLink {
        if Task.isCancelled { throw .cancelled }
        do {
            let bearer = try await KernelATTBearer.connect(
                to: peer.address, type: peer.type, local: local, timeout: timeout, on: eventLoop)
            return KernelLink(peer: peer, att: bearer)
        } catch {
            throw Self.hostError(error, peer: peer, timeout: timeout, holding: holding)
        }
    }

    /// The host's error for a kernel connect that failed with `error` while `holding` links of
    /// this adapter were up. The kernel turns the controller's refusal of one more link into an
    /// errno (`bt_to_errno`): Memory Capacity Exceeded (0x07) is ENOMEM, Connection Limit
    /// Exceeded (0x09) EMLINK, and Connection Rejected due to Limited Resources (0x0D) shares
    /// ECONNREFUSED with 0x0E and 0x0F. Those get the same one line as on rawble's own host: the
    /// links held and what to do. ECONNREFUSED on an adapter holding none keeps its plain meaning.
    package static func hostError(_ error: KernelError, peer: DeviceAddress, timeout: Duration, holding: Int = 0) -> HostError {
        switch error {
        case .connectFailed(_, .noMemory, _):
            .connectionRefused(peer, reason: HostError.linkLimitReason(.memoryCapacityExceeded, holding: holding) + " (errno ENOMEM)")
        case .connectFailed(_, .tooManyLinks, _):
            .connectionRefused(peer, reason: HostError.linkLimitReason(.connectionLimitExceeded, holding: holding) + " (errno EMLINK)")
        case .connectFailed(_, .connectionRefused, _) where holding > 0:
            .connectionRefused(peer, reason: HostError.linkLimitReason(
                "the kernel refused", what: "ECONNREFUSED: the controller's Connection Rejected due to Limited Resources, 0x0D, or 0x0E/0x0F",
                holding: holding))
        case .connectTimeout:
            .connectionTimedOut(peer, seconds: timeout / .seconds(1))
        case .missingCapability, .adapterDownWithoutPermission:
            .permissionDenied(error.description)
        case .noBluetoothInKernel, .noAdapter, .noSuchAdapter, .rfkillBlocked, .adapterDown:
            .unsupported(error.description)
        default:
            .connectionRefused(peer, reason: error.description)
        }
    }
}

extension KernelCentral where Opener == KernelL2CAPOpener {
    /// The kernel's central on one adapter: `name` (`hciN`), or the first that is up, else the
    /// first. A down adapter is powered on when this process may; the raw channel is opened
    /// with only the events scanning needs. Scans are asked of the kernel (``KernelDiscovery``,
    /// unless `configuration` brings its own `ScanControl`) and rawble's host reads their
    /// reports on the raw channel, changing nothing the kernel set up.
    /// - Throws: `KernelError` (no Bluetooth, no such adapter, no permission: each with its
    ///   fix) or `HostError` (the controller did not answer the reads scanning needs).
    public static func open(adapter name: String?, configuration: Adapter.Configuration = Adapter.Configuration()) async throws -> KernelCentral {
        // On a thread for blocking work: powering a down adapter on waits for the kernel.
        let (rawChannel, adapter) = try await onBlockingThread("opening \(name ?? "the default adapter")") { () throws(KernelError) in
            try openRawChannel(adapter: name)
        }
        return try await open(rawChannel: rawChannel, adapter: adapter, configuration: configuration)
    }

    /// The kernel's central on `rawChannel`, the raw HCI channel of `adapter` as
    /// ``openRawChannel(adapter:)`` opened it (perhaps wrapped, e.g. in a
    /// `CapturingTransport`): scans asked of the kernel (``KernelDiscovery``, unless
    /// `configuration` brings its own `ScanControl`), links from `adapter`.
    /// - Throws: the `HostError` of a controller that did not answer the reads scanning needs.
    public static func open(rawChannel: some HCITransport, adapter: KernelAdapterInfo,
                            configuration: Adapter.Configuration = Adapter.Configuration()) async throws(HostError) -> KernelCentral {
        var configuration = configuration
        if configuration.scanControl == nil {
            configuration.scanControl = KernelDiscovery(adapter: adapter.index, logger: configuration.logger,
                                                        clock: configuration.clock)
        }
        return try await KernelCentral.open(rawChannel: rawChannel, opener: KernelL2CAPOpener(adapter: adapter),
                                            configuration: configuration)
    }

    /// The adapter this central scans on and makes links from, when it was opened from one
    /// (``open(adapter:configuration:)``): which one `nil` chose, and its name for messages.
    public var adapter: KernelAdapterInfo? { opener.adapter }

    /// The raw HCI channel of adapter `name` (or the default one), brought up first if down;
    /// with the adapter as it is now. For a caller that wraps the channel (e.g. a capture)
    /// before `open(rawChannel:opener:configuration:)`. Blocking (up to 10 s while a down
    /// adapter is powered on): from async code, call it off Swift's cooperative threads.
    public static func openRawChannel(adapter name: String?) throws(KernelError) -> (transport: any HCITransport, adapter: KernelAdapterInfo) {
        var adapter = try KernelAdapters.find(name)
        // Down (as the kernel reports it: also in the ~2 s after the adapter registered, when
        // the kernel holds it up itself, unmanaged, and switches it off unless claimed). It is
        // powered on as bluetoothd does (management Set Powered), so the kernel registers its
        // Security Manager and a peer asking for encryption can be paired with (BT_SECURITY).
        if !adapter.isUp {
            do {
                try KernelManagement.powerOn(index: adapter.index)
            } catch .system {
                // The management channel did not do it: the ioctl, managed first as before.
                _ = try? KernelManagement.markManaged(index: adapter.index)
                try KernelAdapters.up(index: adapter.index)
            }
            adapter = try KernelAdapters.find(adapter.name)
        }
        // Without CAP_NET_RAW the raw channel opens, but the kernel refuses most commands on
        // it and may end the socket: one line naming the capability now, not "closed by peer".
        guard Privileges.available.contains(.netRaw) else {
            throw .missingCapability(operation: "sending commands on \(adapter.name)'s raw HCI channel", errno: .notPermitted,
                                     user: KernelError.userName)
        }
        return (try HCISocketTransport.open(adapter: adapter.index, channel: .raw), adapter)
    }
}
