import Foundation
import RawbleStack
import Testing
import Synchronization

/// The README's library example, compiled here as the README shows it, with two differences the
/// test below undoes before comparing: the transport is a parameter (the README's is "hci0"),
/// and `print` is the caller's, so a test sees each line. It needs a strap in range to measure
/// anything; what runs here is its error path.
@Sendable func readmeLibraryExample(transport: String, print: @Sendable (String) -> Void) async {
    // README: begin
    do {
        let central = try await TransportAddress(transport).openCentral()   // or "user:hci0", "tcp:127.0.0.1:9000", …
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
    } catch {
        print("heart-rate: \(error)")   // one line: what failed and its fix (no adapter, a capability missing, the strap gone …)
    }
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
            .map { $0.replacingOccurrences(of: "TransportAddress(transport)", with: "TransportAddress(\"hci0\")") }
        #expect(shown == compiled)
    }

    /// A transport that cannot open (a unix socket nothing listens on): the example ends with
    /// its one line, the cause and the fix, and no trap.
    @Test func itsErrorPathPrintsOneLine() async throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-readme-\(getpid()).sock").path
        let printed = Mutex<[String]>([])
        await readmeLibraryExample(transport: "unix:\(missing)") { line in printed.withLock { $0.append(line) } }
        let lines = printed.withLock { $0 }
        #expect(lines.count == 1, "\(lines)")
        let line = try #require(lines.first)
        #expect(line.hasPrefix("heart-rate: ") && line.contains(missing) && !line.contains("\n"), "\(line)")
    }
}
