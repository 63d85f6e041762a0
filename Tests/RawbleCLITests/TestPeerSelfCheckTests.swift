import Foundation
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// The Bumble peers the other suites test rawble against, checked on their own: each script
/// drives the peer with an independent Bumble host and its own decoders, written from the
/// notes, with no rawble involved. A fixture that drifted from the notes would otherwise make
/// rawble's tests agree with the fixture instead of with the device.
@Suite("The test peers, checked against the notes without rawble", .tags(.bumble),
       .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct TestPeerSelfCheckTests {
    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Runs `Scripts/python/<script>` under the project's venv: its exit status and its stdout
    /// lines (one per case, `ok …` or `FAIL …`), waited for at most `seconds`. The script runs on
    /// a thread of its own (``onOwnThread(_:)``): half a minute of blocking on Swift's
    /// cooperative pool would stall every other test of the run.
    static func run(_ script: String, seconds: Double) async throws -> (status: Int32, lines: [Substring]) {
        let venvPython = root.appendingPathComponent("Scripts/venv-python").path
        let path = root.appendingPathComponent("Scripts/python/\(script)").path
        let (output, status) = try await within(seconds: seconds) { try await runToEnd(venvPython, [path]) }
        return (status, String(decoding: output, as: UTF8.self).split(separator: "\n"))
    }

    /// Expects every case of `script` to have passed (at least `cases`), naming the failures.
    static func expectEveryCasePassed(_ script: String, cases: Int, seconds: Double) async throws {
        let (status, lines) = try await run(script, seconds: seconds)
        let failures = lines.filter { $0.hasPrefix("FAIL") }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        #expect(status == 0, "\(script) exited \(status): \(lines.suffix(3).joined(separator: " / "))")
        #expect(lines.filter { $0.hasPrefix("ok ") }.count >= cases, "\(lines.joined(separator: "\n"))")
    }

    @Test("the simulated Polar H10 (bumble-peer --h10) sends what the PMD note says an H10 sends, byte for byte")
    func simulatedH10() async throws {
        try await Self.expectEveryCasePassed("check_h10_peer.py", cases: 8, seconds: 240)
    }

    @Test("the several straps (bumble-peer --straps, --strap-drops, --max-links, --strap-hostile) advertise, stream, drop, refuse and misbehave as documented, to Bumble's own host")
    func severalStraps() async throws {
        try await Self.expectEveryCasePassed("check_straps_peer.py", cases: 6, seconds: 180)
    }

    @Test("the pairing peers (the strap's pairing options, bumble-peer --central) pair, refuse and fail as documented")
    func pairingPeers() async throws {
        try await Self.expectEveryCasePassed("check_pairing_peers.py", cases: 31, seconds: 300)
    }
}
