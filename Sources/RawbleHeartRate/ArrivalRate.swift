import RawbleGATT
import RawbleGATTCore
import RawbleWire

/// How many notifications arrive per second on the real continuous clock's instants: see
/// ``Arrivals``.
public typealias ArrivalRate = Arrivals<ContinuousClock.Instant>

/// How many notifications arrive per second, over a sliding window (sans-I/O: the caller
/// passes the instants, of whatever clock it keeps time with, so it is testable without a
/// clock: ``ArrivalRate`` on the real continuous clock, `Arrivals<ManualClock.Instant>` in
/// virtual time). Memory is bounded.
public struct Arrivals<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// How far back arrivals count.
    public let window: Duration
    /// The most arrivals kept (older ones beyond it are dropped even inside the window).
    public static var capacity: Int { 16_384 }

    private var instants: [Instant] = []
    /// Index of the oldest arrival still counted; the array is compacted when half is dead.
    private var head = 0

    /// A rate over the last `window` (at least a nanosecond).
    public init(window: Duration = .seconds(5)) {
        self.window = max(window, .nanoseconds(1))
    }

    /// Records one arrival. Instants must not go backwards; one that does is ignored.
    public mutating func record(at instant: Instant) {
        if let last = instants.last, instant < last { return }
        instants.append(instant)
        let oldest = instant.advanced(by: .zero - window)
        while head < instants.count, instants[head] < oldest { head += 1 }
        if instants.count - head > Self.capacity { head = instants.count - Self.capacity }
        if head > 64, head * 2 > instants.count {
            instants.removeFirst(head)
            head = 0
        }
    }

    /// Arrivals per second in the window: (arrivals − 1) over the time from the first to the
    /// last; nil with fewer than two arrivals or all at the same instant.
    public var perSecond: Double? {
        guard instants.count - head >= 2, let last = instants.last else { return nil }
        let span = instants[head].duration(to: last) / .seconds(1)
        guard span > 0 else { return nil }
        return Double(instants.count - head - 1) / span
    }

    /// Like ``perSecond``, but as of `now`: arrivals older than the window before `now` no
    /// longer count, so a device that stopped sending shows nil instead of its last rate.
    public func perSecond(asOf now: Instant) -> Double? {
        var copy = self
        let oldest = now.advanced(by: .zero - window)
        while copy.head < copy.instants.count, copy.instants[copy.head] < oldest { copy.head += 1 }
        return copy.perSecond
    }

    /// The arrivals counted (in the window ending at the latest one).
    public var count: Int { instants.count - head }
}
