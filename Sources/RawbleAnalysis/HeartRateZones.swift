import RawbleWire

/// Five heart-rate zones as fractions of a maximum heart rate: zone 1 from 50 % to 60 %, 2 to
/// 70 %, 3 to 80 %, 4 to 90 %, 5 from 90 % up (above 100 % too). Below 50 % is zone 0, "rest".
/// Each lower bound belongs to its zone (60 % exactly is zone 2).
public struct HeartRateZones: Sendable, Hashable {
    /// The maximum heart rate, bpm.
    public var maxHeartRate: Double

    /// The lower bound of zones 1 to 5, as fractions of the maximum.
    public static let lowerFractions: [Double] = [0.5, 0.6, 0.7, 0.8, 0.9]
    /// The zones: 0 (rest) to 5.
    public static let all = 0...5
    /// The heart rates taken as readings, bpm: a strap without skin contact sends 0, and nothing
    /// alive beats above 300.
    public static let plausible: ClosedRange<Double> = 20...300

    /// Zones from a known maximum heart rate (bpm; clamped to 100...250 when outside or not finite).
    public init(maxHeartRate: Double) {
        self.maxHeartRate = maxHeartRate.isFinite ? min(max(maxHeartRate, 100), 250) : 190
    }

    /// Zones from age, with Tanaka, Monahan & Seals (2001): max HR = 208 − 0.7 × age (years,
    /// clamped to 5...110).
    public init(age: Double) {
        self.init(maxHeartRate: Self.tanakaMaxHeartRate(age: age))
    }

    /// Tanaka's estimate of the maximum heart rate, 208 − 0.7 × age, bpm.
    public static func tanakaMaxHeartRate(age: Double) -> Double {
        let age = age.isFinite ? min(max(age, 5), 110) : 40
        return 208 - 0.7 * age
    }

    /// The zone (0 to 5) of a heart rate; `nil` for a value that is no reading (not finite, or
    /// outside ``plausible``).
    public func zone(for bpm: Double) -> Int? {
        guard bpm.isFinite, Self.plausible.contains(bpm) else { return nil }
        var zone = 0
        for fraction in Self.lowerFractions where bpm >= fraction * maxHeartRate { zone += 1 }
        return zone
    }

    /// The heart rates of `zone` (1...5), bpm, from its lower bound up to (not including) the
    /// next; zone 5's upper bound is the maximum, zone 0's lower bound is 0.
    public func bounds(of zone: Int) -> (lower: Double, upper: Double) {
        let fractions = [0.0] + Self.lowerFractions + [1.0]
        let zone = min(max(zone, 0), 5)
        return (fractions[zone] * maxHeartRate, fractions[zone + 1] * maxHeartRate)
    }
}

/// Time spent in each zone, from timestamped heart-rate samples: the time from one sample to the
/// next counts for the first sample's zone, unless the two are more than `maxGap` seconds apart
/// (a disconnection: counted as gap time, in no zone) or the first is no reading. A sample older
/// than the one before is counted and ignored.
public struct ZoneTime: Sendable, Hashable {
    public let zones: HeartRateZones
    /// The longest pause between samples still counted as time in a zone, seconds.
    public let maxGap: Double
    /// Seconds in zones 0 (rest) to 5.
    public private(set) var seconds: [Double] = Array(repeating: 0, count: 6)
    /// Seconds between samples further apart than ``maxGap``.
    public private(set) var gapSeconds = 0.0
    /// Gaps seen.
    public private(set) var gaps = 0
    /// Seconds after a sample that was no reading (0 bpm, absurd).
    public private(set) var unreadSeconds = 0.0
    /// Samples that were no reading.
    public private(set) var unreadSamples = 0
    /// Samples with a timestamp before the previous one's (ignored).
    public private(set) var outOfOrderSamples = 0
    private struct Sample: Sendable, Hashable {
        var time: Double
        var zone: Int?
    }
    private var last: Sample?

    public init(zones: HeartRateZones, maxGap: Double = 5) {
        self.zones = zones
        self.maxGap = maxGap.isFinite && maxGap > 0 ? maxGap : 5
    }

    /// Zone 0 to 5 of the latest sample, `nil` when it was no reading or there is none.
    public var currentZone: Int? { last?.zone }

    /// All the time counted in zones.
    public var totalSeconds: Double { seconds.reduce(0, +) }

    /// Adds a sample: `bpm` at `time` (seconds, any clock that only moves forward).
    public mutating func add(bpm: Double, at time: Double) {
        guard time.isFinite else { outOfOrderSamples += 1; return }
        let zone = zones.zone(for: bpm)
        if zone == nil { unreadSamples += 1 }
        if let last {
            let elapsed = time - last.time
            if elapsed < 0 { outOfOrderSamples += 1; return }
            if elapsed > maxGap {
                gapSeconds += elapsed
                gaps += 1
            } else if let previousZone = last.zone {
                seconds[previousZone] += elapsed
            } else {
                unreadSeconds += elapsed
            }
        }
        last = Sample(time: time, zone: zone)
    }
}
