import Logging
import NIOCore
import RawbleBearer
import RawbleHCITransport
import RawbleHostCore
import RawbleSMP
import RawbleWire

/// A controller driven by rawble's own host over an `HCITransport`: the HCI command engine,
/// ACL flow control and reassembly, LE scanning, connections and the L2CAP fixed channels.
///
/// Open one with ``open(_:configuration:)``, which runs the start-up sequence; then scan with
/// ``scan(_:)``, connect with ``connect(to:timeout:)`` and close with ``close()``. Everything
/// the controller or a peer sends is untrusted: bad input is logged and dropped, every wait is
/// bounded, and the end of the transport fails every pending operation with a ``HostError``.
///
/// The adapter's state lives on its transport's event loop (the actor's executor is the loop):
/// each read's packets go through the host — events, ACL reassembly, L2CAP, ATT — to the
/// subscriber's stream on the thread that read them. A consumer that runs on the loop too
/// (``taskExecutor``) takes them with no thread hop at all.
///
/// The actor composes three parts, each with its own state and used only on this executor:
/// `HostCommands` (HCI command flow), `LinkRouter` (connections, ACL, L2CAP routing) and
/// `Scanner`; the adapter dispatches what is read to them and does the awaiting and timers.
public actor Adapter {
    /// How an adapter drives its controller.
    public struct Configuration: Sendable {
        /// Bound on every HCI command without its own timeout.
        public var commandTimeout: Duration = .seconds(3)
        /// Bound on HCI Reset, the first command (controllers may take a while after power-on).
        public var resetTimeout: Duration = .seconds(5)
        /// The address used on air; a random static address by default.
        public var ownAddress: OwnAddressChoice = .randomStatic(nil)
        /// Connection interval, latency and supervision timeout asked for in new connections.
        public var connectionParameters = HCICommand.ConnectionParameters(
            intervalMin: 24, intervalMax: 40, maxLatency: 0, supervisionTimeout: 400,
            minCELength: 0, maxCELength: 0)
        /// Largest incoming L2CAP frame buffered (header included); larger ones are dropped.
        /// The default fits an ATT PDU at the largest ATT MTU (517) with room to spare.
        public var maximumIncomingFrameLength = 4 + 1024
        /// Incoming ATT PDUs buffered per connection before the oldest unread are kept and
        /// newer ones dropped (a notification flood cannot exhaust memory).
        public var attReceiveBufferLimit = 8192
        /// Bound on how long an ATT send waits for room when the connection's outgoing ACL
        /// queue is full (back-pressure: the controller returns credits slowly). Past it the
        /// send fails with a timeout; the link stays up.
        public var aclSendTimeout: Duration = .seconds(10)
        /// Where the host logs what it drops and why.
        public var logger = Logger(label: "rawble.host")
        /// Who owns the controller: rawble's host (H4, the user channel) or the Linux kernel
        /// (its raw HCI channel), where this adapter only scans and reads.
        public var owner: ControllerOwner = .host
        /// On a controller the kernel owns: who switches scanning on and off (the kernel, asked
        /// through its management interface). `nil`: the adapter sends the scan commands itself.
        public var scanControl: (any ScanControl)?
        /// The clock every timeout, deadline and timed wait of the adapter runs on: command
        /// and connection timeouts, scan durations, grace periods. The real continuous clock by
        /// default; a test gives a virtual one (RawbleTestSupport's `ManualClock`) and moves
        /// its time, so a timeout fires when the test says, not after a real wait.
        public var clock: any Clock<Duration> = ContinuousClock()
        /// What the host offers when it pairs (IO capability, bonding, MITM, LE Secure
        /// Connections, key sizes, the identity it distributes), in either role. `nil`: the
        /// host does not pair, and answers every Pairing or Security Request with Pairing Not
        /// Supported.
        public var pairing: PairingConfiguration? = PairingConfiguration()
        /// Answers a pairing's questions (passkeys, Numeric Comparison). `nil`: passkey entry and
        /// comparisons are declined, so only Just Works pairs (which the default pairing
        /// configuration, with no input and no output, always chooses).
        public var pairingAgent: (any PairingAgent)?
        /// Where bonds are kept and looked up: to encrypt later links without pairing, as
        /// central and as peripheral. In memory (this process) unless given a store that keeps
        /// them, such as a file store.
        public var bonds: any BondStore = InMemoryBondStore()
        /// Whether ``Adapter/connect(to:timeout:)`` encrypts a new link with the bond kept for
        /// its peer before returning it (a failure is logged; the link stays up, unencrypted).
        public var encryptsBondedLinks = true
        /// Bound on the wait for the controller's Encryption Change after encrypting with a
        /// bond's key (as central) or answering a Long Term Key Request (as peripheral).
        public var encryptionTimeout: Duration = .seconds(10)
        /// Chooses who the host is on this controller once start-up has read its public address
        /// (``ControllerInfo/publicAddress``, `nil` when it has none), before the own address is
        /// set: a program that drives several controllers gives each its own identity, so two of
        /// them never share an address (a central that finds its own address cannot connect to
        /// it). Called once; what it returns replaces ``ownAddress``, the identity of
        /// ``pairing`` and ``bonds``. An error it throws ends start-up with
        /// ``HostError/identityUnavailable(_:)``. `nil`: those settings as they are.
        public var identityForController: (@Sendable (_ controller: ControllerInfo) async throws -> Identity)?

        public init() {}
    }

    /// Who the host is on one controller: what ``Configuration/identityForController`` chooses.
    public struct Identity: Sendable {
        /// The own address on air (for a resolvable private one, ``pairing``'s IRK makes it).
        public var ownAddress: OwnAddressChoice
        /// The identity address and IRK distributed when bonding (RawbleSMP's `PairingConfiguration.identity`).
        public var pairing: PairingIdentity
        /// The bonds made as this identity.
        public var bonds: any BondStore

        public init(ownAddress: OwnAddressChoice, pairing: PairingIdentity, bonds: any BondStore) {
            self.ownAddress = ownAddress
            self.pairing = pairing
            self.bonds = bonds
        }
    }

    /// What start-up learned about the controller and the choices made from it.
    public internal(set) var controller: ControllerInfo

    /// As given to ``open(_:configuration:)``; start-up puts in what
    /// ``Configuration/identityForController`` chose (and nothing else changes it).
    var configuration: Configuration
    var logger: Logger { configuration.logger }
    /// ``Configuration/clock``, with instants the command timer can keep.
    let clock: HostClock
    /// The loop the adapter runs on: its transport's, so received packets need no hop.
    public nonisolated let eventLoop: any EventLoop
    /// The adapter's loop as a task executor: a task that consumes the adapter's values
    /// (``Connection/att`` updates, a profile's stream) with this preference takes each one on
    /// the thread that received it, e.g. `withTaskExecutorPreference(adapter.taskExecutor) { … }`.
    ///
    /// Calls into the adapter from such a task work as from any other, but cost more: the
    /// actor runs on the loop's serial executor, not on this task executor, so Swift's runtime
    /// sends the task through the loop's queue at every `await` inside the adapter (what the
    /// loop holds runs in between). The adapter never relies on an `await` not suspending.
    public nonisolated let taskExecutor: EventLoopTaskExecutor
    private nonisolated let executor: any SerialExecutor

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }
    let transport: any HCITransport
    let outbound: AsyncStream<H4Packet>.Continuation
    private let outboundPackets: AsyncStream<H4Packet>

    /// HCI command flow: credits, waiters, timeouts (see Adapter+Commands.swift).
    let commands: HostCommands

    /// Connections, ACL and the L2CAP fixed channels (see LinkRouter.swift).
    let links: LinkRouter
    /// The scan that runs, if any (see Scanner.swift; commands in Adapter+Scanning.swift).
    let scanner = Scanner()
    /// The advertisement that runs, if any (see Adapter+Advertising.swift).
    let advertiser = Advertiser()
    /// Every link a central makes to this adapter's advertisement, in order (the peripheral
    /// role); finishes when the adapter closes or fails.
    public nonisolated let incomingConnections: AsyncStream<Connection>
    let incomingContinuation: AsyncStream<Connection>.Continuation
    /// The Set Scan Enable (off) on its way to the controller, if any: ``close()`` waits for it.
    var scanStop: Task<Result<Void, HostError>, Never>?
    /// Scanning being switched on again after another program stopped it (kernel-owned
    /// controllers); a stop waits for it, so its enable never comes after the stop's disable.
    var scanResume: Task<Void, Never>?
    var connecting: PendingConnection?
    /// Connection attempts waiting for the current one to end, by id.
    var connectTurnWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    var nextSessionID: UInt64 = 0

    /// rawble's own resolvable private address and its next change, when the configuration
    /// asks for one (see Adapter+Privacy.swift).
    var ownAddressRotation: OwnAddressRotation?

    /// Set once the transport ended or ``close()`` was called: every later operation throws it.
    var failure: HostError?
    var tasks: [Task<Void, Never>] = []

    private init(transport: any HCITransport, configuration: Configuration) {
        self.transport = transport
        self.configuration = configuration
        clock = HostClock(configuration.clock)
        eventLoop = transport.eventLoop
        executor = eventLoop.executor
        taskExecutor = EventLoopTaskExecutor(eventLoop)
        (outboundPackets, outbound) = AsyncStream.makeStream(of: H4Packet.self)
        // Unbounded: the controller bounds the links, and a dropped one would never be closed.
        (incomingConnections, incomingContinuation) = AsyncStream.makeStream(of: Connection.self)
        commands = HostCommands(outbound: outbound, clock: clock, logger: configuration.logger,
                                controllerShared: configuration.owner == .kernel)
        links = LinkRouter(maximumFrameLength: configuration.maximumIncomingFrameLength, outbound: outbound,
                           logger: configuration.logger)
        controller = ControllerInfo(
            version: nil, supportedCommands: nil, leFeatures: nil, publicAddress: nil,
            ownAddress: DeviceAddress(.any, type: .public), aclDataLength: 27, aclPacketCount: 1,
            usesExtendedScanning: false, usesExtendedCreateConnection: false)
    }

    /// Takes over the controller behind `transport`: resets it, learns what it supports, sets
    /// the event masks, buffers and own address. The adapter owns the transport from then on.
    /// - Throws: ``HostError`` when the controller does not answer or refuses a required step;
    ///   the transport is closed in that case.
    public static func open(_ transport: some HCITransport,
                            configuration: Configuration = Configuration()) async throws(HostError) -> Adapter {
        let adapter = Adapter(transport: transport, configuration: configuration)
        await adapter.startPumps()
        do {
            try await adapter.runStartupSequence()
        } catch {
            await adapter.close()
            throw error
        }
        await adapter.loadResolvingKeys()
        await adapter.startOwnAddressRotation()
        return adapter
    }

    /// Ends everything: stops scanning, disconnects every connection (bounded), fails what is
    /// pending with ``HostError/closed`` and closes the transport. Safe to call more than once.
    public func close() async {
        // Not the caller's cancellation to decide: closing always disconnects and closes.
        await Task { await self.closeNow() }.value
    }

    private func closeNow() async {
        if failure == nil {
            do {
                try await stopScanning()
            } catch {
                logger.warning("closing: scanning may still be on, its stop failed: \(error)")
            }
            do {
                try await stopAdvertising()
            } catch {
                logger.warning("closing: advertising may still be on, its stop failed: \(error)")
            }
            for handle in links.handles {
                try? await disconnect(handle: handle, reason: .remoteUserTerminatedConnection, timeout: .seconds(2))
            }
        }
        fail(with: .closed)
        await transport.close()
        for task in tasks { task.cancel() }
        tasks.removeAll()
    }

    // MARK: Pumps

    private func startPumps() {
        if !transport.deliverPackets(to: self) {
            startReceivePump()
        }
        startSendPump()
    }

    /// For a transport without a loop of its own: read `packets` on a task (on this actor).
    private func startReceivePump() {
        let packets = transport.packets
        tasks.append(Task {
            do {
                for try await packet in packets { self.receive(packet) }
                self.fail(with: .transport(.closedByPeer))
            } catch let error as TransportError {
                self.fail(with: .transport(error))
            } catch {
                self.fail(with: .transport(.ioError(errno: 0, operation: "receive: \(error)")))
            }
        })
    }

    /// Writes every outbound packet in order. The pump prefers the host's loop, so the
    /// transport's `send` (nonisolated) and its write's completion run on the loop's thread:
    /// without the preference each packet went to the global pool and back, four thread
    /// wake-ups per notification a peripheral sends.
    private func startSendPump() {
        let outgoing = outboundPackets
        let transport = self.transport
        tasks.append(Task(executorPreference: taskExecutor) {
            for await packet in outgoing {
                do throws(TransportError) {
                    try await transport.send(packet)
                    if packet.type == .command { await self.commandWritten() }
                } catch {
                    await self.fail(with: .transport(error))
                    return
                }
            }
        })
    }

    private func commandWritten() {
        commands.written()
    }

    /// Fails everything pending with `error` and refuses later operations. The first error wins.
    func fail(with error: HostError) {
        guard failure == nil else { return }
        failure = error
        if case .transport(let transportError) = error {
            logger.error("host stopped: \(transportError)")
        }
        commands.stop()
        outbound.finish()
        connecting?.finish(.failure(error))
        connecting = nil
        for waiter in connectTurnWaiters.values { waiter.resume() }
        connectTurnWaiters.removeAll()
        scanner.stop(throwing: error)
        advertiser.running = nil
        advertiser.generation += 1
        links.stop(error, bearerError: bearerError(for: error))
        incomingContinuation.finish()
        if let waiters = ownAddressRotation?.waiters.values {
            ownAddressRotation?.waiters.removeAll()
            for waiter in waiters { waiter.continuation.resume(throwing: error) }
        }
    }

    func bearerError(for error: HostError) -> BearerError {
        switch error {
        case .transport(let t): .transport(t.description)
        case .closed: .closed
        case .disconnected(let reason): .disconnected(reason: reason.description)
        default: .disconnected(reason: error.description)
        }
    }

    // MARK: Receiving

    func receive(_ packet: H4Packet) {
        switch packet.type {
        case .event:
            do {
                handle(try HCIEvent.decode(packet.bytes))
            } catch {
                logger.warning("dropped a malformed HCI event: \(error)")
            }
        case .acl:
            do {
                switch links.receive(try ACLPacket.decode(packet.bytes)) {
                case .parameterUpdate(let parameters, let record)?:
                    requestParameterUpdate(parameters, on: record)
                case .securityManager(let payload, let record)?:
                    receiveSecurityManager(payload, on: record)
                case nil:
                    break
                }
            } catch {
                logger.warning("dropped a malformed ACL packet: \(error)")
            }
        case .command where configuration.owner == .kernel:
            // Another program's command on the shared adapter (the kernel copies them to raw
            // sockets): only a scan stopped under a running one matters.
            if let command = try? HCICommand.decode(packet.bytes) { noticeForeignCommand(command) }
        default:
            logger.debug("ignored an \(packet.type.name)")
        }
    }

    private func handle(_ event: HCIEvent) {
        if configuration.owner == .kernel {
            handleOnKernelOwnedController(event)
            return
        }
        switch event {
        case .commandComplete, .commandStatus:
            commands.receive(event)
            releaseCommands()
        case .numberOfCompletedPackets(let entries):
            links.completed(entries)
        case .disconnectionComplete(let event):
            handleDisconnection(event)
        case .le(let meta):
            handle(meta)
        case .encryptionChange(let change):
            encryptionChanged(handle: change.connectionHandle, status: change.status, enabled: change.encryptionEnabled != 0,
                              keySize: change.keySize)
        case .encryptionKeyRefreshComplete(let status, let handle):
            encryptionChanged(handle: handle, status: status, enabled: true, keySize: nil)
        case .dataBufferOverflow(let linkType):
            logger.warning("the controller's data buffers overflowed (link type \(linkType)): packets were lost")
        case .hardwareError(let code):
            logger.error("the controller reported hardware error 0x\(String(code, radix: 16))")
        default:
            logger.debug("ignored event \(event.name)")
        }
    }

    /// On the kernel's raw channel: command answers and advertising reports are this host's;
    /// connections, disconnections and data flow are the kernel's, never to be acted on. Only
    /// the advertising state follows them: a central connecting stops the controller's
    /// advertising, and its disconnection may start it again.
    private func handleOnKernelOwnedController(_ event: HCIEvent) {
        switch event {
        case .commandComplete, .commandStatus:
            commands.receive(event)
            releaseCommands()
        case .le(.advertisingReport(let reports)), .le(.extendedAdvertisingReport(let reports)):
            scanner.receive(reports)
        case .le(.connectionComplete(let complete)) where complete.role == .peripheral:
            noteKernelAcceptedConnection(complete)
        case .le(.advertisingSetTerminated(let terminated)):
            advertisingSetTerminated(terminated)
        case .disconnectionComplete(let disconnection) where disconnection.status.isSuccess:
            acceptedLinkEnded(disconnection.connectionHandle)
        default:
            logger.trace("the kernel's event: \(event.name)")
        }
    }

    private func handle(_ meta: LEMetaEvent) {
        switch meta {
        case .advertisingReport(let reports), .extendedAdvertisingReport(let reports):
            scanner.receive(reports)
        case .connectionComplete(let complete):
            handleConnectionComplete(complete)
        case .advertisingSetTerminated(let terminated):
            advertisingSetTerminated(terminated)
        case .connectionUpdateComplete(let update):
            if let record = links[update.connectionHandle], update.status.isSuccess {
                record.updateParameters(interval: update.connectionInterval, latency: update.peripheralLatency,
                                        supervisionTimeout: update.supervisionTimeout)
            } else if !update.status.isSuccess {
                logger.notice("connection update on handle \(update.connectionHandle) failed: \(update.status)")
            }
            // The running LE Connection Update (if any) is over: the next may go.
            links[update.connectionHandle]?.parameterUpdateCompleted()
        case .longTermKeyRequest(let request):
            longTermKeyRequested(request)
        default:
            logger.debug("ignored LE event \(meta.name)")
        }
    }
}

// MARK: - Packets where they are read

extension Adapter: HCIPacketReceiver {
    /// Called by the transport on the adapter's loop, so the actor's state is this thread's.
    public nonisolated func receive(_ packets: [H4Packet]) {
        onOwnLoop { adapter in
            for packet in packets { adapter.receive(packet) }
        }
    }

    public nonisolated func transportEnded(_ error: TransportError) {
        onOwnLoop { adapter in
            adapter.fail(with: .transport(error))
        }
    }

    /// `assumeIsolated` with NIO's own check (the loop's thread is this one) instead of the
    /// runtime's: called from a channel handler, outside any task, the runtime first asks
    /// whether the main executor is current, by a dynamic cast, on every read (a percent of
    /// `hr`'s CPU, measured). The actor's executor is the loop, so being on the loop's thread
    /// is being isolated; the check still traps anywhere else, as `assumeIsolated` does.
    private nonisolated func onOwnLoop<T>(_ body: (isolated Adapter) -> T) -> T {
        eventLoop.preconditionInEventLoop()
        return withoutActuallyEscaping(body) { body in
            unsafeBitCast(body, to: ((Adapter) -> T).self)(self)
        }
    }
}
