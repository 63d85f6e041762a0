import Foundation
@testable import rawble
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

/// `rawble shell` driven from stdin as a script drives it, against Bumble's lab device and strap.
@Suite("rawble shell against Bumble", .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct ShellCommandTests {
    static func lab(_ arguments: [String] = []) async throws -> (BumblePeer, BumblePeer.Device) {
        try await GATTCommandTests.lab(arguments)
    }

    static let handle = GATTCommandTests.handle

    @Test("a script: services, read by UUID and by handle, write and read back, mtu; an unknown command is one line and the shell goes on")
    func script() async throws {
        let (peer, lab) = try await Self.lab()
        defer { peer.stop() }
        let handles = try #require(lab.handles)
        let result = try await ShellProcess.run(["shell", lab.address, "--transport", peer.transport], input: """
            help read
            services
            read 2a29
            read \(Self.handle(handles.longRead))
            # a comment, then an unknown command
            frobnicate
            write \(Self.handle(handles.write)) beef
            read \(Self.handle(handles.write))
            mtu
            """)
        // The unknown command failed (64: usage) and the commands after it still ran.
        #expect(result.status == 64, "stderr: \(result.stderr)")
        let lines = result.stdoutLines
        #expect(lines.first == "read TARGET  read a value (0x001D, a handle, or a UUID such as 2A19)", "help read: \(lines.first ?? "")")
        #expect(lines.dropFirst().first?.hasPrefix(lab.address) == true, "the tree as `gatt` prints it: \(result.stdout.prefix(300))")
        #expect(result.stdout.contains("Heart Rate (180D)") && result.stdout.contains("Body Sensor Location (2A38)"))
        #expect(lines.contains("\"rawble-sim\""), "2A29 read as text: \(lines)")
        #expect(lines.contains(Hex.encode((0..<300).map { UInt8($0 % 256) })), "the long value whole")
        #expect(Array(lines.suffix(2)) == ["beef", "517"], "\(lines.suffix(3))")
        #expect(try peer.completedWrites().last?.bytes == [0xBE, 0xEF])
        let unknown = result.stderrLines.filter { $0.contains("frobnicate") }
        #expect(unknown == ["rawble: unknown command \"frobnicate\": help lists the commands"], "\(result.stderr)")
        #expect(result.stderrLines.contains { $0.hasPrefix("connected to \(lab.address) (random), MTU 517") }, "\(result.stderr)")
        #expect(!result.stdout.contains("\u{1B}") && !result.stderr.contains("\u{1B}"), "no escape codes off a terminal")
        #expect(!result.stdout.contains("rawble>"), "no prompt off a terminal")
    }

    @Test("--json: one JSON object per line per result, in the one-shot commands' shapes")
    func json() async throws {
        let (peer, lab) = try await Self.lab()
        defer { peer.stop() }
        let handles = try #require(lab.handles)
        let result = try await ShellProcess.run(["shell", lab.address, "--transport", peer.transport, "--json"], input: """
            read 2A29
            write \(Self.handle(handles.write)) 0102 --without-response
            mtu
            services
            disconnect
            """)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let objects = try result.stdoutLinesExceptStatus.map(CLI.jsonObject)
        #expect(objects.count == 6, "\(result.stdout)")
        guard objects.count == 6 else { return }
        #expect(objects[0]["event"] as? String == "connected" && objects[0]["mtu"] as? Int == 517 && objects[0]["time"] is String)
        #expect(objects[1]["uuid"] as? String == "2A29" && objects[1]["value"] as? String == Hex.encode(Array("rawble-sim".utf8)))
        #expect(objects[2]["handle"] as? String == Self.handle(handles.write) && objects[2]["value"] as? String == "0102"
                && objects[2]["withoutResponse"] as? Bool == true)
        #expect(objects[3]["mtu"] as? Int == 517)
        #expect(objects[4]["address"] as? String == lab.address && (objects[4]["services"] as? [Any])?.count == lab.gatt?.count)
        #expect(objects[5]["event"] as? String == "disconnected")
    }

    @Test("a command the peer refuses, or the properties forbid, is one line; the next one works; the status is the last failure's")
    func refusedThenWorking() async throws {
        let (peer, lab) = try await Self.lab()
        defer { peer.stop() }
        let handles = try #require(lab.handles)
        let beyond = (lab.gatt?.map(\.end).max() ?? 0x100) + 0x10
        let result = try await ShellProcess.run(["shell", lab.address, "--transport", peer.transport], input: """
            read \(Self.handle(beyond))
            read 2A29
            write \(Self.handle(handles.longRead)) 00
            read 2A19
            """)
        #expect(result.status == 76, "the last failure, a peer error: \(result.stderr)")
        let errors = result.stderrLines.filter { $0.hasPrefix("rawble:") }
        #expect(errors.count == 2, "\(result.stderr)")
        #expect(errors.first?.contains("Invalid Handle") == true, "\(errors)")
        #expect(errors.last?.contains("cannot be written") == true, "\(errors)")
        #expect(result.stdoutLines == ["\"rawble-sim\"", "87 %"], "Battery Level 87 after the refusals")
    }

    @Test("notify prints each value as it comes until unsubscribe (CCCD 0100, then 0000); the values are the ones sent")
    func notifyThenUnsubscribe() async throws {
        let (peer, lab) = try await Self.lab(["--hr-interval", "0.05", "--hr-count", "1000"])
        defer { peer.stop() }
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-shell-\(UUID().uuidString).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let shell = try ShellProcess(["shell", lab.address, "--transport", peer.transport, "--btsnoop", capture])
        shell.send("notify 2A37")
        let notified = await shell.waitUntil { stdout, _ in stdout.split(separator: "\n").count >= 3 }
        #expect(notified, "three values: \(shell.output)")
        shell.send("unsubscribe 2A37")
        let unsubscribed = await shell.waitUntil { _, stderr in stderr.contains("unsubscribed from 2A37") }
        #expect(unsubscribed, "\(shell.output)")
        shell.send("read 2A19")
        let result = await shell.finish()
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let values = result.stdoutLines.filter { $0.hasPrefix("notification ") }
        #expect(values.count >= 3)
        let measurement = Self.handle(try #require(lab.handles?.heartRateMeasurement))
        let sent = try peer.sentLabHeartRateValues().prefix(values.count).map { "notification \(measurement) 2A37: \(ReadableValues.describe($0, of: .heartRateMeasurement).text)" }
        #expect(values == Array(sent))
        #expect(result.stdoutLines.last == "87 %", "read after unsubscribe: \(result.stdout.suffix(200))")
        let decoded = try await CLI.run(["decode", "btsnoop", capture, "--json"])
        let cccd = Self.handle(try #require(lab.handles?.heartRateMeasurementCCCD))
        let writes = GATTCommandTests.writeRequests(to: cccd, in: try decoded.stdoutLines.map(CLI.jsonObject))
        #expect(writes == ["0100", "0000"])
    }

    @Test("disconnect, then a command says not connected; connect works again")
    func disconnectAndConnect() async throws {
        let (peer, lab) = try await Self.lab()
        defer { peer.stop() }
        let result = try await ShellProcess.run(["shell", lab.address, "--transport", peer.transport], input: """
            disconnect
            read 2A29
            scan 2
            connect \(lab.address)
            read 2A29
            """)
        #expect(result.status == 64, "`read` while not connected is a usage error: \(result.stderr)")
        // The lab advertises again once disconnected: the scan lists it, with its name.
        #expect(result.stdoutLines.contains { $0.hasPrefix("\(lab.address) (random)") && $0.contains("rawble-lab") }, "\(result.stdout)")
        #expect(result.stdoutLines.last == "\"rawble-sim\"", "\(result.stdout)")
        #expect(result.stderrLines.filter { $0.hasPrefix("connected to") }.count == 2, "\(result.stderr)")
        #expect(result.stderrLines.contains("disconnected"))
        #expect(result.stderrLines.contains { $0.hasPrefix("rawble: not connected") })
    }

    @Test("a link the peer drops is told once; connect works again")
    func lostLink() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.05", "--hr-disconnect-after", "3"])
        defer { peer.stop() }
        let strap = try #require(peer.devices.first { $0.name == "rawble-strap" })
        let shell = try ShellProcess(["shell", strap.address, "--transport", peer.transport])
        shell.send("notify 2A37")
        let lost = await shell.waitUntil { _, stderr in stderr.contains("lost") }
        #expect(lost, "\(shell.output)")
        shell.send("read 2A19")
        shell.send("connect \(strap.address)")
        shell.send("read 2A19")
        let result = await shell.finish()
        #expect(result.stderrLines.filter { $0.contains("lost") }.count == 1, "\(result.stderr)")
        #expect(result.stderrLines.contains { $0.contains("lost: Remote User Terminated Connection (0x13)") }, "\(result.stderr)")
        #expect(result.stderrLines.contains { $0.hasPrefix("rawble: not connected") }, "\(result.stderr)")
        #expect(result.stdoutLines.last == "87 %", "read after connecting again: \(result.stdout)")
        // The loss and the read while not connected both failed; the read was the last.
        #expect(result.status == 64)
    }

    @Test("Ctrl-C ends a script: the subscription is written back to 0000, the link closed, status 78")
    func interruptedScript() async throws {
        let (peer, lab) = try await Self.lab(["--hr-interval", "0.05", "--hr-count", "1000"])
        defer { peer.stop() }
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-shell-int-\(UUID().uuidString).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let shell = try ShellProcess(["shell", lab.address, "--transport", peer.transport, "--btsnoop", capture])
        shell.send("notify 2A37")
        #expect(await shell.waitUntil { stdout, _ in stdout.contains("notification ") }, "\(shell.output)")
        shell.interrupt()
        #expect(await shell.waitUntilEnded(limit: .seconds(20)), "Ctrl-C did not end the script: \(shell.output)")
        let result = await shell.finish(limit: .seconds(20))
        #expect(result.status == 78, "stderr: \(result.stderr)")
        #expect(!result.killedBySignal)
        let decoded = try await CLI.run(["decode", "btsnoop", capture, "--json"])
        let records = try decoded.stdoutLines.map(CLI.jsonObject)
        let cccd = Self.handle(try #require(lab.handles?.heartRateMeasurementCCCD))
        let writes = GATTCommandTests.writeRequests(to: cccd, in: records)
        #expect(writes == ["0100", "0000"])
        let sent = records.filter { $0["direction"] as? String == "sent" && $0["type"] as? String == "command" }
        #expect(sent.contains { ($0["name"] as? String)?.hasPrefix("Disconnect") == true })
    }

    @Test("a bad argument is a one-line usage error naming the command's usage")
    func badArguments() async throws {
        let (peer, lab) = try await Self.lab()
        defer { peer.stop() }
        let result = try await ShellProcess.run(["shell", lab.address, "--transport", peer.transport], input: """
            read 2A3
            write 2A29
            """)
        #expect(result.status == 64)
        let errors = result.stderrLines.filter { $0.hasPrefix("rawble:") }
        #expect(errors.count == 2, "\(result.stderr)")
        #expect(errors.first?.contains("usage: read TARGET") == true && errors.first?.contains("neither a handle") == true, "\(errors)")
        #expect(errors.last?.contains("usage: write TARGET HEX") == true, "\(errors)")
    }
}

/// `rawble shell` at a terminal: a pseudo-terminal from util-linux's `script`, keys typed one
/// group at a time, each after the prompt it answers is on screen.
@Suite("rawble shell on a terminal", .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "util-linux's script is not installed"))
struct ShellTerminalTests {
    /// `arguments` run on a pseudo-terminal, with a HOME of its own (for the history file),
    /// which the caller removes.
    static func start(_ arguments: [String]) throws -> (shell: ShellProcess, home: URL) {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-shell-home-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let shell = try ShellProcess(arguments, launcher: CLI.terminalLauncher(), environment: ["HOME": home.path])
        return (shell, home)
    }

    @Test("Tab completes and lists, a value notified prints above the line being typed, up recalls, Ctrl-C stops only the running command, Ctrl-D ends")
    func session() async throws {
        let (peer, lab) = try await GATTCommandTests.lab(["--hr-interval", "0.2", "--hr-count", "1000"])
        defer { peer.stop() }
        let (shell, home) = try Self.start(["shell", lab.address, "--transport", peer.transport])
        defer { try? FileManager.default.removeItem(at: home) }
        let prompt = "\(lab.address)> "
        let emptyPrompt = "\r" + prompt + "\u{1B}[K"
        func step(_ keys: String, expecting expected: String, thenPrompt: Bool = true) async -> Bool {
            await shell.step(keys, expecting: expected, thenPrompt: thenPrompt ? emptyPrompt : nil)
        }
        #expect(await shell.waitUntil { stdout, _ in stdout.contains(emptyPrompt) }, "a prompt: \(shell.output)")
        // Tab: the command, then two candidates sharing "2A2", listed on the second Tab.
        #expect(await step("rea\t2a2\t\t", expecting: "2A29  2A24", thenPrompt: false), "\(shell.output.stdout.suffix(300).debugDescription)")
        #expect(await step("9\r", expecting: "\"rawble-sim\""))
        #expect(await step("notify 2A37\r", expecting: "subscribed to 2A37"))
        // "mt" typed, then a value arrives: printed above, the prompt and "mt" drawn again below.
        let typed = shell.output.stdout.count
        shell.type("mt")
        #expect(await shell.waitUntil { stdout, _ in
            let after = stdout.dropFirst(typed)
            guard let value = after.range(of: "\u{1B}[2Knotification 0x") else { return false }
            return after[value.upperBound...].contains("\r\n\r" + prompt + "mt\u{1B}[K")
        }, "\(shell.output.stdout.suffix(400).debugDescription)")
        #expect(await step("u\r", expecting: "\r\n517\r\n"))
        // Up: the line before, "mtu", again.
        #expect(await step("\u{1B}[A\r", expecting: prompt + "mtu\u{1B}[K\r\n517\r\n"))
        // Ctrl-C while a command runs stops that command only.
        // The line ends on screen once the terminal has left raw mode: the Ctrl-C after it is a
        // signal, for the command (even before it has started).
        #expect(await step("sleep 60\r", expecting: "sleep 60\u{1B}[K\r\n", thenPrompt: false))
        #expect(await step("\u{03}", expecting: "interrupted"), "\(shell.output.stdout.suffix(300).debugDescription)")
        #expect(await step("unsubscribe 2A37\r", expecting: "unsubscribed from 2A37"))
        #expect(await step("read 2A19\r", expecting: "\r\n87 %\r\n"))
        // Ctrl-C at the prompt drops the line; Ctrl-D on the empty line ends, status 0.
        #expect(await step("frob\u{03}", expecting: "frob\u{1B}[K^C"))
        shell.type("\u{04}")
        let result = await shell.finish(limit: .seconds(30))
        #expect(result.status == 0, "\(result.stdout.suffix(400).debugDescription)")
        #expect(!result.stdout.contains("rawble: "), "no command failed: \(result.stdout.debugDescription)")
        let history = try String(contentsOf: home.appendingPathComponent(".rawble_history"), encoding: .utf8)
        // As typed (the UUID's case kept: Tab only added its last digit), a repeat kept once.
        #expect(history == "read 2a29\nnotify 2A37\nmtu\nsleep 60\nunsubscribe 2A37\nread 2A19\n", "\(history)")
    }
}

extension ShellTerminalTests {
    @Test("a link lost at the prompt: told once above it, the prompt becomes rawble>, connect works again")
    func linkLostAtThePrompt() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.1", "--hr-disconnect-after", "3"])
        defer { peer.stop() }
        let strap = try #require(peer.devices.first { $0.name == "rawble-strap" })
        let (shell, home) = try Self.start(["shell", strap.address, "--transport", peer.transport])
        defer { try? FileManager.default.removeItem(at: home) }
        #expect(await shell.waitUntil { stdout, _ in stdout.contains("\r\(strap.address)> \u{1B}[K") }, "\(shell.output)")
        shell.type("notify 2A37\r")
        #expect(await shell.waitUntil { stdout, _ in stdout.contains("lost: ") && stdout.hasSuffix("\rrawble> \u{1B}[K") },
                "\(shell.output.stdout.suffix(400).debugDescription)")
        shell.type("connect \(strap.address)\r")
        #expect(await shell.waitUntil { stdout, _ in stdout.components(separatedBy: "connected to \(strap.address)").count == 3 },
                "\(shell.output.stdout.suffix(400).debugDescription)")
        #expect(await shell.waitUntil { stdout, _ in stdout.hasSuffix("\r\(strap.address)> \u{1B}[K") })
        shell.type("\u{04}")
        let result = await shell.finish(limit: .seconds(30))
        #expect(result.stdout.components(separatedBy: "lost: ").count == 2, "told once: \(result.stdout.debugDescription)")
        #expect(result.status == 0, "a person who saw the loss leaves with 0: \(result.stdout.suffix(300).debugDescription)")
    }

    @Test("Ctrl-C at the prompt while values are notified ends the subscription (CCCD back to 0000) and the shell goes on; quit after a failed command exits 0")
    func ctrlCEndsNotifications() async throws {
        let (peer, lab) = try await GATTCommandTests.lab(["--hr-interval", "0.1", "--hr-count", "1000"])
        defer { peer.stop() }
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-shell-ctrlc-\(UUID().uuidString).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let (shell, home) = try Self.start(["shell", lab.address, "--transport", peer.transport, "--btsnoop", capture])
        defer { try? FileManager.default.removeItem(at: home) }
        let emptyPrompt = "\r\(lab.address)> \u{1B}[K"
        func step(_ keys: String, expecting expected: String) async -> Bool {
            await shell.step(keys, expecting: expected, thenPrompt: emptyPrompt)
        }
        #expect(await shell.waitUntil { stdout, _ in stdout.contains(emptyPrompt) }, "a prompt: \(shell.output)")
        #expect(await step("frobnicate\r", expecting: "rawble: unknown command"), "\(shell.output.stdout.suffix(300).debugDescription)")
        #expect(await step("notify 2A37\r", expecting: "subscribed to 2A37"))
        let subscribed = shell.output.stdout.count
        #expect(await shell.waitUntil { stdout, _ in stdout.dropFirst(subscribed).contains("notification 0x") },
                "values scroll above the prompt: \(shell.output.stdout.suffix(300).debugDescription)")
        // Ctrl-C typed at the prompt (raw mode: a key, not a signal), nothing typed before it.
        #expect(await step("\u{03}", expecting: "unsubscribed from 2A37"), "\(shell.output.stdout.suffix(400).debugDescription)")
        #expect(await step("read 2A19\r", expecting: "\r\n87 %\r\n"), "the shell goes on")
        shell.type("quit\r")
        let result = await shell.finish(limit: .seconds(30))
        #expect(result.status == 0, "quit at a terminal, after a failed command: \(result.stdout.suffix(400).debugDescription)")
        let decoded = try await CLI.run(["decode", "btsnoop", capture, "--json"])
        let cccd = GATTCommandTests.handle(try #require(lab.handles?.heartRateMeasurementCCCD))
        #expect(GATTCommandTests.writeRequests(to: cccd, in: try decoded.stdoutLines.map(CLI.jsonObject)) == ["0100", "0000"],
                "unsubscribed by the Ctrl-C, and once")
    }
}

/// The line editor's pure part: keys, editing, history and completion, without a terminal.
@Suite("rawble shell's line editor")
struct LineEditorTests {
    static let words: CompletionWords = {
        var words = CompletionWords()
        words.commands = ["read": [], "write": ["--without-response"], "notify": ["--indicate"], "connect": [], "help": []]
        words.targetCommands = ["read", "write", "notify"]
        words.addressCommands = ["connect"]
        words.commandCommands = ["help"]
        words.targets = ["2A37", "0x001D", "0x001E", "2A38", "0x0020"]
        words.addresses = ["C0:B1:E0:00:00:01"]
        return words
    }()

    @discardableResult
    static func type(_ keys: [Key], into editor: inout LineEditor) -> [LineEditor.Outcome] {
        keys.map { editor.handle($0, words: words) }
    }

    @Test func keysFromTerminalBytes() {
        var decoder = KeyDecoder()
        #expect(decoder.keys(from: Array("ab".utf8) + [0x1B, 0x5B, 0x44, 0x7F, 0x09, 0x03, 0x04, 0x0D, 0x0A])
                == [.text("ab"), .left, .backspace, .tab, .interrupt, .endOfInput, .enter])
        // A sequence split across reads waits for its end; unknown ones are dropped whole.
        #expect(decoder.keys(from: [0x1B, 0x5B]) == [])
        #expect(decoder.keys(from: [0x41]) == [.up])
        #expect(decoder.keys(from: [0x1B, 0x5B, 0x33, 0x7E, 0x1B, 0x5B, 0x32, 0x30, 0x30, 0x7E, 0x1B, 0x4F, 0x48]) == [.delete, .home])
        #expect(decoder.keys(from: [0x1B, 0x5B, 0x31, 0x3B, 0x35, 0x43]) == [.wordRight])
        // UTF-8 split across reads.
        #expect(decoder.keys(from: [0xC3]) == [])
        #expect(decoder.keys(from: [0xA9, 0x0A]) == [.text("é"), .enter])
    }

    @Test func editing() {
        var editor = LineEditor()
        Self.type([.text("rad"), .left, .left, .text("e"), .end, .text(" 2A37")], into: &editor)
        #expect(editor.text == "read 2A37" && editor.cursor == 9)
        Self.type([.killWordBefore], into: &editor)
        #expect(editor.text == "read ")
        Self.type([.home, .delete, .right, .backspace], into: &editor)
        #expect(editor.text == "ad " && editor.cursor == 0)
        #expect(Self.type([.backspace], into: &editor) == [.bell])
        Self.type([.wordRight, .killToStart], into: &editor)
        #expect(editor.text == " " && editor.cursor == 0)
        Self.type([.killToEnd], into: &editor)
        #expect(editor.text.isEmpty)
        #expect(Self.type([.endOfInput], into: &editor) == [.endOfInput], "Ctrl-D on an empty line ends")
        #expect(Self.type([.text("mtu"), .interrupt], into: &editor) == [.redraw, .interrupted])
        #expect(editor.text.isEmpty, "Ctrl-C drops the line")
        #expect(Self.type([.text("mtu"), .home, .endOfInput], into: &editor).last == .redraw, "Ctrl-D in a line deletes")
        #expect(editor.text == "tu")
        #expect(Self.type([.enter], into: &editor) == [.accepted("tu")])
        #expect(editor.text.isEmpty && editor.cursor == 0)
    }

    @Test func history() {
        var editor = LineEditor(history: History(entries: ["read 2A37"]))
        Self.type([.text("mtu"), .enter, .text("mtu"), .enter, .text("   "), .enter], into: &editor)
        #expect(editor.history.entries == ["read 2A37", "mtu"], "no blank entry, no repeat of the newest")
        Self.type([.text("draft"), .up], into: &editor)
        #expect(editor.text == "mtu")
        Self.type([.up], into: &editor)
        #expect(editor.text == "read 2A37")
        #expect(Self.type([.up], into: &editor) == [.bell], "nothing older")
        Self.type([.down, .down], into: &editor)
        #expect(editor.text == "draft", "the line being typed comes back")
        #expect(Self.type([.down], into: &editor) == [.bell])
        var limited = History(limit: 2)
        for line in ["a", "b", "c"] { limited.add(line) }
        #expect(limited.entries == ["b", "c"])
    }

    @Test func completionCandidates() {
        let words = Self.words
        #expect(words.candidates(line: Array("re"), cursor: 2).candidates == ["read"])
        #expect(words.candidates(line: Array("read 0x00"), cursor: 9) == (5, ["0x001D", "0x001E", "0x0020"]))
        #expect(words.candidates(line: Array("read 2a3"), cursor: 8).candidates == ["2A37", "2A38"], "UUIDs case-insensitively")
        #expect(words.candidates(line: Array("write 2A37 --w"), cursor: 14).candidates == ["--without-response"])
        #expect(words.candidates(line: Array("write 2A37 01"), cursor: 13).candidates == [], "a value is not completed")
        #expect(words.candidates(line: Array("connect C0"), cursor: 10).candidates == ["C0:B1:E0:00:00:01"])
        #expect(words.candidates(line: Array("help no"), cursor: 7).candidates == ["notify"])
        #expect(words.candidates(line: Array("mtu "), cursor: 4).candidates == [])
    }

    @Test("a line longer than the row scrolls sideways, the cursor always shown")
    func visibleWindow() {
        #expect(VisibleLine(length: 10, cursor: 10, columns: 80) == VisibleLine(start: 0, count: 10, cursorColumn: 10))
        // 20 columns: 19 characters shown, the last column free.
        #expect(VisibleLine(length: 50, cursor: 50, columns: 20) == VisibleLine(start: 32, count: 18, cursorColumn: 18))
        #expect(VisibleLine(length: 50, cursor: 3, columns: 20) == VisibleLine(start: 0, count: 19, cursorColumn: 3))
        // Wide characters take two columns: the cursor column counts them, the window fits them.
        #expect(VisibleLine(widths: [2, 2, 2, 1], cursor: 3, columns: 80) == VisibleLine(start: 0, count: 4, cursorColumn: 6))
        #expect(VisibleLine(widths: Array(repeating: 2, count: 30), cursor: 30, columns: 20) == VisibleLine(start: 21, count: 9, cursorColumn: 18))
        #expect(VisibleLine(widths: Array(repeating: 2, count: 30), cursor: 0, columns: 20) == VisibleLine(start: 0, count: 9, cursorColumn: 0))
        #expect(VisibleLine(length: 50, cursor: 30, columns: 20) == VisibleLine(start: 12, count: 19, cursorColumn: 18))
        #expect(VisibleLine(length: 5, cursor: 9, columns: 0).cursorColumn == 0, "no room at all: one character")
    }

    @Test func tabCompletes() {
        var editor = LineEditor()
        Self.type([.text("no"), .tab], into: &editor)
        #expect(editor.text == "notify ", "one candidate: completed, then a space")
        Self.type([.text("2a"), .tab], into: &editor)
        #expect(editor.text == "notify 2A3", "several: what they share")
        #expect(Self.type([.tab], into: &editor) == [.bell], "nothing more to add: the bell")
        #expect(Self.type([.tab], into: &editor) == [.list(["2A37", "2A38"])], "a second Tab lists them")
        Self.type([.text("7"), .tab], into: &editor)
        #expect(editor.text == "notify 2A37 ")
        #expect(Self.type([.text("zz"), .tab], into: &editor) == [.redraw, .bell], "nothing completes a value")
    }
}

/// A `rawble` process whose stdin the test writes line by line, its output collected as it comes.
final class ShellProcess: @unchecked Sendable {
    private let process = Process()
    private let stateDirectory: URL
    private let input = Pipe()
    /// Guards the output; signalled each time a chunk arrives (``waitUntil(limit:_:)`` waits on it).
    private let lock = NSCondition()
    private var stdout = Data(), stderr = Data()
    private let done = DispatchGroup()

    /// `launcher`: a command the binary is run through (its path, then `arguments`, appended).
    init(_ arguments: [String], launcher: [String] = [], environment extra: [String: String] = [:]) throws {
        if let first = launcher.first {
            process.executableURL = URL(fileURLWithPath: first)
            process.arguments = Array(launcher.dropFirst()) + [CLI.executable.path] + arguments
        } else {
            process.executableURL = CLI.executable
            process.arguments = arguments
        }
        var environment = ProcessInfo.processInfo.environment
        // An empty state directory, as CLI.run gives each run (removed with the session).
        stateDirectory = try CLI.freshStateDirectory()
        environment["XDG_STATE_HOME"] = stateDirectory.path
        for (key, value) in extra { environment[key] = value }
        environment.removeValue(forKey: "RAWBLE_TRANSPORT")
        environment.removeValue(forKey: "RAWBLE_LOG")
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardInput = input
        process.standardOutput = out
        process.standardError = err
        try process.run()
        for (pipe, isStdout) in [(out, true), (err, false)] {
            done.enter()
            // A thread of its own: a blocking read on Dispatch's global queue takes a thread
            // of the pool Swift's tasks run on (CLIRunner.swift says more).
            Thread.detachNewThread {
                while true {
                    let chunk = pipe.fileHandleForReading.readAvailableRetryingInterrupts() ?? Data()
                    if chunk.isEmpty { break }
                    self.lock.lock()
                    if isStdout { self.stdout.append(chunk) } else { self.stderr.append(chunk) }
                    self.lock.broadcast()
                    self.lock.unlock()
                }
                self.done.leave()
            }
        }
    }

    /// Runs `arguments` with `input` (a newline added) as the whole of stdin.
    static func run(_ arguments: [String], input: String) async throws -> CLIResult {
        let shell = try ShellProcess(arguments)
        shell.send(input)
        return await shell.finish()
    }

    var output: (stdout: String, stderr: String) {
        lock.lock()
        defer { lock.unlock() }
        return (String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    func send(_ line: String) {
        type(line + "\n")
    }

    /// Ctrl-C: SIGINT to the process.
    func interrupt() {
        kill(process.processIdentifier, SIGINT)
    }

    /// Waits, stdin left open, until the process closed its output (it ended by itself);
    /// `false` after `limit`. A Ctrl-C test must not race its own end of input (EOF is `quit`).
    func waitUntilEnded(limit: Duration) async -> Bool {
        await blockingOnOwnThread { self.done.wait(timeout: .now() + limit.dispatch) == .success }
    }

    /// Runs a blocking wait on a thread of its own, never on the cooperative pool: the async
    /// tests running beside these (ATT timeouts, servers' timers) need its two threads.
    private func blockingOnOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: body()) }
        }
    }

    /// Writes `keys` to stdin as they are (no newline added).
    func type(_ keys: String) {
        input.fileHandleForWriting.write(Data(keys.utf8))
    }

    /// Types `keys`, waits until `expected` is printed after them and, when given, `thenPrompt`
    /// (a fresh prompt) after that: the shell reads again (keys typed earlier would be echoed
    /// by the terminal, and a Ctrl-C sent as a signal).
    func step(_ keys: String, expecting expected: String, thenPrompt prompt: String?) async -> Bool {
        let offset = output.stdout.count
        type(keys)
        return await waitUntil { stdout, _ in
            let after = stdout.dropFirst(offset)
            guard let found = after.range(of: expected) else { return false }
            return prompt.map { after[found.upperBound...].contains($0) } ?? true
        }
    }

    /// Waits (at most `limit`) until what was printed satisfies `condition`.
    func waitUntil(limit: Duration = .seconds(30), _ condition: @escaping @Sendable (String, String) -> Bool) async -> Bool {
        await blockingOnOwnThread { self.waitUntilBlocking(limit: limit, condition) }
    }

    private func waitUntilBlocking(limit: Duration, _ condition: (String, String) -> Bool) -> Bool {
        // Checked again each time output arrives, not on a clock.
        let deadline = Date(timeIntervalSinceNow: Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18)
        lock.lock()
        defer { lock.unlock() }
        while true {
            if condition(String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self)) { return true }
            guard lock.wait(until: deadline) else {
                return condition(String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
            }
        }
    }

    /// Closes stdin (the end of the script) and waits (at most `limit`) for the exit.
    func finish(limit: Duration = .seconds(90)) async -> CLIResult {
        await blockingOnOwnThread { self.finishBlocking(limit: limit) }
    }

    private func finishBlocking(limit: Duration) -> CLIResult {
        try? input.fileHandleForWriting.close()
        if done.wait(timeout: .now() + limit.dispatch) == .timedOut {
            process.terminate()
            _ = done.wait(timeout: .now() + 5)
        }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: stateDirectory)
        let (out, err) = output
        return CLIResult(status: process.terminationStatus, stdout: out, stderr: err,
                         killedBySignal: process.terminationReason == .uncaughtSignal)
    }
}
