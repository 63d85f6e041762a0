// The GATT server's async shell: one database shared by any number of connections (one
// `ATTBearer` per central), each run by its own `ATTServer` core. It reads each bearer's PDUs,
// asks the embedder for provided values, sends the answers, runs the indication timers and
// reports what centrals do as one stream of events.
import RawbleBearer
import RawbleGATTCore
import RawbleWire
import Synchronization

/// The first of a provider's answer and its deadline: resumes the waiting read once and
/// cancels the other.
private final class ProviderRace<Answer: Sendable>: Sendable {
    private struct State {
        var answer: CheckedContinuation<Answer, Never>?
        var tasks: [Task<Void, Never>] = []
        var done = false
    }
    private let state = Mutex(State())

    func start(_ answer: CheckedContinuation<Answer, Never>) {
        state.withLock { $0.answer = answer }
    }

    func own(_ tasks: Task<Void, Never>...) {
        let finished = state.withLock { state in
            state.tasks = tasks
            return state.done
        }
        if finished { for task in tasks { task.cancel() } }
    }

    func finish(_ result: Answer) {
        let taken = state.withLock { state -> (CheckedContinuation<Answer, Never>, [Task<Void, Never>])? in
            guard !state.done, let answer = state.answer else { return nil }
            state.done = true
            state.answer = nil
            return (answer, state.tasks)
        }
        guard let (answer, tasks) = taken else { return }
        answer.resume(returning: result)
        for task in tasks { task.cancel() }
    }
}

/// Names one connection of a ``GATTServer`` (numbered from 1 in the order bearers were added).
public struct GATTConnectionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "connection \(rawValue)" }
}

/// A read of a provided value: the embedder answers with the whole value (the server cuts it
/// at the read's offset and the ATT_MTU) or an ATT error code (e.g. an application error 0x80…0x9F).
public struct GATTServerRead: Hashable, Sendable {
    public var connection: GATTConnectionID
    public var handle: UInt16
    /// The attribute's type (the characteristic's or descriptor's UUID).
    public var uuid: BluetoothUUID

    public init(connection: GATTConnectionID, handle: UInt16, uuid: BluetoothUUID) {
        self.connection = connection
        self.handle = handle
        self.uuid = uuid
    }
}

/// A value a central wrote (or, to the write handler, wants to write to a provided value).
public struct GATTServerWrite: Hashable, Sendable {
    public var handle: UInt16
    /// The attribute's type (the characteristic's or descriptor's UUID).
    public var uuid: BluetoothUUID
    public var value: [UInt8]
    public var kind: GATTWriteKind
    /// The connection it came from.
    public var connection: GATTConnectionID

    public init(handle: UInt16, uuid: BluetoothUUID, value: [UInt8], kind: GATTWriteKind, connection: GATTConnectionID) {
        self.handle = handle
        self.uuid = uuid
        self.value = value
        self.kind = kind
        self.connection = connection
    }
}

/// What happened on a ``GATTServer``, each naming its connection.
public enum GATTServerEvent: Hashable, Sendable {
    /// A bearer was added.
    case connected(GATTConnectionID)
    /// A bearer ended (its subscriptions are gone with it).
    case disconnected(GATTConnectionID, BearerError)
    /// Exchange MTU set the connection's ATT_MTU.
    case mtuChanged(GATTConnectionID, UInt16)
    /// A central wrote a value (fixed values are already stored).
    case wrote(GATTConnectionID, GATTServerWrite)
    /// A central enabled notifications and/or indications of the characteristic at `valueHandle`.
    case subscribed(GATTConnectionID, valueHandle: UInt16, ClientCharacteristicConfiguration)
    /// A central disabled both.
    case unsubscribed(GATTConnectionID, valueHandle: UInt16)
    /// A PDU was ignored (for a log line).
    case dropped(GATTConnectionID, ATTServerDropReason)
}

/// Why a server operation on a connection failed.
public enum GATTServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No such connection (never added, or already ended).
    case unknownConnection(GATTConnectionID)
    /// The central has not enabled notifications (or indications) on the characteristic.
    case notSubscribed
    /// The indication could not start (queue full, or an earlier one timed out).
    case indicationRefused(ATTIndicationRefusal)
    /// The indication was sent and not confirmed (timed out, database changed).
    case indicationFailed(ATTIndicationFailure)
    /// The bearer refused the PDU.
    case send(BearerError)
    /// The connection ended before the indication was confirmed.
    case disconnected(BearerError)
    /// The waiting task was cancelled (the indication may still be confirmed later).
    case cancelled

    public var description: String {
        switch self {
        case .unknownConnection(let id): "no \(id)"
        case .notSubscribed: "the central has not subscribed"
        case .indicationRefused(let refusal): "indication refused: \(refusal)"
        case .indicationFailed(let failure): "indication failed: \(failure)"
        case .send(let error): "send failed: \(error)"
        case .disconnected(let error): "disconnected before confirmation: \(error)"
        case .cancelled: "cancelled"
        }
    }
}

/// A GATT server over any number of ATT bearers (one per connected central).
///
/// ```swift
/// let database = try GATTServerDatabase(deviceName: "strap", appearance: .heartRateBelt, services: [
///     .primary(BluetoothUUID(0x180D), characteristics: [
///         GATTCharacteristicDefinition(BluetoothUUID(0x2A37), properties: [.notify]),
///         GATTCharacteristicDefinition(BluetoothUUID(0x2A38), properties: [.read], value: .fixed([0x01])),
///         GATTCharacteristicDefinition(BluetoothUUID(0x2A39), properties: [.write], value: .provided),
///     ]),
/// ])
/// let measurement = database.valueHandle(of: BluetoothUUID(0x2A37))!
/// let server = GATTServer(database: database) { read in
///     .error(.readNotPermitted)                                     // nothing provided to read here
/// } writeHandler: { write in
///     write.value == [0x01] ? .accept : .reject(ATTErrorCode(0x80))  // the control point
/// }
/// Task { for await event in server.events { print(event) } }      // subscribed, wrote, …
/// Task { await server.serve(bearer) }            // per central; returns when it disconnects
/// let unreached = await server.notify([0x00, 72], for: measurement)  // to every subscriber
/// ```
///
/// Bounded: each connection handles one PDU at a time, in order (requests a client sends
/// without waiting for the answers wait in the bearer's own bounded inbox and are answered in
/// turn), a value provider gets ``Configuration/providerTimeout`` to answer, prepared writes
/// and queued indications are capped (`ATTServer.Configuration`), and events beyond
/// ``Configuration/eventBufferLimit`` not yet read are dropped (newest first).
public actor GATTServer {
    public struct Configuration: Sendable {
        /// The per-connection core's limits and receive MTU (capped by each bearer's maximum PDU length).
        public var att = ATTServer.Configuration()
        /// How long an indication waits for its confirmation.
        public var indicationTimeout: Duration = ATTServer.indicationTimeout
        /// Events kept for a reader that is behind.
        public var eventBufferLimit = 4096
        /// How long the value provider has to answer a read; after it the read is answered with
        /// Unlikely Error (the client's own transaction timeout is 30 s).
        public var providerTimeout: Duration = .seconds(10)
        /// The clock the indication and provider timeouts run on: the real continuous clock by
        /// default; a test gives a virtual one (RawbleTestSupport's `ManualClock`) and moves its
        /// time, so a timeout fires when the test says, not after a real wait.
        public var clock: any Clock<Duration> = ContinuousClock()
        public init() {}
    }

    /// The embedder's answer to a read of a provided value.
    public typealias ValueProvider = @Sendable (GATTServerRead) async -> GATTValueResult
    /// The embedder's verdict on a Write Request (or a committed prepared write) to a provided
    /// value, before the client is answered. Write Commands are not asked about (they get no
    /// answer): they are only reported.
    public typealias WriteHandler = @Sendable (GATTServerWrite) async -> GATTWriteVerdict

    /// Everything centrals do, in order per connection (one reader).
    public nonisolated let events: AsyncStream<GATTServerEvent>
    /// The database every connection sees.
    public private(set) var database: GATTServerDatabase

    private let configuration: Configuration
    private let provider: ValueProvider
    private let writeHandler: WriteHandler
    private let eventSink: AsyncStream<GATTServerEvent>.Continuation
    private var connections: [GATTConnectionID: Connection] = [:]
    private var nextConnection = 1

    private struct Connection {
        var core: ATTServer
        let bearer: any ATTBearer
        /// `indicate` callers waiting for their confirmation.
        var waiters: [ATTIndicationID: CheckedContinuation<Void, any Error>] = [:]
        /// Outcomes that arrived before their caller began to wait.
        var outcomes: [ATTIndicationID: GATTServerError?] = [:]
        /// Indications nobody waits for (Service Changed).
        var unawaited: Set<ATTIndicationID> = []
        var timers: [ATTIndicationID: Task<Void, Never>] = [:]
        /// A `serve` call reads its bearer.
        var isServed = false
    }

    /// A server for `database`; `valueProvider` answers reads of `GATTServerValue.provided`
    /// values (the default answers Unlikely Error), `writeHandler` accepts or refuses writes to
    /// them (the default accepts; accepted writes are also reported as events).
    public init(database: GATTServerDatabase, configuration: Configuration = Configuration(),
                valueProvider: @escaping ValueProvider = { _ in .error(.unlikelyError) },
                writeHandler: @escaping WriteHandler = { _ in .accept }) {
        self.database = database
        self.configuration = configuration
        self.provider = valueProvider
        self.writeHandler = writeHandler
        (events, eventSink) = AsyncStream.makeStream(of: GATTServerEvent.self,
                                                     bufferingPolicy: .bufferingOldest(configuration.eventBufferLimit))
    }

    // MARK: Connections

    /// Adds a central's bearer; ``serve(_:)-(GATTConnectionID)`` runs it.
    public func connect(_ bearer: some ATTBearer) -> GATTConnectionID {
        let id = GATTConnectionID(rawValue: nextConnection)
        nextConnection += 1
        var att = configuration.att
        att.receiveMTU = UInt16(clamping: min(Int(att.receiveMTU), bearer.maximumPDULength))
        connections[id] = Connection(core: ATTServer(configuration: att), bearer: bearer)
        eventSink.yield(.connected(id))
        return id
    }

    /// Adds `bearer` and serves it until it ends; returns why it ended.
    @discardableResult
    public func serve(_ bearer: some ATTBearer) async -> BearerError {
        await serve(connect(bearer))
    }

    /// Serves a connection added with ``connect(_:)`` until its bearer ends, or the calling
    /// task is cancelled (the bearer is then closed); returns why it ended. Every `indicate`
    /// waiting on it then fails. A connection is served once: another call returns `.closed`
    /// at once.
    @discardableResult
    public func serve(_ id: GATTConnectionID) async -> BearerError {
        guard let bearer = connections[id]?.bearer, connections[id]?.isServed == false else { return .closed }
        connections[id]?.isServed = true
        var reason = BearerError.closed
        do {
            for try await pdu in bearer.pdus {
                await handle(pdu, on: id)
            }
        } catch let error as BearerError {
            reason = error
        } catch {
            reason = .transport("\(error)")
        }
        end(id, reason)
        // Cancelled: nobody reads the bearer any more, so the link is let go.
        if Task.isCancelled { await bearer.close() }
        return reason
    }

    /// The connections being served.
    public var connectionIDs: [GATTConnectionID] { connections.keys.sorted() }

    /// A connection's ATT_MTU, or `nil` when there is no such connection.
    public func mtu(of id: GATTConnectionID) -> UInt16? { connections[id]?.core.mtu }

    /// The connections whose CCCD of the characteristic at `valueHandle` has any of `bits`.
    public func subscribers(of valueHandle: UInt16, for bits: ClientCharacteristicConfiguration = [.notify, .indicate]) -> [GATTConnectionID] {
        connections.filter { !$0.value.core.configuration(ofValueAt: valueHandle).isDisjoint(with: bits) }.keys.sorted()
    }

    /// Sets how secure a connection's link is (reads and writes are checked against it), for a
    /// bearer that cannot tell (`ATTBearer.linkSecurity()` is `nil`); a bearer's own report,
    /// read before each request, wins. `keySize`: the encryption key's size in octets, when
    /// known (checked against `ATTServer.Configuration.requiredEncryptionKeySize`).
    public func setSecurity(_ security: GATTLinkSecurity, keySize: UInt8? = nil, for id: GATTConnectionID) {
        connections[id]?.core.security = security
        connections[id]?.core.encryptionKeySize = keySize
    }

    private func handle(_ pdu: [UInt8], on id: GATTConnectionID) async {
        guard var core = connections[id]?.core else { return }
        // The link may have been encrypted since the last request (the central paired after an
        // Insufficient Encryption answer): ask the bearer, which knows.
        if let security = connections[id]?.bearer.linkSecurity() { core.security = security }
        if let bearer = connections[id]?.bearer { core.encryptionKeySize = bearer.encryptionKeySize() ?? core.encryptionKeySize }
        var output = core.receive(pdu, database: &database)
        connections[id]?.core = core
        await process(output, on: id)
        while !output.valuesNeeded.isEmpty || !output.approvalsNeeded.isEmpty {
            var values: [UInt16: GATTValueResult] = [:]
            for handle in output.valuesNeeded {
                let uuid = database.attribute(at: handle)?.type ?? BluetoothUUID(0)
                values[handle] = await Self.ask(provider, GATTServerRead(connection: id, handle: handle, uuid: uuid),
                                                within: configuration.providerTimeout, on: configuration.clock,
                                                otherwise: .error(.unlikelyError))
            }
            var verdicts: [UInt16: GATTWriteVerdict] = [:]
            for write in output.approvalsNeeded {
                let uuid = database.attribute(at: write.handle)?.type ?? BluetoothUUID(0)
                let question = GATTServerWrite(handle: write.handle, uuid: uuid, value: write.value, kind: write.kind, connection: id)
                verdicts[write.handle] = await Self.ask(writeHandler, question, within: configuration.providerTimeout,
                                                        on: configuration.clock, otherwise: .reject(.unlikelyError))
            }
            guard var resumed = connections[id]?.core else { return }
            output = output.valuesNeeded.isEmpty ? resumed.approve(verdicts, database: &database)
                                                 : resumed.supply(values, database: &database)
            connections[id]?.core = resumed
            await process(output, on: id)
        }
    }

    /// The provider's answer, or Unlikely Error when it takes longer than `timeout` on `clock`
    /// (it is then cancelled and its late answer dropped).
    private static func ask<Question: Sendable, Answer: Sendable>(
        _ provider: @escaping @Sendable (Question) async -> Answer, _ question: Question,
        within timeout: Duration, on clock: any Clock<Duration>, otherwise late: Answer
    ) async -> Answer {
        let race = ProviderRace<Answer>()
        return await withCheckedContinuation { (answer: CheckedContinuation<Answer, Never>) in
            race.start(answer)
            let work = Task { race.finish(await provider(question)) }
            let deadline = Task {
                do { try await clock.sleep(for: timeout) } catch { return }
                race.finish(late)
            }
            race.own(work, deadline)
        }
    }

    /// Reports a core's events, runs its indication bookkeeping, then sends its PDUs.
    private func process(_ output: ATTServerOutput, on id: GATTConnectionID) async {
        for event in output.events {
            switch event {
            case .mtuChanged(let mtu):
                eventSink.yield(.mtuChanged(id, mtu))
            case let .wrote(handle, value, kind):
                let uuid = database.attribute(at: handle)?.type ?? BluetoothUUID(0)
                eventSink.yield(.wrote(id, GATTServerWrite(handle: handle, uuid: uuid, value: value, kind: kind, connection: id)))
            case let .configurationChanged(valueHandle, bits):
                eventSink.yield(bits.isEmpty ? .unsubscribed(id, valueHandle: valueHandle)
                                             : .subscribed(id, valueHandle: valueHandle, bits))
            case .indicationSent(let indication, _):
                startTimer(indication, on: id)
            case .indicationConfirmed(let indication, _):
                finish(indication, on: id, nil)
            case let .indicationFailed(indication, _, failure):
                finish(indication, on: id, .indicationFailed(failure))
            case .dropped(let reason):
                eventSink.yield(.dropped(id, reason))
            }
        }
        guard let bearer = connections[id]?.bearer else { return }
        for pdu in output.pdus {
            do {
                try await bearer.send(pdu)
            } catch {
                // A bearer that refuses a PDU is usually ending (its serve loop reports that);
                // an indication it did not take fails now rather than at the timeout.
                let sent = output.events.lazy.compactMap { if case .indicationSent(let sent, _) = $0 { sent } else { nil } }.first
                if pdu.first == ATTOpcode.handleValueIndication.rawValue, let sent, var core = connections[id]?.core {
                    let failed = core.indicationNotSent(sent)
                    connections[id]?.core = core
                    await process(failed, on: id)
                }
                return
            }
        }
    }

    deinit {
        eventSink.finish()
    }

    private func startTimer(_ indication: ATTIndicationID, on id: GATTConnectionID) {
        let timeout = configuration.indicationTimeout
        let clock = configuration.clock
        connections[id]?.timers[indication] = Task { [weak self] in
            do { try await clock.sleep(for: timeout) } catch { return }
            await self?.indicationTimerFired(indication, on: id)
        }
    }

    private func indicationTimerFired(_ indication: ATTIndicationID, on id: GATTConnectionID) async {
        guard var core = connections[id]?.core else { return }
        let output = core.indicationTimedOut(indication)
        connections[id]?.core = core
        await process(output, on: id)
    }

    /// Ends an indication: resumes its waiter, or keeps the outcome for a caller not yet waiting.
    private func finish(_ indication: ATTIndicationID, on id: GATTConnectionID, _ error: GATTServerError?) {
        guard connections[id] != nil else { return }
        connections[id]?.timers.removeValue(forKey: indication)?.cancel()
        if connections[id]?.unawaited.remove(indication) != nil { return }
        if let waiter = connections[id]?.waiters.removeValue(forKey: indication) {
            if let error { waiter.resume(throwing: error) } else { waiter.resume() }
        } else {
            connections[id]?.outcomes[indication] = .some(error)
        }
    }

    private func end(_ id: GATTConnectionID, _ reason: BearerError) {
        guard let connection = connections.removeValue(forKey: id) else { return }
        for timer in connection.timers.values { timer.cancel() }
        for waiter in connection.waiters.values { waiter.resume(throwing: GATTServerError.disconnected(reason)) }
        eventSink.yield(.disconnected(id, reason))
    }

    // MARK: Pushing values

    /// Sends `value` as a notification of the characteristic at `valueHandle` to `connection`,
    /// or to every connection that enabled notifications (`nil`). Returns the connections it
    /// could not be sent to, and why (a named connection that has not subscribed is one).
    @discardableResult
    public func notify(_ value: [UInt8], for valueHandle: UInt16, to connection: GATTConnectionID? = nil) async
        -> [GATTConnectionID: GATTServerError] {
        var failures: [GATTConnectionID: GATTServerError] = [:]
        var targets: [(GATTConnectionID, any ATTBearer, [UInt8])] = []
        if let connection {
            guard let entry = connections[connection] else { return [connection: .unknownConnection(connection)] }
            guard let pdu = entry.core.notification(value, handle: valueHandle) else { return [connection: .notSubscribed] }
            targets.append((connection, entry.bearer, pdu))
        } else {
            for (id, entry) in connections.sorted(by: { $0.key < $1.key }) {
                if let pdu = entry.core.notification(value, handle: valueHandle) { targets.append((id, entry.bearer, pdu)) }
            }
        }
        for (id, bearer, pdu) in targets {
            do { try await bearer.send(pdu) } catch { failures[id] = .send(error) }
        }
        return failures
    }

    /// Sends `value` as an indication of the characteristic at `valueHandle` to `connection`
    /// (after any indication already in flight there) and returns once the central confirms.
    /// Throws when it has not subscribed, on the timeout, when the connection ends first, or
    /// when the calling task is cancelled (nothing is left waiting in each case).
    public func indicate(_ value: [UInt8], for valueHandle: UInt16, to connection: GATTConnectionID) async throws(GATTServerError) {
        guard var core = connections[connection]?.core else { throw .unknownConnection(connection) }
        let started: (id: ATTIndicationID, output: ATTServerOutput)
        do {
            started = try core.indicate(value, handle: valueHandle)
        } catch .notSubscribed {
            throw .notSubscribed
        } catch {
            throw .indicationRefused(error)
        }
        connections[connection]?.core = core
        await process(started.output, on: connection)
        let indication = started.id
        do {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<Void, any Error>) in
                    guard self.connections[connection] != nil else {
                        waiter.resume(throwing: GATTServerError.disconnected(.closed))
                        return
                    }
                    if let outcome = self.connections[connection]?.outcomes.removeValue(forKey: indication) {
                        if let error = outcome { waiter.resume(throwing: error) } else { waiter.resume() }
                        return
                    }
                    if Task.isCancelled {
                        waiter.resume(throwing: GATTServerError.cancelled)
                        return
                    }
                    self.connections[connection]?.waiters[indication] = waiter
                }
            } onCancel: {
                Task { await self.cancelWait(indication, on: connection) }
            }
        } catch let error as GATTServerError {
            throw error
        } catch {
            throw .cancelled
        }
    }

    /// Indicates `value` to every connection that enabled indications of the characteristic
    /// at `valueHandle`, all at once, and returns when each has confirmed or failed: the
    /// connections that did not confirm, and why.
    @discardableResult
    public func indicate(_ value: [UInt8], for valueHandle: UInt16) async -> [GATTConnectionID: GATTServerError] {
        let targets = subscribers(of: valueHandle, for: .indicate)
        return await withTaskGroup(of: (GATTConnectionID, GATTServerError?).self) { group in
            for id in targets {
                group.addTask {
                    do throws(GATTServerError) { try await self.indicate(value, for: valueHandle, to: id) } catch { return (id, error) }
                    return (id, nil)
                }
            }
            var failures: [GATTConnectionID: GATTServerError] = [:]
            for await (id, error) in group {
                if let error { failures[id] = error }
            }
            return failures
        }
    }

    private func cancelWait(_ indication: ATTIndicationID, on id: GATTConnectionID) {
        guard let waiter = connections[id]?.waiters.removeValue(forKey: indication) else { return }
        // Its outcome, when it comes, is nobody's.
        connections[id]?.unawaited.insert(indication)
        waiter.resume(throwing: GATTServerError.cancelled)
    }

    // MARK: The database

    /// Replaces the fixed value at `handle` for every connection (e.g. before notifying it, so
    /// reads see it too). Returns `false` when the attribute holds no fixed value or `value`
    /// is too long.
    @discardableResult
    public func setValue(_ value: [UInt8], at handle: UInt16) -> Bool {
        database.setValue(value, at: handle)
    }

    /// Replaces the database. When its structure changed, each connection forgets its
    /// subscriptions in the changed range and every central that enabled Service Changed
    /// indications is sent one naming that range (not awaited).
    public func updateDatabase(_ newDatabase: GATTServerDatabase) async {
        let old = database
        database = newDatabase
        guard let changed = newDatabase.changedHandles(since: old) else { return }
        let value = ServiceChanged(startHandle: changed.lowerBound, endHandle: changed.upperBound).encoded
        for id in connections.keys.sorted() {
            guard var core = connections[id]?.core else { continue }
            var output = core.databaseChanged(changed)
            if let started = try? core.indicate(value, handle: GATTServerDatabase.serviceChangedHandle) {
                connections[id]?.unawaited.insert(started.id)
                output.pdus += started.output.pdus
                output.events += started.output.events
            }
            connections[id]?.core = core
            await process(output, on: id)
        }
    }
}
