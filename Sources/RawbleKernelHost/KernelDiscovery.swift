import Logging
import RawbleHost
import RawbleHostCore
import RawbleKernel
import RawbleManagementCore
import RawbleWire
import Synchronization

/// Scanning on `hciN` asked of the kernel, as bluetoothd asks it: the management interface's
/// Start Discovery and Stop Discovery (LE), so the kernel knows the controller scans and
/// arbitrates it with its other users. The advertising reports of that scan reach rawble's
/// host on the raw channel, as every event does.
///
/// - Another program already discovering (bluetoothd, as a desktop's Bluetooth panel asks):
///   the kernel answers Busy, and its scan's reports serve rawble as well; nothing is stopped
///   at the end, since it is not rawble's.
/// - The kernel ends an LE discovery by itself after about 10 s, and when another program's
///   discovery ends, rawble's scan would go quiet: while a scan is wanted, every "discovering
///   off" for the adapter starts it again.
/// - Passive scanning (the management interface discovers actively only) and a process without
///   CAP_NET_ADMIN (Permission Denied) are declined: the adapter sends its own scan commands,
///   as before, and says so in a notice.
public final class KernelDiscovery: ScanControl {
    private let index: UInt16
    private let logger: Logger
    private let opener: @Sendable () throws(KernelError) -> ManagementSocket
    private let state = Mutex(State())
    /// How long after a "discovering off" the scan is asked for again (the kernel may be
    /// between two steps of its own, e.g. connecting).
    let restartDelay: Duration
    /// Bound on each management command's answer. The kernel answers a discovery command only
    /// once its own command queue reaches it, which may wait behind a connection it is making
    /// (seen: ~20 s on 6.12 after each connection, with a controller that sends the legacy LE
    /// Connection Complete), so the bound is generous; it only keeps a kernel that never
    /// answers from hanging a scan.
    let commandTimeout: Duration
    /// The clock the restart delay runs on (the management socket's timeouts run on its own).
    let clock: any Clock<Duration>

    private struct State {
        var socket: ManagementSocket?
        var watcher: Task<Void, Never>?
        /// A scan is wanted (between start and stop).
        var wanted = false
        /// The running discovery is rawble's own (Start Discovery succeeded), so stop ends it.
        var ownsDiscovery = false
    }

    /// - Parameters:
    ///   - index: the adapter (`hciN`'s N).
    ///   - logger: where the scan's events are logged (another program discovering, a restart).
    ///   - opener: opens the management socket (the kernel's by default; a test's own).
    ///   - restartDelay: how long after the kernel's "discovering off" the scan is asked again.
    ///   - commandTimeout: bound on each management command's answer.
    ///   - clock: what the restart delay and (with the default `opener`) the commands' bound
    ///     run on: the real continuous clock by default, a test's virtual one.
    public init(adapter index: UInt16, logger: Logger = Logger(label: "rawble.kernel"), restartDelay: Duration = .milliseconds(100),
                commandTimeout: Duration = .seconds(30), clock: any Clock<Duration> = ContinuousClock(),
                opener: (@Sendable () throws(KernelError) -> ManagementSocket)? = nil) {
        self.index = index
        self.logger = logger
        self.restartDelay = restartDelay
        self.commandTimeout = commandTimeout
        self.clock = clock
        if let opener {
            self.opener = opener
        } else {
            self.opener = { () throws(KernelError) in try ManagementSocket.open(clock: clock) }
        }
    }

    public func startScanning(active: Bool) async throws(HostError) -> ScanControlOutcome {
        // The management socket is bound (trusted, with CAP_NET_ADMIN) or the scan declined:
        // what the run's policy keeps no longer includes what only this needed.
        defer { Privileges.reached(.scanStarted) }
        guard active else {
            return .declined(reason: "the kernel's discovery scans actively only, so a passive scan is the adapter's own")
        }
        let socket: ManagementSocket
        do {
            socket = try state.withLock { (state) throws(KernelError) -> ManagementSocket in
                if let socket = state.socket { return socket }
                let socket = try opener()
                state.socket = socket
                return socket
            }
        } catch {
            return .declined(reason: "the kernel's management interface is not available (\(error))")
        }
        state.withLock { $0.wanted = true }
        let outcome = try await start(on: socket)
        if case .scanning = outcome { watch(socket) }
        return outcome
    }

    public func stopScanning() async throws(HostError) {
        let (socket, watcher) = state.withLock { state in
            defer {
                state.wanted = false
                state.socket = nil
                state.watcher = nil
            }
            return (state.socket, state.watcher)
        }
        // A restart the watcher has asked for may be waiting for the kernel's answer: whether
        // the discovery is rawble's own is known once it has it (stopping before would leave a
        // discovery rawble started running). The watcher ends after it; no new one starts,
        // the scan being no longer wanted.
        watcher?.cancel()
        await watcher?.value
        let owned = state.withLock { state in
            defer { state.ownsDiscovery = false }
            return state.ownsDiscovery
        }
        guard let socket else { return }
        defer { Task { await socket.close() } }
        guard owned else { return }
        let reply: ManagementSocket.Reply
        do {
            reply = try await socket.send(.stopDiscovery(index: index, addressTypes: .le), timeout: commandTimeout)
        } catch {
            throw Self.failure(error, asking: "to stop its scan on hci\(index)")
        }
        if let stuck = Self.notAnswering(reply.status, asking: "to stop its scan on hci\(index)") { throw stuck }
        // Rejected: the discovery already ended (the kernel's timeout, a connection): nothing to stop.
        guard reply.status == .success || reply.status == .rejected else {
            throw .busy("the kernel did not stop its scan on hci\(index) (\(reply.status))")
        }
    }

    /// Asks for the discovery once: rawble's own, or another program's shared.
    private func start(on socket: ManagementSocket) async throws(HostError) -> ScanControlOutcome {
        let reply: ManagementSocket.Reply
        do {
            reply = try await socket.send(.startDiscovery(index: index, addressTypes: .le), timeout: commandTimeout)
        } catch {
            throw Self.failure(error, asking: "to scan on hci\(index)")
        }
        if let stuck = Self.notAnswering(reply.status, asking: "to scan on hci\(index)") { throw stuck }
        switch reply.status {
        case .success:
            state.withLock { $0.ownsDiscovery = true }
            return .scanning
        case .busy:
            // Another program discovers (or the kernel is between two of its steps): its reports
            // serve; when it stops, the watcher starts rawble's own.
            logger.debug("hci\(index): another program is discovering: reading its scan")
            state.withLock { $0.ownsDiscovery = false }
            return .scanning
        case .permissionDenied:
            // Without CAP_NET_RAW the adapter's own commands would be refused too: one line now.
            guard Privileges.available.contains(.netRaw) else {
                throw .permissionDenied(KernelError.missingCapability(
                    operation: "scanning on hci\(index)", errno: .notPermitted, user: KernelError.userName).description)
            }
            return .declined(reason: "asking the kernel to scan needs CAP_NET_ADMIN (\(KernelError.groupLine(user: KernelError.userName))); behind the kernel's back a Linux 6.x kernel may make no LE connection afterwards until the adapter is restarted")
        case .notPowered:
            throw .permissionDenied(KernelError.adapterDown(adapter: "hci\(index)").description)
        case .notSupported, .rejected, .invalidParameters:
            return .declined(reason: "the kernel refused to scan on hci\(index) (\(reply.status))")
        default:
            throw .busy("the kernel refused to scan on hci\(index) (\(reply.status))")
        }
    }

    /// A management command that got no answer within the bound: the kernel's queue for the
    /// adapter is stuck behind a controller that stopped answering (each of its HCI commands
    /// waits for the controller's timeout); any other failure is the socket's.
    static func failure(_ error: KernelError, asking what: String) -> HostError {
        if case .system(_, .timedOut) = error {
            return .controllerNotAnswering("the kernel did not answer when asked \(what)")
        }
        return .linkLost("asking the kernel \(what): \(error)")
    }

    /// The kernel's answer when the controller's HCI commands timed out under a management
    /// command: its `-ETIMEDOUT` becomes Authentication Failed (mgmt_errno_status in the
    /// kernel's net/bluetooth/mgmt.c), and Timeout is the status that says so.
    static func notAnswering(_ status: ManagementStatus, asking what: String) -> HostError? {
        guard status == .authenticationFailed || status == .timeout else { return nil }
        return .controllerNotAnswering("asked \(what), the kernel's commands to the controller timed out (\(status))")
    }

    /// While a scan is wanted: every "discovering off" for this adapter starts it again.
    private func watch(_ socket: ManagementSocket) {
        let index = index
        let task = Task { [weak self] in
            for await event in socket.events {
                guard case let .discovering(eventIndex, _, discovering) = event, eventIndex == index, !discovering else { continue }
                guard let self else { return }
                try? await self.clock.sleep(for: self.restartDelay)
                guard !Task.isCancelled, self.state.withLock({ $0.wanted }) else { return }
                self.logger.debug("hci\(index): the kernel's scan ended: asking for it again")
                // Not cancelled with the watcher: a stop waits for the kernel's answer to this
                // request (bounded by the command timeout) to know whether there is a discovery
                // of rawble's own to end.
                let restart = Task { () async throws(HostError) -> ScanControlOutcome in try await self.start(on: socket) }
                do {
                    _ = try await restart.value
                } catch {
                    self.logger.warning("hci\(index): could not scan again: \(error)")
                }
            }
        }
        let previous = state.withLock { state in
            defer { state.watcher = task }
            return state.watcher
        }
        previous?.cancel()
    }
}
