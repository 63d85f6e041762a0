import RawbleGATT
import RawbleGATTCore
import RawbleHeartRate
import RawbleTestSupport
import RawbleWire
import Testing

// The live view's "notifications per second", fed with made-up instants of a virtual clock
// (no clock read, no sleep); `rawble hr` keeps it on the real one (`ArrivalRate`).

@Suite("Arrival rate")
struct ArrivalRateTests {
    private typealias ArrivalRate = Arrivals<ManualClock.Instant>

    private func instant(_ milliseconds: Int) -> ManualClock.Instant {
        ManualClock.Instant(offset: .milliseconds(milliseconds))
    }

    @Test func fewerThanTwoArrivalsHaveNoRate() {
        var rate = ArrivalRate()
        #expect(rate.perSecond == nil)
        rate.record(at: instant(0))
        #expect(rate.perSecond == nil)
        #expect(rate.count == 1)
    }

    @Test func arrivalsEvery250MillisecondsAreFourPerSecond() throws {
        var rate = ArrivalRate()
        for n in 0..<9 { rate.record(at: instant(250 * n)) }
        let perSecond = try #require(rate.perSecond)
        #expect(abs(perSecond - 4) < 1e-9)
    }

    @Test func onlyTheWindowCounts() throws {
        var rate = ArrivalRate(window: .seconds(2))
        // 1 Hz for 10 s, then 10 Hz for 3 s: the 2-s window sees only the 10 Hz.
        for n in 0..<10 { rate.record(at: instant(1000 * n)) }
        for n in 1...30 { rate.record(at: instant(9000 + 100 * n)) }
        let perSecond = try #require(rate.perSecond)
        #expect(abs(perSecond - 10) < 1e-9)
        #expect(rate.count == 21)  // 10.0 s back to 8.0 s inclusive, every 100 ms
    }

    @Test func arrivalsAtOneInstantHaveNoRate() {
        var rate = ArrivalRate()
        rate.record(at: instant(5))
        rate.record(at: instant(5))
        #expect(rate.perSecond == nil)
    }

    @Test func anInstantGoingBackwardsIsIgnored() throws {
        var rate = ArrivalRate()
        rate.record(at: instant(1000))
        rate.record(at: instant(1500))
        rate.record(at: instant(200))
        #expect(rate.count == 2)
        #expect(try #require(rate.perSecond) == 2)
    }

    @Test func aDeviceThatFellSilentHasNoRateAsOfNow() throws {
        var rate = ArrivalRate(window: .seconds(5))
        for n in 0..<5 { rate.record(at: instant(500 * n)) }
        #expect(try #require(rate.perSecond(asOf: instant(2500))) == 2)
        #expect(rate.perSecond(asOf: instant(60_000)) == nil)
        #expect(rate.perSecond == 2)  // asking does not forget
    }

    @Test func memoryIsBoundedAtAThousandPerSecond() throws {
        var rate = ArrivalRate(window: .seconds(60))
        // 1 kHz for 30 s: 30,000 arrivals inside the window, only `capacity` kept.
        for n in 0..<30_000 { rate.record(at: instant(n)) }
        #expect(rate.count == ArrivalRate.capacity)
        let perSecond = try #require(rate.perSecond)
        #expect(abs(perSecond - 1000) < 1e-6)
    }

    @Test func aZeroWindowStillWorks() {
        var rate = ArrivalRate(window: .zero)
        rate.record(at: instant(0))
        rate.record(at: instant(1))
        #expect(rate.count == 1)
        #expect(rate.perSecond == nil)
    }
}
