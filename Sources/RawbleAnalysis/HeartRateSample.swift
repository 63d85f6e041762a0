import RawbleWire

/// One heart-rate value as the analysis takes it: when it arrived, the rate, and the RR intervals
/// it carried. Live, from each notification; in a batch, from each line of a session file.
public struct HeartRateSample: Sendable, Hashable {
    /// Seconds on any clock that only moves forward (the monitor's monotonic clock, a file's
    /// timestamps).
    public var time: Double
    /// Beats per minute, `nil` when the value had none.
    public var heartRate: Double?
    /// RR intervals, ms, oldest first.
    public var rrIntervals: [Double]

    public init(time: Double, heartRate: Double?, rrIntervals: [Double] = []) {
        self.time = time
        self.heartRate = heartRate
        self.rrIntervals = rrIntervals
    }

    /// A decoded Heart Rate Measurement received at `time` (its RR intervals, 1/1024 s, in ms).
    public init(_ value: HeartRateMeasurement, at time: Double) {
        self.init(time: time, heartRate: Double(value.bpm), rrIntervals: value.rrIntervals.map(\.milliseconds))
    }

    /// Becomes `value` received at `time`, reusing this sample's storage: a live monitor keeps one
    /// sample and updates it per notification instead of allocating an array for each.
    public mutating func update(_ value: HeartRateMeasurement, at time: Double) {
        self.time = time
        heartRate = Double(value.bpm)
        rrIntervals.removeAll(keepingCapacity: true)
        for interval in value.rrIntervals { rrIntervals.append(interval.milliseconds) }
    }
}

/// What the analysis left out of its input, and why.
public struct InputCounts: Sendable, Hashable {
    /// Measurements taken.
    public var measurements = 0
    /// RR intervals taken (before screening).
    public var intervals = 0
    /// RR intervals left out: zero, not finite, or outside ``RRScreen/plausible``.
    public var excludedIntervals = 0
    /// Measurements whose time was before the previous one's (left out whole) or not finite.
    public var outOfOrderMeasurements = 0
    /// Pauses longer than the gap bound between two measurements (each ends a run of beats).
    public var gaps = 0

    public init() {}
}

/// The screen every RR interval goes through before analysis, and the run splitting both the live
/// and the batch path share: an excluded interval, a gap or a measurement out of order ends the
/// run of consecutive beats (no successive difference, no correction across it).
public struct RRScreen: Sendable, Hashable {
    /// RR intervals taken as beats, ms: 200 ms is 300 bpm, 3000 ms is 20 bpm.
    public static let plausible: ClosedRange<Double> = 200...3000

    /// The longest pause between measurements inside one run, seconds.
    public let maxGap: Double
    public private(set) var counts = InputCounts()
    private var lastTime: Double?

    /// One screened step: a beat of the current run, or the end of the run.
    public enum Event: Sendable, Hashable {
        case beat(interval: Double, time: Double)
        case endOfRun
    }

    public init(maxGap: Double = 5) {
        self.maxGap = maxGap.isFinite && maxGap > 0 ? maxGap : 5
    }

    /// Whether `measurement` is in order (its time not before the last one's); out-of-order ones
    /// are counted by ``screen(_:into:)`` and left out whole.
    public func isInOrder(_ measurement: HeartRateSample) -> Bool {
        guard measurement.time.isFinite else { return false }
        guard let lastTime else { return true }
        return measurement.time >= lastTime
    }

    /// Screens one measurement's intervals, appending its events to `events`.
    public mutating func screen(_ measurement: HeartRateSample, into events: inout [Event]) {
        counts.measurements += 1
        counts.intervals += measurement.rrIntervals.count
        guard isInOrder(measurement) else {
            counts.outOfOrderMeasurements += 1
            counts.excludedIntervals += measurement.rrIntervals.count
            if !measurement.rrIntervals.isEmpty { events.append(.endOfRun) }
            return
        }
        if let lastTime, measurement.time - lastTime > maxGap {
            counts.gaps += 1
            events.append(.endOfRun)
        }
        lastTime = measurement.time
        for interval in measurement.rrIntervals {
            if interval.isFinite, Self.plausible.contains(interval) {
                events.append(.beat(interval: interval, time: measurement.time))
            } else {
                counts.excludedIntervals += 1
                events.append(.endOfRun)
            }
        }
    }
}
