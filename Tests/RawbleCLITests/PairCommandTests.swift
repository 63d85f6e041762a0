import Foundation
import RawbleTestSupport
import Testing

/// A temporary state folder for one test (`XDG_STATE_HOME` and `HOME`): its identity and bonds.
struct TemporaryState {
    let root: URL

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-state-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    var environment: [String: String] {
        ["XDG_STATE_HOME": root.appendingPathComponent("state").path, "HOME": root.appendingPathComponent("home").path]
    }

    var identityPath: String { root.appendingPathComponent("state/rawble/identity").path }

    func remove() { try? FileManager.default.removeItem(at: root) }
}

@Suite("rawble pair and bonds against Bumble's strap over H4 (rawble's own Security Manager)",
       .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct PairCommandTests {
    static let strap = "C0:B1:E0:00:00:01"

    static func start(_ security: BumblePeer.StrapSecurity) async throws -> BumblePeer {
        try await BumblePeer.start(arguments: ["--strap-only"] + security.arguments)
    }

    @Test("pair: Just Works, one line (LE Secure Connections, unauthenticated, bonded); the identity file is made 0600 and kept")
    func justWorks() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await Self.start(BumblePeer.StrapSecurity())
        defer { peer.stop() }
        let result = try await CLI.run(["pair", Self.strap, "--transport", peer.transport, "--timeout", "20"],
                                       environment: state.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("paired with \(Self.strap) (random static): Just Works, LE Secure Connections, unauthenticated, bonded (16-octet key)"),
                "\(result.stdout)")
        #expect(try peer.pairings().count == 1)
        let attributes = try FileManager.default.attributesOfItem(atPath: state.identityPath)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let first = try String(contentsOfFile: state.identityPath, encoding: .utf8)
        #expect(first.contains("\naddress ") && first.contains("\nirk "), "\(first)")
        // A second run keeps the same identity.
        let again = try await CLI.run(["pair", Self.strap, "--transport", peer.transport, "--timeout", "20", "--json"],
                                      environment: state.environment)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("\"method\":\"Just Works\"") && again.stdout.contains("\"bonded\":true"), "\(again.stdout)")
        #expect(try String(contentsOfFile: state.identityPath, encoding: .utf8) == first)
    }

    @Test("pair --io keyboard --passkey 123456 with a strap displaying 123456: Passkey Entry, authenticated")
    func passkeyEntry() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await Self.start(BumblePeer.StrapSecurity(pairing: BumblePeer.PairingOptions(io: .display, mitm: true, passkey: 123456)))
        defer { peer.stop() }
        let result = try await CLI.run(["pair", Self.strap, "--transport", peer.transport, "--timeout", "20",
                                        "--io", "keyboard", "--passkey", "123456"], environment: state.environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Passkey Entry, LE Secure Connections, authenticated, bonded"), "\(result.stdout)")
        #expect(try peer.pairings().first?.authenticated == true)
    }

    @Test("a wrong passkey: 80 and one line naming Confirm Value Failed")
    func wrongPasskey() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await Self.start(BumblePeer.StrapSecurity(pairing: BumblePeer.PairingOptions(io: .display, mitm: true, passkey: 123456)))
        defer { peer.stop() }
        let result = try await CLI.run(["pair", Self.strap, "--transport", peer.transport, "--timeout", "20",
                                        "--io", "keyboard", "--passkey", "654321"], environment: state.environment)
        ExitStatusTests.expectOneLine(result, status: 80, containing: "Confirm Value Failed")
    }

    @Test("no terminal and no --passkey: the passkey is declined, 80 and one line naming Passkey Entry Failed")
    func noTerminal() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await Self.start(BumblePeer.StrapSecurity(pairing: BumblePeer.PairingOptions(io: .display, mitm: true, passkey: 123456)))
        defer { peer.stop() }
        let result = try await CLI.run(["pair", Self.strap, "--transport", peer.transport, "--timeout", "20",
                                        "--io", "keyboard"], environment: state.environment, launcher: ["/usr/bin/setsid", "-w"])
        ExitStatusTests.expectOneLine(result, status: 80, containing: "rawble stopped it: Passkey Entry Failed")
    }

    @Test("the bond lasts: bonds --json lists the strap; a later read in a new process encrypts with it without pairing; bonds remove forgets it")
    func bondLasts() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await Self.start(BumblePeer.StrapSecurity(encryptedRead: true))
        defer { peer.stop() }
        let pair = try await CLI.run(["pair", Self.strap, "--transport", peer.transport, "--timeout", "20"], environment: state.environment)
        #expect(pair.status == 0, "\(pair.stderr)")
        let list = try await CLI.run(["bonds", "--json"], environment: state.environment)
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains("\"address\":\"\(Self.strap)\"") && list.stdout.contains("\"secureConnections\":true")
                && list.stdout.contains("\"authenticated\":false"), "\(list.stdout)")
        #expect(!list.stdout.lowercased().contains("key\":\"") && list.stdout.split(separator: "\n").count == 1, "\(list.stdout)")
        let read = try await CLI.run(["read", Self.strap, EncryptedRead.characteristic, "--transport", peer.transport,
                                      "--timeout", "20", "--json"], environment: state.environment)
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout.contains(EncryptedRead.valueHex), "\(read.stdout)")
        #expect(try peer.pairings().count == 1, "encrypted with the bond, not paired again")
        let remove = try await CLI.run(["bonds", "remove", Self.strap], environment: state.environment)
        #expect(remove.status == 0, "\(remove.stderr)")
        #expect(remove.stdout.hasPrefix("removed the bond with \(Self.strap)"), "\(remove.stdout)")
        let after = try await CLI.run(["bonds"], environment: state.environment)
        #expect(after.status == 0 && after.stdout.isEmpty, "\(after.stdout)\(after.stderr)")
    }

    @Test("read --security encrypted pairs before reading; --security authenticated with a Just Works strap: 85, one line")
    func securityOption() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await Self.start(BumblePeer.StrapSecurity(encryptedRead: true))
        defer { peer.stop() }
        let read = try await CLI.run(["read", Self.strap, EncryptedRead.characteristic, "--transport", peer.transport,
                                      "--timeout", "20", "--security", "encrypted", "--json"], environment: state.environment)
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout.contains(EncryptedRead.valueHex), "\(read.stdout)")
        #expect(try peer.pairings().count == 1)
        let authenticated = try await CLI.run(["read", Self.strap, "2A19", "--transport", peer.transport, "--timeout", "20",
                                               "--security", "authenticated"], environment: state.environment)
        ExitStatusTests.expectOneLine(authenticated, status: 85, containing: "authenticated key is required")
    }
}

@Suite("rawble pair and bonds: what needs no peer")
struct PairCommandLocalTests {
    @Test("pair on hciN: 69, one line saying the kernel pairs there")
    func kernelPath() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let result = try await CLI.run(["pair", "C0:B1:E0:00:00:01", "--transport", "hci0"], environment: state.environment)
        ExitStatusTests.expectOneLine(result, status: 69, containing: "bluetoothctl")
        let read = try await CLI.run(["read", "C0:B1:E0:00:00:01", "2A19", "--transport", "hci0", "--io", "keyboard"],
                                     environment: state.environment)
        ExitStatusTests.expectOneLine(read, status: 69, containing: "kernel's")
    }

    @Test("an identity file that is not one: 65, one line naming the path and the fix")
    func badIdentity() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let folder = (state.identityPath as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data("address 11:22:33:44:55:66\nirk 00\n".utf8).write(to: URL(fileURLWithPath: state.identityPath))
        let result = try await CLI.run(["pair", "C0:B1:E0:00:00:01", "--transport", "unix:" + ExitStatusTests.missingPath()],
                                       environment: state.environment)
        ExitStatusTests.expectOneLine(result, status: 65, containing: "\(state.identityPath) is not rawble's identity")
        #expect(result.stderr.contains("rm \(state.identityPath)"), "\(result.stderr)")
    }

    @Test("bonds with none kept: nothing listed; bonds remove of an unknown address: 67, one line")
    func noBonds() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let list = try await CLI.run(["bonds", "--json"], environment: state.environment)
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.isEmpty, "\(list.stdout)")
        let remove = try await CLI.run(["bonds", "remove", "C0:B1:E0:00:00:01"], environment: state.environment)
        ExitStatusTests.expectOneLine(remove, status: 67, containing: "no bond with C0:B1:E0:00:00:01")
    }

    @Test("--passkey above 999999 is a usage error")
    func badPasskey() async throws {
        let result = try await CLI.run(["pair", "C0:B1:E0:00:00:01", "--passkey", "1000000"])
        ExitStatusTests.expectOneLine(result, status: 64, containing: "--passkey")
    }
}
