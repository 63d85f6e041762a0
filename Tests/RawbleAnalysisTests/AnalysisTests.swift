@testable import RawbleAnalysis
import RawbleWire
import RawbleTestSupport
import Testing

@Suite struct TimeDomainTests {
    @Test func figuresFollowNeuroKit2sDefinitions() throws {
        // Differences: +100, -40, +60 → RMSSD sqrt((10000+1600+3600)/3); two above 50 ms over 4 intervals.
        let figures = TimeDomainHRV(intervals: [800, 900, 860, 920])
        #expect(figures.beatCount == 4 && figures.differenceCount == 3)
        #expect(figures.meanRR == 870)
        let sdnn = try #require(figures.sdnn)
        let squares: Double = 4_900 + 900 + 100 + 2_500
        let expected = (squares / 3).squareRoot()
        #expect(abs(sdnn - expected) < 1e-9)
        let rmssd = try #require(figures.rmssd)
        #expect(abs(rmssd - ((15_200.0 / 3).squareRoot())) < 1e-9)
        #expect(figures.pnn50 == 50)
        #expect(figures.pnn20 == 75)
        #expect(figures.minHeartRate == 60_000.0 / 920)
        #expect(figures.maxHeartRate == 75)
    }

    @Test func exactlyFiftyMillisecondsIsNotCountedInPNN50() {
        #expect(TimeDomainHRV(intervals: [800, 850, 800]).pnn50 == 0)
    }

    @Test func welfordKeepsSDNNExactOnALongSessionFarFromZero() throws {
        var accumulator = HRVAccumulator()
        for k in 0..<200_000 { accumulator.add(2_999 + (k.isMultiple(of: 2) ? 0.5 : -0.5)) }
        let sdnn = try #require(accumulator.figures.sdnn)
        let n = 200_000.0
        #expect(abs(sdnn - (0.25 * n / (n - 1)).squareRoot()) < 1e-9)
    }

    @Test func aSlidingWindowKeepsOnlyItsDurationAndIsBounded() throws {
        var window = HRVWindow(duration: 60)
        for k in 0..<1_000 { window.append(1000, at: Double(k)) }
        #expect(window.count == 60)
        #expect(window.figures.beatCount == 60)
        // A flood of beats at one instant stays within the capacity.
        for _ in 0..<10_000 { window.append(250, at: 1_000) }
        #expect(window.count <= window.capacity)
        // Differences are not taken across a run's start.
        var gapped = HRVWindow(duration: 60)
        gapped.append(800, at: 1)
        gapped.append(1_000, at: 2, continuesPrevious: false)
        #expect(gapped.figures.differenceCount == 0 && gapped.figures.rmssd == nil)
    }

    @Test func rollingQuantilesEqualASortPerWindow() {
        var random = SplitMix64(state: 5)
        let spread = (0..<400).map { _ in Double(random.next() % 1000) / 7 }
        let repeated = (0..<400).map { _ in Double(random.next() % 5) }  // many equal values
        // Both signs, both zeros, and values far apart (the search compares by a difference's sign).
        let signed = (0..<400).map { _ in
            [-0.0, 0.0, -1e300, 1e300, -3.5, 2.25][Int(random.next() % 6)] * Double(1 + random.next() % 3)
        }
        for values in [spread, repeated, signed] { for width in [1, 11, 91, 1001] {
            let fast = RollingQuantiles.centred(values, width: width, quantiles: [0.25, 0.5, 0.75])
            // The analysis' own entry points give the same figures as the general one.
            #expect(RollingQuantiles.centredMedian(values, width: width) == fast[1])
            #expect(RollingQuantiles.centredQuartileDeviation(values, width: width, scale: 5.2)
                    == zip(fast[0], fast[2]).map { 5.2 * (($1 - $0) / 2) })
            let half = (width - 1) / 2
            for i in values.indices {
                let window = values[max(0, i - half)...min(values.count - 1, i + half)].sorted()
                for (q, quantile) in [0.25, 0.5, 0.75].enumerated() {
                    let expected = RollingQuantiles.interpolated(window, quantile)
                    #expect(fast[q][i] == expected || abs(fast[q][i] - expected) <= 1e-12 * max(1, abs(expected)))
                }
            }
        } }
    }
}

@Suite struct ZoneTests {
    @Test func zonesFromAgeUseTanakaAndBoundsBelongToTheUpperZone() {
        let zones = HeartRateZones(age: 40)
        #expect(zones.maxHeartRate == 208 - 0.7 * 40)   // 180
        #expect(zones.zone(for: 89) == 0)
        #expect(zones.zone(for: 90) == 1)
        #expect(zones.zone(for: 107.9) == 1)
        #expect(zones.zone(for: 108) == 2)
        #expect(zones.zone(for: 162) == 5)
        #expect(zones.zone(for: 200) == 5)
        #expect(zones.zone(for: 0) == nil)
        #expect(zones.zone(for: .nan) == nil)
        #expect(abs(zones.bounds(of: 3).lower - 126) < 1e-9 && abs(zones.bounds(of: 3).upper - 144) < 1e-9)
    }

    @Test func timeInZonesSkipsGapsUnreadValuesAndOutOfOrderSamples() {
        var time = ZoneTime(zones: HeartRateZones(maxHeartRate: 200), maxGap: 5)
        time.add(bpm: 110, at: 0)     // zone 1
        time.add(bpm: 130, at: 2)     // 2 s in zone 1; zone 2
        time.add(bpm: 130, at: 3)     // 1 s in zone 2
        time.add(bpm: 0, at: 4)       // 1 s in zone 2; no reading
        time.add(bpm: 190, at: 5)     // 1 s unread; zone 5
        time.add(bpm: 190, at: 4.5)   // out of order: ignored
        time.add(bpm: 90, at: 65)     // 60 s gap: in no zone
        time.add(bpm: 90, at: 66)     // 1 s in zone 0
        #expect(time.seconds == [1, 2, 2, 0, 0, 0])
        #expect(time.gapSeconds == 60 && time.gaps == 1)
        #expect(time.unreadSeconds == 1 && time.unreadSamples == 1)
        #expect(time.outOfOrderSamples == 1)
        #expect(time.currentZone == 0)
    }
}

@Suite struct BadInputTests {
    @Test func noRRAtAllSaysSoWithNilFigures() {
        let session = SessionAnalysis(measurements: [HeartRateSample(time: 0, heartRate: 70), HeartRateSample(time: 1, heartRate: 71)])
        #expect(session.beats.isEmpty && session.rawBeats.isEmpty)
        #expect(session.figures.beatCount == 0 && session.figures.meanRR == nil && session.figures.rmssd == nil)
        #expect(session.heartRate.samples == 2 && session.heartRate.minimum == 70)
        let empty = SessionAnalysis(measurements: [HeartRateSample]())
        #expect(empty.figures.meanRR == nil && empty.start == nil && empty.segments.isEmpty)
        var live = HeartRateAnalyzer()
        live.add(HeartRateSample(time: 0, heartRate: 70))
        #expect(live.finish().isEmpty && live.windowFigures.meanRR == nil)
        #expect(ArtifactCorrection.kubios([]).intervals.isEmpty)
    }

    @Test func zeroAbsurdAndNonFiniteIntervalsAreExcludedAndCountedAndEndTheRun() {
        let values: [Double] = [800, 0, 810, 199, 820, 3001, 830, .nan, 840, .infinity, 850, -5, 860]
        let measurements = values.enumerated().map { HeartRateSample(time: Double($0.offset), heartRate: 72, rrIntervals: [$0.element]) }
        let session = SessionAnalysis(measurements: measurements)
        #expect(session.input.excludedIntervals == 6)
        #expect(session.rawBeats.map(\.interval) == [800, 810, 820, 830, 840, 850, 860])
        // Every good beat is alone in its run: no successive difference anywhere.
        #expect(session.figures.differenceCount == 0 && session.figures.rmssd == nil)
        #expect(session.figures.beatCount == 7)
        var live = HeartRateAnalyzer()
        for measurement in measurements { live.add(measurement) }
        live.finish()
        #expect(live.input.excludedIntervals == 6 && live.sessionFigures.beatCount == 7)
    }

    @Test func measurementsOutOfOrderAreCountedAndLeftOut() {
        let measurements = [
            HeartRateSample(time: 10, heartRate: 70, rrIntervals: [850]),
            HeartRateSample(time: 11, heartRate: 70, rrIntervals: [860]),
            HeartRateSample(time: 5, heartRate: 70, rrIntervals: [870]),
            HeartRateSample(time: .nan, heartRate: 70, rrIntervals: [880]),
            HeartRateSample(time: 12, heartRate: 70, rrIntervals: [890]),
        ]
        let session = SessionAnalysis(measurements: measurements, configuration: .init(zones: HeartRateZones(maxHeartRate: 190)))
        #expect(session.input.outOfOrderMeasurements == 2)
        #expect(session.rawBeats.map(\.interval) == [850, 860, 890])
        #expect(session.start == 10 && session.end == 12)
        #expect(session.zoneTime?.outOfOrderSamples == 2)
    }

    @Test func aGapEndsTheRunAndIsCounted() {
        let measurements = [
            HeartRateSample(time: 0, heartRate: 70, rrIntervals: [850]),
            HeartRateSample(time: 1, heartRate: 70, rrIntervals: [900]),
            HeartRateSample(time: 100, heartRate: 70, rrIntervals: [700]),
            HeartRateSample(time: 101, heartRate: 70, rrIntervals: [760]),
        ]
        let session = SessionAnalysis(measurements: measurements)
        #expect(session.input.gaps == 1)
        #expect(session.figures.differenceCount == 2)   // 50 and 60, never 900 → 700
        #expect(session.rawBeats.map(\.run) == [0, 0, 1, 1])
    }

    /// Hostile series in every path: nothing traps, nothing NaN or infinite comes out.
    @Test func arbitrarySeriesNeverTrapOrGiveNonFiniteFigures() {
        var random = SplitMix64(state: 77)
        let specials: [Double] = [0, -1, .nan, .infinity, -.infinity, 1e300, 200, 3000, 1, .ulpOfOne]
        for round in 0..<200 {
            let count = Int(random.next() % 300)
            let values = (0..<count).map { _ -> Double in
                random.next() % 5 == 0 ? specials[Int(random.next() % UInt64(specials.count))] : Double(200 + random.next() % 2800)
            }
            var time = 0.0
            let measurements = values.map { value -> HeartRateSample in
                time += random.next() % 7 == 0 ? -3 : Double(random.next() % 4000) / 1000
                return HeartRateSample(time: time, heartRate: Double(random.next() % 400), rrIntervals: [value])
            }
            let session = SessionAnalysis(measurements: measurements, configuration: .init(zones: HeartRateZones(age: 30)))
            var live = HeartRateAnalyzer(configuration: .init(zones: HeartRateZones(age: 30), lookahead: 3 + round % 10))
            for measurement in measurements { live.add(measurement) }
            live.finish()
            for figures in [session.figures, session.uncorrectedFigures, live.sessionFigures, live.windowFigures,
                            TimeDomainHRV(intervals: values), ArtifactCorrection.kubios(values).intervals.isEmpty
                                ? TimeDomainHRV(intervals: []) : TimeDomainHRV(intervals: ArtifactCorrection.kubios(values).intervals)] {
                for value in [figures.meanRR, figures.meanHeartRate, figures.sdnn, figures.rmssd, figures.pnn50,
                              figures.pnn20, figures.minHeartRate, figures.maxHeartRate] {
                    if let value { #expect(value.isFinite) }
                }
            }
            #expect(session.beats.allSatisfy { $0.interval.isFinite && $0.interval > 0 })
        }
    }
}

@Suite struct StreamingTests {
    /// Beats far faster than a heart's (a 1 kHz test stream: 1 ms apart) are corrected in runs of
    /// ``StreamingArtifactCorrector/batchBeats``: held beats stay bounded, figures match the batch.
    @Test func aFastStreamIsCorrectedInBoundedBatches() throws {
        let injected = RRSeries.withArtifacts(count: 3_000, seed: 7, spacing: 89)
        let intervals = injected.series.intervals
        var corrector = StreamingArtifactCorrector(lookahead: 10)
        var beats: [CorrectedBeat] = []
        var held = 0
        var runs = 0
        for (k, interval) in intervals.enumerated() {
            let before = beats.count
            corrector.add(interval, at: Double(k) / 1000, into: &beats)
            if beats.count > before { runs += 1 }
            held = max(held, corrector.heldBeats)
        }
        corrector.endRun(into: &beats)
        #expect(held <= StreamingArtifactCorrector.lookbehind + 10 + StreamingArtifactCorrector.batchBeats)
        #expect(runs <= intervals.count / StreamingArtifactCorrector.batchBeats + 2, "\(runs) correction runs")
        let live = TimeDomainHRV(intervals: beats.map(\.interval))
        let whole = TimeDomainHRV(intervals: ArtifactCorrection.kubios(intervals).intervals)
        for (a, b) in [(live.rmssd, whole.rmssd), (live.sdnn, whole.sdnn), (live.meanHeartRate, whole.meanHeartRate)] {
            let a = try #require(a), b = try #require(b)
            #expect(abs(a - b) / b < 0.03, "live \(a), batch \(b)")
        }
        #expect(corrector.counts.total >= injected.injected.count)
    }

    /// At a strap's pace the corrector runs every `batchSeconds` of measurement time, not at every
    /// beat: beats become final in runs that many seconds apart (and no further apart).
    @Test(arguments: [2.0, 5.0])
    func aStrapsPaceIsCorrectedEveryBatchSeconds(batchSeconds: Double) {
        let intervals = RRSeries.withArtifacts(count: 600, seed: 11, spacing: 101).series.intervals
        var corrector = StreamingArtifactCorrector(lookahead: 10, batchSeconds: batchSeconds)
        #expect(corrector.batchSeconds == batchSeconds)
        var beats: [CorrectedBeat] = []
        var runTimes: [Double] = []
        var clock = 0.0
        for interval in intervals {
            clock += interval / 1000  // each beat's own time: about one value a second
            let before = beats.count
            corrector.add(interval, at: clock, into: &beats)
            if beats.count > before { runTimes.append(clock) }
        }
        let gaps = zip(runTimes.dropFirst(), runTimes).map { $0 - $1 }
        #expect(!gaps.isEmpty)
        // A run comes with the first beat at or after `batchSeconds`: at most one beat (< 2 s) later.
        #expect(gaps.allSatisfy { $0 >= batchSeconds && $0 < batchSeconds + 2 }, "\(gaps)")
        #expect(StreamingArtifactCorrector(batchSeconds: .nan).batchSeconds == StreamingArtifactCorrector.defaultBatchSeconds)
    }

    /// The live path finds the injected artifacts and lands within a few percent of the batch's
    /// figures; it holds no more than its window of beats.
    @Test func streamingCorrectionAgreesWithTheBatchAndStaysBounded() throws {
        let injected = RRSeries.withArtifacts(count: 3_000, seed: 31, spacing: 97)
        let intervals = injected.series.intervals
        let batch = ArtifactCorrection.kubios(intervals)
        var corrector = StreamingArtifactCorrector(lookahead: 10)
        var beats: [CorrectedBeat] = []
        var held = 0
        for (k, interval) in intervals.enumerated() {
            corrector.add(interval, at: Double(k), into: &beats)
            held = max(held, corrector.heldBeats)
        }
        corrector.endRun(into: &beats)
        #expect(held <= StreamingArtifactCorrector.lookbehind + 10 + StreamingArtifactCorrector.batchBeats)
        let live = TimeDomainHRV(intervals: beats.map(\.interval))
        let whole = TimeDomainHRV(intervals: batch.intervals)
        for (a, b) in [(live.rmssd, whole.rmssd), (live.sdnn, whole.sdnn), (live.meanHeartRate, whole.meanHeartRate)] {
            let a = try #require(a), b = try #require(b)
            #expect(abs(a - b) / b < 0.03, "live \(a), batch \(b)")
        }
        // Every injected artifact is reported on a beat near where it was put.
        let marked = beats.filter { $0.artifact != nil }.map { Int($0.time) }
        for position in injected.injected.keys {
            #expect(marked.contains { abs($0 - position) <= 2 },
                    "\(injected.injected[position] ?? "") at \(position) not reported live; near: \(beats.filter { abs(Int($0.time) - position) <= 3 }.map { "\(Int($0.time)):\(Int($0.interval)):\($0.artifact.map { "\($0)" } ?? "-")" })")
        }
        #expect(corrector.counts.total >= injected.injected.count)
    }

    @Test func theAnalyzerGivesWindowFiguresZonesAndArtifactCounts() throws {
        let injected = RRSeries.withArtifacts(count: 600, seed: 41, spacing: 150)
        var analyzer = HeartRateAnalyzer(configuration: .init(zones: HeartRateZones(maxHeartRate: 180), windowDuration: 60))
        var time = 0.0
        var finalized = 0
        for interval in injected.series.intervals {
            time += interval / 1000
            finalized += analyzer.add(HeartRateSample(time: time, heartRate: 60_000 / interval, rrIntervals: [interval])).count
        }
        finalized += analyzer.finish().count
        #expect(finalized == analyzer.sessionFigures.beatCount)
        let window = analyzer.windowFigures
        #expect(window.beatCount > 40 && window.beatCount < 90)
        #expect(try #require(window.rmssd) > 0)
        #expect(analyzer.artifacts.total >= injected.injected.count)
        #expect(analyzer.currentZone != nil)
        #expect((analyzer.zoneTime?.totalSeconds ?? 0) > 400)
    }

    @Test func aHeartRateMeasurementBecomesAMeasurementInMilliseconds() {
        let value = HeartRateMeasurement(bpm: 70, rrIntervals: [RRInterval(rawValue: 1024), RRInterval(rawValue: 512)])
        let measurement = HeartRateSample(value, at: 3)
        #expect(measurement.heartRate == 70 && measurement.rrIntervals == [1000, 500] && measurement.time == 3)
    }
}

@Suite struct SampleTests {
    /// A live monitor keeps one sample and updates it per notification: it must become exactly
    /// what a fresh sample of that notification is, whatever it held before (more RR intervals,
    /// fewer, none).
    @Test func updatingASampleEqualsMakingOne() throws {
        let values = try ["1048000404050406", "16480004", "00ff", "1150000008"].map {
            try HeartRateMeasurement.decode(Hex.decode($0))
        }
        var sample = HeartRateSample(time: -1, heartRate: nil, rrIntervals: [1, 2, 3, 4, 5, 6])
        for (k, value) in values.enumerated() {
            sample.update(value, at: Double(k))
            #expect(sample == HeartRateSample(value, at: Double(k)))
        }
    }
}
