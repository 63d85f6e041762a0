// The pieces both session plots draw with (``SessionPlot`` for `rawble hr`'s sessions,
// ``ECGPlot`` for `rawble ecg`'s): the document and its shared style, scales, frames, value and
// time axes, gaps, legends, notes and text. Pure: text is appended to the renderer's `out`.

/// A linear map from data to pixels.
struct Scale {
    var domain: (Double, Double)
    var range: (Double, Double)

    func callAsFunction(_ value: Double) -> Double {
        let span = domain.1 - domain.0
        guard span != 0, value.isFinite else { return range.0 }
        return range.0 + (value - domain.0) / span * (range.1 - range.0)
    }
}

/// The panels' rectangle.
struct Frame {
    var x: Double
    var y: Double
    var width: Double
    var height: Double
    var right: Double { x + width }
    var bottom: Double { y + height }
}

/// Which gaps lie between two times: binary search over the gaps sorted by start, with the
/// running maximum of their ends (gaps may overlap).
struct GapIndex {
    /// The gaps with finite ends and some length, sorted by start.
    let gaps: [PlotGap]
    private let endsSoFar: [Double]

    init(_ gaps: [PlotGap]) {
        self.gaps = gaps.filter { $0.start.isFinite && $0.end.isFinite && $0.end > $0.start }.sorted { $0.start < $1.start }
        var furthest = -Double.infinity
        endsSoFar = self.gaps.map { gap in
            furthest = max(furthest, gap.end)
            return furthest
        }
    }

    /// Whether a gap overlaps the open interval between `a` and `b` (`a` ≤ `b`): the samples at
    /// a gap's two ends are separated by it, samples beside it are not.
    func separates(_ a: Double, _ b: Double) -> Bool {
        var low = 0
        var high = gaps.count
        while low < high {  // the number of gaps starting before b
            let middle = (low + high) / 2
            if gaps[middle].start < b { low = middle + 1 } else { high = middle }
        }
        return low > 0 && endsSoFar[low - 1] > a
    }
}

/// An RR axis's range over `values` (ms, sorted): the 0.5th to 99.5th percentile, widened a
/// little, so that a few absurd values do not flatten the rest (those are clipped at the edge);
/// 600–1000 ms with no value.
func rrAxisRange(_ values: [Double]) -> (Double, Double) {
    guard let first = values.first, let last = values.last else { return (600, 1000) }
    let low = values[min(values.count - 1, values.count / 200)]
    let high = values[max(0, values.count - 1 - values.count / 200)]
    let pad = max(20, (high - low) * 0.08)
    return (max(first, low - pad), min(last, high + pad) + (high == low ? 40 : 0))
}

/// A renderer of one of the session plots: it writes the SVG into `out`.
protocol SVGPlotRenderer {
    var out: String { get set }
}

extension SVGPlotRenderer {
    /// The XML declaration, the `svg` element, the style both plots share with `styles` (the
    /// plot's own rules) before the `.empty` rule, and the white background.
    mutating func beginDocument(width: Double, height: Double, styles: [String]) {
        out.reserveCapacity(64 * 1024)
        out += #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        out += #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(n(width))" height="\#(n(height))" viewBox="0 0 \#(n(width)) \#(n(height))">"# + "\n"
        let rules = [
            "text{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;font-size:12px;fill:#333}",
            ".title{font-size:22px;font-weight:bold;fill:#111}",
            ".subtitle{font-size:13px;fill:#555}",
            ".panel{font-size:15px;font-weight:bold;fill:#222}",
            ".note{font-size:12px;fill:#555}",
            ".tick{font-size:11px;fill:#555}",
            ".axis{stroke:#888;stroke-width:1;fill:none}",
            ".grid{stroke:#e4e7eb;stroke-width:1;fill:none}",
        ] + styles + [".empty{font-size:14px;fill:#888;font-style:italic}"]
        out += "<style>\n" + rules.joined(separator: "\n") + "\n</style>\n"
        out += ##"<rect width="100%" height="100%" fill="#ffffff"/>"## + "\n"
    }

    /// Horizontal grid lines at the ticks with their labels, the unit turned along the axis,
    /// and the frame's outline.
    mutating func valueAxis(_ frame: Frame, ticks: (low: Double, high: Double, step: Double), scale: Scale, unit: String) {
        let places = SVGText.places(for: ticks.step)
        var value = ticks.low
        var count = 0
        while value <= ticks.high + ticks.step / 2, count < 100 {
            let py = scale(value)
            out += #"<line class="grid" x1="\#(n(frame.x))" y1="\#(n(py))" x2="\#(n(frame.right))" y2="\#(n(py))"/>"# + "\n"
            text(frame.x - 6, py + 4, n(value, places), class: "tick", anchor: "end")
            value += ticks.step
            count += 1
        }
        let middle = frame.y + frame.height / 2
        out += #"<text class="note" x="\#(n(frame.x - 50))" y="\#(n(middle))" text-anchor="middle" transform="rotate(-90 \#(n(frame.x - 50)) \#(n(middle)))">\#(SVGText.escaped(unit))</text>"# + "\n"
        out += #"<rect class="axis" x="\#(n(frame.x))" y="\#(n(frame.y))" width="\#(n(frame.width))" height="\#(n(frame.height))"/>"# + "\n"
    }

    /// Ticks under the frame over `domain` (seconds since 1970): clock times in the local time
    /// `utcOffset` seconds from UTC, or with `clock` false the time elapsed since the domain's start.
    mutating func timeAxis(_ frame: Frame, scale: Scale, domain: (Double, Double), utcOffset: Int, clock: Bool) {
        let step = SVGText.timeStep(span: domain.1 - domain.0, count: max(2, Int(frame.width / 110)))
        let origin = clock ? -Double(utcOffset) : domain.0
        var tick = ((domain.0 - origin) / step).rounded(.up) * step + origin
        var count = 0
        while tick <= domain.1, count < 200 {
            let px = scale(tick)
            out += #"<line class="axis" x1="\#(n(px))" y1="\#(n(frame.bottom))" x2="\#(n(px))" y2="\#(n(frame.bottom + 4))"/>"# + "\n"
            text(px, frame.bottom + 17, SVGText.clockText(tick - origin, withSeconds: step < 60, clock: clock),
                 class: "tick", anchor: "middle")
            tick += step
            count += 1
        }
        let label = clock ? "time (\(SVGText.utcOffsetText(utcOffset)))" : "elapsed (h:mm\(step < 60 ? ":ss" : ""))"
        text(frame.right, frame.bottom + 34, label, class: "note", anchor: "end")
    }

    /// Gaps as light grey columns; `labelled`: "no data" in those wide enough.
    mutating func gapShading(_ frame: Frame, x: Scale, gaps: [PlotGap], labelled: Bool) {
        for gap in gaps {
            let left = max(frame.x, x(gap.start))
            let right = min(frame.right, x(gap.end))
            guard right > left else { continue }
            out += ##"<rect x="\##(n(left))" y="\##(n(frame.y))" width="\##(n(max(right - left, 1)))" height="\##(n(frame.height))" fill="#eceff3"/>"## + "\n"
            if labelled, right - left > 40 {
                text((left + right) / 2, frame.y + 16, "no data", class: "tick", anchor: "middle")
            }
        }
    }

    /// A legend entry at `x`: a square of `color`, then `label`.
    mutating func legendSwatch(x: Double, y: Double, color: String, label: String) {
        out += #"<rect x="\#(n(x))" y="\#(n(y - 10))" width="11" height="11" rx="2" fill="\#(color)"/>"# + "\n"
        text(x + 15, y, label, class: "tick")
    }

    /// A clip path `id` of the frame's rectangle.
    mutating func clip(_ id: String, _ frame: Frame) {
        out += #"<clipPath id="\#(id)"><rect x="\#(n(frame.x))" y="\#(n(frame.y))" width="\#(n(frame.width))" height="\#(n(frame.height))"/></clipPath>"# + "\n"
    }

    /// `message` in the middle of an empty frame.
    mutating func emptyNote(_ frame: Frame, _ message: String) {
        text(frame.x + frame.width / 2, frame.y + frame.height / 2, message, class: "empty", anchor: "middle")
    }

    /// A `text` element of class `name` (the content escaped).
    mutating func text(_ x: Double, _ y: Double, _ content: String, class name: String,
                       anchor: String? = nil, fill: String? = nil) {
        out += #"<text class="\#(name)" x="\#(n(x))" y="\#(n(y))""#
        if let anchor { out += #" text-anchor="\#(anchor)""# }
        if let fill { out += #" style="fill:\#(fill)""# }
        out += ">" + SVGText.escaped(content) + "</text>\n"
    }

    /// A coordinate or value, at most `places` decimals.
    func n(_ value: Double, _ places: Int = 1) -> String { SVGText.number(value, places: places) }
}

/// Several SVG documents (the plots of a file of several straps) as one, one below the other:
/// each becomes a nested `svg` at its offset, its own size and styles kept.
public enum SVGStack {
    /// `documents` (each as ``SessionPlot/svg()`` writes it) stacked; the widest sets the width.
    public static func stacked(_ documents: [String]) -> String {
        var body = ""
        var y = 0.0
        var width = 0.0
        for document in documents {
            guard let start = document.firstRange(of: "<svg ") else { continue }
            let element = document[start.lowerBound...]
            let size = (attribute("width", in: element), attribute("height", in: element))
            body += #"<svg x="0" y="\#(Int(y))" "# + element.dropFirst(5) + "\n"
            y += size.1 ?? 0
            width = max(width, size.0 ?? 0)
        }
        return #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
            + #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(width))" height="\#(Int(y))" viewBox="0 0 \#(Int(width)) \#(Int(y))">"# + "\n"
            + body + "</svg>\n"
    }

    /// The number in `name="…"` of the element that starts `element`.
    private static func attribute(_ name: String, in element: Substring) -> Double? {
        guard let end = element.firstIndex(of: ">"),
              let found = element[..<end].firstRange(of: " \(name)=\"") else { return nil }
        let value = element[found.upperBound...].prefix { $0 != "\"" }
        return Double(value)
    }
}
