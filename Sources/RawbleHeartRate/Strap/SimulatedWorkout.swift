/// A simulated training session for a peripheral playing a Heart Rate strap: the heart rate
/// drifts between effort levels (60–170 bpm), each beat's RR interval varies around 60/bpm,
/// energy expended accumulates, and the values cycle through every combination of the
/// measurement's optional parts so a central under test sees them all.
///
/// Sans-I/O and deterministic: the same seed gives the same session. The caller says how much
/// time each value covers (``next(covering:maximumLength:)``); beats that fall in that time
/// are sent with it, or with the next value that carries RR intervals (as a strap buffers
/// them), at most as many as fit the value's maximum length.
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

    /// Beats waiting to be sent, oldest first; bounded as a strap's buffer is.
    public static let pendingBeatLimit = 32

    private var random: SeededRandom
    private var rate = 68.0
    private var target = 68.0
    private var sinceBeat = 0.0
    private var effortElapsed = 45.0 // the first step picks an effort level
    private var energyJoules = 0.0
    private var pendingBeats: [RRInterval] = []
    private var index = 0

    /// Beats dropped because the buffer was full (values without RR intervals for a long stretch).
    public private(set) var droppedBeats = 0

    public init(seed: UInt64 = 1) {
        random = SeededRandom(seed: seed)
    }

    /// The heart rate now, in beats per minute.
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
        advance(by: max(0, seconds))
        let shape = Shape.combination(index)
        index &+= 1
        var length = 1 + (shape.uses16BitHeartRate ? 2 : 1) + (shape.includesEnergy ? 2 : 0)
        var intervals: [RRInterval] = []
        if shape.includesRRIntervals {
            while let beat = pendingBeats.first, length + 2 <= maximumLength {
                intervals.append(beat)
                pendingBeats.removeFirst()
                length += 2
            }
        }
        let bpm = UInt16(rate.rounded())
        return HeartRateMeasurement(bpm: bpm, contact: shape.contact,
                                    energyExpended: shape.includesEnergy ? energyExpended : nil,
                                    rrIntervals: intervals, uses16BitHeartRate: shape.uses16BitHeartRate)
    }

    /// Moves the session on by `seconds`: the rate follows its effort level, beats fall due.
    private mutating func advance(by seconds: Double) {
        var left = seconds
        while left > 0 {
            // Steps of at most a quarter second keep the drift smooth whatever the value rate.
            let step = min(left, 0.25)
            left -= step
            effortElapsed += step
            if effortElapsed >= 45 {
                effortElapsed = 0
                target = 60 + random.unit() * 110
            }
            rate += (target - rate) * 0.08 * step + random.gaussian() * 0.7 * step.squareRoot()
            rate = min(170, max(55, rate))
            energyJoules += rate * 7 * step // ~0.4–1.2 kJ per second
            sinceBeat += step
            let interval = 60 / rate * (1 + random.gaussian() * 0.015)
            while sinceBeat >= interval {
                sinceBeat -= interval
                if pendingBeats.count == Self.pendingBeatLimit {
                    pendingBeats.removeFirst()
                    droppedBeats += 1
                }
                pendingBeats.append(RRInterval(seconds: interval))
            }
        }
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
