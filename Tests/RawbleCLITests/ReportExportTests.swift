import Foundation
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// `rawble report --export`: the files read back by independent readers (pyedflib's EDFlib for
/// EDF+, numpy and NeuroKit2 for RR text, `Scripts/python/export_reference.py` in the project's
/// venv) and compared with the session they came from and with the report's own figures.
@Suite("rawble report --export: RR text and EDF+ read back by pyedflib and NeuroKit2",
       .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct ReportExportTests {
    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The reference's answer for each request (one Python process for all).
    static func read(_ requests: [[String: String]]) async throws -> [[String: Any]] {
        let input = try requests.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
            .joined(separator: "\n") + "\n"
        let lines = try await runPythonReference("export_reference.py", root: root, input: input, seconds: 240)
        return try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    static func folder() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func number(_ object: [String: Any]?, _ key: String) -> Double? {
        (object?[key] as? Double) ?? (object?[key] as? Int).map(Double.init)
    }

    @Test("a heart-rate session with a missed beat: raw RR are the file's own, corrected RR are the series the report's HRV comes from (NeuroKit2's hrv_time of it equals rawble's), in .txt, Kubios and .ibi")
    func heartRateRR() async throws {
        let beats = (0..<240).map { 800 + Int((25 * sin(0.9 * Double($0))).rounded()) }
        var rows = (0..<120).map { (bpm: 75, rr: [beats[2 * $0], beats[2 * $0 + 1]]) }
        rows[60] = (bpm: 75, rr: [beats[120] + beats[121]])
        let session = try ReportCommandTests.file(ReportCommandTests.csv(rows))
        let directory = try Self.folder()
        defer {
            try? FileManager.default.removeItem(atPath: session)
            try? FileManager.default.removeItem(at: directory)
        }
        let raw = directory.appendingPathComponent("raw.txt").path
        let ibi = directory.appendingPathComponent("corrected.ibi").path
        let kubios = directory.appendingPathComponent("kubios.txt").path

        let rawRun = try await CLI.run(["report", session, "--json", "--export", raw, "--rr", "raw"])
        #expect(rawRun.status == 0, "\(rawRun.stderr)")
        let rawExport = try #require(try CLI.jsonObject(rawRun.stdout)["export"] as? [String: Any])
        #expect(rawExport["rr"] as? String == "raw")
        #expect(rawExport["intervals"] as? Int == 239)
        let ibiRun = try await CLI.run(["report", session, "--json", "--export", ibi])
        #expect(ibiRun.status == 0, "\(ibiRun.stderr)")
        let report = try CLI.jsonObject(ibiRun.stdout)
        let hrv = try #require(report["hrv"] as? [String: Any])
        #expect((report["export"] as? [String: Any])?["intervals"] as? Int == hrv["beats"] as? Int)
        let kubiosRun = try await CLI.run(["report", session, "--export", kubios, "--export-format", "kubios"])
        #expect(kubiosRun.status == 0, "\(kubiosRun.stderr)")
        #expect(kubiosRun.stdoutLines.last == "export: \(kubios) (Kubios RR text, ms a line: 240 RR intervals, corrected (Lipponen & Tarvainen))",
                "\(kubiosRun.stdout)")

        let read = try await Self.read([["rr": raw, "format": "rr"], ["rr": ibi, "format": "ibi"], ["rr": kubios, "format": "kubios"]])
        // Raw: the file's intervals as they are, in order.
        #expect(read[0]["intervals"] as? [Double] == rows.flatMap { $0.rr.map(Double.init) })
        // Corrected: NeuroKit2's figures of the exported series are the report's.
        let corrected = try #require(read[1]["intervals"] as? [Double])
        #expect(corrected.count == 240, "the missed beat restored")
        let figures = try #require(read[1]["hrv"] as? [String: Double])
        for (theirs, ours) in [("RMSSD", "rmssd"), ("SDNN", "sdnn"), ("MeanNN", "meanRR")] {
            let expected = try #require(Self.number(hrv, ours))
            #expect(abs((figures[theirs] ?? .nan) - expected) < 0.01, "\(theirs): NeuroKit2 \(figures[theirs] ?? .nan), rawble \(expected)")
        }
        let times = try #require(read[1]["times"] as? [Double])
        #expect(times.first == 0, "the first beat at the session's start")
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
        // Kubios' layout holds the same series (to its 0.001 ms).
        let fromKubios = try #require(read[2]["intervals"] as? [Double])
        #expect(fromKubios.count == corrected.count)
        #expect(zip(fromKubios, corrected).allSatisfy { abs($0 - $1) <= 0.0015 })
    }

    /// The ECG fixture (6 s, a gap line, 6 s) with 2 s of acceleration at 200 Hz from 0.1 s
    /// after its first sample, one X value out of range: its lines, and the file.
    static func ecgWithAcceleration(in directory: URL) throws -> (lines: [String], path: String) {
        let fixture = root.appendingPathComponent("Tests/RawbleCLITests/Fixtures/ecg-session.csv")
        var lines = try String(contentsOf: fixture, encoding: .utf8).split(separator: "\n").map(String.init)
        let first = try #require(lines.dropFirst().first { $0.contains(",ecg,") }).split(separator: ",")
        let prefix = String(first[0].prefix(17))  // 2026-11-28T04:41:
        let second = try #require(Double(first[0].dropFirst(17).dropLast()))
        let device = try #require(UInt64(first[1]))
        for index in 0..<400 {
            let time = prefix + String(format: "%09.6f", second + 0.1 + Double(index) * 0.005) + "Z"
            let x = index == 7 ? 40_000 : index
            lines.append("\(time),\(device + 100_000_000 + UInt64(index) * 5_000_000),acc,,\(x),\(1000 - index),\(-index),")
        }
        let path = directory.appendingPathComponent("ecg.csv").path
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return (lines, path)
    }

    /// Seconds of the day of an ECG line's `time` (`...T04:41:42.565502Z`).
    static func secondOfDay(_ time: Substring) -> Double {
        let clock = time.split(separator: "T")[1].dropLast().split(separator: ":")
        return Double(clock[0])! * 3600 + Double(clock[1])! * 60 + Double(clock[2])!
    }

    @Test("an ECG session as EDF+: every ECG and acceleration sample equal (the range clipped), 0 across the gap, 130 and 200 Hz, labels, units and ranges, the local start with its fraction, the gap and every R-peak annotated at its sample's onset")
    func ecgEDF() async throws {
        let directory = try Self.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (lines, session) = try Self.ecgWithAcceleration(in: directory)
        let edf = directory.appendingPathComponent("ecg.edf").path
        // India's time, 5:30 ahead of UTC all year: the header's start is local.
        let result = try await CLI.run(["report", session, "--json", "--export", edf], environment: ["TZ": "Asia/Kolkata"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = try CLI.jsonObject(result.stdout)
        let export = try #require(report["export"] as? [String: Any])
        #expect(export["clipped"] as? Int == 1)
        #expect(export["gaps"] as? Int == 1)
        let text = try await CLI.run(["report", session, "--export", edf], environment: ["TZ": "Asia/Kolkata"])
        #expect(text.stdoutLines.contains { $0.hasPrefix("export: \(edf) (EDF+: ECG 130 Hz µV, acceleration X/Y/Z 200 Hz mG;") }, "\(text.stdout)")

        // The session's own runs, from its lines (split at the gap line).
        var runs: [[(second: Double, device: UInt64, microvolts: Int)]] = [[]]
        for line in lines.dropFirst() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            if fields[2] == "gap" { runs.append([]) }
            guard fields[2] == "ecg" else { continue }
            runs[runs.count - 1].append((Self.secondOfDay(fields[0]), UInt64(fields[1])!, Int(fields[3])!))
        }
        #expect(runs.count == 2)
        // Where the second run starts on the file's timeline: its host time's sample at 130 Hz.
        let second = Int(((runs[1][0].second - runs[0][0].second) * 130).rounded())
        let positions = [0, max(second, runs[0].count)]

        let file = try #require(try await Self.read([["edf": edf]]).first)
        #expect(file["filetype"] as? Int == 1, "EDF+ (EDFlib's EDFLIB_FILETYPE_EDFPLUS)")
        #expect(file["labels"] as? [String] == ["ECG", "Accelerometer X", "Accelerometer Y", "Accelerometer Z"])
        #expect(file["rates"] as? [Double] == [130, 200, 200, 200])
        #expect(file["dimensions"] as? [String] == ["uV", "mG", "mG", "mG"])
        #expect(file["physicalMin"] as? [Double] == [-32767, -32767, -32767, -32767])
        #expect(file["physicalMax"] as? [Double] == [32767, 32767, 32767, 32767])
        #expect(file["recordDuration"] as? Double == 1)
        #expect((file["equipment"] as? String)?.hasPrefix("Polar") == true, "\(file["equipment"] ?? "")")

        // Every ECG sample as recorded, each run at its position, 0 elsewhere; physical values
        // equal to the digital ones (1 µV a step).
        let total = positions[1] + runs[1].count
        let records = (total + 129) / 130
        #expect(file["records"] as? Int == records)
        let digital = try #require(file["digital"] as? [[Int]])
        let physical = try #require(file["physical"] as? [[Double]])
        var expected = Array(repeating: 0, count: records * 130)
        for (run, position) in zip(runs, positions) {
            expected.replaceSubrange(position..<(position + run.count), with: run.map(\.microvolts))
        }
        #expect(digital[0] == expected)
        #expect(zip(physical[0], digital[0]).allSatisfy { abs($0 - Double($1)) < 1e-9 })
        // Acceleration: 0 for 0.1 s (20 samples), the 400 vectors with the X value clipped, 0 after.
        let x = digital[1], y = digital[2], z = digital[3]
        #expect(x.count == records * 200)
        let xs: [Int] = (0..<400).map { (index: Int) -> Int in index == 7 ? 32767 : index }
        let ys: [Int] = (0..<400).map { (index: Int) -> Int in 1000 - index }
        let zs: [Int] = (0..<400).map { (index: Int) -> Int in -index }
        #expect(Array(x[20..<420]) == xs)
        #expect(Array(y[20..<420]) == ys)
        #expect(Array(z[20..<420]) == zs)
        #expect(x[0..<20].allSatisfy { $0 == 0 } && y[420...].allSatisfy { $0 == 0 })

        // The start: the first sample's local date and time (5:30 ahead), its fraction as
        // EDFlib's subsecond (100 ns units).
        let start = runs[0][0].second + 5.5 * 3600
        #expect(file["start"] as? [Int] == [2026, 11, 28, Int(start / 3600), Int(start / 60) % 60, Int(start) % 60])
        let fraction = start - start.rounded(.down)
        #expect(abs(Double(file["subsecond"] as? Int ?? 0) / 1e7 - fraction) < 1e-6)

        // Annotations (EDFlib's onsets count from the first sample): the gap from the first
        // run's last sample to the second run's first, an R at each peak sample.
        let annotations = try #require(file["annotations"] as? [[Any]])
        let gaps = annotations.filter { $0[2] as? String == "gap" }
        #expect(gaps.count == 1)
        let gapOnset = try #require(gaps.first?[0] as? Double), gapDuration = try #require(gaps.first?[1] as? Double)
        #expect(abs(gapOnset - Double(runs[0].count) / 130) < 1e-6, "\(gapOnset)")
        #expect(abs(gapOnset + gapDuration - Double(positions[1]) / 130) < 1e-6, "\(gapDuration)")
        let peaks = annotations.filter { $0[2] as? String == "R" }.compactMap { $0[0] as? Double }
        #expect(peaks.count == report["rPeaks"] as? Int)
        let beats = try #require((report["ecg"] as? [String: Any])?["beats"] as? [[String: Any]])
        #expect(!beats.isEmpty)
        for beat in beats {
            let device = try #require((beat["deviceTime"] as? Int).map(UInt64.init))
            let (run, index) = try #require(runs.enumerated().lazy.compactMap { run, samples in
                samples.firstIndex { $0.device == device }.map { (run, $0) }
            }.first)
            let onset = Double(positions[run] + index) / 130
            #expect(peaks.contains { abs($0 - onset) < 1e-6 }, "an R at \(onset) s (run \(run), sample \(index)): \(peaks)")
        }
    }

    @Test("an ECG session's RR: the intervals between the R-peaks the report found (raw), and corrected, numpy reads them")
    func ecgRR() async throws {
        let directory = try Self.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let session = Self.root.appendingPathComponent("Tests/RawbleCLITests/Fixtures/ecg-session.csv").path
        let raw = directory.appendingPathComponent("raw.ibi").path
        let corrected = directory.appendingPathComponent("rr.txt").path
        let rawRun = try await CLI.run(["report", session, "--json", "--export", raw, "--rr", "raw"])
        #expect(rawRun.status == 0, "\(rawRun.stderr)")
        let correctedRun = try await CLI.run(["report", session, "--json", "--export", corrected])
        #expect(correctedRun.status == 0, "\(correctedRun.stderr)")
        let report = try CLI.jsonObject(rawRun.stdout)
        let beats = try #require((report["ecg"] as? [String: Any])?["beats"] as? [[String: Any]])
        let read = try await Self.read([["rr": raw, "format": "ibi"], ["rr": corrected, "format": "rr"]])
        let rawIntervals = try #require(read[0]["intervals"] as? [Double])
        #expect(rawIntervals.count == beats.count)
        for (interval, beat) in zip(rawIntervals, beats) {
            #expect(abs(interval - (Self.number(beat, "rrMs") ?? .nan)) < 0.0015)
        }
        #expect((report["export"] as? [String: Any])?["runs"] as? Int == 2, "a run of beats each side of the gap")
        let hrv = try #require((try CLI.jsonObject(correctedRun.stdout)["ecg"] as? [String: Any])?["hrv"] as? [String: Any])
        #expect((read[1]["intervals"] as? [Double])?.count == hrv["beats"] as? Int)
        let figures = try #require(read[1]["hrv"] as? [String: Double])
        #expect(abs((figures["MeanNN"] ?? .nan) - (Self.number(hrv, "meanRR") ?? .nan)) < 0.01)
    }
}

/// `report --export`'s usage and refusals: one line each, a distinct status; a file of several
/// straps exported strap by strap.
@Suite("rawble report --export: formats, straps and what cannot be exported")
struct ReportExportUsageTests {
    /// Two straps' measurements in one file, as `rawble hr A B --csv` writes it.
    static func twoStraps() throws -> String {
        var lines = ["time,strap,strap_name,bpm,contact,energy_expended_kj,rr_intervals_ms,raw"]
        for second in 0..<30 {
            let time = String(format: "2026-11-24T06:00:%02d.000000Z", second)
            lines.append("\(time),AA:BB:CC:DD:EE:01,Strap A,75,detected,,800 \(810 + second % 3),00")
            lines.append("\(time),AA:BB:CC:DD:EE:02,Strap B,60,detected,,1000,00")
        }
        return try ReportCommandTests.file(lines.joined(separator: "\n") + "\n")
    }

    @Test("a file of several straps: --strap exports one (by address or name), {name} and {address} a file each; without either, one line (64); an unknown strap names those there")
    func severalStraps() async throws {
        let session = try Self.twoStraps()
        let directory = try ReportExportTests.folder()
        defer {
            try? FileManager.default.removeItem(atPath: session)
            try? FileManager.default.removeItem(at: directory)
        }
        let one = directory.appendingPathComponent("one.txt").path
        let refused = try await CLI.run(["report", session, "--export", one])
        #expect(refused.status == 64)
        #expect(refused.stderrLines.count == 1 && refused.stderr.contains("--strap"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: one))

        let chosen = try await CLI.run(["report", session, "--export", one, "--strap", "aa:bb:cc:dd:ee:02", "--rr", "raw"])
        #expect(chosen.status == 0, "\(chosen.stderr)")
        #expect(try String(contentsOfFile: one, encoding: .utf8) == String(repeating: "1000\n", count: 30))
        let byName = try await CLI.run(["report", session, "--json", "--strap", "Strap A"])
        #expect(try CLI.jsonObject(byName.stdout)["measurements"] as? Int == 30)

        let each = directory.appendingPathComponent("rr-{name}-{address}.txt").path
        let perStrap = try await CLI.run(["report", session, "--export", each, "--rr", "raw"])
        #expect(perStrap.status == 0, "\(perStrap.stderr)")
        let a = directory.appendingPathComponent("rr-Strap-A-AA-BB-CC-DD-EE-01.txt").path
        let b = directory.appendingPathComponent("rr-Strap-B-AA-BB-CC-DD-EE-02.txt").path
        #expect(try String(contentsOfFile: a, encoding: .utf8) == (0..<30).map { "800\n\(810 + $0 % 3)\n" }.joined())
        #expect(try String(contentsOfFile: b, encoding: .utf8) == String(repeating: "1000\n", count: 30))
        #expect(perStrap.stdoutLines.filter { $0.contains("export: ") }.count == 2, "\(perStrap.stdout)")

        let unknown = try await CLI.run(["report", session, "--strap", "AA:BB:CC:DD:EE:09"])
        #expect(unknown.status == 64)
        #expect(unknown.stderrLines.count == 1 && unknown.stderr.contains("AA:BB:CC:DD:EE:01 (Strap A)"), "\(unknown.stderr)")
    }

    @Test("an ECG file of two H10s: a file each with {address}, both EDF+ with that strap's ECG; --strap one of them; --json names each strap's export")
    func severalH10s() async throws {
        let directory = try ReportExportTests.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fixture = ReportExportTests.root.appendingPathComponent("Tests/RawbleCLITests/Fixtures/ecg-session.csv")
        let lines = try String(contentsOf: fixture, encoding: .utf8).split(separator: "\n").dropFirst()
        var labelled = ["time,strap,strap_name,device_time_ns,type,uV,x_mG,y_mG,z_mG,raw"]
        for line in lines {
            let comma = try #require(line.firstIndex(of: ","))
            for (address, name) in [("C0:B1:E0:00:02:01", "H10 A"), ("C0:B1:E0:00:02:02", "H10 B")] {
                labelled.append(line[..<comma] + ",\(address),\(name)" + line[comma...])
            }
        }
        let session = directory.appendingPathComponent("pair.csv").path
        try (labelled.joined(separator: "\n") + "\n").write(toFile: session, atomically: true, encoding: .utf8)
        let each = try await CLI.run(["report", session, "--json", "--export", directory.appendingPathComponent("ecg-{address}.edf").path],
                                     environment: ["TZ": "UTC"])
        #expect(each.status == 0, "\(each.stderr)")
        let straps = try #require(try CLI.jsonObject(each.stdout)["straps"] as? [[String: Any]])
        #expect(straps.compactMap { ($0["export"] as? [String: Any])?["file"] as? String }
            == ["01", "02"].map { directory.appendingPathComponent("ecg-C0-B1-E0-00-02-\($0).edf").path })
        let files = try ["01", "02"].map { try Data(contentsOf: directory.appendingPathComponent("ecg-C0-B1-E0-00-02-\($0).edf")) }
        #expect(files[0].count == files[1].count)
        #expect(zip(files[0], files[1]).enumerated().allSatisfy { $0.element.0 == $0.element.1 || (88..<168).contains($0.offset) },
                "the same ECG and start; only the recording field (its equipment: the strap's name) differs")
        #expect(files[1][88..<168].starts(with: Data("Startdate 28-NOV-2026 X X H10_B".utf8)))
        #expect(files.allSatisfy { $0.prefix(8) == Data("0       ".utf8) && $0.count > 256 * 3 })
        let one = directory.appendingPathComponent("one.edf").path
        let chosen = try await CLI.run(["report", session, "--export", one, "--strap", "H10 B"], environment: ["TZ": "UTC"])
        #expect(chosen.status == 0, "\(chosen.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: one)) == files[1])
    }

    @Test("what cannot be exported: EDF+ of a heart-rate session (86), RR of an ECG without two R-peaks (86), an extension that names no format, {name} for a file of no strap (64); one line each, no file")
    func refusals() async throws {
        let directory = try ReportExportTests.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let heartRate = try ReportCommandTests.file(ReportCommandTests.csv(ReportCommandTests.alternating))
        var flat = ["time,device_time_ns,type,uV,x_mG,y_mG,z_mG,raw"]
        for index in 0..<260 {
            flat.append(String(format: "2026-11-28T04:41:%09.6fZ", 10 + Double(index) / 130) + ",\(599_616_000_000_000_000 + UInt64(index) * 7_692_308),ecg,0,,,,")
        }
        let ecg = try ReportCommandTests.file(flat.joined(separator: "\n") + "\n")
        defer { for path in [heartRate, ecg] { try? FileManager.default.removeItem(atPath: path) } }
        let edf = directory.appendingPathComponent("x.edf").path
        let rr = directory.appendingPathComponent("x.txt").path
        for (arguments, status, words) in [
            (["report", heartRate, "--export", edf], Int32(86), "no ECG"),
            (["report", ecg, "--export", rr], 86, "no RR interval"),
            (["report", heartRate, "--export", directory.appendingPathComponent("x.csv").path], 64, "rr|kubios|ibi|edf"),
            (["report", heartRate, "--export-format", "edf"], 64, "--export FILE"),
            (["report", heartRate, "--export", directory.appendingPathComponent("rr-{name}.txt").path], 64, "names no strap"),
        ] {
            let result = try await CLI.run(arguments)
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            #expect(result.stderrLines.count == 1 && result.stderr.contains(words), "\(arguments): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: edf))
        #expect(!FileManager.default.fileExists(atPath: rr))
        // The same session exports its ECG: a flat line, no R-peak.
        let flatEDF = try await CLI.run(["report", ecg, "--export", edf])
        #expect(flatEDF.status == 0, "\(flatEDF.stderr)")
        #expect(flatEDF.stdoutLines.last?.contains("EDF+: ECG 130 Hz µV; 2 s; 0 R-peak and 0 gap annotations") == true, "\(flatEDF.stdout)")
    }
}
