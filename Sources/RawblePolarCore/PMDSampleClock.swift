import RawbleWire

/// PMD time: nanoseconds since 2000-01-01T00:00:00Z.
///
/// A frame carries the time of its last sample on the device's clock. An H10 that has not had
/// its clock set (Polar's file-transfer protocol does that, not PMD) counts from
/// 2019-01-01T00:00:00Z after it has been off the strap for about a minute.
public enum PMDTime {
    /// Nanoseconds from 1970-01-01 to 2000-01-01 (UTC): 946684800 s.
    public static let unixEpochOffset: UInt64 = 946_684_800_000_000_000
    /// 2019-01-01T00:00:00Z in PMD time: where an H10's unset clock starts.
    public static let h10ResetTime: UInt64 = 599_616_000_000_000_000

    /// Unix time in nanoseconds of a PMD time; `nil` when it does not fit a `UInt64` (a PMD
    /// time past the year 2554).
    @inlinable
    public static func unixNanoseconds(_ pmdTime: UInt64) -> UInt64? {
        let (sum, overflow) = pmdTime.addingReportingOverflow(unixEpochOffset)
        return overflow ? nil : sum
    }

    /// PMD time of a Unix time in nanoseconds; `nil` before 2000-01-01.
    @inlinable
    public static func pmdTime(unixNanoseconds: UInt64) -> UInt64? {
        unixNanoseconds >= unixEpochOffset ? unixNanoseconds - unixEpochOffset : nil
    }
}

/// Gives each sample of a PMD stream its time, sans I/O, as Polar's SDKs do.
///
/// A frame of `n` samples carries the time `T` of its last sample. For the first frame of a
/// stream the interval is the nominal one, `Δ = 1e9 / fs` ns, and sample `i` is at
/// `T − (n − 1 − i) Δ`. For later frames the interval is measured, `Δ = (T − T_prev) / n`,
/// and sample `i` is at `T_prev + (i + 1) Δ` (so the last is at `T`): the device's clock, not
/// the nominal rate, sets the spacing (an H10's 130 Hz runs ±2 %).
///
/// `T_prev` is kept per stream and frame type; ``reset(_:)`` forgets it (call it when a stream
/// is stopped). When a frame's time does not advance (`T ≤ T_prev`; seen on H10s), the nominal
/// interval is used as for a first frame, as the iOS SDK does (the Android SDK throws), and the
/// result says so: ``PMDSampleTimes/ordering``.
public struct PMDSampleClock: Hashable, Sendable {
    /// The last frame time per (measurement type, frame type).
    @usableFromInline var previous: [UInt16: UInt64] = [:]

    public init() {}

    @inlinable
    static func key(_ type: PMDMeasurementType, _ frameType: PMDFrameType) -> UInt16 {
        UInt16(type.rawValue) << 8 | UInt16(frameType.rawValue)
    }

    /// The times of a frame's samples, remembering `frameTime` for the stream's next frame.
    ///
    /// - Parameters:
    ///   - frameTime: the frame's timestamp (its last sample's time), PMD time in ns.
    ///   - sampleCount: the frame's samples (none gives no times and changes nothing).
    ///   - sampleRate: the stream's nominal rate in Hz; a rate that is not positive, or so small
    ///     that the interval is not finite, puts every sample of a frame that needs it at
    ///     `frameTime`.
    ///   - type: the measurement the frame carries (its stream's previous frame is kept per
    ///     type and frame type).
    ///   - frameType: the frame's type (raw or delta-compressed, and its sample format).
    public mutating func sampleTimes(
        frameTime: UInt64, sampleCount: Int, sampleRate: Double,
        type: PMDMeasurementType, frameType: PMDFrameType
    ) -> PMDSampleTimes {
        guard sampleCount > 0 else {
            return PMDSampleTimes(last: frameTime, count: 0, interval: 0, ordering: .first)
        }
        let key = Self.key(type, frameType)
        let rated = 1e9 / sampleRate
        let nominal = sampleRate > 0 && rated.isFinite ? rated : 0
        let times: PMDSampleTimes
        if let last = previous[key] {
            if frameTime > last {
                times = PMDSampleTimes(
                    last: frameTime, count: sampleCount, interval: Double(frameTime - last) / Double(sampleCount),
                    ordering: .measured(previous: last))
            } else {
                times = PMDSampleTimes(
                    last: frameTime, count: sampleCount, interval: nominal, ordering: .notAdvancing(previous: last))
            }
        } else {
            times = PMDSampleTimes(last: frameTime, count: sampleCount, interval: nominal, ordering: .first)
        }
        previous[key] = frameTime
        return times
    }

    /// The times of a decoded frame's `sampleCount` samples (see the other overload).
    public mutating func sampleTimes(of frame: PMDDataFrame, sampleCount: Int, sampleRate: Double) -> PMDSampleTimes {
        sampleTimes(
            frameTime: frame.timestamp, sampleCount: sampleCount, sampleRate: sampleRate,
            type: frame.type, frameType: frame.frameType)
    }

    /// Forgets the previous frame times of `type` (every frame type): its stream stopped.
    public mutating func reset(_ type: PMDMeasurementType) {
        previous = previous.filter { $0.key >> 8 != UInt16(type.rawValue) }
    }

    /// Forgets every stream's previous frame time.
    public mutating func resetAll() { previous.removeAll() }
}

/// The times of one frame's samples, oldest first, in PMD time (ns since 2000-01-01), computed
/// on access: `last − (count − 1 − i) × interval`, rounded to the nanosecond; the last is
/// exactly the frame's time. Times that would fall before 2000-01-01 are clamped to 0.
public struct PMDSampleTimes: RandomAccessCollection, Hashable, Sendable {
    /// How the interval was found.
    public enum Ordering: Hashable, Sendable {
        /// The stream's first frame (since a reset): the nominal interval.
        case first
        /// Measured from the previous frame's time.
        case measured(previous: UInt64)
        /// The frame's time was not after the previous frame's: the nominal interval, and the
        /// times may overlap the previous frame's.
        case notAdvancing(previous: UInt64)
    }

    /// The last sample's time: the frame's timestamp.
    public let last: UInt64
    public let count: Int
    /// Nanoseconds between samples.
    public let interval: Double
    public let ordering: Ordering

    public typealias Index = Int
    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(position: Int) -> UInt64 {
        precondition(position >= 0 && position < count, "sample time index out of range")
        let back = (Double(count - 1 - position) * interval).rounded()
        guard back > 0 else { return last }
        guard back < Double(last) else { return 0 }
        return last - UInt64(back)
    }
}
