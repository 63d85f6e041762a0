import Glibc
import RawbleHCITransport
import RawbleTestPeers
import RawbleTestSupport
import RawbleTransport
import RawbleWire
import Testing

/// The fixture serving several controllers on one Bumble link (`bumble-peer --ports N`), proven
/// with plain HCI over the real H4 transport: each port is its own controller, and hosts on
/// different ports see each other's advertising, connect and exchange ACL data, as rawble's
/// peripheral and rawble's central will.
@Suite("Fixture: two ports on one link", .serialized,
       .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct TwoPortFixtureTests {
    @Test func theReadyLineNamesEveryPortAndEachControllerHasItsOwnPublicAddress() async throws {
        let peer = try await BumblePeer.start(arguments: ["--no-standard", "--controller-address", "00:1B:DC:00:00:0A"],
                                              ports: 3)
        defer { peer.stop() }
        #expect(peer.controllers.count == 3)
        #expect(peer.transports.first == peer.transport)
        #expect(Set(peer.transports).count == 3)
        #expect(peer.controllers.map(\.publicAddress) == ["00:1B:DC:00:00:0A", "52:41:57:42:4C:02", "52:41:57:42:4C:03"])
        for controller in peer.controllers {
            let host = try await LinkHost.open(controller)
            let complete = try await host.run(.readBDADDR)
            #expect(complete.status == .success)
            // Read BD_ADDR returns the address little-endian after the status byte.
            let address = BluetoothAddress(littleEndianBytes: complete.returnParameters.dropFirst())?.description
            #expect(address == controller.publicAddress)
            await host.close()
        }
    }

    @Test func bothPortsSeeEveryStandardDeviceOfTheOneLink() async throws {
        let peer = try await BumblePeer.start(ports: 2)
        defer { peer.stop() }
        #expect(peer.controllers.count == 2)
        for controller in peer.controllers {
            let host = try await LinkHost.open(controller)
            try await host.startScanning(active: true)
            for device in peer.devices {
                let report = try await host.report(from: device.address, scanResponse: false)
                #expect(Hex.encode(Array(report.data)) == device.advertisingData, "\(device.name) on \(controller.transport)")
                #expect(report.isConnectable == device.connectable, "\(device.name) on \(controller.transport)")
            }
            await host.close()
        }
    }

    @Test func aHostAdvertisingOnOnePortIsFoundConnectedAndReachedWithACLFromTheOther() async throws {
        let (peer, peripheral, central) = try await LinkHost.openTwo()
        defer { peer.stop() }
        let peripheralAddress = try #require(BluetoothAddress(peer.controllers[0].publicAddress))

        let name = Array("fixture-A".utf8)
        let data = [0x02, 0x01, 0x06, UInt8(name.count + 1), 0x09] + name
        let response = [0x05, 0xFF, 0x59, 0x00, 0xCA, 0xFE] as [UInt8]
        try await peripheral.advertise(type: .connectableUndirected, data: data, scanResponse: response)

        let centralAddress = BluetoothAddress(0xC0_11_22_33_44_55)
        try await central.expectSuccess(.leSetRandomAddress(centralAddress))
        try await central.startScanning(active: true)
        let report = try await central.report(from: peripheralAddress.description, scanResponse: false)
        #expect(Array(report.data) == data)
        #expect(report.addressType == .public)
        #expect(report.isConnectable)
        let scanResponse = try await central.report(from: peripheralAddress.description, scanResponse: true)
        #expect(Array(scanResponse.data) == response)
        try await central.expectSuccess(.leSetScanEnable(enable: false, filterDuplicates: false))

        let connect = HCICommand.CreateConnection(
            scanInterval: 0x10, scanWindow: 0x10, peerAddressType: .public, peerAddress: peripheralAddress,
            ownAddressType: .random,
            connection: .init(intervalMin: 24, intervalMax: 40, maxLatency: 0, supervisionTimeout: 200))
        let status = try await central.run(.leCreateConnection(connect))
        #expect(status.status == .success)
        let atCentral = try await central.connectionComplete()
        let atPeripheral = try await peripheral.connectionComplete()
        #expect(atCentral.status == .success && atCentral.role == .central)
        #expect(atCentral.peerAddress == peripheralAddress)
        #expect(atPeripheral.status == .success && atPeripheral.role == .peripheral)
        #expect(atPeripheral.peerAddress == centralAddress && atPeripheral.peerAddressType == .random)

        // An ATT Exchange MTU Request on the ATT channel (CID 4), and a response back.
        let request: [UInt8] = [0x03, 0x00, 0x04, 0x00, 0x02, 0xF7, 0x00]
        try await central.sendACL(handle: atCentral.connectionHandle, payload: request)
        let received = try await peripheral.acl()
        #expect(received.handle == atPeripheral.connectionHandle)
        #expect(Array(received.payload) == request)
        let answer: [UInt8] = [0x03, 0x00, 0x04, 0x00, 0x03, 0x17, 0x00]
        try await peripheral.sendACL(handle: atPeripheral.connectionHandle, payload: answer)
        let back = try await central.acl()
        #expect(back.handle == atCentral.connectionHandle)
        #expect(Array(back.payload) == answer)
        await central.close()
        await peripheral.close()
    }

    /// Stock Bumble 0.0.236 sends a legacy advertiser's PDUs on the link only for ADV_IND: a
    /// host advertising scannable or non-connectable with the legacy commands was never seen.
    @Test(arguments: [
        (HCICommand.AdvertisingType.scannableUndirected, AdvertisingReport.LegacyEventType.advScanInd),
        (.nonConnectableUndirected, .advNonconnInd),
    ])
    func aLegacyAdvertiserOfEveryUndirectedTypeIsReportedAsItIs(
        type: HCICommand.AdvertisingType, expected: AdvertisingReport.LegacyEventType
    ) async throws {
        let (peer, advertiser, scanner) = try await LinkHost.openTwo()
        defer { peer.stop() }
        let address = peer.controllers[0].publicAddress
        let data: [UInt8] = [0x02, 0x01, 0x04, 0x04, 0x08, 0x61, 0x64, 0x76]
        let response: [UInt8] = [0x03, 0xFF, 0x59, 0x00]
        try await advertiser.advertise(type: type, data: data, scanResponse: response)
        try await scanner.startScanning(active: true)
        let report = try await scanner.report(from: address, scanResponse: false)
        #expect(report.format == .legacy(expected))
        #expect(Array(report.data) == data)
        if expected == .advScanInd {
            let scanResponse = try await scanner.report(from: address, scanResponse: true)
            #expect(Array(scanResponse.data) == response)
        }
        await scanner.close()
        await advertiser.close()
    }

    /// A host advertising with the extended commands from its public address (as rawble's
    /// peripheral may on a Bluetooth 5 controller) is reported with its real event properties
    /// and scan response, to a legacy and an extended scan. Stock reporting, which this fixture
    /// used for any set without a random address, said connectable and repeated the advertising
    /// data as the scan response.
    @Test(arguments: [
        (UInt16(0x0013), true, "legacy"), (UInt16(0x0012), false, "legacy"),
        (UInt16(0x0013), true, "extended"), (UInt16(0x0010), false, "extended"),
    ])
    func anExtendedAdvertisingSetFromAPublicAddressIsReportedAsItIs(
        properties: UInt16, connectable: Bool, scan: String
    ) async throws {
        let (peer, advertiser, scanner) = try await LinkHost.openTwo()
        defer { peer.stop() }
        let address = peer.controllers[0].publicAddress
        let data: [UInt8] = [0x02, 0x01, 0x06, 0x04, 0x09, 0x65, 0x78, 0x74]
        let response: [UInt8] = [0x04, 0xFF, 0x59, 0x00, 0x2A]
        try await advertiser.advertiseExtended(properties: properties, data: data, scanResponse: response)
        if scan == "extended" {
            // LE Set Extended Scan Parameters: own random, no filter, 1M only, active, 10 ms/10 ms.
            try await scanner.expectSuccess(try raw(0x2041, [0x01, 0x00, 0x01, 0x01, 0x10, 0x00, 0x10, 0x00]))
            // LE Set Extended Scan Enable: on, no duplicate filter, no duration, no period.
            try await scanner.expectSuccess(try raw(0x2042, [0x01, 0x00, 0x00, 0x00, 0x00, 0x00]))
        } else {
            try await scanner.startScanning(active: true)
        }
        let report = try await scanner.report(from: address, scanResponse: false)
        #expect(Array(report.data) == data)
        #expect(report.isConnectable == connectable)
        #expect(report.addressType == .public)
        #expect(report.isScannable == (properties & 0x02 != 0))
        if properties & 0x02 != 0 {
            let scanResponse = try await scanner.report(from: address, scanResponse: true)
            #expect(Array(scanResponse.data) == response)
        }
        await scanner.close()
        await advertiser.close()
    }
}

/// A served controller's Reset and LE Create Connection Cancel, as the specification has them
/// (stock Bumble 0.0.236 answered both with success and changed nothing).
@Suite("Fixture: Reset and Create Connection Cancel", .serialized,
       .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct FixtureControllerStateTests {
    static func connect(_ host: LinkHost, to address: BluetoothAddress, type: LEAddressType = .public) async throws
        -> (status: HCIStatus, returnParameters: ArraySlice<UInt8>)
    {
        try await host.run(.leCreateConnection(.init(
            scanInterval: 0x10, scanWindow: 0x10, peerAddressType: type, peerAddress: address, ownAddressType: .random,
            connection: .init(intervalMin: 24, intervalMax: 40, maxLatency: 0, supervisionTimeout: 200))))
    }

    @Test func cancellingAnAttemptEndsItWithConnectionCompleteUnknownConnectionIdentifierAndAllowsTheNext() async throws {
        let peer = try await BumblePeer.start(arguments: ["--no-standard"])
        defer { peer.stop() }
        let host = try await LinkHost.open(peer.controllers[0])
        try await host.expectSuccess(.leSetRandomAddress(BluetoothAddress(0xC0_11_22_33_44_66)))
        let absent = BluetoothAddress(0xC0_DE_AD_00_00_01)
        #expect(try await Self.connect(host, to: absent, type: .random).status == .success)
        #expect(try await host.run(.leCreateConnectionCancel).status == .success)
        let ended = try await host.connectionComplete()
        #expect(ended.status == .unknownConnectionIdentifier)
        #expect(ended.peerAddress == absent)
        // The attempt is over: a new one is accepted, and a Cancel without one is disallowed.
        #expect(try await Self.connect(host, to: absent, type: .random).status == .success)
        #expect(try await host.run(.leCreateConnectionCancel).status == .success)
        #expect(try await host.run(.leCreateConnectionCancel).status == .commandDisallowed)
        await host.close()
    }

    @Test func resetDropsTheConnectionsThePeerSeesATimeoutAndTheHostCanAdvertiseAndBeConnectedAgain() async throws {
        let (peer, peripheral, central) = try await LinkHost.openTwo()
        defer { peer.stop() }
        let peripheralAddress = try #require(BluetoothAddress(peer.controllers[0].publicAddress))
        try await central.expectSuccess(.leSetRandomAddress(BluetoothAddress(0xC0_11_22_33_44_77)))
        try await peripheral.advertise(type: .connectableUndirected, data: [0x02, 0x01, 0x06], scanResponse: [])
        #expect(try await Self.connect(central, to: peripheralAddress).status == .success)
        let first = try await central.connectionComplete(from: 0)
        #expect(first.event.status == .success)

        try await peripheral.expectSuccess(.reset)
        let dropped = try await central.disconnection()
        #expect(dropped.handle == first.event.connectionHandle)
        #expect(dropped.reason == .connectionTimeout)

        try await peripheral.advertise(type: .connectableUndirected, data: [0x02, 0x01, 0x06], scanResponse: [])
        #expect(try await Self.connect(central, to: peripheralAddress).status == .success)
        let second = try await central.connectionComplete(from: first.next)
        #expect(second.event.status == .success)
        await central.close()
        await peripheral.close()
    }
}

/// An HCI command the wire layer has no case for, from its opcode and parameters.
func raw(_ opcode: UInt16, _ parameters: [UInt8]) throws -> HCICommand {
    .other(try #require(HCICommand.RawCommand(opcode: HCIOpcode(opcode), parameters: parameters)))
}

/// One host's side of a served controller: plain HCI commands, and every packet received kept
/// so a test waits (bounded) for the one it needs.
final class LinkHost: Sendable {
    let transport: H4StreamTransport
    private let collector: PacketCollector

    private init(transport: H4StreamTransport, collector: PacketCollector) {
        self.transport = transport
        self.collector = collector
    }

    /// Connects to `controller` and resets it.
    static func open(_ controller: BumblePeer.ServedController) async throws -> LinkHost {
        let transport: H4StreamTransport
        if let host = controller.host, let port = controller.port {
            transport = try await H4StreamTransport.connect(tcp: host, port: port)
        } else {
            transport = try await H4StreamTransport.connect(unix: try #require(controller.socketPath))
        }
        let collector = PacketCollector()
        #expect(transport.deliverPackets(to: collector))
        let host = LinkHost(transport: transport, collector: collector)
        try await host.expectSuccess(.reset)
        return host
    }

    /// A link of two served controllers without the standard devices, and a host open on each
    /// (the first to advertise, the second to scan or connect). The caller stops the peer.
    static func openTwo() async throws -> (peer: BumblePeer, first: LinkHost, second: LinkHost) {
        let peer = try await BumblePeer.start(arguments: ["--no-standard"], ports: 2)
        do {
            return (peer, try await open(peer.controllers[0]), try await open(peer.controllers[1]))
        } catch {
            peer.stop()
            throw error
        }
    }

    func close() async { await transport.close() }

    /// Sends `command`; its Command Complete or Command Status (within 60 s: a hang guard).
    @discardableResult
    func run(_ command: HCICommand) async throws -> (status: HCIStatus, returnParameters: ArraySlice<UInt8>) {
        var writer = ByteWriter()
        command.encode(into: &writer)
        let cursor = collector.count
        try await transport.send(H4Packet(type: .command, bytes: writer.bytes))
        let answer = try await collector.first(from: cursor) { packet -> (HCIStatus, ArraySlice<UInt8>)? in
            guard packet.type == .event, let event = try? HCIEvent.decode(packet.bytes) else { return nil }
            switch event {
            case .commandComplete(let complete) where complete.opcode == command.opcode:
                return (complete.status ?? .success, complete.returnParameters)
            case .commandStatus(let status) where status.opcode == command.opcode:
                return (status.status, [])
            default:
                return nil
            }
        }
        return (answer.0, answer.1)
    }

    func expectSuccess(_ command: HCICommand, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let answer = try await run(command)
        #expect(answer.status == .success, "\(command.opcode)", sourceLocation: sourceLocation)
    }

    /// Legacy advertising from the controller's public address.
    func advertise(type: HCICommand.AdvertisingType, data: [UInt8], scanResponse: [UInt8]) async throws {
        try await expectSuccess(.leSetAdvertisingParameters(.init(intervalMin: 0x20, intervalMax: 0x20, type: type)))
        try await expectSuccess(.leSetAdvertisingData(try #require(.init(data))))
        try await expectSuccess(.leSetScanResponseData(try #require(.init(scanResponse))))
        try await expectSuccess(.leSetAdvertisingEnable(true))
    }

    /// Extended advertising set 0 from the controller's public address, with the given event
    /// properties (0x13 legacy connectable scannable, 0x12 legacy scannable, 0x10 legacy
    /// non-connectable), 20 ms apart.
    func advertiseExtended(properties: UInt16, data: [UInt8], scanResponse: [UInt8]) async throws {
        // LE Set Extended Advertising Parameters: handle 0, properties, intervals 0x20 (3 bytes
        // each), all channels, own public, peer public 00.., no filter, no TX power preference,
        // 1M primary, no skip, 1M secondary, SID 0, no scan request notifications.
        var parameters: [UInt8] = [0x00, UInt8(properties & 0xFF), UInt8(properties >> 8),
                                   0x20, 0x00, 0x00, 0x20, 0x00, 0x00, 0x07, 0x00, 0x00]
        parameters += [UInt8](repeating: 0, count: 6) + [0x00, 0x7F, 0x01, 0x00, 0x01, 0x00, 0x00]
        try await expectSuccess(try raw(0x2036, parameters))
        // LE Set Extended Advertising Data / Scan Response Data: handle 0, complete, no fragmenting.
        try await expectSuccess(try raw(0x2037, [0x00, 0x03, 0x01, UInt8(data.count)] + data))
        try await expectSuccess(try raw(0x2038, [0x00, 0x03, 0x01, UInt8(scanResponse.count)] + scanResponse))
        // LE Set Extended Advertising Enable: on, one set: handle 0, no duration, no event limit.
        try await expectSuccess(try raw(0x2039, [0x01, 0x01, 0x00, 0x00, 0x00, 0x00]))
    }

    func startScanning(active: Bool) async throws {
        try await expectSuccess(.leSetScanParameters(.init(type: active ? .active : .passive, interval: 0x10,
                                                           window: 0x10, ownAddressType: .random)))
        try await expectSuccess(.leSetScanEnable(enable: true, filterDuplicates: false))
    }

    /// The first advertising report (or scan response) from `address` received so far or next.
    func report(from address: String, scanResponse: Bool) async throws -> AdvertisingReport {
        try await collector.first(from: 0) { packet in
            guard packet.type == .event, case .le(let le) = try? HCIEvent.decode(packet.bytes) else { return nil }
            switch le {
            case .advertisingReport(let reports), .extendedAdvertisingReport(let reports):
                return reports.first { $0.address.description == address && $0.isScanResponse == scanResponse }
            default:
                return nil
            }
        }
    }

    func connectionComplete() async throws -> LEConnectionComplete {
        try await connectionComplete(from: 0).event
    }

    /// The first LE Connection Complete at or after position `from`, and the position after it.
    func connectionComplete(from: Int) async throws -> (event: LEConnectionComplete, next: Int) {
        let (index, complete) = try await collector.firstIndexed(from: from) { packet -> LEConnectionComplete? in
            guard packet.type == .event, case .le(.connectionComplete(let complete)) = try? HCIEvent.decode(packet.bytes)
            else { return nil }
            return complete
        }
        return (complete, index + 1)
    }

    /// The first Disconnection Complete received: its handle and reason.
    func disconnection() async throws -> (handle: UInt16, reason: HCIStatus) {
        try await collector.first(from: 0) { packet -> (UInt16, HCIStatus)? in
            guard packet.type == .event, case .disconnectionComplete(let event) = try? HCIEvent.decode(packet.bytes)
            else { return nil }
            return (event.connectionHandle, event.reason)
        }
    }

    func sendACL(handle: UInt16, payload: [UInt8]) async throws {
        var writer = ByteWriter()
        ACLPacket(handle: handle, packetBoundary: .firstNonFlushable, payload: payload[...]).encode(into: &writer)
        try await transport.send(H4Packet(type: .acl, bytes: writer.bytes))
    }

    func acl() async throws -> ACLPacket {
        try await acl(from: 0).packet
    }

    /// The first ACL packet at or after position `from` of everything received (nil: a
    /// Disconnection Complete came first), and the position after it.
    func aclOrDisconnection(from: Int, seconds: Double = 60) async throws -> (packet: ACLPacket?, next: Int) {
        let (index, packet) = try await collector.firstIndexed(from: from, seconds: seconds) { packet -> ACLPacket?? in
            if packet.type == .acl { return try? ACLPacket.decode(packet.bytes[...]) }
            if packet.type == .event, case .disconnectionComplete = try? HCIEvent.decode(packet.bytes) {
                return .some(nil)
            }
            return nil
        }
        return (packet, index + 1)
    }

    /// The first ACL packet at or after position `from` of everything received, and the
    /// position after it (for the next call).
    func acl(from: Int, seconds: Double = 60) async throws -> (packet: ACLPacket, next: Int) {
        let (index, packet) = try await collector.firstIndexed(from: from, seconds: seconds) { packet in
            packet.type == .acl ? try? ACLPacket.decode(packet.bytes[...]) : nil
        }
        return (packet, index + 1)
    }
}

/// Keeps every packet a transport delivers, for a test to wait (bounded) on the one it needs.
final class PacketCollector: HCIPacketReceiver {
    private let log = ObservedLog<H4Packet>()

    var count: Int { log.count }

    func receive(_ packets: [H4Packet]) { log.append(contentsOf: packets) }

    func transportEnded(_ error: TransportError) { log.end(with: error) }

    /// The first packet at or after `from` that `transform` maps to a value (within 60 s: a hang guard).
    func first<T: Sendable>(from: Int, seconds: Double = 60,
                            _ transform: @escaping @Sendable (H4Packet) -> T?) async throws -> T {
        try await firstIndexed(from: from, seconds: seconds, transform).value
    }

    /// ``first(from:seconds:_:)`` with the packet's position.
    func firstIndexed<T: Sendable>(from: Int, seconds: Double = 60,
                                   _ transform: @escaping @Sendable (H4Packet) -> T?) async throws -> (index: Int, value: T) {
        let (index, packet) = try await log.firstIndexed(from: from, within: seconds) { transform($0) != nil }
        guard let value = transform(packet) else { throw TestTimeout() }
        return (index, value)
    }
}
