import Foundation
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// `rawble ecg` with several Polar H10s at once (issue 41), against three simulated H10s in
/// Bumble's fixture (`bumble-peer --h10s 3`: each its own seeded ECG, its frames' samples in
/// its log lines, tagged with its address).
@Suite("rawble ecg with several H10s", .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct ECGGroupTests {
    static let names = (1...3).map { "Polar H10 5EED000\($0)" }
    static let addresses = (1...3).map { "C0:B1:E0:00:02:0\($0)" }

    /// The ECG samples each H10 sent (its logged frames, in order), by address.
    static func sent(_ peer: BumblePeer) throws -> [String: [Int]] {
        var sent: [String: [Int]] = [:]
        for line in try ECGCommandTests.peerLog(peer) where line["kind"] as? String == "h10-frame" && line["measurement"] as? String == "ecg" {
            guard let address = line["address"] as? String, let samples = line["samples"] as? [Int] else { continue }
            sent[address, default: []] += samples
        }
        return sent
    }

    @Test("ecg --all --max 3 --count 650 --json --csv --jsonl '{name}': each H10 on its own link, exactly the samples it sent (none lost or repeated), every event naming its strap; one H10 that stops its streams ends only its own; report reports each")
    func followsThreeH10s() async throws {
        let directory = try ECGCommandTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let csv = directory.appendingPathComponent("team.csv").path
        let perStrap = directory.appendingPathComponent("ecg-{name}.jsonl").path
        // The second H10 stops its streams itself 3 s after they started (≈ 390 samples).
        let peer = try await BumblePeer.start(arguments: ["--no-standard", "--h10s", "3", "--h10-stop-after", "3", "--h10-stops", "2"])
        defer { peer.stop() }
        let result = try await CLI.run(["ecg", "--all", "--max", "3", "--count", "650", "--no-reconnect", "--json",
                                        "--csv", csv, "--jsonl", perStrap, "--transport", peer.transport])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let events = try result.stdoutLines.map(CLI.jsonObject)
        #expect(events.allSatisfy { $0["event"] as? String == "status" || $0["address"] is String },
                "an event without its strap: \(result.stdout.prefix(2000))")
        let sent = try Self.sent(peer)
        var received: [String: [Int]] = [:]
        for (name, address) in zip(Self.names, Self.addresses) {
            let connected = events.filter { $0["event"] as? String == "connected" && $0["address"] as? String == address }
            #expect(connected.count == 1 && connected.first?["name"] as? String == name, "\(name): \(connected)")
            let own = events.filter { $0["event"] as? String == "ecg" && $0["address"] as? String == address }
            #expect(own.allSatisfy { $0["name"] as? String == name })
            received[address] = own.flatMap { $0["uV"] as? [Int] ?? [] }
            let samples = received[address] ?? []
            let theirs = sent[address] ?? []
            // The H10's own samples in its own order: a prefix of what it sent, nothing lost or repeated.
            #expect(!samples.isEmpty && samples == Array(theirs.prefix(samples.count)),
                    "\(name): \(samples.count) received, \(theirs.count) sent")
        }
        // The two that streamed on reached --count; the one that stopped ended alone, with a
        // line naming it, after some samples.
        #expect(received[Self.addresses[0]]?.count == 650)
        #expect(received[Self.addresses[2]]?.count == 650)
        let stopped = received[Self.addresses[1]]?.count ?? 0
        #expect(stopped > 0 && stopped < 650, "\(stopped) samples from the H10 that stopped")
        let failure = events.first { $0["event"] as? String == "error" }
        #expect(failure?["address"] as? String == Self.addresses[1], "\(String(describing: failure))")
        #expect((failure?["message"] as? String)?.contains("stopped ecg itself") == true, "\(String(describing: failure))")
        // The other H10s' streams were stopped by rawble, the second's by itself.
        let stops = try ECGCommandTests.peerLog(peer).filter { $0["kind"] as? String == "h10-stop" }
        #expect(stops.filter { $0["address"] as? String == Self.addresses[1] }.map { $0["by"] as? String } == ["device"], "\(stops)")

        // One CSV file with strap columns: each H10's rows are its samples.
        let lines = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.first == "time,strap,strap_name,device_time_ns,type,uV,x_mG,y_mG,z_mG,raw")
        let rows = lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows.allSatisfy { $0.count == 10 && Self.addresses.contains($0[1]) })
        for (name, address) in zip(Self.names, Self.addresses) {
            let ecg = rows.filter { $0[1] == address && $0[4] == "ecg" }
            #expect(ecg.allSatisfy { $0[2] == name })
            #expect(ecg.compactMap { Int($0[5]) } == received[address], "\(name) in the CSV")
            // Its own JSON lines file, every line naming it.
            let path = directory.appendingPathComponent("ecg-\(name.replacing(" ", with: "-")).jsonl").path
            let own = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map { try CLI.jsonObject(String($0)) }
            #expect(own.allSatisfy { $0["address"] as? String == address && $0["name"] as? String == name })
            #expect(own.filter { $0["type"] as? String == "ecg" }.compactMap { $0["uV"] as? Int } == received[address])
        }

        // rawble report of the shared file: each H10 on its own.
        let report = try await CLI.run(["report", csv])
        #expect(report.status == 0, "\(report.stderr)")
        #expect(report.stdout.hasPrefix("\(csv): 3 straps\n"), "\(report.stdout)")
        for (name, address) in zip(Self.names, Self.addresses) {
            #expect(report.stdout.contains("\nstrap \(name) (\(address))\n"), "\(report.stdout)")
        }
        let json = try await CLI.run(["report", csv, "--json"])
        let object = try CLI.jsonObject(json.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        let reported = try #require(object["straps"] as? [[String: Any]])
        // In the order each first appears in the file.
        #expect(reported.compactMap { $0["address"] as? String }.sorted() == Self.addresses, "\(reported)")
        for strap in reported {
            let address = try #require(strap["address"] as? String)
            #expect(strap["ecgSamples"] as? Int == received[address]?.count, "\(strap)")
        }
    }

    @Test("ecg A B C --count 650 --json: the H10s named, by name; one that stops its streams is connected again after a pause and resumes after a gap, its own samples whole, while the others stream on unbroken")
    func namedH10sWithOneThatStops() async throws {
        let peer = try await BumblePeer.start(arguments: ["--no-standard", "--h10s", "3", "--h10-stop-after", "3", "--h10-stops", "2"])
        defer { peer.stop() }
        let result = try await CLI.run(["ecg"] + Self.names + ["--count", "650", "--json", "--transport", peer.transport])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let events = try result.stdoutLines.map(CLI.jsonObject)
        let sent = try Self.sent(peer)
        for (index, address) in Self.addresses.enumerated() {
            let own = events.filter { $0["address"] as? String == address }
            let kinds = own.compactMap { $0["event"] as? String }
            let samples = own.filter { $0["event"] as? String == "ecg" }.flatMap { $0["uV"] as? [Int] ?? [] }
            #expect(samples.count == 650, "\(Self.names[index]): \(samples.count) samples")
            #expect(samples == Array((sent[address] ?? []).prefix(samples.count)), "\(Self.names[index]): not the samples it sent")
            let stops = index == 1
            #expect(kinds.filter { $0 == "connected" }.count == (stops ? 2 : 1), "\(Self.names[index]): \(Set(kinds))")
            #expect(kinds.contains("gap") == stops && kinds.contains("stopped") == stops, "\(Self.names[index]): \(Set(kinds))")
        }
    }

    @Test("bad group options: one line each, status 64", arguments: [
        (["ecg", "--all", "Polar H10 5EED0001"], "--all follows every strap in range"),
        (["ecg", "--max", "3"], "--max goes with --all"),
        (["ecg", "--all", "--duration", "5"], "--count or --duration with --all needs --max"),
        (["ecg", "--csv", "e-{address}.csv"], "{name} and {address} in a file name go with several straps"),
    ])
    func badOptions(arguments: [String], message: String) async throws {
        let result = try await CLI.run(arguments + ["--transport", "unix:/nonexistent"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }
}
