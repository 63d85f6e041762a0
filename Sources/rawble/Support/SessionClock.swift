#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The time of each value a session records: the wall clock when the session started, moved on
/// by the monotonic clock since. One reading per value, given both to the files (`--csv`,
/// `--jsonl`, `--json`) and to the live analysis, so the time in zones and the HRV that `hr`
/// shows at its end are those `rawble report` computes from its file, to the microsecond; and a
/// wall-clock step during the session (NTP, a suspended laptop's catch-up, an admin's `date`)
/// moves no value backwards and makes no false gap.
struct SessionClock: Sendable {
    private let wallAtStart: Int64
    private let monotonicAtStart: Int64

    init() {
        wallAtStart = Clock.unixMicroseconds()
        monotonicAtStart = Self.monotonicMicroseconds()
    }

    /// Microseconds since 1970 for a value arriving now.
    func unixMicroseconds() -> Int64 {
        wallAtStart + (Self.monotonicMicroseconds() - monotonicAtStart)
    }

    private static func monotonicMicroseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }
}
