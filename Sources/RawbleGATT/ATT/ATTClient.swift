import Logging
import RawbleBearer
import RawbleGATTCore
import RawbleWire
import Synchronization

/// One value update from the server: a notification or an indication (the client confirms
/// every indication itself, whether or not the value reaches a subscriber).
public struct ATTValueUpdate: Hashable, Sendable {
    /// The attribute handle the value belongs to (a characteristic's value handle).
    public var handle: UInt16
    /// The value: a slice of the received PDU, not a copy.
    public var value: ArraySlice<UInt8>
    /// Whether the server sent it as an indication (which the client confirms).
    public var isIndication: Bool

    public init(handle: UInt16, value: ArraySlice<UInt8>, isIndication: Bool) {
        self.handle = handle
        self.value = value
        self.isIndication = isIndication
    }
}

/// The ATT client on one bearer (Core Vol 3 Part F): one request outstanding at a time with a
/// bounded FIFO queue behind it, responses matched by opcode, the transaction timeout, value
/// updates routed to subscribers (indications confirmed), requests from the peer answered.
///
/// It reads the bearer from the moment it is created until the bearer ends or ``close()`` is
/// called; after that every pending and later call fails with the error that ended it.
public actor ATTClient {
    /// How the client behaves; the defaults follow the specification.
    public struct Configuration: Sendable {
        /// A request with no response within this time ends the bearer (Core Vol 3 Part F 3.3.3).
        public var transactionTimeout: Duration = .seconds(30)
        /// The receive MTU this client offers in Exchange MTU (capped by the bearer's PDU limit).
        public var preferredMTU: UInt16 = 517
        /// Per subscription stream: updates kept for a slow consumer before the oldest are
        /// dropped (counted in ``ATTClient/droppedUpdateCount`` and logged).
        public var updateBufferLimit = 4096
        /// Requests waiting behind the outstanding one; more fail at once with
        /// `GATTError.requestQueueFull(limit:)` (bounded memory).
        public var requestQueueLimit = 256
        /// Where dropped PDUs, dropped updates and peer requests are logged.
        public var logger = Logger(label: "rawble.att")
        /// The clock the transaction timeout runs on: the real continuous clock by default; a
        /// test gives a virtual one (RawbleTestSupport's `ManualClock`) and moves its time, so
        /// the timeout fires when the test says, not after a real wait.
        public var clock: any Clock<Duration> = ContinuousClock()
        public init() {}
    }


    /// One request, queued or outstanding. `continuation` is nil once its caller stopped waiting
    /// (cancelled): the transaction still runs to its end before the next request goes out.
    private struct Transaction {
        let id: UInt64
        let opcode: ATTOpcode
        let bytes: [UInt8]
        var continuation: CheckedContinuation<Result<ATTPDU, GATTError>, Never>?
        /// Sent once more after the bearer raised the link's security: a second refusal stands.
        var securityRetried = false
    }

    private static let confirmationPDU: [UInt8] = [ATTOpcode.handleValueConfirmation.rawValue]

    private let bearer: any ATTBearer
    private let configuration: Configuration
    private let logger: Logger
    /// What this client can receive: the preferred MTU within the bearer's limit, at least 23.
    private let receiveMTU: UInt16

    /// The ATT_MTU of the bearer: 23 until an Exchange MTU (ours or the peer's) raises it.
    public private(set) var mtu: UInt16 = ATTPDU.defaultMTU
    /// Value updates a slow subscriber lost because its buffer was full.
    public var droppedUpdateCount: Int { router.droppedUpdateCount }

    private var queue: [Transaction] = []
    private var outstanding: Transaction?
    private var transactionTask: Task<Void, Never>?
    /// Raising the link's security and resending the outstanding request (at most once per request).
    private var securityRetryTask: Task<Void, Never>?
    private var terminalError: GATTError?
    /// Tasks in ``waitForPendingRequests(_:)``: the count each waits for.
    private var pendingWaiters: [(count: Int, continuation: CheckedContinuation<Result<Void, GATTError>, Never>)] = []
    private var nextID: UInt64 = 0
    private var mtuExchangeStarted = false
    /// The subscribers; value updates reach them from the bearer's own task when the bearer
    /// has a fast path (`ATTBearer.deliverPDUs(to:)`).
    private let router: ATTUpdateRouter
    /// What the router hands to this actor (responses, peer requests, confirmations owed) when
    /// the bearer has a fast path; `nil`: the actor reads `ATTBearer.pdus` itself.
    private let routedPDUs: AsyncThrowingStream<ATTUpdateRouter.Inbound, any Error>?

    /// Creates the client and starts reading `bearer`.
    public init(bearer: some ATTBearer, configuration: Configuration = Configuration()) {
        self.bearer = bearer
        self.configuration = configuration
        self.logger = configuration.logger
        let bearerLimit = UInt16(clamping: max(0, bearer.maximumPDULength))
        let receiveMTU = max(ATTPDU.defaultMTU, min(configuration.preferredMTU, ATTPDU.maximumMTU, bearerLimit))
        self.receiveMTU = receiveMTU
        let (inbound, continuation) = AsyncThrowingStream.makeStream(
            of: ATTUpdateRouter.Inbound.self, throwing: (any Error).self,
            bufferingPolicy: .bufferingOldest(ATTUpdateRouter.inboundLimit))
        let router = ATTUpdateRouter(receiveMTU: receiveMTU, logger: configuration.logger, inbound: continuation)
        self.router = router
        if bearer.deliverPDUs(to: router) {
            routedPDUs = inbound
        } else {
            continuation.finish()
            routedPDUs = nil
        }
        Task { await self.readLoop() }
    }

    /// Requests queued or outstanding (for diagnostics and tests).
    public var pendingRequestCount: Int { queue.count + (outstanding == nil ? 0 : 1) }

    /// Returns once at least `count` requests are queued or outstanding (at once if they are):
    /// how a test learns that a request it started is in the client's hands. Throws the
    /// client's end when it ends first; bound it with the caller's own timeout.
    package func waitForPendingRequests(_ count: Int) async throws(GATTError) {
        if let terminalError { throw terminalError }
        if pendingRequestCount >= count { return }
        try await withCheckedContinuation { pendingWaiters.append((count, $0)) }.get()
    }
    /// Live update streams (for diagnostics and tests).
    public var subscriptionCount: Int { router.subscriptionCount }

    // MARK: Requests

    /// Exchange MTU (once); returns the negotiated MTU = min(preferredMTU, server's), at least 23.
    /// A server that answers with an Error Response keeps the MTU at 23 (returned, not thrown).
    /// A second call returns the current MTU without a request.
    public func exchangeMTU() async throws(GATTError) -> UInt16 {
        if mtuExchangeStarted { return mtu }
        mtuExchangeStarted = true
        let response: ATTPDU
        do {
            response = try await transact(.exchangeMTURequest(clientMTU: receiveMTU))
        } catch {
            mtuExchangeStarted = false
            throw error
        }
        switch response {
        case .exchangeMTUResponse(let serverMTU):
            mtu = max(mtu, negotiatedMTU(serverMTU))
        default:
            logger.debug("Exchange MTU answered \(response); the ATT_MTU stays \(mtu)")
        }
        return mtu
    }

    /// Sends a request and returns the server's answer: its response PDU, or `.errorResponse`
    /// for THIS request (the caller interprets it). Throws only for timeout, bearer end,
    /// cancellation, a malformed response, a request longer than the MTU or a full queue.
    /// `request` must be a request (its opcode's kind is `.request`).
    public func transact(_ request: ATTPDU) async throws(GATTError) -> ATTPDU {
        let opcode = request.opcode
        precondition(opcode.kind == .request, "ATTClient.transact needs a request, not \(opcode)")
        if let terminalError { throw terminalError }
        if Task.isCancelled { throw .cancelled }
        let bytes = request.encoded
        guard bytes.count <= Int(mtu) else {
            throw .bearer(.pduTooLong(length: bytes.count, maximum: Int(mtu)))
        }
        guard queue.count < configuration.requestQueueLimit else {
            throw .requestQueueFull(limit: configuration.requestQueueLimit)
        }
        nextID &+= 1
        let id = nextID
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<ATTPDU, GATTError>, Never>) in
                queue.append(Transaction(id: id, opcode: opcode, bytes: bytes, continuation: continuation))
                wakePendingWaiters()
                if Task.isCancelled {
                    cancelRequest(id)
                } else {
                    startNextTransaction()
                }
            }
        } onCancel: {
            Task { await self.cancelRequest(id) }
        }
        return try result.get()
    }

    /// Like ``transact(_:)``, but an Error Response throws `GATTError.att(_:)`.
    public func request(_ request: ATTPDU) async throws(GATTError) -> ATTPDU {
        let response = try await transact(request)
        if let error = ATTError(response) { throw .att(error) }
        return response
    }

    /// Sends a command (Write Command, Signed Write Command): no response, not queued behind
    /// the outstanding request.
    public func send(command: ATTPDU) async throws(GATTError) {
        precondition(command.opcode.kind == .command, "ATTClient.send(command:) needs a command, not \(command.opcode)")
        if let terminalError { throw terminalError }
        let bytes = command.encoded
        guard bytes.count <= Int(mtu) else {
            throw .bearer(.pduTooLong(length: bytes.count, maximum: Int(mtu)))
        }
        do {
            try await bearer.send(bytes)
        } catch {
            if case .cancelled = error { throw .cancelled }
            throw .bearer(error)
        }
    }

    /// Runs a sans-I/O procedure to its end, one request at a time.
    public func run<P: GATTProcedure>(_ procedure: P) async throws(GATTError) -> P.Output {
        var procedure = procedure
        var step = procedure.start()
        while true {
            switch step {
            case .finished(let output):
                return output
            case .send(let request):
                let response = try await transact(request)
                step = try procedure.receive(response)
            }
        }
    }

    // MARK: Value updates

    /// Value updates for `handle` (nil: every handle), registered synchronously when this
    /// returns — so a caller registers BEFORE writing the CCCD and no early notification is
    /// lost. The stream finishes (throwing the GATTError) when the client ends; terminating
    /// the stream unregisters.
    public func updates(for handle: UInt16?) -> AsyncThrowingStream<ATTValueUpdate, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: ATTValueUpdate.self, throwing: (any Error).self,
            bufferingPolicy: .bufferingNewest(max(1, configuration.updateBufferLimit)))
        if let terminalError {
            continuation.finish(throwing: terminalError)
            return stream
        }
        nextID &+= 1
        let id = nextID
        router.subscribe(ATTUpdateSubscriber(continuation), id: id, handle: handle)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(id, handle: handle) }
        }
        return stream
    }

    /// Value updates for `handle` (nil: every handle) handed to `onUpdate` where the bearer
    /// delivers them (for rawble's own host: on its event loop, as the packet is read), with no
    /// stream or task in between; `onEnd` is called once, with the error, when the client ends.
    /// Registered synchronously when this returns (as ``updates(for:)``). `onUpdate` returns
    /// `false` for a value it had to drop (counted in ``droppedUpdateCount``). It runs under
    /// the client's routing lock: keep it short, never block, never call back into the client.
    public func addUpdateHandler(
        for handle: UInt16?,
        onUpdate: @escaping @Sendable (ATTValueUpdate) -> Bool,
        onEnd: @escaping @Sendable (GATTError) -> Void
    ) -> ATTUpdateHandlerID {
        nextID &+= 1
        let registration = ATTUpdateHandlerID(id: nextID, handle: handle)
        if let terminalError {
            onEnd(terminalError)
        } else {
            router.subscribe(ATTUpdateSubscriber(deliver: onUpdate, finish: onEnd), id: registration.id, handle: handle)
        }
        return registration
    }

    /// Stops calling a handler of ``addUpdateHandler(for:onUpdate:onEnd:)`` (its `onEnd` is not
    /// called). Safe to call more than once.
    public func removeUpdateHandler(_ registration: ATTUpdateHandlerID) {
        router.unsubscribe(registration.id, handle: registration.handle)
    }

    /// Closes the bearer; everything pending and later fails with `GATTError.bearer(.closed)`.
    public func close() async {
        end(with: .bearer(.closed))
        await bearer.close()
    }

    // MARK: Internals

    /// Resumes the ``waitForPendingRequests(_:)`` waits the count now satisfies.
    private func wakePendingWaiters() {
        guard !pendingWaiters.isEmpty else { return }
        let count = pendingRequestCount
        pendingWaiters.removeAll { waiter in
            guard waiter.count <= count else { return false }
            waiter.continuation.resume(returning: .success(()))
            return true
        }
    }

    private func negotiatedMTU(_ peerMTU: UInt16) -> UInt16 {
        max(ATTPDU.defaultMTU, min(receiveMTU, peerMTU))
    }

    /// Sends the head of the queue when no request is outstanding, then waits for the timeout
    /// (cancelled when the response arrives).
    private func startNextTransaction() {
        guard terminalError == nil, outstanding == nil, !queue.isEmpty else { return }
        let next = queue.removeFirst()
        outstanding = next
        let bearer = self.bearer
        let timeout = configuration.transactionTimeout
        let clock = configuration.clock
        let id = next.id
        let bytes = next.bytes
        transactionTask = Task {
            do throws(BearerError) {
                try await bearer.send(bytes)
            } catch {
                self.sendFailed(id, error)
                return
            }
            do {
                try await clock.sleep(for: timeout)
            } catch {
                return  // the transaction completed
            }
            await self.transactionTimedOut(id)
        }
    }

    private func completeTransaction(_ result: Result<ATTPDU, GATTError>) {
        guard let transaction = outstanding else { return }
        outstanding = nil
        transactionTask?.cancel()
        transactionTask = nil
        securityRetryTask?.cancel()
        securityRetryTask = nil
        transaction.continuation?.resume(returning: result)
        startNextTransaction()
    }

    /// When `response` refuses the outstanding request for lack of security (Insufficient
    /// Authentication, Insufficient Encryption, Encryption Key Size Too Short) and the request
    /// was not retried yet, asks the bearer to raise the link's security and, if it did, sends
    /// the same request once more, as BlueZ's client does; `false`: the response stands. The
    /// transaction's timeout, running since the first send, bounds the raise and the resend.
    private func retryAfterRaisingSecurity(_ response: ATTPDU) -> Bool {
        guard case .errorResponse(_, _, let code) = response, let refusal = SecurityRefusal(rawValue: code.rawValue),
              var transaction = outstanding, !transaction.securityRetried, transaction.continuation != nil
        else { return false }
        transaction.securityRetried = true
        outstanding = transaction
        logger.debug("\(transaction.opcode) refused with \(refusal): asking the bearer for more security")
        let bearer = self.bearer
        securityRetryTask = Task {
            let raised = await bearer.raiseSecurity(after: refusal)
            await self.resend(transaction, raised: raised, refusal: response)
        }
        return true
    }

    /// Sends `transaction` again once the bearer raised the link's security; when it did not,
    /// `refusal` (the Error Response) is the request's answer.
    private func resend(_ transaction: Transaction, raised: Bool, refusal: ATTPDU) async {
        guard terminalError == nil, outstanding?.id == transaction.id else { return }
        guard raised else {
            logger.debug("the bearer did not raise the link's security: \(transaction.opcode) stays refused")
            completeTransaction(.success(refusal))
            return
        }
        logger.debug("security raised: sending \(transaction.opcode) again")
        do throws(BearerError) {
            try await bearer.send(transaction.bytes)
        } catch {
            sendFailed(transaction.id, error)
        }
    }

    private func cancelRequest(_ id: UInt64) {
        if let index = queue.firstIndex(where: { $0.id == id }) {
            let transaction = queue.remove(at: index)
            transaction.continuation?.resume(returning: .failure(.cancelled))
        } else if outstanding?.id == id, let continuation = outstanding?.continuation {
            // Sent: stop waiting, but the transaction stays outstanding until it ends.
            outstanding?.continuation = nil
            continuation.resume(returning: .failure(.cancelled))
        }
    }

    /// A request could not be sent. Only the end of the link ends the client; a PDU the
    /// bearer refused (too long, no room in time, cancelled) fails just this request.
    private func sendFailed(_ id: UInt64, _ error: BearerError) {
        guard outstanding?.id == id else { return }
        switch error {
        case .pduTooLong, .cancelled, .timedOut:
            completeTransaction(.failure(.bearer(error)))
        case .disconnected, .closed, .transport:
            end(with: .bearer(error))
        }
    }

    private func transactionTimedOut(_ id: UInt64) async {
        guard let transaction = outstanding, transaction.id == id else { return }
        let seconds = configuration.transactionTimeout / .seconds(1)
        logger.warning("no response to \(transaction.opcode) within \(seconds) s: closing the ATT bearer")
        // The bearer is closed before anyone hears of the timeout (Core Vol 3 Part F 3.3.3: no
        // more ATT on this bearer): a caller that sees the error finds the link closed too.
        // The client has ended already, so nothing answered meanwhile counts.
        let error = GATTError.timeout(request: transaction.opcode, seconds: seconds)
        let waiting = stop(with: error)
        await bearer.close()
        waiting.fail(with: error)
    }

    /// Ends the client once: fails the outstanding and queued requests and finishes every
    /// update stream with `error`; later calls fail with it too.
    private func end(with error: GATTError) {
        stop(with: error).fail(with: error)
    }

    /// Who waits on a client that ended: the requests and the update streams.
    private struct Waiting {
        var transactions: [Transaction] = []
        var subscribers: [ATTUpdateSubscriber] = []

        func fail(with error: GATTError) {
            for transaction in transactions { transaction.continuation?.resume(returning: .failure(error)) }
            for subscriber in subscribers { subscriber.finish(error) }
        }
    }

    /// Ends the client (the first time only: `error` is then its terminal error) and returns
    /// who waits on it, to be failed by the caller.
    private func stop(with error: GATTError) -> Waiting {
        guard terminalError == nil else { return Waiting() }
        terminalError = error
        transactionTask?.cancel()
        transactionTask = nil
        securityRetryTask?.cancel()
        securityRetryTask = nil
        var waiting = Waiting(transactions: outstanding.map { [$0] } ?? [])
        outstanding = nil
        waiting.transactions += queue
        queue.removeAll()
        waiting.subscribers = router.end()
        for waiter in pendingWaiters { waiter.continuation.resume(returning: .failure(error)) }
        pendingWaiters = []
        return waiting
    }

    private func unsubscribe(_ id: UInt64, handle: UInt16?) {
        router.unsubscribe(id, handle: handle)
    }

    private func readLoop() async {
        do {
            if let routedPDUs {
                for try await inbound in routedPDUs {
                    if case .pdu(let pdu) = inbound { await receive(pdu) }
                    // Whatever the item, pay every confirmation owed so far: the wake-up of an
                    // indication may have been dropped by a full buffer, its count was not.
                    await sendOwedConfirmations()
                }
            } else {
                for try await pdu in bearer.pdus {
                    await receive(pdu)
                }
            }
            end(with: .bearer(.closed))
        } catch {
            end(with: .bearer(error as? BearerError ?? .disconnected(reason: "\(error)")))
        }
    }

    /// Handles one PDU from the peer.
    private func receive(_ pdu: [UInt8]) async {
        guard terminalError == nil else { return }
        switch ATTInbound.classify(pdu, outstanding: outstanding?.opcode, receiveMTU: receiveMTU) {
        case .response(let response):
            if retryAfterRaisingSecurity(response) { return }
            completeTransaction(.success(response))
        case .malformedResponse(let error):
            logger.debug("malformed response: \(error)")
            completeTransaction(.failure(.malformedPDU(error)))
        case let .update(handle, value, isIndication):
            route(ATTValueUpdate(handle: handle, value: value, isIndication: isIndication))
            if isIndication { await sendToPeer(Self.confirmationPDU) }
        case .multipleUpdates(let tuples):
            for tuple in tuples {
                route(ATTValueUpdate(handle: tuple.handle, value: tuple.value, isIndication: false))
            }
        case let .answerPeerMTURequest(clientMTU, answer):
            logger.debug("the peer exchanges the MTU (\(clientMTU)); answering \(receiveMTU)")
            mtu = max(mtu, negotiatedMTU(clientMTU))
            await sendToPeer(answer.encoded)
        case .answerPeerRequest(let answer):
            logger.debug("request from the peer answered with \(answer)")
            await sendToPeer(answer.encoded)
        case .dropped(let reason):
            logger.debug("dropped: \(reason)")
        }
    }

    /// Delivers one update to every matching subscriber; a full buffer drops (counted).
    private func route(_ update: ATTValueUpdate) {
        router.route(update)
    }

    /// Sends one Handle Value Confirmation for every indication the fast path received since
    /// the last call.
    private func sendOwedConfirmations() async {
        let owed = router.takeOwedConfirmations()
        guard terminalError == nil else { return }
        for _ in 0..<owed { await sendToPeer(Self.confirmationPDU) }
    }

    /// Sends a PDU the peer is owed (confirmation, answer); a failure surfaces through the
    /// bearer's end.
    private func sendToPeer(_ bytes: [UInt8]) async {
        do {
            try await bearer.send(bytes)
        } catch {
            logger.debug("could not answer the peer: \(error)")
        }
    }
}

/// The subscribers of one ``ATTClient``, shared by the actor and the bearer's fast path: value
/// updates are decoded and routed on the task that delivers the PDU (the host's), without a
/// hop through the actor; everything else goes on to the actor, in order, through `inbound`.
/// Thread-safe (a lock around the subscriber table).
final class ATTUpdateRouter: ATTPDUReceiver {
    /// What the actor still has to do for a PDU the router took.
    enum Inbound: Sendable {
        /// Not a value update: responses, requests from the peer, anything else.
        case pdu([UInt8])
        /// An indication was received: confirmations are owed (counted in the router; this
        /// only wakes the actor, and may be dropped when the buffer is full).
        case confirmIndication
    }

    /// Bound on PDUs waiting for the actor: responses come one at a time, so only a peer
    /// flooding requests or stray responses reaches it (the excess is dropped and logged).
    /// Confirmations owed are counted apart and never dropped.
    static let inboundLimit = 1024

    private struct State {
        var subscribers: [UInt16: [UInt64: ATTUpdateSubscriber]] = [:]
        var everyHandleSubscribers: [UInt64: ATTUpdateSubscriber] = [:]
        var droppedUpdateCount = 0
        var droppedInboundCount = 0
        /// Indications received and not yet confirmed (the actor sends the confirmations).
        var owedConfirmations = 0
        var ended = false
    }
    private let state = Mutex(State())
    private let receiveMTU: UInt16
    private let logger: Logger
    private let inbound: AsyncThrowingStream<Inbound, any Error>.Continuation

    init(receiveMTU: UInt16, logger: Logger, inbound: AsyncThrowingStream<Inbound, any Error>.Continuation) {
        self.receiveMTU = receiveMTU
        self.logger = logger
        self.inbound = inbound
    }

    var droppedUpdateCount: Int { state.withLock { $0.droppedUpdateCount } }

    /// Takes the number of confirmations owed to the peer (the caller sends them).
    func takeOwedConfirmations() -> Int {
        state.withLock { state in
            defer { state.owedConfirmations = 0 }
            return state.owedConfirmations
        }
    }

    var subscriptionCount: Int {
        state.withLock { state in
            state.subscribers.values.reduce(state.everyHandleSubscribers.count) { $0 + $1.count }
        }
    }

    func subscribe(_ subscriber: ATTUpdateSubscriber, id: UInt64, handle: UInt16?) {
        state.withLock { state in
            if let handle {
                state.subscribers[handle, default: [:]][id] = subscriber
            } else {
                state.everyHandleSubscribers[id] = subscriber
            }
        }
    }

    func unsubscribe(_ id: UInt64, handle: UInt16?) {
        state.withLock { state in
            if let handle {
                state.subscribers[handle]?[id] = nil
                if state.subscribers[handle]?.isEmpty == true { state.subscribers[handle] = nil }
            } else {
                state.everyHandleSubscribers[id] = nil
            }
        }
    }

    /// The client ended: no more routing; returns the subscribers to finish (outside the lock,
    /// so their termination handlers never run under it).
    func end() -> [ATTUpdateSubscriber] {
        state.withLock { state in
            state.ended = true
            defer {
                state.subscribers.removeAll()
                state.everyHandleSubscribers.removeAll()
            }
            return state.subscribers.values.flatMap(\.values) + Array(state.everyHandleSubscribers.values)
        }
    }

    /// Delivers one update to every matching subscriber; a full buffer drops (counted).
    func route(_ update: ATTValueUpdate) {
        let (delivered, dropped) = state.withLock { state -> (Bool, Int?) in
            guard !state.ended else { return (true, nil) }
            var delivered = false
            var full = false
            if let subscribers = state.subscribers[update.handle] {
                for subscriber in subscribers.values where !subscriber.deliver(update) {
                    full = true
                    state.droppedUpdateCount += 1
                }
                delivered = !subscribers.isEmpty
            }
            for subscriber in state.everyHandleSubscribers.values {
                if !subscriber.deliver(update) {
                    full = true
                    state.droppedUpdateCount += 1
                }
                delivered = true
            }
            return (delivered, full ? state.droppedUpdateCount : nil)
        }
        if let dropped, dropped == 1 || dropped % 1000 == 0 {
            logger.warning("a subscriber is too slow: \(dropped) updates dropped so far")
        }
        if !delivered {
            logger.debug("update for handle 0x\(String(update.handle, radix: 16)) with no subscriber dropped")
        }
    }

    // MARK: ATTPDUReceiver

    func receive(_ pdu: ArraySlice<UInt8>) {
        let start = pdu.startIndex
        switch pdu.first.map({ ATTOpcode($0) }) {
        case .handleValueNotification? where pdu.count >= 3:
            // Handle Value Notification, the hot path: no decoder, no copy.
            let handle = UInt16(pdu[start + 1]) | UInt16(pdu[start + 2]) << 8
            route(ATTValueUpdate(handle: handle, value: pdu[(start + 3)...], isIndication: false))
        case .handleValueIndication?, .multipleHandleValueNotification?:
            switch ATTInbound.classify(Array(pdu), outstanding: nil, receiveMTU: receiveMTU) {
            case let .update(handle, value, isIndication):
                // Policy: the value goes to the subscribers under their buffer policy (a full
                // subscriber buffer drops it, counted); the confirmation is owed as soon as a
                // well-formed indication was received (Core Vol 3 Part F 3.4.7.2), so it is
                // counted before anything can be dropped and always sent.
                if isIndication { state.withLock { $0.owedConfirmations += 1 } }
                route(ATTValueUpdate(handle: handle, value: value, isIndication: isIndication))
                if isIndication { forward(.confirmIndication) }
            case .multipleUpdates(let tuples):
                for tuple in tuples { route(ATTValueUpdate(handle: tuple.handle, value: tuple.value, isIndication: false)) }
            case .dropped(let reason):
                logger.debug("dropped: \(reason)")
            default:
                forward(.pdu(Array(pdu)))
            }
        default:
            forward(.pdu(Array(pdu)))
        }
    }

    func bearerEnded(_ error: BearerError) {
        inbound.finish(throwing: error)
    }

    private func forward(_ item: Inbound) {
        guard case .dropped = inbound.yield(item), case .pdu = item else { return }
        let count = state.withLock { state in
            state.droppedInboundCount += 1
            return state.droppedInboundCount
        }
        if count.nonzeroBitCount == 1 {  // the 1st, 2nd, 4th, 8th … drop: bounded logging
            logger.warning("\(count) ATT PDUs from the peer dropped: the client is too far behind")
        }
    }
}

/// Names a handler registered with ``ATTClient/addUpdateHandler(for:onUpdate:onEnd:)``.
public struct ATTUpdateHandlerID: Hashable, Sendable {
    let id: UInt64
    let handle: UInt16?
}

/// One subscriber of an ``ATTUpdateRouter``: where its values go (`false`: dropped) and how
/// it learns the end. A stream's continuation or an embedder's handler.
struct ATTUpdateSubscriber: Sendable {
    let deliver: @Sendable (ATTValueUpdate) -> Bool
    let finish: @Sendable (GATTError) -> Void

    init(deliver: @escaping @Sendable (ATTValueUpdate) -> Bool, finish: @escaping @Sendable (GATTError) -> Void) {
        self.deliver = deliver
        self.finish = finish
    }

    /// A stream's subscriber: a full buffer drops the value.
    init(_ continuation: AsyncThrowingStream<ATTValueUpdate, any Error>.Continuation) {
        deliver = { update in
            if case .dropped = continuation.yield(update) { return false }
            return true
        }
        finish = { continuation.finish(throwing: $0) }
    }
}
