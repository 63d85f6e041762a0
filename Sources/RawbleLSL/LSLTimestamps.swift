/// Puts a device's sample clock on LSL's clock, sans I/O: the samples keep the device's own
/// spacing, not the arrival times of the frames that carry them.
///
/// The newest sample of the first frame (with the LSL time it arrived at) fixes the offset between the
/// two clocks; every later device time is that offset away. A frame arrives after its last
/// sample was taken, so the mapped times are late by the first frame's transit, the same for
/// every sample. Make a new mapping when the device's clock may have restarted (a new
/// connection).
public struct LSLClockMapping: Hashable, Sendable {
    /// The device time (ns) the mapping is anchored at, and its LSL time (s).
    private var anchorDevice: UInt64?
    private var anchorLSL = 0.0

    public init() {}

    /// Anchors the mapping, unless it already is: `deviceNanoseconds`, the newest sample of
    /// what arrived at `arrival` (LSL time), is taken to be at `arrival`.
    public mutating func anchor(newest deviceNanoseconds: UInt64, arrival: Double) {
        guard anchorDevice == nil else { return }
        anchorDevice = deviceNanoseconds
        anchorLSL = arrival
    }

    /// Whether ``anchor(newest:arrival:)`` was called.
    public var isAnchored: Bool { anchorDevice != nil }

    /// The LSL time of device time `deviceNanoseconds` (before an anchor, the device time
    /// itself, in seconds).
    public func lslTime(deviceNanoseconds: UInt64) -> Double {
        let anchorDevice = anchorDevice ?? 0
        // The difference first, in integers: device times are ~1e18 ns, beyond a Double's
        // nanosecond precision.
        let delta = deviceNanoseconds >= anchorDevice
            ? Double(deviceNanoseconds - anchorDevice) : -Double(anchorDevice - deviceNanoseconds)
        return anchorLSL + delta / 1e9
    }
}

/// Gives each beat of a heart-rate strap a time on LSL's clock from its RR intervals, sans I/O.
///
/// A Heart Rate measurement carries the RR intervals of the beats since the previous one, with
/// no time of its own; it arrives some time after its last beat. The beats are chained: each
/// is its RR interval after the one before, so their spacing is the strap's. The chain is
/// anchored with the last beat at the measurement's arrival, and moved earlier whenever a beat
/// would fall after the arrival of the measurement carrying it (which cannot be), so after a
/// few measurements it follows the earliest arrivals; beats stay in order. When the chain falls behind the arrivals
/// by more than ``maximumLag`` (beats lost, a reconnection), it is anchored anew.
public struct RRTimestamps: Hashable, Sendable {
    /// How far behind its measurement's arrival the chain's last beat may fall before the chain
    /// is anchored anew, in seconds.
    public static let maximumLag = 2.0

    /// The LSL time of the last beat given.
    public private(set) var lastBeat: Double?

    public init() {}

    /// The times of the beats that end `rrSeconds` (oldest first) of a measurement that arrived
    /// at `arrival` (LSL time). No interval gives no time and leaves the chain as it is.
    public mutating func beatTimes(rrSeconds: [Double], arrival: Double) -> [Double] {
        guard !rrSeconds.isEmpty else { return [] }
        let span = rrSeconds.reduce(0, +)
        var beat = arrival - span
        if let lastBeat {
            let chained = lastBeat + span
            if chained <= arrival, arrival - chained <= Self.maximumLag { beat = lastBeat }
        }
        var times: [Double] = []
        times.reserveCapacity(rrSeconds.count)
        // Moved back, a measurement's first beats could fall before the previous one's last:
        // they are put at it instead, so the beats stay in order.
        var earliest = lastBeat ?? -Double.infinity
        for interval in rrSeconds {
            beat += interval
            earliest = max(earliest, beat)
            times.append(earliest)
        }
        lastBeat = earliest
        return times
    }
}
