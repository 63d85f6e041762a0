import Foundation
import RawbleStack
import Testing

/// The README's library example, compiled here exactly as the README shows it (never run: it
/// needs a strap in range). The test below keeps the two the same.
@Sendable func readmeLibraryExample() async throws {
    // README: begin
    let central = try await TransportAddress("hci0").openCentral()   // or "user:hci0", "tcp:127.0.0.1:9000", …
    let filter = ScanFilter(services: [.heartRateService])
    for try await strap in try await central.scan(ScanOptions(active: true, filter: filter)) where strap.isConnectable {
        try await central.stopScanning()
        let link = try await central.connect(to: strap.address, timeout: .seconds(10))
        let monitor = try await HeartRateMonitor.attach(to: GATTClient(bearer: link.att))
        for try await case .measurement(let measurement, _) in try await monitor.measurements() {
            print("♥ \(measurement)")                                // 72 bpm, contact detected, RR 0.813 s
        }
        break
    }
    await central.close()
    // README: end
}

@Suite struct ReadmeLibraryExampleTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theReadmeShowsTheCodeCompiledHere() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "## The library in a few lines"), "no library section in README.md")
        let rest = readme[section.upperBound...]
        let open = try #require(rest.range(of: "```swift\nimport RawbleStack\n\n"))
        let close = try #require(rest[open.upperBound...].range(of: "```"))
        let shown = rest[open.upperBound..<close.lowerBound].split(separator: "\n").map(String.init)

        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let begin = try #require(source.range(of: "// README: begin\n"))
        let end = try #require(source.range(of: "    // README: end"))
        let compiled = source[begin.upperBound..<end.lowerBound].split(separator: "\n")
            .map { $0.hasPrefix("    ") ? String($0.dropFirst(4)) : String($0) }
        #expect(shown == compiled)
    }
}
