import RawbleWire

/// Time-domain heart-rate variability of a set of RR intervals, with NeuroKit2 0.2.13's
/// `hrv_time` definitions: SDNN with ddof = 1, RMSSD the root mean square of successive
/// differences, pNN50 (pNN20) the successive differences strictly above 50 ms (20 ms) divided by
/// the number of intervals (differences + 1) × 100. Differences are taken only between intervals
/// of one continuous run (never across a gap or an excluded value). A figure is `nil` when there
/// are too few intervals for it; no figure is ever NaN or infinite.
public struct TimeDomainHRV: Sendable, Hashable {
    /// The intervals counted.
    public var beatCount: Int
    /// The successive differences counted (pairs of consecutive intervals in one run).
    public var differenceCount: Int
    /// Mean RR interval, ms (one interval or more).
    public var meanRR: Double?
    /// 60000 / mean RR, beats per minute (as NeuroKit2's MeanNN turned into a rate; not the mean of
    /// instantaneous rates).
    public var meanHeartRate: Double?
    /// Standard deviation of the intervals, ms, ddof = 1 (two intervals or more).
    public var sdnn: Double?
    /// Root mean square of successive differences, ms (one difference or more).
    public var rmssd: Double?
    /// Percentage of successive differences above 50 ms, over intervals (differences + 1).
    public var pnn50: Double?
    /// Percentage of successive differences above 20 ms, over intervals (differences + 1).
    public var pnn20: Double?
    /// Lowest and highest beat-to-beat rate, bpm: 60000 / the longest and the shortest interval.
    public var minHeartRate: Double?
    public var maxHeartRate: Double?

    /// The figures of `intervals` (ms), one continuous run; values not finite and positive are left out.
    public init(intervals: some Sequence<Double>) {
        var accumulator = HRVAccumulator()
        for interval in intervals { accumulator.add(interval) }
        self = accumulator.figures
    }

    init(beatCount: Int, differenceCount: Int) {
        self.beatCount = beatCount
        self.differenceCount = differenceCount
    }
}

/// Running sums for ``TimeDomainHRV``: constant memory, one interval at a time. The variance is
/// Welford's (no cancellation over a 24-hour session); successive differences are summed as
/// squares (all positive, no cancellation).
public struct HRVAccumulator: Sendable, Hashable {
    public private(set) var beatCount = 0
    private var mean = 0.0
    private var m2 = 0.0
    private var shortest = Double.infinity
    private var longest = 0.0
    private var differenceCount = 0
    private var squaredDifferences = 0.0
    private var nn50 = 0
    private var nn20 = 0
    private var previous: Double?

    public init() {}

    /// Adds one interval (ms). `continuesPrevious` false starts a new run: no difference is taken
    /// with the interval before. Values not finite and positive are ignored (and break the run).
    public mutating func add(_ interval: Double, continuesPrevious: Bool = true) {
        guard interval.isFinite, interval > 0 else { previous = nil; return }
        beatCount += 1
        let delta = interval - mean
        mean += delta / Double(beatCount)
        m2 += delta * (interval - mean)
        shortest = min(shortest, interval)
        longest = max(longest, interval)
        if continuesPrevious, let previous {
            let difference = interval - previous
            differenceCount += 1
            squaredDifferences += difference * difference
            if abs(difference) > 50 { nn50 += 1 }
            if abs(difference) > 20 { nn20 += 1 }
        }
        previous = interval
    }

    /// Ends the current run: the next interval takes no difference with the last one.
    public mutating func breakRun() { previous = nil }

    /// The figures so far.
    public var figures: TimeDomainHRV {
        var figures = TimeDomainHRV(beatCount: beatCount, differenceCount: differenceCount)
        guard beatCount > 0 else { return figures }
        figures.meanRR = finite(mean)
        figures.meanHeartRate = finite(60_000 / mean)
        figures.minHeartRate = finite(60_000 / longest)
        figures.maxHeartRate = finite(60_000 / shortest)
        if beatCount > 1 { figures.sdnn = finite((max(m2, 0) / Double(beatCount - 1)).squareRoot()) }
        if differenceCount > 0 {
            figures.rmssd = finite((squaredDifferences / Double(differenceCount)).squareRoot())
            let denominator = Double(differenceCount + 1)
            figures.pnn50 = finite(Double(nn50) / denominator * 100)
            figures.pnn20 = finite(Double(nn20) / denominator * 100)
        }
        return figures
    }

    private func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }
}

/// The time-domain figures over a sliding window of the last `duration` seconds: a ring of the
/// window's intervals (bounded: at most one per 200 ms of window plus a margin, the oldest dropped
/// first), the figures recomputed over the ring when asked (exact, no running-variance drift).
public struct HRVWindow: Sendable, Hashable {
    /// The window's length, seconds.
    public let duration: Double
    /// The most intervals kept.
    public let capacity: Int

    private struct Entry: Sendable, Hashable {
        var time: Double
        var interval: Double
        var continuesPrevious: Bool
    }
    private var entries: [Entry] = []
    private var head = 0

    /// A window of the last `duration` seconds (at least 1 s, at most 24 h).
    public init(duration: Double) {
        let duration = duration.isFinite ? min(max(duration, 1), 86_400) : 60
        self.duration = duration
        capacity = Int(duration * 5) + 16
    }

    /// The intervals in the window.
    public var count: Int { entries.count - head }

    /// Adds an interval (ms) that ended at `time` (seconds, the caller's clock) and drops those
    /// older than `time - duration`.
    public mutating func append(_ interval: Double, at time: Double, continuesPrevious: Bool = true) {
        guard interval.isFinite, interval > 0, time.isFinite else { return }
        entries.append(Entry(time: time, interval: interval, continuesPrevious: continuesPrevious))
        while head < entries.count, entries[head].time <= time - duration || entries.count - head > capacity {
            head += 1
        }
        if head > capacity {
            entries.removeFirst(head)
            head = 0
        }
    }

    /// Empties the window.
    public mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
        head = 0
    }

    /// The figures of the intervals in the window (the first one starts a run).
    public var figures: TimeDomainHRV {
        var accumulator = HRVAccumulator()
        for index in head..<entries.count {
            accumulator.add(entries[index].interval, continuesPrevious: index > head && entries[index].continuesPrevious)
        }
        return accumulator.figures
    }
}
