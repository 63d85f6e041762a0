import RawbleLSL
import Testing

/// The sample times an outlet is given: a device's clock put on LSL's, and a strap's beats
/// chained from their RR intervals.
@Suite struct LSLTimestampsTests {
    @Test("a device clock on LSL's: the first frame's newest sample at its arrival, every other sample its device-time distance from it")
    func deviceClockMapping() {
        var clock = LSLClockMapping()
        #expect(!clock.isAnchored)
        // An H10's reset clock (2019-01-01 in ns since 2000): a Double alone cannot hold its
        // nanoseconds; the mapping keeps them.
        let newest: UInt64 = 599_616_028_236_586_218
        clock.anchor(newest: newest, arrival: 1234.5)
        #expect(clock.isAnchored)
        #expect(clock.lslTime(deviceNanoseconds: newest) == 1234.5)
        #expect(abs(clock.lslTime(deviceNanoseconds: newest - 7_692_307) - (1234.5 - 0.007692307)) < 1e-9)
        #expect(abs(clock.lslTime(deviceNanoseconds: newest + 1_000_000_000) - 1235.5) < 1e-9)
        // A later frame does not move the anchor, whenever it arrives.
        clock.anchor(newest: newest + 2_000_000_000, arrival: 9999)
        #expect(abs(clock.lslTime(deviceNanoseconds: newest + 2_000_000_000) - 1236.5) < 1e-9)
    }

    @Test("beats chained from RR: spaced by their intervals, the first measurement's last beat at its arrival")
    func beatsFollowTheirIntervals() {
        var beats = RRTimestamps()
        #expect(beats.beatTimes(rrSeconds: [], arrival: 10).isEmpty)
        #expect(beats.lastBeat == nil)
        let first = beats.beatTimes(rrSeconds: [0.8, 0.75], arrival: 10)
        #expect(first.count == 2)
        #expect(abs(first[1] - 10) < 1e-12)
        #expect(abs(first[1] - first[0] - 0.75) < 1e-12)
        // The next measurement arrives later than its beat: the chain holds.
        let second = beats.beatTimes(rrSeconds: [0.7], arrival: 10.9)
        #expect(abs(second[0] - 10.7) < 1e-12)
        // One without RR changes nothing.
        #expect(beats.beatTimes(rrSeconds: [], arrival: 11).isEmpty)
        #expect(beats.lastBeat.map { abs($0 - 10.7) < 1e-12 } == true)
    }

    @Test("a beat never after the arrival of the measurement that carries it: the chain moves earlier; far behind, it is anchored anew")
    func chainIsBoundedByArrivals() {
        var beats = RRTimestamps()
        _ = beats.beatTimes(rrSeconds: [1.0], arrival: 100)
        // This measurement came sooner after its beat than the first did: the chain would put
        // the beat at 101, after its arrival at 100.6.
        let early = beats.beatTimes(rrSeconds: [1.0], arrival: 100.6)
        #expect(abs(early[0] - 100.6) < 1e-12)
        // Beats lost (a measurement dropped): the chain falls more than maximumLag behind.
        // Two beats moved back: the first would fall before the previous beat (at 100.6); it is
        // put at it, not before.
        let squeezed = beats.beatTimes(rrSeconds: [0.5, 0.5], arrival: 101.0)
        #expect(squeezed.count == 2)
        #expect(abs(squeezed[0] - 100.6) < 1e-12 && abs(squeezed[1] - 101.0) < 1e-12, "\(squeezed)")
        let late = beats.beatTimes(rrSeconds: [0.9], arrival: 100.6 + 0.9 + RRTimestamps.maximumLag + 1)
        #expect(abs(late[0] - (100.6 + 0.9 + RRTimestamps.maximumLag + 1)) < 1e-12)
    }
}
