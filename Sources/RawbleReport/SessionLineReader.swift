// What the two session readers (``SessionFileReader`` for `rawble hr`'s files,
// ``ECGSessionReader`` for `rawble ecg`'s) do alike, written once: lines joined from chunks and
// bounded in length, trimmed, the format told by the first line that is not blank, and the
// problem lines counted with the first few kept as examples. Each reader adds its format's
// parser and what it gathers.

/// The counts both session summaries keep (``SessionFileSummary``, ``ECGSessionSummary``).
protocol SessionLineCounts {
    var format: SessionFileFormat? { get set }
    var lineCount: Int { get set }
    var brokenLineCount: Int { get set }
    var outOfOrderCount: Int { get set }
    var repeatedHeaderCount: Int { get set }
    var problems: [SessionFileProblem] { get set }
}

extension SessionFileSummary: SessionLineCounts {}
extension ECGSessionSummary: SessionLineCounts {}

extension SessionLineCounts {
    /// The sentences for the broken lines and for those out of order (`noun` plural as needed,
    /// then `why`), each with the examples kept; empty when none was left out.
    func leftOutSentences(outOfOrder noun: String, _ why: String) -> [String] {
        var lines: [String] = []
        func examples(broken: Bool, total: Int) -> String {
            let kept = problems.filter { $0.problem.isBroken == broken }
            guard !kept.isEmpty else { return "" }
            return " (" + kept.map(\.description).joined(separator: "; ") + (kept.count < total ? "; …" : "") + ")"
        }
        if brokenLineCount > 0 {
            lines.append("\(plural(brokenLineCount, "broken line")) left out" + examples(broken: true, total: brokenLineCount))
        }
        if outOfOrderCount > 0 {
            lines.append("\(plural(outOfOrderCount, noun)) \(why) left out" + examples(broken: false, total: outOfOrderCount))
        }
        return lines
    }
}

/// What a session reader keeps of its lines: the bounds, whether content was seen, the line
/// being assembled and how many examples of each problem are kept so far.
struct SessionLineState: Sendable {
    /// How many problem lines of each kind are kept as examples.
    let keptProblems: Int
    /// A longer line is broken.
    let maxLineLength: Int
    /// Whether a line that is not blank was read (the first tells the format).
    var sawContent = false
    /// Lines split across chunks, joined.
    var lines: LineAssembler
    var brokenKept = 0
    var outOfOrderKept = 0

    init(keptProblems: Int, maxLineLength: Int) {
        self.keptProblems = max(0, keptProblems)
        self.maxLineLength = max(1, maxLineLength)
        lines = LineAssembler(limit: maxLineLength)
    }
}

/// A session reader: the line handling is shared, the format's parser and the gathering its own.
protocol SessionLineReader {
    associatedtype Record
    associatedtype Failure: Error
    associatedtype Counts: SessionLineCounts
    /// The summary's counts.
    var counts: Counts { get set }
    var lineState: SessionLineState { get set }
    /// The error that ended the read: every later call throws it again.
    var failure: Failure? { get set }
    /// Takes `text`, the first line that is neither blank nor JSON, as the CSV header: false
    /// when it is none (the file is no session of this kind).
    mutating func readHeader(_ text: ArraySlice<UInt8>) -> Bool
    /// The error for a first line that is neither the header nor JSON (`firstLine`: its start).
    static func unrecognizedFormat(firstLine: String) -> Failure
    /// Reads one line, without its newline: its record, or `nil`.
    mutating func read(line: ArraySlice<UInt8>) throws(Failure) -> Record?
}

extension SessionLineReader {
    /// The text of `line` for the format's parser (trimmed; a trailing `\r` and a byte-order
    /// mark before the first line dropped) with the line's number; `nil` when there is nothing
    /// to parse: a blank line, the CSV header, or a line too long (counted as broken). The first
    /// line that is not blank sets the format, or throws ``unrecognizedFormat(firstLine:)``.
    mutating func content(of line: ArraySlice<UInt8>) throws(Failure) -> (text: ArraySlice<UInt8>, number: Int)? {
        if let failure { throw failure }
        counts.lineCount += 1
        let number = counts.lineCount
        guard line.count <= lineState.maxLineLength else {
            broken(.tooLong(limit: lineState.maxLineLength), line: number)
            return nil
        }
        var text = FieldText.lineText(line)
        if !lineState.sawContent {
            if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }  // a UTF-8 byte-order mark
            guard !text.isEmpty else { return nil }
            lineState.sawContent = true
            if text.first == UInt8(ascii: "{") {
                counts.format = .jsonLines
            } else if readHeader(text) {
                counts.format = .csv
                return nil
            } else {
                let failure = Self.unrecognizedFormat(
                    firstLine: String(decoding: text.prefix(60), as: UTF8.self) + (text.count > 60 ? "…" : ""))
                self.failure = failure
                throw failure
            }
        }
        guard !text.isEmpty else { return nil }
        return (text, number)
    }

    /// Reads a chunk of the file (a line may span chunks), calling `each` with the record of
    /// every line it completes.
    mutating func readLines(in chunk: some Collection<UInt8>, each: (Record) -> Void) throws(Failure) {
        var assembler = lineState.lines
        defer { lineState.lines = assembler }
        try assembler.add(chunk) { (line) throws(Failure) in try complete(line, each: each) }
    }

    /// Reads the last line if it had no newline, then throws the error that ended the read, if any.
    mutating func finishLines(each: (Record) -> Void) throws(Failure) {
        var assembler = lineState.lines
        defer { lineState.lines = assembler }
        try assembler.finish { (line) throws(Failure) in try complete(line, each: each) }
        if let failure { throw failure }
    }

    /// Counts a broken line, keeping it as an example while fewer than ``SessionLineState/keptProblems`` are.
    mutating func broken(_ problem: SessionLineProblem, line: Int) {
        counts.brokenLineCount += 1
        if lineState.brokenKept < lineState.keptProblems {
            lineState.brokenKept += 1
            counts.problems.append(SessionFileProblem(line: line, problem: problem))
        }
    }

    /// Counts a line left out for coming out of order, keeping it as an example as ``broken(_:line:)`` does.
    mutating func outOfOrder(_ problem: SessionLineProblem, line: Int) {
        counts.outOfOrderCount += 1
        if lineState.outOfOrderKept < lineState.keptProblems {
            lineState.outOfOrderKept += 1
            counts.problems.append(SessionFileProblem(line: line, problem: problem))
        }
    }

    private mutating func complete(_ line: LineAssembler.Line, each: (Record) -> Void) throws(Failure) {
        switch line {
        case .tooLong:
            if let failure { throw failure }
            counts.lineCount += 1
            broken(.tooLong(limit: lineState.maxLineLength), line: counts.lineCount)
        case .bytes(let bytes):
            if let record = try read(line: bytes) { each(record) }
        }
    }
}
