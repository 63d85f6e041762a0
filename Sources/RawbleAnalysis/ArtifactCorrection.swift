import RawbleWire

/// RR artifact correction of a whole series at once: Lipponen & Tarvainen's method (Kubios),
/// matched to NeuroKit2 0.2.13's `signal_fixpeaks(method="Kubios", iterative=True)`.
///
/// The input is one continuous run of RR intervals in ms (a gap breaks a series in two: correct
/// each run on its own). Values that are not finite and positive are left out. Cost: O(n · 91)
/// per pass (sorted sliding windows), a handful of passes at most.
public struct ArtifactCorrection: Sendable, Hashable {
    /// The corrected RR intervals, ms.
    public var intervals: [Double]
    /// The positions in ``intervals`` the correction made or changed (an inserted, moved or
    /// merged beat at either end), for a plot to mark.
    public var correctedIndices: [Int]
    /// Every artifact found, by its position in the input series, in the order the passes found
    /// them (a beat reclassified in a later pass appears once, with its first kind). A decision
    /// on the series' very first beat (whose interval the method cannot see) is on index 0.
    public var artifacts: [Artifact]
    /// ``artifacts`` counted by kind.
    public var counts: ArtifactCounts
    /// How many correction passes were applied (1 when nothing was found).
    public var passes: Int

    public init(intervals: [Double], correctedIndices: [Int], artifacts: [Artifact], counts: ArtifactCounts, passes: Int) {
        self.intervals = intervals
        self.correctedIndices = correctedIndices
        self.artifacts = artifacts
        self.counts = counts
        self.passes = passes
    }

    /// Classifies and corrects `intervals` (ms), repeating while each pass finds fewer artifacts
    /// than the last when `iterative` (NeuroKit2's default).
    public static func kubios(_ intervals: some Collection<Double>, iterative: Bool = true) -> ArtifactCorrection {
        let (beats, artifacts, passes) = Kubios.correctRun(Array(intervals), time: { _ in 0 }, iterative: iterative)
        var result = ArtifactCorrection(intervals: beats.map(\.interval), correctedIndices: [], artifacts: artifacts,
                                        counts: ArtifactCounts(), passes: passes)
        result.correctedIndices = beats.indices.filter { beats[$0].corrected }
        for artifact in artifacts { result.counts[artifact.kind] += 1 }
        return result
    }

    /// The first artifact found on each position, in order of finding.
    static func uniqueArtifacts(_ artifacts: [Artifact]) -> [Artifact] {
        var seen = Set<Int>()
        return artifacts.filter { seen.insert($0.index).inserted }
    }
}

extension Kubios {
    /// Corrects one run of intervals (ms; values not finite and positive left out) as a whole:
    /// the corrected beats (times from `time`, given an input position), the artifacts by input
    /// position (first kind found on each), and the passes applied.
    static func correctRun(
        _ intervals: [Double], time: (Int) -> Double, iterative: Bool = true
    ) -> (beats: [CorrectedBeat], artifacts: [Artifact], passes: Int) {
        var beats: [Beat] = [Beat(time: 0, origin: -1)]
        beats.reserveCapacity(intervals.count + 1)
        var clock = 0.0
        for (index, value) in intervals.enumerated() where value.isFinite && value > 0 {
            clock += value
            beats.append(Beat(time: clock, origin: index))
        }
        guard beats.count > 1 else { return ([], [], 0) }
        let outcome = correct(beats, iterative: iterative)
        let artifacts = ArtifactCorrection.uniqueArtifacts(
            outcome.found.map { Artifact(index: max($0.origin, 0), kind: $0.kind) })
        let kinds = OriginKinds(artifacts.lazy.map { (origin: $0.index, kind: $0.kind) }, in: 0...max(intervals.count - 1, 0))
        var lastOrigin = -1
        var carried: ArtifactKind?
        var out: [CorrectedBeat] = []
        out.reserveCapacity(outcome.beats.count)
        let start = outcome.beats.first ?? beats[0]
        _ = emit(Array(outcome.beats.dropFirst()), origins: 0...max(intervals.count - 1, 0), after: start, kinds: kinds,
                 lastOrigin: &lastOrigin, carried: &carried, time: time, firstContinues: false, into: &out)
        return (out, artifacts, outcome.passes)
    }
}
