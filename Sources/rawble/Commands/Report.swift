import ArgumentParser
import FoundationEssentials
import RawbleAnalysis
import RawbleReport
import RawbleWire
import SystemPackage

/// `rawble report FILE`: a session that `rawble hr` wrote (`--csv`, `--jsonl`, or `--json`'s
/// stdout), summarized: heart rate, time in zones, HRV over the session and per segment after
/// RR artifact correction, gaps; `--plot` draws it as an SVG.
struct Report: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Summarize a heart-rate session that `rawble hr` wrote: heart rate, zones, HRV, artifacts, gaps.",
        discussion: """
            FILE is what `rawble hr --csv FILE`, `--jsonl FILE` or `--json > FILE` wrote (- reads \
            standard input). RR intervals are corrected for artifacts (missed, extra and ectopic \
            beats; Lipponen & Tarvainen 2019) before any HRV figure. Two measurements more than \
            5 s apart are a gap (a disconnection): no zone time, no HRV across it.

            Examples:
              rawble report session.csv --max-hr 185
              rawble report session.csv --plot session.svg --title "Tuesday intervals"
              rawble hr --json --count 600 | rawble report - --json
            """)

    @Argument(help: ArgumentHelp("The session file (CSV or JSON lines from `rawble hr`), or - for standard input.",
                                 valueName: "file"))
    var file: String
    @Option(help: ArgumentHelp("Also draw the session as an SVG: heart rate by zone, the RR tachogram, a Poincaré plot.",
                               valueName: "file.svg"))
    var plot: String?
    @Option(help: ArgumentHelp("The plot's title (default: the file's name).", valueName: "text"))
    var title: String?
    @Option(help: ArgumentHelp("Length of the HRV segments, in seconds.", valueName: "seconds"))
    var segment: Double = 300
    @OptionGroup var zones: ZoneOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard segment >= 10, segment <= 86_400 else { throw ValidationError("--segment must be between 10 and 86400 seconds") }
        if let plot, plot.isEmpty { throw ValidationError("--plot needs a file name") }
    }

    func run() async throws {
        let (samples, summary) = try readSession()
        let measurements = samples.lazy.map {
            HeartRateSample(time: $0.seconds, heartRate: Double($0.bpm), rrIntervals: $0.rrIntervals)
        }
        let analysis = SessionAnalysis(
            measurements: measurements,
            configuration: SessionAnalysis.Configuration(zones: zones.zones, segmentDuration: segment))
        if let plot { try draw(analysis, samples: samples, summary: summary, to: plot) }
        if output.json {
            Output.json(ReportJSON.object(analysis, summary: summary, zones: zones, plot: plot))
        } else {
            for line in ReportText.lines(analysis, summary: summary, zones: zones, file: file, plot: plot) {
                Output.line(line)
            }
        }
    }

    /// Reads the file (or stdin) in chunks through the session reader.
    private func readSession() throws -> (samples: [SessionSample], summary: SessionFileSummary) {
        let name = file == "-" ? "standard input" : file
        let descriptor: FileDescriptor
        if file == "-" {
            descriptor = .standardInput
        } else {
            do {
                descriptor = try FileDescriptor.open(file, .readOnly)
            } catch let error as Errno where error == .noSuchFileOrDirectory || error == .notDirectory {
                throw CLIError(.cannotOpen, "no such file: \(file)", fix: "name the file `rawble hr --csv` or `--jsonl` wrote")
            } catch {
                throw CLIError(.permission, "cannot open \(file): \(error)", fix: "check its permissions")
            }
        }
        defer { if file != "-" { try? descriptor.close() } }
        var reader = SessionFileReader()
        var samples: [SessionSample] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        do {
            while true {
                let count: Int
                do {
                    count = try buffer.withUnsafeMutableBytes { try descriptor.read(into: $0, retryOnInterrupt: true) }
                } catch let error as Errno where error == .isDirectory {
                    throw CLIError(.cannotOpen, "\(name) is a directory", fix: "name the file `rawble hr --csv` or `--jsonl` wrote")
                } catch {
                    throw CLIError(.cannotOpen, "cannot read \(name): \(error)")
                }
                if count == 0 { break }
                try reader.read(chunk: buffer[..<count]) { samples.append($0) }
            }
            let summary = try reader.finish { samples.append($0) }
            return (samples, summary)
        } catch let error as SessionFileError {
            throw CLIError(.malformedInput, "\(name): \(ReportText.describe(error))",
                           fix: "give a file that `rawble hr --csv`, `--jsonl` or `--json` wrote")
        }
    }

    private func draw(_ analysis: SessionAnalysis, samples: [SessionSample], summary: SessionFileSummary, to path: String) throws {
        let zoneSet = zones.zones
        let plotSamples = samples.map { sample in
            PlotSample(time: sample.seconds, bpm: Double(sample.bpm), zone: zoneSet?.zone(for: Double(sample.bpm)) ?? 0)
        }
        let beats = analysis.beats.map { PlotBeat(time: $0.time, rrMs: $0.interval, corrected: $0.corrected) }
        // The analysis' own bounds, so the bands and legend match the zone each sample got.
        let plotZones = zoneSet.map { zones in
            PlotZones(lowerBounds: (1...5).map { zones.bounds(of: $0).lower }, maximum: zones.maxHeartRate)
        }
        let document = SessionPlot(
            deviceName: title ?? (file == "-" ? "rawble hr session" : FilePath(file).lastComponent?.string ?? file),
            samples: plotSamples, beats: beats, gaps: summary.gaps.map(PlotGap.init), zones: plotZones,
            utcOffset: TimeZone.current.secondsFromGMT()
        ).svg()
        do {
            let out = try FileDescriptor.open(path, .writeOnly, options: [.create, .truncate], permissions: [.ownerReadWrite, .groupRead, .otherRead])
            defer { try? out.close() }
            _ = try out.writeAll(Array(document.utf8))
        } catch let error as Errno {
            throw OutputFile.error(creating: "the plot", at: path, errno: error.rawValue)
        } catch {
            throw CLIError(.cannotOpen, "cannot write the plot \(path): \(error)")
        }
    }
}
