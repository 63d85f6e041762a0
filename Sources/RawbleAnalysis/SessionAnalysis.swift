import RawbleWire

/// The analysis of a whole session at once (a file's measurements): the same screening
/// (``RRScreen``), the full Lipponen & Tarvainen correction of each run of beats (the series as
/// NeuroKit2 would see it, no lag, thresholds from windows centred on each beat), time-domain HRV
/// over the session and per segment, the time in each zone and the heart rate's range. O(n)
/// memory in the beats, O(n · 91) time per correction pass.
public struct SessionAnalysis: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// The zones to count time in; `nil` for none.
        public var zones: HeartRateZones?
        /// The length of the segments HRV is also given for, seconds (5 minutes by default).
        public var segmentDuration: Double
        /// The longest pause between measurements that does not end a run, seconds.
        public var maxGap: Double

        public init(zones: HeartRateZones? = nil, segmentDuration: Double = 300, maxGap: Double = 5) {
            self.zones = zones
            self.segmentDuration = segmentDuration.isFinite && segmentDuration > 0 ? segmentDuration : 300
            self.maxGap = maxGap
        }
    }

    /// A screened input beat: the interval as received, when, and which run it belongs to.
    public struct RawBeat: Sendable, Hashable {
        public var interval: Double
        public var time: Double
        public var run: Int
    }

    /// HRV over one segment `[start, end)` of the session (seconds on the measurements' clock).
    public struct Segment: Sendable, Hashable {
        public var start: Double
        public var end: Double
        public var figures: TimeDomainHRV
    }

    /// The heart-rate values that were readings: lowest, mean (of the samples) and highest, bpm.
    public struct HeartRateRange: Sendable, Hashable {
        public var samples = 0
        public var minimum: Double?
        public var mean: Double?
        public var maximum: Double?
    }

    /// The screened beats, as received, in order.
    public private(set) var rawBeats: [RawBeat] = []
    /// Artifacts found, by position in ``rawBeats``.
    public private(set) var artifacts: [Artifact] = []
    /// ``artifacts`` by kind.
    public private(set) var artifactCounts = ArtifactCounts()
    /// The corrected beats, in order.
    public private(set) var beats: [CorrectedBeat] = []
    /// HRV of the corrected beats.
    public private(set) var figures = TimeDomainHRV(intervals: [])
    /// HRV of the screened beats before correction.
    public private(set) var uncorrectedFigures = TimeDomainHRV(intervals: [])
    /// HRV per segment of ``Configuration/segmentDuration`` from the first measurement; segments
    /// without beats are left out.
    public private(set) var segments: [Segment] = []
    /// Time in each zone (when zones were configured).
    public private(set) var zoneTime: ZoneTime?
    /// What the screen left out.
    public private(set) var input = InputCounts()
    public private(set) var heartRate = HeartRateRange()
    /// The first and last measurement times in order, seconds.
    public private(set) var start: Double?
    public private(set) var end: Double?

    /// Analyses `measurements` in order.
    public init(measurements: some Sequence<HeartRateSample>, configuration: Configuration = Configuration()) {
        var screen = RRScreen(maxGap: configuration.maxGap)
        zoneTime = configuration.zones.map { ZoneTime(zones: $0, maxGap: configuration.maxGap) }
        var events: [RRScreen.Event] = []
        var run = 0
        var runHasBeats = false
        var heartRateSum = 0.0
        for measurement in measurements {
            if screen.isInOrder(measurement) {
                start = start ?? measurement.time
                end = measurement.time
                if let bpm = measurement.heartRate, bpm.isFinite, HeartRateZones.plausible.contains(bpm) {
                    heartRate.samples += 1
                    heartRateSum += bpm
                    heartRate.minimum = min(heartRate.minimum ?? bpm, bpm)
                    heartRate.maximum = max(heartRate.maximum ?? bpm, bpm)
                }
            }
            if let bpm = measurement.heartRate { zoneTime?.add(bpm: bpm, at: measurement.time) }
            events.removeAll(keepingCapacity: true)
            screen.screen(measurement, into: &events)
            for event in events {
                switch event {
                case .beat(let interval, let time):
                    rawBeats.append(RawBeat(interval: interval, time: time, run: run))
                    runHasBeats = true
                case .endOfRun:
                    if runHasBeats { run += 1; runHasBeats = false }
                }
            }
        }
        input = screen.counts
        if heartRate.samples > 0 { heartRate.mean = heartRateSum / Double(heartRate.samples) }

        // Each run corrected on its own; the HRV accumulators see every corrected beat once.
        var overall = HRVAccumulator()
        var uncorrected = HRVAccumulator()
        var first = 0
        while first < rawBeats.count {
            var last = first
            while last + 1 < rawBeats.count, rawBeats[last + 1].run == rawBeats[first].run { last += 1 }
            let runBeats = rawBeats[first...last]
            for (offset, beat) in runBeats.enumerated() { uncorrected.add(beat.interval, continuesPrevious: offset > 0) }
            let base = first
            let raw = rawBeats
            let (corrected, found, _) = Kubios.correctRun(
                runBeats.map(\.interval), time: { raw[min(base + max($0, 0), raw.count - 1)].time })
            for artifact in found {
                let item = Artifact(index: base + artifact.index, kind: artifact.kind)
                artifacts.append(item)
                artifactCounts[item.kind] += 1
            }
            for beat in corrected { overall.add(beat.interval, continuesPrevious: beat.continuesPrevious) }
            beats += corrected
            first = last + 1
        }
        figures = overall.figures
        uncorrectedFigures = uncorrected.figures
        segments = Self.segments(of: beats, from: start ?? 0, length: configuration.segmentDuration, end: end ?? 0)
    }

    /// HRV per segment of `length` seconds from `origin`, over beats in time order; a difference
    /// is taken only between beats of one segment and one run.
    static func segments(of beats: [CorrectedBeat], from origin: Double, length: Double, end: Double) -> [Segment] {
        var segments: [Segment] = []
        var current: (index: Double, accumulator: HRVAccumulator)?
        func close() {
            guard let current else { return }
            let start = origin + current.index * length
            segments.append(Segment(start: start, end: min(start + length, max(end, start)), figures: current.accumulator.figures))
        }
        for beat in beats {
            let index = ((beat.time - origin) / length).rounded(.down)
            guard index.isFinite else { continue }
            if current?.index != index {
                close()
                current = (index, HRVAccumulator())
                current?.accumulator.add(beat.interval, continuesPrevious: false)
            } else {
                current?.accumulator.add(beat.interval, continuesPrevious: beat.continuesPrevious)
            }
        }
        close()
        return segments
    }
}
