#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@preconcurrency import Dispatch
import FoundationEssentials
import Logging
import RawbleKernel
import RawbleKernelHost
import RawbleHost
import RawbleTransport
import Synchronization

/// What a command opened: the transport (flag or `RAWBLE_TRANSPORT`), the btsnoop capture
/// around it, and the central on top: rawble's own host on H4 and the user channel, the
/// kernel's on `hciN` (scanning on its raw channel, links through its L2CAP sockets). Every
/// failure to open is one actionable `CLIError`. Commands use only `central`, so they run on
/// any host.
struct HostSession {
    let central: any Central
    let transport: TransportSpec
    let capture: BtsnoopCaptureFile?
    /// On `hciN` with `--btsnoop`: the adapter's monitor channel, which feeds the capture with
    /// everything on that adapter (the kernel's own traffic included); `nil` otherwise.
    let monitor: HCIMonitorSocket?
    /// On `hciN`: the adapter, to tell its removal (unplugged, rfkill) from other ends.
    var kernelAdapter: KernelAdapterInfo? = nil

    static func open(_ connection: ConnectionOptions, output: OutputOptions) async throws -> HostSession {
        Logs.setUp(output)
        let spec = try connection.resolvedTransport(environment: environment())
        // Started before the transport opens, so its times count from the session's start.
        let trace = connection.trace ? PacketTrace() : nil
        if case .kernel(let index) = spec {
            return try await openKernel(adapter: index.map { "hci\($0)" }, btsnoop: connection.btsnoop, trace: trace, spec: spec)
        }
        var transport = try await openTransport(spec)
        var capture: BtsnoopCaptureFile?
        if let path = connection.btsnoop {
            do {
                capture = try createCapture(path)
            } catch {
                await transport.close()
                throw error
            }
        }
        let taps: [any HCIPacketTap] = [capture as (any HCIPacketTap)?, trace].compactMap { $0 }
        if !taps.isEmpty { transport = CapturingTransport(transport, taps: taps) }
        var configuration = Adapter.Configuration()
        configuration.logger = Logger(label: "rawble.host")
        do {
            let adapter = try await Adapter.open(transport, configuration: configuration)
            return HostSession(central: adapter, transport: spec, capture: capture, monitor: nil)
        } catch {
            _ = capture?.close()
            throw cliError(error, transport: spec)
        }
    }

    /// `hciN`, the kernel's raw channel, with the kernel's central. With a capture or a trace,
    /// the adapter's monitor channel is opened first (so they start before rawble's first
    /// command, and hold what the kernel itself sends, e.g. its L2CAP connections' ATT) and is
    /// their only source: the raw channel's packets are on it already, so they are not seen
    /// twice. When the monitor cannot be opened they fall back to the raw channel's own
    /// packets, with a notice saying what they lack.
    private static func openKernel(adapter name: String?, btsnoop path: String?, trace: PacketTrace?,
                                   spec: TransportSpec) async throws -> HostSession {
        let logger = Logger(label: "rawble.host")
        var capture: BtsnoopCaptureFile?
        var monitor: HCIMonitorSocket?
        var transport: any HCITransport
        let kernelAdapter: KernelAdapterInfo
        do {
            if path != nil || trace != nil {
                let chosen = try KernelAdapters.find(name)
                capture = try path.map(createCapture)
                let taps: [any HCIPacketTap] = [capture as (any HCIPacketTap)?, trace].compactMap { $0 }
                do {
                    monitor = try HCIMonitorSocket.open(adapter: chosen.index) { seen in
                        for tap in taps { tap.observe(seen.packet, direction: seen.direction) }
                    }
                } catch {
                    // Without CAP_NET_RAW the raw channel cannot work either: say so now, once.
                    if case .missingCapability = error { throw error }
                    let what = path == nil ? "the trace holds" : (trace == nil ? "the btsnoop capture holds" : "the btsnoop capture and the trace hold")
                    logger.notice("\(what) only what rawble sent and received on \(chosen.name)'s raw channel, not the kernel's own traffic (its L2CAP connections' ATT): \(error)")
                }
                let opened = try KernelCentral<KernelL2CAPOpener>.openRawChannel(adapter: chosen.name)
                transport = monitor == nil ? CapturingTransport(opened.transport, taps: taps) : opened.transport
                kernelAdapter = opened.adapter
            } else {
                let opened = try KernelCentral<KernelL2CAPOpener>.openRawChannel(adapter: name)
                transport = opened.transport
                kernelAdapter = opened.adapter
            }
        } catch {
            await monitor?.close()
            _ = capture?.close()
            if let error = error as? KernelError { throw CLIError(kernel: error) }
            throw error
        }
        var configuration = Adapter.Configuration()
        configuration.logger = logger
        // Scans are the kernel's, asked through its management interface (see KernelDiscovery).
        configuration.scanControl = KernelDiscovery(adapter: kernelAdapter.index, logger: logger)
        do {
            let central = try await KernelCentral.open(
                rawChannel: transport, opener: KernelL2CAPOpener(local: kernelAdapter.address), configuration: configuration)
            return HostSession(central: central, transport: spec, capture: capture, monitor: monitor,
                               kernelAdapter: kernelAdapter)
        } catch {
            await monitor?.close()
            _ = capture?.close()
            if let stuck = notAnsweringError(error, adapter: kernelAdapter) { throw stuck }
            throw cliError(error, transport: spec)
        }
    }

    /// Creates the btsnoop file at `path`, or the one-line error saying why it cannot be.
    private static func createCapture(_ path: String) throws(CLIError) -> BtsnoopCaptureFile {
        do {
            return try BtsnoopCaptureFile(path: path)
        } catch {
            throw OutputFile.error(creating: "the btsnoop file", at: path, error)
        }
    }

    /// Stops scanning, disconnects, closes the transport, then the monitor (handing on the
    /// records still waiting in it), then the capture (every record is already on disk; a
    /// write that failed along the way is reported here).
    func close() async {
        await central.close()
        await monitor?.close()
        if let failure = monitor?.failure {
            Output.error("rawble: the btsnoop capture stops where reading the HCI monitor channel failed: \(failure)")
        }
        if let failure = capture?.close() {
            Output.error("rawble: the btsnoop capture is incomplete: \(failure)")
        }
    }

    func cliError(_ error: HostError) -> CLIError {
        if let removed = removedAdapterError(error) { return removed }
        if let adapter = kernelAdapter, let stuck = Self.notAnsweringError(error, adapter: adapter) { return stuck }
        // Name the adapter the session took (`hci0`), not how it was chosen.
        return Self.cliError(error, transport: kernelAdapter.map { .kernel(adapter: Int($0.index)) } ?? transport)
    }

    /// The one line for a controller the kernel owns that has stopped answering (the kernel
    /// logs e.g. "command 0x200c tx timeout" or "Unable to disable scanning: -16"): what went
    /// unanswered, and the fix, power-cycling the adapter: with bluetoothd through it, without
    /// it through the management interface (btmgmt, in BlueZ's package). `nil` for any other
    /// error.
    static func notAnsweringError(_ error: HostError, adapter: KernelAdapterInfo) -> CLIError? {
        let detail: String
        switch error {
        case .controllerNotAnswering(let what): detail = what
        case .commandTimedOut, .commandQueueFull: detail = error.description
        default: return nil
        }
        let index = adapter.index
        return CLIError(.timeout, "\(adapter.name): the controller has stopped answering (\(detail))",
                        fix: "power it off and on (`bluetoothctl power off; bluetoothctl power on`, or without bluetoothd `sudo btmgmt --index \(index) power off; sudo btmgmt --index \(index) power on`), or replug it")
    }

    /// The one line for an adapter the kernel unregistered (unplugged, rfkill, its driver
    /// unloaded) when `error` is the raw channel's end that follows; `nil` otherwise.
    func removedAdapterError(_ error: HostError) -> CLIError? {
        guard let adapter = kernelAdapter, case .transport = error,
              let adapters = try? KernelAdapters.list(), !adapters.contains(where: { $0.index == adapter.index }) else { return nil }
        return CLIError(kernel: .adapterRemoved(adapter: adapter.name))
    }

    static func openTransport(_ spec: TransportSpec) async throws -> any HCITransport {
        do {
            switch spec {
            case .kernel:
                throw CLIError(.internalError, "the kernel's raw channel is opened by HostSession.open")
            case .userChannel(let index):
                do {
                    return try HCISocketTransport.open(adapter: UInt16(clamping: index), channel: .user)
                } catch {
                    throw CLIError(kernel: error)
                }
            case let .tcp(host, port):
                return try await H4StreamTransport.connect(tcp: host, port: port)
            case .unix(let path):
                return try await H4StreamTransport.connect(unix: path)
            case let .serial(path, baud):
                return try H4StreamTransport.openSerial(path: path, baudRate: baud ?? 115_200)
            }
        } catch let error as TransportError {
            throw cliError(error, transport: spec)
        }
    }

    static func cliError(_ error: TransportError, transport spec: TransportSpec) -> CLIError {
        switch error {
        case .connectionRefused, .ioError(ENOENT, _), .ioError(ECONNREFUSED, _):
            CLIError(.transport, "nothing listens at \(spec)",
                     fix: "start the controller first (a simulated strap: Scripts/sim-strap, on tcp:127.0.0.1:9000)")
        case .permissionDenied:
            CLIError(.permission, error.description)
        case .notFound:
            CLIError(.cannotOpen, error.description)
        case .timedOut:
            CLIError(.timeout, "cannot open \(spec): \(error)")
        default:
            CLIError(.transport, "cannot open \(spec): \(error)")
        }
    }

    static func cliError(_ error: HostError, transport spec: TransportSpec) -> CLIError {
        switch error {
        case .commandTimedOut(let opcode, _) where opcode == .reset:
            CLIError(.timeout, "the controller at \(spec) did not answer HCI Reset",
                     fix: "check it is an HCI controller speaking H4 and that no other host drives it")
        case .commandTimedOut, .connectionTimedOut, .controllerNotAnswering:
            CLIError(.timeout, error.description)
        case .transport(let transportError):
            CLIError(.transport, "\(spec): \(transportError)")
        case .connectionFailed, .disconnected:
            CLIError(.peerError, error.description)
        case .unsupported:
            CLIError(.unavailable, error.description)
        case .permissionDenied:
            CLIError(.permission, error.description)
        case .cancelled:
            CLIError.interrupted
        default:
            CLIError(.transport, error.description)
        }
    }
}

/// Runs a body when SIGINT or SIGTERM arrives (Ctrl-C) while this watcher lives: commands stop
/// their work cleanly. Watchers may follow one another (opening a peer, then the command's work).
///
/// Make the watcher before the task it stops, then give it the body (``onInterrupt(_:)``): a
/// Ctrl-C that comes in between is kept and runs the body as soon as it is given, never lost and
/// never the signal's default action (a loaded machine showed both: the task printed before the
/// watcher existed, and the signal killed the process).
final class InterruptWatcher: Sendable {
    private let id: Int
    private let state: State

    /// Whether Ctrl-C (or SIGTERM) came while this watcher lived: a command stopped by it rather
    /// than by its own end (`--duration`, `--count`) exits 78.
    var fired: Bool { state.value.withLock { $0.fired } }

    /// A watcher that keeps a Ctrl-C until ``onInterrupt(_:)`` gives it what to do.
    init() {
        let state = State()
        self.state = state
        id = Interrupts.shared.add { state.fire() }
    }

    /// A watcher that runs `body` on Ctrl-C.
    convenience init(_ body: @escaping @Sendable () -> Void) {
        self.init()
        onInterrupt(body)
    }

    /// Runs `body` on Ctrl-C from now on, and at once if one already came.
    func onInterrupt(_ body: @escaping @Sendable () -> Void) {
        let alreadyFired = state.value.withLock { state in
            state.body = body
            return state.fired
        }
        if alreadyFired { body() }
    }

    private final class State: Sendable {
        let value = Mutex<(fired: Bool, body: (@Sendable () -> Void)?)>((false, nil))

        func fire() {
            let body = value.withLock { state in
                state.fired = true
                return state.body
            }
            body?()
        }
    }

    deinit {
        Interrupts.shared.remove(id)
    }
}

/// The process's one pair of signal sources, made with the first watcher and never cancelled:
/// a source made for a signal after an earlier one was cancelled missed the Ctrl-C (libdispatch
/// on Linux), so watchers register handlers here instead of making sources of their own. A
/// Ctrl-C between two watchers (none registered) goes to the next one.
private final class Interrupts: Sendable {
    static let shared = Interrupts()

    private let handlers = Mutex<(next: Int, pending: Bool, bodies: [Int: @Sendable () -> Void])>((0, false, [:]))
    /// Kept, never cancelled (see above); a Mutex only to hold them in a Sendable class.
    private let sources: Mutex<[any DispatchSourceSignal]>

    private init() {
        sources = Mutex([SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { Interrupts.shared.fire() }
            source.resume()
            return source
        })
    }

    func add(_ body: @escaping @Sendable () -> Void) -> Int {
        let (id, pending) = handlers.withLock { state in
            state.next += 1
            state.bodies[state.next] = body
            defer { state.pending = false }
            return (state.next, state.pending)
        }
        if pending { body() }
        return id
    }

    func remove(_ id: Int) {
        _ = handlers.withLock { $0.bodies.removeValue(forKey: id) }
    }

    private func fire() {
        let bodies = handlers.withLock { state in
            state.pending = state.bodies.isEmpty
            return Array(state.bodies.values)
        }
        for body in bodies { body() }
    }
}
