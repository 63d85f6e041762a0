@testable import rawble
import RawbleAnalysis
import RawbleTestSupport
import RawbleWire
import Synchronization
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
        // A clock of its own: a stall of the machine between two values cannot become a gap.
        let ticks = Atomic<Int>(0)
        let live = LiveAnalysis(zones: nil, every: 0, sparkline: false) {
            Double(ticks.add(1, ordering: .relaxed).newValue) * 1e-6
        }
        for value in values { _ = live.add(value, wallTime: 0) }
        let summary = try #require(live.summaryLine())

        var analyzer = HeartRateAnalyzer(configuration: .init(windowDuration: 60))
        for (index, value) in values.enumerated() { analyzer.add(HeartRateSample(value, at: Double(index + 1) * 1e-6)) }
        analyzer.finish()
        let figures = analyzer.sessionFigures
        #expect(analyzer.artifacts.total > 0, "the series has artifacts to correct")
        let rmssd = try #require(figures.rmssd), sdnn = try #require(figures.sdnn)
        let expected = "HRV over \(figures.beatCount) beats: RMSSD \(ReportText.decimal(rmssd)) ms, SDNN \(ReportText.decimal(sdnn)) ms"
            + " (\(analyzer.artifacts.total) artifacts corrected)"
        #expect(summary.hasPrefix("session: \(values.count) measurements; \(expected)"), "\(summary)\n\(expected)")
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
