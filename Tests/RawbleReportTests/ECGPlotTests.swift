import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import RawbleReport
import Testing

/// Whether `svg` is well-formed XML (the parser's error when not).
private func xmlError(_ svg: String) -> String? {
    let parser = XMLParser(data: Data(svg.utf8))
    return parser.parse() ? nil : (parser.parserError.map { "\($0)" } ?? "not well-formed")
}

/// The `d` attributes of the paths of class `name`.
private func paths(in svg: String, class name: String) -> [String] {
    svg.split(separator: "\n").filter { $0.hasPrefix("<path class=\"\(name)\"") }.compactMap { line in
        guard let start = line.range(of: " d=\"")?.upperBound, let end = line[start...].firstIndex(of: "\"") else { return nil }
        return String(line[start..<end])
    }
}

@Suite("ECG plot: a strip with its R-peaks, both tachograms")
struct ECGPlotTests {
    /// 10 s of a spiky signal at 130 Hz from t = 1000 s, a spike each second.
    static let strip = (0..<1300).map { ECGPlotSample(time: 1000 + Double($0) / 130, microvolts: $0 % 130 == 40 ? 1200 : -50) }

    @Test("well-formed; one mark per R-peak; the tachograms not joined across a gap; the title escaped")
    func plot() {
        let peaks = Self.strip.filter { $0.microvolts > 1000 }
        let ecg = (1..<60).map { PlotBeat(time: 1000 + Double($0), rrMs: 1000) }
        let strap = (1..<60).map { PlotBeat(time: 1000.2 + Double($0), rrMs: 990) }
        let svg = ECGPlot(title: "a <b> & \u{1}c", strip: Self.strip, peaks: peaks, ecgBeats: ecg, strapBeats: strap,
                          gaps: [PlotGap(start: 1030.25, end: 1030.75)], notes: ["ECG: 59 beats"]).svg()
        #expect(xmlError(svg) == nil, "\(xmlError(svg) ?? "")")
        #expect(svg.contains("a &lt;b&gt; &amp; c"))
        #expect(svg.components(separatedBy: "<circle class=\"peak\"").count - 1 == 10)
        // Two runs each (an M at the start and one after the gap), in both tachograms.
        for name in ["rr-ecg", "rr-strap"] {
            let d = paths(in: svg, class: name).first ?? ""
            #expect(d.filter { $0 == "M" }.count == 2, "\(name): \(d.prefix(80))")
        }
        #expect(paths(in: svg, class: "ecg").first?.filter { $0 == "L" }.count == 1299)
    }

    @Test("nothing to draw, non-finite values, a long strip: still a well-formed document, never a trap")
    func edges() {
        let empty = ECGPlot(title: "", strip: [], peaks: [], ecgBeats: [], strapBeats: []).svg()
        #expect(xmlError(empty) == nil)
        #expect(empty.contains("no ECG in this strip") && empty.contains("no RR intervals in this session"))
        let odd = ECGPlot(title: "x", strip: [ECGPlotSample(time: .nan, microvolts: 1), ECGPlotSample(time: 5, microvolts: .infinity),
                                              ECGPlotSample(time: 6, microvolts: 1e300)],
                          peaks: [ECGPlotSample(time: 6, microvolts: -1e300)],
                          ecgBeats: [PlotBeat(time: 1, rrMs: .nan), PlotBeat(time: 2, rrMs: 1e300)],
                          strapBeats: [PlotBeat(time: -1e300, rrMs: 800)], gaps: [PlotGap(start: 3, end: .infinity)], width: -5).svg()
        #expect(xmlError(odd) == nil)
        // An hour of ECG: drawn per pixel column, a small document.
        let hour = (0..<468_000).map { ECGPlotSample(time: Double($0) / 130, microvolts: Double($0 % 130)) }
        let long = ECGPlot(title: "hour", strip: hour, peaks: [], ecgBeats: [], strapBeats: []).svg()
        #expect(xmlError(long) == nil)
        #expect(long.utf8.count < 200_000, "\(long.utf8.count) bytes")
    }
}
