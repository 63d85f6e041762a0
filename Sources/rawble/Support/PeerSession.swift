import FoundationEssentials
import RawbleBearer
import RawbleGATT
import RawbleGATTCore
import RawbleHost
import RawbleHostCore
import RawbleStack
import RawbleWire

/// A command's link to one peer: the host session, the connection and a GATT client on its ATT
/// bearer with the MTU exchanged. `close()` disconnects and closes everything.
struct PeerSession {
    let host: HostSession
    let connection: any CentralLink
    let gatt: GATTClient
    let timeout: Duration
    /// Says what the command waits for (the peer, the connection, an answer, the first value).
    let waits: WaitStatus
    /// The status line this session drew its waits on, when it made one (``open``): stopped
    /// with the session.
    var statusLine: StatusLine?

    /// Opens the transport, finds the address type (the flag, else as seen in a short scan,
    /// else random), connects within `--timeout`, and exchanges the MTU. Ctrl-C meanwhile stops
    /// it cleanly (what was opened is closed) with ``CLIError/interrupted``.
    /// `pairing`: how rawble's own host pairs (``HostSession/open(_:output:pairing:)``), and
    /// the level the link must reach before the MTU exchange (`--security`).
    /// Its waits show on a status line of its own (a terminal) and as `status` events or lines
    /// (``WaitStatus``).
    static func open(_ address: BluetoothAddress, addressType: AddressTypeArgument?,
                     connection options: ConnectionOptions, output: OutputOptions,
                     pairing: PairingSettings? = nil) async throws -> PeerSession {
        let interrupt = InterruptWatcher()
        let status = StatusLine(quiet: output.quiet)
        let waits = WaitStatus(display: status, output: output)
        let work = Task {
            try await openUninterrupted(address, addressType: addressType, connection: options, output: output, pairing: pairing,
                                        waits: waits)
        }
        interrupt.onInterrupt { work.cancel() }
        defer { withExtendedLifetime(interrupt) {} }
        let result = await work.result
        if work.isCancelled {
            // Ctrl-C came while opening; opened just the same, the session is closed again (the
            // command's work would not see that Ctrl-C).
            if case .success(let session) = result { await session.close() }
            waits.stop()
            status.stop()
            throw CLIError.interrupted
        }
        do {
            var session = try result.get()
            session.statusLine = status
            return session
        } catch {
            // Off the screen before the error line.
            waits.stop()
            status.stop()
            throw error
        }
    }

    private static func openUninterrupted(_ address: BluetoothAddress, addressType: AddressTypeArgument?,
                                          connection options: ConnectionOptions, output: OutputOptions,
                                          pairing: PairingSettings?, waits: WaitStatus) async throws -> PeerSession {
        let host = try await HostSession.open(options, output: output, pairing: pairing)
        do {
            return try await connect(on: host, to: address, addressType: addressType,
                                     timeout: .milliseconds(Int(options.timeout * 1000)), security: pairing?.required,
                                     waits: waits)
        } catch {
            await host.close()
            throw error
        }
    }

    /// Connects to `address` on an open host within `timeout` (finding its type as ``open``
    /// does) and exchanges the MTU; the host stays open whatever happens, so `rawble shell`
    /// connects again on it. Errors are one-line ``CLIError``s.
    /// `security`: the level the link must reach first (pairing, or encrypting with the bond),
    /// on rawble's own host. `waits`: where each step that lasts is told.
    static func connect(on host: HostSession, to address: BluetoothAddress, addressType: AddressTypeArgument?,
                        timeout: Duration, security: LinkSecurity? = nil, waits: WaitStatus) async throws -> PeerSession {
        // One bound for finding the peer and connecting to it: the scan for its address type
        // takes part of `--timeout`, the connection what is left (they each took all of it).
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        let type = try await resolveType(of: address, given: addressType, central: host.central,
                                         within: min(timeout, .seconds(5)), waits: waits)
        let peer = DeviceAddress(address, type: type.type)
        let left = deadline - clock.now
        if type.seen == false, left < .milliseconds(100) {
            // Not heard within the whole bound: a connection could not start in the time left.
            throw CLIError(.timeout, "no connection to \(address): it did not advertise within \(Self.seconds(timeout))",
                           fix: "check it is on, in range and advertising (rawble scan lists what is), or give a longer --timeout")
        }
        let connection: any CentralLink
        waits.begin(.connection(to: address, heard: type.seen))
        do {
            connection = try await host.central.connect(to: peer, timeout: max(left, .milliseconds(100)))
        } catch {
            if case .connectionTimedOut = error {
                throw CLIError(.timeout, "no connection to \(peer) within \(Self.seconds(timeout))",
                               fix: "is it advertising and connectable? (rawble scan lists what is)")
            }
            throw host.cliError(error)
        }
        if let security, let link = connection as? Connection {
            waits.begin(.security(address, security))
            do {
                // Bounded past SMP's own 30 s timeout, so its line is the one shown.
                try await link.secure(security, timeout: max(timeout, Self.pairingBound))
            } catch {
                try? await connection.disconnect(timeout: .seconds(3))
                throw host.cliError(error)
            }
        }
        var configuration = ATTClient.Configuration()
        configuration.transactionTimeout = timeout
        let gatt = GATTClient(att: ATTClient(bearer: connection.att, configuration: configuration))
        let session = PeerSession(host: host, connection: connection, gatt: gatt, timeout: timeout, waits: waits)
        waits.begin(.response(address, "Exchange MTU"))
        defer { waits.end() }
        do {
            try await gatt.exchangeMTU()
        } catch {
            await session.disconnect()
            throw session.cliError(error)
        }
        return session
    }

    /// The type the flag gives, else the one the device advertises with (a scan of at most
    /// `limit`), else random (what almost every LE peripheral uses).
    /// `seen`: whether the scan heard it (`nil`: no scan was needed or possible). The other
    /// devices heard meanwhile go to `waits`, which names them if the peer is not heard soon.
    ///
    /// The scan is an active one: on `hciN` the kernel runs it (its discovery, shared with
    /// bluetoothd's when that runs), so rawble sends no scan command of its own to a controller
    /// the kernel drives. A passive scan is the adapter's own commands, and one of them
    /// arriving while the kernel's discovery scanned once left the kernel's discovery stuck:
    /// nothing found and no LE connection until the adapter restarted.
    private static func resolveType(of address: BluetoothAddress, given: AddressTypeArgument?, central: any Central,
                                    within limit: Duration, waits: WaitStatus) async throws -> (type: LEAddressType, seen: Bool?) {
        switch given {
        case .public?: return (.public, nil)
        case .random?: return (.random, nil)
        case nil: break
        }
        let devices: AsyncThrowingStream<DiscoveredDevice, any Error>
        // Every advertiser is heard, so those that are not the peer can be named.
        do {
            devices = try await central.scan(ScanOptions(active: true, filter: ScanFilter()))
        } catch {
            return (.random, nil)
        }
        waits.forgetSeen()
        waits.begin(.advertising("\(address)"))
        let wanted = ScanFilter(addresses: [address])
        let first = Task { () -> LEAddressType? in
            for try await device in devices {
                if wanted.matches(device) { return device.address.type }
                waits.saw(device)
            }
            return nil
        }
        let watchdog = Task {
            try await Task.sleep(for: limit)
            first.cancel()
        }
        let type = (try? await first.value) ?? nil
        watchdog.cancel()
        try? await central.stopScanning()
        return (type ?? .random, type != nil)
    }

    /// The least time a pairing is given: past SMP's 30 s timeout (Part H 3.4).
    static let pairingBound: Duration = .seconds(35)

    /// `5 s`, `2.5 s`: a `--timeout` as the user gave it.
    static func seconds(_ duration: Duration) -> String {
        let milliseconds = Int(duration.components.seconds) * 1000 + Int(duration.components.attoseconds / 1_000_000_000_000_000)
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(Double(milliseconds) / 1000) s"
    }

    /// Disconnects (bounded) and closes the host session (and the status line it made).
    func close() async {
        waits.stop()
        statusLine?.stop()
        await disconnect()
        await host.close()
    }

    /// Ends the GATT client and the link (bounded); the host session stays open.
    func disconnect() async {
        await gatt.close()
        try? await connection.disconnect(timeout: .seconds(3))
    }

    /// Any error a GATT job throws as one line and its exit status: GATT and host errors
    /// mapped as the one-shot commands map them, cancellation as ``CLIError/interrupted``.
    func cliError(_ error: any Error) -> CLIError {
        switch error {
        case let error as CLIError: error
        case let error as GATTError: cliError(error)
        case let error as HostError: host.cliError(error)
        case is CancellationError: CLIError.interrupted
        default: CLIError(.internalError, "\(error)")
        }
    }

    /// A GATT failure as one line and the exit status of its class.
    func cliError(_ error: GATTError) -> CLIError {
        switch error {
        case .att(let refusal) where SecurityRefusal(rawValue: refusal.code.rawValue) != nil:
            // On rawble's own host the retry's pairing may have failed: its SMP reason and status.
            if let failure = (connection as? Connection)?.lastSecurityFailure, failure.isSecurityFailure {
                host.cliError(failure)
            } else {
                CLIError(.peerError, "\(connection.peer.address): \(error)", fix: Self.pairingAdvice(host.transport))
            }
        case .att, .invalidResponse, .malformedPDU, .valueTooLong, .notFound:
            CLIError(.peerError, "\(connection.peer.address): \(error)")
        case .timeout:
            CLIError(.timeout, "\(connection.peer.address): \(error)")
        case .cancelled, .bearer(.cancelled):
            CLIError.interrupted
        case .bearer(.pduTooLong(let length, let maximum)):
            CLIError(.usage, "\(length - 3) bytes do not fit one Write Command at this link's MTU (at most \(maximum - 3))",
                     fix: "write without --without-response (a long write)")
        case .bearer(let bearerError):
            if case .disconnected(let reason) = bearerError {
                CLIError(.peerError, "\(connection.peer.address) disconnected: \(reason)")
            } else {
                CLIError(.transport, "\(connection.peer.address): \(error)")
            }
        case .requestQueueFull:
            CLIError(.transport, "\(connection.peer.address): \(error)")
        }
    }

    /// The end of a command Ctrl-C stopped: nothing when that is how it ends, else 78.
    static func interrupted(normalEnd: Bool) throws {
        if !normalEnd { throw CLIError.interrupted }
    }

    /// What to do about a peer that wants a more secure link: both transports raise the link's
    /// security (pair, or encrypt with a bond) and retry once, so the refusal stands after that.
    static func pairingAdvice(_ transport: TransportAddress) -> String {
        if case .kernel = transport {
            return "rawble asked the kernel to pair (Just Works only: no passkey or comparison) and the peer still refuses; -v logs why"
        }
        return "rawble paired or encrypted (Just Works unless told otherwise) and the peer still refuses: it may want an authenticated key; -v logs why"
    }

    /// The characteristic a command-line target names: a UUID (found by discovery) or a handle
    /// (the characteristic whose value or declaration is there, when discovery finds one).
    func characteristic(for target: AttributeTarget) async throws(GATTError) -> (handle: UInt16, characteristic: GATTCharacteristic?) {
        switch target {
        case .uuid(let uuid):
            guard let found = try await gatt.characteristic(uuid) else {
                throw .notFound("no characteristic \(uuid)\(uuid.name.map { " (\($0))" } ?? "")")
            }
            return (found.valueHandle, found)
        case .handle(let handle):
            let services = try await gatt.services()
            for service in services where service.startHandle <= handle && handle <= service.endHandle {
                let found = try await gatt.characteristics(of: service).first { $0.valueHandle == handle || $0.declarationHandle == handle }
                return (found?.valueHandle ?? handle, found)
            }
            // In no service, so nothing is there; `0x2A19` written for the UUID 2A19 is a common slip.
            let uuid = BluetoothUUID(handle)
            if let meant = try await gatt.characteristic(uuid) {
                throw .notFound("""
                    no attribute at handle \(target) (0x… is a handle); characteristic \(uuid)\(uuid.name.map { " (\($0))" } ?? "") \
                    is at \(AttributeTarget.handle(meant.valueHandle)): to name it by UUID, write \(uuid) without 0x
                    """)
            }
            return (handle, nil)
        }
    }

    /// Runs `body`; Ctrl-C (or SIGTERM) cancels it, then the session closes either way. It
    /// runs on the host's event loop, where values arrive, so each reaches it with no hop.
    /// Interrupted, the command ends well when Ctrl-C is its normal end (`untilInterrupted`:
    /// `notify` without `--count`), else with ``CLIError/interrupted`` (78).
    /// `deadline`: the command's own end after that long (`notify --duration`), a normal end.
    func run(untilInterrupted: Bool = false, deadline: Duration? = nil,
             _ body: @escaping @Sendable (PeerSession) async throws -> Void) async throws {
        let interrupt = InterruptWatcher()
        let work = Task(executorPreference: host.central.taskExecutor) { try await body(self) }
        interrupt.onInterrupt { work.cancel() }
        let timer = deadline.map { deadline in
            Task {
                try await Task.sleep(for: deadline)
                work.cancel()
            }
        }
        let result = await work.result
        timer?.cancel()
        withExtendedLifetime(interrupt) {}
        await close()
        // Stopped at its deadline and not by Ctrl-C: the command's own end.
        let untilInterrupted = untilInterrupted || (deadline != nil && !interrupt.fired)
        do {
            try result.get()
        } catch let error as GATTError {
            if case .cancelled = error { return try Self.interrupted(normalEnd: untilInterrupted) }
            throw cliError(error)
        } catch is CancellationError {
            return try Self.interrupted(normalEnd: untilInterrupted)
        }
        if work.isCancelled { try Self.interrupted(normalEnd: untilInterrupted) }
    }
}

extension HostError {
    /// A failure to pair or encrypt (each with its own status, ``PairingErrors``), rather than
    /// the link or the host failing.
    var isSecurityFailure: Bool {
        switch self {
        case .pairingFailed, .encryptionFailed, .insufficientSecurity, .securityTimedOut: true
        default: false
        }
    }
}
