import Foundation
import RawbleWire
#if canImport(FoundationXML)
import FoundationXML
#endif
@testable import RawbleReport
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// Whether `svg` is well-formed XML (Foundation's XMLParser, libxml2 underneath); the parser's
/// error when not.
private func xmlError(_ svg: String) -> String? {
    let parser = XMLParser(data: Data(svg.utf8))
    return parser.parse() ? nil : (parser.parserError.map { "\($0)" } ?? "not well-formed")
}

/// The points of every `<path d="…">` of `class`, as runs joined by `L` (a new run at each `M`).
private func runs(in svg: String, class name: String) -> [[(Double, Double)]] {
    var result: [[(Double, Double)]] = []
    for line in svg.split(separator: "\n") where line.contains("class=\"\(name)\"") && line.hasPrefix("<path") {
        guard let start = line.range(of: " d=\"")?.upperBound,
              let end = line[start...].firstIndex(of: "\"") else { continue }
        var command: Character = "M"
        var number = ""
        var numbers: [Double] = []
        func flush() {
            if let value = Double(number) { numbers.append(value) }
            number = ""
        }
        for character in line[start..<end] {
            if character == "M" || character == "L" || character == "V" {
                flush()
                if numbers.count == 2 {
                    if command == "M" { result.append([]) }
                    result[result.count - 1].append((numbers[0], numbers[1]))
                }
                numbers = []
                command = character
            } else if character == " " {
                flush()
            } else {
                number.append(character)
            }
        }
        flush()
        if numbers.count == 2 {
            if command == "M" { result.append([]) }
            result[result.count - 1].append((numbers[0], numbers[1]))
        }
    }
    return result
}

/// Runs a tool and waits for it (bounded); its exit status and standard error.
private func run(_ tool: String, _ arguments: [String]) async throws -> (status: Int32, stderr: String) {
    try await within(seconds: 120) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        return try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { process in
                let text = String(decoding: errors.fileHandleForReading.readToEndRetryingInterrupts(), as: UTF8.self)
                continuation.resume(returning: (process.terminationStatus, text))
            }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
    }
}

/// `rsvg-convert` (Debian's librsvg2-bin) on PATH; a missing one fails the test with the fix.
private func rsvgConvert() throws -> String {
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
        let candidate = "\(directory)/rsvg-convert"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    throw MissingTool(name: "rsvg-convert")
}

/// Renders `svg` to a PNG with rsvg-convert; the PNG's bytes (and the renderer's complaint, if any).
private func renderPNG(_ svg: String, to output: String? = nil) async throws -> [UInt8] {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-plot-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let input = directory.appendingPathComponent("plot.svg").path
    let png = output ?? directory.appendingPathComponent("plot.png").path
    try Data(svg.utf8).write(to: URL(fileURLWithPath: input))
    let result = try await run(try rsvgConvert(), ["--format", "png", "--background-color", "white", "--output", png, input])
    #expect(result.status == 0, "rsvg-convert: \(result.stderr)")
    #expect(!result.stderr.contains("rror"), "rsvg-convert: \(result.stderr)")
    return Array(try Data(contentsOf: URL(fileURLWithPath: png)))
}

/// A PNG's width and height from its IHDR chunk.
private func pngSize(_ bytes: [UInt8]) -> (Int, Int)? {
    guard bytes.count > 24, bytes.prefix(8) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] else { return nil }
    func u32(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
    return (u32(16), u32(20))
}

@Suite("Session plots: one SVG with heart rate by zone, tachogram, Poincaré, time in zones")
struct SessionPlotTests {
    @Test("a synthetic session (a gap, corrected beats, every zone) renders with rsvg-convert to a plausible PNG")
    func rendersWithRsvg() async throws {
        let session = SyntheticSession()
        #expect(Set(session.samples.map(\.zone)) == [0, 1, 2, 3, 4, 5], "the session covers every zone")
        #expect(session.beats.contains { $0.corrected })
        let svg = session.plot().svg()
        #expect(xmlError(svg) == nil)
        // RAWBLE_REPORT_EXAMPLE=docs/report-example.png regenerates the README's picture.
        let example = ProcessInfo.processInfo.environment["RAWBLE_REPORT_EXAMPLE"]
        let png = try await renderPNG(svg, to: example)
        let size = try #require(pngSize(png))
        #expect(size.0 == 1200 && size.1 == 1042)
        #expect(png.count > 40_000 && png.count < 400_000, "\(png.count) bytes")
    }

    @Test("a 24-hour session (~100,000 beats) stays a small SVG (drawn per pixel column) and renders")
    func longSession() async throws {
        let session = SyntheticSession(minutes: 24 * 60, seed: 7)
        #expect(session.beats.count > 90_000)
        let svg = session.plot(timeAxis: .elapsed).svg()
        #expect(svg.utf8.count < 2_000_000, "\(svg.utf8.count) bytes")
        #expect(svg.contains("2026-11-22 06:14 → 2026-11-23 06:14 (UTC+01:00) · 24 h 0 min"))
        #expect(xmlError(svg) == nil)
        let png = try await renderPNG(svg)
        #expect(pngSize(png) != nil)
    }

    @Test("no line crosses a gap, in the heart-rate and the RR panels")
    func gapsAreGaps() throws {
        for minutes: Double in [42, 24 * 60] {  // drawn point by point, and per pixel column
            let session = SyntheticSession(minutes: minutes)
            let svg = session.plot().svg()
            let gap = try #require(session.gaps.first)
            let first = min(session.samples[0].time, session.beats[0].time)
            let last = max(session.samples[session.samples.count - 1].time, session.beats[session.beats.count - 1].time)
            let fraction: Double = ((gap.start + gap.end) / 2 - first) / (last - first)
            let middle: Double = 70 + fraction * 1104
            for name in ["line", "rr"] {
                let drawn = runs(in: svg, class: name)
                #expect(drawn.count >= 2, "\(name): drawn in runs")
                for run in drawn {
                    for (a, b) in zip(run, run.dropFirst()) {
                        #expect(!(a.0 < middle && b.0 > middle), "\(name) crosses the gap at x \(middle): \(a) → \(b)")
                    }
                }
            }
        }
    }

    @Test("a device name with markup is escaped, control characters dropped: still well-formed XML")
    func escaping() async throws {
        let session = SyntheticSession(minutes: 3)
        let svg = session.plot(deviceName: "Strap <&\"'> \u{1}\u{FFFE}\u{7F}x").svg()
        #expect(svg.contains("Strap &lt;&amp;&quot;&apos;&gt; x — 2026-11-22 06:14"))
        #expect(xmlError(svg) == nil)
        #expect(SVGText.escaped("a\tb\u{0}c\u{85}d") == "a bcd")
    }

    @Test("empty and degenerate inputs give a plot that says so, never a trap")
    func degenerate() {
        let inputs: [SessionPlot] = [
            SessionPlot(deviceName: "", samples: [], beats: []),
            SessionPlot(deviceName: "one", samples: [PlotSample(time: 10, bpm: 70, zone: 9)], beats: [PlotBeat(time: 10, rrMs: 0)]),
            SessionPlot(deviceName: "odd", samples: [PlotSample(time: .nan, bpm: 70, zone: -1), PlotSample(time: 5, bpm: .infinity, zone: 2)],
                        beats: [PlotBeat(time: 1, rrMs: 1e300), PlotBeat(time: 2, rrMs: -5), PlotBeat(time: 3, rrMs: 800, corrected: true),
                                PlotBeat(time: 4, rrMs: 0)],
                        gaps: [PlotGap(start: 3, end: 2), PlotGap(start: .nan, end: 4)],
                        zones: PlotZones(lowerBounds: [.nan, 100, 90]), poincare: PoincareFigures(sd1: .infinity, sd2: 0),
                        utcOffset: -19_800, width: -5),
        ]
        for plot in inputs {
            let svg = plot.svg()
            #expect(xmlError(svg) == nil, "\(plot.deviceName)")
        }
        #expect(inputs[0].svg().contains("no heart rate in this session"))
        #expect(inputs[0].svg().contains("no RR intervals in this session"))
    }

    @Test("axis text: nice ticks, numbers and times without Foundation")
    func axisText() {
        #expect(SVGText.ticks(57, 183).step == 20)
        #expect(SVGText.ticks(57, 183).low == 40 && SVGText.ticks(57, 183).high == 200)
        #expect(SVGText.ticks(0.31, 0.92, count: 4).step == 0.2)
        #expect(SVGText.places(for: 0.2) == 1 && SVGText.places(for: 5) == 0)
        #expect(SVGText.niceStep(0) == 1 && SVGText.niceStep(.infinity) == 1)
        #expect(SVGText.number(12.25, places: 1) == "12.3" || SVGText.number(12.25, places: 1) == "12.2")
        #expect(SVGText.number(-0.05, places: 2) == "-0.05" && SVGText.number(3.0) == "3" && SVGText.number(.nan) == "0")
        #expect(SVGText.number(1e300) == "1000000000000")
        #expect(SVGText.grouped(1_234_567) == "1,234,567" && SVGText.grouped(12) == "12")
        #expect(SVGText.timeStep(span: 42 * 60) == 600 && SVGText.timeStep(span: 86_400) == 10_800)
        #expect(SVGText.clockText(3600 * 25 + 65, withSeconds: false, clock: true) == "01:01")
        #expect(SVGText.clockText(3600 * 25 + 65, withSeconds: true, clock: false) == "25:01:05")
        #expect(SVGText.dateTime(SyntheticSession.start) == "2026-11-22 05:14")
        #expect(SVGText.dateTime(951_825_600) == "2000-02-29 12:00")
        #expect(SVGText.utcOffsetText(3600) == "UTC+01:00" && SVGText.utcOffsetText(-19_800) == "UTC−05:30")
        #expect(SVGText.duration(6480) == "1 h 48 min" && SVGText.duration(750) == "12 min 30 s")
    }

    @Test("SD1 and SD2 of successive pairs: the spread across and along the identity line")
    func poincareFigures() throws {
        // Alternating 800/900: every pair lies across the line (SD1 large); a slow ramp lies along it.
        let alternating = (0..<100).map { $0 % 2 == 0 ? (800.0, 900.0) : (900.0, 800.0) }
        let figures = try #require(PoincareFigures(pairs: alternating))
        #expect(abs(figures.sd1 - 70.71) < 0.5 && figures.sd2 < 1)
        let ramp = (0..<100).map { (800.0 + Double($0), 801.0 + Double($0)) }
        let along = try #require(PoincareFigures(pairs: ramp))
        #expect(along.sd1 < 1e-9 && along.sd2 > 30)
        #expect(PoincareFigures(pairs: [(1, 2)]) == nil)
    }
}
