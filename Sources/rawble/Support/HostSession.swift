#if canImport(Glibc)
import Glibc
import RawbleHCITransport
import RawbleHostCore
import RawbleWire
#elseif canImport(Musl)
import Musl
#endif
@preconcurrency import Dispatch
import FoundationEssentials
import Logging
import RawbleHost
import RawbleKernel
import RawbleKernelHost
import RawbleStack
import RawbleTransport
import Synchronization

/// What a command opened: the transport (flag or `RAWBLE_TRANSPORT`), the btsnoop capture
/// around it, and the central on top, which RawbleStack composes
/// (``TransportAddress/openCentral(configuration:observing:)``): rawble's own host on H4 and the
/// user channel, the kernel's on `hciN` (scanning on its raw channel, links through its L2CAP
/// sockets). Every failure to open is one actionable `CLIError`. Commands use only `central`,
/// so they run on any host.
struct HostSession {
    let central: any Central
    let transport: TransportAddress
    let capture: BtsnoopCaptureFile?
    /// On `hciN` with `--btsnoop` or `--trace`: the adapter's monitor channel, which feeds them
    /// with everything on that adapter (the kernel's own traffic included); `nil` otherwise.
    let monitor: HCIMonitorSocket?
    /// The peers this run showed or asked a passkey for (its pairing agent notes them).
    let passkeys: PasskeyJournal

    /// On `hciN`: the adapter, to tell its removal (unplugged, rfkill) from other ends.
    var kernelAdapter: KernelAdapterInfo? { (central as? KernelCentral<KernelL2CAPOpener>)?.adapter }

    /// `pairing`: on rawble's own host (not `hciN`), how the adapter pairs: the user's local
    /// identity, the bond store and the terminal's agent; `nil` leaves the host's defaults
    /// (Just Works, bonds for this run only). On `hciN` options other than the defaults are
    /// refused in one line: the kernel pairs there.
    ///
    /// Several adapters in one run (`hr --transport A,B`) open one session each: `adapter` names
    /// it (else the connection options' one transport), `identities` keeps any two of rawble's
    /// own hosts from presenting one address, and only the last one opened (`lastOpened`) lets
    /// the capabilities the opening needed go.
    static func open(_ connection: ConnectionOptions, output: OutputOptions,
                     pairing: PairingSettings? = nil, adapter: TransportAddress? = nil,
                     identities: OwnIdentities? = nil, lastOpened: Bool = true) async throws -> HostSession {
        Logs.setUp(output)
        let address = try adapter ?? connection.resolvedTransport(environment: environment())
        var configuration = Adapter.Configuration()
        configuration.logger = Logger(label: "rawble.host")
        let passkeys = PasskeyJournal()
        let identityRefusal = IdentityRefusal()
        if let pairing {
            if case .kernel = address {
                if pairing.privateAddress { throw PairingSettings.kernelPrivacyRefusal(address) }
                if pairing.isCustom { throw PairingSettings.kernelRefusal(address, what: "pairing") }
            } else {
                configurePairing(&configuration, pairing, transport: address, refusal: identityRefusal, passkeys: passkeys,
                                 identities: identities)
            }
        }
        // Started before the transport opens, so its times count from the session's start.
        let trace = connection.trace ? PacketTrace(keys: connection.keys) : nil
        var opening = address
        var capture: BtsnoopCaptureFile?
        var monitor: HCIMonitorSocket?
        var taps: [any HCIPacketTap] = []
        do {
            // On hciN the capture and the trace come from the adapter's monitor channel: its
            // adapter is chosen first.
            var chosen: KernelAdapterInfo?
            if case .kernel(let number) = address, connection.btsnoop != nil || trace != nil {
                chosen = try KernelAdapters.find(number.map { "hci\($0)" })
            }
            capture = try connection.btsnoop.map { path throws(CLIError) in try createCapture(path, keys: connection.keys) }
            taps = [capture as (any HCIPacketTap)?, trace].compactMap { $0 }
            if connection.keys == .included {
                let what = capture == nil ? "the trace holds" : (trace == nil ? "the capture holds" : "the capture and the trace hold")
                Output.error("rawble: warning: --include-keys: \(what) every key that crosses HCI; whoever has them can decrypt these links")
            }
            if let chosen {
                opening = .kernel(adapter: chosen.index)
                let what = connection.btsnoop == nil ? "the trace holds"
                    : (trace == nil ? "the btsnoop capture holds" : "the btsnoop capture and the trace hold")
                monitor = try openMonitor(chosen, taps: taps, what: what)
            }
        } catch {
            _ = capture?.close()
            if let error = error as? KernelError { throw CLIError(kernel: error) }
            throw error
        }
        // With the monitor, it is the taps' only source: the raw channel's packets are on it already.
        if monitor != nil { taps = [] }
        do {
            let central = try await opening.openCentral(configuration: configuration, observing: taps)
            if lastOpened { Privileges.reached(.opened) }
            return HostSession(central: central, transport: address, capture: capture, monitor: monitor, passkeys: passkeys)
        } catch {
            await monitor?.close()
            _ = capture?.close()
            throw identityRefusal.error ?? cliError(error)
        }
    }

    /// rawble's own host pairs as `settings` say, as its identity on the controller it opens
    /// (the same address and IRK on every run, so peers' bonds keep matching; each adapter its
    /// own), with the bonds kept for it. The identity is chosen once start-up has read the
    /// controller's public address (``IdentityOwner``); a refused identity file is kept in
    /// `refusal`, the line and status the command ends with.
    private static func configurePairing(_ configuration: inout Adapter.Configuration, _ settings: PairingSettings,
                                         transport: TransportAddress, refusal: IdentityRefusal, passkeys: PasskeyJournal,
                                         identities: OwnIdentities?) {
        let env = environment()
        let logger = configuration.logger
        configuration.pairing = settings.configuration(identity: nil)
        configuration.pairingAgent = TerminalPairingAgent(passkey: settings.passkey, acceptsComparisons: settings.confirm,
                                                          passkeys: passkeys)
        configuration.identityForController = { controller in
            let loaded: LocalIdentity.Loaded
            do {
                let owner = IdentityOwner(publicAddress: controller.publicAddress, transport: transport)
                loaded = try identities?.claim(for: owner, transport: transport, environment: env)
                    ?? LocalIdentity.load(for: owner, transport: transport, environment: env)
            } catch let error as CLIError {
                refusal.keep(error)
                throw error
            }
            for line in [loaded.notKept, loaded.adopted].compactMap({ $0 }) { logger.notice("\(line)") }
            let identity = loaded.identity
            return Adapter.Identity(
                ownAddress: settings.privateAddress ? .resolvablePrivate(rotatingEvery: PairingSettings.privateAddressPeriod)
                    : .randomStatic(identity.address),
                pairing: identity.pairingIdentity,
                bonds: openBondStore(environment: env, identity: identity.deviceAddress))
        }
    }

    /// On `hciN` with a capture or a trace: the adapter's monitor channel, opened before the
    /// raw channel (so they start before rawble's first command, and hold what the kernel
    /// itself sends, e.g. its L2CAP connections' ATT). `nil` when it cannot be opened: the taps
    /// then see the raw channel's own packets, with a notice saying what they lack (`what`).
    private static func openMonitor(_ adapter: KernelAdapterInfo, taps: [any HCIPacketTap],
                                    what: String) throws(KernelError) -> HCIMonitorSocket? {
        do {
            return try HCIMonitorSocket.open(adapter: adapter.index) { seen in
                for tap in taps { tap.observe(seen.packet, direction: seen.direction) }
            }
        } catch {
            // Without CAP_NET_RAW the raw channel cannot work either: say so now, once.
            if case .missingCapability = error { throw error }
            Logger(label: "rawble.host").notice("\(what) only what rawble sent and received on \(adapter.name)'s raw channel, not the kernel's own traffic (its L2CAP connections' ATT): \(error)")
            return nil
        }
    }

    /// The one line for a failure to open, with the CLI's status: the kernel's own lines
    /// (the group to ask for, a busy user channel and how to free it, ...), the transport's and the
    /// controller's in the CLI's words (e.g. where the simulated strap listens).
    static func cliError(_ error: TransportAddress.OpeningError) -> CLIError {
        switch error.reason {
        case .kernel(let failure):
            return CLIError(kernel: failure)
        case .transport(let failure):
            return cliError(failure, transport: error.transport)
        case .controller(let failure):
            if let adapter = error.kernelAdapter, let stuck = notAnsweringError(failure, adapter: adapter) { return stuck }
            return cliError(failure, transport: error.transport)
        }
    }

    /// Creates the btsnoop file at `path`, or the one-line error saying why it cannot be.
    private static func createCapture(_ path: String, keys: KeyMaterial) throws(CLIError) -> BtsnoopCaptureFile {
        do {
            return try BtsnoopCaptureFile(path: path, keys: keys)
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
        return Self.cliError(error, transport: kernelAdapter.map { .kernel(adapter: $0.index) } ?? transport, passkeys: passkeys)
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

    static func cliError(_ error: TransportError, transport spec: TransportAddress) -> CLIError {
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

    /// `passkeys`: the peers this run paired with by passkey (see ``PairingErrors``).
    static func cliError(_ error: HostError, transport spec: TransportAddress, passkeys: PasskeyJournal? = nil) -> CLIError {
        switch error {
        case .commandTimedOut(let opcode, _) where opcode == .reset:
            CLIError(.timeout, "the controller at \(spec) did not answer HCI Reset",
                     fix: "check it is an HCI controller speaking H4 and that no other host drives it")
        case .commandTimedOut, .connectionTimedOut, .controllerNotAnswering:
            CLIError(.timeout, error.description)
        case .transport(let transportError):
            CLIError(.transport, "\(spec): \(transportError)")
        case .connectionFailed, .connectionRefused, .disconnected:
            // The peer, or the controller out of room for one more link: not the transport.
            CLIError(.peerError, error.description)
        case .unsupported:
            CLIError(.unavailable, error.description)
        case .permissionDenied:
            CLIError(.permission, error.description)
        case .cancelled:
            CLIError.interrupted
        case .pairingFailed, .encryptionFailed, .insufficientSecurity, .securityTimedOut:
            PairingErrors.cliError(error, passkeys: passkeys)
        case .pairingDisabled:
            CLIError(.unavailable, error.description)
        default:
            CLIError(.transport, error.description)
        }
    }
}

/// The own addresses of the adapters one run opened (`hr --transport A,B`): no two of them
/// present the same one, which peers would take for one device (and the adapters could not
/// tell their links apart). An adapter whose kept identity another of the run already has (two
/// controllers with one public address, as clones of one dongle report) takes the identity
/// kept for its transport instead, else one for this run only.
final class OwnIdentities: Sendable {
    private let taken = Mutex<Set<BluetoothAddress>>([])

    /// The identity of `owner`, reached through `transport`, that no other adapter of the run has.
    func claim(for owner: IdentityOwner, transport: TransportAddress,
               environment: [String: String]) throws -> LocalIdentity.Loaded {
        var loaded = try LocalIdentity.load(for: owner, transport: transport, environment: environment)
        if take(loaded.identity.address) { return loaded }
        let byTransport = IdentityOwner(publicAddress: nil, transport: transport)
        if byTransport != owner {
            loaded = try LocalIdentity.load(for: byTransport, transport: transport, environment: environment)
            if take(loaded.identity.address) {
                loaded.notKept = "\(owner) is another adapter's too in this run: \(transport) uses the identity kept for \(byTransport)"
                return loaded
            }
        }
        var fresh = LocalIdentity.generate()
        while !take(fresh.address) { fresh = LocalIdentity.generate() }
        return LocalIdentity.Loaded(identity: fresh, notKept: "\(transport) has another adapter's identity in this run: its own lasts for this run only")
    }

    private func take(_ address: BluetoothAddress) -> Bool {
        taken.withLock { $0.insert(address).inserted }
    }
}

/// The identity file a session refused while its adapter started (``LocalIdentity/load(for:transport:environment:)``):
/// the command ends with its line and status rather than the start-up's.
final class IdentityRefusal: Sendable {
    private let kept = Mutex<CLIError?>(nil)

    var error: CLIError? { kept.withLock { $0 } }

    func keep(_ error: CLIError) {
        kept.withLock { $0 = error }
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
