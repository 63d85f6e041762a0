import RawbleWire

/// One beat after artifact correction: the RR interval ending it and where it came from.
public struct CorrectedBeat: Sendable, Hashable {
    /// The corrected RR interval, ms.
    public var interval: Double
    /// Seconds: the time of the measurement that carried the beat (an inserted beat takes the time
    /// of the beat after it).
    public var time: Double
    /// The correction made or changed this interval (an inserted, moved or merged beat at either end).
    public var corrected: Bool
    /// The artifact found on this beat (or on an extra beat dropped just before it).
    public var artifact: ArtifactKind?
    /// False for the first beat of a run (after a gap or an excluded interval): no successive
    /// difference with the beat before.
    public var continuesPrevious: Bool

    public init(interval: Double, time: Double, corrected: Bool, artifact: ArtifactKind?, continuesPrevious: Bool) {
        self.interval = interval
        self.time = time
        self.corrected = corrected
        self.artifact = artifact
        self.continuesPrevious = continuesPrevious
    }
}

extension Kubios {
    /// Turns corrected beats into intervals, for the beats whose origin is in `origins` (the
    /// beats to emit now), after `previous` (the last beat emitted, whose `moved` flag counts).
    /// `kinds` holds the artifact found on each origin; `lastOrigin` is the last origin already
    /// reported (artifacts on origins up to it are not reported again); `carried` an artifact on
    /// a dropped beat after the last one emitted, for the next beat emitted (in or after this call).
    static func emit(
        _ beats: [Beat], origins: ClosedRange<Int>, after previous: Beat, kinds: OriginKinds,
        lastOrigin: inout Int, carried: inout ArtifactKind?, time: (Int) -> Double, firstContinues: Bool,
        into out: inout [CorrectedBeat]
    ) -> [Beat] {
        var previous = previous
        var emitted: [Beat] = []
        for beat in beats where origins.contains(beat.origin) {
            guard beat.time > previous.time else { continue }
            var artifact = carried
            carried = nil
            if artifact == nil, beat.origin > lastOrigin {
                for origin in (lastOrigin + 1)...beat.origin {
                    if let kind = kinds[origin] { artifact = kind; break }
                }
            }
            lastOrigin = max(lastOrigin, beat.origin)
            out.append(CorrectedBeat(
                interval: beat.time - previous.time, time: time(beat.origin),
                corrected: beat.moved || beat.merged || previous.moved, artifact: artifact,
                continuesPrevious: firstContinues || !emitted.isEmpty))
            emitted.append(beat)
            previous = beat
        }
        // Artifacts on beats dropped after the last one emitted go with the next beat emitted.
        if lastOrigin < origins.upperBound {
            for origin in (lastOrigin + 1)...origins.upperBound where carried == nil {
                carried = kinds[origin]
            }
            lastOrigin = origins.upperBound
        }
        return emitted
    }

}

/// The first artifact kind found on each origin (input position) of a range, held in an array
/// over the range: origins are consecutive, and this is looked up for every beat emitted.
struct OriginKinds {
    let range: ClosedRange<Int>
    private var kinds: [ArtifactKind?]

    /// The first kind in `found` for each origin in `range`.
    init(_ found: some Sequence<(origin: Int, kind: ArtifactKind)>, in range: ClosedRange<Int>) {
        self.range = range
        kinds = [ArtifactKind?](repeating: nil, count: range.count)
        for item in found where range.contains(item.origin) && kinds[item.origin - range.lowerBound] == nil {
            kinds[item.origin - range.lowerBound] = item.kind
        }
    }

    subscript(origin: Int) -> ArtifactKind? {
        range.contains(origin) ? kinds[origin - range.lowerBound] : nil
    }

    /// Every kind held, one per origin that has one.
    var all: [ArtifactKind] { kinds.compactMap { $0 } }
}

/// Artifact correction one beat at a time, in bounded memory: the same Lipponen & Tarvainen
/// classification and correction as ``ArtifactCorrection/kubios(_:iterative:)``, run over a
/// window of the last ``lookbehind`` corrected beats and the beats not yet final. A beat becomes
/// final once at least `lookahead` beats have followed it (10 by default, some 8 s at rest).
/// The correction runs in batches, not at every beat: when ``batchBeats`` beats wait beyond the
/// lookahead, or ``batchSeconds`` of measurement time have passed since the last run (so a real
/// strap's beats are final at most that much later). Each run costs about as much as the
/// window holds, so batching divides the cost per beat by up to ``batchBeats`` (a 1 kHz stream
/// cost ~40 µs per beat corrected beat by beat). Its decisions equal the batch's where the
/// batch's 91-beat threshold windows see no further than the beats then held; near the newest
/// beats the windows are cut there, as the batch's are at a series' end. ``endRun(into:)``
/// makes every beat final (a gap, the end of a session).
public struct StreamingArtifactCorrector: Sendable {
    /// Corrected beats kept as context before the beats not yet final: the 45 beats of a threshold
    /// window plus the 5 of the median filter.
    public static let lookbehind = 50
    /// Beats that follow a beat before it is final.
    public let lookahead: Int
    /// Beats waiting beyond the lookahead that start a correction run.
    public static let batchBeats = 1024
    /// Measurement time after which the beats beyond the lookahead are corrected anyway, seconds,
    /// unless the caller says otherwise. A real strap sends a value a second: each run then
    /// corrects the ~60 beats of context for a few new ones, so the cost per new beat falls as
    /// this grows (at 1 Hz, by Benchmarks' AnalysisRates: 11–12 µs per value with runs every 2 s,
    /// 5.2–5.4 µs every 5 s), while the corrected beats lag by as much.
    public static let defaultBatchSeconds = 5.0
    /// This corrector's ``defaultBatchSeconds``.
    public let batchSeconds: Double
    /// Artifacts found in final beats so far.
    public private(set) var counts = ArtifactCounts()

    private var history: [Beat] = []
    private var pending: [Beat] = []
    private var pendingTimes: [Double] = []
    private var clock = 0.0
    private var serial = 0
    private var lastOrigin = -1
    private var carried: ArtifactKind?
    private var emittedInRun = 0
    /// When the last correction run was (measurement time), seconds.
    private var lastRun: Double?

    /// A corrector that waits for `lookahead` (3 to 45) beats after each beat, and corrects at
    /// least every `batchSeconds` (0.1 s to an hour) of measurement time.
    public init(lookahead: Int = 10, batchSeconds: Double = defaultBatchSeconds) {
        self.lookahead = min(max(lookahead, 3), 45)
        self.batchSeconds = batchSeconds.isFinite ? min(max(batchSeconds, 0.1), 3600) : Self.defaultBatchSeconds
    }

    /// Beats held (bounded by ``lookbehind`` + `lookahead` + ``batchBeats``).
    public var heldBeats: Int { history.count + pending.count }

    /// Adds one interval (ms; screened by ``RRScreen``) carried by a measurement at `time`
    /// (seconds); appends the beats that became final to `out`.
    public mutating func add(_ interval: Double, at time: Double, into out: inout [CorrectedBeat]) {
        guard interval.isFinite, interval > 0 else { return }
        if history.isEmpty {
            history = [Beat(time: 0, origin: serial)]
            lastOrigin = serial
            serial += 1
            clock = 0
        }
        clock += interval
        pending.append(Beat(time: clock, origin: serial))
        pendingTimes.append(time)
        serial += 1
        let waiting = pending.count - lookahead
        guard waiting > 0 else { return }
        let due = lastRun.map { !(time - $0 < batchSeconds) } ?? true
        if waiting >= Self.batchBeats || due {
            lastRun = time
            finalize(waiting, into: &out)
        }
    }

    /// Ends the run: every beat held becomes final (appended to `out`); the next beat starts a new run.
    public mutating func endRun(into out: inout [CorrectedBeat]) {
        if !pending.isEmpty { finalize(pending.count, into: &out) }
        history.removeAll(keepingCapacity: true)
        pending.removeAll(keepingCapacity: true)
        pendingTimes.removeAll(keepingCapacity: true)
        emittedInRun = 0
        carried = nil
    }

    private mutating func finalize(_ count: Int, into out: inout [CorrectedBeat]) {
        guard count > 0, count <= pending.count, let previous = history.last else { return }
        let window = history.map { Beat(time: $0.time, origin: $0.origin) } + pending
        let outcome = Kubios.correct(window)
        let first = pending[0].origin
        let range = first...pending[count - 1].origin
        let kinds = OriginKinds(outcome.found, in: range)
        for kind in kinds.all { counts[kind] += 1 }
        let times = pendingTimes
        let before = out.count
        let emitted = Kubios.emit(
            outcome.beats, origins: range, after: previous, kinds: kinds, lastOrigin: &lastOrigin,
            carried: &carried, time: { origin in times.indices.contains(origin - first) ? times[origin - first] : times.last ?? 0 },
            firstContinues: emittedInRun > 0, into: &out)
        emittedInRun += out.count - before
        history += emitted
        if history.count > Self.lookbehind { history.removeFirst(history.count - Self.lookbehind) }
        pending.removeFirst(count)
        pendingTimes.removeFirst(count)
    }
}
