import RawblePolarCore
import RawbleReport
import RawbleTestSupport
import RawbleWire
import Testing

/// 2026-11-22T05:14:12Z in microseconds since 1970.
private let t0: Int64 = 1_795_324_452_000_000
/// A device time (PMD ns since 2000-01-01): 2019-01-01, where an H10 never set counts from.
private let d0: UInt64 = 599_616_000_000_000_000
/// One sample at 130 Hz, ns (the simulated H10's floor(i × 1e9 / 130) spacing, near enough).
private let step: UInt64 = 7_692_307

/// A Heart Rate Measurement: flags 0x16 (u8 rate, contact detected, RR present), 72 bpm, RR
/// 520/1024 s and 781/1024 s.
private let heartRateRaw: [UInt8] = [0x16, 0x48, 0x08, 0x02, 0x0D, 0x03]

/// A session through the writer itself: 3 ECG samples, an acceleration vector, the strap's
/// measurement, a gap line, 2 ECG samples and another measurement after it.
private func written(_ format: SessionFileFormat) -> [UInt8] {
    var writer = ECGSessionWriter(format: format)
    var bytes = Array((writer.header ?? "").utf8)
    for i in 0..<3 {
        writer.appendECG(Int32(100 * i - 50), deviceTime: d0 + UInt64(i) * step, time: t0 + Int64(i) * 7692, to: &bytes)
    }
    writer.appendAcceleration(PMDAcceleration(x: -187, y: -28, z: 949), deviceTime: d0 + 5, time: t0 + 1, to: &bytes)
    writer.appendHeartRate(raw: heartRateRaw, time: t0 + 20_000, to: &bytes)
    writer.appendGap(milliseconds: 3250, time: t0 + 4_000_000, to: &bytes)
    writer.appendECG(7, deviceTime: d0 + 4_000_000_000, time: t0 + 4_000_000, to: &bytes)
    writer.appendECG(-8, deviceTime: d0 + 4_000_000_000 + step, time: t0 + 4_007_692, to: &bytes)
    writer.appendHeartRate(raw: [0x06, 0x49], time: t0 + 4_500_000, to: &bytes)
    return bytes
}

/// Reads `text` whole.
private func read(_ text: String) throws(ECGSessionError) -> ECGRecording {
    try ECGSessionReader.read(Array(text.utf8))
}

/// The CSV header `rawble ecg --csv` writes.
private let header = "time,device_time_ns,type,uV,x_mG,y_mG,z_mG,raw"

@Suite("ECG session files: the CSV and JSON lines rawble ecg writes, read back")
struct ECGSessionReaderTests {
    @Test("what ECGSessionWriter writes reads back, CSV and JSON lines alike: runs split at the gap line, the strap's RR decoded, the acceleration kept")
    func roundTrip() throws {
        for format in [SessionFileFormat.csv, .jsonLines] {
            let bytes = written(format)
            #expect(SessionFileKind.detect(bytes) == .ecg, "\(format)")
            let session = try ECGSessionReader.read(bytes)
            #expect(session.summary.format == format)
            #expect(session.runs.count == 2, "\(format)")
            #expect(session.runs.first?.microvolts == [-50, 50, 150])
            #expect(session.runs.first?.deviceTimes == [d0, d0 + step, d0 + 2 * step])
            #expect(session.runs.first?.startTime == t0)
            #expect(session.runs.last?.microvolts == [7, -8])
            #expect(session.gaps.count == 1 && session.gaps.first?.marked == true)
            #expect(session.gaps.first?.end == t0 + 4_000_000)
            let expected: [[Double]] = [[520.0 * 1000 / 1024, 781.0 * 1000 / 1024], []]
            #expect(session.strapMeasurements.map(\.rrIntervals) == expected)
            #expect(session.strapMeasurements.map(\.bpm) == [72, 73])
            #expect(session.strapMeasurements.map(\.segment) == [0, 1])
            #expect(session.summary.ecgSampleCount == 5 && session.summary.accelerationCount == 1)
            #expect(session.acceleration == [ECGAccelerationSample(time: t0 + 1, x: -187, y: -28, z: 949)], "kept for an export")
            #expect(session.summary.heartRateCount == 2 && session.summary.strapRRIntervalCount == 2)
            #expect(session.summary.gapLineCount == 1 && session.summary.brokenLineCount == 0)
            #expect(session.summary.lineCount == (format == .csv ? 10 : 9))
            #expect(session.summary.leftOut.isEmpty)
            #expect(session.ecgSampleCount == 5)
        }
    }

    @Test("a file of several H10s (labelled lines, CSV and JSON lines): each strap its own runs, gaps and measurements, interleaved lines kept apart; the file's summary counts them all")
    func severalStraps() throws {
        let a = StrapLabel(address: "C0:B1:E0:00:02:01", name: "Polar H10 5EED0001")
        let b = StrapLabel(address: "C0:B1:E0:00:02:02", name: "Polar, \"H10\"")
        for format in [SessionFileFormat.csv, .jsonLines] {
            var first = ECGSessionWriter(format: format, labelled: true, strap: a)
            var second = ECGSessionWriter(format: format, labelled: true, strap: b)
            var bytes = Array((first.header ?? "").utf8)
            #expect(first.header == (format == .csv ? "time,strap,strap_name,device_time_ns,type,uV,x_mG,y_mG,z_mG,raw\n" : nil))
            // Interleaved as a group run writes them; the second's device clock is its own (earlier).
            for i in 0..<3 {
                first.appendECG(Int32(i), deviceTime: d0 + UInt64(i) * step, time: t0 + Int64(i) * 7692, to: &bytes)
                second.appendECG(Int32(-i), deviceTime: d0 / 2 + UInt64(i) * step, time: t0 + Int64(i) * 7692, to: &bytes)
            }
            second.appendHeartRate(raw: heartRateRaw, time: t0 + 20_000, to: &bytes)
            second.appendGap(milliseconds: 2000, time: t0 + 2_000_000, to: &bytes)
            second.appendECG(9, deviceTime: d0 / 2 + 3_000_000_000, time: t0 + 2_000_000, to: &bytes)
            let session = try ECGSessionReader.read(bytes)
            #expect(session.straps.map(\.address) == [a.address, b.address], "\(format)")
            #expect(session.straps.map(\.name) == [a.name, b.name], "\(format)")
            let (one, two) = (session.straps[0].recording, session.straps[1].recording)
            #expect(one.runs.map(\.microvolts) == [[0, 1, 2]])
            #expect(two.runs.map(\.microvolts) == [[0, -1, -2], [9]])
            #expect(two.gaps.count == 1 && two.gaps.first?.marked == true && one.gaps.isEmpty)
            #expect(two.strapMeasurements.map(\.bpm) == [72] && one.strapMeasurements.isEmpty)
            #expect(one.summary.ecgSampleCount == 3 && two.summary.ecgSampleCount == 4)
            #expect(session.summary.ecgSampleCount == 7 && session.summary.heartRateCount == 1)
            #expect(session.summary.outOfOrderCount == 0 && session.summary.brokenLineCount == 0, "\(session.summary.leftOut)")
            // Lines of one strap: no strap columns, no straps.
            #expect(try ECGSessionReader.read(written(format)).straps.isEmpty)
        }
    }

    @Test("any split into chunks gives the same session as the whole file (byte by byte included)")
    func chunks() throws {
        for format in [SessionFileFormat.csv, .jsonLines] {
            let bytes = written(format)
            let whole = try ECGSessionReader.read(bytes)
            for size in [1, 2, 7, 64, 1000] {
                var reader = ECGSessionReader()
                var records: [ECGSessionRecord] = []
                var start = 0
                while start < bytes.count {
                    try reader.read(chunk: bytes[start..<min(start + size, bytes.count)]) { records.append($0) }
                    start += size
                }
                let session = try reader.finish { records.append($0) }
                #expect(session == whole, "\(format), chunks of \(size)")
                #expect(records.count == 9, "\(format), chunks of \(size)")
            }
        }
    }

    @Test("the kind of file from its first line: ECG CSV header or a JSON type; a heart-rate file, anything else")
    func kinds() {
        func kind(_ text: String) -> SessionFileKind { SessionFileKind.detect(Array(text.utf8)) }
        #expect(kind(header + "\n") == .ecg)
        #expect(kind("\u{FEFF}\n  \r\n" + header + "\r\n") == .ecg)
        #expect(kind(#"{"time":"2026-11-22T05:14:12Z","deviceTime":1,"type":"ecg","uV":1}"#) == .ecg)
        #expect(kind("time,bpm,contact,energy_expended_kj,rr_intervals_ms,raw\n") == .heartRate)
        #expect(kind(#"{"event":"measurement","time":"2026-11-22T05:14:12Z","bpm":72}"#) == .heartRate)
        #expect(kind("hello\n") == .heartRate)
        #expect(kind("") == .heartRate)
        #expect(kind(#"{"type":"ecg""#) == .heartRate)  // a broken object is not judged an ECG line
    }

    @Test("every bad line is left out with its line number and why; the good ones around it are kept")
    func badLines() throws {
        let long = String(repeating: "7", count: 5000)
        // Seven lines each broken in its own way (in both reads below).
        let unreadable = """
            2026-11-22T05:14:12Z,\(d0 + step),pulse,1,,,,
            not a time,\(d0 + step),ecg,1,,,,
            2026-11-22T05:14:12Z,\(d0 + step),ecg,1,,,,\(long)
            2026-11-22T05:14:12Z,,hr,,,,,16
            2026-11-22T05:14:12Z,,hr,,,,,zz
            2026-11-22T05:14:12Z,\(d0 + step),acc,,1,x,3,
            2026-11-22T05:14:12Z,\(d0 + step),ecg,,,,,
            """
        let session = try read("""
            \(header)
            2026-11-22T05:14:12Z,\(d0),ecg,100,,,,
            2026-11-22T05:14:12Z,\(d0 + step),ecg
            2026-11-22T05:14:12Z,\(d0 + step),ecg,abc,,,,
            2026-11-22T05:14:12Z,\(d0 + step),ecg,99999999999,,,,
            2026-11-22T05:14:12Z,99999999999999999999,ecg,1,,,,
            2026-11-22T05:14:12Z,-5,ecg,1,,,,
            \(unreadable)
            2026-11-22T05:14:12Z,\(d0 + 2 * step),ecg,102,,,,
            """)
        #expect(session.runs.map(\.microvolts) == [[100, 102]])
        #expect(session.summary.brokenLineCount == 12)
        let lines = session.summary.problems.map(\.line)
        #expect(lines == [3, 4, 5, 6, 7], "the first five kept: \(session.summary.problems)")
        #expect(session.summary.problems.map(\.problem) == [
            .missingFields(expected: 8, found: 3), .badField("uV"), .badField("uV"),
            .badField("device_time_ns"), .badField("device_time_ns"),
        ])
        var reader = ECGSessionReader(keptProblems: 20)
        try reader.read(chunk: Array("""
            \(header)
            \(unreadable)
            2026-11-22T05:14:12Z,\(d0),ecg,1.5,,,,
            2026-11-22T05:14:12Z,\(d0),ecg,1,,,,

            """.utf8))
        let problems = try reader.finish().summary.problems
        #expect(problems.map(\.line) == [2, 3, 4, 5, 6, 7, 8, 9])
        #expect(problems.count == 8)
        guard problems.count == 8 else { return }
        #expect(problems[0].problem == .unknownType("pulse"))
        #expect(problems[1].problem == .badTime)
        #expect(problems[2].problem == .tooLong(limit: 4096))
        if case .rawDoesNotDecode = problems[3].problem {} else { Issue.record("a raw value without the heart rate: \(problems[3])") }
        #expect(problems[4...].map(\.problem) == [.badField("raw"), .badField("y_mG"), .badField("uV"), .badField("uV")])
        #expect(problems.allSatisfy { $0.problem.isBroken })
    }

    @Test("JSON lines: broken JSON, wrong types, huge and non-numeric values, a line over the limit: left out, counted")
    func badJSONLines() throws {
        let time = #""time":"2026-11-22T05:14:12Z""#
        let text = [
            #"{\#(time),"deviceTime":\#(d0),"type":"ecg","uV":1}"#,
            #"{\#(time),"deviceTime":\#(d0 + step),"type":"ecg","uV":1"#,
            #"{\#(time),"deviceTime":"\#(d0 + step)","type":"ecg","uV":1}"#,
            #"{\#(time),"deviceTime":\#(d0 + step),"type":"ecg","uV":"1"}"#,
            #"{\#(time),"deviceTime":\#(d0 + step),"type":"ecg","uV":1e300}"#,
            #"{\#(time),"deviceTime":1e30,"type":"ecg","uV":1}"#,
            #"{\#(time),"deviceTime":\#(d0 + step),"type":7,"uV":1}"#,
            #"{\#(time),"deviceTime":\#(d0 + step),"uV":1}"#,
            #"{"deviceTime":\#(d0 + step),"type":"ecg","uV":1}"#,
            #"{\#(time),"type":"hr","raw":"1"}"#,
            #"{\#(time),"type":"hr","raw":[1,2]}"#,
            #"{\#(time),"deviceTime":\#(d0 + step),"type":"ecg","uV":1,"x":\#(String(repeating: "[", count: 40))}"#,
            #"{\#(time),"deviceTime":\#(d0 + step),"type":"ecg","uV":1,"pad":"\#(String(repeating: "a", count: 5000))"}"#,
            #"{\#(time),"deviceTime":\#(d0 + 2 * step),"type":"ecg","uV":3,"future":{"nested":[1,{"a":null}]}}"#,
        ].joined(separator: "\n")
        var reader = ECGSessionReader(keptProblems: 20)
        try reader.read(chunk: Array(text.utf8))
        let session = try reader.finish()
        #expect(session.runs.map(\.microvolts) == [[1, 3]])
        #expect(session.summary.brokenLineCount == 12)
        let problems = session.summary.problems
        #expect(problems.map(\.line) == Array(2...13))
        #expect(problems[0].problem == .notJSON(offset: text.split(separator: "\n")[1].utf8.count))
        #expect(problems[1].problem == .badField("deviceTime"))
        #expect(problems[2].problem == .badField("uV"))
        #expect(problems[3].problem == .badField("uV"))
        #expect(problems[4].problem == .badField("deviceTime"))
        #expect(problems[5].problem == .badField("type"))
        #expect(problems[6].problem == .badField("type"))
        #expect(problems[7].problem == .badTime)
        #expect(problems[8].problem == .badField("raw"))
        #expect(problems[9].problem == .badField("raw"))
        if case .notJSON = problems[10].problem {} else { Issue.record("nesting: \(problems[10])") }
        #expect(problems[11].problem == .tooLong(limit: 4096))
    }

    @Test("a file mixing kinds: rawble hr's lines in an ECG session are named as such, not read as ECG")
    func mixedKinds() throws {
        let csv = try read("""
            \(header)
            2026-11-22T05:14:12Z,\(d0),ecg,100,,,,
            time,bpm,contact,energy_expended_kj,rr_intervals_ms,raw
            2026-11-22T05:14:13Z,72,detected,,833,164808020d03
            \(header)
            2026-11-22T05:14:12Z,\(d0 + step),ecg,101,,,,
            """)
        #expect(csv.runs.map(\.microvolts) == [[100, 101]])
        #expect(csv.summary.repeatedHeaderCount == 1)
        #expect(csv.summary.problems == [SessionFileProblem(line: 3, problem: .otherFileKind),
                                         SessionFileProblem(line: 4, problem: .missingFields(expected: 8, found: 6))])
        let json = try read("""
            {"time":"2026-11-22T05:14:12Z","deviceTime":\(d0),"type":"ecg","uV":100}
            {"event":"measurement","time":"2026-11-22T05:14:13Z","bpm":72,"rrIntervals":[0.8]}
            {"event":"connected","time":"2026-11-22T05:14:13Z"}
            """)
        #expect(json.runs.map(\.microvolts) == [[100]])
        #expect(json.summary.problems.map(\.problem) == [.otherFileKind, .otherFileKind])
        // And the other way round: the heart-rate reader does not take an ECG file's lines.
        #expect(SessionFileKind.detect(Array("time,bpm,contact,energy_expended_kj,rr_intervals_ms,raw\n".utf8)) == .heartRate)
    }

    @Test("device time: a sample not after the one before is left out; a jump over a second without a gap line starts a run")
    func deviceTimeOrder() throws {
        let session = try read("""
            \(header)
            2026-11-22T05:14:12Z,\(d0 + step),ecg,1,,,,
            2026-11-22T05:14:12Z,\(d0 + step),ecg,2,,,,
            2026-11-22T05:14:12Z,\(d0),ecg,3,,,,
            2026-11-22T05:14:12Z,\(d0 + 2 * step),ecg,4,,,,
            2026-11-22T05:14:15Z,\(d0 + 3_000_000_000),ecg,5,,,,
            2026-11-22T05:14:16Z,,gap,,,,,
            2026-11-22T05:14:16Z,\(d0),ecg,6,,,,
            """)
        #expect(session.runs.map(\.microvolts) == [[1, 4], [5], [6]])
        #expect(session.gaps.map(\.marked) == [false, true])
        #expect(session.summary.outOfOrderCount == 2 && session.summary.brokenLineCount == 0)
        #expect(session.summary.problems == [
            SessionFileProblem(line: 3, problem: .deviceTimeNotIncreasing(previous: d0 + step)),
            SessionFileProblem(line: 4, problem: .deviceTimeNotIncreasing(previous: d0 + step)),
        ])
        #expect(!session.summary.problems[0].problem.isBroken)
        #expect(session.summary.leftOut == ["2 ECG samples not after the one before left out (line 3: "
            + "its device time is not after the sample's before it; line 4: its device time is not after the sample's before it)"])
        #expect(session.runs[0].measuredSamplingRate.map { abs($0 - 1e9 / Double(step) / 1) < 1e-6 } == true)
        #expect(session.runs[1].measuredSamplingRate == nil)
    }

    @Test("files that are no ECG session: empty, another format, no ECG sample; every later read throws the same")
    func errors() throws {
        #expect(throws: ECGSessionError.empty) { try read("") }
        #expect(throws: ECGSessionError.empty) { try read("\n \n\r\n") }
        #expect(throws: ECGSessionError.unrecognizedFormat(firstLine: "hello")) { try read("hello\n\(header)\n") }
        do {
            _ = try read("\(header)\n2026-11-22T05:14:12Z,,hr,,,,,0648\n2026-11-22T05:14:12Z,1,ecg,x,,,,\n")
            Issue.record("no ECG, no error")
        } catch {
            guard case .noECG(let summary) = error else { Issue.record("\(error)"); return }
            #expect(summary.heartRateCount == 1 && summary.brokenLineCount == 1)
            #expect("\(error)".contains("no ECG sample in 3 lines"))
        }
        var reader = ECGSessionReader()
        #expect(throws: ECGSessionError.self) { try reader.read(line: "nothing") }
        #expect(throws: ECGSessionError.self) { try reader.read(line: header) }
    }

    @Test("hostile bytes (seeded noise, NULs, half lines, long runs of digits) never trap: each line is read or left out")
    func noise() throws {
        var generator = SplitMix64(state: 26)
        let alphabet = Array("0123456789,{}[]\":.-eE \t\rabcdefghrtypuVxyz".utf8) + [0, 0xFF, 0xC3]
        for round in 0..<200 {
            var bytes = Array((round % 2 == 0 ? header : #"{"type":"ecg"}"#).utf8) + [UInt8(ascii: "\n")]
            for _ in 0..<Int(generator.next() % 400) {
                bytes.append(generator.next() % 9 == 0 ? UInt8(ascii: "\n") : alphabet[Int(generator.next() % UInt64(alphabet.count))])
            }
            var reader = ECGSessionReader(maxLineLength: 64)
            do {
                try reader.read(chunk: bytes)
                let session = try reader.finish()
                #expect(session.summary.ecgSampleCount == session.ecgSampleCount)
            } catch {
                // A typed error is an answer; a trap would end the test process.
                _ = error.description
            }
        }
    }
}
