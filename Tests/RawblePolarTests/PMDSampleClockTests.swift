import RawblePolarCore
import RawbleWire
import Testing

@Suite("PMD sample clock")
struct PMDSampleClockTests {
    static let ecg = PMDFrameType(0)

    @Test("first frame: nominal interval back from the frame time, the last sample at it")
    func firstFrame() {
        var clock = PMDSampleClock()
        let times = clock.sampleTimes(frameTime: 1_000_000_000, sampleCount: 4, sampleRate: 100, type: .ecg, frameType: Self.ecg)
        #expect(times.ordering == .first)
        #expect(times.interval == 10_000_000)
        #expect(Array(times) == [970_000_000, 980_000_000, 990_000_000, 1_000_000_000])
    }

    @Test("first frame at 130 Hz: times rounded to the nanosecond")
    func firstFrame130Hz() {
        var clock = PMDSampleClock()
        let times = clock.sampleTimes(frameTime: 10_000_000_000, sampleCount: 3, sampleRate: 130, type: .ecg, frameType: Self.ecg)
        // 1e9 / 130 = 7 692 307.69… ns.
        #expect(Array(times) == [10_000_000_000 - 15_384_615, 10_000_000_000 - 7_692_308, 10_000_000_000])
    }

    @Test("later frames: the interval measured from the previous frame time")
    func laterFrames() {
        var clock = PMDSampleClock()
        _ = clock.sampleTimes(frameTime: 1_000_000_000, sampleCount: 4, sampleRate: 100, type: .ecg, frameType: Self.ecg)
        // 4 samples in 40.8 ms: the device's clock runs 2 % slow of nominal.
        let times = clock.sampleTimes(frameTime: 1_040_800_000, sampleCount: 4, sampleRate: 100, type: .ecg, frameType: Self.ecg)
        #expect(times.ordering == .measured(previous: 1_000_000_000))
        #expect(times.interval == 10_200_000)
        #expect(Array(times) == [1_010_200_000, 1_020_400_000, 1_030_600_000, 1_040_800_000])
    }

    @Test("a frame whose time goes backwards uses the nominal interval and says so")
    func backwards() {
        var clock = PMDSampleClock()
        _ = clock.sampleTimes(frameTime: 1_000_000_000, sampleCount: 2, sampleRate: 100, type: .ecg, frameType: Self.ecg)
        let back = clock.sampleTimes(frameTime: 900_000_000, sampleCount: 2, sampleRate: 100, type: .ecg, frameType: Self.ecg)
        #expect(back.ordering == .notAdvancing(previous: 1_000_000_000))
        #expect(Array(back) == [890_000_000, 900_000_000])
        // The same time again: not advancing either.
        let same = clock.sampleTimes(frameTime: 900_000_000, sampleCount: 1, sampleRate: 100, type: .ecg, frameType: Self.ecg)
        #expect(same.ordering == .notAdvancing(previous: 900_000_000))
        // The next frame measures from the frame that went back.
        let next = clock.sampleTimes(frameTime: 920_000_000, sampleCount: 2, sampleRate: 100, type: .ecg, frameType: Self.ecg)
        #expect(next.ordering == .measured(previous: 900_000_000))
        #expect(Array(next) == [910_000_000, 920_000_000])
    }

    @Test("a reset after stop makes the next frame a first frame again")
    func resetAfterStop() {
        var clock = PMDSampleClock()
        _ = clock.sampleTimes(frameTime: 1_000_000_000, sampleCount: 2, sampleRate: 100, type: .ecg, frameType: Self.ecg)
        _ = clock.sampleTimes(frameTime: 1_000_000_000, sampleCount: 2, sampleRate: 200, type: .acceleration, frameType: PMDFrameType(1))
        clock.reset(.ecg)
        let ecg = clock.sampleTimes(frameTime: 5_000_000_000, sampleCount: 2, sampleRate: 100, type: .ecg, frameType: Self.ecg)
        #expect(ecg.ordering == .first)
        #expect(Array(ecg) == [4_990_000_000, 5_000_000_000])
        // Acceleration was not reset.
        let acc = clock.sampleTimes(frameTime: 1_010_000_000, sampleCount: 2, sampleRate: 200, type: .acceleration, frameType: PMDFrameType(1))
        #expect(acc.ordering == .measured(previous: 1_000_000_000))
        clock.resetAll()
        #expect(clock.sampleTimes(frameTime: 2_000_000_000, sampleCount: 1, sampleRate: 200, type: .acceleration, frameType: PMDFrameType(1)).ordering == .first)
    }

    @Test("previous times are kept per measurement type and frame type")
    func perStream() {
        var clock = PMDSampleClock()
        _ = clock.sampleTimes(frameTime: 1_000_000_000, sampleCount: 2, sampleRate: 100, type: .acceleration, frameType: PMDFrameType(1))
        let delta = clock.sampleTimes(frameTime: 1_100_000_000, sampleCount: 2, sampleRate: 100, type: .acceleration, frameType: PMDFrameType(0x81))
        #expect(delta.ordering == .first)
    }

    @Test("degenerate input never traps: no samples, no rate, times near zero")
    func degenerate() {
        var clock = PMDSampleClock()
        #expect(clock.sampleTimes(frameTime: 5, sampleCount: 0, sampleRate: 100, type: .ecg, frameType: Self.ecg).isEmpty)
        // No samples leave the stream unstarted.
        #expect(clock.sampleTimes(frameTime: 5, sampleCount: 1, sampleRate: 100, type: .ecg, frameType: Self.ecg).ordering == .first)
        clock.resetAll()
        for rate in [0, -1, Double.nan, Double.infinity] {
            clock.resetAll()
            #expect(Array(clock.sampleTimes(frameTime: 7, sampleCount: 3, sampleRate: rate, type: .ecg, frameType: Self.ecg)) == [7, 7, 7])
        }
        clock.resetAll()
        // Times before 2000-01-01 clamp to 0.
        #expect(Array(clock.sampleTimes(frameTime: 15_000_000, sampleCount: 3, sampleRate: 100, type: .ecg, frameType: Self.ecg))
            == [0, 5_000_000, 15_000_000])
        clock.resetAll()
        #expect(Array(clock.sampleTimes(frameTime: .max, sampleCount: 2, sampleRate: 1e-300, type: .ecg, frameType: Self.ecg))
            == [.max, .max])
        clock.resetAll()
        #expect(Array(clock.sampleTimes(frameTime: .max, sampleCount: 2, sampleRate: 100, type: .ecg, frameType: Self.ecg))
            == [.max - 10_000_000, .max])
    }

    @Test("PMD time converts to and from Unix time")
    func unixTime() {
        #expect(PMDTime.unixNanoseconds(0) == 946_684_800_000_000_000)
        #expect(PMDTime.unixNanoseconds(PMDTime.h10ResetTime) == 1_546_300_800_000_000_000)
        #expect(PMDTime.unixNanoseconds(.max) == nil)
        #expect(PMDTime.pmdTime(unixNanoseconds: 1_546_300_800_000_000_000) == PMDTime.h10ResetTime)
        #expect(PMDTime.pmdTime(unixNanoseconds: 1) == nil)
    }
}
