import RawbleReport
import RawbleWire
import Testing

/// Reads `text` whole with the batch API.
private func read(_ text: String, gapThreshold: Duration = .seconds(5)) throws(SessionFileError)
    -> (samples: [SessionSample], summary: SessionFileSummary) {
    try SessionFileReader.read(Array(text.utf8), gapThreshold: gapThreshold)
}

/// 2026-11-22T05:14:12Z in microseconds since 1970.
private let t0: Int64 = 1_795_324_452_000_000

/// The ISO 8601 text of `t0` plus `seconds` (under an hour), with `fraction` (e.g. `.5`).
private func iso(_ seconds: Int, _ fraction: String = "") -> String {
    let total = 14 * 60 + 12 + seconds
    return "2026-11-22T05:\(String(100 + total / 60).dropFirst()):\(String(100 + total % 60).dropFirst())\(fraction)Z"
}

@Suite("Session files: the CSV and JSON lines rawble hr writes, read back")
struct SessionFileReaderTests {
    @Test("rawble hr --csv lines: every field typed, RR in ms, time to the microsecond")
    func csv() throws {
        let (samples, summary) = try read("""
            time,bpm,contact,energy_expended_kj,rr_intervals_ms,raw
            2026-11-22T05:14:12.000000Z,72,detected,,833 812,164808020d03
            2026-11-22T05:14:13.250001Z,73,not-detected,8,,0c490800
            """)
        #expect(summary.format == .csv)
        #expect(samples == [
            SessionSample(time: t0, bpm: 72, contact: .detected, energyExpended: nil, rrIntervals: [833, 812], line: 2),
            SessionSample(time: t0 + 1_250_001, bpm: 73, contact: .notDetected, energyExpended: 8, rrIntervals: [], line: 3),
        ])
        #expect(summary.sampleCount == 2 && summary.rrIntervalCount == 2 && summary.lineCount == 3)
        #expect(summary.firstTime == t0 && summary.lastTime == t0 + 1_250_001)
        #expect(summary.leftOut.isEmpty && summary.gaps.isEmpty)
    }

    @Test("rawble hr --jsonl / --json lines: measurements read, connected/disconnected skipped, RR seconds → ms")
    func jsonLines() throws {
        let (samples, summary) = try read("""
            {"event":"connected","address":"C0:B1:E0:00:00:01","name":"rawble-strap","manufacturer":null,"model":null,"bodySensorLocation":"chest","battery":87}
            {"event":"measurement","time":"2026-11-22T05:14:12.000000Z","bpm":72,"contact":"detected","energyExpended":null,"rrIntervals":[0.8330078125,0.5],"raw":"16480a"}
            {"event":"energyReset","ok":true}
            {"event":"measurement","time":"2026-11-22T05:14:13.000000Z","bpm":300,"contact":"unsupported","energyExpended":65535,"rrIntervals":[],"raw":"00"}
            """)
        #expect(summary.format == .jsonLines)
        #expect(samples.map(\.bpm) == [72, 300])
        #expect(samples[0].rrIntervals == [833.0078125, 500])
        #expect(samples[0].contact == .detected && samples[0].energyExpended == nil && samples[0].line == 2)
        #expect(samples[1].energyExpended == 65535 && samples[1].time == t0 + 1_000_000)
        #expect(summary.otherEventCount == 2 && summary.brokenLineCount == 0 && summary.leftOut.isEmpty)
    }

    @Test("a line without bpm or RR takes them from its raw value (decoded as a Heart Rate Measurement)")
    func rawFallback() throws {
        let raw = HeartRateMeasurement(bpm: 64, contact: .detected, energyExpended: 12,
                                       rrIntervals: RRIntervals([RRInterval(rawValue: 1024), RRInterval(rawValue: 512)]))
        let hex = Hex.encode(raw.encoded)
        let (samples, _) = try read("""
            {"event":"measurement","time":"2026-11-22T05:14:12Z","raw":"\(hex)"}
            {"time":1795324453.5,"bpm":70,"raw":"\(hex)"}
            """)
        #expect(samples == [
            SessionSample(time: t0, bpm: 64, contact: .detected, energyExpended: 12, rrIntervals: [1000, 500], line: 1),
            // Fields win; the missing ones (contact, energy, RR) come from raw.
            SessionSample(time: t0 + 1_500_000, bpm: 70, contact: .detected, energyExpended: 12, rrIntervals: [1000, 500], line: 2),
        ])
        let csv = try read("time,raw\n2026-11-22T05:14:12+01:00,\(hex)\n")
        #expect(csv.samples.first?.time == t0 - 3_600_000_000 && csv.samples.first?.bpm == 64)
    }

    @Test("gaps: samples further apart than the threshold, or a disconnected event between them")
    func gaps() throws {
        let line = { (seconds: Int) in
            #"{"event":"measurement","time":""# + iso(seconds, ".000000") + #"","bpm":70,"rrIntervals":[]}"#
        }
        let text = [line(0), line(1), line(7), line(8), #"{"event":"disconnected","reason":"timeout"}"#, line(9), line(10)]
            .joined(separator: "\n")
        let (samples, summary) = try read(text)
        #expect(samples.count == 6)
        #expect(summary.gaps == [SessionGap(start: t0 + 1_000_000, end: t0 + 7_000_000),
                                 SessionGap(start: t0 + 8_000_000, end: t0 + 9_000_000)])
        #expect(summary.gaps.first?.duration == 6)
        let wider = try read(text, gapThreshold: .seconds(10))
        #expect(wider.summary.gaps == [SessionGap(start: t0 + 8_000_000, end: t0 + 9_000_000)])
    }

    @Test("broken lines are left out and counted, the first few kept with their line numbers")
    func brokenLines() throws {
        let good = #"{"event":"measurement","time":"2026-11-22T05:14:12Z","bpm":70,"rrIntervals":[0.8]}"#
        let broken = [
            #"{"event":"measurement","time":"2026-11-22T05:14:12Z","bpm":70"#,          // cut short
            #"{"event":"measurement","time":"yesterday","bpm":70}"#,                      // bad time
            #"{"event":"measurement","time":"2026-11-22T05:14:12Z","bpm":-3}"#,           // bad bpm
            #"{"event":"measurement","time":"2026-11-22T05:14:12Z","bpm":70,"rrIntervals":[-0.5]}"#,
            #"{"event":"measurement","time":"2026-11-22T05:14:12Z","contact":"detected"}"#,  // no heart rate
            #"{"event":"measurement","time":"2026-11-22T05:14:12Z","raw":"01"}"#,         // raw too short
            "garbage",
        ]
        let (samples, summary) = try read(([good] + broken + [good]).joined(separator: "\n"))
        #expect(samples.count == 2)
        #expect(summary.brokenLineCount == 7)
        #expect(summary.problems.map(\.line) == [2, 3, 4, 5, 6])
        #expect(summary.problems.map(\.problem).prefix(5) == [
            .notJSON(offset: 61), .badTime, .badField("bpm"), .badField("rrIntervals"), .missingHeartRate,
        ])
        #expect(summary.leftOut == ["7 broken lines left out (line 2: not a JSON object (broken at byte 62); "
            + "line 3: no time, or one that is not ISO 8601; line 4: a bad bpm value; line 5: a bad rrIntervals value; "
            + "line 6: no heart rate (no bpm and no raw value); …)"])
        let csv = try read("time,bpm,contact,energy_expended_kj,rr_intervals_ms,raw\n"
                           + "2026-11-22T05:14:12Z,70,detected,,800,\nnonsense\n2026-11-22T05:14:12Z,70,maybe,,800,\n"
                           + "2026-11-22T05:14:13Z,x,detected,,,\n2026-11-22T05:14:14Z,71,detected,,800 0 70000,\n")
        #expect(csv.samples.count == 2 && csv.samples.last?.rrIntervals == [800, 0, 70000])
        #expect(csv.summary.problems.map(\.problem) == [
            .missingFields(expected: 6, found: 1), .badField("contact"), .badField("bpm"),
        ])
    }

    @Test("non-monotonic timestamps: a measurement older than the one before is left out and counted")
    func outOfOrder() throws {
        let line = { (second: Int) in "\(iso(second - 12, ".000000")),70,detected,,800," }
        let text = (["time,bpm,contact,energy_expended_kj,rr_intervals_ms,raw"] + [10, 11, 5, 11, 12, 3].map(line))
            .joined(separator: "\n")
        let (samples, summary) = try read(text)
        #expect(samples.map(\.line) == [2, 3, 5, 6])
        #expect(summary.outOfOrderCount == 2 && summary.brokenLineCount == 0)
        #expect(summary.problems == [
            SessionFileProblem(line: 4, problem: .earlierThanPrevious(previous: t0 - 1_000_000)),
            SessionFileProblem(line: 7, problem: .earlierThanPrevious(previous: t0)),
        ])
        #expect(summary.leftOut == ["2 measurements earlier than the one before left out (line 4: earlier than the measurement before it; line 7: earlier than the measurement before it)"])
    }

    @Test("an empty file, another kind of file, a file with no measurement: one clear error each")
    func wholeFileErrors() throws {
        #expect(throws: SessionFileError.empty) { try read("") }
        #expect(throws: SessionFileError.empty) { try read("\n  \n\r\n") }
        #expect(throws: SessionFileError.unrecognizedFormat(firstLine: "btsnoop\u{0}\u{0}")) { try read("btsnoop\u{0}\u{0}") }
        do {
            _ = try read("name,value\nx,1\n")
            Issue.record("a CSV without time and bpm columns was read")
        } catch {
            #expect(error.description.hasPrefix("not a rawble session file (the first line, “name,value”"))
        }
        do {
            _ = try read(#"{"event":"connected"}"# + "\n{broken\n")
            Issue.record("a file without measurements was read")
        } catch {
            guard case .noMeasurements(let summary) = error else { Issue.record("\(error)"); return }
            #expect(summary.otherEventCount == 1 && summary.brokenLineCount == 1)
            #expect(error.description == "no measurement in 2 lines: 1 broken line left out (line 2: not a JSON object (broken at byte 2))")
        }
        // A later line never changes the verdict on the first.
        var reader = SessionFileReader()
        #expect(throws: SessionFileError.unrecognizedFormat(firstLine: "hello")) { try reader.read(line: "hello") }
        #expect(throws: SessionFileError.unrecognizedFormat(firstLine: "hello")) { try reader.read(line: "time,bpm") }
    }

    @Test("streaming: chunks split anywhere give the same samples; an over-long line is broken, not kept")
    func chunks() throws {
        var text = "\u{FEFF}time,bpm,contact,energy_expended_kj,rr_intervals_ms,raw\r\n"
        for second in 0..<40 {
            text += "\(iso(second, ".5")),\(60 + second),detected,\(second),\(900 - second) \(901 - second),\r\n"
        }
        text += "time,bpm,contact,energy_expended_kj,rr_intervals_ms,raw\n"  // appended by a second run
        text += "\(iso(48)),99,detected,,,"  // no newline at the end
        let bytes = Array(text.utf8)
        let whole = try SessionFileReader.read(bytes)
        #expect(whole.samples.count == 41 && whole.summary.repeatedHeaderCount == 1)
        #expect(whole.samples.first == SessionSample(time: t0 + 500_000, bpm: 60, contact: .detected, energyExpended: 0,
                                                     rrIntervals: [900, 901], line: 2))
        for size in [1, 2, 3, 7, 64, 1000] {
            var reader = SessionFileReader()
            var samples: [SessionSample] = []
            var start = 0
            while start < bytes.count {
                try reader.read(chunk: bytes[start..<min(start + size, bytes.count)]) { samples.append($0) }
                start += size
            }
            let summary = try reader.finish { samples.append($0) }
            #expect(samples == whole.samples, "chunks of \(size)")
            #expect(summary == whole.summary, "chunks of \(size)")
        }
        var reader = SessionFileReader(maxLineLength: 80)
        var samples: [SessionSample] = []
        let long = "time,bpm\n" + String(repeating: "9", count: 200) + "\n2026-11-22T05:14:12Z,70\n"
        for byte in long.utf8 { try reader.read(chunk: [byte]) { samples.append($0) } }
        let summary = try reader.finish()
        #expect(samples.map(\.bpm) == [70])
        #expect(summary.problems == [SessionFileProblem(line: 2, problem: .tooLong(limit: 80))])
    }

    @Test("times: ISO 8601 with or without fraction and offset, or seconds since 1970; anything else is a bad time")
    func times() throws {
        let cases: [(String, Int64?)] = [
            ("2026-11-22T05:14:12Z", t0),
            ("2026-11-22T05:14:12.1Z", t0 + 100_000),
            ("2026-11-22 05:14:12.123456789Z", t0 + 123_456),
            ("2026-11-22T06:14:12+01:00", t0),
            ("2026-11-22T04:44:12-0030", t0),
            ("2026-11-22T05:14:12", t0),
            ("1795324452.25", t0 + 250_000),
            ("1970-01-01T00:00:00Z", 0),
            ("2000-02-29T12:00:00Z", 951_825_600_000_000),
            ("2026-13-22T05:14:12Z", nil),
            ("2026-11-22T05:14Z", nil),
            ("2026-11-22T05:14:12.Z", nil),
            ("nan", nil),
            ("1e300", nil),
        ]
        for (text, expected) in cases {
            let result = try? read("time,bpm\n\(text),70\n")
            #expect(result?.samples.first?.time == expected, "\(text)")
        }
    }
}

@Suite("Session files: long and hostile input")
struct SessionFileLongTests {
    @Test("a 24-hour CSV (86,400 lines) in 64 KiB chunks, absurd RR values kept: every line read, a gap found")
    func dayLong() throws {
        var text = "time,bpm,contact,energy_expended_kj,rr_intervals_ms,raw\n"
        text.reserveCapacity(6_000_000)
        for second in 0..<86_400 where !(40_000..<40_030).contains(second) {
            let rr = second % 997 == 0 ? "0 5000" : "\(700 + second % 300) \(710 + second % 290)"
            text += "\(SVGTimeText.iso(t0 + Int64(second) * 1_000_000)),\(60 + second % 100),detected,,\(rr),\n"
        }
        let bytes = Array(text.utf8)
        var reader = SessionFileReader()
        var count = 0
        var absurd = 0
        var start = 0
        while start < bytes.count {
            try reader.read(chunk: bytes[start..<min(start + 65_536, bytes.count)]) { sample in
                count += 1
                if sample.rrIntervals == [0, 5000] { absurd += 1 }
            }
            start += 65_536
        }
        let summary = try reader.finish()
        #expect(count == 86_370 && summary.sampleCount == 86_370 && summary.rrIntervalCount == 2 * 86_370)
        #expect(absurd == 87)
        #expect(summary.gaps == [SessionGap(start: t0 + 39_999_000_000, end: t0 + 40_030_000_000)])
        #expect(summary.duration == 86_399 && summary.leftOut.isEmpty)
    }

    @Test("hostile JSON: deep nesting, huge numbers, NaN, escapes, wrong types: counted, never a trap")
    func hostileJSON() throws {
        let deep = String(repeating: "[", count: 10_000)
        let lines = [
            #"{"event":"measurement","time":"2026-11-22T05:14:12Z","bpm":70}"#,
            #"{"event":"measurement","nested":"# + deep + "}",
            #"{"event":"measurement","time":"2026-11-22T05:14:13Z","bpm":1e400}"#,
            #"{"event":"measurement","time":"2026-11-22T05:14:13Z","bpm":NaN}"#,
            #"{"event":"measurement","time":"2026-11-22T05:14:13Z","bpm":70,"rrIntervals":[1e308]}"#,
            #"{"event":"measurement","time":"2026-11-22T05:14:13Z","bpm":70,"rrIntervals":"0.8"}"#,
            #"{"event":"measurement","time":"2026-11-22T05:14:13Z","bpm":70,"contact":"\u00e9\"x"}"#,
            #"{"event":42,"bpm":70}"#,
            #"{"event":"measurement","time":"2026-11-22T05:14:14Z","bpm":71,"rrIntervals":[0, 3.5],"extra":{"a":[1,{"b":null}]}}"#,
            #"{"event":"invalid","raw":"01","error":"truncated"}"#,
            #"{"time":"2026-11-22T05:14:15Z","bpm":"70"}"#,
        ]
        let (samples, summary) = try read(lines.joined(separator: "\n"))
        #expect(samples.map(\.bpm) == [70, 71])
        #expect(samples.last?.rrIntervals == [0, 3500])
        #expect(summary.brokenLineCount == 7 && summary.invalidMeasurementCount == 1 && summary.otherEventCount == 1)
        #expect(summary.leftOut.count == 2)
    }
}

/// ISO 8601 text for the tests, from microseconds (the reader's inverse, written independently).
enum SVGTimeText {
    static func iso(_ micros: Int64) -> String {
        let seconds = micros / 1_000_000
        let days = seconds / 86_400
        let secondOfDay = seconds % 86_400
        // The test stays within days of t0 (2026-11-22), in November.
        let day = 22 + (days - t0 / 86_400_000_000)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "2026-11-\(two(day))T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)).000000Z"
    }
}

@Suite("Session files: what rawble hr really wrote")
struct SessionFileRealOutputTests {
    /// The first lines `rawble hr --csv` and `--json` wrote for the same run against Bumble's
    /// simulated strap (Scripts/bumble-peer, its test script: every flag combination).
    static let csv = """
            time,bpm,contact,energy_expended_kj,rr_intervals_ms,raw
            2026-11-24T08:38:45.171668Z,62,unsupported,,,003e
            2026-11-24T08:38:45.223206Z,64,detected,,,0640
            2026-11-24T08:38:45.272674Z,66,detected,,928,1642b603
            2026-11-24T08:38:45.323026Z,70,detected,12,879 859,1e460c0084037003
            2026-11-24T08:38:45.375346Z,75,detected,,801 796 791,164b34032f032a03
            2026-11-24T08:38:45.423458Z,80,not-detected,,,0450
        """
    static let json = """
            {"event":"connected","address":"C0:B1:E0:00:00:01","name":"rawble-strap","manufacturer":"rawble-sim","model":"HRM-1","bodySensorLocation":"chest","battery":87}
            {"event":"measurement","time":"2026-11-24T08:38:45.171668Z","bpm":62,"contact":"unsupported","energyExpended":null,"rrIntervals":[],"raw":"003e"}
            {"event":"measurement","time":"2026-11-24T08:38:45.223206Z","bpm":64,"contact":"detected","energyExpended":null,"rrIntervals":[],"raw":"0640"}
            {"event":"measurement","time":"2026-11-24T08:38:45.272674Z","bpm":66,"contact":"detected","energyExpended":null,"rrIntervals":[0.927734375],"raw":"1642b603"}
            {"event":"measurement","time":"2026-11-24T08:38:45.323026Z","bpm":70,"contact":"detected","energyExpended":12,"rrIntervals":[0.87890625,0.859375],"raw":"1e460c0084037003"}
            {"event":"measurement","time":"2026-11-24T08:38:45.375346Z","bpm":75,"contact":"detected","energyExpended":null,"rrIntervals":[0.80078125,0.7958984375,0.791015625],"raw":"164b34032f032a03"}
            {"event":"measurement","time":"2026-11-24T08:38:45.423458Z","bpm":80,"contact":"not-detected","energyExpended":null,"rrIntervals":[],"raw":"0450"}
        """

    @Test("the CSV and the JSON lines of one run read as the same samples (RR within the CSV's 1 ms rounding)")
    func sameRun() throws {
        let fromCSV = try SessionFileReader.read(Array(Self.csv.utf8))
        let fromJSON = try SessionFileReader.read(Array(Self.json.utf8))
        #expect(fromCSV.samples.count == 6 && fromJSON.samples.count == 6)
        #expect(fromJSON.summary.otherEventCount == 1 && fromJSON.summary.leftOut.isEmpty && fromCSV.summary.leftOut.isEmpty)
        for (a, b) in zip(fromCSV.samples, fromJSON.samples) {
            #expect(a.time == b.time && a.bpm == b.bpm && a.contact == b.contact && a.energyExpended == b.energyExpended)
            #expect(a.rrIntervals.count == b.rrIntervals.count)
            for (x, y) in zip(a.rrIntervals, b.rrIntervals) { #expect(abs(x - y) <= 0.5) }
        }
        #expect(fromCSV.samples.map(\.contact).contains(.unsupported) && fromCSV.samples.contains { $0.energyExpended != nil })
    }
}

/// Files of several straps (`rawble hr A B`, `--all`): each strap read on its own.
@Suite("Session files of several straps: each strap in order, its own gaps")
struct SessionFileReaderStrapTests {
    @Test("CSV with strap columns: straps' lines interleave without being out of order; each strap has its own times, counts and gaps; a quoted name with a comma and a quote reads back")
    func csvStraps() throws {
        var reader = SessionFileReader()
        var samples: [SessionSample] = []
        try reader.read(chunk: Array("""
            time,strap,strap_name,bpm,contact,energy_expended_kj,rr_intervals_ms,raw
            \(iso(0)),C0:B1:E0:00:01:01,"Team ""A"", 1",70,detected,,,
            \(iso(1)),C0:B1:E0:00:01:02,B,80,detected,,,
            \(iso(1)),C0:B1:E0:00:01:01,"Team ""A"", 1",71,detected,,,
            \(iso(0)),C0:B1:E0:00:01:02,B,81,detected,,,
            \(iso(20)),C0:B1:E0:00:01:01,"Team ""A"", 1",72,detected,,,
            \(iso(2)),C0:B1:E0:00:01:02,B,82,detected,,,

            """.utf8)) { samples.append($0) }
        let summary = try reader.finish()
        #expect(samples.map(\.bpm) == [70, 80, 71, 72, 82], "B's line at 0 s comes after its line at 1 s: out of order")
        #expect(samples.map(\.strap) == ["C0:B1:E0:00:01:01", "C0:B1:E0:00:01:02", "C0:B1:E0:00:01:01", "C0:B1:E0:00:01:01", "C0:B1:E0:00:01:02"])
        #expect(summary.outOfOrderCount == 1 && summary.sampleCount == 5)
        let straps = reader.straps
        #expect(straps.map(\.address) == ["C0:B1:E0:00:01:01", "C0:B1:E0:00:01:02"])
        #expect(straps.map(\.name) == ["Team \"A\", 1", "B"])
        #expect(straps[0].summary.sampleCount == 3 && straps[1].summary.sampleCount == 2)
        #expect(straps[0].summary.gaps == [SessionGap(start: t0 + 1_000_000, end: t0 + 20_000_000)])
        #expect(straps[1].summary.gaps.isEmpty, "B's lines are 1 s apart: no gap, though A's line between them is 19 s later")
        #expect(straps[1].summary.firstTime == t0 + 1_000_000 && straps[1].summary.lastTime == t0 + 2_000_000)
    }

    @Test("JSON lines: address and name name the strap; a disconnected event with an address is a gap of that strap only")
    func jsonStraps() throws {
        var reader = SessionFileReader()
        var samples: [SessionSample] = []
        func line(_ seconds: Int, _ strap: String, _ bpm: Int) -> String {
            #"{"event":"measurement","time":"\#(iso(seconds))","address":"\#(strap)","name":"s\#(strap.suffix(1))","bpm":\#(bpm),"contact":"detected","energyExpended":null,"rrIntervals":[],"raw":""}"#
        }
        let text = [
            line(0, "AA:00:00:00:00:01", 60), line(0, "AA:00:00:00:00:02", 61),
            #"{"event":"disconnected","time":"\#(iso(1))","address":"AA:00:00:00:00:02","name":"s2","reason":"x"}"#,
            line(2, "AA:00:00:00:00:01", 62), line(2, "AA:00:00:00:00:02", 63),
        ].joined(separator: "\n")
        try reader.read(chunk: Array(text.utf8)) { samples.append($0) }
        _ = try reader.finish { samples.append($0) }
        #expect(samples.count == 4)
        #expect(reader.straps.map(\.name) == ["s1", "s2"])
        #expect(reader.straps[0].summary.gaps.isEmpty)
        #expect(reader.straps[1].summary.gaps == [SessionGap(start: t0, end: t0 + 2_000_000)])
    }

    @Test("a file naming more straps than the reader follows: the further straps' lines are broken, counted, the rest read")
    func tooManyStraps() throws {
        var lines = ["time,strap,strap_name,bpm"]
        for index in 0...SessionFileReader.strapLimit {
            lines.append("\(iso(0)),S\(index),,70")
        }
        let (samples, summary) = try read(lines.joined(separator: "\n"))
        #expect(samples.count == SessionFileReader.strapLimit)
        #expect(summary.brokenLineCount == 1)
        #expect(summary.problems.first?.problem == .tooManyStraps(limit: SessionFileReader.strapLimit))
    }
}
