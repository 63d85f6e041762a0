import Foundation
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

/// `rawble hr` with several straps (issue 41): three `rawble peripheral hr` straps and the
/// central on one ``VirtualLinkSockets`` link, played in the test process.
@Suite("rawble hr with several straps", .serialized)
struct HeartRateGroupTests {
    /// Starts `names.count` peripheral straps on controllers 0…n-1 of `link`; each ends at its
    /// central's first disconnection.
    private static func straps(_ names: [String], on link: VirtualLinkSockets) -> [Task<CLIResult, any Error>] {
        names.enumerated().map { index, name in
            Task { try await PeripheralCommandTests.peripheral(["hr", "--transport", link.transports[index], "--rate", "20", "--name", name]) }
        }
    }

    @Test("hr A B C --count 10 --json --csv: every strap followed at once; each event names its strap; 10 measurements from each, in a file with a strap column")
    func followsThreeNamedStraps() async throws {
        let link = try VirtualLinkSockets(count: 4)
        defer { link.stop() }
        let names = ["ci-strap-a", "ci-strap-b", "ci-strap-c"]
        let straps = Self.straps(names, on: link)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-group-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let csv = directory.appendingPathComponent("team.csv").path
        let perStrap = directory.appendingPathComponent("session-{name}.jsonl").path
        let central = try await onOwnThread {
            try CLI.runBlocking(["hr"] + names + ["--transport", link.transports[names.count], "--count", "10", "--json",
                                                  "--csv", csv, "--jsonl", perStrap, "--timeout", "20"], limit: .seconds(90))
        }
        var peripheralResults: [CLIResult] = []
        for strap in straps { peripheralResults.append(try await strap.value) }
        #expect(central.status == 0, "\(central.stderr)")
        for result in peripheralResults { #expect(result.status == 0, "\(result.stderr.suffix(3000))") }

        let events = PeripheralCommandTests.events(central)
        // Every event after the first match names its strap; the addresses are the straps'.
        let advertised = peripheralResults.compactMap { result in
            PeripheralCommandTests.events(result).first { $0["event"] as? String == "advertising" }?["address"] as? String
        }
        #expect(advertised.count == 3)
        for name in names {
            let connected = events.filter { $0["event"] as? String == "connected" && $0["name"] as? String == name }
            #expect(connected.count == 1, "\(name): \(central.stdout)")
            let address = try #require(connected.first?["address"] as? String)
            #expect(advertised.contains(address))
            let values = events.filter { $0["event"] as? String == "measurement" && $0["address"] as? String == address }
            #expect(values.count == 10, "\(name): \(values.count) measurements")
            #expect(values.allSatisfy { $0["name"] as? String == name })
            // Its own file, every line labelled with it.
            let own = try String(contentsOfFile: directory.appendingPathComponent("session-\(name).jsonl").path, encoding: .utf8)
            let ownLines = own.split(separator: "\n").compactMap { try? CLI.jsonObject(String($0)) }
            #expect(ownLines.count == 10 && ownLines.allSatisfy { $0["address"] as? String == address }, "\(own)")
        }
        #expect(events.filter { $0["event"] as? String == "measurement" }.count == 30)
        #expect(events.allSatisfy { $0["event"] as? String == "status" || $0["address"] != nil }, "an event without its strap: \(central.stdout)")

        let lines = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n")
        #expect(lines.first == "time,strap,strap_name,bpm,contact,energy_expended_kj,rr_intervals_ms,raw")
        #expect(lines.count == 31)
        for name in names {
            #expect(lines.dropFirst().filter { $0.split(separator: ",")[2] == name }.count == 10, "\(name) in \(lines.joined(separator: "\n"))")
        }

        // rawble report of that file: each strap on its own, in text, JSON and one plot.
        let plot = directory.appendingPathComponent("team.svg").path
        let report = try await CLI.run(["report", csv, "--plot", plot])
        #expect(report.status == 0, "\(report.stderr)")
        #expect(report.stdout.hasPrefix("\(csv): 3 straps\n"), "\(report.stdout)")
        for name in names {
            #expect(report.stdout.contains("\nstrap \(name) ("), "\(report.stdout)")
        }
        #expect(report.stdout.components(separatedBy: ", 10 measurements, ").count == 4, "\(report.stdout)")
        let svg = try String(contentsOfFile: plot, encoding: .utf8)
        #expect(svg.components(separatedBy: "<svg ").count == 5, "one document holding a plot per strap")
        for name in names { #expect(svg.contains("team.csv: \(name)")) }
        let json = try await CLI.run(["report", csv, "--json"])
        let object = try CLI.jsonObject(json.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        let reported = try #require(object["straps"] as? [[String: Any]])
        #expect(Set(reported.compactMap { $0["name"] as? String }) == Set(names))
        #expect(reported.count == 3 && reported.allSatisfy { $0["measurements"] as? Int == 10 })
    }

    @Test("hr --all --max 3 --count 5 --json: the three straps in range found by the shared scan and followed, 5 measurements each, each event naming its strap")
    func followsAllStrapsInRange() async throws {
        let link = try VirtualLinkSockets(count: 4)
        defer { link.stop() }
        let names = ["ci-all-1", "ci-all-2", "ci-all-3"]
        let straps = Self.straps(names, on: link)
        let central = try await onOwnThread {
            try CLI.runBlocking(["hr", "--all", "--max", "3", "--transport", link.transports[names.count], "--count", "5",
                                 "--json", "--timeout", "20"], limit: .seconds(90))
        }
        for strap in straps { _ = try await strap.value }
        #expect(central.status == 0, "\(central.stderr)")
        let events = PeripheralCommandTests.events(central)
        for name in names {
            let values = events.filter { $0["event"] as? String == "measurement" && $0["name"] as? String == name }
            #expect(values.count == 5, "\(name): \(central.stdout)")
        }
        #expect(events.filter { $0["event"] as? String == "connected" }.count == 3)
    }

    @Test("hr --all with no strap in range: after 2 s a status event says it waits for heart-rate straps to advertise (never a blank screen); Ctrl-C ends it, status 0")
    func allWithNoStrapSaysWhatItWaitsFor() async throws {
        let link = try VirtualLinkSockets(count: 2)
        defer { link.stop() }
        let central = try await onOwnThread {
            try CLI.runBlocking(["hr", "--all", "--json", "--transport", link.transports[0]],
                                trigger: CLI.Trigger(ready: { stdout, _ in stdout.contains("\"event\":\"status\"") },
                                                     readyLimit: .seconds(30), action: { kill($0, SIGINT) }),
                                limit: .seconds(60))
        }
        #expect(central.reachedReady, "\(central.stdout)\n\(central.stderr)")
        #expect(central.status == 0, "\(central.stderr)")
        let status = try #require(PeripheralCommandTests.events(central).first { $0["event"] as? String == "status" })
        #expect(status["waitingFor"] as? String == "advertising")
        #expect(status["message"] as? String == "waiting for heart-rate straps to advertise", "\(status)")
    }

    @Test("bad group options: one line each, status 64", arguments: [
        (["hr", "--all", "ci-strap-a"], "--all follows every strap in range"),
        (["hr", "--max", "3"], "--max goes with --all"),
        (["hr", "--all", "--count", "5"], "--count with --all needs --max"),
        (["hr", "--all", "--max", "0"], "--max must be between 1 and 64"),
        (["hr", "--csv", "s-{name}.csv"], "{name} and {address} in a file name go with several straps"),
    ])
    func badOptions(arguments: [String], message: String) async throws {
        let result = try await CLI.run(arguments + ["--transport", "unix:/nonexistent"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }
}

/// `rawble hr --all` against Bumble's controller serving ten straps (the fixture's `--straps`):
/// straps that drop and come back while the others stream, and a controller that refuses a
/// fifth link.
@Suite("rawble hr with ten straps on Bumble's controller")
struct HeartRateTenStrapsTests {
    @Test("hr --all --max 10 --count 12: all ten followed; two drop and reconnect while the others stream; per strap every value once, in order, as the strap sent it")
    func tenStrapsWithDrops() async throws {
        let peer = try await BumblePeer.start(arguments: [
            "--strap-only", "--straps", "10", "--hr-interval", "0.05",
            "--strap-drops", "2,5", "--hr-disconnect-after", "5", "--hr-disconnects", "1",
        ])
        defer { peer.stop() }
        let result = try await CLI.run(["hr", "--all", "--max", "10", "--count", "12", "--json", "--timeout", "20",
                                        "--transport", peer.transport])
        #expect(result.status == 0, "\(result.stderr)")
        let events = result.stdout.split(separator: "\n").compactMap { try? CLI.jsonObject(String($0)) }
        let straps = peer.straps
        #expect(straps.count == 10)
        for strap in straps {
            let address = strap.address
            let own = events.filter { $0["address"] as? String == address }
            let raws = own.filter { $0["event"] as? String == "measurement" }.compactMap { $0["raw"] as? String }
            let sent = try peer.sentHeartRateMeasurements(strap: address).map { Hex.encode($0.bytes) }
            #expect(raws.count == 12, "\(strap.name): \(raws.count) measurements")
            #expect(raws == Array(sent.prefix(raws.count)), "\(strap.name): every value once, in order")
            let dropped = own.filter { $0["event"] as? String == "disconnected" }.count
            let shouldDrop = ["rawble-strap-02", "rawble-strap-05"].contains(strap.name)
            #expect(dropped == (shouldDrop ? 1 : 0), "\(strap.name) disconnected \(dropped) times")
            #expect(own.filter { $0["event"] as? String == "connected" }.count == (shouldDrop ? 2 : 1))
        }
    }

    @Test("a controller that refuses a fifth link: one line naming its status, the links it holds and the fix; the four others stream to --count")
    func controllerRefusesTheFifthLink() async throws {
        let peer = try await BumblePeer.start(arguments: [
            "--strap-only", "--straps", "5", "--hr-interval", "0.05", "--max-links", "4",
        ])
        defer { peer.stop() }
        let names = (1...5).map { String(format: "rawble-strap-%02d", $0) }
        // Five named straps; --count would never end for the refused one: Ctrl-C after the four
        // reached it (the run is a live view, as a class's would be).
        let result = try await onOwnThread {
            try CLI.runBlocking(["hr"] + names + ["--count", "8", "--json", "--timeout", "20", "--transport", peer.transport],
                                trigger: CLI.Trigger(
                                    ready: { stdout, _ in
                                        stdout.components(separatedBy: "\"event\":\"measurement\"").count > 32
                                            && stdout.contains("\"event\":\"error\"")
                                    },
                                    readyLimit: .seconds(60), action: { kill($0, SIGINT) }),
                                limit: .seconds(90))
        }
        #expect(result.reachedReady, "\(result.stdout)\n\(result.stderr)")
        let events = result.stdout.split(separator: "\n").compactMap { try? CLI.jsonObject(String($0)) }
        let errors = events.filter { $0["event"] as? String == "error" }
        let message = try #require(errors.first?["message"] as? String, "\(result.stdout)")
        #expect(message.contains("0x0D") && message.contains("4") && message.contains("another adapter"), "\(message)")
        #expect(!message.contains("\n"))
        var streamed = 0
        for name in names {
            let values = events.filter { $0["event"] as? String == "measurement" && $0["name"] as? String == name }
            if values.count == 8 { streamed += 1 }
        }
        #expect(streamed == 4, "four straps reached --count: \(result.stdout)")
    }
}
