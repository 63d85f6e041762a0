#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import RawbleAnalysis
import RawbleReport
import RawbleWire
import Synchronization

/// `rawble hr`'s live analysis across the whole run (reconnections included): every
/// measurement goes through RawbleAnalysis's streaming analyzer (RR screening and artifact
/// correction, HRV over a sliding window, time in zones). It feeds the status line (a sparkline
/// of the last minute of bpm, the zone, a rolling RMSSD) and `--json`'s `hrv` event every
/// `--hrv-every` seconds. Time is the ``SessionClock``'s, the files' own, so the figures it shows
/// are those `rawble report` computes from the session's file.
final class LiveAnalysis: Sendable {
    private struct State {
        var analyzer: HeartRateAnalyzer
        /// The sample each measurement is put in (its RR array reused, not allocated per value).
        var sample = HeartRateSample(time: 0, heartRate: nil)
        /// Measurements not yet given to the analyzer: they go in together when a figure is
        /// asked for (an event, the status line, the last line) or the queue is full. The same
        /// measurements in the same order, so the same figures; but the analyzer's state (its
        /// correction windows) is walked while it is in the caches, not once per value after
        /// the network path between two values has pushed it out: that cost the analysis as
        /// much again in `hr` as it costs alone (docs/performance.md, "Session analysis").
        var pending = PendingMeasurements()
        var sparkline = Sparkline()
        /// When the current `hrv` window started, seconds on `clock`.
        var windowStart: Double?
        var artifactsAtWindowStart = ArtifactCounts()

        /// Gives the analyzer every queued measurement, in order.
        mutating func analyzeQueued() {
            var queued = PendingMeasurements()
            swap(&queued, &pending)  // the closure below changes the rest of self
            queued.drain { time, bpm, intervals in
                sample.time = time
                sample.heartRate = bpm
                sample.rrIntervals.removeAll(keepingCapacity: true)
                sample.rrIntervals.append(contentsOf: intervals)
                analyzer.add(sample)
            }
            pending = queued  // empty, its storage kept
        }
    }

    /// Seconds between `hrv` events (also the analyzer's window); 0: no events.
    let every: Double
    /// Whether the last minute's sparkline is kept (the status line and the last line show it;
    /// `--json` shows neither, so it does not pay for it per measurement).
    let keepsSparkline: Bool
    private let state: Mutex<State>
    /// Beats needed in the window before a rolling RMSSD is shown.
    static let minimumBeats = 20

    init(zones: HeartRateZones?, every: Double, sparkline: Bool = true) {
        self.every = every
        keepsSparkline = sparkline
        let window = every > 0 ? every : 60
        // Corrected beats lag by up to the correction interval: at most half an `hrv` window, so
        // every event's window holds corrected beats.
        let interval = min(StreamingArtifactCorrector.defaultBatchSeconds, window / 2)
        state = Mutex(State(analyzer: HeartRateAnalyzer(configuration: .init(
            zones: zones, windowDuration: window, correctionInterval: interval))))
    }

    /// Takes one measurement and its time (microseconds since 1970, from the ``SessionClock``
    /// whose reading the files get too); returns the `hrv` event due with it, if any (`--json`
    /// only asks).
    func add(_ measurement: HeartRateMeasurement, at time: Int64) -> JSON? {
        let now = SessionSample.seconds(unixMicroseconds: time)
        return state.withLock { state -> JSON? in
            state.pending.append(measurement, at: now)
            if state.pending.isFull { state.analyzeQueued() }
            if keepsSparkline { state.sparkline.add(bpm: Double(measurement.bpm), at: now) }
            guard every > 0 else { return nil }
            guard let start = state.windowStart else {
                state.windowStart = now
                return nil
            }
            guard now - start >= every else { return nil }
            state.windowStart = now
            state.analyzeQueued()
            let artifacts = state.analyzer.artifacts
            var inWindow = ArtifactCounts()
            for kind in ArtifactKind.allCases { inWindow[kind] = artifacts[kind] - state.artifactsAtWindowStart[kind] }
            state.artifactsAtWindowStart = artifacts
            return Self.event(state.analyzer, wallTime: time, window: every, artifactsInWindow: inWindow)
        }
    }

    /// The status line's text: bpm, the sparkline, the zone, a rolling RMSSD once there are enough beats.
    func statusText(bpm: UInt16) -> String {
        state.withLock { state in
            state.analyzeQueued()
            var text = "\(bpm) bpm  \(state.sparkline.rendered)"
            if let zone = state.analyzer.currentZone { text += "  " + (zone == 0 ? "rest" : "Z\(zone)") }
            let window = state.analyzer.windowFigures
            if window.beatCount >= Self.minimumBeats, let rmssd = window.rmssd {
                text += "  RMSSD \(Int(rmssd.rounded())) ms"
            }
            return text
        }
    }

    /// The zone now and the rolling RMSSD (once there are enough beats): a group run's row.
    func rowFigures() -> (zone: Int?, rmssd: Double?) {
        state.withLock { state in
            state.analyzeQueued()
            let window = state.analyzer.windowFigures
            return (state.analyzer.currentZone, window.beatCount >= Self.minimumBeats ? window.rmssd : nil)
        }
    }

    /// One line for a person at the end of `hr`: HRV over the session (after correction), the
    /// zones, the last minute's sparkline; `nil` before any measurement.
    func summaryLine() -> String? {
        state.withLock { state -> String? in
            state.analyzeQueued()
            _ = state.analyzer.finish()
            let input = state.analyzer.input
            guard input.measurements > 0 else { return nil }
            var parts = ["session: \(input.measurements) measurements"]
            let figures = state.analyzer.sessionFigures
            if let rmssd = figures.rmssd, let sdnn = figures.sdnn {
                let artifacts = state.analyzer.artifacts.total
                parts.append("HRV over \(figures.beatCount) beats: RMSSD \(ReportText.decimal(rmssd)) ms, SDNN \(ReportText.decimal(sdnn)) ms"
                    + (artifacts > 0 ? " (\(artifacts) artifact\(artifacts == 1 ? "" : "s") corrected)" : ""))
            } else {
                parts.append("no HRV (too few RR intervals)")
            }
            if let zoneTime = state.analyzer.zoneTime {
                let shown = HeartRateZones.all.reversed().filter { zoneTime.seconds[$0] > 0 }
                    .map { "\(ReportText.zoneName($0)) \(ReportText.duration(zoneTime.seconds[$0]))" }
                if !shown.isEmpty { parts.append("zones: " + shown.joined(separator: ", ")) }
            }
            let line = state.sparkline.rendered.drop { $0 == " " }
            if !line.isEmpty { parts.append("last minute: \(line)") }
            return parts.joined(separator: "; ")
        }
    }

    private static func event(_ analyzer: HeartRateAnalyzer, wallTime: Int64, window: Double,
                              artifactsInWindow: ArtifactCounts) -> JSON {
        let figures = analyzer.windowFigures
        var fields: [(String, JSON)] = [
            ("event", "hrv"),
            ("time", .string(iso8601(unixMicroseconds: wallTime))),
            ("windowSeconds", ReportJSON.number(window)),
        ]
        fields += ReportJSON.fields(of: figures)
        fields.append(("artifacts", ReportJSON.artifacts(artifactsInWindow)))
        fields.append(("artifactsTotal", JSON(analyzer.artifacts.total)))
        fields.append(("zone", analyzer.currentZone.map { JSON($0) } ?? .null))
        return .object(fields)
    }
}

/// Measurements waiting for the analyzer, flat in one array (time, bpm, RR count, then the RR
/// intervals in ms, per measurement: one append per value, not an array per field), bounded:
/// full at ``capacity`` measurements, when the caller must drain it.
struct PendingMeasurements {
    static let capacity = 1024

    private var storage: [Double] = []
    private(set) var count = 0

    var isFull: Bool { count >= Self.capacity }

    mutating func append(_ measurement: HeartRateMeasurement, at time: Double) {
        let intervals = measurement.rrIntervals
        storage.append(time)
        storage.append(Double(measurement.bpm))
        storage.append(Double(intervals.count))
        for interval in intervals { storage.append(interval.milliseconds) }
        count += 1
    }

    /// Calls `body` with each measurement in order (time, bpm, RR intervals in ms), then empties
    /// the queue, keeping its storage.
    mutating func drain(_ body: (Double, Double, ArraySlice<Double>) -> Void) {
        var index = 0
        for _ in 0..<count {
            let intervals = Int(storage[index + 2])
            let start = index + 3
            body(storage[index], storage[index + 1], storage[start..<(start + intervals)])
            index = start + intervals
        }
        storage.removeAll(keepingCapacity: true)
        count = 0
    }
}

/// The last minute of heart rate as block characters, one per 2 s (the mean of that slot),
/// scaled between the minute's lowest and highest; a blank where no value came.
struct Sparkline {
    static let slots = 30
    static let slotSeconds = 2.0
    private static let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    /// Sum and count of bpm per slot, the newest last.
    private var sums = [Double](repeating: 0, count: slots)
    private var counts = [Int](repeating: 0, count: slots)
    private var newestSlot: Int?

    mutating func add(bpm: Double, at time: Double) {
        guard bpm.isFinite, bpm > 0, time.isFinite, time >= 0 else { return }
        let slot = Int(time / Self.slotSeconds)
        if let newest = newestSlot, slot > newest {
            let shift = min(slot - newest, Self.slots)
            sums.removeFirst(shift)
            counts.removeFirst(shift)
            sums += [Double](repeating: 0, count: shift)
            counts += [Int](repeating: 0, count: shift)
            newestSlot = slot
        } else if newestSlot == nil {
            newestSlot = slot
        }
        guard let newest = newestSlot, slot > newest - Self.slots else { return }  // older than the minute
        let index = Self.slots - 1 - (newest - min(slot, newest))
        sums[index] += bpm
        counts[index] += 1
    }

    var rendered: String {
        let means = zip(sums, counts).map { $1 > 0 ? $0 / Double($1) : nil }
        let values = means.compactMap { $0 }
        guard let low = values.min(), let high = values.max() else { return "" }
        let span = max(high - low, 1)
        return String(means.map { mean -> Character in
            guard let mean else { return " " }
            let level = Int(((mean - low) / span * Double(Self.blocks.count - 1)).rounded())
            return Self.blocks[min(max(level, 0), Self.blocks.count - 1)]
        })
    }
}
