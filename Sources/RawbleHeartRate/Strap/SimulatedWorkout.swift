import RawbleGATT
import RawbleGATTCore
import RawbleWire

/// A simulated training session for a peripheral playing a Heart Rate strap, with the RR series
/// a person analysing heart-rate variability would recognise. The heart rate drifts between
/// effort levels (60–170 bpm, a new one every 45 s, approached at a few bpm per second); each
/// beat's RR interval is the mean RR (60/rate) plus respiratory sinus arrhythmia (a sinusoid
/// of the breathing rate, 0.25 Hz at rest rising to 0.4 Hz at 170 bpm), a 0.1 Hz Mayer wave and
/// a little noise, all three shrinking as the rate rises (as the cube of the mean RR): RMSSD of
/// the normal beats is about 50 ms at 60–70 bpm and 9 ms at 140 bpm and above (seeded 10-hour
/// runs: 49–50 ms, 9.3–9.4 ms). Energy expended accumulates, and the values cycle through
/// every combination of the measurement's optional parts so a central under test sees them all.
///
/// Artifacts, as a real strap's series has them: on average `artifactsPerHour` (30 by default,
/// one per 2 minutes; 0 = none), a third each, chosen per beat with a probability proportional
/// to its length: a **missed beat** (one RR spanning two beats), an **extra beat** (one beat's RR
/// split in two by a spurious R-wave, at 35–65 %), an **ectopic beat** (a premature RR of
/// 55–75 % of the normal one, then a compensatory pause: the two add up to two normal RRs).
/// Each keeps the RR series covering the session's time. ``lastBeats`` says which of the last
/// value's RR intervals are artifacts; ``artifacts`` counts them.
///
/// The rate a value reports is the strap's smoothed one: 60 / the mean RR of the beats of the
/// last second (the last beat when none ended in it), held within 55–170 bpm (a strap's
/// plausibility limit: a split beat does not report 200 bpm).
///
/// Sans-I/O and deterministic: the same seed gives the same session. The caller says how much
/// time each value covers (``next(covering:maximumLength:)``); beats that fall in that time
/// are sent with it, or with the next value that carries RR intervals (as a strap buffers
/// them), at most as many as fit the value's maximum length. Memory stays flat: a few beats of
/// history (the last second's, the next planned ones) and the bounded send buffer.
public struct SimulatedWorkout: Sendable {
    /// The parts of one value the script chooses, cycling through all 24 combinations: heart
    /// rate as u8 or u16, sensor contact unsupported / not detected / detected, energy
    /// expended absent or present, RR intervals absent or present.
    public struct Shape: Hashable, Sendable {
        public var uses16BitHeartRate: Bool
        public var contact: HeartRateMeasurement.SensorContact
        public var includesEnergy: Bool
        public var includesRRIntervals: Bool

        /// The `index`-th of the 24 combinations (taken modulo 24).
        public static func combination(_ index: Int) -> Shape {
            let k = ((index % 24) + 24) % 24
            let contacts: [HeartRateMeasurement.SensorContact] = [.detected, .notDetected, .unsupported]
            // RR intervals every other value, so beats never wait long.
            return Shape(uses16BitHeartRate: k & 4 != 0, contact: contacts[k >> 3],
                         includesEnergy: k & 2 != 0, includesRRIntervals: k & 1 != 0)
        }
    }

    /// What one RR interval sent is: a normal beat, or part of an artifact.
    public enum Beat: Hashable, Sendable {
        case normal
        /// One RR spanning two beats: the R-wave between them was missed.
        case missed
        /// One of the two parts of a beat split by a spurious R-wave (both parts are marked).
        case extra
        /// A premature (ectopic) beat's short RR.
        case ectopic
        /// The long RR after an ectopic beat; with it, about two normal RRs.
        case compensatory
    }

    /// How many artifacts of each kind the session has made so far (each counted once, when it
    /// is made: its beats may not be sent yet).
    public struct ArtifactCounts: Hashable, Sendable {
        public var missed = 0
        public var extra = 0
        public var ectopic = 0

        public init(missed: Int = 0, extra: Int = 0, ectopic: Int = 0) {
            self.missed = missed
            self.extra = extra
            self.ectopic = ectopic
        }

        /// All kinds together.
        public var total: Int { missed + extra + ectopic }
    }

    /// Beats waiting to be sent, oldest first; bounded as a strap's buffer is.
    public static let pendingBeatLimit = 32

    /// Artifacts per hour when the caller does not say: one every two minutes.
    public static let defaultArtifactsPerHour = 30.0

    /// The range of rates the workout drifts in, and the range a value reports.
    public static let rateRange = 55.0...170.0

    /// How many recent beats the reported rate may average (a second at 170 bpm with an extra beat is 5).
    private static let recentBeatLimit = 8

    private var random: SeededRandom
    private let artifactsPerHour: Double
    private var rate = 68.0
    private var target = 68.0
    private var clock = 0.0 // session time, seconds
    private var sinceBeat = 0.0
    private var effortElapsed = 45.0 // the first step picks an effort level
    private var energyJoules = 0.0
    private var breathingPhase: Double // turns
    private var mayerPhase: Double // turns
    /// The next RR intervals to come (1/1024 s), one beat or an artifact's two.
    private var planned: [(units: Int, beat: Beat)] = []
    /// The last beats' end times and intervals, for the reported rate.
    private var recent: [(end: Double, seconds: Double)] = []
    private var pendingBeats: [(interval: RRInterval, beat: Beat)] = []
    private var index = 0

    /// Beats dropped because the buffer was full (values without RR intervals for a long stretch).
    public private(set) var droppedBeats = 0

    /// Artifacts made so far, by kind.
    public private(set) var artifacts = ArtifactCounts()

    /// What each RR interval of the last value is, in the value's order.
    public private(set) var lastBeats: [Beat] = []

    /// A session seeded with `seed`, with `artifactsPerHour` artifacts on average (0: a clean
    /// series; negative counts as 0).
    public init(seed: UInt64 = 1, artifactsPerHour: Double = SimulatedWorkout.defaultArtifactsPerHour) {
        random = SeededRandom(seed: seed)
        self.artifactsPerHour = artifactsPerHour.isFinite ? max(0, artifactsPerHour) : 0
        breathingPhase = random.unit()
        mayerPhase = random.unit()
    }

    /// The heart rate now (the underlying drifting rate, without the beat-to-beat variability), in beats per minute.
    public var currentRate: Double { rate }

    /// Energy expended since the start or the last reset, in kilojoules (saturating at 65535).
    public var energyExpended: UInt16 {
        UInt16(min(65535, max(0, energyJoules / 1000).rounded(.down)))
    }

    /// The Heart Rate Control Point's Reset Energy Expended: the count starts again from zero.
    public mutating func resetEnergyExpended() {
        energyJoules = 0
    }

    /// The next value, covering `seconds` of the session since the previous one. It fits in
    /// `maximumLength` bytes (an ATT notification's room: the ATT MTU minus 3); beats that do
    /// not fit stay for the next value.
    public mutating func next(covering seconds: Double, maximumLength: Int = 20) -> HeartRateMeasurement {
        advance(by: seconds.isFinite ? max(0, seconds) : 0)
        let shape = Shape.combination(index)
        index &+= 1
        var length = 1 + (shape.uses16BitHeartRate ? 2 : 1) + (shape.includesEnergy ? 2 : 0)
        var intervals: [RRInterval] = []
        lastBeats.removeAll(keepingCapacity: true)
        if shape.includesRRIntervals {
            var taken = 0
            while taken < pendingBeats.count, length + 2 <= maximumLength {
                intervals.append(pendingBeats[taken].interval)
                lastBeats.append(pendingBeats[taken].beat)
                taken += 1
                length += 2
            }
            pendingBeats.removeFirst(taken)
        }
        return HeartRateMeasurement(bpm: reportedRate, contact: shape.contact,
                                    energyExpended: shape.includesEnergy ? energyExpended : nil,
                                    rrIntervals: intervals, uses16BitHeartRate: shape.uses16BitHeartRate)
    }

    /// The strap's smoothed rate: 60 / the mean RR of the beats that ended in the last second
    /// (the last beat if none did; the drifting rate before the first), within ``rateRange``.
    private var reportedRate: UInt16 {
        var sum = 0.0
        var count = 0
        for beat in recent where beat.end >= clock - 1 {
            sum += beat.seconds
            count += 1
        }
        if count == 0, let last = recent.last {
            sum = last.seconds
            count = 1
        }
        let bpm = count > 0 && sum > 0 ? 60 * Double(count) / sum : rate
        return UInt16(min(Self.rateRange.upperBound, max(Self.rateRange.lowerBound, bpm)).rounded())
    }

    /// Moves the session on by `seconds`: the rate follows its effort level, beats fall due.
    private mutating func advance(by seconds: Double) {
        var left = seconds
        while left > 0 {
            // Steps of at most a quarter second keep the drift smooth whatever the value rate.
            let step = min(left, 0.25)
            left -= step
            clock += step
            effortElapsed += step
            if effortElapsed >= 45 {
                effortElapsed = 0
                target = 60 + random.unit() * 110
            }
            rate += (target - rate) * 0.04 * step + random.gaussian() * 0.3 * step.squareRoot()
            rate = min(Self.rateRange.upperBound, max(Self.rateRange.lowerBound, rate))
            energyJoules += rate * 7 * step // ~0.4–1.2 kJ per second
            sinceBeat += step
            while true {
                if planned.isEmpty { plan() }
                guard let beat = planned.first else { break }
                let interval = Double(beat.units) / 1024
                guard sinceBeat >= interval else { break }
                planned.removeFirst()
                sinceBeat -= interval
                emit(RRInterval(rawValue: UInt16(beat.units)), beat.beat)
            }
        }
    }

    /// Plans the next beat, or the next artifact's beats (made of one or two normal beats, so
    /// the series still covers the session's time).
    private mutating func plan() {
        let first = normalBeat()
        let chance = artifactsPerHour / 3600 * Double(first) / 1024
        guard chance > 0, random.unit() < chance else {
            planned.append((first, .normal))
            return
        }
        let kind = random.unit() * 3
        if kind < 1 {
            let second = normalBeat()
            planned.append((first + second, .missed))
            artifacts.missed += 1
        } else if kind < 2 {
            let part = Int((Double(first) * (0.35 + 0.3 * random.unit())).rounded())
            planned.append((part, .extra))
            planned.append((first - part, .extra))
            artifacts.extra += 1
        } else {
            let second = normalBeat()
            let premature = Int((Double(first) * (0.55 + 0.2 * random.unit())).rounded())
            planned.append((premature, .ectopic))
            planned.append((first + second - premature, .compensatory))
            artifacts.ectopic += 1
        }
    }

    /// One normal RR interval, in 1/1024 s: the mean RR of the rate now, with respiratory sinus
    /// arrhythmia, the Mayer wave and noise, whose amplitudes scale with the cube of the mean RR.
    private mutating func normalBeat() -> Int {
        let mean = 60 / rate
        let scale = mean * mean * mean // 1 at 60 bpm, 0.06 at 150 bpm
        let effort = min(1, max(0, (rate - 60) / 110))
        let seconds = mean
            + (0.008 + 0.060 * scale) * Self.sine(turns: breathingPhase)
            + (0.005 + 0.020 * scale) * Self.sine(turns: mayerPhase)
            + (0.003 + 0.010 * scale) * random.gaussian()
        let units = min(2048, max(256, Int((seconds * 1024).rounded())))
        let elapsed = Double(units) / 1024
        breathingPhase = Self.fraction(breathingPhase + (0.25 + 0.15 * effort) * elapsed)
        mayerPhase = Self.fraction(mayerPhase + 0.1 * elapsed)
        return units
    }

    /// Queues one beat to be sent, dropping the oldest when the buffer is full.
    private mutating func emit(_ interval: RRInterval, _ beat: Beat) {
        if pendingBeats.count == Self.pendingBeatLimit {
            pendingBeats.removeFirst()
            droppedBeats += 1
        }
        pendingBeats.append((interval, beat))
        if recent.count == Self.recentBeatLimit { recent.removeFirst() }
        recent.append((clock - sinceBeat, interval.seconds))
    }

    /// `x` less its whole part: in [0, 1) for the non-negative phases here.
    private static func fraction(_ x: Double) -> Double {
        x - x.rounded(.down)
    }

    /// sin(2π · turns) without libm: reduced to a quarter turn, then its Taylor series (to x⁹,
    /// error under 4e-6).
    static func sine(turns: Double) -> Double {
        var t = fraction(turns) // [0, 1)
        var sign = 1.0
        if t >= 0.5 {
            t -= 0.5
            sign = -1
        }
        if t > 0.25 { t = 0.5 - t } // sin(π − x) = sin(x)
        let x = 2 * Double.pi * t
        let x2 = x * x
        let series = x * (1 - x2 / 6 * (1 - x2 / 20 * (1 - x2 / 42 * (1 - x2 / 72))))
        return sign * series
    }
}

/// SplitMix64 with the two draws the workout needs; seeded so a session can be replayed.
struct SeededRandom: Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func nextUInt64() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func unit() -> Double {
        Double(nextUInt64() >> 11) / Double(1 << 53)
    }

    /// About standard normal: the sum of twelve uniforms less six (no libm needed; the tails
    /// end at ±6, which a simulated heart is glad of).
    mutating func gaussian() -> Double {
        var sum = 0.0
        for _ in 0..<12 { sum += unit() }
        return sum - 6
    }
}
