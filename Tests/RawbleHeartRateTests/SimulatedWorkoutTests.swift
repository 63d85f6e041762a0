import RawbleGATT
import RawbleGATTCore
import RawbleHeartRate
import RawbleWire
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

    @Test("the RR intervals sent add up to the session's time; each normal one is plausible; none lost while values carry them")
    func rrIntervalsAddUpToTheSession() {
        var workout = SimulatedWorkout(seed: 3)
        var sent: [Double] = []
        var normal: [Double] = []
        for _ in 0..<900 { // 15 minutes at 1 Hz
            let value = workout.next(covering: 1.0, maximumLength: 512)
            sent += value.rrIntervals.map(\.seconds)
            normal += zip(value.rrIntervals, workout.lastBeats).filter { $0.1 == .normal }.map(\.0.seconds)
        }
        let total = sent.reduce(0, +)
        // Beats not yet sent: at most the ones since the last value with RR (two values at most,
        // by the combination cycle) and the beat under way (a missed beat's RR: under 2.5 s).
        #expect(total > 900 - 4.5 && total <= 900, "\(total) s of RR in 900 s")
        // RR of 55–170 bpm, give or take the variability (at most ~120 ms at rest).
        #expect(normal.allSatisfy { $0 > 60 / 170 * 0.9 && $0 < 60 / 55 + 0.15 })
        #expect(workout.droppedBeats == 0)
        // Not a constant beat: the rate follows effort levels.
        #expect((sent.max() ?? 0) - (sent.min() ?? 0) > 0.2)
    }

    /// A long seeded session at 1 Hz: every RR interval sent with what it is, and each value's
    /// rate with the RR intervals that ended in its second.
    static func session(seed: UInt64, hours: Double, artifactsPerHour: Double)
        -> (beats: [(seconds: Double, beat: SimulatedWorkout.Beat)], workout: SimulatedWorkout) {
        var workout = SimulatedWorkout(seed: seed, artifactsPerHour: artifactsPerHour)
        var beats: [(seconds: Double, beat: SimulatedWorkout.Beat)] = []
        for _ in 0..<Int(hours * 3600) {
            let value = workout.next(covering: 1.0, maximumLength: 512)
            for (interval, beat) in zip(value.rrIntervals, workout.lastBeats) { beats.append((interval.seconds, beat)) }
            #expect(value.rrIntervals.count == workout.lastBeats.count)
        }
        return (beats, workout)
    }

    /// RMSSD (ms) of the successive differences of normal beats whose pair's rate is in `band` (bpm).
    static func rmssd(_ beats: [(seconds: Double, beat: SimulatedWorkout.Beat)], band: ClosedRange<Double>)
        -> (ms: Double, pairs: Int) {
        var sum = 0.0
        var pairs = 0
        for (a, b) in zip(beats, beats.dropFirst()) where a.beat == .normal && b.beat == .normal {
            guard band.contains(120 / (a.seconds + b.seconds)) else { continue }
            let difference = (b.seconds - a.seconds) * 1000
            sum += difference * difference
            pairs += 1
        }
        return (pairs > 0 ? (sum / Double(pairs)).squareRoot() : 0, pairs)
    }

    @Test("heart-rate variability as a person would recognise it: RMSSD 35–70 ms at 55–70 bpm, 4–18 ms at 140 bpm and above")
    func variabilityShrinksAsTheRateRises() {
        let (beats, _) = Self.session(seed: 9, hours: 8, artifactsPerHour: 0)
        let rest = Self.rmssd(beats, band: 55...70)
        let high = Self.rmssd(beats, band: 140...200)
        // Rest is the rarer state in this workout (effort levels of 60–170 bpm).
        #expect(rest.pairs > 300 && high.pairs > 1000, "\(rest.pairs) pairs at rest, \(high.pairs) at 140+")
        #expect((35...70).contains(rest.ms), "RMSSD at rest \(rest.ms) ms")
        #expect((4...18).contains(high.ms), "RMSSD at 140+ bpm \(high.ms) ms")
        #expect(high.ms * 3 < rest.ms)
        // Every beat is normal, and the series is not white noise: successive RRs go together
        // (the breathing and Mayer waves), as a real tachogram's do.
        #expect(beats.allSatisfy { $0.beat == .normal })
    }

    @Test("the reported rate is 60 / the mean RR of the last second's beats, held within 55–170 bpm")
    func rateFollowsTheRRIntervals() {
        var workout = SimulatedWorkout(seed: 4)
        // Every beat made is sent with the next value carrying RR (room for all of them): the
        // running sum of the RR intervals sent is each beat's end in session time.
        var ends: [(end: Double, seconds: Double)] = []
        var elapsed = 0.0
        var agreeing = 0, compared = 0
        for n in 1...3600 {
            let value = workout.next(covering: 1.0, maximumLength: 512)
            for interval in value.rrIntervals {
                elapsed += interval.seconds
                ends.append((elapsed, interval.seconds))
            }
            if ends.count > 8 { ends.removeFirst(ends.count - 8) }
            #expect((55...170).contains(value.bpm))
            // Values with RR intervals: everything up to now has been sent.
            guard !value.rrIntervals.isEmpty else { continue }
            let now = Double(n)
            var inSecond = ends.filter { $0.end >= now - 1 }
            if inSecond.isEmpty, let last = ends.last { inSecond = [last] }
            let mean = inSecond.map(\.seconds).reduce(0, +) / Double(inSecond.count)
            let expected = UInt16(min(170, max(55, 60 / mean)).rounded())
            compared += 1
            if value.bpm == expected { agreeing += 1 }
            // A beat ending right on the second's edge may fall either side in floating point.
            #expect(abs(Int(value.bpm) - Int(expected)) <= 40, "\(value.bpm) bpm, expected \(expected)")
        }
        #expect(compared > 1700 && agreeing * 100 >= compared * 99, "\(agreeing) of \(compared)")
    }

    @Test("artifacts: about 30 an hour, a third each of missed, extra and ectopic beats, each shaped as documented")
    func artifactsComeAtTheDocumentedRateAndShape() {
        let hours = 5.0
        let (beats, workout) = Self.session(seed: 21, hours: hours, artifactsPerHour: 30)
        let counts = workout.artifacts
        // 150 expected (Poisson: ±12 for one standard deviation); 50 of each kind (±7).
        #expect((110...190).contains(counts.total), "\(counts)")
        for kind in [counts.missed, counts.extra, counts.ectopic] {
            #expect((28...75).contains(kind), "\(counts)")
        }
        // The beats sent say the same: one RR per missed beat, two per extra, an ectopic
        // followed by its compensatory pause (the last artifact may still be under way).
        let kinds = beats.map(\.beat)
        #expect(abs(kinds.filter { $0 == .missed }.count - counts.missed) <= 1)
        #expect(abs(kinds.filter { $0 == .extra }.count - 2 * counts.extra) <= 2)
        #expect(abs(kinds.filter { $0 == .ectopic }.count - counts.ectopic) <= 1)
        #expect(abs(kinds.filter { $0 == .compensatory }.count - counts.ectopic) <= 1)

        // Each shaped against the normal beats around it (an extra beat's two parts together).
        var shaped = SimulatedWorkout.ArtifactCounts()
        var i = 2
        while i < beats.count - 3 {
            defer { i += beats[i].beat == .extra ? 2 : 1 }
            let normals = beats[(i - 2)...(i + 3)].filter { $0.beat == .normal }.map(\.seconds)
            guard normals.count >= 2 else { continue }
            let normal = normals.reduce(0, +) / Double(normals.count)
            let beat = beats[i], after = beats[i + 1]
            switch beat.beat {
            case .normal:
                break
            case .missed:
                #expect(abs(beat.seconds / normal - 2) < 0.35, "missed \(beat.seconds) s among \(normal) s")
                shaped.missed += 1
            case .extra:
                #expect(after.beat == .extra)
                #expect(beat.seconds < 0.75 * normal && after.seconds < 0.75 * normal)
                #expect(abs((beat.seconds + after.seconds) / normal - 1) < 0.25)
                shaped.extra += 1
            case .ectopic:
                #expect(after.beat == .compensatory)
                #expect(beat.seconds < 0.85 * normal, "ectopic \(beat.seconds) s among \(normal) s")
                #expect(after.seconds > 1.1 * normal)
                #expect(abs((beat.seconds + after.seconds) / normal - 2) < 0.35)
                shaped.ectopic += 1
            case .compensatory:
                #expect(beats[i - 1].beat == .ectopic)
            }
        }
        // Nearly all were shaped (a few lie among other artifacts, or at the ends).
        #expect(shaped.missed * 10 >= counts.missed * 9 && shaped.extra * 10 >= counts.extra * 9
                && shaped.ectopic * 10 >= counts.ectopic * 9, "\(shaped) of \(counts)")
        // And the series still covers the session's time.
        let total = beats.map(\.seconds).reduce(0, +)
        #expect(total > hours * 3600 - 4.5 && total <= hours * 3600)
    }

    @Test("with artifacts off, none: every beat sent is normal and none is counted")
    func artifactsOff() {
        let (beats, workout) = Self.session(seed: 21, hours: 2, artifactsPerHour: 0)
        #expect(workout.artifacts.total == 0)
        #expect(beats.allSatisfy { $0.beat == .normal })
        #expect(beats.count > 6000)
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
