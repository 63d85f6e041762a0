import Foundation
@testable import rawble
import RawbleSMP
import RawbleWire
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// `rawble pair`'s other methods and each class of pairing failure, against Bumble's strap over
/// H4 (issue 24): the exact one line and its own status (docs/cli.md's table: 80 wrong passkey,
/// 81 confirm mismatch, 82 DHKey check failed, 83 the peer stopped pairing, 84 SMP timeout, 85
/// no method both sides can do). The failures the strap cannot make by itself it makes with
/// the fixture's `--strap-fault` (bumble_fixture/pairing.py).
@Suite("rawble pair: Numeric Comparison, legacy pairing, and one line and status per failure",
       .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct PairingMethodsAndFailuresTests {
    static let strap = PairCommandTests.strap
    /// The strap as `DeviceAddress` prints it in the lines.
    static let named = "\(strap) (random static)"

    /// `rawble pair STRAP ARGUMENTS` in a fresh state folder, with no controlling terminal (so
    /// it never waits on one, even when the tests run from a terminal).
    static func pair(_ peer: BumblePeer, _ arguments: [String], state: TemporaryState) async throws -> CLIResult {
        try await CLI.run(["pair", strap, "--transport", peer.transport, "--timeout", "20"] + arguments,
                          environment: state.environment, launcher: ["/usr/bin/setsid", "-w"])
    }

    /// `012345`.
    static func digits(_ number: UInt32) -> String {
        String(repeating: "0", count: max(0, 6 - String(number).count)) + String(number)
    }

    /// The Pairing Failed reasons in the strap's log (sent or received).
    static func strapFailures(_ peer: BumblePeer) throws -> [UInt8] {
        try peer.securityLog().compactMap { event in
            if case .pairingFailed(_, let reason) = event { reason } else { nil }
        }
    }

    @Test("pair --io yesno --confirm with a strap that compares: Numeric Comparison, unauthenticated (nobody compared on rawble's side); the six digits rawble accepted are the strap's")
    func numericComparison() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await PairCommandTests.start(BumblePeer.StrapSecurity(pairing: BumblePeer.PairingOptions(io: .yesNo, mitm: true)))
        defer { peer.stop() }
        let result = try await Self.pair(peer, ["--io", "yesno", "--confirm"], state: state)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "paired with \(Self.named): Numeric Comparison, LE Secure Connections, unauthenticated, bonded (16-octet key)\n",
                "\(result.stdout)")
        // The strap logs its side when its own pairing ends, which can be after rawble exits.
        #expect(await eventually { ((try? peer.pairings()) ?? []).isEmpty == false }, "the strap logs its pairing")
        let record = try #require(try peer.pairings().first)
        #expect(record.method == .numericComparison && record.authenticated)
        let compared = try peer.securityLog().compactMap { event -> UInt32? in
            if case .comparison(_, let number, true) = event { number } else { nil }
        }
        let number = try #require(compared.first)
        #expect(result.stderrExceptWaits == "rawble: accepted \(Self.digits(number)) for \(Self.strap) unseen (--confirm): it should show the same; the key counts as unauthenticated\n",
                "\(result.stderr)")
        let list = try await CLI.run(["bonds"], environment: state.environment)
        #expect(list.stdout.hasPrefix("\(Self.named): unauthenticated, LE Secure Connections"), "the bond says so too: \(list.stdout)")
    }

    @Test("pair --io yesno without --confirm and no terminal: the comparison is declined here: 79, one line")
    func comparisonDeclinedHere() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await PairCommandTests.start(BumblePeer.StrapSecurity(pairing: BumblePeer.PairingOptions(io: .yesNo, mitm: true)))
        defer { peer.stop() }
        let result = try await Self.pair(peer, ["--io", "yesno"], state: state)
        ExitStatusTests.expectOneLine(result, status: 79)
        #expect(result.stderrExceptWaits == "rawble: pairing with \(Self.named) failed: rawble stopped it: Numeric Comparison Failed (0x0C): "
                + "the numbers were not confirmed here (--confirm accepts them in scripts)\n", "\(result.stderr)")
    }

    @Test("a strap that can only do LE legacy pairing: refused by default, 85 and one line naming --legacy; the strap saw Authentication Requirements")
    func legacyRefusedByDefault() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await PairCommandTests.start(BumblePeer.StrapSecurity(pairing: BumblePeer.PairingOptions(legacy: true)))
        defer { peer.stop() }
        let result = try await Self.pair(peer, [], state: state)
        ExitStatusTests.expectOneLine(result, status: 85, containing: "--legacy")
        #expect(result.stderrExceptWaits == "rawble: pairing with \(Self.named) failed: rawble stopped it: the peer offers only LE legacy pairing, "
                + "which this side does not accept: pair again with --legacy to accept LE legacy pairing from \(Self.strap) (its keys are weaker)\n",
                "\(result.stderr)")
        #expect(await eventually { ((try? Self.strapFailures(peer)) ?? []).contains(0x03) }, "the strap got Authentication Requirements")
        #expect(try peer.pairings().isEmpty)
        let list = try await CLI.run(["bonds"], environment: state.environment)
        #expect(list.stdout.isEmpty, "no bond: \(list.stdout)")
    }

    @Test("pair again with a strap that now can only do Just Works, over an authenticated bond: 85, one line naming rawble bonds remove; the bond is kept")
    func weakerRepairingRefused() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let display = BumblePeer.PairingOptions(io: .display, mitm: true, passkey: 123456)
        // One adapter (one controller address, so one identity of rawble's) meeting both straps.
        let adapter = "00:1B:DC:00:00:01"
        let first = try await PairCommandTests.start(BumblePeer.StrapSecurity(pairing: display), controller: adapter)
        let paired = try await Self.pair(first, ["--io", "keyboard", "--passkey", "123456"], state: state)
        await first.stopAndWait()
        #expect(paired.status == 0, "\(paired.stderr)")
        #expect(paired.stdout.contains("Passkey Entry, LE Secure Connections, authenticated"), "\(paired.stdout)")

        let impostor = try await PairCommandTests.start(BumblePeer.StrapSecurity(), controller: adapter)
        defer { impostor.stop() }
        let result = try await Self.pair(impostor, ["--io", "keyboard", "--passkey", "123456"], state: state)
        ExitStatusTests.expectOneLine(result, status: 85, containing: "rawble bonds remove \(Self.strap)")
        #expect(result.stderr.contains("weaker than the bond kept (authenticated, LE Secure Connections, 16-octet key)"), "\(result.stderr)")
        #expect(await eventually { ((try? Self.strapFailures(impostor)) ?? []).contains(0x03) }, "the impostor got Authentication Requirements")
        let list = try await CLI.run(["bonds"], environment: state.environment)
        #expect(list.stdout.hasPrefix("\(Self.named): authenticated, LE Secure Connections, 16-octet key"), "the bond is kept: \(list.stdout)")
    }

    @Test("pair --legacy with a strap that can only do LE legacy pairing: LE legacy pairing, Just Works; bonds lists the legacy bond")
    func legacy() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await PairCommandTests.start(BumblePeer.StrapSecurity(pairing: BumblePeer.PairingOptions(legacy: true)))
        defer { peer.stop() }
        let result = try await Self.pair(peer, ["--legacy"], state: state)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "paired with \(Self.named): Just Works, LE legacy pairing, unauthenticated, bonded (16-octet key)\n",
                "\(result.stdout)")
        // The strap logs its side when its own pairing ends, which can be after rawble exits.
        #expect(await eventually { ((try? peer.pairings()) ?? []).isEmpty == false }, "the strap logs its pairing")
        #expect(try peer.pairings().first?.secureConnections == false)
        let list = try await CLI.run(["bonds"], environment: state.environment)
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.hasPrefix("\(Self.named): unauthenticated, LE legacy pairing, 16-octet key"), "\(list.stdout)")
        #expect(list.stdout.split(separator: "\n").count == 1, "\(list.stdout)")
    }

    @Test("a wrong passkey (the strap shows 123456, rawble types 654321): 80, the strap's Confirm Value Failed in one line")
    func wrongPasskey() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await PairCommandTests.start(BumblePeer.StrapSecurity(pairing: BumblePeer.PairingOptions(io: .display, mitm: true, passkey: 123456)))
        defer { peer.stop() }
        let result = try await Self.pair(peer, ["--io", "keyboard", "--passkey", "654321"], state: state)
        ExitStatusTests.expectOneLine(result, status: 80)
        // The passkeys differ in their lowest bit: the strap, as responder, checks first.
        #expect(result.stderrExceptWaits == "rawble: pairing with \(Self.named) failed: the peer stopped it: Confirm Value Failed (0x04): "
                + "the passkey was wrong or not entered: pair again and type the six digits shown (--passkey for scripts)\n",
                "\(result.stderr)")
        #expect(try peer.pairings().isEmpty)
    }

    @Test("a confirm value that does not match (the strap's Pairing Confirm corrupted, Just Works): 81, rawble's Confirm Value Failed in one line")
    func confirmMismatch() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await PairCommandTests.start(BumblePeer.StrapSecurity(pairing: BumblePeer.PairingOptions(fault: .confirm)))
        defer { peer.stop() }
        let result = try await Self.pair(peer, [], state: state)
        ExitStatusTests.expectOneLine(result, status: 81)
        #expect(result.stderrExceptWaits == "rawble: pairing with \(Self.named) failed: rawble stopped it: Confirm Value Failed (0x04): "
                + "a confirm value did not match its random value (the pairing was tampered with, or a peer's bug): pair again\n",
                "\(result.stderr)")
        #expect(await eventually { (try? Self.strapFailures(peer)) == [0x04] }, "the strap logged rawble's Pairing Failed 0x04")
    }

    @Test("a DHKey check that fails (the strap's corrupted): 82, rawble's DHKey Check Failed in one line")
    func dhKeyCheckFailure() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await PairCommandTests.start(BumblePeer.StrapSecurity(pairing: BumblePeer.PairingOptions(fault: .dhKeyCheck)))
        defer { peer.stop() }
        let result = try await Self.pair(peer, [], state: state)
        ExitStatusTests.expectOneLine(result, status: 82)
        #expect(result.stderrExceptWaits == "rawble: pairing with \(Self.named) failed: rawble stopped it: DHKey Check Failed (0x0B): "
                + "the two sides' keys do not agree (a wrong passkey, or an attacker's public key): pair again\n",
                "\(result.stderr)")
        #expect(await eventually { (try? Self.strapFailures(peer)) == [0x0B] }, "the strap logged rawble's Pairing Failed 0x0B")
    }

    @Test("a read refused for encryption whose automatic pairing fails (the strap's DHKey check corrupted): 82 and the SMP reason, not the ATT refusal")
    func automaticPairingFailure() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await PairCommandTests.start(BumblePeer.StrapSecurity(
            pairing: BumblePeer.PairingOptions(fault: .dhKeyCheck), encryptedRead: true))
        defer { peer.stop() }
        let result = try await CLI.run(["read", Self.strap, EncryptedRead.characteristic, "--transport", peer.transport,
                                        "--timeout", "20"],
                                       environment: state.environment, launcher: ["/usr/bin/setsid", "-w"])
        ExitStatusTests.expectOneLine(result, status: 82)
        #expect(result.stderr.hasPrefix("rawble: pairing with \(Self.named) failed: rawble stopped it: DHKey Check Failed (0x0B)"),
                "\(result.stderr)")
    }

    @Test("the strap refusing the comparison: 83, its Numeric Comparison Failed in one line")
    func peerAborts() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await PairCommandTests.start(BumblePeer.StrapSecurity(
            pairing: BumblePeer.PairingOptions(io: .yesNo, mitm: true, rejectComparison: true)))
        defer { peer.stop() }
        let result = try await Self.pair(peer, ["--io", "yesno", "--confirm"], state: state)
        #expect(result.status == 83, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        // The digits rawble accepted (when its agent was asked before the strap's refusal came),
        // then the one error line.
        #expect(!lines.isEmpty && lines.dropLast().allSatisfy { $0.hasPrefix("rawble: accepted ") } && lines.count <= 2,
                "\(result.stderr)")
        #expect(lines.last == "rawble: pairing with \(Self.named) failed: the peer stopped it: Numeric Comparison Failed (0x0C): "
                + "the numbers were not confirmed on \(Self.strap)", "\(result.stderr)")
    }

    @Test("--security authenticated with a strap that has no input or output (Just Works only): 85, one line")
    func methodUnavailable() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await PairCommandTests.start(BumblePeer.StrapSecurity())
        defer { peer.stop() }
        let result = try await CLI.run(["read", Self.strap, "2A19", "--transport", peer.transport, "--timeout", "20",
                                        "--io", "keyboard-display", "--security", "authenticated"],
                                       environment: state.environment, launcher: ["/usr/bin/setsid", "-w"])
        ExitStatusTests.expectOneLine(result, status: 85)
        #expect(result.stderrExceptWaits == "rawble: the link to \(Self.named) is only encrypted (unauthenticated key), "
                + "encrypted with an authenticated key is required: pair with an input or output method both sides have (--io)\n",
                "\(result.stderr)")
    }

    /// SMP's timeout is 30 s by the specification (Core Vol 3 Part H 3.4), and rawble's engine
    /// keeps it: this test takes about that long.
    @Test("a strap that goes silent after its Pairing Response: SMP's 30 s timeout, 84, one line")
    func smpTimeout() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await PairCommandTests.start(BumblePeer.StrapSecurity(pairing: BumblePeer.PairingOptions(fault: .silent)))
        defer { peer.stop() }
        let result = try await Self.pair(peer, [], state: state)
        ExitStatusTests.expectOneLine(result, status: 84)
        #expect(result.stderrLines.first?.hasPrefix("pairing with \(Self.strap) (") == true, "the wait told: \(result.stderr)")
        #expect(result.stderrExceptWaits == "rawble: pairing with \(Self.named) failed: SMP timeout: no SMP command for 30 s: "
                + "\(Self.strap) stopped answering mid-pairing (or a passkey was not entered in time): pair again\n",
                "\(result.stderr)")
        #expect(try peer.pairings().isEmpty)
    }
}

/// `hr` and `shell` with `--security` and the bond `rawble pair` (or their own pairing) keeps.
@Suite("rawble hr and shell on rawble's own host: --security, and the bond used again without pairing",
       .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct SecureHeartRateAndShellTests {
    static let strap = PairCommandTests.strap

    /// The strap's encryption steps, by the key used: "pairing" or "bond".
    static func encryptions(_ peer: BumblePeer) throws -> [String] {
        try peer.securityLog().compactMap { event in
            if case .encryption(let change) = event, change.enabled { change.key ?? "?" } else { nil }
        }
    }

    @Test("hr --security encrypted pairs, then shows measurements; a second hr run encrypts with the bond, no pairing")
    func heartRateReusesTheBond() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await PairCommandTests.start(BumblePeer.StrapSecurity(encryptedRead: true))
        defer { peer.stop() }
        let arguments = ["hr", Self.strap, "--security", "encrypted", "--count", "3", "--json", "--transport", peer.transport,
                         "--timeout", "20"]
        let first = try await CLI.run(arguments, environment: state.environment)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.components(separatedBy: "\"event\":\"measurement\"").count - 1 == 3, "\(first.stdout)")
        #expect(try peer.pairings().count == 1)
        #expect(try Self.encryptions(peer) == ["pairing"])
        let second = try await CLI.run(arguments, environment: state.environment)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.components(separatedBy: "\"event\":\"measurement\"").count - 1 == 3, "\(second.stdout)")
        #expect(try peer.pairings().count == 1, "encrypted with the bond, not paired again")
        #expect(try Self.encryptions(peer) == ["pairing", "bond"])
    }

    @Test("hr --security encrypted with a strap that disconnects: the reconnection encrypts with the bond the first connection made, no second pairing")
    func heartRateReconnectEncrypts() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await BumblePeer.start(arguments: ["--strap-only", "--hr-interval", "0.02", "--hr-disconnect-after", "5"])
        defer { peer.stop() }
        let result = try await CLI.run(["hr", Self.strap, "--security", "encrypted", "--count", "8", "--json",
                                        "--transport", peer.transport, "--timeout", "20"], environment: state.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.components(separatedBy: "\"event\":\"connected\"").count - 1 == 2, "\(result.stdout)")
        #expect(result.stdout.components(separatedBy: "\"event\":\"measurement\"").count - 1 == 8, "\(result.stdout)")
        #expect(try peer.pairings().count == 1)
        #expect(try Self.encryptions(peer) == ["pairing", "bond"])
    }

    @Test("hr uses the bond rawble pair made: --security encrypted encrypts with it, no pairing")
    func heartRateUsesPairsBond() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await PairCommandTests.start(BumblePeer.StrapSecurity(encryptedRead: true))
        defer { peer.stop() }
        let pair = try await CLI.run(["pair", Self.strap, "--transport", peer.transport, "--timeout", "20"], environment: state.environment)
        #expect(pair.status == 0, "\(pair.stderr)")
        let hr = try await CLI.run(["hr", Self.strap, "--security", "encrypted", "--count", "2", "--json",
                                    "--transport", peer.transport, "--timeout", "20"], environment: state.environment)
        #expect(hr.status == 0, "\(hr.stderr)")
        #expect(hr.stdout.components(separatedBy: "\"event\":\"measurement\"").count - 1 == 2, "\(hr.stdout)")
        #expect(try peer.pairings().count == 1)
        #expect(try Self.encryptions(peer) == ["pairing", "bond"])
    }

    @Test("shell --security encrypted: connect pairs first, and the sealed characteristic reads")
    func shellSecurity() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await PairCommandTests.start(BumblePeer.StrapSecurity(encryptedRead: true))
        defer { peer.stop() }
        let shell = try ShellProcess(["shell", Self.strap, "--security", "encrypted", "--transport", peer.transport,
                                      "--timeout", "20", "--json"], environment: state.environment)
        shell.send("read \(EncryptedRead.characteristic)")
        shell.send("quit")
        let result = await shell.finish()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(EncryptedRead.valueHex), "\(result.stdout)")
        #expect(try peer.pairings().count == 1)
        #expect(try Self.encryptions(peer) == ["pairing"], "paired on connecting, before the read")
    }
}

@Suite("hr, shell and peripheral pairing options: what needs no peer")
struct PairingOptionsLocalTests {
    /// The statuses `rawble --help` lists ("Exit statuses: 0 success, 64 usage, ...").
    static func helpStatuses(_ help: String) throws -> [Int] {
        let start = try #require(help.range(of: "Exit statuses:"))
        let text = help[start.upperBound...].prefix { $0 != "." }
        return text.split(separator: ",").compactMap { part in
            Int(part.split(whereSeparator: \.isWhitespace).first ?? "")
        }
    }

    @Test("the exit statuses rawble --help lists are docs/cli.md's table and the README's list, each once")
    func statusesAgree() async throws {
        let help = try await CLI.run(["--help"])
        #expect(help.status == 0)
        let listed = try Self.helpStatuses(help.stdout.replacingOccurrences(of: "\n", with: " "))
        #expect(listed.contains(79) && (80...85).allSatisfy(listed.contains), "\(listed)")
        #expect(Set(listed).count == listed.count, "a status listed twice: \(listed)")
        let documentation = try String(contentsOf: CLIReferenceTests.root.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        // The table under "| status | class | for example |", up to its last row.
        let lines = documentation.split(separator: "\n", omittingEmptySubsequences: false)
        let header = try #require(lines.firstIndex { $0.hasPrefix("| status | class |") })
        let table = lines[(header + 2)...].prefix { $0.hasPrefix("| ") }.compactMap { line in
            Int(line.dropFirst(2).prefix { $0.isNumber })
        }
        #expect(table == listed, "docs/cli.md's table: \(table); rawble --help: \(listed)")
        let readme = try String(contentsOf: CLIReferenceTests.root.appendingPathComponent("README.md"), encoding: .utf8)
            .replacingOccurrences(of: "\n", with: " ")
        for status in listed where status != 0 {
            #expect(readme.contains(" \(status) "), "the README does not list \(status)")
        }
    }

    @Test("hr, shell and peripheral with --io on hciN: 69, one line saying the kernel pairs there",
          arguments: [["hr", "--io", "keyboard"], ["shell", "C0:B1:E0:00:00:01", "--security", "encrypted"],
                      ["peripheral", "hr", "--io", "display"]])
    func kernelRefusal(arguments: [String]) async throws {
        let result = try await CLI.run(arguments + ["--transport", "hci0"])
        ExitStatusTests.expectOneLine(result, status: 69, containing: "pairing on hci0 is the kernel's (pair with bluetoothctl there)")
    }
}

/// `rawble peripheral hr --require` against Bumble's GATT client (`Scripts/bumble-central`) on
/// one virtual link: refused before pairing, served after, and a bonded central encrypting
/// again without pairing.
@Suite("rawble peripheral --require and pairing", .serialized,
       .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct PeripheralSecurityTests {
    static func readValue(_ central: BumbleCentral, _ uuid: String) -> [UInt8]? {
        central.events.first { $0.event == "read" && $0.uuid == uuid && $0.descriptor == false }?.bytes
    }

    static func readError(_ central: BumbleCentral, _ uuid: String) -> UInt8? {
        central.events.first { $0.event == "error" && $0.during == "read" && $0.uuid == uuid }?.attError
    }

    @Test("--require encrypted: a central that does not pair is answered Insufficient Encryption (0x0F), reading or subscribing, and gets no notification; the GAP name stays readable")
    func refusedWithoutPairing() async throws {
        let central = try await BumbleCentral.start(target: "rawble-hr", arguments: ["--no-standard"], ports: 2, timeout: 40)
        defer { central.stop() }
        let strap = try await PeripheralCommandTests.peripheral(["hr", "--transport", central.peer.controllers[1].transport,
                                                                 "--require", "encrypted"])
        let done = try await central.finished()
        #expect(done.doneReason != nil, "\(central.events)")
        #expect(strap.status == 0, "\(strap.stderr)")
        #expect(Self.readValue(central, "2A00") == Array("rawble-hr".utf8))
        #expect(Self.readError(central, "2A38") == 0x0F, "\(central.events)")
        #expect(Self.readError(central, "2A19") == 0x0F, "\(central.events)")
        #expect(Self.readValue(central, "2A38") == nil)
        // Subscribing needs encryption too (the CCCD's write access): no measurement reaches the link.
        #expect(central.events.first { $0.event == "error" && $0.during == "subscribe" && $0.uuid == "2A37" }?.attError == 0x0F,
                "\(central.events)")
        #expect(!central.events.contains { $0.event == "notification" || $0.event == "indication" }, "\(central.events)")
    }

    @Test("--require encrypted: a central that pairs (Just Works) reads; reconnecting, it encrypts with the bond rawble kept, no pairing, and reads again")
    func servedAfterPairingAndWithTheBond() async throws {
        let central = try await BumbleCentral.start(
            target: "rawble-hr", arguments: ["--no-standard"], ports: 2, timeout: 60,
            pairing: BumbleCentral.Pairing(reconnectEncrypt: true))
        defer { central.stop() }
        let strap = try await PeripheralCommandTests.peripheral(["hr", "--transport", central.peer.controllers[1].transport,
                                                                 "--require", "encrypted"], disconnections: 2)
        let done = try await central.finished()
        #expect(done.doneReason != nil, "\(central.events)")
        #expect(strap.status == 0, "\(strap.stderr)")
        #expect(central.pairings.count == 1, "\(central.securityEvents)")
        let keys = central.securityEvents.compactMap { event -> String? in
            if case .encryption(let change) = event, change.enabled { change.key } else { nil }
        }
        #expect(keys == ["pairing", "bond"], "\(central.securityEvents)")
        #expect(Self.readValue(central, "2A38") == [0x01], "\(central.events)")
        #expect(Self.readError(central, "2A38") == nil, "\(central.events)")
    }

    @Test("--require authenticated --io keyboard --passkey 123456: a central displaying 123456 pairs with Passkey Entry and reads; one pairing Just Works is answered Insufficient Authentication (0x05)",
          arguments: [true, false])
    func authenticated(passkey: Bool) async throws {
        // rawble types the passkey the central shows: a passkey rawble shows is new each time,
        // and the central cannot know it beforehand.
        let options = passkey ? BumblePeer.PairingOptions(io: .display, mitm: true, passkey: 123456) : BumblePeer.PairingOptions()
        let central = try await BumbleCentral.start(
            target: "rawble-hr", arguments: ["--no-standard"], ports: 2, timeout: 60, pairing: BumbleCentral.Pairing(options: options))
        defer { central.stop() }
        let strap = try await PeripheralCommandTests.peripheral(["hr", "--transport", central.peer.controllers[1].transport,
                                                                 "--require", "authenticated", "--io", "keyboard", "--passkey", "123456"])
        let done = try await central.finished()
        #expect(done.doneReason != nil, "\(central.events)")
        #expect(strap.status == 0, "\(strap.stderr)")
        let record = try #require(central.pairings.first, "\(central.securityEvents)")
        #expect(record.authenticated == passkey)
        if passkey {
            #expect(Self.readValue(central, "2A38") == [0x01], "\(central.events)")
        } else {
            #expect(Self.readError(central, "2A38") == 0x05, "\(central.events)")
        }
    }
}

@Suite("--private-address: rawble's own resolvable private address from the command line", .serialized,
       .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct PrivateAddressCommandTests {
    @Test("peripheral hr --private-address: it advertises from a resolvable private address that rawble's identity key resolves; a central that pairs receives that key and the identity address")
    func peripheralAdvertisesFromAPrivateAddress() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let central = try await BumbleCentral.start(target: "rawble-hr", arguments: ["--no-standard"], ports: 2, timeout: 60,
                                                    pairing: BumbleCentral.Pairing())
        defer { central.stop() }
        let environment = state.environment
        let transport = central.peer.controllers[1].transport
        let strap = try await onOwnThread {
            try CLI.runBlocking(
                ["peripheral", "hr", "--transport", transport, "--private-address", "--json"], environment: environment,
                trigger: CLI.Trigger(ready: { stdout, _ in stdout.contains("\"event\":\"disconnected\"") },
                                     readyLimit: .seconds(90), action: { kill($0, SIGINT) }),
                limit: .seconds(120))
        }
        #expect(strap.status == 0, "\(strap.stderr)")
        let identity = try state.onlyIdentity().identity
        let advertised = try #require(PeripheralCommandTests.events(strap).first { $0["event"] as? String == "advertising" }?["address"] as? String)
        let address = try #require(BluetoothAddress(advertised))
        #expect(address.randomKind == .resolvablePrivate && address.isResolvable(with: identity.identityResolvingKey),
                "advertised from \(advertised), which the identity's IRK resolves")
        #expect(address != identity.address, "not the identity address itself")
        let pairing = try #require(central.pairings.first, "\(central.securityEvents)")
        #expect(pairing.peerIdentityResolvingKey == identity.identityResolvingKey, "the central received rawble's IRK")
        #expect(pairing.peerAddress == identity.address.description && pairing.peerAddressType == "random")
        #expect(pairing.peerConnectionAddress == advertised)
    }

    @Test("--private-address on hciN: 69, one line naming where the kernel's own address is set")
    func refusedOnTheKernelPath() async throws {
        let result = try await CLI.run(["peripheral", "hr", "--transport", "hci0", "--private-address"])
        ExitStatusTests.expectOneLine(result, status: 69)
        #expect(result.stderr.contains("bluetoothd's Privacy setting"), "\(result.stderr)")
    }
}
