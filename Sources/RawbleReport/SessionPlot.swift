import RawbleWire

/// A session's plots as one SVG document, for a person: (a) heart rate over time coloured by
/// zone, over the zones' bands; (b) the RR tachogram with corrected beats marked; (c) the
/// Poincaré plot (RR[n] vs RR[n+1]) with its SD1/SD2 ellipse; (d) time in each zone. Gaps are
/// gaps: no line is drawn across one.
///
/// Pure: values in, text out. Long sessions are drawn per pixel column (minimum, maximum and
/// mean of each), so a 24-hour session (~100,000 beats) stays a few hundred kilobytes.
public struct SessionPlot: Sendable {
    /// The strap's name, in the title (any text: it is escaped).
    public var deviceName: String
    public var samples: [PlotSample]
    public var beats: [PlotBeat]
    public var gaps: [PlotGap]
    /// The zones' bounds; `nil`: no bands, zones named by number only.
    public var zones: PlotZones?
    /// SD1/SD2 for the Poincaré ellipse; `nil`: computed from the beats' successive pairs.
    public var poincare: PoincareFigures?
    public var timeAxis: PlotTimeAxis
    /// The local time's offset from UTC in seconds (the title's date and a clock axis use it).
    public var utcOffset: Int
    /// The document's width in pixels (at least 600).
    public var width: Int

    public init(deviceName: String, samples: [PlotSample], beats: [PlotBeat], gaps: [PlotGap] = [],
                zones: PlotZones? = nil, poincare: PoincareFigures? = nil, timeAxis: PlotTimeAxis = .clock,
                utcOffset: Int = 0, width: Int = 1200) {
        self.deviceName = deviceName
        self.samples = samples
        self.beats = beats
        self.gaps = gaps
        self.zones = zones
        self.poincare = poincare
        self.timeAxis = timeAxis
        self.utcOffset = utcOffset
        self.width = width
    }

    /// The SVG document (UTF-8 text, standalone).
    public func svg() -> String {
        var renderer = PlotRenderer(plot: self)
        return renderer.render()
    }

    /// The zone colours, zone 0 (below zone 1) first.
    static let zoneColors = ["#9aa5b1", "#4e9bd6", "#3fae5a", "#e8b130", "#ee7b30", "#d64541"]
    static let zoneNames = ["below Z1", "Z1", "Z2", "Z3", "Z4", "Z5"]
}

private struct PlotRenderer: SVGPlotRenderer {
    let plot: SessionPlot
    var out = ""
    let width: Double
    let gapIndex: GapIndex
    let timeDomain: (Double, Double)
    /// Samples and beats in time order, with finite values only.
    let samples: [PlotSample]
    let beats: [PlotBeat]

    init(plot: SessionPlot) {
        self.plot = plot
        width = Double(max(600, min(plot.width, 10_000)))
        gapIndex = GapIndex(plot.gaps)
        samples = plot.samples.filter { $0.time.isFinite && $0.bpm.isFinite }.sorted { $0.time < $1.time }
        beats = plot.beats.filter { $0.time.isFinite && $0.rrMs.isFinite }.sorted { $0.time < $1.time }
        let times = [samples.first?.time, samples.last?.time, beats.first?.time, beats.last?.time].compactMap { $0 }
        let start = times.min() ?? 0
        let end = times.max() ?? 0
        timeDomain = end > start ? (start, end) : (start - 30, start + 30)
    }

    // MARK: Document

    mutating func render() -> String {
        let heartFrame = Frame(x: 70, y: 104, width: width - 96, height: 230)
        let tachogramFrame = Frame(x: 70, y: 408, width: width - 96, height: 190)
        let poincareFrame = Frame(x: 70, y: 680, width: 300, height: 300)
        let zonesFrame = Frame(x: 560, y: 680, width: width - 560 - 26 - 150, height: 300)
        let height = poincareFrame.bottom + 62
        beginDocument(width: width, height: height, styles: [
            ".line{fill:none;stroke-width:1.6;stroke-linejoin:round;stroke-linecap:round}",
            ".rr{fill:none;stroke:#2b6cb0;stroke-width:1.1;stroke-linejoin:round}",
            ".env{fill:none;stroke-width:1}",
            ".fix{fill:#f28c28;stroke:#b85c00;stroke-width:0.8}",
        ])
        title()
        heartRatePanel(heartFrame)
        tachogramPanel(tachogramFrame)
        poincarePanel(poincareFrame)
        zoneTimePanel(zonesFrame)
        out += "</svg>\n"
        return out
    }

    private mutating func title() {
        let local = Double(plot.utcOffset)
        let name = plot.deviceName.isEmpty ? "Heart-rate session" : plot.deviceName
        let start = SVGText.dateTime(timeDomain.0 + local)
        // The end's date too when the session ends on another day.
        let endDate = SVGText.dateTime(timeDomain.1 + local)
        let end = endDate.prefix(10) == start.prefix(10) ? String(endDate.dropFirst(11)) : endDate
        text(26, 36, "\(name) — \(start)", class: "title")
        var parts = ["\(start) → \(end) (\(SVGText.utcOffsetText(plot.utcOffset)))",
                     SVGText.duration(timeDomain.1 - timeDomain.0),
                     "\(SVGText.grouped(samples.count)) measurements"]
        let corrected = beats.lazy.filter(\.corrected).count
        parts.append("\(SVGText.grouped(beats.count)) beats" + (corrected > 0 ? " (\(SVGText.grouped(corrected)) corrected)" : ""))
        let gapCount = gapIndex.gaps.count
        if gapCount > 0 { parts.append("\(gapCount) gap\(gapCount == 1 ? "" : "s") (disconnected)") }
        text(26, 60, parts.joined(separator: " · "), class: "subtitle")
    }

    // MARK: (a) Heart rate

    private mutating func heartRatePanel(_ frame: Frame) {
        text(frame.x, frame.y - 14, "Heart rate", class: "panel")
        zoneLegend(right: frame.right, y: frame.y - 14)
        var low = samples.map(\.bpm).min() ?? 60
        var high = samples.map(\.bpm).max() ?? 120
        if let bounds = plot.zones?.lowerBounds.filter(\.isFinite), let first = bounds.first, let last = bounds.last {
            // Show the bands around the data, not every band down to zero.
            low = min(low, max(first, low - 10))
            high = max(high, min(last, high + 10))
        }
        let ticks = SVGText.ticks(low - 3, high + 3, count: 5)
        let y = Scale(domain: (ticks.low, ticks.high), range: (frame.bottom, frame.y))
        let x = timeScale(frame)
        clip("hr", frame)
        if let zones = plot.zones { zoneBands(zones, frame: frame, y: y) }
        valueAxis(frame, ticks: ticks, scale: y, unit: "bpm")
        timeAxis(frame, scale: x, domain: timeDomain, utcOffset: plot.utcOffset, clock: plot.timeAxis == .clock)
        gapShading(frame, x: x, gaps: gapIndex.gaps, labelled: true)
        guard !samples.isEmpty else {
            emptyNote(frame, "no heart rate in this session")
            return
        }
        out += #"<g clip-path="url(#hr)">"# + "\n"
        let columns = Int(frame.width)
        var points: [(x: Double, y: Double, zone: Int, first: Double, last: Double)] = []
        if samples.count <= columns * 2 {
            points = samples.map { (x($0.time), y($0.bpm), zoneIndex($0.zone), $0.time, $0.time) }
        } else {
            // One point per pixel column (its mean and dominant zone), over the min–max envelope.
            var envelope: [[Double]] = Array(repeating: [], count: 6)  // per zone: x, ymin, ymax triples
            for bin in bins(samples, frame: frame, time: \.time, value: \.bpm, zone: { $0.zone }) {
                let px = frame.x + Double(bin.column) + 0.5
                points.append((px, y(bin.mean), bin.zone, bin.first, bin.last))
                if y(bin.minimum) - y(bin.maximum) >= 1 { envelope[bin.zone] += [px, y(bin.minimum), y(bin.maximum)] }
            }
            for (zone, values) in envelope.enumerated() where !values.isEmpty {
                var path = ""
                for index in stride(from: 0, to: values.count - 2, by: 3) {
                    path += "M\(n(values[index])) \(n(values[index + 1]))V\(n(values[index + 2]))"
                }
                out += #"<path class="env" stroke="\#(SessionPlot.zoneColors[zone])" stroke-opacity="0.35" d="\#(path)"/>"# + "\n"
            }
        }
        // Runs of one colour, broken at gaps; a lone point between gaps is a dot.
        var index = 0
        while index < points.count {
            let zone = points[index].zone
            var path = "M\(n(points[index].x)) \(n(points[index].y))"
            var next = index
            while next + 1 < points.count, !gapIndex.separates(points[next].last, points[next + 1].first) {
                next += 1
                path += "L\(n(points[next].x)) \(n(points[next].y))"
                if points[next].zone != zone { break }
            }
            if next == index {
                let isolated = index == 0 || gapIndex.separates(points[index - 1].last, points[index].first)
                if isolated {
                    out += #"<circle cx="\#(n(points[index].x))" cy="\#(n(points[index].y))" r="2" fill="\#(SessionPlot.zoneColors[zone])"/>"# + "\n"
                }
                index += 1
            } else {
                out += #"<path class="line" stroke="\#(SessionPlot.zoneColors[zone])" d="\#(path)"/>"# + "\n"
                // The next run starts where this one ended (the colour changes at a point, not a gap).
                index = points[next].zone != zone ? next : next + 1
            }
        }
        out += "</g>\n"
    }

    private mutating func zoneBands(_ zones: PlotZones, frame: Frame, y: Scale) {
        let bounds = zones.lowerBounds.filter(\.isFinite).sorted()
        for (offset, lower) in bounds.enumerated() where offset < 5 {
            let upper = offset + 1 < bounds.count ? bounds[offset + 1] : (zones.maximum ?? .infinity)
            let top = max(frame.y, y(min(upper, y.domain.1)))
            let bottom = min(frame.bottom, y(lower))
            guard bottom > top else { continue }
            out += #"<rect x="\#(n(frame.x))" y="\#(n(top))" width="\#(n(frame.width))" height="\#(n(bottom - top))" fill="\#(SessionPlot.zoneColors[offset + 1])" fill-opacity="0.09"/>"# + "\n"
            text(frame.right - 4, bottom - 4, SessionPlot.zoneNames[offset + 1], class: "tick", anchor: "end",
                 fill: SessionPlot.zoneColors[offset + 1])
        }
    }

    private mutating func zoneLegend(right: Double, y: Double) {
        var x = right
        for zone in stride(from: 5, through: 0, by: -1) {
            let label = zoneLabel(zone)
            let estimated = Double(label.count) * 6.6 + 18
            x -= estimated
            legendSwatch(x: x, y: y, color: SessionPlot.zoneColors[zone], label: label)
            x -= 10
        }
    }

    /// `Z3 133–152 bpm`, `below Z1 (< 95)`, `Z5 ≥ 171 bpm`.
    private func zoneLabel(_ zone: Int) -> String {
        guard let bounds = plot.zones?.lowerBounds.filter(\.isFinite).sorted(), !bounds.isEmpty else {
            return SessionPlot.zoneNames[zone]
        }
        if zone == 0 { return "below Z1 (< \(n(bounds[0], 0)))" }
        guard zone - 1 < bounds.count else { return SessionPlot.zoneNames[zone] }
        let lower = n(bounds[zone - 1], 0)
        if zone < bounds.count { return "Z\(zone) \(lower)–\(n(bounds[zone] - 1, 0)) bpm" }
        if let maximum = plot.zones?.maximum { return "Z\(zone) \(lower)–\(n(maximum, 0)) bpm" }
        return "Z\(zone) ≥ \(lower) bpm"
    }

    // MARK: (b) Tachogram

    private mutating func tachogramPanel(_ frame: Frame) {
        let corrected = beats.lazy.filter(\.corrected).count
        text(frame.x, frame.y - 14, "RR intervals (tachogram)", class: "panel")
        if corrected > 0 {
            let label = "corrected beat (\(SVGText.grouped(corrected)))"
            let x0 = frame.right - Double(label.count) * 6.6 - 18
            out += #"<circle class="fix" cx="\#(n(x0 + 5))" cy="\#(n(frame.y - 18))" r="4"/>"# + "\n"
            text(x0 + 15, frame.y - 14, label, class: "tick")
        }
        let range = rrRange()
        let ticks = SVGText.ticks(range.0, range.1, count: 4)
        let y = Scale(domain: (ticks.low, ticks.high), range: (frame.bottom, frame.y))
        let x = timeScale(frame)
        clip("rr", frame)
        valueAxis(frame, ticks: ticks, scale: y, unit: "ms")
        timeAxis(frame, scale: x, domain: timeDomain, utcOffset: plot.utcOffset, clock: plot.timeAxis == .clock)
        gapShading(frame, x: x, gaps: gapIndex.gaps, labelled: true)
        guard !beats.isEmpty else {
            emptyNote(frame, "no RR intervals in this session")
            return
        }
        out += #"<g clip-path="url(#rr)">"# + "\n"
        let columns = Int(frame.width)
        var points: [(x: Double, y: Double, first: Double, last: Double)] = []
        if beats.count <= columns * 2 {
            points = beats.map { (x($0.time), y($0.rrMs), $0.time, $0.time) }
        } else {
            var envelope = ""
            for bin in bins(beats, frame: frame, time: \.time, value: \.rrMs, zone: { _ in 0 }) {
                let px = frame.x + Double(bin.column) + 0.5
                points.append((px, y(bin.mean), bin.first, bin.last))
                envelope += "M\(n(px)) \(n(y(bin.minimum)))V\(n(y(bin.maximum)))"
            }
            out += ##"<path class="env" stroke="#2b6cb0" stroke-opacity="0.3" d="\##(envelope)"/>"## + "\n"
        }
        var path = ""
        for (index, point) in points.enumerated() {
            let joined = index > 0 && !gapIndex.separates(points[index - 1].last, point.first)
            path += (joined ? "L" : "M") + "\(n(point.x)) \(n(point.y))"
        }
        out += #"<path class="rr" d="\#(path)"/>"# + "\n"
        // Corrected beats: one marker per 2×2 pixels at most.
        var seen = Set<Int>()
        var markers = 0
        for beat in beats where beat.corrected {
            let px = x(beat.time)
            let py = min(max(y(beat.rrMs), frame.y), frame.bottom)
            let key = Int(min(max(px, -1e6), 1e6) / 2) &* 65_536 &+ Int(min(max(py, -1e4), 1e4) / 2)
            guard seen.insert(key).inserted, markers < 5000 else { continue }
            markers += 1
            out += #"<circle class="fix" cx="\#(n(px))" cy="\#(n(py))" r="3.2"/>"# + "\n"
        }
        out += "</g>\n"
    }

    /// The RR axis's range: the 0.5th to 99.5th percentile, widened a little, so that a few
    /// absurd values (kept uncorrected) do not flatten the rest; those are clipped at the edge.
    private func rrRange() -> (Double, Double) {
        rrAxisRange(beats.map(\.rrMs).sorted())
    }

    // MARK: (c) Poincaré

    private mutating func poincarePanel(_ frame: Frame) {
        var pairs: [(Double, Double)] = []
        var pairCorrected: [Bool] = []
        pairs.reserveCapacity(beats.count)
        for index in beats.indices.dropFirst() where !gapIndex.separates(beats[index - 1].time, beats[index].time) {
            pairs.append((beats[index - 1].rrMs, beats[index].rrMs))
            pairCorrected.append(beats[index - 1].corrected || beats[index].corrected)
        }
        let figures = plot.poincare ?? PoincareFigures(pairs: pairs)
        text(frame.x, frame.y - 14, "Poincaré plot", class: "panel")
        let range = rrRange()
        let ticks = SVGText.ticks(range.0, range.1, count: 4)
        let x = Scale(domain: (ticks.low, ticks.high), range: (frame.x, frame.right))
        let y = Scale(domain: (ticks.low, ticks.high), range: (frame.bottom, frame.y))
        clip("pc", frame)
        valueAxis(frame, ticks: ticks, scale: y, unit: "RR[n+1] (ms)")
        // The x axis: the same ticks, RR[n].
        var value = ticks.low
        let places = SVGText.places(for: ticks.step)
        while value <= ticks.high + ticks.step / 2 {
            let px = x(value)
            out += #"<line class="grid" x1="\#(n(px))" y1="\#(n(frame.y))" x2="\#(n(px))" y2="\#(n(frame.bottom))"/>"# + "\n"
            text(px, frame.bottom + 16, n(value, places), class: "tick", anchor: "middle")
            value += ticks.step
        }
        text(frame.x + frame.width / 2, frame.bottom + 36, "RR[n] (ms)", class: "note", anchor: "middle")
        out += #"<rect class="axis" x="\#(n(frame.x))" y="\#(n(frame.y))" width="\#(n(frame.width))" height="\#(n(frame.height))"/>"# + "\n"
        guard !pairs.isEmpty else {
            emptyNote(frame, "no successive beats")
            return
        }
        out += #"<g clip-path="url(#pc)">"# + "\n"
        out += ##"<line x1="\##(n(frame.x))" y1="\##(n(frame.bottom))" x2="\##(n(frame.right))" y2="\##(n(frame.y))" stroke="#999" stroke-dasharray="4 4"/>"## + "\n"
        if pairs.count <= 6000 {
            var dots = ""
            var fixes = ""
            for (index, pair) in pairs.enumerated() {
                let circle = #"<circle cx="\#(n(x(pair.0)))" cy="\#(n(y(pair.1)))" r="2.2"/>"#
                if pairCorrected[index] { fixes += circle } else { dots += circle }
            }
            out += ##"<g fill="#2b6cb0" fill-opacity="0.35">"## + dots + "</g>\n"
            out += #"<g class="fix" fill-opacity="0.8">"# + fixes + "</g>\n"
        } else {
            // Beyond 6,000 pairs, a density map: 100 × 100 cells, darker where more pairs fall.
            let cells = 100
            var counts = [Int](repeating: 0, count: cells * cells)
            for pair in pairs {
                let cx = (x(pair.0) - frame.x) / frame.width * Double(cells)
                let cy = (y(pair.1) - frame.y) / frame.height * Double(cells)
                guard cx >= 0, cy >= 0, cx < Double(cells), cy < Double(cells) else { continue }
                counts[Int(cy) * cells + Int(cx)] += 1
            }
            let most = Double(counts.max() ?? 1).squareRoot()
            let size = frame.width / Double(cells)
            var cellsText = ""
            for (index, count) in counts.enumerated() where count > 0 {
                let opacity = 0.15 + 0.85 * Double(count).squareRoot() / max(most, 1)
                cellsText += #"<rect x="\#(n(frame.x + Double(index % cells) * size))" y="\#(n(frame.y + Double(index / cells) * size))" width="\#(n(size))" height="\#(n(size))" fill-opacity="\#(n(opacity, 2))"/>"#
            }
            out += ##"<g fill="#2b6cb0">"## + cellsText + "</g>\n"
        }
        if let figures, figures.sd1.isFinite, figures.sd2.isFinite {
            var mean = RunningVariance()
            for pair in pairs { mean.add(pair.0) }
            let center = (x(mean.mean), y(mean.mean))
            let pixelsPerMs = frame.width / (ticks.high - ticks.low)
            out += ##"<ellipse cx="\##(n(center.0))" cy="\##(n(center.1))" rx="\##(n(figures.sd2 * pixelsPerMs))" ry="\##(n(figures.sd1 * pixelsPerMs))" transform="rotate(-45 \##(n(center.0)) \##(n(center.1)))" fill="none" stroke="#c0392b" stroke-width="1.8"/>"## + "\n"
        }
        out += "</g>\n"
        if let figures {
            text(frame.right + 16, frame.y + 16, "SD1 \(n(figures.sd1)) ms", class: "note")
            text(frame.right + 16, frame.y + 34, "SD2 \(n(figures.sd2)) ms", class: "note")
            if figures.sd2 > 0 { text(frame.right + 16, frame.y + 52, "SD1/SD2 \(n(figures.sd1 / figures.sd2, 2))", class: "note") }
        }
        text(frame.right + 16, frame.y + 76, "\(SVGText.grouped(pairs.count)) pairs", class: "note")
        text(frame.right + 16, frame.y + 100, "ellipse: SD1 across,", class: "tick")
        text(frame.right + 16, frame.y + 116, "SD2 along the identity", class: "tick")
    }

    // MARK: (d) Time in zones

    private mutating func zoneTimePanel(_ frame: Frame) {
        text(frame.x, frame.y - 14, "Time in zones", class: "panel")
        var seconds = [Double](repeating: 0, count: 6)
        for index in samples.indices.dropFirst() {
            let previous = samples[index - 1]
            guard !gapIndex.separates(previous.time, samples[index].time) else { continue }
            seconds[zoneIndex(previous.zone)] += samples[index].time - previous.time
        }
        let total = seconds.reduce(0, +)
        guard total > 0 else {
            emptyNote(frame, "no time to count")
            return
        }
        let longest = seconds.max() ?? 1
        // Tenths of a percent that add up to 100.0 (each rounded alone, they need not).
        let tenths = Shares.rounded(seconds, to: 1000)
        let rowHeight = frame.height / 6
        let labelWidth = 150.0
        for (row, zone) in (0...5).reversed().enumerated() {
            let top = frame.y + Double(row) * rowHeight
            let barWidth = (frame.width - labelWidth) * seconds[zone] / longest
            text(frame.x, top + rowHeight / 2 + 4, zoneLabel(zone), class: "tick")
            out += #"<rect x="\#(n(frame.x + labelWidth))" y="\#(n(top + 8))" width="\#(n(max(barWidth, 1)))" height="\#(n(rowHeight - 16))" rx="3" fill="\#(SessionPlot.zoneColors[zone])"/>"# + "\n"
            text(frame.x + labelWidth + max(barWidth, 1) + 8, top + rowHeight / 2 + 4,
                 "\(SVGText.duration(seconds[zone])) · \(tenths[zone] / 10).\(tenths[zone] % 10) %", class: "note")
        }
    }

    // MARK: Axes and pieces

    private func timeScale(_ frame: Frame) -> Scale {
        Scale(domain: timeDomain, range: (frame.x, frame.right))
    }

    private func zoneIndex(_ zone: Int) -> Int { min(max(zone, 0), 5) }

    /// Per pixel column of `frame`: minimum, maximum, mean and dominant zone of the values in it.
    private func bins<T>(_ items: [T], frame: Frame, time: (T) -> Double, value: (T) -> Double,
                         zone: (T) -> Int) -> [Bin] {
        let columns = max(1, Int(frame.width))
        let scale = timeScale(frame)
        var result: [Bin] = []
        var current: Bin?
        var zoneCounts = [Int](repeating: 0, count: 6)
        func close(_ bin: inout Bin?) {
            guard var done = bin else { return }
            done.zone = zoneCounts.indices.max { zoneCounts[$0] < zoneCounts[$1] } ?? 0
            result.append(done)
            zoneCounts = [Int](repeating: 0, count: 6)
            bin = nil
        }
        for item in items {
            let t = time(item)
            let v = value(item)
            let column = min(max(Int(min(max(scale(t) - frame.x, 0), Double(columns - 1))), 0), columns - 1)
            if let open = current, open.column != column || gapIndex.separates(open.last, t) { close(&current) }
            if current == nil { current = Bin(column: column, first: t) }
            current?.add(v, time: t)
            zoneCounts[zoneIndex(zone(item))] += 1
        }
        close(&current)
        return result
    }
}

/// One pixel column's values.
private struct Bin {
    var column: Int
    var first: Double
    var last: Double
    var minimum = Double.infinity
    var maximum = -Double.infinity
    var sum = 0.0
    var count = 0
    var zone = 0

    init(column: Int, first: Double) {
        self.column = column
        self.first = first
        last = first
    }

    var mean: Double { count > 0 ? sum / Double(count) : 0 }

    mutating func add(_ value: Double, time: Double) {
        minimum = min(minimum, value)
        maximum = max(maximum, value)
        sum += value
        count += 1
        last = time
    }
}
