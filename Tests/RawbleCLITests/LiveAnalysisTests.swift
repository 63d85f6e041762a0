@testable import rawble
import RawbleAnalysis
import RawbleReport
import RawbleTestSupport
import RawbleWire
import Testing

/// `hr`'s live analysis queues measurements and gives them to the analyzer when a figure is
/// asked for: the figures must be those of the analyzer fed one measurement at a time.
@Suite("hr's live analysis")
struct LiveAnalysisTests {
    /// A seeded series around 70 bpm with variability and a few injected missed and extra beats.
    static func series(count: Int) -> [HeartRateMeasurement] {
        var random = SplitMix64(state: 0x5EED_1234)
        var values: [HeartRateMeasurement] = []
        for index in 0..<count {
            var beats: [Double] = [0.85 + 0.05 * Double(random.next() % 1000) / 1000]
            if index % 97 == 0 { beats = [beats[0] * 2] }  // a missed beat
            if index % 131 == 0 { beats = [beats[0] * 0.45, beats[0] * 0.55] }  // an extra beat
            if index % 10 == 0 { beats = [] }  // some values carry no RR interval
            values.append(HeartRateMeasurement(bpm: UInt16(60 + random.next() % 20), rrIntervals: beats.map(RRInterval.init(seconds:))))
        }
        return values
    }

    @Test("queued and analysed in batches (past the queue's bound too): the session's figures and artifacts equal the analyzer's fed one value at a time")
    func batchesGiveTheSameFigures() throws {
        let values = Self.series(count: PendingMeasurements.capacity * 3 + 17)
        // Times 1 µs apart: a stall of the machine between two values cannot become a gap.
        let live = LiveAnalysis(zones: nil, every: 0, sparkline: false)
        for (index, value) in values.enumerated() { _ = live.add(value, at: Int64(index + 1)) }
        let summary = try #require(live.summaryLine())

        var analyzer = HeartRateAnalyzer(configuration: .init(windowDuration: 60))
        for (index, value) in values.enumerated() {
            analyzer.add(HeartRateSample(value, at: SessionSample.seconds(unixMicroseconds: Int64(index + 1))))
        }
        analyzer.finish()
        let figures = analyzer.sessionFigures
        #expect(analyzer.artifacts.total > 0, "the series has artifacts to correct")
        let rmssd = try #require(figures.rmssd), sdnn = try #require(figures.sdnn)
        let expected = "HRV over \(figures.beatCount) beats: RMSSD \(ReportText.decimal(rmssd)) ms, SDNN \(ReportText.decimal(sdnn)) ms"
            + " (\(analyzer.artifacts.total) artifacts corrected)"
        #expect(summary.hasPrefix("session: \(values.count) measurements; \(expected)"), "\(summary)\n\(expected)")
    }

    @Test("the zones and HRV hr shows at its end are those rawble report computes from the file it wrote (a strap at 2 values a second, as the demo's: zones on the half second, where live and report once said 13 s and 14 s)")
    func summaryAgreesWithTheReport() throws {
        // The demo's double-speed strap: a value every 0.5 s, so a zone's time is a multiple of
        // 0.5 s, where rounding to whole seconds goes either way on the last bit of a sum.
        // The live analysis read its own clock (the coarse monotonic one, a few ms off the
        // file's times): on this series "Z2 13 s" at the end of hr, "Z2 14 s" in the report.
        let zones = try ZoneOptions.parse(["--max-hr", "200"])
        let live = LiveAnalysis(zones: zones.zones, every: 0)
        var writer = SessionFileWriter(format: .csv)
        var file = Array((writer.header ?? "").utf8)
        var time: Int64 = 1_780_000_000_123_457
        for index in 0..<80 {
            // 110 bpm (Z1) for 17 values, 130 (Z2) for 9, then back; RR to match.
            let bpm: UInt16 = index % 26 < 17 ? 110 : 130
            let value = HeartRateMeasurement(bpm: bpm, rrIntervals: [RRInterval(seconds: 60 / Double(bpm))])
            var raw = ByteWriter()
            value.encode(into: &raw)
            _ = live.add(value, at: time)
            writer.append(value, raw: raw.bytes, time: time, to: &file)
            time += 500_000
        }
        let liveLine = try #require(live.summaryLine())

        let (samples, summary) = try SessionFileReader.read(file)
        let analysis = SessionAnalysis(
            measurements: samples.map { HeartRateSample(time: $0.seconds, heartRate: Double($0.bpm), rrIntervals: $0.rrIntervals) },
            configuration: .init(zones: zones.zones))
        let report = ReportText.lines(analysis, summary: summary, zones: zones, file: "s.csv", plot: nil)
        let reportZones = try #require(report.first { $0.hasPrefix("zones") })
        // "zones: Z2 12 s, Z1 27 s" live; "zones (max HR …): Z2 12 s (31 %), Z1 27 s (69 %)" in the report.
        let liveZones = try #require(liveLine.split(separator: "; ").first { $0.hasPrefix("zones: ") })
        let shown = liveZones.dropFirst("zones: ".count).split(separator: ", ").map(String.init)
        let reported = try #require(reportZones.split(separator: "): ", maxSplits: 1).last).split(separator: ", ")
            .map { $0.split(separator: " (").first.map(String.init) ?? "" }
        #expect(shown.count == 2)
        #expect(shown == reported, "live: \(liveLine)\nreport: \(reportZones)")
        let hrv = try #require(report.first { $0.hasPrefix("HRV") })
        let figures = analysis.figures
        let rmssd = try #require(figures.rmssd)
        #expect(hrv.contains("RMSSD \(ReportText.decimal(rmssd)) ms"))
        #expect(liveLine.contains("RMSSD \(ReportText.decimal(rmssd)) ms"), "live: \(liveLine)\nreport: \(hrv)")
    }

    @Test("the queue gives back each measurement's time, rate and RR intervals, in order, and is empty after")
    func queueKeepsOrder() {
        var queue = PendingMeasurements()
        let values = Self.series(count: 50)
        for (index, value) in values.enumerated() { queue.append(value, at: Double(index)) }
        var seen: [(Double, Double, [Double])] = []
        queue.drain { seen.append(($0, $1, Array($2))) }
        #expect(seen.map(\.0) == values.indices.map(Double.init))
        #expect(seen.map(\.1) == values.map { Double($0.bpm) })
        #expect(seen.map(\.2) == values.map { $0.rrIntervals.map(\.milliseconds) })
        var after = 0
        queue.drain { _, _, _ in after += 1 }
        #expect(after == 0)
    }
}
