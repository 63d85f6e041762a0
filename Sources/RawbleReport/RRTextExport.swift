/// The text layouts RR intervals are exported in (`rawble report --export`).
public enum RRTextFormat: String, CaseIterable, Hashable, Sendable {
    /// One RR interval in ms a line, nothing else: what NeuroKit2 (`numpy.loadtxt`), Kubios,
    /// HRVAS-like tools and spreadsheets read as a column.
    case rr
    /// Kubios HRV's RR text: a few `#` comment lines naming the source, then one RR interval in
    /// ms a line (three decimals), the layout the `kubios` Python package writes for Kubios'
    /// "RR interval data" text import.
    case kubios
    /// HRVAS' `.ibi`: two comma-separated columns, the beat's time and its inter-beat interval,
    /// both in seconds; the time column keeps the gaps between runs of beats.
    case ibi
}

/// One run of RR intervals without a gap: when its first beat was, and its intervals.
public struct RRRun: Hashable, Sendable {
    /// The time of the run's first beat (the end of its first interval), seconds since 1970.
    public var time: Double
    /// The RR intervals, ms, in order.
    public var intervals: [Double]

    /// A run.
    /// - Parameters:
    ///   - time: its first beat's time, seconds since 1970.
    ///   - intervals: its RR intervals, ms.
    public init(time: Double, intervals: [Double]) {
        self.time = time
        self.intervals = intervals
    }
}

/// RR intervals as text (``RRTextFormat``), sans I/O: runs in, bytes out.
public enum RRTextExport {
    /// The file's bytes.
    /// - Parameters:
    ///   - runs: the runs of RR intervals, in order.
    ///   - format: the layout.
    ///   - origin: where the `.ibi` time column's zero is, seconds since 1970 (the session's start).
    ///   - comments: the Kubios layout's comment lines (without their `# `).
    /// - Returns: the text, one line per interval (after the comments), each ending in `\n`.
    public static func file(_ runs: [RRRun], format: RRTextFormat, origin: Double, comments: [String] = []) -> [UInt8] {
        var text = ""
        switch format {
        case .rr:
            for run in runs { for interval in run.intervals { text += decimal(interval, places: 3) + "\n" } }
        case .kubios:
            for comment in comments { text += "# " + comment.filter { !$0.isNewline } + "\n" }
            for run in runs { for interval in run.intervals { text += fixed(interval, places: 3) + "\n" } }
        case .ibi:
            for (time, interval) in beatTimes(runs) {
                text += decimal(time - origin, places: 3) + "," + decimal(interval / 1000, places: 6) + "\n"
            }
        }
        return Array(text.utf8)
    }

    /// Each beat's time (seconds since 1970) and interval (ms): a run's first beat at its
    /// ``RRRun/time``, each next one an interval later; a run never starts before the beat
    /// that ended the one before plus its own first interval (the times keep increasing).
    public static func beatTimes(_ runs: [RRRun]) -> [(time: Double, interval: Double)] {
        var beats: [(time: Double, interval: Double)] = []
        var last: Double?
        for run in runs {
            var time: Double?
            for interval in run.intervals {
                if let previous = time {
                    time = previous + interval / 1000
                } else {
                    time = max(run.time, (last ?? -.infinity) + interval / 1000)
                }
                beats.append((time ?? run.time, interval))
            }
            if let time { last = time }
        }
        return beats
    }

    /// `value` rounded to `places` decimals, without trailing zeros (nor a point for a whole number).
    static func decimal(_ value: Double, places: Int) -> String {
        let text = fixed(value, places: places)
        guard text.contains(".") else { return text }
        var trimmed = Substring(text)
        while trimmed.last == "0" { trimmed.removeLast() }
        if trimmed.last == "." { trimmed.removeLast() }
        return String(trimmed)
    }

    /// `value` rounded to `places` decimals, all of them written.
    static func fixed(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return "0" }
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let scaled = (value * Double(scale)).rounded()
        guard abs(scaled) < 9e18 else { return "0" }
        let units = Int64(scaled)
        let magnitude = units.magnitude
        let whole = String(magnitude / UInt64(scale))
        let sign = units < 0 ? "-" : ""
        guard places > 0 else { return sign + whole }
        let fraction = String(magnitude % UInt64(scale))
        return sign + whole + "." + String(repeating: "0", count: places - fraction.count) + fraction
    }
}
