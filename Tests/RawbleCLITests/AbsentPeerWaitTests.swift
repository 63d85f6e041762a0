import Foundation
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// `gatt` and `read` to an address nothing advertises, against Bumble's lab: the wait is told
/// (once it has lasted 2 s) with the devices heard, before the timeout's one error line.
@Suite("A wait for a peer that is not there", .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct AbsentPeerWaitTests {
    static let absent = "C0:00:00:00:00:99"

    @Test("gatt --json: a status event names the address awaited and the devices heard, stderr holds only the error line (75); read into a pipe: a line on stderr says the same, then the error line")
    func toldBeforeTheTimeout() async throws {
        let (peer, lab) = try await GATTCommandTests.lab()
        defer { peer.stop() }
        // The scan for its address type lasts up to 5 s: the status comes within it.
        let json = try await CLI.run(["gatt", Self.absent, "--timeout", "5", "--json", "--transport", peer.transport])
        #expect(json.status == 75, "\(json.stderr)")
        #expect(json.stderrLines.count == 1 && json.stderr.hasPrefix("rawble: no connection to \(Self.absent)"), "\(json.stderr)")
        let events = try json.stdoutLines.map(CLI.jsonObject)
        let status = try #require(events.first { $0["event"] as? String == "status" }, "\(json.stdout)")
        #expect(status["waitingFor"] as? String == "advertising")
        #expect(status["target"] as? String == Self.absent)
        #expect(status["message"] as? String == "waiting for \(Self.absent) to advertise")
        #expect(status["time"] is String && status["elapsedSeconds"] is Int)
        let seen = try #require(status["seen"] as? [[String: Any]])
        #expect(seen.contains { $0["address"] as? String == lab.address }, "the lab advertises: \(seen)")
        #expect(!seen.contains { $0["address"] as? String == Self.absent })
        #expect(events.allSatisfy { $0["event"] as? String == "status" }, "nothing else was printed: \(json.stdout)")

        let plain = try await CLI.run(["read", Self.absent, "2A29", "--timeout", "5", "--transport", peer.transport])
        #expect(plain.status == 75, "\(plain.stderr)")
        let lines = plain.stderrLines
        let waiting = try #require(lines.first { $0.hasPrefix("waiting for \(Self.absent) to advertise (") }, "\(plain.stderr)")
        #expect(waiting.contains("; devices seen: ") && waiting.contains("rawble-lab (\(lab.address))"), "\(waiting)")
        #expect(lines.last?.hasPrefix("rawble: no connection to \(Self.absent)") == true, "the error line last: \(plain.stderr)")
        #expect(lines.filter { $0.hasPrefix("rawble: ") }.count == 1, "one error line: \(plain.stderr)")
        #expect(plain.stdout.isEmpty)
    }
}
