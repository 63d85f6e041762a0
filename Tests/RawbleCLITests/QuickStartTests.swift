import Foundation
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// The README's "try it without hardware" commands, pasted into an interactive bash on a terminal
/// (a pseudo-terminal from util-linux's `script`), as a newcomer runs them. The earlier quick
/// start put the peer in the background with `< /dev/tty &`: the shell stopped it at once
/// ("Stopped (tty input)") and the scan after it ended in "did not answer HCI Reset".
@Suite("The README's quick start in an interactive shell", .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct QuickStartTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The commands of the README's block that follows `heading`, one per line, comments removed.
    static func commands(after heading: String) throws -> [String] {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: heading), "README.md has no \"\(heading)\"")
        let fence = try #require(readme.range(of: "```sh\n", range: start.upperBound..<readme.endIndex))
        let end = try #require(readme.range(of: "```", range: fence.upperBound..<readme.endIndex))
        return readme[fence.upperBound..<end.lowerBound].split(separator: "\n").map { line in
            String(line.split(separator: "#", maxSplits: 1).first ?? "").trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
    }

    @Test("the peer keeps serving beside the shell, and the scan, the tree and rawble shell reach it")
    func pastedIntoATerminal() async throws {
        let lines = try Self.commands(after: "Try the host without any Bluetooth hardware")
        // The build step is the test's own build; the rest runs as written, on a free port
        // instead of 9000 (tests run in parallel) and with this build's binary.
        let port = try freePort()
        let steps = lines.filter { !$0.hasPrefix("Scripts/bootstrap") }.map { line in
            line.replacingOccurrences(of: "9000", with: "\(port)")
                .replacingOccurrences(of: ".build/debug/rawble", with: CLI.executable.path)
        }
        #expect(steps.contains { $0.hasPrefix("Scripts/bumble-peer") }, "the quick start starts no peer: \(lines)")
        #expect(steps.contains { $0.contains(" scan ") } && steps.contains { $0.contains(" gatt ") }, "\(lines)")

        let input = FileManager.default.temporaryDirectory.appendingPathComponent("quick-start-\(port).sh")
        #expect(steps.contains { $0.contains(" shell ") }, "\(lines)")
        // What the README says to type in the shell follows its line.
        let typed = steps.flatMap { $0.contains(" shell ") ? [$0, "read 2A19", "quit"] : [$0] }
        try (typed + ["jobs", "exit"]).joined(separator: "\n").appending("\n").write(to: input, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: input) }
        // An interactive bash on a pseudo-terminal, the lines typed into it from the file; run
        // as every CLI test runs (pipes read to the end on threads of their own, bounded).
        let shell = ["/bin/sh", "-c", #"cd "$1" && exec /usr/bin/script -q -e -c "exec bash --norc --noprofile -i" /dev/null < "$2""#]
        let result = try await onOwnThread {
            try CLI.runBlocking([Self.root.path, input.path], environment: ["TERM": "xterm"], launcher: shell, limit: .seconds(120))
        }
        let screen = (result.stdout + result.stderr).replacingOccurrences(of: "\r", with: "")

        // Stop the peer by the PID it printed, whatever else happened.
        let range = screen.range(of: #"stop it with: kill [0-9]+"#, options: .regularExpression)
        let pid = range.flatMap { Int32(screen[$0].split(separator: " ").last ?? "") }
        if let pid { kill(pid, SIGTERM) }
        #expect(pid != nil, "the peer did not say how to stop it: \(screen.prefix(1500))")
        // bash itself read `jobs` and `exit` after rawble shell's `quit`: the shell took only its
        // own lines from the terminal (it once swallowed the rest, and bash waited for input).
        #expect(result.status == 0 && !result.killedBySignal, "bash did not exit by itself: \(screen.suffix(1500))")
        #expect(screen.contains("# jobs") && screen.contains("# exit"), "\(screen.suffix(1500))")
        #expect(!screen.contains("Stopped"), "the shell stopped a job: \(screen.suffix(1500))")
        #expect(!screen.contains("rawble: "), "a command failed: \(screen.suffix(1500))")
        #expect(screen.contains("rawble-strap"), "the scan did not list the strap: \(screen.suffix(1500))")
        #expect(screen.contains("Heart Rate Measurement"), "gatt did not show the strap's tree: \(screen.suffix(1500))")
        #expect(screen.contains("87 %"), "the shell did not read the battery level: \(screen.suffix(1500))")
    }
}
