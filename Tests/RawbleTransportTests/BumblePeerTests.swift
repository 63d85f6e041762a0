import Glibc
import RawbleTestSupport
import RawbleTransport
import RawbleWire
import Testing

/// The Bumble fixture, proven with the real H4 transport: Bumble's controller answers HCI, and
/// every peripheral in the ready line is seen advertising what the line says.
@Suite("BumblePeer", .serialized)
struct BumblePeerTests {
    /// Sends `command` and waits (bounded) for its Command Complete, returning it.
    static func run(_ command: HCICommand, on transport: H4StreamTransport,
                    events: inout AsyncThrowingStream<H4Packet, any Error>.AsyncIterator) async throws
        -> HCIEvent.CommandComplete
    {
        var writer = ByteWriter()
        command.encode(into: &writer)
        try await transport.send(H4Packet(type: .command, bytes: writer.bytes))
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            guard let packet = try await events.next() else { break }
            guard packet.type == .event, case .commandComplete(let complete) = try HCIEvent.decode(packet.bytes)
            else { continue }
            if complete.opcode == command.opcode { return complete }
        }
        throw TimedOut()
    }

    /// Everything seen for one address while scanning.
    struct Seen {
        var advertisingData: [UInt8] = []
        var scanResponseData: [UInt8]?
        var connectable = false
    }

    /// Resets, scans actively and collects reports for every device in the ready line (≤ 5 s).
    static func scanAll(_ peer: BumblePeer, transport: H4StreamTransport) async throws -> [String: Seen] {
        var events = transport.packets.makeAsyncIterator()
        let reset = try await run(.reset, on: transport, events: &events)
        #expect(reset.status == .success)
        let parameters = try await run(
            .leSetScanParameters(.init(type: .active, interval: 0x10, window: 0x10, ownAddressType: .random)),
            on: transport, events: &events)
        #expect(parameters.status == .success)
        let enable = try await run(.leSetScanEnable(enable: true, filterDuplicates: false),
                                   on: transport, events: &events)
        #expect(enable.status == .success)

        let wanted = Set(peer.devices.map(\.address))
        var seen: [String: Seen] = [:]
        func complete() -> Bool {
            wanted.allSatisfy { address in
                guard let entry = seen[address], !entry.advertisingData.isEmpty else { return false }
                let device = peer.devices.first { $0.address == address }
                return device?.scanResponse != true || entry.scanResponseData != nil
            }
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while !complete(), ContinuousClock.now < deadline {
            guard let packet = try await events.next() else { break }
            guard packet.type == .event, case .le(let le) = try HCIEvent.decode(packet.bytes) else { continue }
            let reports: [AdvertisingReport]
            switch le {
            case .advertisingReport(let list), .extendedAdvertisingReport(let list): reports = list
            default: continue
            }
            for report in reports {
                let key = report.address.description
                var entry = seen[key] ?? Seen()
                if report.isScanResponse {
                    entry.scanResponseData = Array(report.data)
                } else {
                    entry.advertisingData = Array(report.data)
                    entry.connectable = report.isConnectable
                }
                seen[key] = entry
            }
        }
        return seen
    }

    @Test func peerAnswersResetAndEveryReadyLineDeviceIsSeenAdvertisingWhatItSaysOverTCP() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        let host = try #require(peer.host)
        let port = try #require(peer.port)
        #expect(peer.devices.map(\.name).sorted()
            == ["rawble-beacon", "rawble-broken", "rawble-strap", "rawble-thermo"])
        let transport = try await H4StreamTransport.connect(tcp: host, port: port)
        let seen = try await within(15) { try await Self.scanAll(peer, transport: transport) }
        await transport.close()

        for device in peer.devices {
            let entry = try #require(seen[device.address], "\(device.name) not seen")
            #expect(entry.connectable == device.connectable, "\(device.name)")
            #expect(Hex.encode(entry.advertisingData) == device.advertisingData, "\(device.name)")
            let data = AdvertisingData(decoding: entry.advertisingData)
            let response = AdvertisingData(decoding: entry.scanResponseData ?? [])
            let name = data.localName ?? response.localName
            #expect(name == device.advertisedName, "\(device.name)")
            #expect(data.serviceUUIDs.map(\.description) == device.services, "\(device.name)")
            #expect(data.manufacturerData.map { [$0.companyID] } == device.manufacturerData.map { [$0.company] })
            #expect(data.manufacturerData.map { Array($0.data) } == device.manufacturerData.map(\.bytes))
            #expect((data.error != nil) == (device.malformed == true), "\(device.name)")
            if device.scanResponse {
                #expect(Hex.encode(entry.scanResponseData ?? [0xFF]) == device.scanResponseData, "\(device.name)")
            }
        }
        let thermo = try #require(peer.devices.first { $0.name == "rawble-thermo" })
        let thermoResponse = AdvertisingData(decoding: seen[thermo.address]?.scanResponseData ?? [])
        #expect(thermoResponse.localName == "rawble-thermo")
    }

    @Test func peerServesTheSameControllerOnAUnixSocket() async throws {
        let path = "/tmp/rawble-bumble-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let peer = try await BumblePeer.start(arguments: ["--unix", path])
        defer { peer.stop() }
        #expect(peer.socketPath == path)
        #expect(peer.port == nil)
        let transport = try await H4StreamTransport.connect(unix: path)
        let seen = try await within(15) { try await Self.scanAll(peer, transport: transport) }
        await transport.close()
        let strap = try #require(peer.devices.first { $0.name == "rawble-strap" })
        let data = AdvertisingData(decoding: try #require(seen[strap.address]).advertisingData)
        #expect(data.localName == "rawble-strap")
    }

    @Test func stopEndsTheProcessAndNothingWasNotifiedWithoutASubscriber() async throws {
        let peer = try await BumblePeer.start(arguments: ["--no-standard", "--extra", "2"])
        #expect(peer.devices.map(\.name) == ["rawble-adv-0001", "rawble-adv-0002"])
        #expect(kill(peer.pid, 0) == 0)
        peer.stop()
        #expect(kill(peer.pid, 0) == -1)
        #expect(try peer.sentHeartRateValues().isEmpty)
        peer.stop()  // idempotent
    }

    @Test func aScriptThatDiesBeforeReadyIsReportedWithItsLastStderrLine() async throws {
        await #expect {
            _ = try await BumblePeer.start(arguments: ["--no-such-option"], readyTimeout: .seconds(20))
        } throws: { error in
            guard case .exitedBeforeReady(let status, let line) = error as? BumblePeerError else { return false }
            return status == 2 && line.contains("--no-such-option")
        }
    }
}
