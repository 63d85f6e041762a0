import Logging
import RawbleHost
import RawbleHostCore
import RawbleTestPeers
import RawbleTestSupport
import RawbleTransport
import RawbleWire
import Testing

/// The host against a real stack nobody on this project wrote: Bumble's virtual controller
/// with Bumble peripherals (Scripts/bumble-peer), over H4 on 127.0.0.1.
@Suite("Adapter against Bumble's virtual controller", .serialized, .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct AdapterBumbleTests {
    static func openAdapter(_ peer: BumblePeer) async throws -> Adapter {
        let transport: H4StreamTransport
        if let port = peer.port {
            transport = try await H4StreamTransport.connect(tcp: "127.0.0.1", port: port)
        } else {
            transport = try await H4StreamTransport.connect(unix: peer.socketPath ?? "")
        }
        var configuration = Adapter.Configuration()
        configuration.logger.logLevel = .warning
        // Generous: the whole suite runs in parallel on two cores; no test here is about timing.
        configuration.commandTimeout = .seconds(10)
        configuration.resetTimeout = .seconds(10)
        return try await Adapter.open(transport, configuration: configuration)
    }

    /// Scans until every device of the ready line was seen with the data it advertises (and,
    /// for scannable ones in an active scan, its scan response), at most `timeout`.
    static func scanAll(_ adapter: Adapter, expecting devices: [BumblePeer.Device], options: ScanOptions,
                        timeout: Duration = .seconds(10)) async throws -> [BluetoothAddress: DiscoveredDevice] {
        let stream = try await adapter.scan(options)
        let expected = Set(devices.compactMap { BluetoothAddress($0.address) })
        let collector = Task {
            var seen: [BluetoothAddress: DiscoveredDevice] = [:]
            for try await device in stream {
                seen[device.address.address] = device
                let complete = devices.allSatisfy { expectedDevice in
                    guard let address = BluetoothAddress(expectedDevice.address), let found = seen[address] else { return false }
                    return !options.active || !expectedDevice.scanResponse || found.scanResponse != nil
                }
                if Set(seen.keys).isSuperset(of: expected), complete { break }
            }
            return seen
        }
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            collector.cancel()
        }
        let seen = try await collector.value
        watchdog.cancel()
        try await adapter.stopScanning()
        return seen
    }

    /// The data as advertised; for a malformed one, the structures before the broken one.
    static func sameData(_ data: AdvertisingData?, _ hex: String, malformed: Bool) -> Bool {
        let advertised = bytes(hex)
        let decoded = Array(data?.bytes ?? [])
        return malformed ? (decoded.count < advertised.count && advertised.starts(with: decoded) && !decoded.isEmpty)
                         : decoded == advertised
    }

    @Test("start-up on Bumble's controller: LE buffers, a random static own address")
    func startup() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        let adapter = try await Self.openAdapter(peer)
        let info = await adapter.controller
        #expect(info.aclDataLength == 27)
        #expect(info.aclPacketCount > 0)
        #expect(info.ownAddress.type == .random)
        #expect(info.version != nil)
        #expect(info.leFeatures != nil)
        await adapter.close()
    }

    @Test("an active scan lists every advertiser with the fields it advertises, scan responses merged")
    func activeScan() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        let adapter = try await Self.openAdapter(peer)
        let seen = try await Self.scanAll(adapter, expecting: peer.devices, options: ScanOptions(active: true))
        for expected in peer.devices {
            let address = try #require(BluetoothAddress(expected.address))
            let device = try #require(seen[address], "\(expected.name) at \(expected.address) not seen")
            #expect(device.address.type == .random)
            #expect(device.isConnectable == expected.connectable, "\(expected.name)")
            #expect(device.rssi != nil)
            #expect(Self.sameData(device.advertisement, expected.advertisingData, malformed: expected.malformed ?? false), "\(expected.name)")
            let services = expected.services.compactMap(BluetoothUUID.init)
            #expect(device.advertisingData.serviceUUIDs == services, "\(expected.name)")
            #expect(device.advertisingData.manufacturerData.map(\.companyID) == expected.manufacturerData.map(\.company))
            #expect(device.advertisingData.manufacturerData.map { Array($0.data) } == expected.manufacturerData.map(\.bytes))
            if expected.scanResponse {
                #expect(Array(device.scanResponse?.bytes ?? []) == bytes(expected.scanResponseData), "\(expected.name)")
            }
            if let name = expected.advertisedName {
                #expect(device.name == name, "\(expected.name)")
            }
            #expect((device.dataError != nil) == (expected.malformed ?? false), "\(expected.name)")
        }
        await adapter.close()
    }

    @Test("stock Bumble reporting (extended reports to a legacy scan, every advertisement twice) is parsed too")
    func stockReports() async throws {
        let peer = try await BumblePeer.start(arguments: ["--stock-reports"])
        defer { peer.stop() }
        let adapter = try await Self.openAdapter(peer)
        let seen = try await Self.scanAll(adapter, expecting: peer.devices, options: ScanOptions(active: false))
        for expected in peer.devices {
            let address = try #require(BluetoothAddress(expected.address))
            let device = try #require(seen[address], "\(expected.name) not seen")
            #expect(Self.sameData(device.advertisement, expected.advertisingData, malformed: expected.malformed ?? false), "\(expected.name)")
        }
        await adapter.close()
    }

    @Test("connect to the Heart Rate strap, carry a raw Exchange MTU on the ATT channel, disconnect cleanly")
    func connectExchangeMTU() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        let strap = try #require(peer.devices.first { $0.name == "rawble-strap" })
        let address = try #require(BluetoothAddress(strap.address))
        let adapter = try await Self.openAdapter(peer)
        let connection = try await adapter.connect(to: DeviceAddress(address, type: .random), timeout: .seconds(10))
        #expect(connection.peer.address == address)

        var responses = connection.att.pdus.makeAsyncIterator()
        try await connection.att.send([0x02, 0x05, 0x02])  // Exchange MTU Request, client MTU 517
        let response = try #require(try await responses.next())
        #expect(response.first == 0x03, "Exchange MTU Response")
        #expect(response.count == 3)
        let serverMTU = response.count == 3 ? UInt16(response[1]) | UInt16(response[2]) << 8 : 0
        #expect(serverMTU >= 23)

        try await connection.disconnect()
        // The specification says 0x16 (terminated by local host); Bumble echoes the reason sent.
        let ending = try #require(connection.ending)
        #expect([HostError.disconnected(.connectionTerminatedByLocalHost), .disconnected(.remoteUserTerminatedConnection)].contains(ending))
        await adapter.close()
    }

    /// A library is quiet unless told otherwise: swift-log's default level is `info`, and the
    /// host logs routine steps below it. At `debug` the same steps are there (the logger is
    /// the one used).
    @Test("at swift-log's default level a start, connect, disconnect and close log nothing; at debug they are logged")
    func quietAtTheDefaultLevel() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        let strap = try #require(peer.devices.first { $0.name == "rawble-strap" })
        let address = try #require(BluetoothAddress(strap.address))
        for level in [Logger.Level.info, .debug] {
            let log = RecordingLogHandler(level: level)
            let transport = try await H4StreamTransport.connect(tcp: "127.0.0.1", port: try #require(peer.port))
            var configuration = Adapter.Configuration()
            configuration.logger = Logger(label: "rawble.host") { _ in log }
            configuration.commandTimeout = .seconds(10)
            configuration.resetTimeout = .seconds(10)
            let adapter = try await Adapter.open(transport, configuration: configuration)
            let connection = try await adapter.connect(to: DeviceAddress(address, type: .random), timeout: .seconds(10))
            try await connection.disconnect()
            await adapter.close()
            if level == .info {
                #expect(log.records.isEmpty, "\(log.records)")
            } else {
                #expect(log.lines.contains { $0.hasPrefix("controller ready") }, "\(log.lines)")
                #expect(log.lines.contains { $0.hasPrefix("connected to") }, "\(log.lines)")
            }
        }
    }

    /// As the Linux kernel connects: from the controller's public address. The fixture's link
    /// must carry the central's ACL (Bumble's own link sends it from the random address, which
    /// the peripheral's controller does not know, and drops every packet).
    @Test("a central connecting from its public address exchanges ATT with the strap")
    func connectFromThePublicAddress() async throws {
        let peer = try await BumblePeer.start(arguments: ["--strap-only", "--controller-address", "00:1B:DC:00:00:01"])
        defer { peer.stop() }
        let strap = try #require(peer.devices.first { $0.name == "rawble-strap" })
        let address = try #require(BluetoothAddress(strap.address))
        let transport = try await H4StreamTransport.connect(tcp: "127.0.0.1", port: try #require(peer.port))
        var configuration = Adapter.Configuration()
        configuration.logger.logLevel = .warning
        configuration.commandTimeout = .seconds(10)
        configuration.resetTimeout = .seconds(10)
        configuration.ownAddress = .public
        let adapter = try await Adapter.open(transport, configuration: configuration)
        let own = await adapter.controller.ownAddress
        #expect(own == DeviceAddress(BluetoothAddress(0x00_1B_DC_00_00_01), type: .public))
        let connection = try await adapter.connect(to: DeviceAddress(address, type: .random), timeout: .seconds(10))
        let pdus = connection.att.pdus
        try await connection.att.send([0x02, 0x05, 0x02])  // Exchange MTU Request
        let response = try await within(seconds: 20) { () -> [UInt8]? in
            for try await pdu in pdus { return pdu }
            return nil
        }
        #expect(response?.first == 0x03, "Exchange MTU Response")
        try await connection.disconnect()
        await adapter.close()
    }

    @Test("two simultaneous connections each carry their own ATT traffic")
    func twoConnections() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        let targets = peer.devices.filter { $0.name == "rawble-strap" || $0.name == "rawble-thermo" }
        #expect(targets.count == 2)
        let adapter = try await Self.openAdapter(peer)
        var connections: [Connection] = []
        for target in targets {
            let address = try #require(BluetoothAddress(target.address))
            connections.append(try await adapter.connect(to: DeviceAddress(address, type: .random), timeout: .seconds(10)))
        }
        #expect(Set(connections.map(\.handle)).count == 2)
        for connection in connections {
            var pdus = connection.att.pdus.makeAsyncIterator()
            // Read By Group Type Request 0x0001-0xFFFF for primary services.
            try await connection.att.send([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])
            let answer = try #require(try await pdus.next())
            #expect(answer.first == 0x11, "Read By Group Type Response from \(connection.peer)")
        }
        for connection in connections { try await connection.disconnect() }
        await adapter.close()
    }
}
