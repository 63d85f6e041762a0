/// The clock an ``Adapter`` keeps its time with: the one in its configuration
/// (``Adapter/Configuration/clock``), whatever its type, with instants of its own.
///
/// The command timer needs instants (``CommandFlow`` keeps a deadline per command), and an
/// `any Clock<Duration>` only sleeps for durations: its instants are of a type known only
/// inside it. Here an instant is the time since the adapter's start on that clock, a plain
/// `Duration`, so the adapter's state has one concrete instant type for any clock: the real
/// continuous clock in use, a test's virtual clock (RawbleTestSupport's `ManualClock`) in tests.
/// Reading the time costs one indirect call more than `ContinuousClock.now`, and only the
/// command path reads it (a few times per command, never per ACL packet).
struct HostClock: Clock {
    typealias Duration = Swift.Duration

    /// The time since the clock's start (when the adapter was created).
    struct Instant: InstantProtocol, Hashable {
        typealias Duration = Swift.Duration

        var offset: Duration

        func advanced(by duration: Duration) -> Instant {
            Instant(offset: offset + duration)
        }

        func duration(to other: Instant) -> Duration {
            other.offset - offset
        }

        static func < (a: Instant, b: Instant) -> Bool {
            a.offset < b.offset
        }

        static func + (instant: Instant, duration: Duration) -> Instant {
            instant.advanced(by: duration)
        }

        static func - (a: Instant, b: Instant) -> Duration {
            b.duration(to: a)
        }
    }

    private let elapsed: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration, Duration?) async throws -> Void
    let minimumResolution: Duration

    /// Keeps time with `clock`, counted from its `now` at this call.
    init(_ clock: any Clock<Duration>) {
        self.init(opening: clock)
    }

    private init<C: Clock<Duration>>(opening clock: C) {
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
        sleeper = { offset, tolerance in
            try await clock.sleep(until: start.advanced(by: offset), tolerance: tolerance)
        }
        minimumResolution = clock.minimumResolution
    }

    var now: Instant {
        Instant(offset: elapsed())
    }

    /// Sleeps on the underlying clock until its instant that `deadline` stands for; throws
    /// `CancellationError` when the task is cancelled first, as every clock does.
    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await sleeper(deadline.offset, tolerance)
    }
}
