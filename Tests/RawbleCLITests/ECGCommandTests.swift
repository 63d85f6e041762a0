import Foundation
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

/// `rawble ecg` as a user runs it, against the simulated Polar H10 in Bumble's fixture
/// (`bumble-peer --h10`: ECG from a known RR series, byte for byte as the specification's
/// examples; its ground truth written to `--h10-truth`).
@Suite("rawble ecg against the simulated Polar H10", .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct ECGCommandTests {
    /// What the simulated H10 wrote down: its ECG loop and where each start began in it.
    struct Truth: Decodable {
        struct Start: Decodable {
            var firstSampleIndex: Int
            var firstFrameTimestamp: UInt64
            var samplesPerFrame: Int
            var mtu: Int
        }
        var ecgMicrovolts: [Int32]
        var ecgStarts: [Start]
        /// The R-peaks' sample indices within the loop (sample i is ecgMicrovolts[i mod N]).
        var rPeakIndices: [Int]
        /// The device time of sample 0; sample i's is timestampBase + floor(i × 1e9 / 130).
        var timestampBase: UInt64

        /// The samples the device sent from `start` on, `count` of them.
        func samples(from start: Start, count: Int) -> [Int32] {
            (0..<count).map { ecgMicrovolts[(start.firstSampleIndex + $0) % ecgMicrovolts.count] }
        }
    }

    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-ecg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func peerLog(_ peer: BumblePeer) throws -> [[String: Any]] {
        try String(contentsOfFile: peer.logPath, encoding: .utf8).split(separator: "\n").map { try CLI.jsonObject(String($0)) }
    }

    @Test("--json --count: connected at MTU ≥ 232, ECG started with the H10's settings, exactly the samples the strap sent, 1/130 s apart; beats at the ECG's own R-peaks; the stream is stopped on the strap before the link goes")
    func jsonSamplesAreTheStrapsOwn() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let truthPath = directory.appendingPathComponent("truth.json").path
        let peer = try await BumblePeer.start(arguments: ["--h10", "--h10-truth", truthPath])
        defer { peer.stop() }
        let result = try await CLI.run(["ecg", "--json", "--count", "1300", "--transport", peer.transport])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let events = try result.stdoutLines.map(CLI.jsonObject)
        let connected = try #require(events.first { $0["event"] as? String == "connected" })
        #expect((connected["mtu"] as? Int ?? 0) >= 232)
        #expect((connected["name"] as? String)?.hasPrefix("Polar H10") == true)
        let started = events.filter { $0["event"] as? String == "started" }
        #expect(started.map { $0["type"] as? String } == ["ecg"])
        #expect(started.first?["sampleRate"] as? Int == 130)
        let frames = events.filter { $0["event"] as? String == "ecg" }
        let received = frames.flatMap { $0["uV"] as? [Int] ?? [] }
        let truth = try JSONDecoder().decode(Truth.self, from: Data(contentsOf: URL(fileURLWithPath: truthPath)))
        let start = try #require(truth.ecgStarts.first)
        #expect(received.count == 1300)
        #expect(received == truth.samples(from: start, count: 1300).map(Int.init))
        // Ten seconds hold about ten beats; each one found live is an R-peak the strap's ECG was
        // built with, within a sample (the streaming detector's causal filter may lead by one).
        let beats = events.filter { $0["event"] as? String == "beat" }
        #expect(beats.count >= 6, "\(beats.count) beats")
        let loop = truth.ecgMicrovolts.count
        for beat in beats {
            let time = try #require((beat["deviceTime"] as? Int).map(UInt64.init))
            let index = Int((Double(time - truth.timestampBase) * 130 / 1e9).rounded())
            #expect(truth.rPeakIndices.contains { abs($0 - index % loop) <= 1 || abs($0 - index % loop) >= loop - 1 },
                    "a beat at sample \(index) (\(index % loop) in the loop); R-peaks at \(truth.rPeakIndices.prefix(12))")
        }
        // After the first frame the spacing is measured from the frame times: the simulated
        // clock's, floor(i × 1e9 / 130) ns, so within a nanosecond a sample of 1/130 s.
        for frame in frames.dropFirst() {
            let interval = try #require(frame["interval"] as? Double)
            #expect(abs(interval - 1.0 / 130) < 1e-8, "interval \(interval)")
        }
        let log = try Self.peerLog(peer)
        let stops = log.filter { $0["kind"] as? String == "h10-stop" }
        #expect(stops.first?["by"] as? String == "client", "the strap's log: \(stops)")
    }

    @Test("an H10 whose name holds terminal escapes and a newline: ecg's lines for a person show it escaped, one line each; no control character from the strap reaches stdout or stderr")
    func hostileNameIsShownEscaped() async throws {
        let hostile = "Polar H10 \u{1B}[2J\nX"
        let peer = try await BumblePeer.start(arguments: ["--h10", "--h10-name", hostile])
        defer { peer.stop() }
        let result = try await CLI.run(["ecg", "--count", "260", "--transport", peer.transport])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let output = result.stdout + result.stderr
        #expect(output.contains(#"connected to Polar H10 \u{1B}[2J\nX ("#), "\(output)")
        #expect(!output.unicodeScalars.contains { $0.value == 0x1B }, "an escape character reached the output: \(output)")
        #expect(!output.contains("\nX"), "the name's newline split a line: \(output)")
    }

    @Test("--acc --csv --jsonl --duration: ECG and acceleration, one sample a line in both files, the vectors the strap sent")
    func filesHoldEverySample() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let csv = directory.appendingPathComponent("ecg.csv").path
        let jsonl = directory.appendingPathComponent("ecg.jsonl").path
        let peer = try await BumblePeer.start(arguments: ["--h10"])
        defer { peer.stop() }
        let result = try await CLI.run(["ecg", "--acc", "--acc-rate", "50", "--duration", "2", "--csv", csv, "--jsonl", jsonl,
                                        "--transport", peer.transport])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let csvLines = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(csvLines.first == "time,device_time_ns,type,uV,x_mG,y_mG,z_mG,raw")
        let rows = csvLines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows.allSatisfy { $0.count == 8 })
        // The strap's own heart rate (one measurement a second), its value in hex, for a report.
        let heartRateRows = rows.filter { $0[2] == "hr" }
        #expect(heartRateRows.allSatisfy { (try? HeartRateMeasurement.decode(Hex.decode($0[7]))) != nil }, "\(heartRateRows)")
        let ecgRows = rows.filter { $0[2] == "ecg" }
        #expect(rows.allSatisfy { ["ecg", "acc", "hr"].contains($0[2]) })
        let accRows = rows.filter { $0[2] == "acc" }
        // Two seconds: ~260 ECG samples and ~100 vectors (the first frames need a moment).
        #expect(ecgRows.count >= 130, "\(ecgRows.count) ECG rows")
        #expect(accRows.count >= 36, "\(accRows.count) acceleration rows")
        #expect(ecgRows.allSatisfy { Int32($0[3]) != nil && $0[4].isEmpty })
        #expect(accRows.allSatisfy { Int32($0[4]) != nil && Int32($0[5]) != nil && Int32($0[6]) != nil })
        let objects = try String(contentsOfFile: jsonl, encoding: .utf8).split(separator: "\n").map { try CLI.jsonObject(String($0)) }
        #expect(objects.count == rows.count)
        #expect(objects.filter { $0["type"] as? String == "ecg" }.compactMap { $0["uV"] as? Int } == ecgRows.compactMap { Int($0[3]) })
        // The device times the two files carry are the same, and increase within each stream.
        let ecgTimes = ecgRows.compactMap { UInt64($0[1]) }
        #expect(ecgTimes.count == ecgRows.count)
        #expect(zip(ecgTimes, ecgTimes.dropFirst()).allSatisfy { $0 < $1 })
        // The strap logged what it sent: the vectors in the file are its first ones.
        let sentFrames = try Self.peerLog(peer).filter { $0["kind"] as? String == "h10-frame" && $0["measurement"] as? String == "acc" }
        #expect(!sentFrames.isEmpty)
    }

    @Test("the strap stops ECG itself: with --no-reconnect one line naming it, status 76; with reconnection the stream starts again after a gap")
    func deviceStop() async throws {
        let peer = try await BumblePeer.start(arguments: ["--h10", "--h10-stop-after", "1"])
        defer { peer.stop() }
        let once = try await CLI.run(["ecg", "--json", "--no-reconnect", "--transport", peer.transport])
        #expect(once.status == 76, "stderr: \(once.stderr)")
        #expect(once.stderr.contains("the device stopped ecg itself"), "stderr: \(once.stderr)")
        #expect(once.stderr.split(separator: "\n").count == 1, "stderr: \(once.stderr)")
        let again = try await CLI.run(["ecg", "--json", "--count", "200", "--transport", peer.transport])
        #expect(again.status == 0, "stderr: \(again.stderr)")
        let events = try again.stdoutLines.map(CLI.jsonObject).compactMap { $0["event"] as? String }
        #expect(events.contains("stopped"))
        #expect(events.contains("gap"), "events: \(Set(events))")
        #expect(events.filter { $0 == "connected" }.count >= 2)
    }

    @Test("a strap whose MTU stays below 232: one line naming the MTU and what Polar needs, status 76")
    func smallMTU() async throws {
        let peer = try await BumblePeer.start(arguments: ["--h10", "--h10-max-mtu", "185"])
        defer { peer.stop() }
        let result = try await CLI.run(["ecg", "--transport", peer.transport])
        #expect(result.status == 76, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("ATT MTU is 185, Polar needs at least 232"), "stderr: \(result.stderr)")
    }

    @Test("Ctrl-C while streaming: the streams are stopped on the strap (its control point's stop) before the link goes; status 0 without --count, 78 before it")
    func interruptStopsTheStreamsOnTheStrap() async throws {
        let peer = try await BumblePeer.start(arguments: ["--h10"])
        defer { peer.stop() }
        let open = try await CLI.run(["ecg", "--acc", "--json", "--transport", peer.transport],
                                     when: { stdout, _ in stdout.contains("\"event\":\"acc\"") })
        #expect(open.status == 0, "stderr: \(open.stderr)")
        let counted = try await CLI.run(["ecg", "--count", "100000", "--json", "--transport", peer.transport],
                                        when: { stdout, _ in stdout.contains("\"event\":\"ecg\"") })
        #expect(counted.status == 78 && counted.stderrLines.last == "rawble: interrupted", "stderr: \(counted.stderr)")
        // Each run: every stream it started stopped by the client, before the link went.
        let log = try Self.peerLog(peer)
        let relevant = log.filter { ["h10-start", "h10-stop", "h10-disconnection"].contains($0["kind"] as? String) }
        let kinds = relevant.map { "\($0["kind"] as? String ?? "")\(($0["by"] as? String).map { " by " + $0 } ?? "")" }
        #expect(kinds == ["h10-start", "h10-start", "h10-stop by client", "h10-stop by client", "h10-disconnection",
                          "h10-start", "h10-stop by client", "h10-disconnection"], "\(kinds)")
    }
}
