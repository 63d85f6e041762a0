import ArgumentParser
import FoundationEssentials
import RawbleAnalysis
import RawbleReport
import RawbleTransport
import RawbleWire
import SystemPackage

/// `rawble report FILE`: a session that `rawble hr` wrote (`--csv`, `--jsonl`, or `--json`'s
/// stdout), summarized: heart rate, time in zones, HRV over the session and per segment after
/// RR artifact correction, gaps; `--plot` draws it as an SVG. An ECG session (`rawble ecg
/// --csv`/`--jsonl`) is told by its first line: R-peaks found in its ECG, HRV from their RR
/// intervals beside the strap's own.
struct Report: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Summarize a session that `rawble hr` or `rawble ecg` wrote: heart rate, zones, HRV, artifacts, gaps.",
        discussion: """
            FILE is what `rawble hr --csv FILE`, `--jsonl FILE` or `--json > FILE` wrote (- reads \
            standard input). RR intervals are corrected for artifacts (missed, extra and ectopic \
            beats; Lipponen & Tarvainen 2019) before any HRV figure. Two measurements more than \
            5 s apart are a gap (a disconnection): no zone time, no HRV across it.

            An ECG session (`rawble ecg --csv FILE` or `--jsonl FILE`, told by its first line) \
            is reported differently: R-peaks are found in each run of ECG (NeuroKit2's method; \
            a gap line ends a run), RR intervals come from the device times of the peak \
            samples, and their HRV (RMSSD, SDNN, pNN50, mean HR, after the same artifact \
            correction) is set beside the same figures from the strap's own RR intervals (its \
            hr lines), with the difference. --plot draws a 10-s ECG strip with the R-peaks \
            marked (from --strip-start seconds into the ECG) and both RR tachograms.

            --export OUT writes the session for another tool, its format from OUT's extension \
            or --export-format: RR intervals as text (.txt: one in ms a line, for NeuroKit2 \
            and most tools; kubios: the same after # comment lines, for Kubios HRV; .ibi: \
            HRVAS' time and IBI columns in s), corrected for artifacts (the series the HRV \
            figures come from) or --rr raw (as recorded); from an ECG session, the RR between \
            the R-peaks found, or EDF+ (.edf: the ECG at 130 Hz in µV and the acceleration at \
            200 Hz in mG, the start time, R-peak and gap annotations; EDFbrowser, MNE, \
            pyedflib). A file of several straps exports one chosen with --strap, or a file \
            each with {name} or {address} in OUT. A session without what the format needs \
            (no RR, no ECG) exits 86.

            Examples:
              rawble report session.csv --max-hr 185
              rawble report session.csv --export rr.txt --rr raw
              rawble report ecg.csv --export ecg.edf
              rawble report team.csv --export 'rr-{name}.txt'
              rawble report ecg.csv --plot ecg.svg
              rawble report session.csv --plot session.svg --title "Tuesday intervals"
              rawble hr --json --count 600 | rawble report - --json
            """)

    @Argument(help: ArgumentHelp("The session file (CSV or JSON lines from `rawble hr` or `rawble ecg`), or - for standard input.",
                                 valueName: "file"))
    var file: String
    @Option(help: ArgumentHelp("Also draw the session as an SVG: heart rate by zone, the RR tachogram, a Poincaré plot (ECG: a strip with R-peaks, both tachograms).",
                               valueName: "file.svg"))
    var plot: String?
    @Option(help: ArgumentHelp("The plot's title (default: the file's name).", valueName: "text"))
    var title: String?
    @Option(help: ArgumentHelp("Length of the HRV segments, in seconds.", valueName: "seconds"))
    var segment: Double = 300
    @Option(help: ArgumentHelp("ECG sessions: where the plot's 10-s ECG strip starts, in seconds from the first ECG sample.",
                               valueName: "seconds"))
    var stripStart: Double = 0
    @Option(help: ArgumentHelp("Also write the session for another tool: RR text (.txt, .ibi) or EDF+ (.edf, ECG sessions); {name} or {address} in it: a file per strap.",
                               valueName: "file"))
    var export: String?
    @Option(help: ArgumentHelp("The export's format, when its file's extension does not name it.", valueName: "format"))
    var exportFormat: ExportFormat?
    @Option(help: ArgumentHelp("The RR intervals exported: corrected for artifacts (the series of the HRV figures) or raw (as recorded).",
                               valueName: "which"))
    var rr: RRChoice = .corrected
    @Option(help: ArgumentHelp("A file of several straps: report (and export) only this one, by address or name.", valueName: "strap"))
    var strap: String?
    @OptionGroup var zones: ZoneOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard segment >= 10, segment <= 86_400 else { throw ValidationError("--segment must be between 10 and 86400 seconds") }
        if let plot, plot.isEmpty { throw ValidationError("--plot needs a file name") }
        guard stripStart >= 0, stripStart <= 1e7 else { throw ValidationError("--strip-start must be between 0 and 10000000 seconds") }
        try validateExport()
    }

    func run() async throws {
        switch try chosen(readSession()) {
        case .heartRate(let samples, let summary, let straps) where straps.count > 1:
            try checkExportForStraps(straps.count)
            try reportEach(straps, samples: samples, file: summary)
        case .heartRate(let samples, let summary, let straps):
            let analysis = analyse(samples)
            if let plot { try write(document(analysis, samples: samples, summary: summary), to: plot) }
            let export = try exportHeartRate(analysis, samples: samples,
                                             label: straps.first.map { StrapLabel(address: $0.address, name: $0.name) })
            let (lines, object) = Self.adding(export, to: ReportText.lines(analysis, summary: summary, zones: zones, file: file, plot: plot),
                                              ReportJSON.object(analysis, summary: summary, zones: zones, plot: plot))
            if output.json { Output.json(object) } else { for line in lines { Output.line(line) } }
        case .ecg(let session) where session.straps.count > 1:
            try checkExportForStraps(session.straps.count)
            try reportEachECG(session)
        case .ecg(let whole):
            // A file of one H10 that names it (`ecg --all` found one): its own recording.
            let session = whole.straps.first.map { strap in
                var own = strap.recording
                own.summary = whole.summary
                return own
            } ?? whole
            let analysis = ECGReportAnalysis(session: session)
            if let plot { try write(ecgPlot(analysis, session: session), to: plot) }
            let export = try exportECG(analysis, session: session,
                                       label: whole.straps.first.map { StrapLabel(address: $0.address, name: $0.name) })
            let (lines, object) = Self.adding(export, to: ECGReportText.lines(analysis, session: session, file: file, plot: plot),
                                              ECGReportJSON.object(analysis, session: session, plot: plot))
            if output.json { Output.json(object) } else { for line in lines { Output.line(line) } }
        }
    }

    /// The session, or with `--strap` the one strap of a file of several named by its address
    /// or name (an error naming the straps there when none is).
    private func chosen(_ session: Session) throws -> Session {
        guard let wanted = strap else { return session }
        func matches(_ address: String, _ name: String?) -> Bool {
            address.lowercased() == wanted.lowercased() || name == wanted
        }
        let present: [(address: String, name: String?)]
        switch session {
        case .heartRate(let samples, _, let straps):
            if let index = straps.firstIndex(where: { matches($0.address, $0.name) }) {
                let strap = straps[index]
                return .heartRate(samples.filter { $0.strap == strap.address }, strap.summary, [strap])
            }
            present = straps.map { ($0.address, $0.name) }
        case .ecg(let whole):
            if let strap = whole.straps.first(where: { matches($0.address, $0.name) }) {
                var one = whole
                one.straps = [strap]
                return .ecg(one)
            }
            present = whole.straps.map { ($0.address, $0.name) }
        }
        guard !present.isEmpty else {
            throw CLIError(.usage, "--strap \(wanted): \(inputName) names no strap (it was recorded from one)", fix: "leave out --strap")
        }
        throw CLIError(.usage, "--strap \(wanted): no such strap in \(inputName)",
                       fix: "name one of " + present.map { strap in strap.name.map { "\(strap.address) (\($0))" } ?? strap.address }
                            .joined(separator: ", "))
    }

    /// What the file held: a heart-rate session (with its straps when it names several) or an ECG one.
    private enum Session {
        case heartRate([SessionSample], SessionFileSummary, [SessionStrap])
        case ecg(ECGRecording)
    }

    private func analyse(_ samples: [SessionSample]) -> SessionAnalysis {
        SessionAnalysis(
            measurements: samples.lazy.map { HeartRateSample(time: $0.seconds, heartRate: Double($0.bpm), rrIntervals: $0.rrIntervals) },
            configuration: SessionAnalysis.Configuration(zones: zones.zones, segmentDuration: segment))
    }

    /// A file of several straps (`rawble hr A B`, `--all`): each strap reported as a file of its
    /// own would be, under its name; the file's left-out lines once at the end; `--plot` one
    /// SVG with a panel per strap, one below the other.
    private func reportEach(_ straps: [SessionStrap], samples: [SessionSample], file summary: SessionFileSummary) throws {
        var byStrap: [String: [SessionSample]] = [:]
        for sample in samples { byStrap[sample.strap ?? "", default: []].append(sample) }
        try reportEach(straps.map { ($0.address, $0.name) }, format: summary.format, leftOut: summary.leftOut, leftOutCounts: [
            ("brokenLines", JSON(summary.brokenLineCount)),
            ("outOfOrder", JSON(summary.outOfOrderCount)),
            ("invalidMeasurements", JSON(summary.invalidMeasurementCount)),
        ]) { index in
            let strap = straps[index]
            let own = byStrap[strap.address] ?? []
            let analysis = analyse(own)
            let export = try exportHeartRate(analysis, samples: own, label: StrapLabel(address: strap.address, name: strap.name))
            let (lines, object) = Self.adding(export, to: ReportText.lines(analysis, summary: strap.summary, zones: zones, file: file, plot: nil),
                                              ReportJSON.object(analysis, summary: strap.summary, zones: zones, plot: nil))
            return (lines, object, plot == nil ? nil : document(analysis, samples: own, summary: strap.summary, name: strap.displayName))
        }
    }

    /// An ECG file of several H10s (`rawble ecg A B`, `--all`): each reported as a file of its own.
    private func reportEachECG(_ session: ECGRecording) throws {
        let summary = session.summary
        try reportEach(session.straps.map { ($0.address, $0.name) }, format: summary.format, leftOut: summary.leftOut, leftOutCounts: [
            ("brokenLines", JSON(summary.brokenLineCount)),
            ("outOfOrder", JSON(summary.outOfOrderCount)),
        ]) { index in
            let strap = session.straps[index]
            let analysis = ECGReportAnalysis(session: strap.recording)
            let export = try exportECG(analysis, session: strap.recording, label: StrapLabel(address: strap.address, name: strap.name))
            let (lines, object) = Self.adding(export, to: ECGReportText.lines(analysis, session: strap.recording, file: file, plot: nil),
                                              ECGReportJSON.object(analysis, session: strap.recording, plot: nil))
            return (lines, object, plot == nil ? nil : ecgPlot(analysis, session: strap.recording, name: strap.name ?? strap.address))
        }
    }

    /// A file of several straps: each strap's lines under its name (its JSON object with its
    /// address and name), the file's left-out lines once at the end; `--plot` one SVG with a
    /// panel per strap, one below the other. `report` gives strap `index`'s text lines, JSON
    /// object and plot (when asked for).
    private func reportEach(_ straps: [(address: String, name: String?)], format: SessionFileFormat?, leftOut: [String],
                            leftOutCounts: [(String, JSON)],
                            report: (Int) throws -> (text: [String], object: JSON, panel: String?)) throws {
        var text: [String] = []
        var objects: [JSON] = []
        var panels: [String] = []
        for (index, strap) in straps.enumerated() {
            let (lines, object, panel) = try report(index)
            if let panel { panels.append(panel) }
            if output.json {
                guard case .object(let fields) = object else { continue }
                objects.append(.object([("address", .string(strap.address)), ("name", JSON(strap.name))]
                                       + fields.filter { $0.0 != "leftOut" && $0.0 != "format" }))
            } else {
                text.append("strap \(strap.name ?? strap.address)" + (strap.name == nil ? "" : " (\(strap.address))"))
                text += lines.map { "  " + $0 }
            }
        }
        if let plot { try write(SVGStack.stacked(panels), to: plot) }
        if output.json {
            Output.json(.object([
                ("format", .string(format == .csv ? "csv" : "jsonl")),
                ("straps", .array(objects)),
                ("leftOut", .object(leftOutCounts + [("messages", .array(leftOut.map { .string($0) }))])),
            ] + (plot.map { [("plot", JSON.string($0))] } ?? [])))
        } else {
            text.insert("\(file == "-" ? "standard input" : file): \(straps.count) straps", at: 0)
            if !leftOut.isEmpty { text.append("left out: " + leftOut.joined(separator: "; ")) }
            if let plot { text.append("plot: \(plot)") }
            for line in text { Output.line(line) }
        }
    }

    /// Reads the file (or stdin) in chunks; its first line says which reader reads it.
    private func readSession() throws -> Session {
        let input = InputFile(path: file)
        let name = input.name
        let descriptor = try input.open(missingFix: "name the file `rawble hr` or `rawble ecg` wrote (--csv or --jsonl)")
        defer { input.close(descriptor) }
        var kind: SessionFileKind?
        var head: [UInt8] = []
        var reader = SessionFileReader()
        var samples: [SessionSample] = []
        var ecgReader = ECGSessionReader()
        func feed(_ chunk: ArraySlice<UInt8>) throws {
            switch kind {
            case .ecg?: try ecgReader.read(chunk: chunk)
            default: try reader.read(chunk: chunk) { samples.append($0) }
            }
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        do {
            while true {
                let count: Int
                do {
                    count = try buffer.withUnsafeMutableBytes { try descriptor.read(into: $0, retryOnInterrupt: true) }
                } catch let error as Errno where error == .isDirectory {
                    throw CLIError(.cannotOpen, "\(name) is a directory", fix: "name the file `rawble hr` or `rawble ecg` wrote (--csv or --jsonl)")
                } catch {
                    throw CLIError(.cannotOpen, "cannot read \(name): \(error)")
                }
                if count == 0 { break }
                if kind == nil {
                    // The kind from the first whole line (a pipe may deliver less at a time).
                    head += buffer[..<count]
                    let firstLine = head.firstIndex { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: " ") }
                        .flatMap { start in head[start...].firstIndex(of: UInt8(ascii: "\n")) }
                    guard firstLine != nil || head.count >= 1 << 16 else { continue }
                    kind = SessionFileKind.detect(head)
                    try feed(head[...])
                    head = []
                } else {
                    try feed(buffer[..<count])
                }
            }
            if kind == nil {
                kind = SessionFileKind.detect(head)
                try feed(head[...])
            }
            if kind == .ecg { return .ecg(try ecgReader.finish()) }
            let summary = try reader.finish { samples.append($0) }
            return .heartRate(samples, summary, reader.straps)
        } catch let error as SessionFileError {
            throw CLIError(.malformedInput, "\(name): \(ReportText.describe(error))",
                           fix: "give a file that `rawble hr --csv`, `--jsonl` or `--json` (or `rawble ecg --csv` or `--jsonl`) wrote")
        } catch let error as ECGSessionError {
            throw CLIError(.malformedInput, "\(name): \(error)", fix: "give a file that `rawble ecg --csv` or `--jsonl` wrote")
        }
    }

    /// The ECG plot: a strip of the first run's first 10 s with its R-peaks, the two tachograms.
    private func ecgPlot(_ analysis: ECGReportAnalysis, session: ECGRecording, name: String? = nil) -> String {
        var strip: [ECGPlotSample] = []
        var peaks: [ECGPlotSample] = []
        // The run that holds --strip-start (or the first that starts after it), 10 s from there.
        if let origin = session.runs.first.map({ $0.seconds(at: 0) }) {
            let target = origin + stripStart
            let runIndex = session.runs.firstIndex { $0.seconds(at: $0.deviceTimes.count - 1) >= target }
            if let runIndex {
                let run = session.runs[runIndex]
                let first = run.deviceTimes.indices.first { run.seconds(at: $0) >= target } ?? 0
                let end = run.deviceTimes[first] &+ 10_000_000_000
                var last = first
                while last < run.deviceTimes.count, run.deviceTimes[last] <= end {
                    strip.append(ECGPlotSample(time: run.seconds(at: last), microvolts: Double(run.microvolts[last])))
                    last += 1
                }
                for index in (analysis.peaks.indices.contains(runIndex) ? analysis.peaks[runIndex] : []) where index >= first && index < last {
                    peaks.append(strip[index - first])
                }
            }
        }
        let gaps = session.gaps.map { PlotGap(start: Double($0.start) / 1e6, end: Double($0.end) / 1e6) }
        let notes = [analysis.ecg, analysis.strap].enumerated().map { offset, side in
            (offset == 0 ? "ECG: " : "strap: ") + ReportText.describe(side.figures)
        }
        return ECGPlot(
            title: (title ?? (file == "-" ? "rawble ecg session" : FilePath(file).lastComponent?.string ?? file))
                + (name.map { " · \($0)" } ?? ""),
            strip: strip, peaks: peaks,
            ecgBeats: analysis.beats.map { PlotBeat(time: $0.time, rrMs: $0.rrMs) },
            strapBeats: analysis.strapBeats, gaps: gaps, notes: notes,
            utcOffset: TimeZone.current.secondsFromGMT()
        ).svg()
    }

    /// The session's plot; `name`: the strap's, under the title, in a file of several.
    private func document(_ analysis: SessionAnalysis, samples: [SessionSample], summary: SessionFileSummary,
                          name: String? = nil) -> String {
        let zoneSet = zones.zones
        let plotSamples = samples.map { sample in
            PlotSample(time: sample.seconds, bpm: Double(sample.bpm), zone: zoneSet?.zone(for: Double(sample.bpm)) ?? 0)
        }
        let beats = analysis.beats.map { PlotBeat(time: $0.time, rrMs: $0.interval, corrected: $0.corrected) }
        // The analysis' own bounds, so the bands and legend match the zone each sample got.
        let plotZones = zoneSet.map { zones in
            PlotZones(lowerBounds: (1...5).map { zones.bounds(of: $0).lower }, maximum: zones.maxHeartRate)
        }
        let heading = title ?? (file == "-" ? "rawble hr session" : FilePath(file).lastComponent?.string ?? file)
        return SessionPlot(
            deviceName: name.map { "\(heading): \($0)" } ?? heading,
            samples: plotSamples, beats: beats, gaps: summary.gaps.map(PlotGap.init), zones: plotZones,
            utcOffset: TimeZone.current.secondsFromGMT()
        ).svg()
    }

    private func write(_ document: String, to path: String) throws {
        try write(Array(document.utf8), to: path, what: "the plot")
    }

    /// Writes `bytes` to `path`, private like the session they come from (mode 0600, never
    /// through a link; an own file replaced whole): chmod it to share it. `what`: the error's name for it.
    func write(_ bytes: [UInt8], to path: String, what: String) throws {
        let out: FileDescriptor
        do {
            out = FileDescriptor(rawValue: try PrivateFile.replace(path))
        } catch {
            throw OutputFile.error(creating: what, at: path, error)
        }
        defer { try? out.close() }
        do {
            _ = try out.writeAll(bytes)
        } catch let error as Errno {
            throw OutputFile.error(creating: what, at: path, errno: error.rawValue)
        } catch {
            throw CLIError(.cannotOpen, "cannot write \(what) \(path): \(error)")
        }
    }
}
