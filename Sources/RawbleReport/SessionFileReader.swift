import RawbleWire

/// Reads a session file `rawble hr --csv` or `--jsonl` wrote, one line at a time, sans I/O: the
/// caller feeds lines (or chunks of bytes) from a file or stdin and gets typed samples; memory
/// stays bounded (one line, a few problems kept as examples, the gaps).
///
/// The format is detected from the first non-blank line (the CSV header, or a JSON object).
/// Broken lines, measurements older than the one before, `invalid` events are left out and
/// counted in ``summary`` (the first few kept with their line numbers); other JSON events
/// (`connected`, `disconnected`, …) are skipped silently. Two kept samples further apart than
/// ``gapThreshold``, or with a `disconnected` event between them, mark a ``SessionGap``.
///
/// Fields win over `raw`: the hex value is decoded (as `HeartRateMeasurement`) to fill fields
/// the line lacks (no `bpm`, no RR key, …), and for the RR intervals' exact values where the
/// line's are those rounded (the CSV writes whole milliseconds; a strap sends 1/1024 s, so
/// `527.3 ms` is `527` there): the figures `rawble report` gives are then the ones `rawble hr`
/// showed live, from the same intervals. An RR field that is not the raw value's, rounded
/// (an edited file), is taken as written.
public struct SessionFileReader: Sendable, SessionLineReader {
    /// Two samples further apart than this (µs) are a gap (the strap was out of reach or the link dropped).
    public let gapThreshold: Int64
    /// How many problem lines of each kind ``SessionFileSummary/problems`` keeps as examples.
    public var keptProblems: Int { lineState.keptProblems }
    /// How many gaps ``SessionFileSummary/gaps`` keeps (the rest are counted).
    public let keptGaps: Int
    /// A longer line is broken (its bytes are not kept while it streams in).
    public var maxLineLength: Int { lineState.maxLineLength }
    /// Everything read so far: counts, problems, gaps.
    public private(set) var summary = SessionFileSummary()

    var lineState: SessionLineState
    var failure: SessionFileError?
    var counts: SessionFileSummary {
        get { summary }
        set { summary = newValue }
    }
    private var columns: CSVColumns?
    private var lastTime: Int64?
    private var disconnectedSinceLast = false
    /// The straps a file of several names (`rawble hr A B`, `--all`), in the order they first
    /// appear, each with its own summary (times, counts, gaps) and order: a strap's line is
    /// compared with that strap's line before it, not another's. Empty for a file of one.
    public var straps: [SessionStrap] { roster.straps }
    private var roster = StrapRoster<SessionStrap>()
    /// The most straps one file is read for; lines of further straps are broken (``SessionLineProblem/tooManyStraps(limit:)``).
    public static var strapLimit: Int { StrapRoster<SessionStrap>.limit }
    /// CSV field boundaries, reused from line to line.
    private var fields: [Range<Int>] = []
    /// The strap name the line being accepted gave, if any.
    private var pendingName: String?

    /// - Parameters:
    ///   - gapThreshold: samples further apart than this mark a gap (default 5 s; `rawble hr`
    ///     writes about one measurement a second).
    ///   - keptProblems: example lines kept of each kind of problem.
    ///   - keptGaps: gaps kept (a file with more has its further gaps counted only).
    ///   - maxLineLength: the longest line read (a measurement line is ~150 bytes).
    public init(gapThreshold: Duration = .seconds(5), keptProblems: Int = 5, keptGaps: Int = 100_000,
                maxLineLength: Int = 64 * 1024) {
        let (seconds, attoseconds) = gapThreshold.components
        self.gapThreshold = seconds.multipliedReportingOverflow(by: 1_000_000).overflow
            ? .max : max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        self.keptGaps = max(0, keptGaps)
        lineState = SessionLineState(keptProblems: keptProblems, maxLineLength: maxLineLength)
    }

    // MARK: Reading

    /// Reads one line (without its newline; a trailing `\r` is ignored): the measurement it
    /// holds, or `nil` (blank, header, other event, or left out — see ``summary``).
    /// Throws when the first line shows the file is not a session file; every later call
    /// throws the same error.
    public mutating func read(line: ArraySlice<UInt8>) throws(SessionFileError) -> SessionSample? {
        guard case let (text, number)? = try content(of: line) else { return nil }
        let parsed: LineFields
        if let columns {
            guard let fromCSV = columns.parse(text, fields: &fields) else {
                summary.repeatedHeaderCount += 1
                return nil
            }
            parsed = fromCSV
        } else {
            switch JSONLine.parse(text) {
            case .broken(let offset):
                broken(.notJSON(offset: offset), line: number)
                return nil
            case .measurement(let fields):
                parsed = fields
            case .invalid:
                summary.invalidMeasurementCount += 1
                return nil
            case .other(let disconnected, let strap):
                summary.otherEventCount += 1
                if disconnected {
                    if let strap, let index = roster.index(of: String(decoding: strap, as: UTF8.self)) {
                        roster[index].disconnectedSinceLast = true
                    } else {
                        disconnectedSinceLast = true
                        for index in roster.indexRange { roster[index].disconnectedSinceLast = true }
                    }
                }
                return nil
            }
        }
        switch parsed.sample(line: number) {
        case .failure(let problem):
            broken(problem, line: number)
            return nil
        case .success(let sample):
            pendingName = parsed.strapName.flatMap(StrapRoster<SessionStrap>.name)
            return accept(sample)
        }
    }

    /// ``read(line:)`` for a `String`.
    public mutating func read(line: String) throws(SessionFileError) -> SessionSample? {
        try read(line: Array(line.utf8)[...])
    }

    /// Reads a chunk of the file as it arrives (any split: a line may span chunks), calling
    /// `each` for every measurement in the lines it completes. Call ``finish(each:)`` at the end.
    public mutating func read(chunk: some Collection<UInt8>, each: (SessionSample) -> Void) throws(SessionFileError) {
        try readLines(in: chunk, each: each)
    }

    /// Ends a read: the last line when it had no newline, then the verdict on the whole file.
    /// Throws ``SessionFileError/empty`` for a file with nothing but blank lines and
    /// ``SessionFileError/noMeasurements(_:)`` when no line was a measurement.
    public mutating func finish(each: (SessionSample) -> Void = { _ in }) throws(SessionFileError) -> SessionFileSummary {
        try finishLines(each: each)
        guard lineState.sawContent else { throw .empty }
        guard summary.sampleCount > 0 else { throw .noMeasurements(summary) }
        return summary
    }

    /// A whole file at once (the batch use of the same reader).
    public static func read(_ bytes: some Collection<UInt8>, gapThreshold: Duration = .seconds(5))
        throws(SessionFileError) -> (samples: [SessionSample], summary: SessionFileSummary) {
        var reader = SessionFileReader(gapThreshold: gapThreshold)
        var samples: [SessionSample] = []
        try reader.read(chunk: bytes) { samples.append($0) }
        let summary = try reader.finish { samples.append($0) }
        return (samples, summary)
    }

    // MARK: Internals

    mutating func readHeader(_ text: ArraySlice<UInt8>) -> Bool {
        columns = CSVColumns(header: text, fields: &fields)
        return columns != nil
    }

    static func unrecognizedFormat(firstLine: String) -> SessionFileError {
        .unrecognizedFormat(firstLine: firstLine)
    }

    private mutating func accept(_ sample: SessionSample) -> SessionSample? {
        if let strap = sample.strap { return accept(sample, of: strap) }
        if let lastTime {
            guard sample.time >= lastTime else {
                outOfOrder(.earlierThanPrevious(previous: lastTime), line: sample.line)
                return nil
            }
            let (distance, overflow) = sample.time.subtractingReportingOverflow(lastTime)
            if overflow || distance > gapThreshold || disconnectedSinceLast {
                if summary.gaps.count < keptGaps {
                    summary.gaps.append(SessionGap(start: lastTime, end: sample.time))
                } else {
                    summary.gapsNotKept += 1
                }
            }
        } else {
            summary.firstTime = sample.time
        }
        disconnectedSinceLast = false
        lastTime = sample.time
        summary.lastTime = sample.time
        summary.sampleCount += 1
        summary.rrIntervalCount += sample.rrIntervals.count
        return sample
    }

    /// A sample of one strap of several: ordered and gapped against that strap's samples.
    private mutating func accept(_ sample: SessionSample, of address: String) -> SessionSample? {
        guard let index = roster.index(of: address, adding: { SessionStrap(address: address, name: pendingName) }) else {
            broken(.tooManyStraps(limit: Self.strapLimit), line: sample.line)
            return nil
        }
        if roster[index].name == nil { roster[index].name = pendingName }
        if let last = roster[index].lastTime {
            guard sample.time >= last else {
                outOfOrder(.earlierThanPrevious(previous: last), line: sample.line)
                return nil
            }
            let (distance, overflow) = sample.time.subtractingReportingOverflow(last)
            if overflow || distance > gapThreshold || roster[index].disconnectedSinceLast {
                roster[index].addGap(SessionGap(start: last, end: sample.time), keeping: min(keptGaps, Self.keptGapsPerStrap))
            }
        } else {
            roster[index].summary.firstTime = sample.time
        }
        roster[index].disconnectedSinceLast = false
        roster[index].lastTime = sample.time
        roster[index].summary.lastTime = sample.time
        roster[index].summary.sampleCount += 1
        roster[index].summary.rrIntervalCount += sample.rrIntervals.count
        summary.firstTime = min(summary.firstTime ?? sample.time, sample.time)
        summary.lastTime = max(summary.lastTime ?? sample.time, sample.time)
        summary.sampleCount += 1
        summary.rrIntervalCount += sample.rrIntervals.count
        return sample
    }

    /// Gaps kept per strap of a file of several (the rest are counted).
    static let keptGapsPerStrap = 10_000
}

/// One strap of a file of several: its address, its name (from the first line that has one)
/// and what was read of it (``SessionFileSummary``'s times, counts and gaps; the file's problems
/// are the file's).
public struct SessionStrap: Hashable, Sendable {
    public var address: String
    public var name: String?
    public var summary = SessionFileSummary()
    var lastTime: Int64?
    var disconnectedSinceLast = false

    init(address: String, name: String?) {
        self.address = address
        self.name = name
    }

    /// The name, else the address.
    public var displayName: String { name ?? address }

    mutating func addGap(_ gap: SessionGap, keeping limit: Int) {
        if summary.gaps.count < limit { summary.gaps.append(gap) } else { summary.gapsNotKept += 1 }
    }
}

// MARK: - A line's fields

/// What one measurement line says, field by field (`nil`: the line lacks the field), before the
/// sample is assembled (fields first, `raw` for what is missing).
struct LineFields {
    var time: Int64?
    var timeSeen = false
    var bpm: UInt16?
    var contact: HeartRateMeasurement.SensorContact?
    /// `.some(nil)`: the line says there is no energy value; `nil`: it does not say.
    var energy: UInt16??
    var rrIntervals: [Double]?
    var raw: [UInt8]?
    /// The strap's address and name, in a file of several straps.
    var strap: ArraySlice<UInt8>?
    var strapName: ArraySlice<UInt8>?
    /// The first field that is there but bad.
    var problem: SessionLineProblem?

    mutating func fail(_ problem: SessionLineProblem) {
        if self.problem == nil { self.problem = problem }
    }

    func sample(line: Int) -> Result<SessionSample, SessionLineProblem> {
        if let problem { return .failure(problem) }
        guard let time else { return .failure(.badTime) }
        var bpm = bpm
        var contact = contact
        var energy = energy
        var rrIntervals = rrIntervals
        if let written = rrIntervals, !written.isEmpty, let raw,
           let exact = try? HeartRateMeasurement.decode(raw).rrIntervals.map(\.milliseconds),
           exact.count == written.count,
           zip(exact, written).allSatisfy({ abs($0.rounded() - $1) < 0.001 || abs($0 - $1) < 0.001 }) {
            rrIntervals = exact
        }
        if bpm == nil || contact == nil || energy == nil || rrIntervals == nil {
            if let raw {
                do {
                    let measurement = try HeartRateMeasurement.decode(raw)
                    bpm = bpm ?? measurement.bpm
                    contact = contact ?? measurement.contact
                    energy = energy ?? .some(measurement.energyExpended)
                    rrIntervals = rrIntervals ?? measurement.rrIntervals.map(\.milliseconds)
                } catch {
                    if bpm == nil { return .failure(.rawDoesNotDecode(error)) }
                }
            }
        }
        guard let bpm else { return .failure(.missingHeartRate) }
        return .success(SessionSample(time: time, bpm: bpm, contact: contact ?? .unsupported,
                                      energyExpended: energy ?? nil, rrIntervals: rrIntervals ?? [], line: line,
                                      strap: strap.flatMap { $0.isEmpty ? nil : String(decoding: $0, as: UTF8.self) }))
    }
}

// MARK: - CSV

/// The CSV file's columns, found by name in its header (any order; unknown columns ignored).
struct CSVColumns: Sendable {
    var time: Int
    var bpm: Int?
    var contact: Int?
    var energy: Int?
    var rrIntervals: Int?
    var raw: Int?
    var strap: Int?
    var strapName: Int?
    /// How many fields the header has.
    var count: Int

    init?(header: ArraySlice<UInt8>, fields: inout [Range<Int>]) {
        Self.split(header, into: &fields)
        var time: Int?
        for (column, range) in fields.enumerated() {
            let name = Self.unquoted(header[range])
            if FieldText.equals(name, "time") { time = column }
            else if FieldText.equals(name, "bpm") { bpm = column }
            else if FieldText.equals(name, "contact") { contact = column }
            else if FieldText.equals(name, "energy_expended_kj") { energy = column }
            else if FieldText.equals(name, "rr_intervals_ms") { rrIntervals = column }
            else if FieldText.equals(name, "raw") { raw = column }
            else if FieldText.equals(name, "strap") { strap = column }
            else if FieldText.equals(name, "strap_name") { strapName = column }
        }
        guard let time, bpm != nil || raw != nil else { return nil }
        self.time = time
        count = fields.count
    }

    /// The line's fields, or `nil` when the line is the header again.
    func parse(_ line: ArraySlice<UInt8>, fields: inout [Range<Int>]) -> LineFields? {
        Self.split(line, into: &fields)
        var result = LineFields()
        func field(_ column: Int?) -> ArraySlice<UInt8>? {
            guard let column, column < fields.count else { return nil }
            return Self.unquoted(line[fields[column]])
        }
        let needed = [time, bpm, contact, energy, rrIntervals, raw].compactMap { $0 }.max() ?? time
        guard needed < fields.count else {
            result.fail(.missingFields(expected: count, found: fields.count))
            return result
        }
        guard let timeText = field(time) else { return result }
        if FieldText.equals(timeText, "time") { return nil }
        result.time = FieldText.microseconds(timeText)
        if let text = field(bpm), !text.isEmpty {
            result.bpm = FieldText.uint16(text)
            if result.bpm == nil { result.fail(.badField("bpm")) }
        }
        if let text = field(contact) {
            result.contact = FieldText.contact(text)
            if result.contact == nil { result.fail(.badField("contact")) }
        }
        if let text = field(energy) {
            if text.isEmpty {
                result.energy = .some(nil)
            } else if let value = FieldText.uint16(text) {
                result.energy = value
            } else {
                result.fail(.badField("energy_expended_kj"))
            }
        }
        if let text = field(rrIntervals) {
            var values: [Double] = []
            for part in text.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: ";") }) {
                guard let value = FieldText.number(part), value >= 0 else {
                    result.fail(.badField("rr_intervals_ms"))
                    break
                }
                values.append(value)
            }
            result.rrIntervals = values
        }
        if let text = field(raw), !text.isEmpty {
            result.raw = FieldText.hex(text)
            if result.raw == nil { result.fail(.badField("raw")) }
        }
        result.strap = field(strap)
        result.strapName = field(strapName)
        return result
    }

    /// The ranges of the comma-separated fields of `line`.
    static func split(_ line: ArraySlice<UInt8>, into fields: inout [Range<Int>]) {
        fields.removeAll(keepingCapacity: true)
        var start = line.startIndex
        // A comma inside double quotes is the field's (a strap's name may hold one); a doubled
        // quote inside them toggles twice, so it stays inside.
        var quoted = false
        for index in line.indices {
            let byte = line[index]
            if byte == UInt8(ascii: "\"") {
                quoted.toggle()
            } else if byte == UInt8(ascii: ","), !quoted {
                fields.append(start..<index)
                start = index + 1
            }
        }
        fields.append(start..<line.endIndex)
    }

    /// A field without surrounding spaces and double quotes (a spreadsheet may add them).
    static func unquoted(_ field: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let text = FieldText.trimmed(field)
        if text.count >= 2, text.first == UInt8(ascii: "\""), text.last == UInt8(ascii: "\"") {
            return FieldText.trimmed(text.dropFirst().dropLast())
        }
        return text
    }
}
