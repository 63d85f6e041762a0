import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// `rawble report` on ECG sessions `rawble ecg` recorded from the simulated Polar H10, whose ECG
/// was built from a known RR series (`--h10-truth`).
@Suite("rawble report on an ECG session", .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct ECGReportTests {
    /// What the simulated H10 built its ECG from.
    struct Truth: Decodable {
        /// RR intervals, ms: rrMs[k] from R-peak k to R-peak k + 1 (the last closes the loop).
        var rrMs: [Double]
        /// R-peak k's time within the loop, ms of device time.
        var rPeakTimesMs: [Double]
        /// The loop's length, ms (the series repeats after it).
        var loopMs: Double
        /// Device time of sample 0, PMD ns.
        var timestampBase: UInt64

        /// The R-peak nearest `deviceTime` (its absolute index, counting loops) and how far it is, ms.
        func nearestPeak(_ deviceTime: UInt64) -> (index: Int, distance: Double) {
            let absolute = Double(deviceTime &- timestampBase) / 1e6
            let inLoop = absolute.truncatingRemainder(dividingBy: loopMs)
            let (k, distance) = rPeakTimesMs.indices.map { k -> (Int, Double) in
                let d = abs(rPeakTimesMs[k] - inLoop)
                return (k, min(d, loopMs - d))
            }.min { $0.1 < $1.1 } ?? (0, .infinity)
            // A peak near the loop's end seen from just after its start belongs to the loop before.
            var loop = Int((absolute / loopMs).rounded(.down))
            if rPeakTimesMs[k] - inLoop > loopMs / 2 { loop -= 1 } else if inLoop - rPeakTimesMs[k] > loopMs / 2 { loop += 1 }
            return (loop * rrMs.count + k, distance)
        }

        /// The true RR interval ending at absolute R-peak `index`, ms.
        func rr(endingAt index: Int) -> Double {
            let count = rrMs.count
            return rrMs[((index - 1) % count + count) % count]
        }
    }

    /// A recorded session: its CSV and JSON lines files and the strap's truth.
    struct Recording {
        var directory: URL
        var csv: String
        var jsonl: String
        var truth: Truth
    }

    /// Records `seconds` of ECG with `rawble ecg --csv --jsonl` from the simulated H10.
    static func record(seconds: Int) async throws -> Recording {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-ecg-report-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let truthPath = directory.appendingPathComponent("truth.json").path
        let csv = directory.appendingPathComponent("ecg.csv").path
        let jsonl = directory.appendingPathComponent("ecg.jsonl").path
        let peer = try await BumblePeer.start(arguments: ["--h10", "--h10-truth", truthPath])
        defer { peer.stop() }
        let result = try await CLI.run(["ecg", "--duration", "\(seconds)", "--csv", csv, "--jsonl", jsonl, "--transport", peer.transport])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let truth = try JSONDecoder().decode(Truth.self, from: Data(contentsOf: URL(fileURLWithPath: truthPath)))
        return Recording(directory: directory, csv: csv, jsonl: jsonl, truth: truth)
    }

    static func number(_ object: [String: Any]?, _ key: String) -> Double? {
        (object?[key] as? Double) ?? (object?[key] as? Int).map(Double.init)
    }

    @Test("a 20-s session: every RR interval found in the ECG is the truth's (within 8 ms), beat for beat; the strap's HRV beside it; CSV and JSON lines agree")
    func rrIntervalsAreTheTruths() async throws {
        let recording = try await Self.record(seconds: 20)
        defer { try? FileManager.default.removeItem(at: recording.directory) }
        let truth = recording.truth
        let result = try await CLI.run(["report", recording.csv, "--json"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let report = try CLI.jsonObject(result.stdout)
        #expect(report["kind"] as? String == "ecg")
        #expect(report["format"] as? String == "csv")
        #expect(report["runs"] as? Int == 1)
        #expect((report["gaps"] as? [Any])?.isEmpty == true)
        let samples = try #require(report["ecgSamples"] as? Int)
        #expect(samples >= 18 * 130, "\(samples) samples")
        #expect(abs((Self.number(report, "samplingRate") ?? 0) - 130) < 0.01, "the simulated clock runs at 130 Hz exactly")
        let ecg = try #require(report["ecg"] as? [String: Any])
        let beats = try #require(ecg["beats"] as? [[String: Any]])

        // Each beat: the truth's R-peak nearest it in the loop, and the RR ending there.
        var differences: [Double] = []
        var matched: [Int] = []
        for beat in beats {
            let deviceTime = try #require((beat["deviceTime"] as? Int).map(UInt64.init))
            let rr = try #require(Self.number(beat, "rrMs"))
            let (index, distance) = truth.nearestPeak(deviceTime)
            #expect(distance <= 12, "a beat \(distance) ms from the nearest R-peak (\(index))")
            let expected = truth.rr(endingAt: index)
            differences.append(abs(rr - expected))
            matched.append(index)
            #expect(abs(rr - expected) <= 8, "beat at R-peak \(index): \(rr) ms found, \(expected) ms true")
        }
        // Beat for beat: no R-peak found twice, none skipped between the first and the last found.
        #expect(beats.count >= 18, "\(beats.count) beats in 20 s")
        #expect(Set(matched).count == matched.count, "\(matched)")
        if let first = matched.first, let last = matched.last { #expect(last - first + 1 == matched.count, "\(matched)") }
        #expect(ecg["rrIntervals"] as? Int == beats.count)
        #expect(report["rPeaks"] as? Int == beats.count + 1)

        // The HRV of the ECG's beats, the strap's beside it, and their difference.
        let hrv = try #require(ecg["hrv"] as? [String: Any])
        #expect(hrv["beats"] as? Int == beats.count, "no artifact in the simulated ECG: \(ecg["artifacts"] ?? "")")
        let strap = try #require(report["strap"] as? [String: Any])
        #expect(strap["measurements"] as? Int ?? 0 >= 15, "\(strap)")
        let strapHRV = try #require(strap["hrv"] as? [String: Any])
        #expect(strapHRV["beats"] as? Int ?? 0 >= 15, "\(strapHRV)")
        let difference = try #require(report["difference"] as? [String: Any])
        for key in ["rmssd", "sdnn", "meanHR"] {
            let a = try #require(Self.number(hrv, key)), b = try #require(Self.number(strapHRV, key))
            #expect(abs((Self.number(difference, key) ?? .nan) - (a - b)) < 0.002, "\(key)")
        }
        // The strap derives its RR from the same ECG: mean HR within a beat a minute.
        #expect(abs(Self.number(difference, "meanHR") ?? 99) < 1, "\(difference)")
        // The true RMSSD of the beats in the recording, to the ECG's within a few ms.
        let trueRR = matched.map(truth.rr(endingAt:))
        let successive = zip(trueRR, trueRR.dropFirst()).map { ($1 - $0) * ($1 - $0) }
        let trueRMSSD = (successive.reduce(0, +) / Double(max(successive.count, 1))).squareRoot()
        #expect(abs((Self.number(hrv, "rmssd") ?? 0) - trueRMSSD) < 5, "RMSSD \(hrv["rmssd"] ?? "") vs the truth's \(trueRMSSD)")

        // The same session's JSON lines file gives the same figures.
        let fromJSONL = try CLI.jsonObject(try await CLI.run(["report", recording.jsonl, "--json"]).stdout)
        #expect(fromJSONL["format"] as? String == "jsonl")
        #expect(((fromJSONL["ecg"] as? [String: Any])?["beats"] as? [[String: Any]])?.count == beats.count)
        #expect(Self.number((fromJSONL["ecg"] as? [String: Any])?["hrv"] as? [String: Any], "rmssd") == Self.number(hrv, "rmssd"))

        // For a person: the two columns and their difference.
        let text = try await CLI.run(["report", recording.csv])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("ECG session"), "\(text.stdout)")
        #expect(text.stdout.contains("ECG − strap"), "\(text.stdout)")
        #expect(text.stdout.contains("RMSSD"), "\(text.stdout)")
        #expect(text.stdout.contains("beats found in the ECG: \(beats.count + 1) R-peaks"), "\(text.stdout)")
    }

    @Test("--plot: an SVG with the ECG strip, its R-peaks marked, both tachograms; it parses as XML and rsvg-convert renders it")
    func plot() async throws {
        let recording = try await Self.record(seconds: 12)
        defer { try? FileManager.default.removeItem(at: recording.directory) }
        let svg = recording.directory.appendingPathComponent("ecg.svg").path
        let result = try await CLI.run(["report", recording.csv, "--plot", svg, "--title", "H10 <strip> & RR"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("plot: \(svg)"))
        let data = try Data(contentsOf: URL(fileURLWithPath: svg))
        let parser = XMLParser(data: data)
        #expect(parser.parse(), "well-formed XML: \(parser.parserError.map { "\($0)" } ?? "")")
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("H10 &lt;strip&gt; &amp; RR"))
        #expect(text.contains(#"<path class="ecg""#))
        #expect(text.contains(#"<path class="rr-ecg""#))
        #expect(text.contains(#"<path class="rr-strap""#))
        // About a beat a second in the 10-s strip.
        let peaks = text.components(separatedBy: #"<circle class="peak""#).count - 1
        #expect((7...16).contains(peaks), "\(peaks) R-peaks marked")

        let rsvg = ["/usr/bin/rsvg-convert", "/usr/local/bin/rsvg-convert"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let tool = try #require(rsvg, "rsvg-convert is needed to render the plot: apt-get install librsvg2-bin")
        let png = recording.directory.appendingPathComponent("ecg.png").path
        // Through sh: the runner appends rawble's path (here $0, unused) to the launcher.
        let render = try await CLI.run([], launcher: ["/bin/sh", "-c", "exec '\(tool)' --format png --output '\(png)' '\(svg)'"])
        #expect(render.status == 0, "rsvg-convert: \(render.stderr)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: png)))
        #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG")
        #expect(bytes.count > 10_000, "\(bytes.count) bytes: something drawn")
    }

    @Test("an ECG file without ECG: one line, status 65; a heart-rate session is still reported as one")
    func notECG() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-ecg-report-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("hr-only.csv").path
        try "time,device_time_ns,type,uV,x_mG,y_mG,z_mG,raw\n2026-11-28T04:00:00.000000Z,,hr,,,,,064c\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let result = try await CLI.run(["report", path])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderrLines.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("no ECG sample"), "\(result.stderr)")
        let hr = directory.appendingPathComponent("hr.csv").path
        try "time,bpm,contact,energy_expended_kj,rr_intervals_ms,raw\n2026-11-28T04:00:00.000000Z,72,detected,,833,00\n"
            .write(toFile: hr, atomically: true, encoding: .utf8)
        let report = try CLI.jsonObject(try await CLI.run(["report", hr, "--json"]).stdout)
        #expect(report["kind"] == nil && report["measurements"] as? Int == 1)
    }
}

/// `rawble report` on an ECG session recorded once from the simulated H10 (`rawble ecg --csv`,
/// 6 s, then a gap line, then 6 s: `Fixtures/ecg-session.csv`; the strap's truth, without its
/// samples, in `Fixtures/ecg-session-truth.json`). Needs no Bumble.
@Suite("rawble report on a recorded ECG session (fixture)")
struct ECGReportFixtureTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let session = fixtures.appendingPathComponent("ecg-session.csv").path

    @Test("two runs across the gap line, no RR across it; every RR the truth's within 8 ms; the strap's figures beside")
    func recordedSession() async throws {
        let truth = try JSONDecoder().decode(ECGReportTests.Truth.self,
                                             from: Data(contentsOf: Self.fixtures.appendingPathComponent("ecg-session-truth.json")))
        let result = try await CLI.run(["report", Self.session, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try CLI.jsonObject(result.stdout)
        #expect(report["kind"] as? String == "ecg")
        #expect(report["runs"] as? Int == 2)
        let gaps = try #require(report["gaps"] as? [[String: Any]])
        #expect(gaps.count == 1 && gaps.first?["marked"] as? Bool == true)
        #expect(abs((ECGReportTests.number(gaps.first, "durationSeconds") ?? 0) - 3) < 0.1, "\(gaps)")
        let ecg = try #require(report["ecg"] as? [String: Any])
        let beats = try #require(ecg["beats"] as? [[String: Any]])
        // Each run's first R-peak starts no interval: peaks = intervals + runs.
        #expect(report["rPeaks"] as? Int == beats.count + 2)
        #expect(beats.count >= 8, "\(beats.count) beats in 12 s of ECG")
        var matched: [Int] = []
        for beat in beats {
            let deviceTime = try #require((beat["deviceTime"] as? Int).map(UInt64.init))
            let rr = try #require(ECGReportTests.number(beat, "rrMs"))
            let (index, distance) = truth.nearestPeak(deviceTime)
            #expect(distance <= 12)
            #expect(abs(rr - truth.rr(endingAt: index)) <= 8, "R-peak \(index): \(rr) ms, true \(truth.rr(endingAt: index)) ms")
            #expect(rr < 1500, "no interval across the 3-s gap: \(rr) ms")
            matched.append(index)
        }
        #expect(Set(matched).count == matched.count && matched == matched.sorted(), "\(matched)")
        let strap = try #require(report["strap"] as? [String: Any])
        #expect(strap["measurements"] as? Int == 12 && strap["rrIntervals"] as? Int == 14, "\(strap)")
        let text = try await CLI.run(["report", Self.session])
        #expect(text.stdout.contains("2 runs, 1 gap"), "\(text.stdout)")
        #expect(text.stdout.contains("the strap's own: 12 heart-rate measurements, 14 RR intervals"), "\(text.stdout)")
    }

    @Test("--strip-start: the strip starts that far into the ECG, in the run that holds it or the next one after a gap")
    func stripStart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-ecg-strip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // The first sample at 04:41:42.57 UTC; 6 s of ECG, a gap, ECG again from 04:41:51.57.
        for (start, clock) in [("0", "04:41:42"), ("2.5", "04:41:45"), ("7", "04:41:51"), ("10", "04:41:52"), ("100", nil)] {
            let svg = directory.appendingPathComponent("strip-\(start).svg").path
            let result = try await CLI.run(["report", Self.session, "--plot", svg, "--strip-start", start], environment: ["TZ": "UTC"])
            #expect(result.status == 0, "\(result.stderr)")
            let text = try String(contentsOfFile: svg, encoding: .utf8)
            let marks = text.components(separatedBy: #"<circle class="peak""#).count - 1
            if let clock {
                #expect(text.contains("s from \(clock), R-peaks marked"), "--strip-start \(start)")
                #expect(marks >= 3, "--strip-start \(start): \(marks) R-peaks")
            } else {
                #expect(text.contains("no ECG in this strip") && marks == 0, "--strip-start \(start): past the end")
            }
        }
        let bad = try await CLI.run(["report", Self.session, "--strip-start", "-1"])
        #expect(bad.status == 64, "\(bad.stderr)")
    }

    @Test("an ECG session piped on standard input is told from its first line too")
    func standardInput() async throws {
        let piped = try await CLI.run(["report", "-", "--json"], launcher: ["/bin/sh", "-c", "exec \"$0\" \"$@\" < '\(Self.session)'"])
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(try CLI.jsonObject(piped.stdout)["kind"] as? String == "ecg")
        // The header arriving in two pieces (a slow pipe): the kind is judged on the whole first line.
        let split = try await CLI.run(["report", "-", "--json"], launcher: [
            "/bin/sh", "-c", "(head -c 9 '\(Self.session)'; sleep 0.3; tail -c +10 '\(Self.session)') | \"$0\" \"$@\"",
        ])
        #expect(split.status == 0, "\(split.stderr)")
        #expect(try CLI.jsonObject(split.stdout)["kind"] as? String == "ecg")
    }
}
