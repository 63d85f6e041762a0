import Foundation
import RawbleTestSupport
import RawbleTransport
import RawbleWire
import Testing

/// `Scripts/bumble-central` (Bumble's own GATT client on the fixture's link), proven before
/// rawble's GATT server exists: against Bumble's strap and lab, and against a host on a served
/// port that plays a (minimal) server by hand, as rawble's peripheral will.
@Suite("Fixture: Bumble central", .serialized,
       .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct BumbleCentralTests {
    static let labStream = "72617762-6C65-4C61-6200-000000000004"
    static let labWrite = "72617762-6C65-4C61-6200-000000000003"
    static let labLongRead = "72617762-6C65-4C61-6200-000000000002"

    @Test func theCentralDiscoversReadsAndReceivesTheStrapsNotificationsAndWritesItsControlPoint() async throws {
        let central = try await BumbleCentral.start(
            target: "rawble-strap", arguments: ["--strap-only", "--hr-count", "5", "--hr-interval", "0.05"], count: 5,
            writes: [.init(target: "2A39", value: [0x01]), .init(target: "2A39", value: [0x02])])
        defer { central.stop() }
        let done = try await central.finished()
        #expect(done.doneReason == "count")
        #expect(done.values == 5)
        let events = central.events
        let strap = try #require(central.peer.devices.first { $0.name == "rawble-strap" })
        let handles = try #require(strap.heartRate?.handles)

        let found = try #require(events.first { $0.event == "found" })
        #expect(found.address == strap.address && found.addressType == "random" && found.name == "rawble-strap")
        #expect(events.contains { $0.event == "mtu" && $0.mtu == 517 })
        let services = try #require(events.first { $0.event == "discovered" }?.services)
        let heartRate = try #require(services.first { $0.uuid == "180D" })
        #expect(heartRate.characteristic("2A37")?.value == handles.measurement)
        #expect(heartRate.characteristic("2A37")?.descriptor("2902") == handles.measurementCCCD)
        #expect(heartRate.characteristic("2A39")?.value == handles.controlPoint)
        #expect(Set(services.map(\.uuid)).isSuperset(of: ["1800", "1801", "180D", "180A", "180F"]))

        func read(_ uuid: String) -> [UInt8]? {
            events.first { $0.event == "read" && $0.uuid == uuid && $0.descriptor == false }?.bytes
        }
        #expect(read("2A38") == [0x01])
        #expect(read("2A19") == [87])
        #expect(read("2A29") == Array("rawble-sim".utf8))
        #expect(read("2A24") == Array("HRM-1".utf8))

        #expect(events.contains { $0.event == "subscribed" && $0.uuid == "2A37" && $0.mode == "notification" })
        let received = central.receivedValues.filter { $0.uuid == "2A37" }
        #expect(received.allSatisfy { $0.event == "notification" && $0.handle == handles.measurement })
        let sent = try central.peer.sentHeartRateValues()
        #expect(received.compactMap(\.bytes) == Array(sent.prefix(5)))
        #expect(received.count == 5)

        #expect(events.contains { $0.event == "write" && $0.uuid == "2A39" && $0.bytes == [0x01] && $0.withResponse == true })
        let refused = try #require(events.first { $0.event == "error" && $0.during == "write" })
        #expect(refused.attError == 0x80 && refused.handle == handles.controlPoint)
        let log = try central.peer.heartRateLog()
        #expect(log.contains { if case .energyReset = $0 { true } else { false } })
        #expect(log.contains { if case .controlPointRefused(_, [0x02]) = $0 { true } else { false } })
        #expect(central.malformedLines.isEmpty)
    }

    @Test func theCentralSubscribesWithIndicationsWhenAskedAndReadsLongValuesAndIncludes() async throws {
        let central = try await BumbleCentral.start(
            target: "rawble-lab",
            arguments: ["--no-standard", "--lab", "--stream-count", "3", "--stream-rate", "0", "--hr-count", "0"],
            count: 3, indicate: true)
        defer { central.stop() }
        let done = try await central.finished()
        #expect(done.doneReason == "count")
        let events = central.events
        let lab = try #require(central.peer.devices.first { $0.name == "rawble-lab" })
        let handles = try #require(lab.handles)

        #expect(events.contains { $0.event == "subscribed" && $0.uuid == Self.labStream && $0.mode == "indication" })
        #expect(events.contains { $0.event == "subscribed" && $0.uuid == "2A05" && $0.mode == "indication" })
        #expect(events.contains { $0.event == "subscribed" && $0.uuid == "2A19" && $0.mode == "notification" })
        let values = central.receivedValues
        #expect(values.map(\.event) == ["indication", "indication", "indication"])
        #expect(values.allSatisfy { $0.handle == handles.stream })
        let expected: [[UInt8]] = (0..<3).map { counter in
            [UInt8(counter), 0, 0, 0] + (0..<16).map { UInt8((counter + $0) & 0xFF) }
        }
        #expect(values.compactMap(\.bytes) == expected)
        #expect(values.map(\.index) == [0, 1, 2])

        let long = events.first { $0.event == "read" && $0.uuid == Self.labLongRead }
        #expect(long?.bytes == (0..<300).map { UInt8($0 % 256) })
        let services = try #require(events.first { $0.event == "discovered" }?.services)
        let labService = try #require(services.first { $0.uuid == "72617762-6C65-4C61-6200-000000000001" })
        #expect(labService.includes.map(\.uuid) == ["180F"])
        let userDescriptions = events.filter { $0.event == "read" && $0.descriptor == true && $0.uuid == "2901" }
        #expect(Set(userDescriptions.compactMap(\.bytes)) == [Array("lab write".utf8), Array("lab stream".utf8)])
    }

    @Test func requestsOnStdinWriteAndReadAfterDiscoveryAndEndTheRun() async throws {
        let central = try await BumbleCentral.start(
            target: "rawble-lab", arguments: ["--no-standard", "--lab", "--stream-count", "0", "--hr-count", "0"],
            wait: true)
        defer { central.stop() }
        _ = try await central.event { $0.event == "subscribed" && $0.uuid == Self.labStream }
        #expect(central.write(Self.labWrite, value: [1, 2, 3]))
        let written = try await central.event { $0.event == "write" && $0.uuid == Self.labWrite }
        #expect(written.bytes == [1, 2, 3] && written.withResponse == true)
        #expect(try central.peer.completedWrites().map(\.bytes) == [[1, 2, 3]])
        #expect(central.write(Self.labWrite, value: [9], withResponse: false))
        _ = try await central.event { $0.event == "write" && $0.bytes == [9] && $0.withResponse == false }
        #expect(central.read(Self.labWrite))
        let read = try await central.event { $0.event == "read" && $0.uuid == Self.labWrite && $0.bytes == [9] }
        #expect(read.handle == central.peer.devices.first { $0.name == "rawble-lab" }?.handles?.write)
        #expect(central.end())
        let done = try await central.finished()
        #expect(done.doneReason == "complete")
    }

    @Test func aTargetNobodyAdvertisesEndsTheRunAtTheTimeoutWithoutAConnection() async throws {
        let central = try await BumbleCentral.start(target: "nobody-here", arguments: ["--strap-only"], timeout: 1.5)
        defer { central.stop() }
        let done = try await central.finished()
        #expect(done.doneReason == "timeout")
        #expect(central.events.map(\.event) == ["scanning", "done"])
    }

    /// What rawble's peripheral will face: the central finds a host advertising on a served port
    /// of the link by name, connects, and its ATT requests reach that host as ACL data; a
    /// by-hand server (MTU answered, every other request "Attribute Not Found") lets it finish.
    @Test func theCentralReachesAHostOnAServedPortAndDiscoversItsEmptyDatabase() async throws {
        let central = try await BumbleCentral.start(target: "fixture-gatt", arguments: ["--no-standard"], ports: 2,
                                                    timeout: 20)
        defer { central.stop() }
        let served = central.peer.controllers[1]
        let host = try await LinkHost.open(served)
        let name = Array("fixture-gatt".utf8)
        try await host.advertise(type: .connectableUndirected,
                                 data: [0x02, 0x01, 0x06, UInt8(name.count + 1), 0x09] + name, scanResponse: [])
        let found = try await central.event { $0.event == "found" }
        #expect(found.address == served.publicAddress && found.addressType == "public")
        let connection = try await host.connectionComplete()
        #expect(connection.role == .peripheral)
        #expect(connection.peerAddress.description == "F0:CE:17:4A:00:01")

        var cursor = 0
        var requests: [[UInt8]] = []
        while true {
            let next = try await host.aclOrDisconnection(from: cursor, seconds: 20)
            guard let packet = next.packet else { break }  // the central is done and left
            cursor = next.next
            let payload = Array(packet.payload)
            guard payload.count >= 5, payload[2] == 0x04, payload[3] == 0x00 else { continue }  // ATT, CID 4
            let pdu = Array(payload[4...])
            requests.append(pdu)
            let answer: [UInt8]
            switch pdu[0] {
            case 0x02: answer = [0x03, 0x17, 0x00]  // Exchange MTU: 23
            case 0x52, 0x12, 0x1E: continue  // commands and confirmations: no answer
            default: answer = [0x01, pdu[0], pdu.count >= 3 ? pdu[1] : 0, pdu.count >= 3 ? pdu[2] : 0, 0x0A]
            }
            try await host.sendACL(handle: connection.connectionHandle,
                                   payload: [UInt8(answer.count), 0x00, 0x04, 0x00] + answer)
        }
        let done = try await central.finished()
        #expect(done.doneReason == "complete")
        #expect(requests.first == [0x02, 0x05, 0x02])  // Exchange MTU Request, 517
        #expect(requests.contains { $0.first == 0x10 })  // Read By Group Type Request (primary services)
        #expect(central.events.first { $0.event == "mtu" }?.mtu == 23)
        #expect(central.events.first { $0.event == "discovered" }?.services == [])
        await host.close()
    }
}
