import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

/// `rawble report` on session files written here (figures known by hand) and by a real `rawble hr`.
@Suite("rawble report: a session summarized")
struct ReportCommandTests {
    /// A CSV session as `rawble hr --csv` writes it: one measurement a second from 06:00:00 UTC,
    /// each with the given RR intervals (ms) and bpm.
    static func csv(_ rows: [(bpm: Int, rr: [Int])], start: Int = 0, gapAfter: Int? = nil, gapSeconds: Int = 60) -> String {
        var lines = ["time,bpm,contact,energy_expended_kj,rr_intervals_ms,raw"]
        var second = start
        for (index, row) in rows.enumerated() {
            let time = String(format: "2026-11-24T06:%02d:%02d.000000Z", second / 60 % 60, second % 60)
            lines.append("\(time),\(row.bpm),detected,,\(row.rr.map(String.init).joined(separator: " ")),00")
            second += 1
            if index == gapAfter { second += gapSeconds }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func file(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-report-\(UUID().uuidString).csv").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// RR alternating 800 and 850 ms, two a second (an even number of beats): every successive
    /// difference is 50 ms, so RMSSD is 50 ms exactly and pNN50 0 (50 is not more than 50).
    static let alternating: [(bpm: Int, rr: [Int])] = Array(repeating: (bpm: 73, rr: [800, 850]), count: 120)

    /// What Scripts/demo recorded (`rawble hr --count 40 --max-hr 185 --csv`, a simulated strap at
    /// twice a real one's pace). Its RR intervals are whole milliseconds in the CSV and 1/1024 s
    /// in `raw`; rawble hr showed RMSSD 21.3 ms live from the exact ones, the report once 21.4
    /// from the rounded ones. One artifact is found at a run's edge, where the method moves no
    /// beat: the report said "after correcting 1 artifact", then identical "before" figures.
    @Test("the demo's session: the exact RR intervals (as hr showed live), no correction claimed that changed nothing, zones adding up to 100 %")
    func demoSession() async throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/demo-session.csv").path
        // RMSSD of the raw values' intervals, decoded here.
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var exact: [Double] = []
        for line in text.split(separator: "\n").dropFirst() {
            let raw = try Hex.decode(String(try #require(line.split(separator: ",").last)))
            exact += try HeartRateMeasurement.decode(raw).rrIntervals.map(\.milliseconds)
        }
        let differences = zip(exact, exact.dropFirst()).map { $1 - $0 }
        let rmssd = (differences.map { $0 * $0 }.reduce(0, +) / Double(differences.count)).squareRoot()
        #expect(String(format: "%.1f", rmssd) == "21.3", "\(rmssd)")

        let json = try await CLI.run(["report", path, "--max-hr", "185", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let object = try CLI.jsonObject(json.stdout)
        let hrv = try #require(object["hrv"] as? [String: Any])
        #expect(abs((hrv["rmssd"] as? Double ?? 0) - rmssd) < 0.001, "\(hrv)")

        let report = try await CLI.run(["report", path, "--max-hr", "185"])
        #expect(report.status == 0, "\(report.stderr)")
        #expect(report.stdout.contains("RMSSD 21.3 ms"), "\(report.stdout)")
        #expect(!report.stdout.contains("after correcting") && !report.stdout.contains("before correction"), "\(report.stdout)")
        #expect(report.stdout.contains("1 artifact (1 long or short) found, which changed no interval"), "\(report.stdout)")
        let zones = try #require(report.stdoutLines.first { $0.hasPrefix("zones") })
        let shares = zones.matches(of: /\((\d+) %\)/).compactMap { Int($0.output.1) }
        #expect(shares.count > 1 && shares.reduce(0, +) == 100, "\(zones)")
    }

    @Test("figures known by hand: RMSSD 50 ms, pNN50 0 %, mean RR 825 ms, SDNN of the alternating series; no artifact; JSON and text agree")
    func knownFigures() async throws {
        let path = try Self.file(Self.csv(Self.alternating))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await CLI.run(["report", path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try CLI.jsonObject(result.stdout)
        let hrv = try #require(report["hrv"] as? [String: Any])
        #expect(hrv["beats"] as? Int == 240)
        #expect(abs((hrv["rmssd"] as? Double ?? 0) - 50) < 0.001)
        #expect(hrv["pnn50"] as? Double == 0)
        #expect(abs((hrv["meanRR"] as? Double ?? 0) - 825) < 0.001)
        // Sample standard deviation of 120 × 800 and 120 × 850: 25 × sqrt(240 / 239).
        #expect(abs((hrv["sdnn"] as? Double ?? 0) - 25 * (240.0 / 239.0).squareRoot()) < 0.001)
        #expect((report["artifacts"] as? [String: Any])?["total"] as? Int == 0)
        #expect(report["measurements"] as? Int == 120)
        #expect(report["zones"] is NSNull, "no --max-hr or --age: no zones")
        let text = try await CLI.run(["report", path])
        #expect(text.status == 0)
        #expect(text.stdout.contains("RMSSD 50.0 ms"), "\(text.stdout)")
        #expect(text.stdout.contains("give --max-hr or --age"), "\(text.stdout)")
    }

    @Test("a missed beat (one RR the sum of two) is found and corrected: RMSSD back near the clean series'")
    func missedBeatCorrected() async throws {
        // A smoothly varying series (800 ± 25 ms), two beats a second; then one second's two
        // beats sent as one RR, their sum, as a strap that missed an R wave does.
        let beats = (0..<240).map { 800 + Int((25 * sin(0.9 * Double($0))).rounded()) }
        let clean = (0..<120).map { (bpm: 75, rr: [beats[2 * $0], beats[2 * $0 + 1]]) }
        var rows = clean
        rows[60] = (bpm: 75, rr: [beats[120] + beats[121]])
        let differences = zip(beats.dropFirst(), beats).map { Double($0 - $1) }
        let cleanRMSSD = (differences.map { $0 * $0 }.reduce(0, +) / Double(differences.count)).squareRoot()
        let path = try Self.file(Self.csv(rows))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await CLI.run(["report", path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try CLI.jsonObject(result.stdout)
        let artifacts = try #require(report["artifacts"] as? [String: Any])
        #expect(artifacts["total"] as? Int == 1, "\(artifacts)")
        #expect(artifacts["missed"] as? Int == 1, "\(artifacts)")
        let raw = try #require(report["hrvUncorrected"] as? [String: Any])
        let corrected = try #require(report["hrv"] as? [String: Any])
        #expect(corrected["beats"] as? Int == 240, "the missed beat restored: \(corrected)")
        #expect((raw["rmssd"] as? Double ?? 0) > 2 * cleanRMSSD, "the missed beat inflates RMSSD before correction: \(raw)")
        #expect(abs((corrected["rmssd"] as? Double ?? 0) - cleanRMSSD) < 0.1 * cleanRMSSD, "clean \(cleanRMSSD): \(corrected)")
    }

    @Test("zones from --max-hr: time in each, a gap counted in none and listed; --age uses 208 − 0.7 × age")
    func zonesAndGaps() async throws {
        // 60 s at 95 bpm (zone 1 of 190: 50 %), a 60 s gap, 60 s at 175 bpm (zone 5: 92 %).
        let rows = Array(repeating: (bpm: 95, rr: [632]), count: 60) + Array(repeating: (bpm: 175, rr: [343]), count: 60)
        let path = try Self.file(Self.csv(rows, gapAfter: 59))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await CLI.run(["report", path, "--json", "--max-hr", "190"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try CLI.jsonObject(result.stdout)
        let zones = try #require(report["zones"] as? [String: Any])
        let seconds = try #require(zones["seconds"] as? [Double])
        #expect(seconds.count == 6)
        #expect(abs(seconds[1] - 59) < 1.01 && abs(seconds[5] - 59) < 1.01, "\(seconds)")
        #expect(seconds[0] + seconds[2] + seconds[3] + seconds[4] == 0, "\(seconds)")
        let gaps = try #require(report["gaps"] as? [[String: Any]])
        #expect(gaps.count == 1)
        #expect(abs((gaps.first?["durationSeconds"] as? Double ?? 0) - 61) < 0.01, "\(gaps)")
        let byAge = try CLI.jsonObject(try await CLI.run(["report", path, "--json", "--age", "40"]).stdout)
        #expect((byAge["zones"] as? [String: Any])?["maxHR"] as? Double == 180)
    }

    @Test("bad files: empty (65), not a session (65), missing (66), a directory (66), bad options (64); - reads standard input")
    func badInput() async throws {
        let empty = try Self.file("")
        let other = try Self.file("hello, world\nnot a session\n")
        defer { for path in [empty, other] { try? FileManager.default.removeItem(atPath: path) } }
        for (arguments, status) in [
            (["report", empty], Int32(65)), (["report", other], 65), (["report", "/nonexistent/session.csv"], 66),
            (["report", FileManager.default.temporaryDirectory.path], 66),
            (["report", empty, "--max-hr", "20"], 64), (["report", empty, "--segment", "0"], 64),
        ] {
            let result = try await CLI.run(arguments)
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            #expect(result.stderrLines.count == 1, "\(arguments): one line: \(result.stderr)")
            #expect(!result.killedBySignal)
        }
        let session = try Self.file(Self.csv(Self.alternating))
        defer { try? FileManager.default.removeItem(atPath: session) }
        let piped = try await CLI.run(["report", "-", "--json"], launcher: ["/bin/sh", "-c", "exec \"$0\" \"$@\" < '\(session)'"])
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(try CLI.jsonObject(piped.stdout)["measurements"] as? Int == 120)
    }

    @Test("--plot writes an SVG that parses as XML, with its three panels; the file is private (0600), an older one of the user's replaced")
    func plot() async throws {
        var rows = Self.alternating
        rows[30] = (bpm: 73, rr: [1650])
        let path = try Self.file(Self.csv(rows, gapAfter: 80))
        let svg = path + ".svg"
        defer { for file in [path, svg] { try? FileManager.default.removeItem(atPath: file) } }
        try Data("an older plot, longer than nothing".utf8).write(to: URL(fileURLWithPath: svg))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: svg)
        let result = try await CLI.run(["report", path, "--plot", svg, "--max-hr", "190", "--title", "a <test> & run"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("plot: \(svg)"))
        #expect(try FileManager.default.attributesOfItem(atPath: svg)[.posixPermissions] as? Int == 0o600)
        let data = try Data(contentsOf: URL(fileURLWithPath: svg))
        #expect(XMLParser(data: data).parse(), "well-formed XML")
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("a &lt;test&gt; &amp; run"))
        #expect(text.contains("Poincaré"))
    }
}

/// `rawble hr`'s live analysis and `report` on what `hr` itself wrote, against Bumble's strap.
@Suite("rawble hr: live HRV events, and report on its own files", .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct LiveHRVCommandTests {
    @Test("--hrv-every 5: hrv events with the window's figures, artifacts and zone among unchanged measurements; --hrv-every 0: none")
    func hrvEvents() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.25", "--hr-script", "realistic", "--hr-count", "0"])
        defer { peer.stop() }
        let result = try await CLI.run(["hr", "--json", "--count", "48", "--hrv-every", "5", "--max-hr", "190", "--transport", peer.transport])
        #expect(result.status == 0, "\(result.stderr)")
        let events = try result.stdoutLines.map(CLI.jsonObject)
        let measurements = events.filter { $0["event"] as? String == "measurement" }
        #expect(measurements.count == 48)
        #expect(measurements.compactMap { $0["raw"] as? String } == (try peer.sentHeartRateValues()).prefix(48).map { Hex.encode($0) })
        let hrv = events.filter { $0["event"] as? String == "hrv" }
        #expect(hrv.count >= 1, "12 s of values, an event every 5 s: \(result.stdout.suffix(600))")
        // A window's RMSSD needs two intervals in one run; under load an event can come when its
        // window holds fewer (its RMSSD null then: seen once), so one event at least has it.
        #expect(hrv.contains { $0["rmssd"] as? Double != nil }, "no hrv event with an RMSSD: \(hrv)")
        for event in hrv {
            #expect(event["windowSeconds"] as? Double == 5)
            #expect((event["beats"] as? Int ?? 0) > 0, "\(event)")
            #expect(event.keys.contains("rmssd"), "\(event)")
            #expect((event["artifacts"] as? [String: Any])?["total"] is Int, "\(event)")
            #expect((0...5).contains(event["zone"] as? Int ?? -1), "\(event)")
            #expect((event["time"] as? String)?.hasSuffix("Z") == true)
        }
        let quiet = try await CLI.run(["hr", "--json", "--count", "24", "--hrv-every", "0", "--transport", peer.transport])
        #expect(quiet.status == 0, "\(quiet.stderr)")
        #expect(!quiet.stdout.contains("\"hrv\""))
        let bad = try await CLI.run(["hr", "--hrv-every", "2", "--transport", peer.transport])
        #expect(bad.status == 64, "\(bad.stderr)")
    }

    @Test("report reads what hr --csv and --jsonl wrote: the same measurements and RR intervals")
    func reportOnHrFiles() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.05", "--hr-script", "realistic", "--hr-count", "0"])
        defer { peer.stop() }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-hr-\(UUID().uuidString)").path
        defer { for suffix in [".csv", ".jsonl"] { try? FileManager.default.removeItem(atPath: base + suffix) } }
        let run = try await CLI.run(["hr", "--count", "40", "--csv", base + ".csv", "--jsonl", base + ".jsonl", "--quiet",
                                     "--transport", peer.transport])
        #expect(run.status == 0, "\(run.stderr)")
        let sent = try peer.sentHeartRateValues().prefix(40).map { try HeartRateMeasurement.decode($0) }
        let rr = sent.reduce(0) { $0 + $1.rrIntervals.count }
        for suffix in [".csv", ".jsonl"] {
            let result = try await CLI.run(["report", base + suffix, "--json"])
            #expect(result.status == 0, "\(suffix): \(result.stderr)")
            let report = try CLI.jsonObject(result.stdout)
            #expect(report["measurements"] as? Int == 40, "\(suffix)")
            #expect(report["rrIntervals"] as? Int == rr, "\(suffix)")
            #expect((report["heartRate"] as? [String: Any])?["max"] as? Double == Double(sent.map(\.bpm).max() ?? 0), "\(suffix)")
        }
    }
}
