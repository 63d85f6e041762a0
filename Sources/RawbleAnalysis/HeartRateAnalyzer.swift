import RawbleWire

/// The live analysis, one measurement at a time in bounded memory: RR intervals screened
/// (``RRScreen``), corrected as they become final (``StreamingArtifactCorrector``, a lag of
/// `lookahead` beats), time-domain HRV over a sliding window and over the whole session so far,
/// and the time in each heart-rate zone. Time is an input: the measurements' own timestamps.
public struct HeartRateAnalyzer: Sendable {
    /// What the analysis is asked for.
    public struct Configuration: Sendable, Hashable {
        /// The zones to count time in; `nil` for none.
        public var zones: HeartRateZones?
        /// The sliding window's length, seconds.
        public var windowDuration: Double
        /// The longest pause between measurements that does not end a run, seconds.
        public var maxGap: Double
        /// Beats the corrector waits for after each beat before it is final.
        public var lookahead: Int
        /// The longest measurement time between two correction runs, seconds: corrected beats lag
        /// the newest by up to this (and `lookahead` beats); longer is cheaper at a strap's 1 Hz.
        public var correctionInterval: Double

        public init(zones: HeartRateZones? = nil, windowDuration: Double = 60, maxGap: Double = 5, lookahead: Int = 10,
                    correctionInterval: Double = StreamingArtifactCorrector.defaultBatchSeconds) {
            self.zones = zones
            self.windowDuration = windowDuration
            self.maxGap = maxGap
            self.lookahead = lookahead
            self.correctionInterval = correctionInterval
        }
    }

    public let configuration: Configuration
    private var screen: RRScreen
    private var corrector: StreamingArtifactCorrector
    private var window: HRVWindow
    private var session = HRVAccumulator()
    /// Time in each zone (when zones were configured).
    public private(set) var zoneTime: ZoneTime?
    /// The latest heart rate that was a reading, bpm.
    public private(set) var latestHeartRate: Double?
    private var events: [RRScreen.Event] = []

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        screen = RRScreen(maxGap: configuration.maxGap)
        corrector = StreamingArtifactCorrector(lookahead: configuration.lookahead, batchSeconds: configuration.correctionInterval)
        window = HRVWindow(duration: configuration.windowDuration)
        zoneTime = configuration.zones.map { ZoneTime(zones: $0, maxGap: configuration.maxGap) }
    }

    /// Takes one measurement; returns the beats that became final with it (corrected, in order).
    @discardableResult
    public mutating func add(_ measurement: HeartRateSample) -> [CorrectedBeat] {
        if let bpm = measurement.heartRate {
            zoneTime?.add(bpm: bpm, at: measurement.time)
            if screen.isInOrder(measurement), bpm.isFinite, HeartRateZones.plausible.contains(bpm) {
                latestHeartRate = bpm
            }
        }
        events.removeAll(keepingCapacity: true)
        screen.screen(measurement, into: &events)
        var out: [CorrectedBeat] = []
        for event in events {
            switch event {
            case .beat(let interval, let time): corrector.add(interval, at: time, into: &out)
            case .endOfRun: corrector.endRun(into: &out)
            }
        }
        take(out)
        return out
    }

    /// Makes every beat held final (the end of a session); returns them.
    @discardableResult
    public mutating func finish() -> [CorrectedBeat] {
        var out: [CorrectedBeat] = []
        corrector.endRun(into: &out)
        take(out)
        return out
    }

    private mutating func take(_ beats: [CorrectedBeat]) {
        for beat in beats {
            window.append(beat.interval, at: beat.time, continuesPrevious: beat.continuesPrevious)
            session.add(beat.interval, continuesPrevious: beat.continuesPrevious)
        }
    }

    /// Time-domain HRV of the corrected beats in the last ``Configuration/windowDuration`` seconds.
    public var windowFigures: TimeDomainHRV { window.figures }
    /// Time-domain HRV of every corrected beat so far.
    public var sessionFigures: TimeDomainHRV { session.figures }
    /// Artifacts corrected so far, by kind.
    public var artifacts: ArtifactCounts { corrector.counts }
    /// What was left out of the input so far.
    public var input: InputCounts { screen.counts }
    /// The zone of the latest heart rate (0 rest to 5), when zones were configured.
    public var currentZone: Int? { zoneTime?.currentZone }
}
