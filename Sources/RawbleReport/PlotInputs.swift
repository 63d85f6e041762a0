import RawbleWire

/// One heart-rate value to plot: when (seconds since 1970), how fast, in which zone (0 = below
/// zone 1, 1…5 = the five zones; other values are clamped).
public struct PlotSample: Hashable, Sendable {
    public var time: Double
    public var bpm: Double
    public var zone: Int

    public init(time: Double, bpm: Double, zone: Int) {
        self.time = time
        self.bpm = bpm
        self.zone = zone
    }
}

/// One beat of the RR tachogram: when it ended (seconds since 1970), its RR interval in ms (as
/// the analysis left it), and whether the analysis corrected it (marked on the plot).
public struct PlotBeat: Hashable, Sendable {
    public var time: Double
    public var rrMs: Double
    public var corrected: Bool

    public init(time: Double, rrMs: Double, corrected: Bool = false) {
        self.time = time
        self.rrMs = rrMs
        self.corrected = corrected
    }
}

/// A time with no data (a disconnection), seconds since 1970: no line is drawn across it.
public struct PlotGap: Hashable, Sendable {
    public var start: Double
    public var end: Double

    public init(start: Double, end: Double) {
        self.start = start
        self.end = end
    }

    /// A reader's gap (microseconds) as a plot's (seconds).
    public init(_ gap: SessionGap) {
        self.init(start: Double(gap.start) / 1_000_000, end: Double(gap.end) / 1_000_000)
    }
}

/// The heart-rate zones' bounds in bpm, drawn as bands and named in the legend.
public struct PlotZones: Hashable, Sendable {
    /// The lowest bpm of zones 1…5, ascending (five values; fewer draws fewer bands).
    public var lowerBounds: [Double]
    /// The maximum heart rate (the top of zone 5), when known.
    public var maximum: Double?

    public init(lowerBounds: [Double], maximum: Double? = nil) {
        self.lowerBounds = lowerBounds
        self.maximum = maximum
    }

    /// The usual five zones at 50, 60, 70, 80 and 90 % of `maximumHeartRate`.
    public init(maximumHeartRate: Double) {
        self.init(lowerBounds: [0.5, 0.6, 0.7, 0.8, 0.9].map { ($0 * maximumHeartRate).rounded() },
                  maximum: maximumHeartRate)
    }
}

/// The Poincaré plot's ellipse: SD1 (short-term, across the identity line) and SD2 (long-term,
/// along it), in ms.
public struct PoincareFigures: Hashable, Sendable {
    public var sd1: Double
    public var sd2: Double

    public init(sd1: Double, sd2: Double) {
        self.sd1 = sd1
        self.sd2 = sd2
    }

    /// SD1 and SD2 of successive pairs (RR[n], RR[n+1]): the standard deviations of the pairs
    /// projected across and along the identity line. `nil` with fewer than three pairs.
    public init?(pairs: [(Double, Double)]) {
        guard pairs.count >= 3 else { return nil }
        var across = RunningVariance()
        var along = RunningVariance()
        let half = 0.5.squareRoot()
        for (x, y) in pairs {
            across.add((y - x) * half)
            along.add((y + x) * half)
        }
        self.init(sd1: across.standardDeviation, sd2: along.standardDeviation)
    }
}

/// How the time axis is labelled.
public enum PlotTimeAxis: Hashable, Sendable {
    /// Clock time, `hh:mm` (in the plot's ``SessionPlot/utcOffset``).
    case clock
    /// Time since the first value, `h:mm`.
    case elapsed
}

/// Welford's running mean and variance (sample variance, n − 1).
struct RunningVariance {
    private(set) var count = 0
    private(set) var mean = 0.0
    private var squares = 0.0

    mutating func add(_ value: Double) {
        count += 1
        let delta = value - mean
        mean += delta / Double(count)
        squares += delta * (value - mean)
    }

    var standardDeviation: Double {
        count > 1 ? (squares / Double(count - 1)).squareRoot() : 0
    }
}
