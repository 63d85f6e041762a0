import RawbleWire

/// One ECG value to plot: when (seconds since 1970) and the value in µV.
public struct ECGPlotSample: Hashable, Sendable {
    /// Seconds since 1970.
    public var time: Double
    /// The sample, µV.
    public var microvolts: Double

    /// A value to plot.
    /// - Parameters:
    ///   - time: seconds since 1970.
    ///   - microvolts: the value, µV.
    public init(time: Double, microvolts: Double) {
        self.time = time
        self.microvolts = microvolts
    }
}

/// An ECG session's plots as one SVG document, for a person: (a) an ECG strip (the samples the
/// caller chose, e.g. the first 10 s) with the R-peaks found marked on it; (b) the RR tachogram
/// of the beats found in the ECG beside the strap's own RR intervals, over the whole session,
/// gaps shaded and not crossed by a line.
///
/// Pure: values in, text out. In the SVG the strip is the path of class `ecg`, each R-peak a
/// `circle` of class `peak`, the two tachograms the paths of class `rr-ecg` and `rr-strap`.
public struct ECGPlot: Sendable {
    /// The title (any text: it is escaped).
    public var title: String
    /// The strip's samples (drawn in time order; at most two per pixel column are drawn as
    /// they are, more are reduced to each column's range).
    public var strip: [ECGPlotSample]
    /// The R-peaks in the strip, marked (their values place the marks).
    public var peaks: [ECGPlotSample]
    /// The beats found in the ECG: when each ended and its RR interval, ms.
    public var ecgBeats: [PlotBeat]
    /// The strap's own beats (its Heart Rate Measurements' RR intervals), ms.
    public var strapBeats: [PlotBeat]
    /// Times without ECG: no tachogram line across them.
    public var gaps: [PlotGap]
    /// Lines under the title (e.g. the HRV figures), each escaped.
    public var notes: [String]
    /// The local time's offset from UTC in seconds (the clock axis and the date use it).
    public var utcOffset: Int
    /// The document's width in pixels (600 to 10,000).
    public var width: Int

    /// A plot.
    /// - Parameters:
    ///   - title: the title.
    ///   - strip: the ECG samples to draw.
    ///   - peaks: the R-peaks among them.
    ///   - ecgBeats: the ECG's beats (RR in ms).
    ///   - strapBeats: the strap's beats (RR in ms).
    ///   - gaps: the session's gaps.
    ///   - notes: lines under the title.
    ///   - utcOffset: local time's offset from UTC, seconds.
    ///   - width: the width in pixels.
    public init(title: String, strip: [ECGPlotSample], peaks: [ECGPlotSample], ecgBeats: [PlotBeat],
                strapBeats: [PlotBeat], gaps: [PlotGap] = [], notes: [String] = [], utcOffset: Int = 0,
                width: Int = 1200) {
        self.title = title
        self.strip = strip
        self.peaks = peaks
        self.ecgBeats = ecgBeats
        self.strapBeats = strapBeats
        self.gaps = gaps
        self.notes = notes
        self.utcOffset = utcOffset
        self.width = width
    }

    /// The SVG document (UTF-8 text, standalone).
    public func svg() -> String {
        var renderer = ECGPlotRenderer(plot: self)
        return renderer.render()
    }

    static let ecgColor = "#2b6cb0"
    static let strapColor = "#e07b24"
    static let peakColor = "#d64541"
}

private struct ECGPlotRenderer: SVGPlotRenderer {
    let plot: ECGPlot
    let width: Double
    var out = ""
    let strip: [ECGPlotSample]
    let peaks: [ECGPlotSample]
    let ecgBeats: [PlotBeat]
    let strapBeats: [PlotBeat]
    let gapIndex: GapIndex

    init(plot: ECGPlot) {
        self.plot = plot
        width = Double(max(600, min(plot.width, 10_000)))
        strip = plot.strip.filter { $0.time.isFinite && $0.microvolts.isFinite }.sorted { $0.time < $1.time }
        peaks = plot.peaks.filter { $0.time.isFinite && $0.microvolts.isFinite }
        ecgBeats = plot.ecgBeats.filter { $0.time.isFinite && $0.rrMs.isFinite }.sorted { $0.time < $1.time }
        strapBeats = plot.strapBeats.filter { $0.time.isFinite && $0.rrMs.isFinite }.sorted { $0.time < $1.time }
        gapIndex = GapIndex(plot.gaps)
    }

    mutating func render() -> String {
        let top = 80 + 18 * Double(min(plot.notes.count, 8))
        let stripFrame = Frame(x: 70, y: top + 30, width: width - 96, height: 240)
        let rrFrame = Frame(x: 70, y: stripFrame.bottom + 90, width: width - 96, height: 220)
        let height = rrFrame.bottom + 56
        beginDocument(width: width, height: height, styles: [
            ".minor{stroke:#f3f4f6;stroke-width:1;fill:none}",
            ".ecg{fill:none;stroke:#222;stroke-width:1.2;stroke-linejoin:round}",
            ".peak{fill:\(ECGPlot.peakColor);stroke:#fff;stroke-width:0.8}",
            ".rr-ecg{fill:none;stroke:\(ECGPlot.ecgColor);stroke-width:1.4;stroke-linejoin:round}",
            ".rr-strap{fill:none;stroke:\(ECGPlot.strapColor);stroke-width:1.4;stroke-dasharray:5 3;stroke-linejoin:round}",
        ])
        text(26, 36, plot.title.isEmpty ? "ECG session" : plot.title, class: "title")
        for (index, note) in plot.notes.prefix(8).enumerated() {
            text(26, 62 + 18 * Double(index), note, class: "subtitle")
        }
        stripPanel(stripFrame)
        tachogramPanel(rrFrame)
        out += "</svg>\n"
        return out
    }

    // MARK: (a) The strip

    private mutating func stripPanel(_ frame: Frame) {
        let start = strip.first?.time ?? 0
        let end = strip.last?.time ?? start
        let span = max(end - start, 1)
        text(frame.x, frame.y - 14, "ECG, \(SVGText.number(span, places: 1)) s from \(clock(start, seconds: true)), R-peaks marked",
             class: "panel")
        legendDot(right: frame.right, y: frame.y - 14, color: ECGPlot.peakColor, label: "R-peak (\(peaks.count))")
        let values = strip.map(\.microvolts)
        let low = (values.min() ?? -500) / 1000
        let high = (values.max() ?? 1500) / 1000
        let ticks = SVGText.ticks(low - 0.1, high + 0.1, count: 5)
        let y = Scale(domain: (ticks.low, ticks.high), range: (frame.bottom, frame.y))
        let x = Scale(domain: (start, start + span), range: (frame.x, frame.right))
        // ECG paper's feel: a line every 0.2 s, a darker one every second (longer strips: coarser).
        let minor = span <= 30 ? 0.2 : span <= 300 ? 1 : 10
        let labelEvery = span <= 15 ? 1.0 : span <= 60 ? 5 : span <= 300 ? 30 : 300
        for step in 0...Int(min(span / minor + 1e-6, 2000)) {
            let tick = Double(step) * minor
            let px = x(start + tick)
            let whole = abs(tick - tick.rounded()) < 1e-6
            let labelled = whole && Int(tick.rounded()) % Int(labelEvery) == 0
            out += #"<line class="\#(labelled || (whole && minor < 1) ? "grid" : "minor")" x1="\#(n(px))" y1="\#(n(frame.y))" x2="\#(n(px))" y2="\#(n(frame.bottom))"/>"# + "\n"
            if labelled { text(px, frame.bottom + 17, "\(Int(tick.rounded())) s", class: "tick", anchor: "middle") }
        }
        valueAxis(frame, ticks: ticks, scale: y, unit: "mV")
        text(frame.right, frame.bottom + 34, "seconds from \(clock(start, seconds: true))", class: "note", anchor: "end")
        guard !strip.isEmpty else {
            emptyNote(frame, "no ECG in this strip")
            return
        }
        clip("strip", frame)
        out += #"<g clip-path="url(#strip)">"# + "\n"
        var path = ""
        let columns = max(1, Int(frame.width))
        if strip.count <= columns * 2 {
            for (index, sample) in strip.enumerated() {
                let joined = index > 0 && !separated(strip[index - 1].time, sample.time)
                path += (joined ? "L" : "M") + "\(n(x(sample.time))) \(n(y(sample.microvolts / 1000)))"
            }
        } else {
            // One vertical stroke per pixel column, its range.
            var column = -1
            var minimum = 0.0
            var maximum = 0.0
            func flush() {
                guard column >= 0 else { return }
                let px = frame.x + Double(column) + 0.5
                path += "M\(n(px)) \(n(y(minimum / 1000)))V\(n(y(maximum / 1000) - 0.5))"
            }
            for sample in strip {
                let c = min(max(Int(min(max(x(sample.time) - frame.x, 0), Double(columns - 1))), 0), columns - 1)
                if c != column {
                    flush()
                    column = c
                    minimum = sample.microvolts
                    maximum = sample.microvolts
                } else {
                    minimum = min(minimum, sample.microvolts)
                    maximum = max(maximum, sample.microvolts)
                }
            }
            flush()
        }
        out += #"<path class="ecg" d="\#(path)"/>"# + "\n"
        for peak in peaks.prefix(10_000) where peak.time >= start && peak.time <= end {
            out += #"<circle class="peak" cx="\#(n(x(peak.time)))" cy="\#(n(y(peak.microvolts / 1000) - 7))" r="4"/>"# + "\n"
        }
        out += "</g>\n"
    }

    // MARK: (b) The tachogram

    private mutating func tachogramPanel(_ frame: Frame) {
        text(frame.x, frame.y - 14, "RR intervals: the ECG's beats and the strap's", class: "panel")
        let strapLabel = "strap (\(SVGText.grouped(strapBeats.count)))"
        legendDot(right: frame.right, y: frame.y - 14, color: ECGPlot.strapColor, label: strapLabel)
        legendDot(right: frame.right - Double(strapLabel.count) * 6.6 - 40, y: frame.y - 14, color: ECGPlot.ecgColor,
                  label: "ECG (\(SVGText.grouped(ecgBeats.count)))")
        let times = [ecgBeats.first?.time, ecgBeats.last?.time, strapBeats.first?.time, strapBeats.last?.time].compactMap { $0 }
        let start = times.min() ?? 0
        let end = times.max() ?? 0
        let domain = end > start ? (start, end) : (start - 30, start + 30)
        let (low, high) = rrAxisRange((ecgBeats.map(\.rrMs) + strapBeats.map(\.rrMs)).sorted())
        let ticks = SVGText.ticks(low, high, count: 4)
        let y = Scale(domain: (ticks.low, ticks.high), range: (frame.bottom, frame.y))
        let x = Scale(domain: domain, range: (frame.x, frame.right))
        valueAxis(frame, ticks: ticks, scale: y, unit: "ms")
        timeAxis(frame, scale: x, domain: domain, utcOffset: plot.utcOffset, clock: true)
        gapShading(frame, x: x, gaps: gapIndex.gaps, labelled: false)
        guard !ecgBeats.isEmpty || !strapBeats.isEmpty else {
            emptyNote(frame, "no RR intervals in this session")
            return
        }
        clip("rr", frame)
        out += #"<g clip-path="url(#rr)">"# + "\n"
        for (beats, name) in [(ecgBeats, "rr-ecg"), (strapBeats, "rr-strap")] where !beats.isEmpty {
            var path = ""
            var previousColumn = Int.min
            for (index, beat) in beats.enumerated() {
                let px = x(beat.time)
                let joined = index > 0 && !separated(beats[index - 1].time, beat.time)
                // Long sessions: at most one point per half pixel column.
                let column = Int(min(max(px * 2, -1e9), 1e9))
                if joined, column == previousColumn { continue }
                previousColumn = column
                path += (joined ? "L" : "M") + "\(n(px)) \(n(min(max(y(beat.rrMs), frame.y - 2), frame.bottom + 2)))"
            }
            out += #"<path class="\#(name)" d="\#(path)"/>"# + "\n"
        }
        out += "</g>\n"
    }

    // MARK: Pieces

    /// Whether a gap lies between two times.
    private func separated(_ a: Double, _ b: Double) -> Bool {
        gapIndex.separates(a, b)
    }

    private mutating func legendDot(right: Double, y: Double, color: String, label: String) {
        legendSwatch(x: right - Double(label.count) * 6.6 - 18, y: y, color: color, label: label)
    }

    private func clock(_ seconds: Double, seconds withSeconds: Bool) -> String {
        SVGText.clockText(seconds + Double(plot.utcOffset), withSeconds: withSeconds, clock: true)
    }
}
