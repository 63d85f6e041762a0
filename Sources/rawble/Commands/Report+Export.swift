import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import RawbleAnalysis
import RawbleReport

/// What `report --export` writes: RR intervals as text (``RRTextFormat``) or, from an ECG
/// session, EDF+ (``ECGEDFExport``).
enum ExportFormat: String, ExpressibleByArgument, CaseIterable {
    case rr, kubios, ibi, edf

    /// The format a file name's extension names: `.txt` and `.rr` RR text, `.ibi` HRVAS',
    /// `.edf` EDF+; `nil` for any other.
    init?(path: String) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        switch name[name.index(after: dot)...].lowercased() {
        case "txt", "rr": self = .rr
        case "ibi": self = .ibi
        case "edf": self = .edf
        default: return nil
        }
    }

    /// How the report's line names it.
    var title: String {
        switch self {
        case .rr: "RR text, ms a line"
        case .kubios: "Kubios RR text, ms a line"
        case .ibi: "HRVAS .ibi, time and IBI in s"
        case .edf: "EDF+"
        }
    }
}

/// Which RR intervals `report --export` writes.
enum RRChoice: String, ExpressibleByArgument, CaseIterable {
    /// After artifact correction: the series the report's HRV is computed from.
    case corrected
    /// As recorded: every interval the strap sent (an ECG session: found between R-peaks).
    case raw
}

/// One file `report --export` wrote: the report's line for it and its JSON object.
struct ExportResult {
    var line: String
    var json: JSON
}

extension Report {
    /// The export's format: `--export-format`, else the file's extension (validated).
    var chosenExportFormat: ExportFormat? {
        exportFormat ?? export.flatMap { ExportFormat(path: $0) }
    }

    /// The usage line for an export's file whose extension names no format.
    func validateExport() throws {
        guard let export else {
            if exportFormat != nil { throw ValidationError("--export-format goes with --export FILE") }
            return
        }
        guard !export.isEmpty else { throw ValidationError("--export needs a file name") }
        if chosenExportFormat == nil {
            throw ValidationError("--export \(export): the extension names no format; use .txt (RR in ms), .ibi (HRVAS) or .edf (EDF+, ECG sessions), or --export-format rr|kubios|ibi|edf")
        }
    }

    /// A file of `count` straps: an export needs one strap chosen, or a file each.
    func checkExportForStraps(_ count: Int) throws {
        guard let export, count > 1, !GroupFiles.isTemplate(export) else { return }
        throw CLIError(.usage, "\(file) holds \(count) straps; one export file cannot hold them",
                       fix: "choose one with --strap ADDRESS, or write a file each with {name} or {address} in the name (--export 'rr-{name}.txt')")
    }

    /// The path of strap `label`'s export (the template filled in), or the export itself; a
    /// template for a file that names no strap is an error.
    func exportPath(for label: StrapLabel?) throws -> String? {
        guard let export else { return nil }
        guard GroupFiles.isTemplate(export) else { return export }
        guard let label else {
            throw CLIError(.usage, "\(inputName) names no strap to put in --export \(export)",
                           fix: "name the export file without {name} or {address}")
        }
        return GroupFiles.path(export, for: label)
    }

    /// Exports a heart-rate session's RR intervals (EDF+ has no ECG to hold: an error).
    func exportHeartRate(_ analysis: SessionAnalysis, samples: [SessionSample], label: StrapLabel?) throws -> ExportResult? {
        guard let path = try exportPath(for: label), let format = chosenExportFormat else { return nil }
        let who = label.map { " (\($0))" } ?? ""
        guard let textFormat = RRTextFormat(rawValue: format.rawValue) else {
            throw CLIError(.nothingToExport, "\(inputName)\(who) is a heart-rate session: it holds no ECG for EDF+",
                           fix: "record ECG with `rawble ecg --csv FILE` to export EDF+, or export the RR intervals (--export rr.txt)")
        }
        var runs: [RRRun] = []
        switch rr {
        case .corrected:
            for beat in analysis.beats {
                if !beat.continuesPrevious || runs.isEmpty { runs.append(RRRun(time: beat.time, intervals: [])) }
                runs[runs.count - 1].intervals.append(beat.interval)
            }
        case .raw:
            // Every interval as the strap sent it, in file order; a pause as the report's gap
            // (more than 5 s between measurements) starts a new run for the time column.
            var last: Double?
            for sample in samples where !sample.rrIntervals.isEmpty {
                if runs.isEmpty || last.map({ sample.seconds - $0 > 5 || sample.seconds < $0 }) ?? true {
                    runs.append(RRRun(time: sample.seconds, intervals: []))
                }
                runs[runs.count - 1].intervals += sample.rrIntervals
                last = sample.seconds
            }
        }
        return try writeRR(runs, format: textFormat, to: path, origin: samples.first?.seconds ?? 0, label: label,
                           source: "the strap's RR intervals", empty: "\(inputName)\(who) holds no RR intervals\(rr == .corrected ? " to correct" : "")")
    }

    /// Exports an ECG session: EDF+ (the ECG, acceleration, R-peaks and gaps) or the RR
    /// intervals between the R-peaks found.
    func exportECG(_ analysis: ECGReportAnalysis, session: ECGRecording, label: StrapLabel?) throws -> ExportResult? {
        guard let path = try exportPath(for: label), let format = chosenExportFormat else { return nil }
        let who = label.map { " (\($0))" } ?? ""
        guard let textFormat = RRTextFormat(rawValue: format.rawValue) else {
            let start = session.runs.first.map { $0.startTime / 1_000_000 } ?? 0
            guard let edf = ECGEDFExport(session: session, peaks: analysis.peaks, utcOffset: Self.utcOffset(at: start),
                                         equipment: label?.name ?? "Polar H10") else {
                throw CLIError(.nothingToExport, "\(inputName)\(who) holds no ECG sample for EDF+",
                               fix: "record ECG with `rawble ecg --csv FILE`")
            }
            try write(edf.bytes, to: path, what: "the EDF+ file")
            let signals = edf.hasAcceleration ? "ECG 130 Hz µV, acceleration X/Y/Z 200 Hz mG" : "ECG 130 Hz µV"
            var line = "export: \(path) (EDF+: \(signals); \(edf.recordCount) s; "
                + "\(edf.peakCount) R-peak and \(edf.gapCount) gap annotations"
            if edf.clippedCount > 0 { line += "; \(edf.clippedCount) samples beyond ±\(ECGEDFExport.range) clipped" }
            return ExportResult(line: line + ")", json: .object([
                ("file", .string(path)), ("format", "edf"),
                ("records", JSON(edf.recordCount)), ("acceleration", .bool(edf.hasAcceleration)),
                ("rPeaks", JSON(edf.peakCount)), ("gaps", JSON(edf.gapCount)), ("clipped", JSON(edf.clippedCount)),
            ]))
        }
        var runs: [RRRun] = []
        switch rr {
        case .corrected:
            for piece in analysis.ecg.corrected where piece.first < analysis.beats.count {
                runs.append(RRRun(time: analysis.beats[piece.first].time, intervals: piece.intervals))
            }
        case .raw:
            var lastRun: Int?
            for beat in analysis.beats {
                if beat.run != lastRun { runs.append(RRRun(time: beat.time, intervals: [])) }
                runs[runs.count - 1].intervals.append(beat.rrMs)
                lastRun = beat.run
            }
        }
        let origin = session.runs.first.map { Double($0.startTime) / 1e6 } ?? 0
        return try writeRR(runs, format: textFormat, to: path, origin: origin, label: label,
                           source: "RR intervals between the R-peaks found in the ECG",
                           empty: "\(inputName)\(who): no RR interval found in its ECG (fewer than two R-peaks in every run)")
    }

    private func writeRR(_ runs: [RRRun], format: RRTextFormat, to path: String, origin: Double, label: StrapLabel?,
                         source: String, empty: String) throws -> ExportResult {
        let count = runs.reduce(0) { $0 + $1.intervals.count }
        guard count > 0 else {
            throw CLIError(.nothingToExport, empty, fix: "record a session whose strap sends RR intervals, or check the file is the one meant")
        }
        let kind = rr == .corrected ? "corrected (Lipponen & Tarvainen)" : "raw (as recorded)"
        let comments = [
            "rawble report --export: \(source), \(kind), ms",
            "File: \(inputName)",
            "Device: \(label?.name ?? "X")",
            "DeviceID / MAC: \(label?.address ?? "X")",
        ]
        try write(RRTextExport.file(runs, format: format, origin: origin, comments: comments), to: path, what: "the RR file")
        let title = ExportFormat(rawValue: format.rawValue)?.title ?? format.rawValue
        return ExportResult(
            line: "export: \(path) (\(title): \(count) RR intervals, \(kind)\(runs.count > 1 ? ", \(runs.count) runs" : ""))",
            json: .object([("file", .string(path)), ("format", .string(format.rawValue)), ("rr", .string(rr.rawValue)),
                           ("intervals", JSON(count)), ("runs", JSON(runs.count))]))
    }

    /// The local time's offset from UTC at `unixSeconds` (its daylight saving time then, not
    /// now), by the C library's `localtime_r`, which follows `TZ` and `/etc/localtime`.
    static func utcOffset(at unixSeconds: Int64) -> Int {
        var time = time_t(unixSeconds)
        var parts = tm()
        tzset()
        guard localtime_r(&time, &parts) != nil else { return 0 }
        return Int(parts.tm_gmtoff)
    }

    /// The file's name as the report's lines give it.
    var inputName: String { file == "-" ? "standard input" : file }

    /// `lines` and `object` with the export's line and field added.
    static func adding(_ export: ExportResult?, to lines: [String], _ object: JSON) -> ([String], JSON) {
        guard let export else { return (lines, object) }
        guard case .object(let fields) = object else { return (lines + [export.line], object) }
        return (lines + [export.line], .object(fields + [("export", export.json)]))
    }
}
