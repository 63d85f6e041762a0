import RawbleWire

/// A beat the correction works on: its time on the series' own clock (the cumulative RR sum, in
/// ms), where it came from, and what the correction did to it.
struct Beat: Sendable, Hashable {
    /// Time of the beat, ms from the series' first beat.
    var time: Double
    /// The input interval this beat ends (its position in the caller's series); -1 for the series'
    /// first beat, which ends no interval. Inserted beats take the origin of the beat after them.
    var origin: Int
    /// Inserted (a missed beat) or moved (ectopic, long/short) by the correction.
    var moved = false
    /// The interval ending at this beat swallowed a dropped beat (an extra beat merged).
    var merged = false
}

/// Lipponen & Tarvainen (2019), "A robust algorithm for heart rate variability time series
/// artefact correction using novel beat classification", J Med Eng Technol 43(3):173–181, as
/// NeuroKit2 0.2.13 implements it (`signal_fixpeaks(method="Kubios")`): the same constants
/// (c1 0.13, c2 0.17, α 5.2, 91-beat quartile windows, 11-beat median), the same classification
/// walk and the same correction order (extra, missed, ectopic, long/short), repeated while a pass
/// finds fewer artifacts than the one before. One difference, on purpose: beat times stay real
/// numbers (NeuroKit2 truncates a moved or inserted beat to a whole sample).
enum Kubios {
    static let c1 = 0.13
    static let c2 = 0.17
    static let alpha = 5.2
    static let thresholdWidth = 91
    static let medianWidth = 11

    /// Positions (in the beat array) of each kind found by one classification pass.
    struct Detection: Sendable, Hashable {
        var ectopic: [Int] = []
        var missed: [Int] = []
        var extra: [Int] = []
        var longShort: [Int] = []
        var count: Int { ectopic.count + missed.count + extra.count + longShort.count }
    }

    /// The result of ``correct(_:iterative:)``.
    struct Outcome: Sendable {
        var beats: [Beat]
        /// Every artifact of every applied pass, by the origin of the beat it was found on.
        var found: [(origin: Int, kind: ArtifactKind)]
        var passes: Int
    }

    /// Classifies and corrects `beats` (sorted by time), repeating while the count of artifacts
    /// falls when `iterative`.
    static func correct(_ beats: [Beat], iterative: Bool = true) -> Outcome {
        var beats = beats
        var found: [(origin: Int, kind: ArtifactKind)] = []
        var detection = find(beats.map(\.time))
        record(detection, beats, into: &found)
        beats = apply(detection, to: beats)
        var passes = 1
        if iterative {
            var current = detection.count
            while current > 0 {
                detection = find(beats.map(\.time))
                if detection.count >= current { break }
                current = detection.count
                record(detection, beats, into: &found)
                beats = apply(detection, to: beats)
                passes += 1
            }
        }
        return Outcome(beats: beats, found: found, passes: passes)
    }

    private static func record(_ detection: Detection, _ beats: [Beat], into found: inout [(origin: Int, kind: ArtifactKind)]) {
        let lists: [(ArtifactKind, [Int])] = [
            (.ectopic, detection.ectopic), (.missed, detection.missed),
            (.extra, detection.extra), (.longShort, detection.longShort),
        ]
        for (kind, positions) in lists {
            for position in positions where beats.indices.contains(position) {
                found.append((beats[position].origin, kind))
            }
        }
    }

    // MARK: Classification

    /// One classification pass over beat times (ms), NeuroKit2's `_find_artifacts`: positions are
    /// beat indices (the interval ending at that beat).
    static func find(_ times: [Double]) -> Detection {
        let n = times.count
        guard n > 0 else { return Detection() }
        // Intervals; the first (unknown) one is the mean of the others so filters see a real value.
        var rr = [Double](repeating: 0, count: n)
        for k in 1..<max(n, 1) { rr[k] = times[k] - times[k - 1] }
        rr[0] = n > 1 ? mean(rr[1...]) : 1000
        var drrs = [Double](repeating: 0, count: n)
        for k in 1..<max(n, 1) { drrs[k] = rr[k] - rr[k - 1] }
        drrs[0] = n > 1 ? mean(drrs[1...]) : 0

        let th1 = threshold(drrs)
        for k in 0..<n { drrs[k] = th1[k] != 0 ? drrs[k] / th1[k] : .nan }

        // Subspaces S12 and S22 over the series padded by 2 (NumPy's "reflect").
        // Only the first and last two positions reach past an end: the rest index directly (the
        // reflection's integer division, four per beat and pass, cost 3 % of the analysis).
        func padded(_ k: Int) -> Double { k >= 0 && k < n ? drrs[k] : drrs[reflect(k, count: n)] }
        var s12 = [Double](repeating: 0, count: n)
        var s22 = [Double](repeating: 0, count: n)
        for d in 0..<n {
            if drrs[d] > 0 {
                s12[d] = nanMax(padded(d - 1), padded(d + 1))
            } else if drrs[d] < 0 {
                s12[d] = nanMin(padded(d - 1), padded(d + 1))
            }
            if drrs[d] >= 0 {
                s22[d] = nanMin(padded(d + 1), padded(d + 2))
            } else if drrs[d] < 0 {
                s22[d] = nanMax(padded(d + 1), padded(d + 2))
            }
        }

        let medrr = RollingQuantiles.centredMedian(rr, width: medianWidth)
        var mrrs = [Double](repeating: 0, count: n)
        for k in 0..<n {
            let deviation = rr[k] - medrr[k]
            mrrs[k] = deviation < 0 ? deviation * 2 : deviation
        }
        let th2 = threshold(mrrs)
        for k in 0..<n { mrrs[k] = th2[k] != 0 ? mrrs[k] / th2[k] : .nan }

        var detection = Detection()
        var i = 0
        while i < n - 2 {
            if abs(drrs[i]) <= 1 { i += 1; continue }
            let eq1 = drrs[i] > 1 && s12[i] < -c1 * drrs[i] - c2
            let eq2 = drrs[i] < -1 && s12[i] > -c1 * drrs[i] + c2
            if eq1 || eq2 {
                detection.ectopic.append(i)
                i += 1
                continue
            }
            // NaN-normalised differences (a flat threshold window) reach here too.
            if !(abs(drrs[i]) > 1 || abs(mrrs[i]) > 3) { i += 1; continue }
            var candidates = [i]
            if abs(drrs[i + 1]) < abs(drrs[i + 2]) { candidates.append(i + 1) }
            // As NeuroKit2 does: every candidate advances the walk by one beat.
            for j in candidates {
                let eq3 = drrs[j] > 1 && s22[j] < -1
                let eq4 = abs(mrrs[j]) > 3
                let eq5 = drrs[j] < -1 && s22[j] > 1
                i += 1
                if !(eq3 || eq4 || eq5) { continue }
                let eq6 = abs(rr[j] / 2 - medrr[j]) < th2[j]
                let eq7 = abs(rr[j] + rr[j + 1] - medrr[j]) < th2[j]
                if eq5 && eq7 {
                    detection.extra.append(j)
                } else if eq3 && eq6 {
                    detection.missed.append(j)
                } else {
                    detection.longShort.append(j)
                }
            }
        }
        return detection
    }

    /// α × the quartile deviation of |values| over each centred 91-beat window.
    private static func threshold(_ values: [Double]) -> [Double] {
        RollingQuantiles.centredQuartileDeviation(values.map { abs($0) }, width: thresholdWidth, scale: alpha)
    }

    /// NumPy's "reflect" padding: the index `k` (which may lie before or after the series) mirrored
    /// into `0..<count` without repeating the edge.
    static func reflect(_ k: Int, count: Int) -> Int {
        guard count > 1 else { return 0 }
        let period = 2 * (count - 1)
        var m = k % period
        if m < 0 { m += period }
        return m >= count ? period - m : m
    }

    private static func nanMax(_ a: Double, _ b: Double) -> Double { a.isNaN || b.isNaN ? .nan : max(a, b) }
    private static func nanMin(_ a: Double, _ b: Double) -> Double { a.isNaN || b.isNaN ? .nan : min(a, b) }

    private static func mean(_ values: ArraySlice<Double>) -> Double {
        guard !values.isEmpty else { return 0 }
        var sum = 0.0
        for value in values { sum += value }
        return sum / Double(values.count)
    }

    // MARK: Correction

    /// Applies one pass's detection, NeuroKit2's `_correct_artifacts`: drop extra beats, insert
    /// missed ones, then move ectopic and long/short beats halfway between their neighbours,
    /// keeping every list's positions in step with the beats inserted or removed before it.
    static func apply(_ detection: Detection, to beats: [Beat]) -> [Beat] {
        var beats = beats
        var missed = detection.missed
        var ectopic = detection.ectopic
        var longShort = detection.longShort
        if !detection.extra.isEmpty {
            let dropped = marks(detection.extra, count: beats.count) { _ in true }
            var kept: [Beat] = []
            kept.reserveCapacity(beats.count)
            var mergeNext = false
            for (index, beat) in beats.enumerated() {
                if dropped[index] { mergeNext = true; continue }
                var beat = beat
                if mergeNext { beat.merged = true; mergeNext = false }
                kept.append(beat)
            }
            beats = kept
            missed = shifted(missed, by: detection.extra, -1)
            ectopic = shifted(ectopic, by: detection.extra, -1)
            longShort = shifted(longShort, by: detection.extra, -1)
        }
        if !missed.isEmpty {
            let valid = marks(missed, count: beats.count) { $0 > 1 }
            var grown: [Beat] = []
            grown.reserveCapacity(beats.count + missed.count)
            for (index, beat) in beats.enumerated() {
                if valid[index] {
                    let previous = beats[index - 1].time
                    grown.append(Beat(time: previous + (beat.time - previous) / 2, origin: beat.origin, moved: true))
                }
                grown.append(beat)
            }
            beats = grown
            ectopic = shifted(ectopic, by: missed, 1)
            longShort = shifted(longShort, by: missed, 1)
        }
        if !ectopic.isEmpty { beats = realigned(ectopic, beats) }
        if !longShort.isEmpty { beats = realigned(longShort, beats) }
        return beats
    }

    /// NeuroKit2's `_update_indices`: each position after a source position moves by `step`,
    /// then the list is sorted without repeats.
    private static func shifted(_ positions: [Int], by sources: [Int], _ step: Int) -> [Int] {
        guard !positions.isEmpty else { return positions }
        var positions = positions
        for source in sources {
            positions = positions.map { $0 > source ? $0 + step : $0 }
        }
        positions.sort()
        var unique: [Int] = []
        unique.reserveCapacity(positions.count)
        for position in positions where position != unique.last { unique.append(position) }
        return unique
    }

    /// A flag per beat (`count` of them), set at each of `positions` within range that `accepts`
    /// (hash-free sets of positions: these run for every pass over every batch).
    private static func marks(_ positions: [Int], count: Int, accepts: (Int) -> Bool) -> [Bool] {
        var flags = [Bool](repeating: false, count: count)
        for position in positions where position >= 0 && position < count && accepts(position) {
            flags[position] = true
        }
        return flags
    }

    /// Moves each beat at `positions` (excluding the first two and the last) halfway between its
    /// neighbours as they were before any move, then re-sorts by time.
    private static func realigned(_ positions: [Int], _ beats: [Beat]) -> [Beat] {
        let valid = positions.filter { $0 > 1 && $0 < beats.count - 1 }
        guard !valid.isEmpty else { return beats }
        var result = beats
        for index in valid {
            let previous = beats[index - 1].time
            let next = beats[index + 1].time
            result[index].time = previous + (next - previous) / 2
            result[index].moved = true
        }
        // A beat moved halfway between its neighbours nearly always stays between them: then the
        // order holds and there is nothing to sort (a stable sort of a sorted array is itself).
        var ordered = true
        for index in result.indices.dropFirst() where result[index - 1].time > result[index].time {
            ordered = false
            break
        }
        if ordered { return result }
        // Stable: equal times keep their order, as NumPy's mergesort does.
        return result.enumerated().sorted { a, b in
            a.element.time != b.element.time ? a.element.time < b.element.time : a.offset < b.offset
        }.map(\.element)
    }
}
