import FoundationEssentials
import RawbleAnalysis
import RawbleReport
import RawbleWire

/// `rawble report`'s summary for a person: a few lines, figures with their units.
enum ReportText {
    static func lines(_ analysis: SessionAnalysis, summary: SessionFileSummary, zones: ZoneOptions, file: String,
                      plot: String?) -> [String] {
        var lines: [String] = []
        let name = file == "-" ? "standard input" : file
        if let start = analysis.start, let end = analysis.end {
            lines.append("\(name): \(clock(start, date: true)) → \(clock(end, date: !sameDay(start, end))) "
                + "(\(duration(end - start))), \(grouped(summary.sampleCount)) measurements, "
                + "\(grouped(summary.rrIntervalCount)) RR intervals")
        }
        let rate = analysis.heartRate
        if let minimum = rate.minimum, let mean = rate.mean, let maximum = rate.maximum {
            lines.append("heart rate: min \(Int(minimum)), mean \(Int(mean.rounded())), max \(Int(maximum)) bpm")
        } else {
            lines.append("heart rate: no reading (the strap sent 0 or no value)")
        }
        let corrected = analysis.artifactCounts
        let figures = analysis.figures
        if figures.beatCount > 0 {
            let found = "\(corrected.total) artifact\(corrected.total == 1 ? "" : "s") (\(kinds(corrected)))"
            // An artifact found where the method moves no beat (Lipponen & Tarvainen leave a
            // misplaced beat at a run's first or last beat as it is, as NeuroKit2 does) changes
            // no figure: no "after correcting" claim then, and no identical "before" line.
            let changed = analysis.uncorrectedFigures != figures
            let correction = corrected.total == 0 ? "no artifact found"
                : changed ? "after correcting \(found)" : "\(found) found, which changed no interval"
            lines.append("HRV, \(correction): " + describe(figures))
            if corrected.total > 0, changed {
                lines.append("  before correction: " + describe(analysis.uncorrectedFigures))
            }
        } else {
            lines.append("HRV: no RR intervals in this session (the strap sent none)")
        }
        if let time = analysis.zoneTime {
            // Whole percentages that add up to 100 (each rounded alone, they made 99 or 101).
            let shares = Shares.rounded(time.seconds, to: 100)
            var parts: [String] = []
            for zone in HeartRateZones.all.reversed() where time.seconds[zone] > 0 {
                parts.append("\(zoneName(zone)) \(duration(time.seconds[zone])) (\(shares[zone]) %)")
            }
            lines.append("zones (max HR \(Int(time.zones.maxHeartRate)) bpm, \(zones.source)): "
                + (parts.isEmpty ? "no time with a reading" : parts.joined(separator: ", ")))
        } else {
            lines.append("zones: give --max-hr or --age to count time in heart-rate zones")
        }
        if !summary.gaps.isEmpty {
            let total = summary.gaps.reduce(0.0) { $0 + $1.duration }
            let shown = summary.gaps.prefix(5).map { "\(clock(Double($0.start) / 1e6)) → \(clock(Double($0.end) / 1e6))" }
            let more = summary.gaps.count > 5 ? ", …" : ""
            lines.append("gaps: \(summary.gaps.count), \(duration(total)) in all (\(shown.joined(separator: ", "))\(more)); "
                + "no zone time and no HRV across them")
        }
        if analysis.segments.count > 1 {
            lines.append("per \(duration(analysis.segments[0].end - analysis.segments[0].start)):")
            let widths = [10, 7, 10, 10, 10, 9]
            func row(_ cells: [String]) -> String {
                "  " + zip(cells, widths).enumerated().map { pad($1.0, $1.1, right: $0 > 0) }.joined()
            }
            lines.append(row(["start", "beats", "mean HR", "RMSSD", "SDNN", "pNN50"]))
            for segment in analysis.segments {
                let f = segment.figures
                lines.append(row([
                    clock(segment.start), grouped(f.beatCount),
                    f.meanHeartRate.map { "\(Int($0.rounded())) bpm" } ?? "–",
                    f.rmssd.map { "\(decimal($0)) ms" } ?? "–",
                    f.sdnn.map { "\(decimal($0)) ms" } ?? "–",
                    f.pnn50.map { "\(decimal($0)) %" } ?? "–",
                ]))
            }
        }
        var leftOut = summary.leftOut
        if analysis.input.excludedIntervals > 0 {
            leftOut.append("\(analysis.input.excludedIntervals) RR intervals outside 200–3000 ms (or zero) were not used")
        }
        if !leftOut.isEmpty { lines.append("left out: " + leftOut.joined(separator: "; ")) }
        if let plot { lines.append("plot: \(plot)") }
        return lines
    }

    static func describe(_ f: TimeDomainHRV) -> String {
        var parts = ["\(grouped(f.beatCount)) beats"]
        if let meanRR = f.meanRR { parts.append("mean RR \(Int(meanRR.rounded())) ms") }
        if let meanHR = f.meanHeartRate { parts.append("mean HR \(decimal(meanHR)) bpm") }
        if let sdnn = f.sdnn { parts.append("SDNN \(decimal(sdnn)) ms") }
        if let rmssd = f.rmssd { parts.append("RMSSD \(decimal(rmssd)) ms") }
        if let pnn50 = f.pnn50 { parts.append("pNN50 \(decimal(pnn50)) %") }
        return parts.joined(separator: ", ")
    }

    static func kinds(_ counts: ArtifactCounts) -> String {
        ArtifactKind.allCases.filter { counts[$0] > 0 }
            .map { "\(counts[$0]) \($0 == .longShort ? "long or short" : $0.rawValue)" }.joined(separator: ", ")
    }

    static func zoneName(_ zone: Int) -> String { zone == 0 ? "rest" : "Z\(zone)" }

    static func describe(_ error: SessionFileError) -> String {
        switch error {
        case .empty: "the file is empty"
        case .unrecognizedFormat(let line):
            "not a session file (its first line, \"\(line.prefix(60))\", is neither the CSV header nor a JSON object)"
        case .noMeasurements(let summary):
            "no measurement in it" + (summary.leftOut.isEmpty ? "" : " (" + summary.leftOut.joined(separator: "; ") + ")")
        }
    }

    /// Local time of day (and the date first when asked), from Unix seconds.
    static func clock(_ seconds: Double, date: Bool = false) -> String {
        let offset = Int64(TimeZone.current.secondsFromGMT())
        let local = iso8601(unixMicroseconds: (Int64(seconds.rounded(.down)) + offset) * 1_000_000)
        let time = String(local.dropFirst(11).prefix(8))
        return date ? String(local.prefix(10)) + " " + time : time
    }

    static func sameDay(_ a: Double, _ b: Double) -> Bool { clock(a, date: true).prefix(10) == clock(b, date: true).prefix(10) }

    /// `41 min 59 s`, `2 h 3 min`, `12 s`.
    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        if total >= 3600 { return "\(total / 3600) h \(total % 3600 / 60) min" }
        if total >= 60 { return total % 60 == 0 ? "\(total / 60) min" : "\(total / 60) min \(total % 60) s" }
        return "\(total) s"
    }

    /// One decimal.
    static func decimal(_ value: Double) -> String {
        let tenths = (value * 10).rounded()
        guard tenths.isFinite, abs(tenths) < 1e15 else { return "–" }
        let whole = Int(tenths) / 10, fraction = abs(Int(tenths)) % 10
        return (tenths < 0 && whole == 0 ? "-" : "") + "\(whole).\(fraction)"
    }

    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return (value < 0 ? "-" : "") + out
    }

    static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        return right ? padding + text : text + padding
    }
}

/// `rawble report --json`: one object.
enum ReportJSON {
    static func object(_ analysis: SessionAnalysis, summary: SessionFileSummary, zones: ZoneOptions, plot: String?) -> JSON {
        var out: [(String, JSON)] = [
            ("format", .string(summary.format == .csv ? "csv" : "jsonl")),
            ("start", analysis.start.map { .string(iso8601(unixMicroseconds: Int64(($0 * 1e6).rounded()))) } ?? .null),
            ("end", analysis.end.map { .string(iso8601(unixMicroseconds: Int64(($0 * 1e6).rounded()))) } ?? .null),
            ("durationSeconds", number(summary.duration)),
            ("measurements", JSON(summary.sampleCount)),
            ("rrIntervals", JSON(summary.rrIntervalCount)),
            ("heartRate", .object([
                ("min", number(analysis.heartRate.minimum)),
                ("mean", number(analysis.heartRate.mean)),
                ("max", number(analysis.heartRate.maximum)),
            ])),
            ("hrv", figures(analysis.figures)),
            ("hrvUncorrected", figures(analysis.uncorrectedFigures)),
            ("artifacts", artifacts(analysis.artifactCounts)),
            ("zones", analysis.zoneTime.map(zoneTime) ?? .null),
            ("segments", .array(analysis.segments.map { segment in
                .object([
                    ("start", .string(iso8601(unixMicroseconds: Int64((segment.start * 1e6).rounded())))),
                    ("durationSeconds", number(segment.end - segment.start)),
                ] + fields(of: segment.figures))
            })),
            ("gaps", .array(summary.gaps.map { gap in
                .object([
                    ("start", .string(iso8601(unixMicroseconds: gap.start))),
                    ("end", .string(iso8601(unixMicroseconds: gap.end))),
                    ("durationSeconds", number(gap.duration)),
                ])
            })),
            ("leftOut", .object([
                ("brokenLines", JSON(summary.brokenLineCount)),
                ("outOfOrder", JSON(summary.outOfOrderCount)),
                ("invalidMeasurements", JSON(summary.invalidMeasurementCount)),
                ("excludedRRIntervals", JSON(analysis.input.excludedIntervals)),
                ("messages", .array(summary.leftOut.map { .string($0) })),
            ])),
        ]
        if let plot { out.append(("plot", .string(plot))) }
        return .object(out)
    }

    static func figures(_ f: TimeDomainHRV) -> JSON { .object(fields(of: f)) }

    static func fields(of f: TimeDomainHRV) -> [(String, JSON)] {
        [
            ("beats", JSON(f.beatCount)),
            ("meanRR", number(f.meanRR)),
            ("meanHR", number(f.meanHeartRate)),
            ("sdnn", number(f.sdnn)),
            ("rmssd", number(f.rmssd)),
            ("pnn50", number(f.pnn50)),
            ("minHR", number(f.minHeartRate)),
            ("maxHR", number(f.maxHeartRate)),
        ]
    }

    static func artifacts(_ counts: ArtifactCounts) -> JSON {
        .object([("total", JSON(counts.total))] + ArtifactKind.allCases.map { ($0.rawValue, JSON(counts[$0])) })
    }

    static func zoneTime(_ time: ZoneTime) -> JSON {
        .object([
            ("maxHR", number(time.zones.maxHeartRate)),
            ("seconds", .array(time.seconds.map(number))),
            ("bounds", .array(HeartRateZones.all.map { zone in
                let bounds = time.zones.bounds(of: zone)
                return .array([number(bounds.lower), number(bounds.upper)])
            })),
        ])
    }

    /// A finite number to 3 decimals, else null.
    static func number(_ value: Double?) -> JSON {
        guard let value, value.isFinite else { return .null }
        return .double((value * 1000).rounded() / 1000)
    }
}
