import Foundation
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// Ctrl-C's one rule (docs/cli.md): 0 where Ctrl-C is the command's end (no --duration or
/// --count), 78 "interrupted" where it cut the command short, always after a clean stop and
/// never by the signal. The cases that end with 0 are in each command's own suite.
@Suite("Ctrl-C: 78 when it cuts a command short", .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct InterruptTests {
    /// Fails unless `result` was interrupted as the rule says: 78, the last stderr line
    /// `rawble: interrupted`, not killed by the signal, and the trigger was reached.
    static func expectInterrupted(_ result: CLIResult, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.reachedReady, "never ready: \(result.stdout) \(result.stderr)", sourceLocation: sourceLocation)
        #expect(!result.killedBySignal, sourceLocation: sourceLocation)
        #expect(result.status == 78, "stderr: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderrLines.last == "rawble: interrupted", "\(result.stderr)", sourceLocation: sourceLocation)
    }

    @Test("connecting to a device that is not there (read, gatt): Ctrl-C stops it at once with 78, not the --timeout later")
    func whileConnecting() async throws {
        let peer = try await BumblePeer.start(arguments: ["--strap-only"])
        defer { peer.stop() }
        for command in [["read", "C0:00:00:00:00:99", "2A19"], ["gatt", "C0:00:00:00:00:99"]] {
            // -v says when the controller is ready: the connection attempt is under way.
            let result = try await CLI.run(command + ["--address-type", "random", "--timeout", "60", "-v", "--transport", peer.transport],
                                           when: { _, stderr in stderr.contains("controller ready") },
                                           limit: .seconds(20))
            Self.expectInterrupted(result)
            #expect(!result.stderr.contains("within 60 s"), "\(result.stderr)")
        }
    }

    @Test("notify, hr before their --count and scan before its --duration: 78")
    func beforeTheirOwnEnd() async throws {
        let peer = try await BumblePeer.start(arguments: ["--strap-only", "--hr-interval", "0.05", "--hr-count", "1000"])
        defer { peer.stop() }
        let strap = try #require(peer.devices.first)
        let notify = try await CLI.run(["notify", strap.address, "2A37", "--count", "1000", "--transport", peer.transport],
                                       when: { stdout, _ in stdout.split(separator: "\n").count >= 2 })
        Self.expectInterrupted(notify)
        let hr = try await CLI.run(["hr", "--count", "1000", "--json", "--transport", peer.transport],
                                   when: { stdout, _ in stdout.contains("\"measurement\"") })
        Self.expectInterrupted(hr)
        let scan = try await CLI.run(["scan", "--duration", "60", "--json", "--transport", peer.transport],
                                     when: { stdout, _ in !stdout.isEmpty })
        Self.expectInterrupted(scan)
    }
}
