import RawbleWire

/// One heart-rate measurement read back from a session file (`rawble hr --csv` or `--jsonl`).
public struct SessionSample: Hashable, Sendable {
    /// When the measurement arrived, in microseconds since 1970-01-01T00:00:00Z (the files'
    /// timestamps have microseconds: kept exactly, no floating point).
    public var time: Int64
    /// Heart rate in beats per minute, as the strap sent it (any `UInt16`: the analysis filters).
    public var bpm: UInt16
    /// Skin contact as the strap reported it.
    public var contact: HeartRateMeasurement.SensorContact
    /// Energy expended in kJ, `nil` when the measurement had none.
    public var energyExpended: UInt16?
    /// The RR intervals the measurement carried, oldest first, in milliseconds. Zero or absurd
    /// values are kept as read (finite, not negative): the analysis decides what is an artifact.
    public var rrIntervals: [Double]
    /// The line of the file it came from (1-based), for messages.
    public var line: Int
    /// The strap's address, in a file of several straps (`rawble hr A B`, `--all`); `nil` in
    /// a file of one.
    public var strap: String?

    public init(time: Int64, bpm: UInt16, contact: HeartRateMeasurement.SensorContact = .unsupported,
                energyExpended: UInt16? = nil, rrIntervals: [Double] = [], line: Int = 0, strap: String? = nil) {
        self.time = time
        self.bpm = bpm
        self.contact = contact
        self.energyExpended = energyExpended
        self.rrIntervals = rrIntervals
        self.line = line
        self.strap = strap
    }

    /// ``time`` in seconds since 1970 (what plots and the analysis take).
    public var seconds: Double { Self.seconds(unixMicroseconds: time) }

    /// Seconds since 1970 from microseconds: the one conversion the report and `hr`'s live
    /// analysis both use, so the same value gives the same `Double` (and the same zone seconds).
    public static func seconds(unixMicroseconds: Int64) -> Double { Double(unixMicroseconds) / 1_000_000 }
}

/// The two files `rawble hr` writes.
public enum SessionFileFormat: String, Hashable, Sendable, CustomStringConvertible {
    /// `--csv`: a header `time,bpm,contact,energy_expended_kj,rr_intervals_ms,raw`, then one line
    /// per measurement, RR intervals as integer milliseconds separated by spaces.
    case csv
    /// `--jsonl` (or `--json`'s output): one JSON object a line; `measurement` events carry the
    /// values (RR intervals in seconds), other events (`connected`, `disconnected`, …) are skipped.
    case jsonLines

    public var description: String {
        switch self {
        case .csv: "CSV"
        case .jsonLines: "JSON lines"
        }
    }

    /// A new file's first line in this format: `csvHeader` and a newline for CSV, none for
    /// JSON lines (the writers' ``SessionFileWriter/header``, ``ECGSessionWriter/header``).
    func header(csv csvHeader: String) -> String? {
        switch self {
        case .csv: csvHeader + "\n"
        case .jsonLines: nil
        }
    }
}

/// A time without a measurement: the samples before and after are further apart than the
/// reader's gap threshold, or a `disconnected` event came between them. Times in microseconds
/// since 1970, as ``SessionSample/time``.
public struct SessionGap: Hashable, Sendable {
    /// The last measurement before the gap.
    public var start: Int64
    /// The first measurement after it.
    public var end: Int64

    public init(start: Int64, end: Int64) {
        self.start = start
        self.end = end
    }

    /// The gap's length in seconds.
    public var duration: Double { Double(end - start) / 1_000_000 }
}

/// Why one line of a session file gave no sample.
public enum SessionLineProblem: Error, Hashable, Sendable, CustomStringConvertible {
    /// JSON lines: the line is not one JSON object (or its JSON is broken at this byte offset).
    case notJSON(offset: Int)
    /// CSV: the line has fewer fields than the header names.
    case missingFields(expected: Int, found: Int)
    /// No `time` field, or one that is neither an ISO 8601 time nor a number of seconds.
    case badTime
    /// A field that does not hold what its name says (e.g. `bpm` = `abc`, a negative RR interval).
    case badField(String)
    /// No heart rate: no `bpm` field and no `raw` value that decodes.
    case missingHeartRate
    /// The `raw` value is the only source of the heart rate and does not decode.
    case rawDoesNotDecode(WireError)
    /// The line is longer than the reader's bound (its bytes were not kept).
    case tooLong(limit: Int)
    /// The measurement is older than the one before it (a clock set back, lines shuffled): left out.
    case earlierThanPrevious(previous: Int64)
    /// ECG sessions: a sample whose device time is not after the one before it in its run
    /// (lines shuffled or repeated), in PMD nanoseconds: left out.
    case deviceTimeNotIncreasing(previous: UInt64)
    /// ECG sessions: a `type` that is none of `ecg`, `acc`, `hr`, `gap` (its first 20 bytes).
    case unknownType(String)
    /// ECG sessions: a line of another kind of file (a `rawble hr` measurement: files mixed).
    case otherFileKind
    /// A file of several straps naming more than the reader follows (``SessionFileReader/strapLimit``).
    case tooManyStraps(limit: Int)

    /// Whether the line itself is broken (every case but ``earlierThanPrevious(previous:)`` and
    /// ``deviceTimeNotIncreasing(previous:)``).
    public var isBroken: Bool {
        switch self {
        case .earlierThanPrevious, .deviceTimeNotIncreasing: false
        default: true
        }
    }

    public var description: String {
        switch self {
        case .notJSON(let offset): "not a JSON object (broken at byte \(offset + 1))"
        case let .missingFields(expected, found): "\(found) fields where the header has \(expected)"
        case .badTime: "no time, or one that is not ISO 8601"
        case .badField(let name): "a bad \(name) value"
        case .missingHeartRate: "no heart rate (no bpm and no raw value)"
        case .rawDoesNotDecode(let error): "its raw value does not decode: \(error)"
        case .tooLong(let limit): "longer than \(limit) bytes"
        case .earlierThanPrevious: "earlier than the measurement before it"
        case .deviceTimeNotIncreasing: "its device time is not after the sample's before it"
        case .unknownType(let type): "an unknown type “\(type)”"
        case .otherFileKind: "a line of another kind of session file (rawble hr's), not an ECG session's"
        case .tooManyStraps(let limit): "a strap beyond the first \(limit) the file names"
        }
    }
}

/// One left-out line, with its line number (1-based).
public struct SessionFileProblem: Hashable, Sendable, CustomStringConvertible {
    public var line: Int
    public var problem: SessionLineProblem

    public init(line: Int, problem: SessionLineProblem) {
        self.line = line
        self.problem = problem
    }

    public var description: String { "line \(line): \(problem)" }
}

/// What a whole read found and what it left out: the counts are exact, the problem list keeps
/// the first few of each kind (``SessionFileReader/keptProblems``) so memory stays bounded.
public struct SessionFileSummary: Hashable, Sendable {
    /// The format detected from the first line (`nil` until a line was read).
    public var format: SessionFileFormat?
    /// Every line read, blank ones included.
    public var lineCount = 0
    /// Measurements kept (each a ``SessionSample``).
    public var sampleCount = 0
    /// RR intervals in the kept measurements.
    public var rrIntervalCount = 0
    /// The first and last kept measurement's time (µs since 1970).
    public var firstTime: Int64?
    public var lastTime: Int64?
    /// Lines that gave no sample because they are broken (``SessionLineProblem`` other than
    /// ``SessionLineProblem/earlierThanPrevious(previous:)``).
    public var brokenLineCount = 0
    /// Measurements left out because they are older than the one kept before them.
    public var outOfOrderCount = 0
    /// JSON `invalid` events: values the strap sent that `rawble hr` could not decode.
    public var invalidMeasurementCount = 0
    /// JSON events other than measurements (`connected`, `disconnected`, …), skipped by design.
    public var otherEventCount = 0
    /// Further CSV header lines (files appended to by several runs), skipped by design.
    public var repeatedHeaderCount = 0
    /// The first broken and out-of-order lines, in file order (at most ``SessionFileReader/keptProblems`` of each kind).
    public var problems: [SessionFileProblem] = []
    /// Gaps between kept measurements, in time order (at most ``SessionFileReader/keptGaps``).
    public var gaps: [SessionGap] = []
    /// Gaps found beyond those kept in ``gaps``.
    public var gapsNotKept = 0

    public init() {}

    /// The session's length from the first to the last kept measurement, in seconds.
    public var duration: Double {
        guard let firstTime, let lastTime else { return 0 }
        return Double(lastTime - firstTime) / 1_000_000
    }

    /// One sentence a person reads for each thing left out (nothing when nothing was), e.g.
    /// `2 broken lines left out (line 4: not a JSON object (broken at byte 1); line 9: …)`.
    public var leftOut: [String] {
        var lines = leftOutSentences(outOfOrder: "measurement", "earlier than the one before")
        if invalidMeasurementCount > 0 {
            lines.append("\(plural(invalidMeasurementCount, "value")) the strap sent did not decode (invalid events)")
        }
        return lines
    }
}

/// `1 broken line`, `3 broken lines`.
func plural(_ count: Int, _ noun: String) -> String {
    "\(count) \(noun)\(count == 1 ? "" : "s")"
}

/// A file that cannot be read as a session at all; each says so in one line.
public enum SessionFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Nothing but blank lines (or nothing).
    case empty
    /// The first line is neither the CSV header nor a JSON object: another kind of file.
    case unrecognizedFormat(firstLine: String)
    /// Lines were read but none is a measurement; the summary says what they were.
    case noMeasurements(SessionFileSummary)

    public var description: String {
        switch self {
        case .empty:
            "the file is empty: no measurement to read"
        case .unrecognizedFormat(let firstLine):
            "not a rawble session file (the first line, “\(firstLine)”, is neither the CSV header "
                + "time,bpm,contact,energy_expended_kj,rr_intervals_ms,raw nor a JSON object): "
                + "give a file that rawble hr --csv or --jsonl wrote"
        case .noMeasurements(let summary):
            "no measurement in \(plural(summary.lineCount, "line"))"
                + (summary.leftOut.isEmpty ? "" : ": " + summary.leftOut.joined(separator: "; "))
        }
    }
}
