import Foundation
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

/// `rawble hr` as a user runs it, against Bumble's simulated strap.
@Suite("rawble hr against Bumble's strap", .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct HeartRateCommandTests {
    /// The `--json` events, those of waits (`status`) aside.
    static func events(_ result: CLIResult) throws -> [[String: Any]] {
        try result.stdoutLinesExceptStatus.map(CLI.jsonObject)
    }

    /// The measurement events' raw values, in order.
    static func raws(_ events: [[String: Any]]) -> [String] {
        events.filter { $0["event"] as? String == "measurement" }.compactMap { $0["raw"] as? String }
    }

    @Test("--json --count: the connected event, then every value of the strap's script decoded by the shared decoder, exactly as sent")
    func wholeScript() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.02"])
        defer { peer.stop() }
        let result = try await CLI.run(["hr", "--json", "--count", "12", "--transport", peer.transport])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let events = try Self.events(result)
        let connected = try #require(events.first)
        #expect(connected["event"] as? String == "connected")
        #expect(connected["name"] as? String == "rawble-strap")
        #expect(connected["manufacturer"] as? String == "rawble-sim")
        #expect(connected["model"] as? String == "HRM-1")
        #expect(connected["bodySensorLocation"] as? String == "chest")
        #expect(connected["battery"] as? Int == 87)
        let sent = try peer.sentHeartRateValues()
        #expect(sent.count >= 12)
        #expect(Self.raws(events) == sent.prefix(12).map { Hex.encode($0) })
        for (event, raw) in zip(events.filter { $0["event"] as? String == "measurement" }, sent) {
            let decoded = try HeartRateMeasurement.decode(raw)
            #expect(event["bpm"] as? Int == Int(decoded.bpm))
            #expect(event["contact"] as? String == decoded.contact.name)
            #expect((event["energyExpended"] as? Int) == decoded.energyExpended.map(Int.init))
            #expect((event["rrIntervals"] as? [Double])?.count == decoded.rrIntervals.count)
            #expect((event["time"] as? String)?.hasSuffix("Z") == true)
        }
    }

    @Test("a controller that lists the extended commands (bumble-peer --extended-controller): rawble's host scans and connects with them, and hr gets every value")
    func extendedController() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.02", "--extended-controller"])
        defer { peer.stop() }
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-ext-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let result = try await CLI.run(["hr", "--json", "--count", "4", "--transport", peer.transport, "--btsnoop", capture])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(Self.raws(try Self.events(result)) == (try peer.sentHeartRateValues()).prefix(4).map { Hex.encode($0) })
        let records = try await CLI.run(["decode", "btsnoop", capture, "--json"])
        let sent = try records.stdoutLines.map(CLI.jsonObject)
            .filter { $0["direction"] as? String == "sent" && $0["type"] as? String == "command" }
            .compactMap { $0["opcode"] as? Int }
        #expect(sent.contains(0x2041) && sent.contains(0x2042), "LE Set Extended Scan Parameters and Enable: \(sent)")
        #expect(sent.contains(0x2043), "LE Extended Create Connection: \(sent)")
        #expect(!sent.contains(0x200B) && !sent.contains(0x200C) && !sent.contains(0x200D), "no legacy scan or connect: \(sent)")
    }

    @Test("--csv and --jsonl get every measurement, one line each, appended")
    func logFiles() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.02"])
        defer { peer.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-hr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let csv = directory.appendingPathComponent("beats.csv").path
        let jsonl = directory.appendingPathComponent("beats.jsonl").path
        let result = try await CLI.run(["hr", "--count", "6", "--csv", csv, "--jsonl", jsonl, "--transport", peer.transport])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        for file in [csv, jsonl] {
            #expect(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int == 0o600, "session files are private")
        }
        let sent = try peer.sentHeartRateValues().prefix(6).map { Hex.encode($0) }
        let csvLines = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(csvLines.first == "time,bpm,contact,energy_expended_kj,rr_intervals_ms,raw")
        #expect(csvLines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).last.map(String.init) } == sent)
        let jsonLines = try String(contentsOfFile: jsonl, encoding: .utf8).split(separator: "\n").map { try CLI.jsonObject(String($0)) }
        #expect(jsonLines.compactMap { $0["raw"] as? String } == sent)
        // The live view printed one line per measurement on stdout.
        #expect(result.stdoutLines.filter { $0.contains("bpm") }.count == 6)
    }

    @Test("a strap that disconnects is found again: every value arrives exactly once, in order, across the reconnection")
    func reconnects() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.02", "--hr-disconnect-after", "5"])
        defer { peer.stop() }
        let result = try await CLI.run(["hr", "--json", "--count", "12", "--transport", peer.transport])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let events = try Self.events(result)
        let kinds = events.compactMap { $0["event"] as? String }
        #expect(kinds.filter { $0 == "connected" }.count == 2, "\(kinds)")
        #expect(kinds.filter { $0 == "disconnected" }.count == 1, "\(kinds)")
        // Between the loss and the new connection, what the run waits for, in order: the pause,
        // the scan, the connect (to the strap that was lost).
        let lost = try #require(kinds.firstIndex(of: "disconnected"))
        let again = try #require(kinds.lastIndex(of: "connected"))
        let waits = events[lost..<again].filter { $0["event"] as? String == "reconnecting" }
        #expect(waits.compactMap { $0["state"] as? String } == ["waiting", "scanning", "connecting"], "\(waits)")
        #expect(waits.first?["seconds"] as? Int == 1, "\(waits)")
        #expect(waits.dropFirst().first?["target"] as? String == "a heart-rate strap", "\(waits)")
        #expect(waits.last?["address"] as? String == events[again]["address"] as? String, "\(waits)")
        #expect(!kinds[..<lost].contains("reconnecting"), "\(kinds)")
        #expect(Self.raws(events) == (try peer.sentHeartRateValues()).prefix(12).map { Hex.encode($0) })
        // Every event carries its time, not only the measurements.
        for event in events {
            #expect((event["time"] as? String)?.hasSuffix("Z") == true, "\(event)")
        }
    }

    @Test("text mode: a strap that disconnects and is found again is one stderr line saying why, the reason said once")
    func reconnectsInText() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.02", "--hr-disconnect-after", "5"])
        defer { peer.stop() }
        let result = try await CLI.run(["hr", "--count", "8", "--transport", peer.transport])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let lost = result.stderrLines.filter { $0.contains("disconnected") }
        #expect(lost.count == 1, "\(result.stderr)")
        #expect(lost.first?.contains("disconnected: Remote User Terminated Connection") == true, "\(result.stderr)")
        // …and what happens next, so a log read later does not look like a hang.
        #expect(lost.first?.hasSuffix("(reconnecting: scanning for a heart-rate strap again in 1 s)") == true,
                "\(result.stderr)")
        #expect(!result.stderr.contains("disconnected: disconnected"), "\(result.stderr)")
        #expect(result.stdoutLines.filter { $0.contains("bpm") }.count == 8)
    }

    @Test("invalid measurements are reported as such, the session goes on, and --count counts valid ones only")
    func invalidValues() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.02", "--hr-invalid"])
        defer { peer.stop() }
        let result = try await CLI.run(["hr", "--json", "--count", "8", "--transport", peer.transport])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let events = try Self.events(result)
        let invalid = events.filter { $0["event"] as? String == "invalid" }
        #expect(!invalid.isEmpty)
        #expect(invalid.allSatisfy { ($0["error"] as? String)?.isEmpty == false && $0["raw"] is String && $0["time"] is String })
        #expect(events.filter { $0["event"] as? String == "measurement" }.count == 8)
        // Every value the strap sent up to the last one shown, valid or not, in order.
        let shown = events.compactMap { $0["event"] as? String == "connected" ? nil : $0["raw"] as? String }
        #expect(shown == (try peer.sentHeartRateValues()).prefix(shown.count).map { Hex.encode($0) })
    }

    @Test("a strap that refuses the subscription (ATT 0xFD) is one line and the peer-error status")
    func subscriptionRefused() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-refuse-cccd"])
        defer { peer.stop() }
        let result = try await CLI.run(["hr", "--count", "1", "--no-reconnect", "--transport", peer.transport])
        #expect(result.status == 76)
        #expect(result.stderrLinesExceptWaits.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("0xFD"), "\(result.stderr)")
    }

    @Test("--reset-energy writes the Control Point and reports the strap's answer")
    func resetEnergy() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.02"])
        defer { peer.stop() }
        let result = try await CLI.run(["hr", "--json", "--count", "2", "--reset-energy", "--transport", peer.transport])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let reset = try Self.events(result).first { $0["event"] as? String == "energyReset" }
        #expect(reset?["ok"] as? Bool == true)
    }

    @Test("Ctrl-C ends the live view cleanly: exit 0, the log complete")
    func interrupted() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.05", "--hr-count", "1000"])
        defer { peer.stop() }
        let jsonl = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-hr-int-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: jsonl) }
        // Ctrl-C once the live view has shown three beats.
        let result = try await CLI.run(["hr", "--jsonl", jsonl, "--transport", peer.transport],
                                       when: { stdout, _ in stdout.split(separator: "\n").filter { $0.contains("bpm") }.count >= 3 })
        #expect(result.reachedReady, "no three beats: \(result.stdout) \(result.stderr)")
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(!result.killedBySignal)
        let logged = try String(contentsOfFile: jsonl, encoding: .utf8).split(separator: "\n").map { try CLI.jsonObject(String($0)) }
        #expect(logged.count >= 3)
        #expect(logged.compactMap { $0["raw"] as? String } == (try peer.sentHeartRateValues()).prefix(logged.count).map { Hex.encode($0) })
    }

    @Test("a strap that never notifies gets a warning after --timeout, and the session stays up until Ctrl-C")
    func silentStrap() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-silent"])
        defer { peer.stop() }
        // Ctrl-C once the warning is shown: the session was still up to receive it.
        let result = try await CLI.runInterrupted(["hr", "--json", "--timeout", "1", "--transport", peer.transport],
                                                  whenStderrContains: "no measurement from rawble-strap")
        #expect(result.reachedReady, "no warning: \(result.stderr)")
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderrLines.count == 1, "\(result.stderr)")
        let events = try Self.events(result)
        #expect(events.first?["event"] as? String == "connected")
        #expect(!events.contains { $0["event"] as? String == "disconnected" }, "\(events)")
    }

    @Test("--no-reconnect: a strap that disconnects is one stderr line (76), the reason said once")
    func noReconnect() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.02", "--hr-disconnect-after", "3"])
        defer { peer.stop() }
        let result = try await CLI.run(["hr", "--no-reconnect", "--transport", peer.transport])
        #expect(result.status == 76, "stderr: \(result.stderr)")
        #expect(result.stderrLinesExceptWaits.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("disconnected: Remote User Terminated Connection"), "\(result.stderr)")
        #expect(!result.stderr.contains("disconnected: disconnected"), "\(result.stderr)")
    }

    @Test("hr NAME that matches no strap says, once and still scanning, which straps it did see")
    func namesTheStrapsSeen() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        let strap = try #require(peer.devices.first { $0.name == "rawble-strap" })
        let result = try await CLI.runInterrupted(["hr", "rawble-strpa", "--transport", peer.transport],
                                                  whenStderrContains: "straps seen")
        #expect(result.reachedReady, "no hint: \(result.stderr)")
        #expect(result.status == 0, "\(result.stderr)")  // hr without --count: Ctrl-C is its end
        #expect(result.stderrLines.count == 1, "one line: \(result.stderr)")
        #expect(result.stderr.hasPrefix("waiting for “rawble-strpa” to advertise ("), "\(result.stderr)")
        #expect(result.stderr.contains("; straps seen: rawble-strap (\(strap.address))"), "\(result.stderr)")
        // The other advertisers are not straps: not named.
        #expect(!result.stderr.contains("rawble-thermo"), "\(result.stderr)")
    }

    @Test("the controller gone in the middle of hr (the simulator killed) is one stderr line and the transport status")
    func controllerGone() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.05", "--hr-count", "1000"])
        defer { peer.stop() }
        let result = try await CLI.run(["hr", "--json", "--transport", peer.transport],
                                       when: { stdout, _ in stdout.contains("\"measurement\"") },
                                       do: { _ in peer.stop() })
        #expect(result.reachedReady, "no measurement: \(result.stdout) \(result.stderr)")
        #expect(result.status == 74, "stderr: \(result.stderr)")
        #expect(result.stderrLines.count == 1, "\(result.stderr)")
    }
}
