import Foundation
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// The status line as a person sees it on a terminal (a pseudo-terminal from util-linux's `script`).
@Suite("The status line on a terminal", .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "util-linux's script is not installed"))
struct StatusLineTests {
    @Test("hr on a terminal: the status shows bpm, sparkline, zone and RMSSD; once hr ends it is cleared and never drawn again (the session line is last)")
    func clearedForGood() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.1", "--hr-script", "realistic", "--hr-count", "0"])
        defer { peer.stop() }
        let result = try await CLI.run(["hr", "--transport", peer.transport, "--count", "40", "--max-hr", "185"],
                                       launcher: CLI.terminalLauncher())
        #expect(result.status == 0, "\(result.stderr)")
        let screen = result.stdout
        #expect(screen.contains(" bpm  ") && screen.contains("Z"), "a status line with the zone: \(screen.suffix(400))")
        let session = try #require(screen.range(of: "session: 40 measurements", options: .backwards), "\(screen.suffix(400))")
        let after = screen[session.upperBound...]
        #expect(!after.contains("bpm"), "the status drawn again after the end: \(after.debugDescription)")
    }

    @Test("gatt to an address nothing advertises, on a terminal: the status line says what it waits for, a line names the devices heard, the error line starts on a clean line")
    func absentPeer() async throws {
        let peer = try await BumblePeer.start(arguments: ["--strap-only"])
        defer { peer.stop() }
        let strap = try #require(peer.devices.first)
        let absent = "C0:00:00:00:00:99"
        let result = try await CLI.run(["gatt", absent, "--timeout", "5", "--transport", peer.transport], launcher: CLI.terminalLauncher())
        #expect(result.status == 75, "\(result.stdout.suffix(400).debugDescription)")
        let screen = result.stdout
        #expect(screen.contains("waiting for \(absent) to advertise "), "the status line: \(screen.suffix(400).debugDescription)")
        #expect(screen.contains("waiting for \(absent) to advertise (") && screen.contains("devices seen: rawble-strap (\(strap.address))"),
                "the line naming what was heard: \(screen.suffix(400).debugDescription)")
        let clear = try #require(screen.range(of: "\r\u{1B}[2K", options: .backwards), "\(screen.suffix(400).debugDescription)")
        #expect(screen[clear.upperBound...].hasPrefix("rawble: no connection to \(absent)"), "\(screen.suffix(400).debugDescription)")
    }

    @Test("ecg on a terminal: the live trace's status line ends with its sample count, no spinner's seconds after it")
    func ecgStatusLine() async throws {
        let peer = try await BumblePeer.start(arguments: ["--h10"])
        defer { peer.stop() }
        let result = try await CLI.run(["ecg", "--count", "390", "--transport", peer.transport], launcher: CLI.terminalLauncher())
        #expect(result.status == 0, "\(result.stdout.suffix(400).debugDescription)")
        // Each draw of the status line follows a clear of the row: the trace's draws start "ECG ".
        let draws = result.stdout.components(separatedBy: "\r\u{1B}[2K").filter { $0.hasPrefix("ECG ") }
        #expect(!draws.isEmpty, "the trace was drawn: \(result.stdout.suffix(400).debugDescription)")
        #expect(draws.allSatisfy { $0.hasSuffix(" samples") }, "\(draws.suffix(3))")
    }

    /// Ctrl-C typed at the terminal: SIGINT to the rawble process, found by a marker among its
    /// arguments (the launcher is `script`).
    static func interruptMarked(_ marker: String) -> @Sendable (Int32) -> Void {
        { _ in
            let pkill = Process()
            pkill.executableURL = URL(fileURLWithPath: "/usr/bin/pkill")
            // Only rawble itself: `script` and its shell carry the same arguments.
            pkill.arguments = ["-INT", "-f", "--", "^" + CLI.executable.path + " .*" + marker]
            try? pkill.run()
            pkill.waitUntilExit()
        }
    }

    @Test("Ctrl-C while hr scans for a strap: the spinner is cleared, the prompt starts on a clean line; Ctrl-C while the live scan table shows: the table's last draw, then a new line")
    func ctrlCLeavesTheTerminalClean() async throws {
        let peer = try await BumblePeer.start(arguments: ["--strap-only"])
        defer { peer.stop() }
        let terminal = CLI.terminalLauncher()
        let marker = "no-such-strap-\(UUID().uuidString.prefix(8))"
        let hr = try await onOwnThread {
            try CLI.runBlocking(["hr", marker, "--transport", peer.transport], launcher: terminal,
                                trigger: .init(ready: { stdout, _ in stdout.contains("to advertise") && stdout.contains(" 1 s") },
                                               readyLimit: .seconds(30), action: Self.interruptMarked(marker)),
                                limit: .seconds(30))
        }
        #expect(hr.reachedReady, "\(hr.stdout.suffix(400).debugDescription)")
        #expect(!hr.killedBySignal, "\(hr.stdout.suffix(400).debugDescription)")
        // After the last clear of the status line, no spinner is drawn again: what follows
        // starts at the left margin and ends with a line break (the prompt's line is clean).
        let screen = hr.stdout
        let clear = try #require(screen.range(of: "\r\u{1B}[2K", options: .backwards), "\(screen.suffix(400).debugDescription)")
        let after = screen[clear.upperBound...]
        #expect(!["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"].contains { after.contains($0) }, "\(after.debugDescription)")
        #expect(after.isEmpty || after.hasSuffix("\n"), "the prompt would be glued to: \(after.debugDescription)")

        let scanMarker = "--name=rawble-\(UUID().uuidString.prefix(4))-x"
        let scan = try await onOwnThread {
            try CLI.runBlocking(["scan", "--transport", peer.transport, scanMarker], launcher: terminal,
                                trigger: .init(ready: { stdout, _ in stdout.contains("scanning 1 s") },
                                               readyLimit: .seconds(30), action: Self.interruptMarked(scanMarker)),
                                limit: .seconds(30))
        }
        #expect(scan.reachedReady && !scan.killedBySignal && scan.status == 0, "\(scan.stdout.suffix(400).debugDescription)")
        let table = scan.stdout.replacingOccurrences(of: "\r\n", with: "\n")
        let last = try #require(table.components(separatedBy: "\u{1B}[J").last)
        // The seconds are when Ctrl-C landed, later on a loaded machine: not what is checked.
        #expect(last.hasPrefix("ADDRESS") && last.range(of: #"\nno devices found in [0-9]+ s\n$"#, options: .regularExpression) != nil,
                "\(last.debugDescription)")
    }
}
