import Foundation
import RawbleAnalysis
import RawbleLiveDisplay
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

/// `rawble hr --all --serve` against Bumble's controller serving three straps, its page opened
/// in a real headless browser (Debian's chromium, driven over the DevTools protocol by
/// Scripts/python/live_display_browser.py).
@Suite("rawble hr --serve in a real browser", .tags(.bumble),
       .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct LiveDisplayBrowserTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// What the page showed: its tiles when frozen (its event stream closed), every bpm it
    /// showed with the page's time, and the screenshot's colours.
    struct Shown: Decodable {
        struct Tile: Decodable {
            var id: String
            var name: String
            var bpm: String
            var zoneClass: String?
            var battery: String
            var link: String
            var trendPoints: Int
        }

        var tiles: [Tile]
        /// [Unix ms, strap id, text], as the page showed them.
        var observed: [[Observed]]
        var pixels: [String: Int]
        /// The tiles of the page reloaded, once its first event was shown: [id, bpm text].
        var reloaded: [[String]]
    }

    enum Observed: Decodable {
        case number(Double)
        case text(String)

        init(from decoder: any Decoder) throws {
            let value = try decoder.singleValueContainer()
            if let number = try? value.decode(Double.self) { self = .number(number) } else { self = .text(try value.decode(String.self)) }
        }

        var number: Double? { if case .number(let value) = self { value } else { nil } }
        var text: String? { if case .text(let value) = self { value } else { nil } }
    }

    @Test("three straps: a tile each with the strap's name, battery and link; every bpm shown is one the strap sent, shown soon after it sent it; the screenshot has each tile's zone colour; a reloaded page is whole at once")
    func threeStrapsInChromium() async throws {
        let chromium = try TestRequirements.chromium()
        let peer = try await BumblePeer.start(arguments: [
            "--strap-only", "--straps", "3", "--hr-interval", "0.25", "--hr-count", "1000",
        ])
        defer { peer.stop() }
        let address = Mutex<String?>(nil)
        let (pids, started) = AsyncStream<Int32>.makeStream()
        let run = Task {
            defer { started.finish() }
            return try await onOwnThread {
                try CLI.runBlocking(["hr", "--all", "--max", "3", "--serve", "127.0.0.1:0", "--max-hr", "185", "--json",
                                     "--timeout", "20", "--transport", peer.transport],
                                    trigger: CLI.Trigger(ready: { _, stderr in
                                        let marker = "serving the live display at "
                                        guard let line = stderr.split(separator: "\n").first(where: { $0.contains(marker) }),
                                              let range = line.range(of: marker) else { return false }
                                        address.withLock { $0 = String(line[range.upperBound...]) }
                                        return true
                                    }, readyLimit: .seconds(30), action: { pid in started.yield(pid) }),
                                    limit: .seconds(120))
            }
        }
        var iterator = pids.makeAsyncIterator()
        let pid = await iterator.next()
        let url = try #require(address.withLock { $0 }, "no URL on stderr")
        #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/"), "\(url)")
        let request = #"{"url": "\#(url)", "chromium": "\#(chromium)", "straps": 3, "values": 6, "seconds": 30}"#
        let lines: [Substring]
        do {
            lines = try await runPythonReference("live_display_browser.py", root: Self.root, input: request, seconds: 90)
        } catch {
            if let pid { kill(pid, SIGINT) }
            _ = try? await run.value
            throw error
        }
        if let pid { kill(pid, SIGINT) }
        let result = try await run.value
        #expect(result.status == 0, "\(result.stderr)")
        let shown = try JSONDecoder().decode(Shown.self, from: Data(try #require(lines.last).utf8))

        let straps = peer.straps
        #expect(straps.count == 3)
        #expect(Set(shown.tiles.map(\.id)) == Set(straps.map(\.address)), "one tile per strap: \(shown.tiles.map(\.id))")
        #expect(shown.tiles.count == 3)
        let zones = HeartRateZones(maxHeartRate: 185)
        var expectedColours: [String: Int] = [:]
        var latencies: [Double] = []
        for strap in straps {
            let tile = try #require(shown.tiles.first { $0.id == strap.address })
            #expect(tile.name == strap.name)
            #expect(tile.battery == "battery 87 %" && tile.link == "connected", "\(tile)")
            #expect(tile.trendPoints > 1, "a trend is drawn: \(tile)")
            let bpm = try #require(Int(tile.bpm), "\(tile)")
            // A value outside the plausible range has no zone: the tile has no zone colour.
            let zone = zones.zone(for: Double(bpm))
            #expect(tile.zoneClass == zone.map { "z\($0)" }, "\(tile.name) at \(bpm) bpm")
            let colour = if let zone { try #require(LiveDisplayPage.zoneColours[zone]) } else { LiveDisplayPage.noZoneColour }
            expectedColours[colour, default: 0] += 1

            // Every value the page showed is one the strap sent, shortly before.
            let sent = try peer.sentHeartRateMeasurements(strap: strap.address).compactMap { value -> (time: Double, bpm: Int)? in
                guard value.isValid, let measurement = try? HeartRateMeasurement.decode(value.bytes) else { return nil }
                return (value.time, Int(measurement.bpm))
            }
            let observed = shown.observed.filter { $0.count == 3 && $0[1].text == strap.address }
            let values = observed.compactMap { entry -> (time: Double, bpm: Int)? in
                guard let time = entry[0].number, let text = entry[2].text, let bpm = Int(text) else { return nil }
                return (time / 1000, bpm)
            }
            #expect(values.count >= 6, "\(strap.name): \(observed.count) shown")
            for value in values {
                // The latest time the strap sent this bpm before the page showed it (the page's
                // and the fixture's clocks are this machine's; 50 ms of slack for their reads).
                let match = sent.last { $0.bpm == value.bpm && $0.time <= value.time + 0.05 }
                guard let match else {
                    Issue.record("\(strap.name): the page showed \(value.bpm), which the strap never sent before")
                    continue
                }
                latencies.append(value.time - match.time)
            }
        }
        latencies.sort()
        let median = latencies.isEmpty ? 0 : latencies[latencies.count / 2]
        let worst = latencies.last ?? 0
        print("hr --serve in chromium: \(latencies.count) values, from the strap's send to the page: median \(Int(median * 1000)) ms, max \(Int(worst * 1000)) ms")
        // A correctness bound, generous under load: a value the page shows is the strap's
        // current one, not one left over from long before (the timing is the benchmark's).
        #expect(worst < 5, "a value shown \(worst) s after the strap sent it")
        // A reloaded page is whole from its first event: every strap's tile with its bpm.
        #expect(Set(shown.reloaded.compactMap(\.first)) == Set(straps.map(\.address)), "\(shown.reloaded)")
        #expect(shown.reloaded.allSatisfy { $0.count == 2 && Int($0[1]) != nil }, "\(shown.reloaded)")
        for (colour, tiles) in expectedColours {
            // A tile at half scale is ~120 × 100 pixels, most of it its background.
            #expect(shown.pixels[colour, default: 0] >= 3000 * tiles, "\(colour): \(shown.pixels[colour, default: 0]) pixels for \(tiles) tiles")
        }
    }
}
