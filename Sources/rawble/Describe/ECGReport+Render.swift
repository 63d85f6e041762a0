import FoundationEssentials
import RawbleAnalysis
import RawbleReport
import RawbleWire

/// `rawble report` on an ECG session: R-peaks found in each run of ECG (NeuroKit2's method), RR
/// intervals from the device times of the peak samples, HRV after Kubios artifact correction,
/// beside the same figures from the strap's own RR intervals (its `hr` lines).
struct ECGReportAnalysis {
    /// One beat found in the ECG: the RR interval ending at its R-peak.
    struct Beat {
        /// The R-peak's host time, seconds since 1970 (the run's start plus device time).
        var time: Double
        /// The R-peak sample's device time, PMD ns.
        var deviceTime: UInt64
        /// From the previous R-peak of the same run, ms (device clock).
        var rrMs: Double
        /// The run of ECG it was found in.
        var run = 0
    }

    /// HRV of one source of RR intervals.
    struct Side {
        var figures = TimeDomainHRV(intervals: [])
        var uncorrected = TimeDomainHRV(intervals: [])
        var artifacts = ArtifactCounts()
        /// Intervals outside 200–3000 ms, not used (as the heart-rate report screens them).
        var excluded = 0
        var intervals = 0
        /// The screened intervals corrected, in pieces without a gap or an excluded interval:
        /// each with the position (over all runs' intervals) of its first.
        var corrected: [(first: Int, intervals: [Double])] = []

        /// Each run screened, corrected on its own (Kubios), no difference across runs.
        init(runs: [[Double]]) {
            var overall = HRVAccumulator()
            var raw = HRVAccumulator()
            var pieces: [(first: Int, intervals: [Double])] = []
            for run in runs {
                var piece: [Double] = []
                for interval in run {
                    intervals += 1
                    if interval.isFinite, (200...3000).contains(interval) {
                        piece.append(interval)
                    } else {
                        excluded += 1
                        if !piece.isEmpty { pieces.append((intervals - 1 - piece.count, piece)) }
                        piece = []
                    }
                }
                if !piece.isEmpty { pieces.append((intervals - piece.count, piece)) }
            }
            for (first, piece) in pieces {
                for (offset, interval) in piece.enumerated() { raw.add(interval, continuesPrevious: offset > 0) }
                let correction = ArtifactCorrection.kubios(piece)
                for (offset, interval) in correction.intervals.enumerated() { overall.add(interval, continuesPrevious: offset > 0) }
                for kind in ArtifactKind.allCases { artifacts[kind] += correction.counts[kind] }
                corrected.append((first, correction.intervals))
            }
            figures = overall.figures
            uncorrected = raw.figures
        }
    }

    /// The R-peaks of each run, sample indices.
    var peaks: [[Int]] = []
    /// The sampling rate used for each run (the device times', Hz).
    var rates: [Double] = []
    var beats: [Beat] = []
    var ecg: Side
    var strap: Side
    /// The strap's beats for the tachogram (each RR placed at its measurement's arrival, the
    /// earlier ones of a measurement before it).
    var strapBeats: [PlotBeat] = []
    var strapHeartRate: (minimum: Double, mean: Double, maximum: Double)?

    /// The strap's measurements further apart than this (s) start a new run of its RR intervals.
    static let strapMaxGap = 5.0

    init(session: ECGRecording) {
        var ecgRuns: [[Double]] = []
        for (runIndex, run) in session.runs.enumerated() {
            let measured = run.measuredSamplingRate ?? 130
            let rate = RPeakDetection.samplingRateRange.contains(measured) ? measured : 130
            let found = RPeakDetection.peaks(in: run.microvolts.map(Double.init), samplingRate: rate)
            peaks.append(found)
            rates.append(rate)
            var intervals: [Double] = []
            for (previous, index) in zip(found, found.dropFirst()) where previous < index && index < run.deviceTimes.count {
                let rr = Double(run.deviceTimes[index] &- run.deviceTimes[previous]) / 1e6
                intervals.append(rr)
                beats.append(Beat(time: run.seconds(at: index), deviceTime: run.deviceTimes[index], rrMs: rr, run: runIndex))
            }
            ecgRuns.append(intervals)
        }
        ecg = Side(runs: ecgRuns)

        var strapRuns: [[Double]] = []
        var lastSegment: Int?
        var lastTime: Int64?
        var strapRates: [Double] = []
        for measurement in session.strapMeasurements {
            let apart = lastTime.map { Double(measurement.time &- $0) / 1e6 > Self.strapMaxGap || measurement.time < $0 } ?? true
            if lastSegment != measurement.segment || apart { strapRuns.append([]) }
            lastSegment = measurement.segment
            lastTime = measurement.time
            strapRuns[strapRuns.count - 1] += measurement.rrIntervals
            var end = Double(measurement.time) / 1e6
            var placed: [PlotBeat] = []
            for rr in measurement.rrIntervals.reversed() {
                placed.append(PlotBeat(time: end, rrMs: rr))
                end -= rr / 1000
            }
            strapBeats += placed.reversed()
            if measurement.bpm > 0 { strapRates.append(Double(measurement.bpm)) }
        }
        strap = Side(runs: strapRuns)
        if let minimum = strapRates.min(), let maximum = strapRates.max() {
            strapHeartRate = (minimum, strapRates.reduce(0, +) / Double(strapRates.count), maximum)
        }
    }

    var peakCount: Int { peaks.reduce(0) { $0 + $1.count } }

    /// The sampling rate over all runs, weighted by their samples.
    func meanRate(_ session: ECGRecording) -> Double? {
        let total = session.runs.reduce(0) { $0 + $1.deviceTimes.count }
        guard total > 0, rates.count == session.runs.count else { return nil }
        return zip(session.runs, rates).reduce(0.0) { $0 + Double($1.0.deviceTimes.count) * $1.1 } / Double(total)
    }
}

/// `rawble report`'s lines for an ECG session.
enum ECGReportText {
    static func lines(_ analysis: ECGReportAnalysis, session: ECGRecording, file: String, plot: String?) -> [String] {
        let summary = session.summary
        var lines: [String] = []
        let name = file == "-" ? "standard input" : file
        if let first = summary.firstTime, let last = summary.lastTime {
            let start = Double(first) / 1e6, end = Double(last) / 1e6
            lines.append("\(name): ECG session, \(ReportText.clock(start, date: true)) → "
                + "\(ReportText.clock(end, date: !ReportText.sameDay(start, end))) (\(ReportText.duration(end - start)))")
        }
        let rate = analysis.meanRate(session).map { ", \(ReportText.decimal($0)) Hz by the device's clock" } ?? ""
        let gaps = session.gaps.count
        lines.append("ECG: \(ReportText.grouped(summary.ecgSampleCount)) samples\(rate); "
            + "\(session.runs.count) run\(session.runs.count == 1 ? "" : "s"), "
            + (gaps == 0 ? "no gap" : "\(gaps) gap\(gaps == 1 ? "" : "s") (\(ReportText.duration(session.gaps.reduce(0) { $0 + $1.duration })) in all)")
            + (summary.accelerationCount > 0 ? "; \(ReportText.grouped(summary.accelerationCount)) acceleration vectors (not analysed)" : ""))
        lines.append("beats found in the ECG: \(ReportText.grouped(analysis.peakCount)) R-peaks, "
            + "\(ReportText.grouped(analysis.beats.count)) RR intervals (device times of the peak samples, none across a gap)")
        var strapLine = "the strap's own: \(ReportText.grouped(summary.heartRateCount)) heart-rate measurements, "
            + "\(ReportText.grouped(summary.strapRRIntervalCount)) RR intervals"
        if let rate = analysis.strapHeartRate {
            strapLine += "; heart rate min \(Int(rate.minimum)), mean \(Int(rate.mean.rounded())), max \(Int(rate.maximum)) bpm"
        }
        lines.append(strapLine)
        let ecg = analysis.ecg, strap = analysis.strap
        lines.append("HRV after artifact correction (ECG: \(artifacts(ecg.artifacts)); strap: \(artifacts(strap.artifacts))):")
        let widths = [10, 12, 12, 14]
        func row(_ cells: [String]) -> String {
            "  " + zip(cells, widths).enumerated().map { ReportText.pad($1.0, $1.1, right: $0 > 0) }.joined()
        }
        lines.append(row(["", "ECG", "strap", "ECG − strap"]))
        for figure in Figure.allCases {
            let a = figure.value(ecg.figures), b = figure.value(strap.figures)
            let difference = a.flatMap { a in b.map { a - $0 } }
            lines.append(row([figure.label, a.map { figure.text($0) } ?? "–", b.map { figure.text($0) } ?? "–",
                              difference.map { ($0 > 0 ? "+" : "") + figure.text($0) } ?? "–"]))
        }
        var leftOut = summary.leftOut
        if ecg.excluded > 0 { leftOut.append("\(ecg.excluded) ECG RR intervals outside 200–3000 ms were not used") }
        if strap.excluded > 0 { leftOut.append("\(strap.excluded) strap RR intervals outside 200–3000 ms (or zero) were not used") }
        if !leftOut.isEmpty { lines.append("left out: " + leftOut.joined(separator: "; ")) }
        if let plot { lines.append("plot: \(plot)") }
        return lines
    }

    static func artifacts(_ counts: ArtifactCounts) -> String {
        counts.total == 0 ? "no artifact" : "\(counts.total) (\(ReportText.kinds(counts)))"
    }

    /// The figures set side by side.
    enum Figure: CaseIterable {
        case beats, meanHR, rmssd, sdnn, pnn50

        var label: String {
            switch self {
            case .beats: "beats"
            case .meanHR: "mean HR"
            case .rmssd: "RMSSD"
            case .sdnn: "SDNN"
            case .pnn50: "pNN50"
            }
        }

        var key: String {
            switch self {
            case .beats: "beats"
            case .meanHR: "meanHR"
            case .rmssd: "rmssd"
            case .sdnn: "sdnn"
            case .pnn50: "pnn50"
            }
        }

        func value(_ figures: TimeDomainHRV) -> Double? {
            switch self {
            case .beats: Double(figures.beatCount)
            case .meanHR: figures.meanHeartRate
            case .rmssd: figures.rmssd
            case .sdnn: figures.sdnn
            case .pnn50: figures.pnn50
            }
        }

        func text(_ value: Double) -> String {
            switch self {
            case .beats: ReportText.grouped(Int(value.rounded()))
            case .meanHR: ReportText.decimal(value) + " bpm"
            case .rmssd, .sdnn: ReportText.decimal(value) + " ms"
            case .pnn50: ReportText.decimal(value) + " %"
            }
        }
    }
}

/// `rawble report --json` for an ECG session: one object.
enum ECGReportJSON {
    static func object(_ analysis: ECGReportAnalysis, session: ECGRecording, plot: String?) -> JSON {
        let summary = session.summary
        let number = ReportJSON.number
        var out: [(String, JSON)] = [
            ("kind", .string("ecg")),
            ("format", .string(summary.format == .csv ? "csv" : "jsonl")),
            ("start", summary.firstTime.map { .string(iso8601(unixMicroseconds: $0)) } ?? .null),
            ("end", summary.lastTime.map { .string(iso8601(unixMicroseconds: $0)) } ?? .null),
            ("durationSeconds", number(summary.duration)),
            ("ecgSamples", JSON(summary.ecgSampleCount)),
            ("samplingRate", number(analysis.meanRate(session))),
            ("accelerationSamples", JSON(summary.accelerationCount)),
            ("runs", JSON(session.runs.count)),
            ("gaps", .array(session.gaps.map { gap in
                .object([
                    ("start", .string(iso8601(unixMicroseconds: gap.start))),
                    ("end", .string(iso8601(unixMicroseconds: gap.end))),
                    ("durationSeconds", number(gap.duration)),
                    ("marked", .bool(gap.marked)),
                ])
            })),
            ("rPeaks", JSON(analysis.peakCount)),
            ("ecg", .object([
                ("rrIntervals", JSON(analysis.beats.count)),
                ("hrv", ReportJSON.figures(analysis.ecg.figures)),
                ("hrvUncorrected", ReportJSON.figures(analysis.ecg.uncorrected)),
                ("artifacts", ReportJSON.artifacts(analysis.ecg.artifacts)),
                ("excludedRRIntervals", JSON(analysis.ecg.excluded)),
                ("beats", .array(analysis.beats.map { beat in
                    .object([
                        ("time", .string(iso8601(unixMicroseconds: Int64((beat.time * 1e6).rounded())))),
                        ("deviceTime", .int(Int(clamping: beat.deviceTime))),
                        ("rrMs", number(beat.rrMs)),
                    ])
                })),
            ])),
            ("strap", .object([
                ("measurements", JSON(summary.heartRateCount)),
                ("rrIntervals", JSON(summary.strapRRIntervalCount)),
                ("heartRate", .object([
                    ("min", number(analysis.strapHeartRate?.minimum)),
                    ("mean", number(analysis.strapHeartRate?.mean)),
                    ("max", number(analysis.strapHeartRate?.maximum)),
                ])),
                ("hrv", ReportJSON.figures(analysis.strap.figures)),
                ("hrvUncorrected", ReportJSON.figures(analysis.strap.uncorrected)),
                ("artifacts", ReportJSON.artifacts(analysis.strap.artifacts)),
                ("excludedRRIntervals", JSON(analysis.strap.excluded)),
            ])),
            ("difference", .object(ECGReportText.Figure.allCases.map { figure -> (String, JSON) in
                let a = figure.value(analysis.ecg.figures), b = figure.value(analysis.strap.figures)
                return (figure.key, number(a.flatMap { a in b.map { a - $0 } }))
            })),
            ("leftOut", .object([
                ("brokenLines", JSON(summary.brokenLineCount)),
                ("outOfOrder", JSON(summary.outOfOrderCount)),
                ("messages", .array(summary.leftOut.map { .string($0) })),
            ])),
        ]
        if let plot { out.append(("plot", .string(plot))) }
        return .object(out)
    }
}
