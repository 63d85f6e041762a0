import Foundation
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// A controller serves one host. Issue 14 found that a second rawble on the controller `hr`
/// was using (Bumble's TCP server hands the controller to its newest client, and the first then
/// hears nothing at all) froze `hr` without a word. Now `hr`, once the strap has been silent for
/// `--timeout`, asks the controller something harmless; no answer either is one line, 74.
@Suite("One host per controller", .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct SharedControllerTests {
    @Test("a second rawble takes hr's controller: hr says the controller stopped answering (74), not a silent stall")
    func controllerTakenByAnotherHost() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.2", "--hr-script", "realistic", "--hr-count", "0"])
        defer { peer.stop() }
        let second = SecondHost()
        let transport = peer.transport
        let hr = try await CLI.run(
            ["hr", "--transport", transport, "--timeout", "3", "--json"],
            when: { stdout, _ in stdout.contains(#""event":"measurement""#) },
            readyLimit: .seconds(60), limit: .seconds(60),
            do: { _ in
                // The second host, while hr runs: it takes the controller for itself.
                second.set(try? CLI.runBlocking(["scan", "--duration", "2", "--transport", transport]))
            })
        #expect(hr.reachedReady, "hr never printed a measurement: \(hr.stderr)")
        let scan = second.result
        #expect(scan?.status == 0, "the second host's scan: \(scan?.stderr ?? "did not run")")
        ExitStatusTests.expectOneLine(hr, status: 74, containing: "the controller at \(transport) stopped answering while the strap was silent")
        #expect(hr.stderr.contains("A controller serves one host at a time"), "\(hr.stderr)")
    }
}

/// What the second host's run gave, set from the runner's reading thread.
private final class SecondHost: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: CLIResult?
    func set(_ result: CLIResult?) { lock.withLock { stored = result } }
    var result: CLIResult? { lock.withLock { stored } }
}
