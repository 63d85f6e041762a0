import Logging
import RawbleBearer
import RawbleGATTCore
import RawbleWire

/// A GATT client on one ATT bearer: discovery (cached, invalidated by Service Changed), reads,
/// writes and subscriptions, on top of ``ATTClient`` and the sans-I/O procedures.
///
/// Works unchanged over the stack's own L2CAP (`Connection.att`) or any other `ATTBearer`.
/// Every call is bounded by the ATT transaction timeout; errors are `GATTError`.
public actor GATTClient {
    /// The ATT client underneath (MTU, raw requests, value updates).
    public nonisolated let att: ATTClient
    /// Ranges of handles the server said changed (Service Changed indications), after the
    /// cached discovery results overlapping them were dropped. Rediscover to see the new ones.
    public nonisolated let serviceChanges: AsyncStream<ClosedRange<UInt16>>
    private let serviceChangesInput: AsyncStream<ClosedRange<UInt16>>.Continuation
    private let logger: Logger

    /// The handles a cached discovery walked (a service's, or a characteristic's value to its
    /// end): a later call over other handles (the same start, another end) is not served
    /// from it.
    private struct Span: Hashable, Sendable {
        var start: UInt16
        var end: UInt16
    }

    private var cachedServices: [GATTService]?
    private var cachedIncludes: [Span: [GATTIncludedService]] = [:]
    private var cachedCharacteristics: [Span: [GATTCharacteristic]] = [:]
    private var cachedDescriptors: [Span: [GATTDescriptor]] = [:]
    /// Bumped by every invalidation (Service Changed, Database Out Of Sync, ``invalidate()``).
    /// A discovery caches its result only when no invalidation happened while it awaited the
    /// server; otherwise the result may describe the database before the change.
    private var cacheGeneration: UInt64 = 0
    private var watchingServiceChanges = false
    /// How often ``discoverAll(refresh:)`` starts over when the database changes under it.
    private static let maximumDiscoveryAttempts = 3

    /// A client on `att`.
    public init(att: ATTClient, logger: Logger = Logger(label: "rawble.gatt")) {
        self.att = att
        self.logger = logger
        (serviceChanges, serviceChangesInput) = AsyncStream.makeStream(of: ClosedRange<UInt16>.self, bufferingPolicy: .bufferingNewest(64))
    }

    /// A client on `bearer`, with its own ``ATTClient``.
    public init(bearer: some ATTBearer, configuration: ATTClient.Configuration = ATTClient.Configuration()) {
        self.init(att: ATTClient(bearer: bearer, configuration: configuration))
    }

    /// Exchanges the MTU (once per bearer) and returns it.
    @discardableResult
    public func exchangeMTU() async throws(GATTError) -> UInt16 {
        try await att.exchangeMTU()
    }

    /// The ATT MTU in use.
    public var mtu: UInt16 {
        get async { await att.mtu }
    }

    /// Ends the client: closes the bearer; everything pending fails.
    public func close() async {
        serviceChangesInput.finish()
        await att.close()
    }

    // MARK: Discovery
    //
    // Every discovery below caches its result only if the cache was not invalidated while it
    // awaited the server (a Service Changed handled meanwhile). A result that raced a change is
    // still returned, as the server answered it, but not cached: the change was announced on
    // ``serviceChanges`` and the next call asks the server again. (Rediscovering at once could
    // loop as long as the server keeps changing; the caller watching the changes decides.)

    /// Every primary service (cached until Service Changed or `refresh`).
    public func services(refresh: Bool = false) async throws(GATTError) -> [GATTService] {
        if !refresh, let cachedServices { return cachedServices }
        let generation = cacheGeneration
        let services = try await run(DiscoverPrimaryServices())
        if generation == cacheGeneration { cachedServices = services }
        return services
    }

    /// The primary services with `uuid` (Find By Type Value: one round trip for a known service).
    public func services(withUUID uuid: BluetoothUUID) async throws(GATTError) -> [GATTService] {
        if let cachedServices { return cachedServices.filter { $0.uuid == uuid } }
        return try await run(DiscoverPrimaryServicesByUUID(uuid))
    }

    /// The services `service` includes.
    public func includedServices(of service: GATTService) async throws(GATTError) -> [GATTIncludedService] {
        let key = Span(start: service.startHandle, end: service.endHandle)
        if let cached = cachedIncludes[key] { return cached }
        let generation = cacheGeneration
        let included = try await run(FindIncludedServices(of: service))
        if generation == cacheGeneration { cachedIncludes[key] = included }
        return included
    }

    /// The characteristics of `service` (all, or those with `uuid`).
    public func characteristics(of service: GATTService, uuid: BluetoothUUID? = nil) async throws(GATTError) -> [GATTCharacteristic] {
        let key = Span(start: service.startHandle, end: service.endHandle)
        let all: [GATTCharacteristic]
        if let cached = cachedCharacteristics[key] {
            all = cached
        } else {
            let generation = cacheGeneration
            all = try await run(DiscoverCharacteristics(of: service))
            if generation == cacheGeneration { cachedCharacteristics[key] = all }
        }
        guard let uuid else { return all }
        return all.filter { $0.uuid == uuid }
    }

    /// The descriptors of `characteristic`.
    public func descriptors(of characteristic: GATTCharacteristic) async throws(GATTError) -> [GATTDescriptor] {
        let key = Span(start: characteristic.valueHandle, end: characteristic.endHandle)
        if let cached = cachedDescriptors[key] { return cached }
        let generation = cacheGeneration
        let descriptors = try await run(DiscoverDescriptors(of: characteristic))
        if generation == cacheGeneration { cachedDescriptors[key] = descriptors }
        return descriptors
    }

    /// The whole database: every primary service, its included services, characteristics
    /// and descriptors. Starts watching Service Changed when the server has it.
    ///
    /// The database comes from one state of the server: when the cache is invalidated during
    /// the walk (a Service Changed), the walk starts over, at most three times in all; a server
    /// that keeps changing gets the last walk.
    public func discoverAll(refresh: Bool = false) async throws(GATTError) -> GATTDatabase {
        var database = GATTDatabase(services: [])
        var refresh = refresh
        for _ in 0..<Self.maximumDiscoveryAttempts {
            let generation = cacheGeneration
            database = try await walkDatabase(refresh: refresh)
            if generation == cacheGeneration { break }
            refresh = false // the invalidation dropped the cache already
        }
        try await watchServiceChanges(in: database)
        return database
    }

    /// One walk of the whole database, through the caches.
    private func walkDatabase(refresh: Bool) async throws(GATTError) -> GATTDatabase {
        var database = GATTDatabase(services: [])
        for service in try await services(refresh: refresh) {
            var entry = GATTDatabase.Service(service: service)
            entry.includedServices = try await includedServices(of: service)
            for characteristic in try await characteristics(of: service) {
                entry.characteristics.append(GATTDatabase.Characteristic(
                    characteristic: characteristic, descriptors: try await descriptors(of: characteristic)))
            }
            database.services.append(entry)
        }
        return database
    }

    /// Finds the characteristic with `uuid` (in service `service` when given), discovering
    /// only what it needs: the service by UUID when given, else every service.
    public func characteristic(_ uuid: BluetoothUUID, inService service: BluetoothUUID? = nil) async throws(GATTError) -> GATTCharacteristic? {
        let candidates = if let service { try await services(withUUID: service) } else { try await services() }
        for candidate in candidates {
            if let found = try await characteristics(of: candidate, uuid: uuid).first { return found }
        }
        return nil
    }

    // MARK: Values

    /// Reads a value whole (Read, then Read Blob while it continues; at most 512 bytes).
    public func read(_ characteristic: GATTCharacteristic) async throws(GATTError) -> [UInt8] {
        try await read(handle: characteristic.valueHandle)
    }

    /// Reads the value at `handle` whole.
    public func read(handle: UInt16) async throws(GATTError) -> [UInt8] {
        try await run(ReadLongValue(handle: handle, mtu: await att.mtu))
    }

    /// Reads every characteristic with `uuid` in `range` without discovering anything, e.g.
    /// `gatt.read(.batteryLevel)`: Read Using Characteristic UUID, that is Read By Type
    /// requests from the start of `range`, each after the last handle answered, until
    /// Attribute Not Found (none found: an empty list). A value the server cut to fit its
    /// response (ATT_MTU − 4 bytes or more) is read again whole at its handle.
    public func read(_ uuid: BluetoothUUID, in range: ClosedRange<UInt16> = 0x0001...0xFFFF) async throws(GATTError) -> [GATTHandleValue] {
        let mtu = Int(await att.mtu)
        var values = try await run(ReadUsingCharacteristicUUID(uuid, range: range))
        for index in values.indices where values[index].value.count >= mtu - 4 {
            values[index].value = try await read(handle: values[index].handle)
        }
        return values
    }

    /// Writes `value` to `handle`: a Write Request (a long write when it does not fit one),
    /// or, `withoutResponse`, a Write Command (which must fit one PDU).
    public func write(_ value: [UInt8], to handle: UInt16, withoutResponse: Bool = false) async throws(GATTError) {
        guard value.count <= 512 else { throw .valueTooLong(value.count) }
        let mtu = await att.mtu
        let fitsOnePDU = value.count <= Int(mtu) - 3
        if withoutResponse {
            // The ATT client refuses a command longer than the MTU (BearerError.pduTooLong).
            try await att.send(command: .writeCommand(handle: handle, value: value[...]))
        } else if fitsOnePDU {
            try await run(try WriteValue(handle: handle, value: value, mtu: mtu))
        } else {
            try await run(try LongWrite(handle: handle, value: value, mtu: mtu))
        }
    }

    /// Writes `value` to `characteristic`'s value.
    public func write(_ value: [UInt8], to characteristic: GATTCharacteristic, withoutResponse: Bool = false) async throws(GATTError) {
        try await write(value, to: characteristic.valueHandle, withoutResponse: withoutResponse)
    }

    // MARK: Subscriptions

    /// Subscribes to `characteristic`'s notifications (or indications): registers for its
    /// values first, then writes its CCCD, so no value sent right after the write is lost.
    /// - Throws: `GATTError.notFound(_:)` when it has no CCCD or does not notify/indicate.
    public func subscribe(to characteristic: GATTCharacteristic, indications: Bool = false) async throws(GATTError) -> GATTSubscription {
        let cccd = try await configurationHandle(of: characteristic, indications: indications)
        let updates = await att.updates(for: characteristic.valueHandle)
        let configuration: ClientCharacteristicConfiguration = indications ? .indicate : .notify
        try await run(WriteCCCD(handle: cccd, value: configuration))
        return GATTSubscription(characteristic: characteristic, configurationHandle: cccd, updates: updates, client: self)
    }

    /// Subscribes like ``subscribe(to:indications:)``, but hands each value to `onUpdate` where
    /// it is received, with no sequence in between (see
    /// ``ATTClient/addUpdateHandler(for:onUpdate:onEnd:)`` for what `onUpdate` may do): for a
    /// profile that turns values into its own stream, so they reach its consumer in one step.
    public func subscribe(
        to characteristic: GATTCharacteristic, indications: Bool = false,
        onUpdate: @escaping @Sendable (ATTValueUpdate) -> Bool,
        onEnd: @escaping @Sendable (GATTError) -> Void
    ) async throws(GATTError) -> GATTUpdateHandler {
        let cccd = try await configurationHandle(of: characteristic, indications: indications)
        let registration = await att.addUpdateHandler(for: characteristic.valueHandle, onUpdate: onUpdate, onEnd: onEnd)
        let configuration: ClientCharacteristicConfiguration = indications ? .indicate : .notify
        do {
            try await run(WriteCCCD(handle: cccd, value: configuration))
        } catch {
            await att.removeUpdateHandler(registration)
            throw error
        }
        return GATTUpdateHandler(characteristic: characteristic, configurationHandle: cccd, registration: registration, client: self)
    }

    /// The CCCD of a characteristic that can notify (or indicate).
    private func configurationHandle(of characteristic: GATTCharacteristic, indications: Bool) async throws(GATTError) -> UInt16 {
        let wanted: CharacteristicProperties = indications ? .indicate : .notify
        guard characteristic.properties.contains(wanted) else {
            throw .notFound("\(characteristic.uuid) does not \(indications ? "indicate" : "notify")")
        }
        guard let cccd = try await descriptors(of: characteristic).first(where: { $0.uuid == .clientCharacteristicConfiguration }) else {
            throw .notFound("\(characteristic.uuid) has no Client Characteristic Configuration descriptor")
        }
        return cccd.handle
    }

    /// Writes 0 to a subscription's CCCD (the server stops sending).
    public func unsubscribe(_ subscription: GATTSubscription) async throws(GATTError) {
        try await run(WriteCCCD(handle: subscription.configurationHandle, value: []))
    }

    /// Stops a handler subscription's calls, then writes 0 to its CCCD (the server stops sending).
    public func unsubscribe(_ subscription: GATTUpdateHandler) async throws(GATTError) {
        await att.removeUpdateHandler(subscription.registration)
        try await run(WriteCCCD(handle: subscription.configurationHandle, value: []))
    }

    // MARK: Service Changed

    /// Subscribes to Service Changed indications once, when the database has the characteristic.
    private func watchServiceChanges(in database: GATTDatabase) async throws(GATTError) {
        guard !watchingServiceChanges,
              let entry = database.characteristic(.serviceChanged, inService: BluetoothUUID(0x1801)),
              entry.characteristic.properties.contains(.indicate),
              entry.configurationDescriptor != nil else { return }
        watchingServiceChanges = true
        let subscription = try await subscribe(to: entry.characteristic, indications: true)
        Task { [weak self] in
            do {
                for try await update in subscription {
                    guard let self else { return }
                    await self.serviceChanged(update.value)
                }
            } catch {
                // The bearer ended: nothing more will change.
            }
        }
    }

    private func serviceChanged(_ value: ArraySlice<UInt8>) {
        guard let changed = try? ServiceChanged.decode(value), let range = changed.handles else {
            logger.warning("ignored a malformed Service Changed value: \(Array(value))")
            return
        }
        invalidate()
        logger.debug("the server changed handles \(range.lowerBound)–\(range.upperBound): cached discovery dropped")
        serviceChangesInput.yield(range)
    }

    /// Drops every cached discovery result and starts a new cache generation, so a discovery
    /// still awaiting the server does not cache what it learnt before. A change anywhere can
    /// move services, includes and characteristics next to it, so the whole cache goes rather
    /// than an overlap computed from partial knowledge of service ends.
    public func invalidate() {
        cacheGeneration &+= 1
        cachedServices = nil
        cachedIncludes.removeAll()
        cachedCharacteristics.removeAll()
        cachedDescriptors.removeAll()
    }

    private func run<P: GATTProcedure>(_ procedure: P) async throws(GATTError) -> P.Output {
        do {
            return try await att.run(procedure)
        } catch {
            if case .att(let attError) = error, attError.code == .databaseOutOfSync { invalidate() }
            throw error
        }
    }
}

/// The values of one subscribed characteristic, as an `AsyncSequence`. Leaving the loop stops
/// delivery here; ``GATTClient/unsubscribe(_:)-(GATTSubscription)`` tells the server to stop sending.
public struct GATTSubscription: AsyncSequence, Sendable {
    public typealias Element = ATTValueUpdate
    public typealias Failure = any Error

    public let characteristic: GATTCharacteristic
    /// The CCCD written to subscribe.
    public let configurationHandle: UInt16
    let updates: AsyncThrowingStream<ATTValueUpdate, any Error>
    let client: GATTClient

    public func makeAsyncIterator() -> AsyncThrowingStream<ATTValueUpdate, any Error>.AsyncIterator {
        updates.makeAsyncIterator()
    }

    /// Unsubscribes (writes 0 to the CCCD).
    public func cancel() async throws(GATTError) {
        try await client.unsubscribe(self)
    }
}

/// A subscription whose values go to a handler (``GATTClient/subscribe(to:indications:onUpdate:onEnd:)``).
public struct GATTUpdateHandler: Sendable {
    public let characteristic: GATTCharacteristic
    /// The CCCD written to subscribe.
    public let configurationHandle: UInt16
    let registration: ATTUpdateHandlerID
    let client: GATTClient

    /// Stops the handler's calls here; the server keeps sending until ``cancel()``.
    public func stop() async {
        await client.att.removeUpdateHandler(registration)
    }

    /// Stops the handler's calls and unsubscribes (writes 0 to the CCCD).
    public func cancel() async throws(GATTError) {
        try await client.unsubscribe(self)
    }
}
