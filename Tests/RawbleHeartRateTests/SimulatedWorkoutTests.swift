import RawbleHeartRate
import Testing

@Suite("SimulatedWorkout: the measurement script of `rawble peripheral hr`")
struct SimulatedWorkoutTests {
    static func encoded(_ value: HeartRateMeasurement) -> [UInt8] {
        var writer = ByteWriter()
        value.encode(into: &writer)
        return writer.bytes
    }

    @Test("24 values in a row carry every combination of u8/u16, contact, energy and RR; each decodes to itself")
    func everyFlagCombination() throws {
        var workout = SimulatedWorkout(seed: 7)
        var seen = Set<UInt8>()
        for _ in 0..<24 {
            // A second per value: at 55–170 bpm a beat always falls due, so RR can be present.
            let value = workout.next(covering: 1.0)
            let bytes = Self.encoded(value)
            let decoded = try HeartRateMeasurement.decode(bytes)
            #expect(decoded == value)
            seen.insert(value.flags.rawValue)
        }
        // Contact "detected" needs "supported": three contact states, so 2 × 3 × 2 × 2 = 24.
        let expected: Set<UInt8> = Set((0..<32).map(UInt8.init).filter { $0 & 0x06 != 0x02 })
        #expect(seen == expected)
    }

    @Test("the RR intervals sent add up to the session's time; each is plausible; none is lost while values carry them")
    func rrIntervalsAddUpToTheSession() {
        var workout = SimulatedWorkout(seed: 3)
        var sent: [Double] = []
        for _ in 0..<900 { // 15 minutes at 1 Hz
            sent += workout.next(covering: 1.0, maximumLength: 512).rrIntervals.map(\.seconds)
        }
        let total = sent.reduce(0, +)
        // Beats not yet sent: at most the ones since the last value with RR (two values at most,
        // by the combination cycle), each under 1.2 s.
        #expect(total > 900 - 4 && total <= 900, "\(total) s of RR in 900 s")
        #expect(sent.allSatisfy { $0 > 60 / 170 * 0.9 && $0 < 60 / 55 * 1.1 })
        #expect(workout.droppedBeats == 0)
        // Not a constant beat: the rate follows effort levels.
        #expect((sent.max() ?? 0) - (sent.min() ?? 0) > 0.2)
    }

    @Test("a value never exceeds its maximum length; beats that do not fit come with later values")
    func valuesFitTheirRoom() {
        var workout = SimulatedWorkout(seed: 11)
        var total = 0.0
        for _ in 0..<600 {
            let value = workout.next(covering: 1.0, maximumLength: 7)
            #expect(Self.encoded(value).count <= 7)
            total += value.rrIntervals.map(\.seconds).reduce(0, +)
        }
        // With 1–2 RR per value at most, half the values carrying them, beats pile up and the
        // oldest are dropped: counted, and the buffer stays bounded.
        #expect(workout.droppedBeats > 0)
        #expect(total < 600)
    }

    @Test("the same seed plays the same session; another seed another")
    func seeded() {
        var a = SimulatedWorkout(seed: 42), b = SimulatedWorkout(seed: 42), c = SimulatedWorkout(seed: 43)
        let first = (0..<100).map { _ in a.next(covering: 0.5) }
        #expect(first == (0..<100).map { _ in b.next(covering: 0.5) })
        #expect(first != (0..<100).map { _ in c.next(covering: 0.5) })
    }

    @Test("heart rate stays within 55–170 bpm over hours; energy counts up, resets to zero, and saturates at 65535 kJ")
    func rateAndEnergy() {
        var workout = SimulatedWorkout(seed: 5)
        var rates: [UInt16] = []
        for _ in 0..<3600 { rates.append(workout.next(covering: 1.0).bpm) }
        #expect(rates.allSatisfy { (55...170).contains($0) })
        #expect(Set(rates).count > 30, "the rate moves")
        let hour = workout.energyExpended
        #expect(hour > 1000 && hour < 5000, "\(hour) kJ in an hour")
        workout.resetEnergyExpended()
        #expect(workout.energyExpended == 0)
        _ = workout.next(covering: 10)
        #expect(workout.energyExpended > 0 && workout.energyExpended < 20)
        _ = workout.next(covering: 30 * 3600)
        #expect(workout.energyExpended == 65535)
    }
}
