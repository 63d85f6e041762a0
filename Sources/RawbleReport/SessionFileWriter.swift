import RawbleWire

/// Writes a heart-rate session file, sans I/O: the CSV or JSON lines `rawble hr --csv` and
/// `--jsonl` append (and `--json` prints), which ``SessionFileReader`` reads back. The caller
/// appends each line to its file (or stdout); the writer only makes the bytes, so a program
/// that logs a strap keeps files `rawble report` reads, with no copy of the format.
///
/// - CSV: ``header`` once at the top of a new file, then one line per measurement:
///   `time,bpm,contact,energy_expended_kj,rr_intervals_ms,raw` (time in ISO 8601 UTC with
///   microseconds, RR intervals as integer milliseconds separated by spaces, the value in hex).
/// - JSON lines: no header; one `measurement` event a line, `{"event":"measurement","time":…,
///   "bpm":…,"contact":…,"energyExpended":…,"rrIntervals":[seconds…],"raw":hex}`, written in
///   place into the caller's reused buffer (no `String` per field; the calendar computed once
///   per second), the hot path of `hr --json`.
///
/// ```swift
/// var writer = SessionFileWriter(format: .csv)
/// var bytes = Array((writer.header ?? "").utf8)
/// writer.append(measurement, raw: value, time: unixMicroseconds, to: &bytes)
/// ```
///
/// A file of several straps (``labelled``) names the strap on every line: CSV has two more
/// columns after `time`, `strap` (its address) and `strap_name`; a JSON line has `"address"`
/// and `"name"` after `"time"`, as every other event of `hr --json` has them then.
public struct SessionFileWriter: Sendable {
    /// The file's format.
    public let format: SessionFileFormat
    /// Whether each line names its strap (a file of several straps).
    public let labelled: Bool
    /// The date to the second of the last line, reused by the next (JSON lines).
    private var timestamps = TimestampCache()

    /// A writer of `format` lines; `labelled`: lines name their strap (``append(_:raw:time:strap:to:)``).
    public init(format: SessionFileFormat, labelled: Bool = false) {
        self.format = format
        self.labelled = labelled
    }

    /// The CSV header line, newline included; `nil` for JSON lines, which have none. Write it
    /// only when the file is new (empty): appending to a session keeps one header.
    public var header: String? {
        format.header(csv: labelled ? "time,strap,strap_name,bpm,contact,energy_expended_kj,rr_intervals_ms,raw"
                                    : "time,bpm,contact,energy_expended_kj,rr_intervals_ms,raw")
    }

    /// Appends the line for `measurement` (and its newline) to `bytes`.
    /// - Parameters:
    ///   - measurement: the decoded value.
    ///   - raw: the characteristic value it was decoded from (kept in hex: a reader can decode
    ///     it again, fields the line lacks included).
    ///   - unixMicroseconds: when it arrived, microseconds since 1970 (UTC).
    ///   - bytes: the buffer the line is appended to; reuse it from line to line.
    ///   - strap: the strap it came from; written only by a ``labelled`` writer, which writes
    ///     empty fields for `nil`.
    public mutating func append(_ measurement: HeartRateMeasurement, raw: [UInt8], time unixMicroseconds: Int64,
                                strap: StrapLabel? = nil, to bytes: inout [UInt8]) {
        let label = labelled ? strap ?? StrapLabel.unnamed : nil
        switch format {
        case .csv: Self.appendCSVLine(measurement, raw: raw, time: unixMicroseconds, strap: label, to: &bytes)
        case .jsonLines: appendJSONLine(measurement, raw: raw, time: unixMicroseconds, strap: label, to: &bytes)
        }
    }

    /// The line for `measurement`, newline included, as ``append(_:raw:time:strap:to:)`` writes it.
    public mutating func line(for measurement: HeartRateMeasurement, raw: [UInt8], time unixMicroseconds: Int64,
                              strap: StrapLabel? = nil) -> String {
        var bytes: [UInt8] = []
        append(measurement, raw: raw, time: unixMicroseconds, strap: strap, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func appendCSVLine(_ measurement: HeartRateMeasurement, raw: [UInt8], time unixMicroseconds: Int64,
                                      strap: StrapLabel?, to bytes: inout [UInt8]) {
        bytes += iso8601(unixMicroseconds: unixMicroseconds).utf8
        bytes.append(UInt8(ascii: ","))
        if let strap { bytes += strap.csvFields }
        let fields = [
            String(measurement.bpm), measurement.contact.name,
            measurement.energyExpended.map(String.init) ?? "",
            measurement.rrIntervals.map { String(Int($0.milliseconds.rounded())) }.joined(separator: " "),
            Hex.encode(raw),
        ]
        bytes += fields.joined(separator: ",").utf8
        bytes.append(UInt8(ascii: "\n"))
    }

    private mutating func appendJSONLine(_ measurement: HeartRateMeasurement, raw: [UInt8], time unixMicroseconds: Int64,
                                         strap: StrapLabel?, to bytes: inout [UInt8]) {
        var contact = measurement.contact.name
        let rrIntervals = measurement.rrIntervals
        // Fixed text and numbers fit in 160 bytes; an RR interval takes at most 16 ("65.9990234375,").
        let bound = 160 + contact.utf8.count + rrIntervals.count * 16 + raw.count * 2 + (strap?.jsonFields.count ?? 0)
        LineWriter.append(to: &bytes, bound: bound) { line in
            line.write(#"{"event":"measurement","time":""#)
            timestamps.write(unixMicroseconds: unixMicroseconds, to: &line)
            line.write(#"","#)
            if let strap { line.write(contentsOf: strap.jsonFields) }
            line.write(#""bpm":"#)
            line.writeDecimal(Int64(measurement.bpm))
            line.write(#","contact":""#)
            contact.withUTF8 { line.write(contentsOf: $0) }
            line.write(#"","energyExpended":"#)
            if let energyExpended = measurement.energyExpended {
                line.writeDecimal(Int64(energyExpended))
            } else {
                line.write("null")
            }
            line.write(#","rrIntervals":["#)
            for (index, interval) in rrIntervals.enumerated() {
                if index > 0 { line.write(UInt8(ascii: ",")) }
                line.writeSeconds(units: interval.rawValue)
            }
            line.write(#"],"raw":""#)
            line.writeHex(raw)
            line.write("\"}\n")
        }
    }
}
