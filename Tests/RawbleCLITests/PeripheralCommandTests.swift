import Foundation
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

@testable import rawble

/// `rawble peripheral hr|echo` against Bumble's GATT client (`Scripts/bumble-central`), the
/// independent check of the server, on Bumble's virtual link; rawble's own `hr` against it is
/// ``PeripheralAndCentralTests``, on a link played in the test process.
@Suite("rawble peripheral", .serialized,
       .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct PeripheralCommandTests {
    static let echoService = "72617762-6C65-4543-484F-000000000000"
    static let echoNotifying = "72617762-6C65-4543-484F-000000000001"
    static let echoWritable = "72617762-6C65-4543-484F-000000000002"

    /// Runs `rawble peripheral ARGUMENTS --json` until its stdout has `disconnections`
    /// "disconnected" events, then interrupts it (Ctrl-C), as a person ends it.
    static func peripheral(_ arguments: [String], disconnections: Int = 1,
                           environment: [String: String] = [:]) async throws -> CLIResult {
        try await onOwnThread {
            try CLI.runBlocking(
                ["peripheral"] + arguments + ["--json"], environment: environment,
                trigger: CLI.Trigger(
                    ready: { stdout, _ in stdout.components(separatedBy: "\"event\":\"disconnected\"").count > disconnections },
                    readyLimit: .seconds(90), action: { kill($0, SIGINT) }),
                limit: .seconds(120))
        }
    }

    static func events(_ result: CLIResult) -> [[String: Any]] {
        result.stdout.split(separator: "\n").compactMap { try? CLI.jsonObject(String($0)) }
    }

    @Test("one user's peripheral and central (one state folder) on two controllers of one link: each adapter has its own address, so the central reaches the peripheral and gets its measurements (issue 39); with public addresses and without",
          arguments: [false, true])
    func oneUserTwoAdapters(withoutPublicAddresses: Bool) async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let environment = state.environment
        // Without: both report 00:00:00:00:00:00, as Bumble's one controller and many UART firmwares do.
        let addresses = withoutPublicAddresses ? ["--controller-address", "00:00:00:00:00:00", "--controller-address", "00:00:00:00:00:00"] : []
        // On Bumble's link, which routes a connection by address: with one address for both
        // adapters (the bug), the central reached itself. (The in-process link would connect
        // them anyway: it is no proof of this.)
        let peer = try await BumblePeer.start(arguments: ["--no-standard"] + addresses, ports: 2)
        defer { peer.stop() }
        async let strapRun = Self.peripheral(["hr", "--transport", peer.transports[0], "--rate", "20", "--name", "ci-strap"],
                                             environment: environment)
        let central = try await onOwnThread {
            try CLI.runBlocking(["hr", "ci-strap", "--transport", peer.transports[1], "--count", "3", "--json", "--timeout", "20"],
                                environment: environment, limit: .seconds(90))
        }
        let strap = try await strapRun
        #expect(central.status == 0, "\(central.stderr)")
        #expect(strap.status == 0, "\(strap.stderr)")
        #expect(Self.events(central).filter { $0["event"] as? String == "measurement" }.count == 3, "\(central.stdout)")

        let folder = state.root.appendingPathComponent("state/rawble")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("identity") }
        let identities = try files.map { try #require(try LocalIdentity.readFile(folder.appendingPathComponent($0).path)) }
        #expect(identities.count == 2 && Set(identities.map(\.address)).count == 2, "one identity per adapter: \(files)")
        let advertised = try #require(Self.events(strap).first { $0["event"] as? String == "advertising" }?["address"] as? String)
        #expect(identities.contains { $0.address.description == advertised }, "the peripheral advertised from its identity")
        let connected = try #require(Self.events(central).first { $0["event"] as? String == "connected" })
        #expect(connected["address"] as? String == advertised)
    }

    @Test("Bumble's GATT client against rawble peripheral hr: every service discovered and read, notifications that decode, the Control Point refusing 0x02 with 0x80 and taking 0x01")
    func bumbleReadsThePeripheralStrap() async throws {
        let central = try await BumbleCentral.start(
            target: "rawble-hr", arguments: ["--no-standard"], ports: 2, count: 5, timeout: 40,
            writes: [.init(target: "2A39", value: [0x02]), .init(target: "2A39", value: [0x01])])
        defer { central.stop() }
        let strap = try await Self.peripheral(["hr", "--transport", central.peer.controllers[1].transport, "--rate", "10"])
        let done = try await central.finished()
        #expect(done.doneReason == "count", "\(central.events)")
        #expect(strap.status == 0, "\(strap.stderr)")
        let events = central.events
        let services = try #require(events.first { $0.event == "discovered" }?.services)
        #expect(Set(services.map(\.uuid)) == ["1800", "1801", "180D", "180A", "180F"])
        func read(_ uuid: String) -> [UInt8]? {
            events.first { $0.event == "read" && $0.uuid == uuid && $0.descriptor == false }?.bytes
        }
        #expect(read("2A00") == Array("rawble-hr".utf8))
        #expect(read("2A01") == [0x41, 0x03])
        #expect(read("2A38") == [0x01])
        #expect(read("2A19") == [100])
        #expect(read("2A29") == Array("rawble".utf8))
        #expect(events.contains { $0.event == "read" && $0.uuid == "2904" && $0.descriptor == true })
        let received = central.receivedValues.filter { $0.uuid == "2A37" }
        #expect(received.count == 5)
        for value in received {
            #expect(value.event == "notification")
            #expect(throws: Never.self) { try HeartRateMeasurement.decode(value.bytes ?? []) }
        }
        let refused = try #require(events.first { $0.event == "error" && $0.during == "write" })
        #expect(refused.attError == 0x80)
        #expect(events.contains { $0.event == "write" && $0.uuid == "2A39" && $0.bytes == [0x01] })
    }

    @Test("Bumble's GATT client against rawble peripheral echo: the 128-bit service found by its advertisement, the value it writes indicated back, confirmed")
    func bumbleUsesTheEchoService() async throws {
        let central = try await BumbleCentral.start(
            target: "rawble-echo", arguments: ["--no-standard"], ports: 2, count: 1, timeout: 40, indicate: true,
            writes: [.init(target: Self.echoWritable, value: Array("hello".utf8))])
        defer { central.stop() }
        let echo = try await Self.peripheral(["echo", "--transport", central.peer.controllers[1].transport])
        let done = try await central.finished()
        #expect(done.doneReason == "count", "\(central.events)")
        #expect(echo.status == 0, "\(echo.stderr)")
        let services = try #require(central.events.first { $0.event == "discovered" }?.services)
        let service = try #require(services.first { $0.uuid == Self.echoService })
        #expect(service.characteristic(Self.echoNotifying)?.descriptor("2901") != nil)
        #expect(service.characteristic(Self.echoWritable) != nil)
        let received = try #require(central.receivedValues.first { $0.uuid == Self.echoNotifying })
        #expect(received.event == "indication")
        #expect(received.bytes == Array("hello".utf8))
        let reported = Self.events(echo)
        #expect(reported.contains { $0["event"] as? String == "subscribed" && $0["uuid"] as? String == Self.echoNotifying
            && $0["indications"] as? Bool == true })
        #expect(reported.contains { $0["event"] as? String == "written" && $0["value"] as? String == Hex.encode(Array("hello".utf8)) })
    }

    @Test("bad options are one usage line each (64)", arguments: [
        ["peripheral", "hr", "--rate", "0"],
        ["peripheral", "hr", "--rate", "5000"],
        ["peripheral", "echo", "--duration", "-1"],
        ["peripheral", "echo", "--name", String(repeating: "n", count: 249)],
    ])
    func badOptions(arguments: [String]) async throws {
        let result = try await CLI.run(arguments + ["--transport", "tcp:127.0.0.1:9"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count <= 3)
    }
}

/// `rawble peripheral hr` and `rawble hr`, two processes, on two controllers of a
/// ``VirtualLinkSockets`` link played in the test process (rawble against rawble: no Python).
@Suite("rawble peripheral and rawble hr on one link", .serialized)
struct PeripheralAndCentralTests {
    @Test("rawble hr reads rawble peripheral hr over one virtual link: device information, values that decode in every contact state and both formats, the Control Point's reset; the peripheral reports each step of the central")
    func hrReadsThePeripheralStrap() async throws {
        let peer = try VirtualLinkSockets()
        defer { peer.stop() }
        async let strapRun = PeripheralCommandTests.peripheral(["hr", "--transport", peer.transports[0], "--rate", "20", "--name", "ci-strap"])
        let central = try await onOwnThread {
            try CLI.runBlocking(["hr", "ci-strap", "--transport", peer.transports[1], "--count", "30", "--json",
                                 "--reset-energy", "--timeout", "20"], limit: .seconds(90))
        }
        let strap = try await strapRun
        #expect(central.status == 0, "\(central.stderr)")
        #expect(strap.status == 0, "\(strap.stderr)")

        let seen = PeripheralCommandTests.events(central)
        let connected = try #require(seen.first { $0["event"] as? String == "connected" })
        #expect(connected["name"] as? String == "ci-strap")
        #expect(connected["manufacturer"] as? String == "rawble")
        #expect(connected["model"] as? String == "peripheral hr")
        #expect(connected["bodySensorLocation"] as? String == "chest")
        #expect(connected["battery"] as? Int == 100)
        let values = seen.filter { $0["event"] as? String == "measurement" }
        #expect(values.count == 30)
        let raws = try values.map { try Hex.decode(try #require($0["raw"] as? String)) }
        let decoded = try raws.map { try HeartRateMeasurement.decode($0) }
        #expect(decoded.allSatisfy { (55...170).contains($0.bpm) })
        #expect(Set(decoded.map(\.contact)) == [.unsupported, .notDetected, .detected])
        #expect(Set(decoded.map { $0.flags.contains(.heartRateIsUInt16) }) == [false, true])
        #expect(decoded.contains { $0.energyExpended != nil } && decoded.contains { $0.energyExpended == nil })

        let reported = PeripheralCommandTests.events(strap).map { $0["event"] as? String ?? "?" }
        #expect(reported == ["advertising", "connected", "subscribed", "written", "unsubscribed", "disconnected"]
                || reported == ["advertising", "connected", "written", "subscribed", "unsubscribed", "disconnected"],
                "\(strap.stdout)")
        let written = try #require(PeripheralCommandTests.events(strap).first { $0["event"] as? String == "written" })
        #expect(written["uuid"] as? String == "2A39" && written["value"] as? String == "01")
        let address = try #require(PeripheralCommandTests.events(strap).first { $0["event"] as? String == "advertising" }?["address"] as? String)
        #expect(connected["address"] as? String == address)
    }
}
