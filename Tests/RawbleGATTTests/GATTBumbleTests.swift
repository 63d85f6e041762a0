import RawbleGATT
import RawbleHost
import RawbleTestSupport
import RawbleTransport
import Testing

/// The GATT client end to end over the stack's own host and L2CAP, against Bumble GATT servers
/// on Bumble's virtual controller (Scripts/bumble-peer).
@Suite("GATT client against Bumble", .serialized)
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
}
