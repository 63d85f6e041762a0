// The GATT server end to end: rawble's own GATTClient (or a raw peer) against GATTServer over an
// in-memory pair of bearers. Every wait is bounded (`within`); none sleeps.
import RawbleBearer
import RawbleGATT
import RawbleGATTCore
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

/// Collects a server's events; waits (bounded by the caller) for one that matches.
actor EventRecorder {
    private(set) var events: [GATTServerEvent] = []
    private var waiters: [(matches: @Sendable (GATTServerEvent) -> Bool, waiter: CheckedContinuation<GATTServerEvent, Never>)] = []

    static func recording(_ server: GATTServer) -> EventRecorder {
        let recorder = EventRecorder()
        Task { for await event in server.events { await recorder.add(event) } }
        return recorder
    }

    private func add(_ event: GATTServerEvent) {
        events.append(event)
        waiters.removeAll { entry in
            guard entry.matches(event) else { return false }
            entry.waiter.resume(returning: event)
            return true
        }
    }

    /// The first event (already seen or still to come) that `matches`.
    func first(where matches: @escaping @Sendable (GATTServerEvent) -> Bool) async -> GATTServerEvent {
        if let seen = events.first(where: matches) { return seen }
        return await withCheckedContinuation { waiters.append((matches, $0)) }
    }
}

/// What a raw central receives, in order; `next()` waits (bounded by the caller) for the next PDU.
actor RawInbox {
    private var received: [[UInt8]] = []
    private var waiter: CheckedContinuation<[UInt8]?, Never>?
    private var ended = false

    static func reading(_ bearer: PipeBearer) -> RawInbox {
        let inbox = RawInbox()
        Task {
            do { for try await pdu in bearer.pdus { await inbox.add(pdu) } } catch {}
            await inbox.end()
        }
        return inbox
    }

    private func add(_ pdu: [UInt8]) {
        if let waiter {
            self.waiter = nil
            waiter.resume(returning: pdu)
        } else {
            received.append(pdu)
        }
    }

    private func end() {
        ended = true
        waiter?.resume(returning: nil)
        waiter = nil
    }

    /// The next PDU as spaced hex ("" once the bearer ended).
    func next() async -> String {
        if !received.isEmpty { return hexString(received.removeFirst()) }
        if ended { return "" }
        return await withCheckedContinuation { waiter = $0 }.map(hexString) ?? ""
    }
}

/// A bearer whose sends always fail, with a receive side the test drives.
final class RefusingBearer: ATTBearer {
    let pdus: AsyncThrowingStream<[UInt8], any Error>
    let input: AsyncThrowingStream<[UInt8], any Error>.Continuation
    let maximumPDULength = 517
    init() { (pdus, input) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self) }
    func send(_ pdu: [UInt8]) async throws(BearerError) { throw .timedOut(operation: "send") }
    func close() async { input.finish(throwing: BearerError.closed) }
}

/// A server on the sample database with one central connected.
struct ServedLink {
    let server: GATTServer
    let events: EventRecorder
    let central: PipeBearer
    let connection: GATTConnectionID
    let serving: Task<BearerError, Never>

    init(configuration: GATTServer.Configuration = GATTServer.Configuration(),
         provider: @escaping GATTServer.ValueProvider = { _ in .value([0x00, 0x48]) }) async throws {
        server = GATTServer(database: try sampleDatabase(), configuration: configuration, valueProvider: provider)
        events = EventRecorder.recording(server)
        let (central, peripheral) = PipeBearer.pair()
        self.central = central
        let connection = await server.connect(peripheral)
        self.connection = connection
        let server = self.server
        serving = Task { await server.serve(connection) }
    }

    /// A raw request from the central; returns the next PDU it receives (bounded).
    func rawRequest(_ hex: String, inbox: RawInbox) async throws -> String {
        try await central.send(bytes(hex))
        return try await within(seconds: 60) { await inbox.next() }
    }
}

@Suite("Server end to end: rawble's GATT client against the GATT server")
struct ServerEndToEndTests {
    @Test("discovery finds every primary service, the include, characteristics and descriptors")
    func discovery() async throws {
        let link = try await ServedLink()
        let client = GATTClient(bearer: link.central)
        let database = try await within(seconds: 60) { try await client.discoverAll() }
        #expect(database.services.map(\.service.uuid) == [BluetoothUUID(0x1800), BluetoothUUID(0x1801), BluetoothUUID(0x180D), customService])
        #expect(database.services.map(\.service.endHandle) == [5, 9, 18, 30])
        #expect(database.services[2].includedServices == [
            GATTIncludedService(declarationHandle: 11, startHandle: 19, endHandle: 24, uuid: BluetoothUUID(0x180F)),
        ])
        let measurement = try #require(database.characteristic(BluetoothUUID(0x2A37)))
        #expect(measurement.characteristic.valueHandle == 13)
        #expect(measurement.characteristic.properties == [.read, .notify])
        #expect(measurement.descriptors == [GATTDescriptor(uuid: .clientCharacteristicConfiguration, handle: 14)])
        let custom = try #require(database.characteristic(customCharacteristic))
        #expect(custom.characteristic.valueHandle == 27)
        #expect(custom.descriptors.map(\.handle) == [28])
        #expect(database.characteristics.count == 8)
        // The client subscribed to Service Changed while discovering.
        let subscribed = try await within(seconds: 60) { () async throws -> GATTServerEvent in
            await link.events.first { if case .subscribed(_, 8, _) = $0 { true } else { false } }
        }
        #expect(subscribed == .subscribed(link.connection, valueHandle: 8, .indicate))
        await client.close()
        #expect(await link.serving.value == .disconnected(reason: "peer closed the bearer"))
    }

    @Test("reads: short, long (Read Blob), provided by the embedder, refused")
    func reads() async throws {
        let reads = Mutex<[GATTServerRead]>([])
        let link = try await ServedLink { read in
            reads.withLock { $0.append(read) }
            return .value(pattern(60))
        }
        let client = GATTClient(bearer: link.central)
        try await within(seconds: 60) { () async throws in
            #expect(try await client.read(handle: 3) == Array("rawble".utf8))
            #expect(try await client.read(handle: 27) == pattern(100))
            #expect(try await client.read(handle: 13) == pattern(60))
            await #expect(throws: GATTError.att(ATTError(code: .insufficientAuthentication, requestOpcode: .readRequest, handle: 30))) {
                try await client.read(handle: 30)
            }
            await #expect(throws: GATTError.att(ATTError(code: .readNotPermitted, requestOpcode: .readRequest, handle: 8))) {
                try await client.read(handle: 8)
            }
        }
        // The long provided value was asked for on the Read and on each Read Blob.
        #expect(reads.withLock { $0 }.map(\.handle) == [13, 13, 13])
        #expect(reads.withLock { $0 }.first == GATTServerRead(connection: link.connection, handle: 13, uuid: BluetoothUUID(0x2A37)))
        await link.server.setSecurity(.authenticated, for: link.connection)
        #expect(try await within(seconds: 60) { try await client.read(handle: 30) } == [1, 2])
        await client.close()
    }

    @Test("a value provider that never answers: the read gets Unlikely Error after the provider timeout")
    func providerTimeout() async throws {
        var configuration = GATTServer.Configuration()
        configuration.providerTimeout = .milliseconds(100)
        let clock = ManualClock()
        configuration.clock = clock
        let link = try await ServedLink(configuration: configuration) { _ in
            try? await Task.sleep(for: .seconds(3600))   // answers only when cancelled
            return .value([1])
        }
        let client = GATTClient(bearer: link.central)
        let reading = Task { try await client.read(handle: 13) }
        // The provider was asked (its deadline armed): its 100 ms pass.
        try await clock.advanceOnceArmed(by: .milliseconds(100))
        try await within(seconds: 60) { () async throws in
            await #expect(throws: GATTError.att(ATTError(code: .unlikelyError, requestOpcode: .readRequest, handle: 13))) {
                try await reading.value
            }
            // The connection goes on.
            #expect(try await client.read(handle: 3) == Array("rawble".utf8))
        }
        await client.close()
    }

    @Test("a write handler refuses a control point value with the profile's error code and accepts the right one")
    func writeHandler() async throws {
        let server = GATTServer(database: try ServerWriteApprovalTests.controlPointDatabase()) { _ in .error(.readNotPermitted) } writeHandler: { write in
            write.value == [1] ? .accept : .reject(ATTErrorCode(0x80))
        }
        let events = EventRecorder.recording(server)
        let (central, peripheral) = PipeBearer.pair()
        let serving = Task { await server.serve(peripheral) }
        let client = GATTClient(bearer: central)
        try await within(seconds: 60) { () async throws in
            await #expect(throws: GATTError.att(ATTError(code: ATTErrorCode(0x80), requestOpcode: .writeRequest, handle: 12))) {
                try await client.write([2], to: 12)
            }
            try await client.write([1], to: 12)
            let wrote = await events.first { if case .wrote = $0 { true } else { false } }
            #expect(wrote == .wrote(GATTConnectionID(rawValue: 1), GATTServerWrite(
                handle: 12, uuid: BluetoothUUID(0x2A39), value: [1], kind: .request, connection: GATTConnectionID(rawValue: 1))))
        }
        await client.close()
        _ = try await within(seconds: 60) { await serving.value }
    }

    @Test("the GATTServer doc example runs as written: a strap with a control point, notified to its subscriber")
    func docExample() async throws {
        let (central, bearer) = PipeBearer.pair()
        // From GATTServer's doc comment:
        let database = try GATTServerDatabase(deviceName: "strap", appearance: .heartRateBelt, services: [
            .primary(BluetoothUUID(0x180D), characteristics: [
                GATTCharacteristicDefinition(BluetoothUUID(0x2A37), properties: [.notify]),
                GATTCharacteristicDefinition(BluetoothUUID(0x2A38), properties: [.read], value: .fixed([0x01])),
                GATTCharacteristicDefinition(BluetoothUUID(0x2A39), properties: [.write], value: .provided),
            ]),
        ])
        let measurement = try #require(database.valueHandle(of: BluetoothUUID(0x2A37)))
        let server = GATTServer(database: database) { _ in
            .error(.readNotPermitted)
        } writeHandler: { write in
            write.value == [0x01] ? .accept : .reject(ATTErrorCode(0x80))
        }
        let events = EventRecorder.recording(server)
        let serving = Task { await server.serve(bearer) }
        // A central subscribes; the strap's measurement reaches it.
        let client = GATTClient(bearer: central)
        try await within(seconds: 60) { () async throws in
            let found = try #require(try await client.characteristic(BluetoothUUID(0x2A37)))
            let subscription = try await client.subscribe(to: found)
            _ = await events.first { if case .subscribed = $0 { true } else { false } }
            let unreached = await server.notify([0x00, 72], for: measurement)
            #expect(unreached.isEmpty)
            var updates = subscription.makeAsyncIterator()
            #expect(try await updates.next()?.value == [0x00, 72])
            #expect(try await client.read(handle: measurement + 3) == [0x01])   // after the CCCD, the location
        }
        await client.close()
        _ = try await within(seconds: 60) { await serving.value }
    }

    @Test("writes: Write Request, Write Command, long write and reliable write are stored and reported")
    func writes() async throws {
        let link = try await ServedLink()
        let client = GATTClient(bearer: link.central)
        try await within(seconds: 60) { () async throws in
            try await client.write([1, 2, 3], to: 27)
            #expect(try await client.read(handle: 27) == [1, 2, 3])
            try await client.write(pattern(60), to: 27)
            #expect(try await client.read(handle: 27) == pattern(60))
            try await client.write([9], to: 27, withoutResponse: true)
            _ = try await client.att.run(ReliableWrite([GATTHandleValue(handle: 27, value: pattern(30, from: 7))], mtu: 23))
            #expect(try await client.read(handle: 27) == pattern(30, from: 7))
            await #expect(throws: GATTError.att(ATTError(code: .insufficientEncryption, requestOpcode: .writeRequest, handle: 18))) {
                try await client.write([1], to: 18)
            }
        }
        let writes = try await within(seconds: 60) { () async throws -> [GATTServerWrite] in
            _ = await link.events.first { if case .wrote(_, let write) = $0 { write.kind == .prepared && write.value.count == 30 } else { false } }
            return await link.events.events.compactMap { event -> GATTServerWrite? in
                if case .wrote(_, let write) = event { write } else { nil }
            }
        }
        #expect(writes.map(\.kind) == [.request, .prepared, .command, .prepared])
        #expect(writes.map(\.value) == [[1, 2, 3], pattern(60), [9], pattern(30, from: 7)])
        #expect(writes.allSatisfy { $0.handle == 27 && $0.uuid == customCharacteristic })
        await client.close()
    }

    @Test("subscribe, get notifications and confirmed indications, unsubscribe")
    func subscriptions() async throws {
        let link = try await ServedLink()
        let client = GATTClient(bearer: link.central)
        let server = link.server
        let connection = link.connection
        try await within(seconds: 60) { () async throws in
            let database = try await client.discoverAll()
            let custom = try #require(database.characteristic(customCharacteristic)).characteristic
            let notifications = try await client.subscribe(to: custom)
            _ = await link.events.first { $0 == .subscribed(connection, valueHandle: 27, .notify) }
            #expect(await server.subscribers(of: 27) == [connection])
            #expect(await server.notify([1, 2, 3], for: 27).isEmpty)
            #expect(await server.notify([4], for: 27, to: connection).isEmpty)
            var updates = notifications.makeAsyncIterator()
            #expect(try await updates.next() == ATTValueUpdate(handle: 27, value: [1, 2, 3], isIndication: false))
            #expect(try await updates.next() == ATTValueUpdate(handle: 27, value: [4], isIndication: false))

            // The battery level sits in the secondary service: its handles are known from the include.
            let battery = GATTCharacteristic(uuid: BluetoothUUID(0x2A19), declarationHandle: 20, valueHandle: 21,
                                             properties: [.read, .notify, .indicate], endHandle: 24)
            #expect(await server.notify([1], for: 21, to: connection) == [connection: .notSubscribed])
            await #expect(throws: GATTServerError.notSubscribed) { try await server.indicate([1], for: 21, to: connection) }
            let indications = try await client.subscribe(to: battery, indications: true)
            _ = await link.events.first { $0 == .subscribed(connection, valueHandle: 21, .indicate) }
            try await server.indicate([0x63], for: 21, to: connection)
            try await server.indicate([0x62], for: 21, to: connection)
            var values = indications.makeAsyncIterator()
            #expect(try await values.next() == ATTValueUpdate(handle: 21, value: [0x63], isIndication: true))
            #expect(try await values.next() == ATTValueUpdate(handle: 21, value: [0x62], isIndication: true))

            try await client.unsubscribe(notifications)
            _ = await link.events.first { $0 == .unsubscribed(connection, valueHandle: 27) }
            #expect(await server.subscribers(of: 27) == [])
            #expect(await server.notify([5], for: 27).isEmpty)
        }
        await client.close()
    }

    @Test("several centrals at once; a notification that cannot be sent is reported")
    func severalConnections() async throws {
        let link = try await ServedLink()
        let (secondCentral, secondPeripheral) = PipeBearer.pair()
        let second = await link.server.connect(secondPeripheral)
        let server = link.server
        let secondServing = Task { await server.serve(second) }
        let refusing = RefusingBearer()
        let third = await server.connect(refusing)
        let thirdServing = Task { await server.serve(third) }
        #expect(await server.connectionIDs == [link.connection, second, third])
        let first = GATTClient(bearer: link.central)
        let other = GATTClient(bearer: secondCentral)
        try await within(seconds: 60) { () async throws in
            let custom = GATTCharacteristic(uuid: customCharacteristic, declarationHandle: 26, valueHandle: 27,
                                            properties: [.read, .write, .notify], endHandle: 28)
            let a = try await first.subscribe(to: custom)
            let b = try await other.subscribe(to: custom)
            // The third central enables notifications; its answers cannot be sent.
            refusing.input.yield(bytes("12 1C 00 01 00"))
            _ = await link.events.first { $0 == .subscribed(third, valueHandle: 27, .notify) }
            #expect(await server.subscribers(of: 27) == [link.connection, second, third])
            let failures = await server.notify([7], for: 27)
            #expect(failures == [third: .send(.timedOut(operation: "send"))])
            var fromA = a.makeAsyncIterator()
            var fromB = b.makeAsyncIterator()
            #expect(try await fromA.next()?.value == [7])
            #expect(try await fromB.next()?.value == [7])
            // Indications to every subscriber: each confirms (the third never enabled them).
            let battery = GATTCharacteristic(uuid: BluetoothUUID(0x2A19), declarationHandle: 20, valueHandle: 21,
                                             properties: [.read, .notify, .indicate], endHandle: 24)
            let c = try await first.subscribe(to: battery, indications: true)
            let d = try await other.subscribe(to: battery, indications: true)
            #expect(await server.indicate([0x42], for: 21) == [:])
            var fromC = c.makeAsyncIterator()
            var fromD = d.makeAsyncIterator()
            #expect(try await fromC.next() == ATTValueUpdate(handle: 21, value: [0x42], isIndication: true))
            #expect(try await fromD.next() == ATTValueUpdate(handle: 21, value: [0x42], isIndication: true))
            refusing.input.yield(bytes("12 16 00 02 00"))
            _ = await link.events.first { $0 == .subscribed(third, valueHandle: 21, .indicate) }
            #expect(await server.indicate([0x43], for: 21) == [third: .indicationFailed(.notSent)])
            // A write on one connection is seen by reads on the other.
            try await first.write([0xEE], to: 27)
            #expect(try await other.read(handle: 27) == [0xEE])
        }
        await other.close()
        #expect(try await within(seconds: 60) { await secondServing.value } == .disconnected(reason: "peer closed the bearer"))
        #expect(await server.connectionIDs == [link.connection, third])
        await refusing.close()
        #expect(try await within(seconds: 60) { await thirdServing.value } == .closed)
        await first.close()
        #expect(try await within(seconds: 60) { await link.serving.value } == .disconnected(reason: "peer closed the bearer"))
        #expect(await server.connectionIDs == [])
    }

    @Test("an indication the bearer refuses fails at once (not at the 30 s timeout); the next queued one is tried")
    func indicationNotSent() async throws {
        let server = GATTServer(database: try sampleDatabase())
        let events = EventRecorder.recording(server)
        let refusing = RefusingBearer()
        let connection = await server.connect(refusing)
        let serving = Task { await server.serve(connection) }
        refusing.input.yield(bytes("12 16 00 02 00"))
        _ = try await within(seconds: 60) { await events.first { $0 == .subscribed(connection, valueHandle: 21, .indicate) } }
        let first = Task { try await server.indicate([1], for: 21, to: connection) }
        let second = Task { try await server.indicate([2], for: 21, to: connection) }
        for waiting in [first, second] {
            let result = try await within(seconds: 60) { await waiting.result }
            #expect(throws: GATTServerError.indicationFailed(.notSent)) { try result.get() }
        }
        // The bearer is still usable for ATT: nothing timed out.
        await #expect(throws: GATTServerError.indicationFailed(.notSent)) {
            try await within(seconds: 60) { try await server.indicate([3], for: 21, to: connection) }
        }
        await refusing.close()
        #expect(try await within(seconds: 60) { await serving.value } == .closed)
    }

    @Test("cancelling serve closes the bearer (the central sees the link go); a connection is served once")
    func cancelServe() async throws {
        let server = GATTServer(database: try sampleDatabase())
        let (central, peripheral) = PipeBearer.pair()
        let connection = await server.connect(peripheral)
        let serving = Task { await server.serve(connection) }
        let inbox = RawInbox.reading(central)
        try await central.send(bytes("0A 03 00"))
        #expect(try await within(seconds: 60) { await inbox.next() } == "0B 72 61 77 62 6C 65")
        #expect(await server.serve(connection) == .closed)
        serving.cancel()
        #expect(try await within(seconds: 60) { await serving.value } == .closed)
        // The central's side ends: nothing is left reading nor waiting.
        #expect(try await within(seconds: 60) { await inbox.next() } == "")
        #expect(await server.connectionIDs == [])
    }

    @Test("a central that disconnects mid-indication: the waiting indicate throws, nothing is left behind")
    func disconnectMidIndication() async throws {
        let link = try await ServedLink()
        let inbox = RawInbox.reading(link.central)
        let server = link.server
        let connection = link.connection
        #expect(try await link.rawRequest("12 16 00 02 00", inbox: inbox) == "13")
        let waiting = Task { try await server.indicate([1], for: 21, to: connection) }
        let sent = try await within(seconds: 60) { await inbox.next() }
        #expect(sent == "1D 15 00 01")
        link.central.disconnect()
        let result = try await within(seconds: 60) { await waiting.result }
        #expect(throws: GATTServerError.disconnected(.disconnected(reason: "remote user terminated connection"))) { try result.get() }
        #expect(try await within(seconds: 60) { await link.serving.value } == .disconnected(reason: "remote user terminated connection"))
        #expect(await server.connectionIDs == [])
        await #expect(throws: GATTServerError.unknownConnection(connection)) { try await server.indicate([1], for: 21, to: connection) }
    }

    @Test("an indication never confirmed times out; the bearer then takes no more ATT")
    func indicationTimeout() async throws {
        var configuration = GATTServer.Configuration()
        configuration.indicationTimeout = .milliseconds(200)
        let clock = ManualClock()
        configuration.clock = clock
        let link = try await ServedLink(configuration: configuration)
        let inbox = RawInbox.reading(link.central)
        #expect(try await link.rawRequest("12 16 00 02 00", inbox: inbox) == "13")
        let server = link.server
        let connection = link.connection
        let indicating = Task { try await server.indicate([1], for: 21, to: connection) }
        // The indication is out (its timer armed), never confirmed: its 200 ms pass.
        #expect(try await within(seconds: 60) { await inbox.next() } == "1D 15 00 01")
        try await clock.advanceOnceArmed(by: .milliseconds(200))
        await #expect(throws: GATTServerError.indicationFailed(.timedOut)) {
            try await within(seconds: 60) { try await indicating.value }
        }
        await #expect(throws: GATTServerError.indicationRefused(.bearerTimedOut)) {
            try await server.indicate([1], for: 21, to: connection)
        }
        try await link.central.send(bytes("0A 03 00"))
        let dropped = try await within(seconds: 60) { await link.events.first { if case .dropped = $0 { true } else { false } } }
        #expect(dropped == .dropped(connection, .bearerTimedOut(.readRequest)))
        #expect(await server.notify([1], for: 21, to: connection) == [connection: .notSubscribed])
        link.central.disconnect()
        _ = await link.serving.value
    }

    @Test("a cancelled indicate returns at once; the confirmation that follows is nobody's")
    func cancelledIndicate() async throws {
        let link = try await ServedLink()
        let inbox = RawInbox.reading(link.central)
        #expect(try await link.rawRequest("12 16 00 02 00", inbox: inbox) == "13")
        let server = link.server
        let connection = link.connection
        let waiting = Task { try await server.indicate([1], for: 21, to: connection) }
        let sent = try await within(seconds: 60) { await inbox.next() }
        #expect(sent == "1D 15 00 01")
        waiting.cancel()
        let result = try await within(seconds: 60) { await waiting.result }
        #expect(throws: GATTServerError.cancelled) { try result.get() }
        // The late confirmation frees the bearer for the next indication, which is confirmed.
        try await link.central.send(bytes("1E"))
        let next = Task { try await server.indicate([2], for: 21, to: connection) }
        #expect(try await within(seconds: 60) { await inbox.next() } == "1D 15 00 02")
        try await link.central.send(bytes("1E"))
        try await within(seconds: 60) { try await next.value }
        link.central.disconnect()
        _ = await link.serving.value
    }

    @Test("a database update indicates Service Changed to the clients that enabled it")
    func serviceChanged() async throws {
        let link = try await ServedLink()
        let client = GATTClient(bearer: link.central)
        let connection = link.connection
        try await within(seconds: 60) { () async throws in
            _ = try await client.discoverAll()
            _ = await link.events.first { $0 == .subscribed(connection, valueHandle: 8, .indicate) }
            _ = try await client.subscribe(to: GATTCharacteristic(
                uuid: customCharacteristic, declarationHandle: 26, valueHandle: 27, properties: [.notify], endHandle: 28))
            let old = await link.server.database
            let grown = try GATTServerDatabase(deviceName: "rawble", appearance: .heartRateBelt, services: old.services + [
                .primary(BluetoothUUID(0x1816), characteristics: [
                    GATTCharacteristicDefinition(BluetoothUUID(0x2A5B), properties: [.notify]),
                ]),
            ])
            await link.server.updateDatabase(grown)
            var changes = client.serviceChanges.makeAsyncIterator()
            #expect(await changes.next() == 31...0xFFFF)
            // Subscriptions before the change survive; the client rediscovers the new service.
            #expect(await link.server.subscribers(of: 27) == [connection])
            #expect(try await client.services(refresh: true).map(\.uuid).last == BluetoothUUID(0x1816))
            // The same database again is no change: nothing is indicated.
            await link.server.updateDatabase(grown)
        }
        await client.close()
    }
}
