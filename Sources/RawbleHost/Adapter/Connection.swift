import RawbleBearer
import RawbleHostCore
import RawbleSMP
import RawbleWire
import Synchronization

/// One LE connection of an ``Adapter``: made as the central (``Adapter/connect(to:timeout:)``),
/// or by a central to the adapter's advertisement (``Adapter/incomingConnections``).
///
/// Its ``att`` bearer carries ATT over the fixed channel 0x0004; LE signaling and SMP are
/// answered by the host. When the link goes, everything pending on it fails with the reason.
public final class Connection: Sendable, CustomStringConvertible {
    /// The controller's handle for the connection.
    public let handle: UInt16
    /// The peer as the controller reported it.
    public let peer: DeviceAddress
    /// The parameters at connection time (see ``currentParameters()`` for later updates).
    public let initialParameters: LinkParameters
    /// The ATT bearer of this connection (L2CAP fixed channel 0x0004).
    public let att: L2CAPATTBearer
    /// The adapter that owns the connection.
    public let adapter: Adapter
    let lifetime: LinkLifetime

    init(handle: UInt16, peer: DeviceAddress, parameters: LinkParameters, att: L2CAPATTBearer,
         adapter: Adapter, lifetime: LinkLifetime) {
        self.handle = handle
        self.peer = peer
        self.initialParameters = parameters
        self.att = att
        self.adapter = adapter
        self.lifetime = lifetime
    }

    /// Why the connection ended, or `nil` while it is up.
    public var ending: HostError? { lifetime.ending }

    /// Disconnects (HCI Disconnect with `reason`) and waits, bounded by `timeout`, for the
    /// controller's Disconnection Complete. Returns at once when already disconnected.
    public func disconnect(reason: HCIStatus = .remoteUserTerminatedConnection,
                           timeout: Duration = .seconds(5)) async throws(HostError) {
        try await adapter.disconnect(lifetime, reason: reason, timeout: timeout)
    }

    /// Waits until the connection ends and returns why: ``HostError/disconnected(_:)`` with the
    /// controller's reason, or the transport's failure; ``HostError/cancelled`` at once when
    /// the waiting task is cancelled (the link stays up).
    public func waitUntilDisconnected() async -> HostError {
        await lifetime.wait()
    }

    /// The link parameters now (after any connection update); `nil` once disconnected.
    public func currentParameters() async -> LinkParameters? {
        await adapter.linkParameters(lifetime)
    }

    /// Why the last attempt to make the link more secure after a peer's refusal (the GATT
    /// client's retry, ``L2CAPATTBearer/raiseSecurity(after:)``) failed: the pairing's SMP
    /// reason, its timeout, a method too weak. `nil` when the last attempt succeeded or none
    /// was made. A refusal that stands after the retry is explained by it: "Insufficient
    /// Authentication" alone does not say that the pairing failed with Confirm Value Failed.
    public var lastSecurityFailure: HostError? { lifetime.lastRaiseFailure }

    /// How secure the link is now: not encrypted, encrypted with an unauthenticated key (Just
    /// Works), or with an authenticated one (Passkey Entry, Numeric Comparison).
    public var security: LinkSecurity { lifetime.security }

    /// Waits until the link is at least `level` secure and returns the level it reached: how a
    /// peripheral learns that its central encrypted or paired, at the central's pace, without
    /// asking for it as ``secure(_:timeout:)`` does (a Security Request). Returns at once when
    /// the link already is that secure.
    ///
    /// ```swift
    /// let connection = try await incoming.next()
    /// try await connection.waitForSecurity(atLeast: .encrypted)  // the central encrypted the link
    /// ```
    /// - Throws: the link's end (``HostError/disconnected(_:)`` with the controller's reason,
    ///   or the transport's failure) when it comes first; ``HostError/cancelled`` at once when
    ///   the waiting task is cancelled (the way to bound the wait).
    @discardableResult
    public func waitForSecurity(atLeast level: LinkSecurity) async throws(HostError) -> LinkSecurity {
        try await lifetime.waitForSecurity(atLeast: level)
    }

    /// The size, in octets, of the key the link is encrypted with (the pairing's, the bond's,
    /// or the controller's report); `nil` while it is not encrypted. Part of the link's
    /// security: a 7-octet key is far weaker than a 16-octet one (KNOB).
    public var encryptionKeySize: UInt8? { lifetime.encryptionKeySize }

    /// Makes the link at least `level` secure, and returns the level reached.
    ///
    /// As central: encrypts with the bond kept for the peer when its key is good enough for
    /// `level`, else pairs (asking for MITM protection when `level` is
    /// `LinkSecurity.authenticated`) and keeps the bond when both sides bond. As peripheral:
    /// sends a Security Request and waits for the central to encrypt or pair. Returns at once
    /// when the link is already that secure; joins a pairing or encryption already under way.
    /// - Throws: ``HostError/pairingFailed(_:_:)`` (the SMP reason, either side's, or its 30 s
    ///   timeout), ``HostError/encryptionFailed(_:_:)`` (the controller or the peer refused
    ///   the key, e.g. a peer that lost its bond), ``HostError/insufficientSecurity(_:reached:required:)``
    ///   (the pairing succeeded below `level`, e.g. Just Works when authentication was needed),
    ///   ``HostError/securityTimedOut(_:seconds:)`` after `timeout`, ``HostError/unsupported(_:)``
    ///   when the adapter's configuration refuses pairing, the link's end, ``HostError/cancelled``.
    @discardableResult
    public func secure(_ level: LinkSecurity = .encrypted, timeout: Duration = .seconds(40)) async throws(HostError) -> LinkSecurity {
        try await adapter.secure(lifetime, level: level, forcePairing: false, timeout: timeout)
    }

    /// Pairs with the peer now, even when a bond exists (the new keys replace it), and returns
    /// how it went (method, keys, whether they were kept). As peripheral, asks the central to
    /// pair with a Security Request (it may encrypt with a bond instead: then the outcome is
    /// `nil`). Throws as ``secure(_:timeout:)`` does.
    @discardableResult
    public func pair(authenticated: Bool = false, timeout: Duration = .seconds(40)) async throws(HostError) -> PairingOutcome? {
        try await adapter.secure(lifetime, level: authenticated ? .authenticated : .encrypted, forcePairing: true, timeout: timeout)
        return lifetime.lastPairing
    }

    public var description: String { "connection 0x\(String(handle, radix: 16)) to \(peer)" }
}

/// Connection interval, latency and supervision timeout of a link, in the controller's units.
public struct LinkParameters: Hashable, Sendable {
    /// Units of 1.25 ms.
    public var interval: UInt16
    /// Connection events the peripheral may skip.
    public var latency: UInt16
    /// Units of 10 ms.
    public var supervisionTimeout: UInt16

    public var intervalMilliseconds: Double { Double(interval) * 1.25 }
    public var supervisionTimeoutMilliseconds: Int { Int(supervisionTimeout) * 10 }
}

/// The ATT bearer over rawble's own L2CAP: fixed channel 0x0004 of one connection.
public final class L2CAPATTBearer: ATTBearer {
    /// Every ATT PDU from the peer (see `ATTBearer.pdus`); finishes at once with
    /// `BearerError.closed` when the PDUs go to a receiver (``deliverPDUs(to:)``) instead.
    public var pdus: AsyncThrowingStream<[UInt8], any Error> { inbox.stream() }
    /// A basic L2CAP frame carries at most 65,535 bytes of payload.
    public var maximumPDULength: Int { Int(UInt16.max) }
    let adapter: Adapter
    let lifetime: LinkLifetime
    let inbox: ATTInbox

    init(adapter: Adapter, lifetime: LinkLifetime, inbox: ATTInbox) {
        self.adapter = adapter
        self.lifetime = lifetime
        self.inbox = inbox
    }

    public func send(_ pdu: [UInt8]) async throws(BearerError) {
        guard pdu.count <= maximumPDULength else { throw .pduTooLong(length: pdu.count, maximum: maximumPDULength) }
        try await adapter.sendATT(pdu, on: lifetime)
    }

    public func close() async {
        await adapter.closeATT(on: lifetime)
    }

    /// The fast path: the host hands each PDU to `receiver` on its own task, a slice of the
    /// received frame (no copy, no stream). `false` once ``pdus`` was read.
    public func deliverPDUs(to receiver: any ATTPDUReceiver) -> Bool {
        inbox.install(receiver)
    }

    /// The link's security now (see ``Connection/security``): a GATT server on this bearer
    /// checks each request's permissions against it.
    public func linkSecurity() -> LinkSecurity? { lifetime.security }

    /// The key size the link is encrypted with (see ``Connection/encryptionKeySize``): a GATT
    /// server on this bearer checks it against the size it requires.
    public func encryptionKeySize() -> UInt8? { lifetime.encryptionKeySize }

    /// The peer refused a request for lack of security: encrypts with the bond kept for the
    /// peer, or pairs (see ``Connection/secure(_:timeout:)``), bounded by the adapter's
    /// security timeout. `true` once the link is as secure as `refusal` asks; `false` (logged
    /// with why) when it could not be made so, so the refusal stands.
    public func raiseSecurity(after refusal: SecurityRefusal) async -> Bool {
        await adapter.raiseSecurity(on: lifetime, after: refusal)
    }
}

/// The life of one link, shared by the host and the objects it hands out: who is waiting for
/// its end, and why it ended. Thread-safe; each waiter is resumed exactly once.
final class LinkLifetime: Sendable {
    /// Unique per adapter: a stale ``Connection`` never acts on a reused handle.
    let id: UInt64
    let handle: UInt16
    private struct State {
        var ending: HostError?
        var waiters: [UInt64: CheckedContinuation<HostError, Never>] = [:]
        /// Ids handed out by ``makeWaiterID()`` whose waiter is not registered yet.
        var reserved: Set<UInt64> = []
        /// Early resumptions (timeout, cancellation) of reserved ids, kept for their registration.
        var early: [UInt64: HostError] = [:]
        var nextWaiter: UInt64 = 0
        /// Tasks in ``waitForSecurity(atLeast:)``: the level each waits for.
        var securityWaiters: [UInt64: (level: LinkSecurity, continuation: CheckedContinuation<Result<LinkSecurity, HostError>, Never>)] = [:]
    }
    private let state = Mutex(State())
    /// The link's security, set by the host on the adapter's executor and read from anywhere
    /// (a GATT server checks it on each request): its level and key size; the newest pairing's
    /// outcome with it.
    private let securityState = Mutex<(level: LinkSecurity, keySize: UInt8?, lastPairing: PairingOutcome?, lastRaiseFailure: HostError?)>(
        (.none, nil, nil, nil))

    init(id: UInt64, handle: UInt16) {
        self.id = id
        self.handle = handle
    }

    var ending: HostError? { state.withLock { $0.ending } }

    /// Setting it wakes the ``waitForSecurity(atLeast:)`` waits the new level satisfies.
    var security: LinkSecurity {
        get { securityState.withLock { $0.level } }
        set {
            securityState.withLock { $0.level = newValue }
            let reached = state.withLock { state in
                let reached = state.securityWaiters.filter { newValue >= $0.value.level }
                for id in reached.keys { state.securityWaiters[id] = nil }
                return reached.values.map(\.continuation)
            }
            for waiter in reached { waiter.resume(returning: .success(newValue)) }
        }
    }

    /// The size of the key the link is encrypted with; `nil` while not encrypted.
    var encryptionKeySize: UInt8? {
        get { securityState.withLock { $0.keySize } }
        set { securityState.withLock { $0.keySize = newValue } }
    }

    var lastPairing: PairingOutcome? {
        get { securityState.withLock { $0.lastPairing } }
        set { securityState.withLock { $0.lastPairing = newValue } }
    }

    /// Why the last raise of security after a peer's refusal failed; `nil` after one that
    /// succeeded, or before any.
    var lastRaiseFailure: HostError? {
        get { securityState.withLock { $0.lastRaiseFailure } }
        set { securityState.withLock { $0.lastRaiseFailure = newValue } }
    }

    /// Waits for the end; returns at once when it already came, and ``HostError/cancelled``
    /// as soon as the waiting task is cancelled.
    func wait() async -> HostError {
        let id = makeWaiterID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { register($0, id: id) }
        } onCancel: {
            resume(waiter: id, with: .cancelled)
        }
    }

    /// See ``Connection/waitForSecurity(atLeast:)``.
    func waitForSecurity(atLeast level: LinkSecurity) async throws(HostError) -> LinkSecurity {
        let id = makeWaiterID()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { register($0, waitingFor: level, id: id) }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Result<LinkSecurity, HostError>, Never>? in
                if let waiter = state.securityWaiters.removeValue(forKey: id) { return waiter.continuation }
                if state.reserved.remove(id) != nil { state.early[id] = .cancelled }
                return nil
            }
            waiter?.resume(returning: .failure(.cancelled))
        }
        return try result.get()
    }

    /// Registers a wait for `level` under an id from ``makeWaiterID()``; resumed at once when
    /// the link already is that secure, has ended, or the id was resumed early. The level is
    /// read under the lock that holds the waiters, and a new level is set before the waiters
    /// it satisfies are taken under that lock: a wait either sees the level or is woken by it.
    func register(_ continuation: CheckedContinuation<Result<LinkSecurity, HostError>, Never>,
                  waitingFor level: LinkSecurity, id: UInt64) {
        let ready: Result<LinkSecurity, HostError>? = state.withLock { state in
            state.reserved.remove(id)
            if let early = state.early.removeValue(forKey: id) { return .failure(early) }
            let current = security
            if current >= level { return .success(current) }
            if let ending = state.ending { return .failure(ending) }
            state.securityWaiters[id] = (level, continuation)
            return nil
        }
        if let ready { continuation.resume(returning: ready) }
    }

    /// Registers a waiter and returns its id (to time it out with ``resume(waiter:with:)``).
    /// The id is taken and the waiter stored in one critical section: a concurrent waiter
    /// can never be handed the same id (and be resumed in this one's place).
    func register(_ continuation: CheckedContinuation<HostError, Never>) -> UInt64 {
        let (id, ended): (UInt64, HostError?) = state.withLock { state in
            if let ending = state.ending { return (0, ending) }
            state.nextWaiter += 1
            state.waiters[state.nextWaiter] = continuation
            return (state.nextWaiter, nil)
        }
        if let ended { continuation.resume(returning: ended) }
        return id
    }

    /// Takes a waiter id before the waiter exists, so that a timeout or a cancellation handler
    /// can name it before ``register(_:id:)`` runs (it then resumes the waiter at once).
    func makeWaiterID() -> UInt64 {
        state.withLock { state in
            state.nextWaiter += 1
            state.reserved.insert(state.nextWaiter)
            return state.nextWaiter
        }
    }

    /// Registers the waiter of an id from ``makeWaiterID()``; resumed at once when the link
    /// already ended or the id was already resumed early.
    func register(_ continuation: CheckedContinuation<HostError, Never>, id: UInt64) {
        let ready: HostError? = state.withLock { state in
            state.reserved.remove(id)
            if let early = state.early.removeValue(forKey: id) { return early }
            if let ending = state.ending { return ending }
            state.waiters[id] = continuation
            return nil
        }
        if let ready { continuation.resume(returning: ready) }
    }

    /// Resumes one waiter early (a timeout, a cancellation), if it is still waiting; an id
    /// reserved and not yet registered keeps the result for its registration.
    func resume(waiter id: UInt64, with error: HostError) {
        let waiter: CheckedContinuation<HostError, Never>? = state.withLock { state in
            if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
            if state.reserved.remove(id) != nil { state.early[id] = error }
            return nil
        }
        waiter?.resume(returning: error)
    }

    /// The link ended: every waiter learns why; the first reason is kept.
    func end(_ error: HostError) {
        typealias Waiters = ([CheckedContinuation<HostError, Never>], [CheckedContinuation<Result<LinkSecurity, HostError>, Never>])
        let (waiters, securityWaiters) = state.withLock { state -> Waiters in
            guard state.ending == nil else { return ([], []) }
            state.ending = error
            defer {
                state.waiters.removeAll()
                state.securityWaiters.removeAll()
            }
            return (Array(state.waiters.values), state.securityWaiters.values.map(\.continuation))
        }
        for waiter in waiters { waiter.resume(returning: error) }
        for waiter in securityWaiters { waiter.resume(returning: .failure(error)) }
    }
}

/// What the host keeps for one live connection (actor-isolated inside ``Adapter``).
final class ConnectionRecord {
    let lifetime: LinkLifetime
    let peer: DeviceAddress
    var parameters: LinkParameters
    var signaling = LESignalingResponder()
    /// The Security Manager channel when the adapter refuses pairing (no pairing configuration).
    var securityManager = SecurityManagerResponder()
    /// Whether this side is the link's central (the pairing's initiator).
    let isCentral: Bool
    /// The Security Manager channel when the adapter pairs: this link's pairing engine.
    var pairing: SMPPairing<HostClock.Instant>?
    /// Fires the engine's timeout at its deadline; replaced whenever the deadline moves.
    var pairingTimer: Task<Void, Never>?
    /// Counts the pairings of this link, so an answer from the user (a passkey, a comparison)
    /// that comes after its pairing ended is dropped.
    var pairingGeneration: UInt64 = 0
    /// The encryption under way with a key from outside a pairing (a bond): how good the key
    /// is and its size, for when the Encryption Change comes, and the timer that bounds the
    /// wait for it.
    var bondEncryption: (level: LinkSecurity, keySize: UInt8, timer: Task<Void, Never>)?
    /// SMP commands from the peer held while the bond kept for it is looked up, before a
    /// pairing it starts (its strength is what the pairing must not lower); `nil` when none are.
    var heldSecurityManagerPDUs: [ArraySlice<UInt8>]?
    /// Tasks waiting for the link's security to settle (``Connection/secure(_:timeout:)``).
    var securityWaiters: [UInt64: CheckedContinuation<Result<LinkSecurity, HostError>, Never>] = [:]
    /// How many times the link's security settled, and how it settled last. A wait counts
    /// from before it starts what it waits for; filed after a settlement since (any `await`
    /// on the way may let the adapter handle the answer first), it ends with that one.
    private(set) var securitySettlements: UInt64 = 0
    private(set) var lastSecuritySettlement: Result<LinkSecurity, HostError>?
    let attInbox: ATTInbox
    var attClosed = false
    var droppedATTPDUs = 0
    /// Whether a ``Connection`` was handed out (else the host disconnects it itself).
    var claimed = false
    /// The newest accepted parameter update the controller was not asked for yet: a newer
    /// request replaces it (only the last one matters), so at most one waits.
    var queuedParameterUpdate: HCICommand.ConnectionParameters?
    /// Whether the host is running LE Connection Updates for this link (one at a time).
    var parameterUpdatesRunning = false
    /// The running update's wait for its LE Connection Update Complete, and its time bound.
    private var parameterUpdateWait: (id: UInt64, continuation: CheckedContinuation<Void, Never>, timer: Task<Void, Never>)?

    var handle: UInt16 { lifetime.handle }

    init(lifetime: LinkLifetime, peer: DeviceAddress, parameters: LinkParameters, attBufferLimit: Int,
         isCentral: Bool, pairing: SMPPairing<HostClock.Instant>?) {
        self.lifetime = lifetime
        self.peer = peer
        self.parameters = parameters
        self.isCentral = isCentral
        self.pairing = pairing
        attInbox = ATTInbox(limit: attBufferLimit)
    }

    /// A record leaves the host's table through ``end(bearerError:hostError:)``, which settles
    /// every wait on it. Should one ever go without it (a path that drops it, or the adapter
    /// itself going away), its waiters learn it here instead of waiting forever: a task that
    /// waits for the link's security never outlives the record that would wake it.
    deinit {
        settleSecurity(.failure(lifetime.ending ?? .linkLost("the host dropped the link's record without ending it")))
        parameterUpdateEnded()
    }

    /// Whether the link's security is settling: a pairing or an encryption under way.
    var securityPending: Bool {
        (pairing?.isPairing ?? false) || bondEncryption != nil
    }

    /// Ends every wait for the link's security with `result`.
    func settleSecurity(_ result: Result<LinkSecurity, HostError>) {
        securitySettlements += 1
        lastSecuritySettlement = result
        let waiters = securityWaiters.values
        securityWaiters.removeAll()
        for waiter in waiters { waiter.resume(returning: result) }
    }

    func updateParameters(interval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        parameters = LinkParameters(interval: interval, latency: latency, supervisionTimeout: supervisionTimeout)
    }

    /// Hands an ATT PDU to the bearer; `false` when the reader is that far behind (dropped).
    func deliverATT(_ pdu: ArraySlice<UInt8>) -> Bool {
        guard !attClosed else { return true }
        guard attInbox.deliver(pdu) else {
            droppedATTPDUs += 1
            return false
        }
        return true
    }

    /// LE Connection Update Complete events for this link so far.
    private(set) var parameterUpdatesCompleted: UInt64 = 0

    /// The controller reported an LE Connection Update Complete for the link: the running
    /// update (if any) is over.
    func parameterUpdateCompleted() {
        parameterUpdatesCompleted += 1
        parameterUpdateEnded()
    }

    /// Starts the wait for the running update's end (see ``parameterUpdateEnded(id:)``); `timer`
    /// bounds it and is cancelled when it ends otherwise. `completedBefore`: the count of
    /// ``parameterUpdatesCompleted`` before the update was asked for; a Complete handled
    /// since (before this wait was filed) ends it at once.
    func awaitParameterUpdate(id: UInt64, completedBefore: UInt64, _ continuation: CheckedContinuation<Void, Never>,
                              timer: Task<Void, Never>) {
        guard parameterUpdatesCompleted == completedBefore else {
            timer.cancel()
            continuation.resume()
            return
        }
        parameterUpdateWait = (id, continuation, timer)
    }

    /// The running update ended (its Complete event, its time bound, the link's end); with an
    /// `id`, only if that wait is still the current one.
    func parameterUpdateEnded(id: UInt64? = nil) {
        guard let wait = parameterUpdateWait, id == nil || wait.id == id else { return }
        parameterUpdateWait = nil
        wait.timer.cancel()
        wait.continuation.resume()
    }

    /// The link is gone: waiters learn `hostError`, then the bearer ends with `bearerError`
    /// (in that order, so whoever sees the bearer end finds ``Connection/ending`` set).
    func end(bearerError: BearerError, hostError: HostError) {
        parameterUpdateEnded()
        pairingTimer?.cancel()
        bondEncryption?.timer.cancel()
        bondEncryption = nil
        settleSecurity(.failure(hostError))
        lifetime.end(hostError)
        attInbox.finish(bearerError)
    }
}
