import RawbleGATT
import RawbleGATTCore
import RawbleHost
import RawbleHostCore
import RawbleTestPeers
import RawbleTestSupport
import RawbleTransport
import RawbleWire
import Testing

/// The GATT client end to end over the stack's own host and L2CAP, against Bumble GATT servers
/// on Bumble's virtual controller (Scripts/bumble-peer).
@Suite("GATT client against Bumble", .serialized, .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct GATTBumbleTests {
    /// A connected GATT client on `name` from the peer's ready line, with the MTU exchanged.
    struct Session {
        let peer: BumblePeer
        let adapter: Adapter
        let connection: Connection
        let gatt: GATTClient

        func close() async {
            await gatt.close()
            try? await connection.disconnect()
            await adapter.close()
        }
    }

    static func connect(to name: String, peerArguments: [String] = []) async throws -> Session {
        let peer = try await BumblePeer.start(arguments: peerArguments)
        let device = try #require(peer.devices.first { $0.name == name })
        let address = try #require(BluetoothAddress(device.address))
        let transport = try await H4StreamTransport.connect(tcp: "127.0.0.1", port: try #require(peer.port))
        var configuration = Adapter.Configuration()
        configuration.commandTimeout = .seconds(10)
        configuration.resetTimeout = .seconds(10)
        configuration.logger.logLevel = .warning
        let adapter = try await Adapter.open(transport, configuration: configuration)
        let connection = try await adapter.connect(to: DeviceAddress(address, type: .random), timeout: .seconds(10))
        var attConfiguration = ATTClient.Configuration()
        attConfiguration.transactionTimeout = .seconds(10)
        let gatt = GATTClient(att: ATTClient(bearer: connection.att, configuration: attConfiguration))
        return Session(peer: peer, adapter: adapter, connection: connection, gatt: gatt)
    }

    @Test("the strap: MTU 517, discovery finds GAP, Device Information, Battery and Heart Rate with their characteristics")
    func strapDiscovery() async throws {
        let session = try await Self.connect(to: "rawble-strap")
        defer { session.peer.stop() }
        #expect(try await session.gatt.exchangeMTU() == 517)
        let database = try await session.gatt.discoverAll()
        let services = database.services.map(\.service.uuid)
        for expected: BluetoothUUID in [BluetoothUUID(0x1800), BluetoothUUID(0x180A), BluetoothUUID(0x180F), .heartRateService] {
            #expect(services.contains(expected), "\(expected) missing from \(services)")
        }
        let measurement = try #require(database.characteristic(.heartRateMeasurement))
        #expect(measurement.characteristic.properties.contains(.notify))
        #expect(measurement.configurationDescriptor != nil)
        // Handles are consistent: each characteristic inside its service, in order.
        for entry in database.services {
            for item in entry.characteristics {
                #expect(entry.service.startHandle < item.characteristic.declarationHandle)
                #expect(item.characteristic.declarationHandle < item.characteristic.valueHandle)
                #expect(item.characteristic.endHandle <= entry.service.endHandle)
            }
        }
        await session.close()
    }

    @Test("reads: Body Sensor Location, Manufacturer Name, Battery Level; a Control Point write and its ATT error")
    func strapReadsAndWrites() async throws {
        let session = try await Self.connect(to: "rawble-strap")
        defer { session.peer.stop() }
        try await session.gatt.exchangeMTU()
        let location = try #require(try await session.gatt.characteristic(.bodySensorLocation))
        #expect(try await session.gatt.read(location) == [0x01])
        let manufacturer = try #require(try await session.gatt.characteristic(BluetoothUUID(0x2A29)))
        #expect(try await session.gatt.read(manufacturer) == Array("rawble-sim".utf8))
        let battery = try #require(try await session.gatt.characteristic(BluetoothUUID(0x2A19)))
        #expect(try await session.gatt.read(battery) == [87])
        let controlPoint = try #require(try await session.gatt.characteristic(BluetoothUUID(0x2A39)))
        try await session.gatt.write([0x01], to: controlPoint)
        await #expect(throws: GATTError.att(ATTError(code: ATTErrorCode(0x80), requestOpcode: .writeRequest, handle: controlPoint.valueHandle))) {
            try await session.gatt.write([0x02], to: controlPoint)
        }
        await session.close()
    }

    @Test("Heart Rate notifications arrive in order, exactly what the strap logged as sent")
    func strapNotifications() async throws {
        let session = try await Self.connect(to: "rawble-strap", peerArguments: ["--hr-count", "12", "--hr-interval", "0.01"])
        defer { session.peer.stop() }
        try await session.gatt.exchangeMTU()
        let measurement = try #require(try await session.gatt.characteristic(.heartRateMeasurement))
        let subscription = try await session.gatt.subscribe(to: measurement)
        var received: [[UInt8]] = []
        for try await update in subscription {
            #expect(update.handle == measurement.valueHandle)
            received.append(Array(update.value))
            if received.count == 12 { break }
        }
        try await subscription.cancel()
        #expect(received == (try session.peer.sentHeartRateValues()))
        for value in received {
            #expect(throws: Never.self) { _ = try HeartRateMeasurement.decode(value) }
        }
        await session.close()
    }

    @Test("consumed with the adapter's task executor preference, each notification reaches the consumer on the event loop that read it: no thread hop")
    func notificationsOnTheLoop() async throws {
        let session = try await Self.connect(to: "rawble-strap", peerArguments: ["--hr-count", "20", "--hr-interval", "0.005"])
        defer { session.peer.stop() }
        let measurement = try #require(try await session.gatt.characteristic(.heartRateMeasurement))
        let subscription = try await session.gatt.subscribe(to: measurement)
        let loop = session.adapter.eventLoop
        let (received, onLoop) = try await withTaskExecutorPreference(session.adapter.taskExecutor) {
            var received: [[UInt8]] = []
            var onLoop = 0
            for try await update in subscription {
                if loop.inEventLoop { onLoop += 1 }
                received.append(Array(update.value))
                if received.count == 20 { break }
            }
            return (received, onLoop)
        }
        #expect(onLoop == 20)
        #expect(received == (try session.peer.sentHeartRateValues()))
        try await subscription.cancel()
        await session.close()
    }

    // MARK: The lab device (--lab): every procedure against a full database

    static let labService = BluetoothUUID("72617762-6C65-4C61-6200-000000000001")!

    @Test("full discovery of the lab matches the database the server holds: services, includes, characteristics, descriptors")
    func labDiscovery() async throws {
        let session = try await Self.connect(to: "rawble-lab", peerArguments: ["--lab"])
        defer { session.peer.stop() }
        let lab = try #require(session.peer.devices.first { $0.name == "rawble-lab" })
        let layout = try #require(lab.gatt)
        try await session.gatt.exchangeMTU()
        let database = try await session.gatt.discoverAll()
        #expect(database.services.count == layout.count)
        for (found, expected) in zip(database.services, layout) {
            #expect(found.service.uuid == BluetoothUUID(expected.uuid), "\(expected.uuid)")
            #expect(found.service.startHandle == expected.start)
            #expect(found.service.endHandle == expected.end)
            #expect(found.includedServices.map(\.declarationHandle) == expected.includes.map(\.handle))
            #expect(found.includedServices.map(\.startHandle) == expected.includes.map(\.start))
            #expect(found.includedServices.map(\.endHandle) == expected.includes.map(\.end))
            #expect(found.characteristics.count == expected.characteristics.count, "\(expected.uuid)")
            for (characteristic, expectedCharacteristic) in zip(found.characteristics, expected.characteristics) {
                let c = characteristic.characteristic
                #expect(c.uuid == BluetoothUUID(expectedCharacteristic.uuid))
                #expect(c.declarationHandle == expectedCharacteristic.declaration)
                #expect(c.valueHandle == expectedCharacteristic.value)
                #expect(c.endHandle == expectedCharacteristic.end, "\(expectedCharacteristic.uuid)")
                #expect(c.properties.rawValue == expectedCharacteristic.properties)
                #expect(characteristic.descriptors.map(\.handle) == expectedCharacteristic.descriptors.map(\.handle))
                #expect(characteristic.descriptors.map(\.uuid) == expectedCharacteristic.descriptors.compactMap { BluetoothUUID($0.uuid) })
            }
        }
        await session.close()
    }

    @Test("long read of the 300-byte value (Read + Read Blob) and a 512-byte long write (Prepare/Execute), read back")
    func labLongReadAndWrite() async throws {
        let session = try await Self.connect(to: "rawble-lab", peerArguments: ["--lab"])
        defer { session.peer.stop() }
        let handles = try #require(session.peer.devices.first { $0.name == "rawble-lab" }?.handles)
        // At the default MTU of 23 both procedures need many PDUs.
        let long = try await session.gatt.read(handle: handles.longRead)
        #expect(long == (0..<300).map { UInt8($0 % 256) })
        let value = (0..<512).map { UInt8(($0 * 7) % 256) }
        try await session.gatt.write(value, to: handles.write)
        #expect(try await session.gatt.read(handle: handles.write) == value)
        let writes = try session.peer.completedWrites()
        #expect(writes.last?.handle == handles.write)
        #expect(writes.last?.bytes == value)
        // Longer than any attribute value may be: refused before anything is sent.
        await #expect(throws: GATTError.valueTooLong(513)) {
            try await session.gatt.write([UInt8](repeating: 0, count: 513), to: handles.write)
        }
        // A Write Command must fit one PDU: 30 bytes do not at the default MTU of 23.
        await #expect(throws: GATTError.bearer(.pduTooLong(length: 33, maximum: 23))) {
            try await session.gatt.write([UInt8](repeating: 1, count: 30), to: handles.write, withoutResponse: true)
        }
        // A Write Command at the MTU exchanged.
        try await session.gatt.exchangeMTU()
        try await session.gatt.write([0xAB, 0xCD], to: handles.write, withoutResponse: true)
        #expect(try await session.gatt.read(handle: handles.write) == [0xAB, 0xCD])
        await session.close()
    }

    @Test("5,000 notifications at 1 kHz: none lost, order kept, every value as the server logged it")
    func labStream() async throws {
        let session = try await Self.connect(to: "rawble-lab", peerArguments: ["--lab"])
        defer { session.peer.stop() }
        let lab = try #require(session.peer.devices.first { $0.name == "rawble-lab" })
        let count = try #require(lab.stream?.count)
        try await session.gatt.exchangeMTU()
        let stream = try #require(try await session.gatt.characteristic(BluetoothUUID("72617762-6C65-4C61-6200-000000000004")!, inService: Self.labService))
        let subscription = try await session.gatt.subscribe(to: stream)
        var counters: [UInt32] = []
        var values: [[UInt8]] = []
        counters.reserveCapacity(count)
        let deadline = ContinuousClock.now + .seconds(60)
        for try await update in subscription {
            let v = Array(update.value)
            let counter = v.count >= 4 ? UInt32(v[0]) | UInt32(v[1]) << 8 | UInt32(v[2]) << 16 | UInt32(v[3]) << 24 : .max
            counters.append(counter)
            values.append(v)
            if counters.count == count || ContinuousClock.now > deadline { break }
        }
        try await subscription.cancel()
        #expect(counters.count == count)
        #expect(counters == (0..<UInt32(counters.count)).map { $0 }, "in order, none missing")
        // The server's own log, once it has written the run's summary.
        try await session.peer.waitForStreamSummaries()
        let sent = try session.peer.sentStreamValues()
        #expect(sent.count == count)
        #expect(sent.map(\.bytes) == values)
        #expect(await session.gatt.att.droppedUpdateCount == 0)
        await session.close()
    }

    @Test("a Service Changed indication drops the cached discovery; rediscovery finds the added service")
    func labServiceChanged() async throws {
        let session = try await Self.connect(to: "rawble-lab", peerArguments: ["--lab", "--service-changed-after", "0.5"])
        defer { session.peer.stop() }
        try await session.gatt.exchangeMTU()
        let before = try await session.gatt.discoverAll()
        var changes = session.gatt.serviceChanges.makeAsyncIterator()
        let watchdog = Task {
            try await Task.sleep(for: .seconds(20))
            await session.gatt.close()
        }
        let range = try #require(await changes.next())
        watchdog.cancel()
        // The server logs the change once the indication is confirmed: wait for it (bounded).
        let logged = try #require(try await session.peer.waitForServiceChanges().last)
        #expect(range.lowerBound == logged.start && range.upperBound == logged.end)
        let after = try await session.gatt.discoverAll()
        #expect(after.services.count == before.services.count + 1)
        let added = try #require(after.services.last)
        #expect(added.service.startHandle == range.lowerBound)
        #expect(added.characteristics.count == 1)
        await session.close()
    }
}
