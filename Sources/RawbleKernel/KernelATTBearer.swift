#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging
import NIOCore
import NIOPosix
import RawbleBearer
import RawbleTransport
import RawbleWire
import Synchronization
import SystemPackage

/// ATT over the kernel's L2CAP socket: the kernel makes the LE connection (it scans and sends
/// LE Create Connection itself) and runs L2CAP; each read is one ATT PDU from the peer and each
/// write one PDU to it. The same `ATTClient`, `GATTClient` and profiles run on it unchanged.
///
/// The socket runs on a NIO event loop like the HCI transports: a fixed receive buffer of at
/// least the receive MTU (a packet socket drops what does not fit) and one write in flight
/// (`PacketWriteSerializer`). A link loss ends ``pdus`` with `BearerError.disconnected(reason:)`
/// carrying the kernel's errno and what it means (``KernelLinkLoss``).
public final class KernelATTBearer: ATTBearer {
    /// Every PDU from the peer, in order (see ``deliverPDUs(to:)`` for the fast path).
    public var pdus: AsyncThrowingStream<[UInt8], any Error> { inbox.stream() }
    /// How many PDUs were dropped because the reader was `receiveBufferLimit` PDUs behind.
    public var droppedPDUCount: Int { state.droppedPDUCount }
    /// The kernel's send MTU on the channel (BT_SNDMTU): a longer PDU is refused with
    /// `BearerError.pduTooLong(length:maximum:)` before it reaches the socket.
    public let maximumPDULength: Int
    /// The receive MTU the kernel accepted (BT_RCVMTU).
    public let receiveMTU: Int
    /// The peer this bearer is connected to.
    public let peer: BluetoothAddress

    private let inbox: ATTInbox
    private let bridge: PDUBridge
    private let channel: any Channel
    private let descriptor: SystemPackage.FileDescriptor
    private let state: BearerState
    /// A send that does not reach the kernel within this bound fails with `BearerError.timedOut(operation:)`.
    private let sendTimeout: TimeAmount
    /// The same bound, for the wait until raised security is in place (on ``clock``).
    private let securityTimeout: Duration
    /// The clock the security wait runs on.
    private let clock: any Clock<Duration>
    /// The wait for the kernel to finish pairing or encrypting after ``raiseSecurity(after:)``
    /// (`true`: the socket is usable again), while one is under way: every send waits for it,
    /// since the kernel refuses sends (ENOTCONN) until then.
    private let pendingSecurity = Mutex<Task<Bool, Never>?>(nil)
    /// On a link a central made to a listening socket: what answers the kernel's pairing
    /// questions about that central while the link lasts (see ``answerPairingQuestions()``).
    private let centralsPairing = Mutex<PairingConfirmer?>(nil)
    /// Where the security decisions (raised, or why not) are logged.
    private let logger: Logger

    private init(
        inbox: ATTInbox, bridge: PDUBridge, channel: any Channel, descriptor: SystemPackage.FileDescriptor,
        state: BearerState, peer: BluetoothAddress, sendMTU: Int, receiveMTU: Int, sendTimeout: Duration, logger: Logger,
        clock: any Clock<Duration>
    ) {
        self.logger = logger
        self.clock = clock
        self.inbox = inbox
        self.bridge = bridge
        self.channel = channel
        self.descriptor = descriptor
        self.state = state
        self.peer = peer
        maximumPDULength = sendMTU
        self.receiveMTU = receiveMTU
        self.sendTimeout = TimeAmount(sendTimeout)
        securityTimeout = sendTimeout
    }

    deinit {
        state.markClosing()
        channel.close(promise: nil)
        centralsPairing.withLock { $0?.stop() }
    }

    /// A central connected to a listening socket (rawble the peripheral): when it pairs, the
    /// kernel's Security Manager here asks user space to confirm, even Just Works, and with
    /// no bluetoothd nobody answered, so the pairing stalled until the central gave up (a
    /// `--require encrypted` server could never be read from a kernel central). From now
    /// until the link ends, Just Works is confirmed for this central; a numeric comparison
    /// or a passkey, which need a person, are refused (as on the central's side, see
    /// ``raiseSecurity(after:)``). Without CAP_NET_ADMIN the control channel cannot be opened:
    /// logged, and the link stays as it was (another agent, e.g. bluetoothd's, may answer).
    func answerPairingQuestions() {
        switch PairingConfirmer.start(pairingWith: peer) {
        case .success(let confirmer):
            centralsPairing.withLock { $0 = confirmer }
            channel.closeFuture.whenComplete { _ in confirmer.stop() }
        case .failure(let error):
            logger.debug("cannot answer the kernel's pairing questions about \(peer) (a pairing it starts waits for another agent): \(error)")
        }
    }

    /// The smallest ATT MTU (LE): the send MTU assumed when the kernel does not report one.
    static let minimumATTMTU = 23

    /// Connects to `peer` (its LE address `type`) through the kernel, from the adapter at
    /// `local` (its address; `.any` lets the kernel choose), with the stack's own `timeout`
    /// (a blocking connect to an absent peer would return only after ~40 s), and asks for
    /// `receiveMTU` (BT_RCVMTU, default the ATT maximum, 517). At most `receiveBufferLimit`
    /// PDUs wait for a reader that is behind; newer ones are dropped and counted
    /// (``droppedPDUCount``): a notification flood cannot exhaust memory. `timeout` and the
    /// wait for raised security run on `clock` (the real continuous clock by default).
    ///
    /// Throws ``KernelError/connectTimeout(peer:seconds:)``, ``KernelError/connectFailed(peer:errno:reason:)``
    /// (the kernel's reason), ``KernelError/noBluetoothInKernel`` or
    /// ``KernelError/missingCapability(operation:errno:user:)``.
    public static func connect(
        to peer: BluetoothAddress, type: LEAddressType, local: BluetoothAddress = .any,
        receiveMTU: UInt16 = 517, timeout: Duration = .seconds(10), sendTimeout: Duration = .seconds(30),
        receiveBufferLimit: Int = 8192, on eventLoop: (any EventLoop)? = nil, clock: any Clock<Duration> = ContinuousClock()
    ) async throws(KernelError) -> KernelATTBearer {
        let fd = try L2CAPATTSocket.open(local: local, receiveMTU: receiveMTU, peer: peer.description)
        do {
            try await L2CAPATTSocket.connect(fd, to: peer, type: L2CAPAddressType(type), timeout: timeout, clock: clock)
        } catch {
            BluetoothSocket.closeQuietly(fd)
            throw error
        }
        let sendMTU = Int((try? L2CAPATTSocket.sendMTU(fd)) ?? 0)
        let acceptedMTU = Int((try? L2CAPATTSocket.receiveMTU(fd)) ?? receiveMTU)
        return try await adopt(
            fd, peer: peer, sendMTU: sendMTU > 0 ? sendMTU : minimumATTMTU, receiveMTU: acceptedMTU, sendTimeout: sendTimeout,
            receiveBufferLimit: receiveBufferLimit, on: eventLoop, clock: clock)
    }

    /// Hands a connected packet socket carrying one ATT PDU per read and write to NIO; the
    /// bearer owns it from now on (also what the tests use, over a unix SOCK_SEQPACKET pair).
    static func adopt(
        _ fd: SystemPackage.FileDescriptor, peer: BluetoothAddress, sendMTU: Int, receiveMTU: Int, sendTimeout: Duration,
        receiveBufferLimit: Int = 8192, logger: Logger = Logger(label: "rawble.kernel"), on eventLoop: (any EventLoop)? = nil,
        clock: any Clock<Duration> = ContinuousClock()
    ) async throws(KernelError) -> KernelATTBearer {
        let state = BearerState()
        let inbox = ATTInbox(limit: receiveBufferLimit)
        let bridge = PDUBridge(inbox: inbox, state: state, peer: peer, logger: logger)
        let channel: any Channel
        do {
            channel = try await NIOPipeBootstrap(group: eventLoop ?? MultiThreadedEventLoopGroup.singleton.next())
                .channelOption(
                    ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: max(receiveMTU, 517)))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(PacketWriteSerializer())
                        try channel.pipeline.syncOperations.addHandler(bridge)
                    }
                }
                .takingOwnershipOfDescriptor(inputOutput: fd.rawValue).get()
        } catch {
            throw .system(
                operation: "registering the L2CAP socket for \(peer)",
                errno: (error as? IOError).map { Errno(rawValue: $0.errnoCode) } ?? .ioError)
        }
        return KernelATTBearer(
            inbox: inbox, bridge: bridge, channel: channel, descriptor: fd, state: state, peer: peer,
            sendMTU: sendMTU, receiveMTU: receiveMTU, sendTimeout: sendTimeout, logger: logger, clock: clock)
    }

    // MARK: ATTBearer

    public func send(_ pdu: [UInt8]) async throws(BearerError) {
        if let end = state.end { throw end }
        guard pdu.count <= maximumPDULength else { throw .pduTooLong(length: pdu.count, maximum: maximumPDULength) }
        if let securing = pendingSecurity.withLock({ $0 }) { _ = await securing.value }
        let loop = channel.eventLoop
        let written = loop.makePromise(of: Void.self)
        let timeout = sendTimeout
        let peer = self.peer
        let deadline = loop.scheduleTask(in: timeout) {
            written.fail(BearerError.timedOut(operation: "ATT send to \(peer)"))
        }
        channel.writeAndFlush(channel.allocator.buffer(bytes: pdu), promise: written)
        do {
            try await written.futureResult.get()
            deadline.cancel()
        } catch {
            deadline.cancel()
            if let bearer = error as? BearerError { throw bearer }
            if let io = error as? IOError, io.errnoCode == EMSGSIZE {
                throw .pduTooLong(length: pdu.count, maximum: maximumPDULength)
            }
            throw state.end ?? (state.isClosing ? .closed : PDUBridge.end(for: error))
        }
    }

    /// The fast path: each PDU goes to `receiver` on the socket's event loop as it is read (no
    /// stream, no task hop). `false` once ``pdus`` was read.
    public func deliverPDUs(to receiver: any ATTPDUReceiver) -> Bool {
        inbox.install(receiver)
    }

    /// Returns once `count` PDUs were read from the socket since it was adopted (handed to a
    /// receiver, waiting for one, or dropped): how a test learns that the bearer took what the
    /// peer sent, instead of polling the socket. Throws the bearer's end when the socket closes
    /// first; bound it with the caller's own timeout.
    package func waitUntilRead(_ count: Int) async throws {
        try await bridge.whenRead(count, on: channel.eventLoop).get()
    }

    public func close() async {
        state.markClosing()
        channel.close(promise: nil)
        try? await channel.closeFuture.get()
    }

    /// Why the link ended, or `nil` while it is up.
    public var end: BearerError? { state.end }

    /// Waits until the socket is closed (the link lost, or ``close()``) and returns why;
    /// `nil` at once when the waiting task is cancelled (the link stays up).
    public func waitUntilEnded() async -> BearerError? {
        let waiter = EndWaiter()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<BearerError?, Never>) in
                waiter.start(continuation)
                channel.closeFuture.whenComplete { [state] _ in waiter.finish(state.end ?? .closed) }
            }
        } onCancel: {
            waiter.finish(nil)
        }
    }

    // MARK: Security

    /// The link's security level as the kernel sees it (BT_SECURITY).
    public func securityLevel() throws(KernelError) -> KernelSecurityLevel {
        do {
            return try L2CAPATTSocket.securityLevel(descriptor)
        } catch {
            throw KernelError.classify(error, operation: "reading the security level of the link to \(peer)")
        }
    }

    /// The link's security as attribute permissions see it, from BT_SECURITY (read for each
    /// request a GATT server answers: a central may have paired since): low is none, medium
    /// encrypted, high and FIPS authenticated; `nil` when the kernel does not say.
    public func linkSecurity() -> LinkSecurity? {
        guard let level = try? securityLevel() else { return nil }
        return switch level {
        case .low: LinkSecurity.none
        case .medium: .encrypted
        case .high, .fips: .authenticated
        }
    }

    /// Asks the kernel to raise the link's security to `level` (it pairs or encrypts): what to
    /// do when the peer answers Insufficient Authentication or Encryption, before retrying the
    /// request, as BlueZ's client does. Sends fail (ENOTCONN) until the kernel is done: see
    /// ``raiseSecurity(after:)``, which waits for it.
    public func raiseSecurity(to level: KernelSecurityLevel) throws(KernelError) {
        do {
            try L2CAPATTSocket.setSecurityLevel(descriptor, level)
        } catch {
            throw KernelError.classify(error, operation: "raising the security of the link to \(peer)")
        }
    }

    /// The peer refused a request with `refusal`: raises BT_SECURITY one step as BlueZ's client
    /// does (`change_security` in src/shared/att.c) — to medium (encryption, Just Works
    /// pairing when no key is stored) from low; for Insufficient Authentication, on to high
    /// and then FIPS — and waits, at most the send timeout (or until the task is cancelled,
    /// e.g. by the ATT client's transaction timeout), until the kernel has paired or
    /// encrypted and the socket takes sends again. `false`, logged with why: already at the
    /// level that refusal could need, or the kernel refused (e.g. nothing to pair with), or
    /// the link did not come back in time.
    public func raiseSecurity(after refusal: SecurityRefusal) async -> Bool {
        let current: KernelSecurityLevel
        do {
            current = try securityLevel()
        } catch {
            logger.debug("the peer answered \(refusal), but the link's security level cannot be read: \(error)")
            return false
        }
        guard let target = Self.securityLevel(after: refusal, from: current) else {
            logger.debug("the peer answered \(refusal) with the link already at security \(current): nothing to raise")
            return false
        }
        // Listening before the kernel starts pairing: it asks user space to confirm even Just Works.
        let confirmer: PairingConfirmer?
        switch PairingConfirmer.start(pairingWith: peer) {
        case .success(let started): confirmer = started
        case .failure(let error):
            confirmer = nil
            logger.debug("cannot answer the kernel's pairing questions (the pairing will wait for another agent): \(error)")
        }
        defer { confirmer?.stop() }
        do {
            try raiseSecurity(to: target)
        } catch {
            logger.debug("the peer answered \(refusal); raising the link's security to \(target) failed: \(error)\(Self.hint(error))")
            return false
        }
        logger.debug("the peer answered \(refusal): security raised from \(current) to \(target); waiting for the kernel to pair or encrypt")
        let descriptor = self.descriptor
        let timeout = securityTimeout
        let clock = self.clock
        let waiting = Task { await L2CAPATTSocket.waitUntilWritable(sharing: descriptor, timeout: timeout, clock: clock) == .ready }
        pendingSecurity.withLock { $0 = waiting }
        // A failed pairing leaves the socket suspended: the kernel's word on the control
        // channel is the only way to learn of it before the bound.
        confirmer?.onFailure { _ in waiting.cancel() }
        let ready = await withTaskCancellationHandler { await waiting.value } onCancel: { waiting.cancel() }
        pendingSecurity.withLock { if $0 == waiting { $0 = nil } }
        if let status = confirmer?.failureStatus {
            logger.debug("the kernel failed pairing with \(peer) (management status \(status)): the link stays at security \(current)")
            return false
        }
        if !ready {
            let asked = confirmer?.answer == nil ? "the kernel asked nothing (confirming a pairing needs CAP_NET_ADMIN)" : "pairing was answered"
            logger.debug("the link to \(peer) did not become usable at security \(target) in time; \(asked)")
        } else if let answer = confirmer?.answer {
            logger.debug("pairing question answered with \(answer.name)")
        }
        return ready
    }

    /// Why the kernel may refuse BT_SECURITY on a connected LE socket, for the log: EINVAL
    /// means it cannot pair on this link, most often because the adapter has no Security
    /// Manager (the kernel registers one only when an adapter managed through its management
    /// interface powers up — bluetoothd's, or rawble's when it brings a down adapter up).
    static func hint(_ error: KernelError) -> String {
        guard case .system(_, .invalidArgument) = error else { return "" }
        return " (the kernel cannot pair on this link: see \"security requested but not available\" in its log; an adapter that was already up when no bluetoothd managed it has no Security Manager — take it down and let rawble bring it up)"
    }

    /// The level to ask for after `refusal` on a link at `current` (BlueZ's steps), or `nil`
    /// when raising cannot help.
    static func securityLevel(after refusal: SecurityRefusal, from current: KernelSecurityLevel) -> KernelSecurityLevel? {
        switch refusal {
        case .insufficientEncryption, .encryptionKeySizeTooShort:
            current < .medium ? .medium : nil
        case .insufficientAuthentication:
            switch current {
            case .low: .medium
            case .medium: .high
            case .high: .fips
            case .fips: nil
            }
        }
    }
}

/// One wait for the end: resumed once, by the end or by cancellation, whichever comes first.
private final class EndWaiter: Sendable {
    private let state = Mutex<(continuation: CheckedContinuation<BearerError?, Never>?, result: BearerError??)>((nil, nil))

    func start(_ continuation: CheckedContinuation<BearerError?, Never>) {
        let early = state.withLock { state -> BearerError?? in
            if let result = state.result { return result }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    func finish(_ result: BearerError?) {
        let continuation = state.withLock { state -> CheckedContinuation<BearerError?, Never>? in
            guard state.result == nil else { return nil }
            state.result = .some(result)
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: result)
    }
}

/// What the bearer and its pipeline share: whether the end is local, and why the link ended.
final class BearerState: Sendable {
    private let state = Mutex<(closing: Bool, end: BearerError?)>((false, nil))

    var isClosing: Bool { state.withLock { $0.closing } }
    var end: BearerError? { state.withLock { $0.end } }
    func markClosing() { state.withLock { $0.closing = true } }

    private let dropped = Atomic<Int>(0)
    var droppedPDUCount: Int { dropped.load(ordering: .relaxed) }
    /// Counts one dropped PDU and returns how many were dropped so far.
    func countDroppedPDU() -> Int { dropped.add(1, ordering: .relaxed).newValue }

    /// Records the end (the first wins) and returns it.
    func finish(_ end: BearerError) -> BearerError {
        state.withLock { state in
            if state.end == nil { state.end = state.closing ? .closed : end }
            return state.end ?? end
        }
    }
}

/// The pipeline's handler: each read is one whole ATT PDU, handed to the inbox in order (to the
/// stream, or on this loop to the ATT client's receiver); the channel's end ends the inbox with
/// the kernel's reason.
final class PDUBridge: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer

    private let inbox: ATTInbox
    private let state: BearerState
    private let peer: BluetoothAddress
    private let logger: Logger
    /// The first error the channel reported (on the loop only).
    private let failure = Mutex<(any Error)?>(nil)
    /// How many PDUs were read, and the waits for a count (``whenRead(_:on:)``); `ended` once
    /// the channel is inactive (on the loop only).
    private let reads = Mutex<(count: Int, waiters: [(count: Int, promise: EventLoopPromise<Void>)], ended: BearerError?)>(
        (0, [], nil))

    init(inbox: ATTInbox, state: BearerState, peer: BluetoothAddress, logger: Logger) {
        self.inbox = inbox
        self.state = state
        self.peer = peer
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // One copy through the buffer's bytes (a `ByteBufferView` copies byte by byte).
        let pdu = unwrapInboundIn(data).withUnsafeReadableBytes { Array($0) }
        // Dropped PDUs are counted and reported (at 1, 2, 4, 8 … so a flood is not a log flood),
        // as the host's bearer does.
        if !inbox.deliver(pdu[...]) {
            let dropped = state.countDroppedPDU()
            if dropped.nonzeroBitCount == 1 {
                logger.warning("\(dropped) ATT PDUs from \(peer) dropped: the reader is too far behind")
            }
        }
        let reached = reads.withLock { reads -> [EventLoopPromise<Void>] in
            reads.count += 1
            guard !reads.waiters.isEmpty else { return [] }  // the usual case: nothing to allocate
            let count = reads.count
            defer { reads.waiters.removeAll { $0.count <= count } }
            return reads.waiters.filter { $0.count <= count }.map(\.promise)
        }
        for promise in reached { promise.succeed() }
    }

    /// Succeeds once `count` PDUs were read (at once if they were); fails with the end when
    /// the channel goes inactive first.
    func whenRead(_ count: Int, on loop: any EventLoop) -> EventLoopFuture<Void> {
        loop.flatSubmit {
            let promise = loop.makePromise(of: Void.self)
            let outcome: Result<Void, any Error>? = self.reads.withLock { reads in
                if reads.count >= count { return .success(()) }
                if let ended = reads.ended { return .failure(ended) }
                reads.waiters.append((count, promise))
                return nil
            }
            if let outcome { promise.completeWith(outcome) }
            return promise.futureResult
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failure.withLock { if $0 == nil { $0 = error } }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        let error = failure.withLock { $0 }
        let end = state.finish(error.map(Self.end(for:)) ?? .disconnected(reason: KernelLinkLoss.reason(for: .socketNotConnected)))
        inbox.finish(end)
        let waiting = reads.withLock { reads in
            reads.ended = end
            defer { reads.waiters = [] }
            return reads.waiters.map(\.promise)
        }
        for promise in waiting { promise.fail(end) }
        context.fireChannelInactive()
    }

    /// The bearer error for an error NIO reported on the socket: the kernel's errno, in words.
    static func end(for error: any Error) -> BearerError {
        if let bearer = error as? BearerError { return bearer }
        if let io = error as? IOError {
            let errno = Errno(rawValue: io.errnoCode)
            return .disconnected(reason: "\(KernelLinkLoss.reason(for: errno)) (errno \(io.errnoCode))")
        }
        if let channel = error as? ChannelError, channel == .eof || channel == .ioOnClosedChannel || channel == .alreadyClosed {
            return .disconnected(reason: KernelLinkLoss.reason(for: .socketNotConnected))
        }
        return .transport("\(error)")
    }
}
