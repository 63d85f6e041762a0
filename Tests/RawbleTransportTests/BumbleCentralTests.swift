import Foundation
import RawbleTestPeers
import RawbleTestSupport
import RawbleTransport
import RawbleWire
import Testing

/// `Scripts/bumble-central` (Bumble's own GATT client on the fixture's link), proven before
/// rawble's GATT server exists: against Bumble's strap and lab, and against a host on a served
/// port that plays a (minimal) server by hand, as rawble's peripheral will.
@Suite("Fixture: Bumble central", .serialized,
       .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
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
        // The whole database as discovered is the one the lab laid out (static values aside).
        let laidOut = try #require(lab.gatt).map { service in
            var service = service
            service.characteristics = service.characteristics.map { characteristic in
                var characteristic = characteristic
                characteristic.data = nil
                characteristic.descriptors = characteristic.descriptors.map { descriptor in
                    var descriptor = descriptor
                    descriptor.data = nil
                    return descriptor
                }
                return characteristic
            }
            return service
        }
        #expect(services == laidOut)
        let userDescriptions = events.filter { $0.event == "read" && $0.descriptor == true && $0.uuid == "2901" }
        #expect(Set(userDescriptions.compactMap(\.bytes)) == [Array("lab write".utf8), Array("lab stream".utf8), Array("lab temperature".utf8)])
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

    /// Two centrals connected at once to one host on a served port (it advertises again after
    /// the first connection, as rawble's peripheral will to accept a second central).
    @Test func twoCentralsConnectToOneHostAtOnceAndEachDiscoversItsDatabase() async throws {
        let central = try await BumbleCentral.start(target: "fixture-two", arguments: ["--no-standard"], ports: 2,
                                                    centrals: 2, timeout: 20, mtu: 0)
        defer { central.stop() }
        let host = try await LinkHost.open(central.peer.controllers[1])
        let name = Array("fixture-two".utf8)
        let data = [0x02, 0x01, 0x06, UInt8(name.count + 1), 0x09] + name
        try await host.advertise(type: .connectableUndirected, data: data, scanResponse: [])
        let first = try await host.connectionComplete(from: 0)
        try await host.expectSuccess(.leSetAdvertisingEnable(true))  // Bumble stopped it at the connection
        let second = try await host.connectionComplete(from: first.next)
        #expect(first.event.peerAddress.description == "F0:CE:17:4A:00:01")
        #expect(second.event.peerAddress.description == "F0:CE:17:4A:00:02")
        #expect(first.event.connectionHandle != second.event.connectionHandle)
        // Both links are up before the server answers anything: central 1 is still discovering.
        #expect(!central.events.contains { $0.event == "discovered" })

        let server = HandServer(attributes: [.init(handle: 1, type: 0x2800, value: [0x0F, 0x18])])
        _ = try await server.serve(host, connections: 2)
        for number in 1...2 {
            let done = try await central.finished(central: number)
            #expect(done.doneReason == "complete", "central \(number)")
            let discovered = central.events.first { $0.event == "discovered" && $0.central == number }
            #expect(discovered?.services?.map(\.uuid) == ["180F"], "central \(number)")
        }
        await host.close()
    }

    @Test func theCentralUnsubscribesAtTheEndWhenAskedAndTheStrapSeesItsCCCDWrittenBackToZero() async throws {
        let central = try await BumbleCentral.start(
            target: "rawble-strap", arguments: ["--strap-only", "--hr-count", "50", "--hr-interval", "0.05"],
            count: 2, unsubscribe: true)
        defer { central.stop() }
        let done = try await central.finished()
        #expect(done.doneReason == "count")
        #expect(central.events.contains { $0.event == "unsubscribed" && $0.uuid == "2A37" })
        let subscriptions = try central.peer.heartRateLog().compactMap { entry -> Bool? in
            if case .subscription(_, let notify, _) = entry { notify } else { nil }
        }
        #expect(subscriptions == [true, false])
        #expect(central.receivedValues.allSatisfy { $0.time != nil })
    }

    @Test func aDisconnectRequestEndsTheRunWithReasonDisconnected() async throws {
        let central = try await BumbleCentral.start(target: "rawble-strap", arguments: ["--strap-only"], wait: true)
        defer { central.stop() }
        _ = try await central.event { $0.event == "subscribed" && $0.uuid == "2A37" }
        #expect(central.unsubscribe("2A37"))
        _ = try await central.event { $0.event == "unsubscribed" && $0.uuid == "2A37" }
        #expect(central.disconnect())
        let done = try await central.finished()
        #expect(done.doneReason == "disconnected")
        #expect(central.events.contains { $0.event == "disconnected" && $0.disconnectReason != nil })
    }

    /// Run from a script whose stdin is an empty pipe: the central's run, not stdin's end, ends
    /// the process, and its status says how the run ended.
    @Test func theLauncherRunsTheCentralWholeWithStdinAtEndOfFileAndExitsZeroByCount() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BumbleCentral.scriptPath)
        process.arguments = ["rawble-strap", "--strap-only", "--central-count", "2", "--hr-interval", "0.05",
                             "--lifetime", "60"]
        // A pipe at its end (as from `true | bumble-central ...`); /dev/null cannot be polled,
        // so the peer never watched it.
        let input = Pipe()
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        try input.fileHandleForWriting.close()
        defer { if process.isRunning { process.terminate() } }
        let reader = output.fileHandleForReading
        let data = try await within(seconds: 60) { try await onOwnThread { reader.readToEndRetryingInterrupts() } }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        let done = try lines.compactMap { line -> BumbleCentral.Event? in
            guard line.contains("\"event\"") else { return nil }
            return try JSONDecoder().decode(BumbleCentral.Event.self, from: Data(line.utf8))
        }.last
        #expect(done?.event == "done" && done?.doneReason == "count" && done?.values == 2)
        try await within(seconds: 60) { try await onOwnThread { process.waitUntilExit() } }
        #expect(process.terminationStatus == 0)
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

        let requests = try await HandServer(attributes: []).serve(host)
        let done = try await central.finished()
        #expect(done.doneReason == "complete")
        #expect(requests.first == [0x02, 0x05, 0x02])  // Exchange MTU Request, 517
        #expect(requests.contains { $0.first == 0x10 })  // Read By Group Type Request (primary services)
        #expect(central.events.first { $0.event == "mtu" }?.mtu == 23)
        #expect(central.events.first { $0.event == "discovered" }?.services == [])
        await host.close()
    }

    /// A 128-bit secondary service included by a primary one: the include declaration carries
    /// no UUID (Core Vol 3 Part G 3.2), so the central reads the included service's declaration;
    /// Bumble 0.0.236's own include discovery fails there.
    @Test func theCentralDiscoversA128BitSecondaryServiceThroughItsIncludeAndReadsItsCharacteristic() async throws {
        let central = try await BumbleCentral.start(target: "fixture-include", arguments: ["--no-standard"], ports: 2,
                                                    timeout: 20, mtu: 0)
        defer { central.stop() }
        let served = central.peer.controllers[1]
        let host = try await LinkHost.open(served)
        let name = Array("fixture-include".utf8)
        try await host.advertise(type: .connectableUndirected,
                                 data: [0x02, 0x01, 0x06, UInt8(name.count + 1), 0x09] + name, scanResponse: [])
        #expect(try await host.connectionComplete().role == .peripheral)
        // 72617762-6C65-5345-4300-0000000000AA, little-endian on the wire.
        let secondary: [UInt8] = [0xAA, 0, 0, 0, 0, 0, 0, 0x43, 0x45, 0x53, 0x65, 0x6C, 0x62, 0x77, 0x61, 0x72]
        let server = HandServer(attributes: [
            .init(handle: 1, type: 0x2801, value: secondary),                 // secondary service
            .init(handle: 2, type: 0x2803, value: [0x02, 0x03, 0x00, 0x19, 0x2A]),  // read, value 3, 2A19
            .init(handle: 3, type: 0x2A19, value: [0x42]),
            .init(handle: 4, type: 0x2800, value: [0x0F, 0x18]),              // primary 180F
            .init(handle: 5, type: 0x2802, value: [0x01, 0x00, 0x03, 0x00]),  // includes 1...3, no UUID
        ])
        _ = try await server.serve(host)
        let done = try await central.finished()
        #expect(done.doneReason == "complete")
        let services = try #require(central.events.first { $0.event == "discovered" }?.services)
        #expect(services.map(\.uuid) == ["180F", "72617762-6C65-5345-4300-0000000000AA"])
        #expect(services.map(\.primary) == [true, false])
        let include = try #require(services.first?.includes.first)
        #expect(services.first?.includes.count == 1)
        #expect(include.handle == 5 && include.start == 1 && include.end == 3)
        #expect(include.uuid == "72617762-6C65-5345-4300-0000000000AA")
        #expect(services.last?.characteristics.map(\.value) == [3])
        #expect(central.events.contains { $0.event == "read" && $0.uuid == "2A19" && $0.bytes == [0x42] })
        #expect(!central.events.contains { $0.event == "error" })
        await host.close()
    }
}

/// A GATT server played by hand over a served port's ACL (16-bit attribute types, MTU 23, one
/// entry per response): enough for a central's discovery and reads, as rawble's server will be.
struct HandServer {
    struct Attribute {
        var handle: UInt16
        var type: UInt16
        var value: [UInt8]
    }

    var attributes: [Attribute]

    /// Answers every ATT request, on the connection it came on, until `connections` centrals
    /// have disconnected; the requests.
    func serve(_ host: LinkHost, connections: Int = 1) async throws -> [[UInt8]] {
        var cursor = 0
        var requests: [[UInt8]] = []
        var left = 0
        while true {
            let next = try await host.aclOrDisconnection(from: cursor, seconds: 20)
            cursor = next.next
            guard let packet = next.packet else {  // a central is done and left
                left += 1
                if left == connections { return requests }
                continue
            }
            let payload = Array(packet.payload)
            guard payload.count >= 5, payload[2] == 0x04, payload[3] == 0x00 else { continue }  // ATT, CID 4
            let pdu = Array(payload[4...])
            requests.append(pdu)
            guard let answer = answer(pdu) else { continue }
            try await host.sendACL(handle: packet.handle, payload: [UInt8(answer.count), 0x00, 0x04, 0x00] + answer)
        }
    }

    /// The response to `pdu`, nil for commands and confirmations.
    func answer(_ pdu: [UInt8]) -> [UInt8]? {
        func u16(_ at: Int) -> UInt16 { at + 1 < pdu.count ? UInt16(pdu[at]) | UInt16(pdu[at + 1]) << 8 : 0 }
        func le(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
        func error(_ code: UInt8, _ handle: UInt16) -> [UInt8] { [0x01, pdu[0]] + le(handle) + [code] }
        let range = u16(1)...max(u16(1), u16(3))
        switch pdu.first {
        case 0x02?:  // Exchange MTU
            return [0x03, 0x17, 0x00]
        case 0x10?:  // Read By Group Type
            guard let found = attributes.first(where: { range.contains($0.handle) && $0.type == u16(5) }) else {
                return error(0x0A, u16(1))
            }
            let end = (attributes.first { $0.handle > found.handle && ($0.type == 0x2800 || $0.type == 0x2801) }?.handle)
                .map { $0 - 1 } ?? (attributes.last?.handle ?? found.handle)
            return [0x11, UInt8(4 + found.value.count)] + le(found.handle) + le(end) + found.value
        case 0x08?:  // Read By Type
            guard let found = attributes.first(where: { range.contains($0.handle) && $0.type == u16(5) }) else {
                return error(0x0A, u16(1))
            }
            return [0x09, UInt8(2 + found.value.count)] + le(found.handle) + found.value
        case 0x04?:  // Find Information
            guard let found = attributes.first(where: { range.contains($0.handle) }) else { return error(0x0A, u16(1)) }
            return [0x05, 0x01] + le(found.handle) + le(found.type)
        case 0x0A?:  // Read
            guard let found = attributes.first(where: { $0.handle == u16(1) }) else { return error(0x01, u16(1)) }
            return [0x0B] + found.value
        case 0x12?:  // Write Request: nothing here is writable
            return error(0x03, u16(1))
        case 0x52?, 0xD2?, 0x1E?, nil:  // Write Command, Signed Write Command, Confirmation
            return nil
        default:
            return error(0x06, 0)
        }
    }
}
