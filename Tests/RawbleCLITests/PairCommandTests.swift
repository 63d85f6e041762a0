import Foundation
import RawbleStack
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

@testable import rawble

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

    /// The state folder: identities and bonds.
    var folder: URL { root.appendingPathComponent("state/rawble") }

    /// Where rawble 0.1.0 kept its one identity.
    var formerIdentityPath: String { folder.appendingPathComponent(LocalIdentity.formerFileName).path }

    /// The identity file of the adapter without a public address at `transport` (Bumble's
    /// one-port controller).
    func identityPath(transport: String) throws -> String {
        folder.appendingPathComponent(IdentityOwner(publicAddress: nil, transport: try TransportAddress(transport)).fileName).path
    }

    /// The one identity kept in this state (one adapter used).
    func onlyIdentity() throws -> (path: String, identity: LocalIdentity) {
        let kept = try LocalIdentity.all(environment: environment)
        try #require(kept.count == 1, "\(kept.map(\.owner))")
        let owner = try #require(kept[0].owner)
        return (folder.appendingPathComponent(owner.fileName).path, kept[0].identity)
    }

    func remove() { try? FileManager.default.removeItem(at: root) }
}

@Suite("rawble pair and bonds against Bumble's strap over H4 (rawble's own Security Manager)",
       .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct PairCommandTests {
    static let strap = "C0:B1:E0:00:00:01"

    /// `controller`: the served controller's public address (rawble's identity is that
    /// controller's, whatever port it is served on); none by default (the identity is the port's).
    static func start(_ security: BumblePeer.StrapSecurity, controller: String? = nil) async throws -> BumblePeer {
        try await BumblePeer.start(arguments: ["--strap-only"] + security.arguments
                                   + (controller.map { ["--controller-address", $0] } ?? []))
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
        // Bumble's one controller has no public address: the identity is its transport's.
        let identityPath = try state.onlyIdentity().path
        #expect(identityPath == (try state.identityPath(transport: peer.transport)))
        let attributes = try FileManager.default.attributesOfItem(atPath: identityPath)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let first = try String(contentsOfFile: identityPath, encoding: .utf8)
        #expect(first.contains("\naddress ") && first.contains("\nirk "), "\(first)")
        // A second run keeps the same identity.
        let again = try await CLI.run(["pair", Self.strap, "--transport", peer.transport, "--timeout", "20", "--json"],
                                      environment: state.environment)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("\"method\":\"Just Works\"") && again.stdout.contains("\"bonded\":true"), "\(again.stdout)")
        #expect(try String(contentsOfFile: identityPath, encoding: .utf8) == first)
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

    @Test("""
        the bond lasts: bonds --json lists the strap; a later read in a new process encrypts with it without pairing; \
        bonds remove forgets it. The pairing's capture and trace hold no key (LTK, IRK zeros), the read's with \
        --include-keys holds the bond's LTK
        """)
    func bondLasts() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await Self.start(BumblePeer.StrapSecurity(encryptedRead: true))
        defer { peer.stop() }
        let pairCapture = state.root.appendingPathComponent("pair.btsnoop").path
        let pair = try await CLI.run(["pair", Self.strap, "--transport", peer.transport, "--timeout", "20",
                                      "--btsnoop", pairCapture, "--trace"], environment: state.environment)
        #expect(pair.status == 0, "\(pair.stderr)")
        let ltk = try bondLongTermKey(state)
        let redacted = try capturedKeys(pairCapture)
        #expect(!redacted.encryptionKeys.isEmpty && !redacted.distributedKeys.isEmpty, "the pairing encrypted and distributed keys")
        #expect((redacted.encryptionKeys + redacted.distributedKeys).allSatisfy { $0 == [UInt8](repeating: 0, count: 16) })
        #expect(redacted.file.range(of: Data(ltk)) == nil, "the LTK is nowhere in the capture")
        #expect(!pair.stderr.lowercased().contains(Hex.encode(ltk).lowercased())
                && !pair.stderr.lowercased().contains(Hex.encode(ltk.reversed()).lowercased()), "the LTK is nowhere in the trace")
        #expect(!pair.stderr.contains("--include-keys"), "no warning without the option")
        #expect(try FileManager.default.attributesOfItem(atPath: pairCapture)[.posixPermissions] as? Int == 0o600)
        let list = try await CLI.run(["bonds", "--json"], environment: state.environment)
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains("\"address\":\"\(Self.strap)\"") && list.stdout.contains("\"secureConnections\":true")
                && list.stdout.contains("\"authenticated\":false"), "\(list.stdout)")
        #expect(!list.stdout.lowercased().contains("key\":\"") && list.stdout.split(separator: "\n").count == 1, "\(list.stdout)")
        let readCapture = state.root.appendingPathComponent("read.btsnoop").path
        let read = try await CLI.run(["read", Self.strap, EncryptedRead.characteristic, "--transport", peer.transport,
                                      "--timeout", "20", "--json", "--btsnoop", readCapture, "--include-keys"],
                                     environment: state.environment)
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout.contains(EncryptedRead.valueHex), "\(read.stdout)")
        #expect(try capturedKeys(readCapture).encryptionKeys == [ltk], "LE Enable Encryption with the bond's LTK, kept")
        #expect(read.stderr.split(separator: "\n").filter { $0.contains("warning: --include-keys") }.count == 1, "\(read.stderr)")
        #expect(try peer.pairings().count == 1, "encrypted with the bond, not paired again")
        let remove = try await CLI.run(["bonds", "remove", Self.strap], environment: state.environment)
        #expect(remove.status == 0, "\(remove.stderr)")
        #expect(remove.stdout.hasPrefix("removed the bond with \(Self.strap)"), "\(remove.stdout)")
        let after = try await CLI.run(["bonds"], environment: state.environment)
        #expect(after.status == 0 && after.stdout.isEmpty, "\(after.stdout)\(after.stderr)")
    }

    @Test("the adapter's identity file that is not one: 65, one line naming the path and the fix; one others can read: 77, one line; each left as it is (LocalIdentityTests has every refusal)")
    func refusedIdentity() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let peer = try await Self.start(BumblePeer.StrapSecurity())
        defer { peer.stop() }
        let path = try state.identityPath(transport: peer.transport)
        try FileManager.default.createDirectory(at: state.folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let malformed = "address 11:22:33:44:55:66\nirk 00\n"
        try Data(malformed.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        let pair = ["pair", Self.strap, "--transport", peer.transport, "--timeout", "20"]
        let result = try await CLI.run(pair, environment: state.environment)
        ExitStatusTests.expectOneLine(result, status: 65, containing: "\(path) is not rawble's identity")
        #expect(result.stderr.contains("rm \(path)"), "\(result.stderr)")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == malformed)

        try Data("address C1:22:33:44:55:66\nirk 000102030405060708090a0b0c0d0e0f\n".utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        let open = try await CLI.run(pair, environment: state.environment)
        ExitStatusTests.expectOneLine(open, status: 77, containing: "\(path) can be read or written by other users (mode 0644)")
        #expect(open.stderr.contains("chmod 600 \(path)"), "\(open.stderr)")
        #expect(try peer.pairings().isEmpty, "no pairing as a refused identity")
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

/// The LTK of the one bond kept in `state`'s bond file, in the order it crosses HCI (little-endian).
private func bondLongTermKey(_ state: TemporaryState) throws -> [UInt8] {
    let folder = state.root.appendingPathComponent("state/rawble")
    let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasSuffix(".bonds") })
    let text = try String(contentsOfFile: folder.appendingPathComponent(name).path, encoding: .utf8)
    let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("central-ltk ") }, "\(text)")
    return try Hex.decode(String(line.split(separator: " ")[1])).reversed()
}

/// The keys in the btsnoop file at `path`: the LTK of each LE Enable Encryption, the key of each
/// SMP Encryption, Identity or Signing Information (either direction, one ACL fragment each),
/// and the file's bytes.
private func capturedKeys(_ path: String) throws -> (encryptionKeys: [[UInt8]], distributedKeys: [[UInt8]], file: Data) {
    let file = try Data(contentsOf: URL(fileURLWithPath: path))
    let read = BtsnoopReader.read(Array(file))
    #expect(read.error == nil)
    var encryptionKeys: [[UInt8]] = []
    var distributedKeys: [[UInt8]] = []
    for record in read.records {
        guard let packet = try record.h4Packet(datalink: .hciUART) else { continue }
        let bytes = Array(packet.bytes)
        if packet.type == .command, bytes.count == 3 + 28, bytes[0] == 0x19, bytes[1] == 0x20 {
            encryptionKeys.append(Array(bytes[15...]))
        }
        if packet.type == .acl, bytes.count == 4 + 21, bytes[6] == 0x06, bytes[7] == 0x00, [0x06, 0x08, 0x0A].contains(bytes[8]) {
            distributedKeys.append(Array(bytes[9...]))
        }
    }
    return (encryptionKeys, distributedKeys, file)
}

@Suite("rawble's identity file is read only when private")
struct IdentityFileTests {
    @Test("another user's identity file is refused (77, one line), never read")
    func foreignIdentity() throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let path = try state.identityPath(transport: "user:hci0")
        try FileManager.default.createDirectory(at: state.folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try LocalIdentity.keep(LocalIdentity.generate(), at: path, owner: .transport("user:hci0"))
        #expect(try LocalIdentity.readFile(path) != nil, "this user's own is read")
        let someoneElse = geteuid() &+ 1
        do {
            _ = try LocalIdentity.readFile(path, owner: someoneElse)
            Issue.record("another user's identity file was read")
        } catch let error as CLIError {
            #expect(error.status == .permission)
            #expect(error.description.contains("\(path) belongs to user \(geteuid()), not to this user (\(someoneElse))"), "\(error)")
        }
    }
}
