import RawbleAnalysis
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

/// RawbleAnalysis against NeuroKit2 0.2.13, the independent reference: the same RR series to
/// both; RMSSD, SDNN, pNN50 and mean HR within 1 % on the series as given and after each tool's
/// own Kubios correction, and the same beats classified.
@Suite(.tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct NeuroKitComparisonTests {
    static func expectClose(_ ours: TimeDomainHRV, _ theirs: NeuroKitReference.Figures, _ label: String,
                            tolerance: Double = 0.01, sourceLocation: SourceLocation = #_sourceLocation) {
        let pairs: [(String, Double?, Double?)] = [
            ("RMSSD", ours.rmssd, theirs.RMSSD), ("SDNN", ours.sdnn, theirs.SDNN),
            ("pNN50", ours.pnn50, theirs.pNN50), ("mean HR", ours.meanHeartRate, theirs.MeanHR),
            ("mean RR", ours.meanRR, theirs.MeanNN), ("pNN20", ours.pnn20, theirs.pNN20),
        ]
        for (name, a, b) in pairs {
            guard let a, let b else {
                Issue.record("\(label) \(name): rawble \(String(describing: a)), NeuroKit2 \(String(describing: b))", sourceLocation: sourceLocation)
                continue
            }
            let relative = abs(a - b) / max(abs(b), 1e-9)
            #expect(relative <= tolerance, "\(label) \(name): rawble \(a), NeuroKit2 \(b)", sourceLocation: sourceLocation)
        }
    }

    @Test func cleanInjectedAndLongSeriesAgreeWithNeuroKit2BeforeAndAfterCorrection() async throws {
        let clean = RRSeries.clean(count: 1500, seed: 11)
        let injected = RRSeries.withArtifacts(count: 3000, seed: 12, spacing: 97)
        let long = RRSeries.withArtifacts(count: 20_000, seed: 13, spacing: 401)
        let all = [clean.intervals, injected.series.intervals, long.series.intervals]
        let references = try await NeuroKitReference.results(for: all)
        try #require(references.count == all.count)
        for (label, intervals, reference) in zip3(["clean", "injected", "long"], all, references) {
            // The same definitions (SDNN's ddof, pNN50's denominator, strictly above 50 ms): on the
            // series as given the figures agree to rounding, far inside 1 %.
            Self.expectClose(TimeDomainHRV(intervals: intervals), reference.raw, "\(label), as given", tolerance: 1e-9)
            let correction = ArtifactCorrection.kubios(intervals)
            Self.expectClose(TimeDomainHRV(intervals: correction.intervals), reference.corrected, "\(label), corrected")
            // The whole-session path corrects the same way (one run: timestamps follow the beats).
            var time = 0.0
            let measurements = intervals.map { interval -> HeartRateSample in
                time += interval / 1000
                return HeartRateSample(time: time, heartRate: 60_000 / interval, rrIntervals: [interval])
            }
            let session = SessionAnalysis(measurements: measurements)
            Self.expectClose(session.figures, reference.corrected, "\(label), session")
            #expect(abs(correction.intervals.count - reference.corrected_rr.count) <= 1, "\(label): beat count")
        }
    }

    @Test func theFirstPassClassifiesTheSameBeatsAsNeuroKit2AndFindsEveryInjectedArtifact() async throws {
        let injected = RRSeries.withArtifacts(count: 3000, seed: 21, spacing: 89)
        let references = try await NeuroKitReference.results(for: [injected.series.intervals])
        let reference = try #require(references.first)
        let ours = ArtifactCorrection.kubios(injected.series.intervals, iterative: false)
        var classified: [Int: String] = [:]
        for artifact in ours.artifacts { classified[artifact.index] = "\(artifact.kind)" }
        #expect(classified == reference.first_pass.intervalPositions)
        for (position, kind) in injected.injected {
            // An ectopic beat is the short interval followed by its long partner: either may be named.
            let found = classified[position] ?? classified[position + 1]
            #expect(found != nil, "injected \(kind) at \(position) not found")
            if kind != "ectopic" { #expect(classified[position] == kind, "injected \(kind) at \(position): \(String(describing: classified[position]))") }
        }
    }
}

func zip3<A, B, C>(_ a: [A], _ b: [B], _ c: [C]) -> [(A, B, C)] {
    (0..<min(a.count, b.count, c.count)).map { (a[$0], b[$0], c[$0]) }
}
