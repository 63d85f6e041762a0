import Foundation
import RawbleTestSupport
import Testing

/// The status line as a person sees it on a terminal (a pseudo-terminal from util-linux's `script`).
@Suite("The status line on a terminal", .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "util-linux's script is not installed"))
struct StatusLineTests {
    @Test("hr on a terminal: the status shows bpm, sparkline, zone and RMSSD; once hr ends it is cleared and never drawn again (the session line is last)")
    func clearedForGood() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.1", "--hr-script", "realistic", "--hr-count", "0"])
        defer { peer.stop() }
        let result = try await CLI.run(["hr", "--transport", peer.transport, "--count", "40", "--max-hr", "185"],
                                       launcher: ["/bin/sh", "-c", #"exec /usr/bin/script -q -e -c "$0 $*" /dev/null"#])
        #expect(result.status == 0, "\(result.stderr)")
        let screen = result.stdout
        #expect(screen.contains(" bpm  ") && screen.contains("Z"), "a status line with the zone: \(screen.suffix(400))")
        let session = try #require(screen.range(of: "session: 40 measurements", options: .backwards), "\(screen.suffix(400))")
        let after = screen[session.upperBound...]
        #expect(!after.contains("bpm"), "the status drawn again after the end: \(after.debugDescription)")
    }
}
