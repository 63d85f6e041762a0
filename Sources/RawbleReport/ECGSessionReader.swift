import RawbleWire

/// The two kinds of session file `rawble` writes, told apart by their first line.
public enum SessionFileKind: String, Hashable, Sendable {
    /// `rawble hr --csv`/`--jsonl`: one heart-rate measurement a line (``SessionFileReader``).
    case heartRate
    /// `rawble ecg --csv`/`--jsonl`: one raw ECG, acceleration, heart-rate or gap line per sample
    /// (``ECGSessionReader``).
    case ecg

    /// The kind of the file that starts with `prefix`, from its first non-blank line: an ECG
    /// session's CSV header names `device_time_ns` and `type`; its JSON lines have a string
    /// `type` (a heart-rate session's have `event`). Anything else is `heartRate`, whose reader
    /// then says what is wrong with it. A first line longer than `prefix` is judged on the part
    /// there is.
    ///
    /// - Parameter prefix: The file's first bytes (a chunk of at least one line, ideally).
    /// - Returns: ``ecg`` or ``heartRate``.
    public static func detect(_ prefix: some Collection<UInt8>) -> SessionFileKind {
        var bytes = Array(prefix.prefix(64 * 1024))[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            let text = FieldText.lineText(line)
            guard !text.isEmpty else { continue }
            if text.first == UInt8(ascii: "{") { return JSONLine.hasTypeKey(text) ? .ecg : .heartRate }
            return ECGColumns(header: text) != nil ? .ecg : .heartRate
        }
        return .heartRate
    }
}

/// One ECG sample read back from an ECG session file.
public struct ECGSessionSample: Hashable, Sendable {
    /// When it was taken on the host's clock, µs since 1970 (the device's time plus the offset
    /// `rawble ecg` measured when the stream started).
    public var time: Int64
    /// Its time on the device: PMD nanoseconds since 2000-01-01. The spacing of samples and beats
    /// comes from these (the H10's nominal 130 Hz runs up to ±2 % off).
    public var deviceTime: UInt64
    /// The sample in µV.
    public var microvolts: Int32
    /// The line of the file it came from (1-based).
    public var line: Int

    /// A sample.
    /// - Parameters:
    ///   - time: host time, µs since 1970.
    ///   - deviceTime: device time, PMD ns since 2000-01-01.
    ///   - microvolts: the value, µV.
    ///   - line: its line in the file (1-based; 0 when it came from no file).
    public init(time: Int64, deviceTime: UInt64, microvolts: Int32, line: Int = 0) {
        self.time = time
        self.deviceTime = deviceTime
        self.microvolts = microvolts
        self.line = line
    }
}

/// One Heart Rate Measurement the strap sent during an ECG session (an `hr` line), decoded.
public struct ECGStrapMeasurement: Hashable, Sendable {
    /// When it arrived, µs since 1970 (host clock).
    public var time: Int64
    /// The heart rate the strap computed, bpm.
    public var bpm: UInt16
    /// The RR intervals it carried, ms (from 1/1024 s), oldest first: the strap's own beats, to
    /// set beside the ones found in the ECG.
    public var rrIntervals: [Double]
    /// The line of the file it came from (1-based).
    public var line: Int
    /// Which stretch between `gap` lines it came in (0 before the first; the reader counts them):
    /// no RR difference is taken across a gap.
    public var segment: Int

    /// A measurement.
    /// - Parameters:
    ///   - time: arrival time, µs since 1970.
    ///   - bpm: heart rate, bpm.
    ///   - rrIntervals: RR intervals, ms, oldest first.
    ///   - line: its line in the file (1-based; 0 when it came from no file).
    ///   - segment: the stretch between `gap` lines it came in.
    public init(time: Int64, bpm: UInt16, rrIntervals: [Double], line: Int = 0, segment: Int = 0) {
        self.time = time
        self.bpm = bpm
        self.rrIntervals = rrIntervals
        self.line = line
        self.segment = segment
    }
}

/// What one line of an ECG session file holds.
public enum ECGSessionRecord: Hashable, Sendable {
    /// An ECG sample (`type` `ecg`).
    case ecg(ECGSessionSample)
    /// An acceleration vector in mG (`acc`): host time (µs since 1970), device time (PMD ns)
    /// when the line has one, the three axes, the line number.
    case acceleration(time: Int64, deviceTime: UInt64?, x: Int32, y: Int32, z: Int32, line: Int)
    /// The strap's own Heart Rate Measurement (`hr`), decoded.
    case heartRate(ECGStrapMeasurement)
    /// The streams stopped and started again (`gap`); `time`: when samples resumed (µs since 1970).
    case gap(time: Int64, line: Int)
}

/// One stretch of ECG without a gap: the samples in order, as two parallel arrays (compact: a
/// day at 130 Hz is 11 million samples).
public struct ECGRun: Hashable, Sendable {
    /// The host time of the first sample, µs since 1970.
    public var startTime: Int64
    /// Each sample's device time, PMD ns, strictly increasing.
    public var deviceTimes: [UInt64] = []
    /// Each sample in µV.
    public var microvolts: [Int32] = []

    /// An empty run starting at `startTime` (µs since 1970).
    /// - Parameter startTime: the host time of its first sample.
    public init(startTime: Int64) {
        self.startTime = startTime
    }

    /// The host time of sample `index`, seconds since 1970: the first sample's host time plus the
    /// device's time since it (the device's spacing, not the host's arrival jitter).
    /// - Parameter index: a sample index of the run (clamped into it).
    public func seconds(at index: Int) -> Double {
        guard let first = deviceTimes.first else { return Double(startTime) / 1e6 }
        let index = min(max(index, 0), deviceTimes.count - 1)
        return Double(startTime) / 1e6 + Double(deviceTimes[index] &- first) / 1e9
    }

    /// The run's length from its first to its last sample by the device's clock, seconds.
    public var duration: Double {
        guard let first = deviceTimes.first, let last = deviceTimes.last else { return 0 }
        return Double(last &- first) / 1e9
    }

    /// The sampling rate the device's times show, Hz: (samples − 1) / duration; `nil` for fewer
    /// than two samples.
    public var measuredSamplingRate: Double? {
        guard deviceTimes.count > 1, duration > 0 else { return nil }
        return Double(deviceTimes.count - 1) / duration
    }
}

/// One acceleration vector of an ECG session: its host time and the three axes in mG.
public struct ECGAccelerationSample: Hashable, Sendable {
    /// When it was taken on the host's clock, µs since 1970 (the device's time plus the offset
    /// `rawble ecg` measured, as the ECG's).
    public var time: Int64
    /// The X axis, mG.
    public var x: Int32
    /// The Y axis, mG.
    public var y: Int32
    /// The Z axis, mG.
    public var z: Int32

    /// A vector.
    /// - Parameters:
    ///   - time: host time, µs since 1970.
    ///   - x: X, mG.
    ///   - y: Y, mG.
    ///   - z: Z, mG.
    public init(time: Int64, x: Int32, y: Int32, z: Int32) {
        self.time = time
        self.x = x
        self.y = y
        self.z = z
    }
}

/// A time without ECG, µs since 1970: from the last sample before it to the first after it.
public struct ECGGap: Hashable, Sendable {
    /// The last sample's host time before the gap (µs since 1970).
    public var start: Int64
    /// The first sample's host time after it (µs since 1970).
    public var end: Int64
    /// Whether the file marked it (a `gap` line); `false`: the device times jumped by more than
    /// the reader's ``ECGSessionReader/runBreak`` without one.
    public var marked: Bool

    /// A gap.
    /// - Parameters:
    ///   - start: the last sample before it, µs since 1970.
    ///   - end: the first sample after it, µs since 1970.
    ///   - marked: whether a `gap` line marked it.
    public init(start: Int64, end: Int64, marked: Bool) {
        self.start = start
        self.end = end
        self.marked = marked
    }

    /// Its length in seconds.
    public var duration: Double { Double(end &- start) / 1e6 }
}

/// What a read of an ECG session found and left out (counts exact, examples bounded).
public struct ECGSessionSummary: Hashable, Sendable {
    /// The format, from the first line (`nil` until one was read).
    public var format: SessionFileFormat?
    /// Every line read, blank ones included.
    public var lineCount = 0
    /// ECG samples kept.
    public var ecgSampleCount = 0
    /// Acceleration vectors read (not analysed).
    public var accelerationCount = 0
    /// The strap's Heart Rate Measurements read.
    public var heartRateCount = 0
    /// RR intervals in them.
    public var strapRRIntervalCount = 0
    /// `gap` lines.
    public var gapLineCount = 0
    /// The first and last kept sample's host time (µs since 1970), any type.
    public var firstTime: Int64?
    /// The last kept line's host time, µs since 1970.
    public var lastTime: Int64?
    /// Lines left out because they are broken.
    public var brokenLineCount = 0
    /// ECG samples left out because their device time does not increase.
    public var outOfOrderCount = 0
    /// Further CSV header lines (runs appended to one file), skipped by design.
    public var repeatedHeaderCount = 0
    /// The first few broken and out-of-order lines (at most ``ECGSessionReader/keptProblems`` of each).
    public var problems: [SessionFileProblem] = []

    /// An empty summary.
    public init() {}

    /// First to last kept line, seconds.
    public var duration: Double {
        guard let firstTime, let lastTime else { return 0 }
        return Double(lastTime &- firstTime) / 1e6
    }

    /// One sentence per kind of thing left out, with example lines (empty when nothing was).
    public var leftOut: [String] { leftOutSentences(outOfOrder: "ECG sample", "not after the one before") }
}

/// An ECG session file that cannot be read at all.
public enum ECGSessionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Nothing but blank lines.
    case empty
    /// The first line is neither the ECG CSV header nor a JSON object with a `type`.
    case unrecognizedFormat(firstLine: String)
    /// No line was an ECG sample; the summary says what they were.
    case noECG(ECGSessionSummary)

    /// One line a person reads.
    public var description: String {
        switch self {
        case .empty: "the file is empty: no ECG to read"
        case .unrecognizedFormat(let firstLine):
            "not an ECG session file (the first line, “\(firstLine)”, is neither the CSV header "
                + "time,device_time_ns,type,uV,x_mG,y_mG,z_mG,raw nor a JSON object with a type)"
        case .noECG(let summary):
            "no ECG sample in \(plural(summary.lineCount, "line"))"
                + (summary.leftOut.isEmpty ? "" : ": " + summary.leftOut.joined(separator: "; "))
        }
    }
}

/// A whole ECG session: its runs of ECG, the strap's measurements, the gaps, the summary.
public struct ECGRecording: Hashable, Sendable {
    /// The runs of ECG in order; a gap (marked or a jump in device time) lies between two.
    public var runs: [ECGRun] = []
    /// The strap's measurements in file order (each with its ``ECGStrapMeasurement/segment``).
    public var strapMeasurements: [ECGStrapMeasurement] = []
    /// The gaps between runs, in order.
    public var gaps: [ECGGap] = []
    /// The acceleration vectors in file order (the H10's 200 Hz stream beside its ECG), kept for
    /// an export (`report --export`); no figure uses them.
    public var acceleration: [ECGAccelerationSample] = []
    /// The H10s of a file of several (`rawble ecg A B`, `--all`), in the order they first
    /// appear, each with its own recording (its runs, gaps and counts: a strap's sample is
    /// compared with that strap's sample before it, not another's). Empty for a file of one;
    /// the file's ``summary`` then counts every strap's lines.
    public var straps: [ECGStrapRecording] = []
    /// What the read found and left out.
    public var summary = ECGSessionSummary()

    /// An empty session.
    public init() {}

    /// ECG samples over all runs.
    public var ecgSampleCount: Int { runs.reduce(0) { $0 + $1.deviceTimes.count } }
}

/// Reads an ECG session file `rawble ecg --csv` or `--jsonl` wrote (``ECGSessionWriter``'s
/// format), sans I/O: lines or chunks of bytes in, typed records out, and the whole session
/// gathered (``session``: its runs of ECG split at gaps, the strap's own measurements).
///
/// The format is detected from the first non-blank line: the CSV header (columns found by
/// name) or a JSON object. Broken lines (a bad or missing field, unknown type, a line longer than
/// ``maxLineLength``, a `rawble hr` line mixed in) are left out and counted, the first few kept
/// with their line numbers; nothing traps on any input. Memory: one line while it streams in,
/// plus the session itself (the ECG samples, 12 bytes each; acceleration vectors, 20).
public struct ECGSessionReader: Sendable, SessionLineReader {
    /// How many problem lines of each kind the summary keeps as examples.
    public var keptProblems: Int { lineState.keptProblems }
    /// A longer line is broken (its bytes are not kept while it streams in).
    public var maxLineLength: Int { lineState.maxLineLength }
    /// Two ECG samples further apart than this on the device's clock (ns) split a run even
    /// without a `gap` line.
    public let runBreak: UInt64
    /// Everything gathered so far (``finish(each:)`` returns it complete).
    public var session: ECGRecording {
        var whole = assembly.recording
        whole.straps = roster.straps
        return whole
    }

    var lineState: SessionLineState
    var failure: ECGSessionError?
    var counts: ECGSessionSummary {
        get { assembly.recording.summary }
        set { assembly.recording.summary = newValue }
    }
    private var columns: ECGColumns?
    /// The runs of a file of one strap (its lines name none).
    private var assembly: ECGAssembly
    /// The straps of a file of several, each with its own runs.
    private var roster = StrapRoster<ECGStrapRecording>()
    private var fields: [Range<Int>] = []

    /// A reader.
    /// - Parameters:
    ///   - keptProblems: example lines kept of each kind of problem.
    ///   - maxLineLength: the longest line read, bytes (a sample line is ~60).
    ///   - runBreak: ECG samples further apart than this on the device's clock start a new run
    ///     (default 1 s: at 130 Hz samples are 7.7 ms apart, even from frame to frame).
    public init(keptProblems: Int = 5, maxLineLength: Int = 4096, runBreak: Duration = .seconds(1)) {
        lineState = SessionLineState(keptProblems: keptProblems, maxLineLength: maxLineLength)
        let (seconds, attoseconds) = runBreak.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if seconds < 0 {
            self.runBreak = 0
        } else if nanoseconds.overflow {
            self.runBreak = .max
        } else {
            self.runBreak = UInt64(max(0, nanoseconds.partialValue &+ attoseconds / 1_000_000_000))
        }
        assembly = ECGAssembly(runBreak: self.runBreak)
    }

    /// Reads one line (without its newline; a trailing `\r` is ignored): its record, or `nil`
    /// (blank, header, or left out: see ``session``'s summary). Throws when the first line shows
    /// the file is no ECG session; every later call throws the same.
    /// - Parameter line: the line's bytes.
    /// - Returns: the record, also gathered into ``session``.
    public mutating func read(line: ArraySlice<UInt8>) throws(ECGSessionError) -> ECGSessionRecord? {
        guard case let (text, number)? = try content(of: line) else { return nil }
        let parsed: ECGLineFields
        if let columns {
            guard let fromCSV = columns.parse(text, fields: &fields) else {
                assembly.recording.summary.repeatedHeaderCount += 1
                return nil
            }
            parsed = fromCSV
        } else {
            switch JSONLine.parseECG(text) {
            case .broken(let offset):
                broken(.notJSON(offset: offset), line: number)
                return nil
            case .fields(let fields):
                parsed = fields
            }
        }
        switch parsed.record(line: number) {
        case .failure(let problem):
            broken(problem, line: number)
            return nil
        case .success(let record):
            guard let address = parsed.strap.map({ String(decoding: $0, as: UTF8.self) }) else { return accept(record) }
            return accept(record, of: address, name: parsed.strapName.flatMap(StrapRoster<ECGStrapRecording>.name))
        }
    }

    /// ``read(line:)`` for a `String`.
    /// - Parameter line: the line, without its newline.
    /// - Returns: the record, if the line holds one.
    public mutating func read(line: String) throws(ECGSessionError) -> ECGSessionRecord? {
        try read(line: Array(line.utf8)[...])
    }

    /// Reads a chunk of the file as it arrives (a line may span chunks), calling `each` for the
    /// record of every line it completes. Call ``finish(each:)`` at the end.
    /// - Parameters:
    ///   - chunk: the next bytes of the file.
    ///   - each: called with each record, in order.
    public mutating func read(chunk: some Collection<UInt8>, each: (ECGSessionRecord) -> Void = { _ in }) throws(ECGSessionError) {
        try readLines(in: chunk, each: each)
    }

    /// Ends a read: the last line if it had no newline, then the whole session. Throws
    /// ``ECGSessionError/empty`` for nothing but blank lines, ``ECGSessionError/noECG(_:)``
    /// when no line was an ECG sample.
    /// - Parameter each: called with the last line's record, if any.
    /// - Returns: the session.
    public mutating func finish(each: (ECGSessionRecord) -> Void = { _ in }) throws(ECGSessionError) -> ECGRecording {
        try finishLines(each: each)
        guard lineState.sawContent else { throw .empty }
        guard counts.ecgSampleCount > 0 else { throw .noECG(counts) }
        return session
    }

    /// A whole file at once.
    /// - Parameter bytes: the file's contents.
    /// - Returns: the session.
    public static func read(_ bytes: some Collection<UInt8>) throws(ECGSessionError) -> ECGRecording {
        var reader = ECGSessionReader()
        try reader.read(chunk: bytes)
        return try reader.finish()
    }

    // MARK: Internals

    mutating func readHeader(_ text: ArraySlice<UInt8>) -> Bool {
        columns = ECGColumns(header: text)
        return columns != nil
    }

    static func unrecognizedFormat(firstLine: String) -> ECGSessionError {
        .unrecognizedFormat(firstLine: firstLine)
    }

    /// A line of a file of one strap: into its runs.
    private mutating func accept(_ record: ECGSessionRecord) -> ECGSessionRecord? {
        if let problem = assembly.accept(record) {
            outOfOrder(problem, line: record.line)
            return nil
        }
        return record
    }

    /// A line of one strap of several: into that strap's runs, and counted in the file's summary.
    private mutating func accept(_ record: ECGSessionRecord, of address: String, name: String?) -> ECGSessionRecord? {
        guard let index = roster.index(of: address, adding: { ECGStrapRecording(address: address, name: name, runBreak: runBreak) }) else {
            broken(.tooManyStraps(limit: StrapRoster<ECGStrapRecording>.limit), line: record.line)
            return nil
        }
        if roster[index].name == nil { roster[index].name = name }
        if let problem = roster[index].assembly.accept(record) {
            outOfOrder(problem, line: record.line)
            return nil
        }
        assembly.recording.summary.count(record)
        return record
    }
}

/// One H10 of a file of several: its address, its name (from the first line that has one) and
/// its own recording (the file's problems are the file's).
public struct ECGStrapRecording: Hashable, Sendable {
    /// The strap's address, `XX:XX:XX:XX:XX:XX`: what keys it in the file.
    public var address: String
    /// The name its lines give, if any.
    public var name: String?
    /// Its runs of ECG, measurements, gaps and counts.
    public var recording: ECGRecording { assembly.recording }
    var assembly: ECGAssembly

    init(address: String, name: String?, runBreak: UInt64) {
        self.address = address
        self.name = name
        assembly = ECGAssembly(runBreak: runBreak)
    }
}

/// One strap's ECG as its lines come: samples joined into runs (split at a `gap` line or a jump
/// on the device's clock), its measurements numbered by segment, its counts.
struct ECGAssembly: Hashable, Sendable {
    let runBreak: UInt64
    var recording = ECGRecording()
    private var segment = 0
    private var gapPending = false

    init(runBreak: UInt64) {
        self.runBreak = runBreak
    }

    /// Takes `record` into the recording; the problem when it is out of order (left out).
    mutating func accept(_ record: ECGSessionRecord) -> SessionLineProblem? {
        switch record {
        case .ecg(let sample):
            if let previous = recording.runs.last?.deviceTimes.last, !gapPending {
                guard sample.deviceTime > previous else { return .deviceTimeNotIncreasing(previous: previous) }
                if sample.deviceTime - previous > runBreak {
                    startRun(with: sample, marked: false)
                } else {
                    // In place: a copy of the run would copy its arrays at every sample.
                    let last = recording.runs.count - 1
                    recording.runs[last].deviceTimes.append(sample.deviceTime)
                    recording.runs[last].microvolts.append(sample.microvolts)
                }
            } else {
                startRun(with: sample, marked: gapPending)
            }
            gapPending = false
        case .acceleration(let time, _, let x, let y, let z, _):
            recording.acceleration.append(ECGAccelerationSample(time: time, x: x, y: y, z: z))
        case .heartRate(let measurement):
            var measurement = measurement
            measurement.segment = segment
            recording.strapMeasurements.append(measurement)
        case .gap:
            segment += 1
            if !recording.runs.isEmpty { gapPending = true }
        }
        recording.summary.count(record)
        return nil
    }

    /// Starts a new run with `sample`; after a first run, records the gap before it.
    private mutating func startRun(with sample: ECGSessionSample, marked: Bool) {
        if let previous = recording.runs.last, let last = previous.deviceTimes.last, let first = previous.deviceTimes.first {
            let end = previous.startTime &+ Int64(clamping: (last &- first) / 1000)
            recording.gaps.append(ECGGap(start: end, end: sample.time, marked: marked))
        }
        var run = ECGRun(startTime: sample.time)
        run.deviceTimes.append(sample.deviceTime)
        run.microvolts.append(sample.microvolts)
        recording.runs.append(run)
    }
}

extension ECGSessionRecord {
    /// The host time the line gives.
    var time: Int64 {
        switch self {
        case .ecg(let sample): sample.time
        case .acceleration(let time, _, _, _, _, _): time
        case .heartRate(let measurement): measurement.time
        case .gap(let time, _): time
        }
    }

    /// The line's number in the file.
    var line: Int {
        switch self {
        case .ecg(let sample): sample.line
        case .acceleration(_, _, _, _, _, let line): line
        case .heartRate(let measurement): measurement.line
        case .gap(_, let line): line
        }
    }
}

extension ECGSessionSummary {
    /// Counts one record taken (its kind, its RR intervals, the times it spans).
    mutating func count(_ record: ECGSessionRecord) {
        switch record {
        case .ecg: ecgSampleCount += 1
        case .acceleration: accelerationCount += 1
        case .heartRate(let measurement):
            heartRateCount += 1
            strapRRIntervalCount += measurement.rrIntervals.count
        case .gap: gapLineCount += 1
        }
        let time = record.time
        firstTime = firstTime ?? time
        lastTime = max(lastTime ?? time, time)
    }
}

// MARK: - CSV

/// The ECG CSV file's columns, found by name in its header (any order, unknown ones ignored):
/// `time`, `device_time_ns` and `type` are needed.
struct ECGColumns: Sendable {
    var time: Int
    var deviceTime: Int
    var type: Int
    var microvolts: Int?
    var x: Int?
    var y: Int?
    var z: Int?
    var raw: Int?
    /// A file of several H10s: the strap's address and name.
    var strap: Int?
    var strapName: Int?
    var count: Int

    init?(header: ArraySlice<UInt8>) {
        var fields: [Range<Int>] = []
        CSVColumns.split(header, into: &fields)
        var time: Int?
        var deviceTime: Int?
        var type: Int?
        for (column, range) in fields.enumerated() {
            let name = CSVColumns.unquoted(header[range])
            if FieldText.equals(name, "time") { time = column }
            else if FieldText.equals(name, "device_time_ns") { deviceTime = column }
            else if FieldText.equals(name, "type") { type = column }
            else if FieldText.equals(name, "uV") { microvolts = column }
            else if FieldText.equals(name, "x_mG") { x = column }
            else if FieldText.equals(name, "y_mG") { y = column }
            else if FieldText.equals(name, "z_mG") { z = column }
            else if FieldText.equals(name, "raw") { raw = column }
            else if FieldText.equals(name, "strap") { strap = column }
            else if FieldText.equals(name, "strap_name") { strapName = column }
        }
        guard let time, let deviceTime, let type else { return nil }
        self.time = time
        self.deviceTime = deviceTime
        self.type = type
        count = fields.count
    }

    /// The line's fields, or `nil` when the line is the header again.
    func parse(_ line: ArraySlice<UInt8>, fields: inout [Range<Int>]) -> ECGLineFields? {
        CSVColumns.split(line, into: &fields)
        var result = ECGLineFields()
        guard fields.count >= count else {
            // `rawble hr`'s header: a file of the other kind appended to this one.
            let first = CSVColumns.unquoted(line[fields[0]])
            result.fail(FieldText.equals(first, "time") ? .otherFileKind : .missingFields(expected: count, found: fields.count))
            return result
        }
        func field(_ column: Int?) -> ArraySlice<UInt8>? {
            guard let column, column < fields.count else { return nil }
            let text = CSVColumns.unquoted(line[fields[column]])
            return text.isEmpty ? nil : text
        }
        let timeText = field(time)
        if let timeText, FieldText.equals(timeText, "time") {
            if ECGColumns(header: line) != nil { return nil }
            result.fail(.otherFileKind)
            return result
        }
        result.time = timeText.flatMap(FieldText.microseconds)
        result.type = field(type)
        result.strap = field(strap)
        result.strapName = field(strapName)
        if let text = field(deviceTime) {
            result.deviceTime = FieldText.uint64(text)
            if result.deviceTime == nil { result.fail(.badField("device_time_ns")) }
        }
        func integer(_ column: Int?, _ name: String) -> Int32? {
            guard let text = field(column) else { return nil }
            guard let value = FieldText.int32(text) else {
                result.fail(.badField(name))
                return nil
            }
            return value
        }
        result.microvolts = integer(microvolts, "uV")
        result.x = integer(x, "x_mG")
        result.y = integer(y, "y_mG")
        result.z = integer(z, "z_mG")
        if let text = field(raw) {
            result.raw = FieldText.hex(text)
            if result.raw == nil { result.fail(.badField("raw")) }
        }
        return result
    }
}
