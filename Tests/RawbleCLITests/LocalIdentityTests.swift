import Foundation
import RawbleSMP
import RawbleStack
import RawbleWire
import Synchronization
import Testing

@testable import rawble

/// rawble's own-host identity, one per adapter (issue 39): which file an adapter's identity is
/// in, rawble 0.1.0's one identity taken over by one adapter, refused files, and rawble
/// processes starting at once. No controller: `LocalIdentity.load` is what a session's
/// start-up calls once it has read the controller's public address.
@Suite("rawble's identity: one per adapter")
struct LocalIdentityTests {
    static let controller = BluetoothAddress(0x52_41_57_42_4C_01)

    static func transport(_ text: String) throws -> TransportAddress { try TransportAddress(text) }

    static func load(_ owner: IdentityOwner, _ transport: String, _ state: TemporaryState) throws -> LocalIdentity.Loaded {
        try LocalIdentity.load(for: owner, transport: try Self.transport(transport), environment: state.environment)
    }

    /// The identity files in `state`'s folder (dot files, temporary ones, left out).
    static func identityFiles(_ state: TemporaryState) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: state.folder.path).filter { $0.hasPrefix("identity") }.sorted()
    }

    @Test("the adapter is its controller when it has a public address, else its transport (a serial port without its baud rate)")
    func owners() throws {
        let tcp = try Self.transport("tcp:127.0.0.1:9000")
        #expect(IdentityOwner(publicAddress: Self.controller, transport: tcp) == .controller(Self.controller))
        #expect(IdentityOwner(publicAddress: Self.controller, transport: try Self.transport("user:hci1")) == .controller(Self.controller))
        // Bumble's controllers and many UART firmwares report no public address: all zeros.
        #expect(IdentityOwner(publicAddress: .any, transport: tcp) == .transport("tcp:127.0.0.1:9000"))
        #expect(IdentityOwner(publicAddress: BluetoothAddress(0xFFFF_FFFF_FFFF), transport: tcp) == .transport("tcp:127.0.0.1:9000"))
        #expect(IdentityOwner(publicAddress: nil, transport: try Self.transport("serial:/dev/ttyUSB0:1000000"))
                == .transport("serial:/dev/ttyUSB0"))
        #expect(IdentityOwner(publicAddress: nil, transport: try Self.transport("serial:/dev/ttyUSB0"))
                == .transport("serial:/dev/ttyUSB0"))
        #expect(IdentityOwner(publicAddress: nil, transport: try Self.transport("user:hci0")) == .transport("user:hci0"))
    }

    @Test("file names: one per adapter, readable, no '/' (escaped as %XX), read back to the same adapter; other names are no adapter's")
    func fileNames() throws {
        let named: [(IdentityOwner, String)] = [
            (.controller(Self.controller), "identity-controller-52-41-57-42-4C-01"),
            (.transport("tcp:127.0.0.1:9000"), "identity-transport-tcp:127.0.0.1:9000"),
            (.transport("tcp:[::1]:9000"), "identity-transport-tcp:%5B::1%5D:9000"),
            (.transport("unix:/tmp/bumble hci.sock"), "identity-transport-unix:%2Ftmp%2Fbumble%20hci.sock"),
            (.transport("serial:/dev/serial/by-id/usb-Nordic_nRF52-if00"), "identity-transport-serial:%2Fdev%2Fserial%2Fby-id%2Fusb-Nordic_nRF52-if00"),
            (.transport("user:hci0"), "identity-transport-user:hci0"),
            (.transport("unix:/tmp/%2F"), "identity-transport-unix:%2Ftmp%2F%252F"),
        ]
        for (owner, name) in named {
            #expect(owner.fileName == name)
            #expect(IdentityOwner(fileName: name) == owner, "\(name)")
        }
        #expect(Set(named.map(\.0.fileName)).count == named.count)
        for other in ["identity", ".identity-transport-user:hci0.123.tmp", "identity-", "identity-transport-", "identity-transport-%zz",
                      "identity-transport-unix:%2ftmp", "identity-transport-a/b", "identity-controller-52-41-57-42-4C",
                      "identity-controller-52:41:57:42:4C:01", "identity-other-x", "52-41-57-42-4C-01-random.bonds"] {
            #expect(IdentityOwner(fileName: other) == nil, "\(other)")
        }
    }

    @Test("each adapter gets its own identity, kept (mode 0600, saying which adapter it is for) and the same on the next run")
    func oneIdentityPerAdapter() throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let first = try Self.load(.controller(Self.controller), "tcp:127.0.0.1:9000", state)
        let second = try Self.load(.transport("tcp:127.0.0.1:9001"), "tcp:127.0.0.1:9001", state)
        #expect(first.notKept == nil && first.adopted == nil && second.notKept == nil)
        #expect(first.identity.address != second.identity.address)
        #expect(first.identity.identityResolvingKey != second.identity.identityResolvingKey)
        #expect(first.identity.address.randomKind == .staticAddress && second.identity.address.randomKind == .staticAddress)
        #expect(try Self.identityFiles(state) == ["identity-controller-52-41-57-42-4C-01", "identity-transport-tcp:127.0.0.1:9001"])
        let path = state.folder.appendingPathComponent("identity-controller-52-41-57-42-4C-01").path
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("# rawble's own-host identity on the controller 52:41:57:42:4C:01:"))
        // The same controller through another transport is the same adapter.
        #expect(try Self.load(.controller(Self.controller), "user:hci0", state).identity == first.identity)
        #expect(try Self.load(.transport("tcp:127.0.0.1:9001"), "tcp:127.0.0.1:9001", state).identity == second.identity)
        #expect(try LocalIdentity.all(environment: state.environment).map(\.owner)
                == [.controller(Self.controller), .transport("tcp:127.0.0.1:9001")])
    }

    @Test("rawble 0.1.0's one identity: taken over (renamed) by the first adapter on a serial port or the user channel, with its bonds; the next adapter gets a new one; tcp: and unix: never take it")
    func formerIdentityTakenOver() throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let former = LocalIdentity.generate()
        try LocalIdentity.keep(former, at: state.formerIdentityPath, owner: .transport("tcp:127.0.0.1:9000"))

        let simulated = try Self.load(.transport("tcp:127.0.0.1:9000"), "tcp:127.0.0.1:9000", state)
        #expect(simulated.identity != former && simulated.adopted == nil)
        let socket = try Self.load(.transport("unix:/tmp/controller"), "unix:/tmp/controller", state)
        #expect(socket.identity != former && socket.adopted == nil)
        #expect(FileManager.default.fileExists(atPath: state.formerIdentityPath), "left for a real adapter")
        #expect(try LocalIdentity.all(environment: state.environment).contains { $0.owner == nil && $0.identity == former },
                "its bonds still listed")

        let dongle = try Self.load(.controller(Self.controller), "serial:/dev/ttyACM0:1000000", state)
        #expect(dongle.identity == former)
        let note = try #require(dongle.adopted)
        #expect(note.contains("the controller 52:41:57:42:4C:01") && note.contains(state.formerIdentityPath))
        #expect(!note.contains(former.address.description) && !note.lowercased().contains(String(former.identityResolvingKey, radix: 16)),
                "neither the address nor the key in the log line")
        #expect(!FileManager.default.fileExists(atPath: state.formerIdentityPath))
        #expect(try Self.load(.controller(Self.controller), "serial:/dev/ttyACM0", state).identity == former, "kept as its own")

        let userChannel = try Self.load(.controller(BluetoothAddress(0x00_1A_7D_DA_71_13)), "user:hci0", state)
        #expect(userChannel.identity != former && userChannel.adopted == nil)
        #expect(Set(try LocalIdentity.all(environment: state.environment).map(\.identity.address)).count == 4)
    }

    @Test("a user-channel adapter takes over the former identity too")
    func formerIdentityOnTheUserChannel() throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let former = LocalIdentity.generate()
        try LocalIdentity.keep(former, at: state.formerIdentityPath, owner: .transport("tcp:127.0.0.1:9000"))
        #expect(try Self.load(.controller(Self.controller), "user:hci0", state).identity == former)
    }

    @Test("an adapter's file that is not an identity: 65; others can read it: 77; a symbolic link: 66; in a folder others can write: 77; each left as it is")
    func refusedFiles() throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let owner = IdentityOwner.transport("tcp:127.0.0.1:9000")
        let path = state.folder.appendingPathComponent(owner.fileName).path
        try FileManager.default.createDirectory(at: state.folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        func refusal() throws -> CLIError {
            try #require(#expect(throws: CLIError.self) { try Self.load(owner, "tcp:127.0.0.1:9000", state) })
        }
        try Data("address 11:22:33:44:55:66\nirk 00\n".utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        let malformed = try refusal()
        #expect(malformed.status == .malformedInput && malformed.message.contains("\(path) is not rawble's identity"))
        #expect(malformed.fix?.contains("rm \(path)") == true)

        let kept = "address C1:22:33:44:55:66\nirk 000102030405060708090a0b0c0d0e0f\n"
        try Data(kept.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        let open = try refusal()
        #expect(open.status == .permission && open.message.contains("\(path) can be read or written by other users (mode 0644)"))

        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        #expect(try Self.load(owner, "tcp:127.0.0.1:9000", state).identity.address == BluetoothAddress("C1:22:33:44:55:66"))
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: state.folder.path)
        let folder = try refusal()
        #expect(folder.status == .permission && folder.message.contains("\(state.folder.path) can be written by other users (mode 0777)"))
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: state.folder.path)

        let elsewhere = state.root.appendingPathComponent("elsewhere").path
        try FileManager.default.moveItem(atPath: path, toPath: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: elsewhere)
        let link = try refusal()
        #expect(link.status == .cannotOpen && link.message.contains("\(path) is a symbolic link"))
        #expect(try String(contentsOfFile: elsewhere, encoding: .utf8) == kept)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: path) == elsewhere)
    }

    @Test("rawble 0.1.0's identity refused (others can read it) when a serial adapter would take it over: 77, left as it is; a tcp: adapter does not read it")
    func formerIdentityRefused() throws {
        let state = try TemporaryState()
        defer { state.remove() }
        try LocalIdentity.keep(LocalIdentity.generate(), at: state.formerIdentityPath, owner: .transport("tcp:127.0.0.1:9000"))
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: state.formerIdentityPath)
        let refused = #expect(throws: CLIError.self) { try Self.load(.transport("serial:/dev/ttyUSB0"), "serial:/dev/ttyUSB0", state) }
        #expect(refused?.status == .permission, "\(String(describing: refused))")
        #expect(FileManager.default.fileExists(atPath: state.formerIdentityPath))
        #expect(try Self.identityFiles(state) == ["identity"])
        #expect(try Self.load(.transport("tcp:127.0.0.1:9000"), "tcp:127.0.0.1:9000", state).notKept == nil)
    }

    @Test("rawble bonds lists every adapter's bonds, naming the adapter once there is more than one; bonds remove forgets the peer on every adapter")
    func bondsOfEveryAdapter() async throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let strap = DeviceAddress(BluetoothAddress(0xC0_B1_E0_00_00_01), type: .random)
        let watch = DeviceAddress(BluetoothAddress(0xC0_B1_E0_00_00_02), type: .random)
        func bond(_ peer: DeviceAddress) -> Bond {
            Bond(peer: peer, centralKey: Bond.LongTermKey(value: 0xABCD), peripheralKey: nil, authenticated: false,
                 secureConnections: true, keySize: 16)
        }
        let dongle = try Self.load(.controller(Self.controller), "user:hci1", state).identity
        try await openBondStore(environment: state.environment, identity: dongle.deviceAddress).save(bond(strap))
        let one = try await CLI.run(["bonds"], environment: state.environment)
        #expect(one.status == 0 && one.stdout == "\(strap): unauthenticated, LE Secure Connections, 16-octet key\n", "\(one.stdout)\(one.stderr)")

        let uart = try Self.load(.transport("serial:/dev/ttyACM0"), "serial:/dev/ttyACM0", state).identity
        let uartBonds = openBondStore(environment: state.environment, identity: uart.deviceAddress)
        try await uartBonds.save(bond(strap))
        try await uartBonds.save(bond(watch))
        let list = try await CLI.run(["bonds"], environment: state.environment)
        #expect(list.status == 0, "\(list.stderr)")
        #expect(Set(list.stdoutLines) == [
            "\(strap): unauthenticated, LE Secure Connections, 16-octet key; adapter 52:41:57:42:4C:01",
            "\(strap): unauthenticated, LE Secure Connections, 16-octet key; adapter serial:/dev/ttyACM0",
            "\(watch): unauthenticated, LE Secure Connections, 16-octet key; adapter serial:/dev/ttyACM0",
        ], "\(list.stdout)")
        let json = try await CLI.run(["bonds", "--json"], environment: state.environment)
        #expect(Set(try json.stdoutLines.map { try CLI.jsonObject($0)["adapter"] as? String })
                == ["52:41:57:42:4C:01", "serial:/dev/ttyACM0"], "\(json.stdout)")

        let remove = try await CLI.run(["bonds", "remove", strap.address.description], environment: state.environment)
        #expect(remove.status == 0 && remove.stdout == "removed the bond with \(strap)\n", "\(remove.stdout)\(remove.stderr)")
        let after = try await CLI.run(["bonds"], environment: state.environment)
        #expect(after.stdout == "\(watch): unauthenticated, LE Secure Connections, 16-octet key\n", "\(after.stdout)")
    }

    @Test("no state folder (no HOME): an identity for this run only, with the line saying so")
    func noStateFolder() throws {
        let loaded = try LocalIdentity.load(for: .transport("user:hci0"), transport: try Self.transport("user:hci0"), environment: [:])
        #expect(loaded.notKept?.contains("no HOME or XDG_STATE_HOME") == true)
    }

    @Test("rawble processes starting at once: on one new adapter, one identity; on new adapters, one each, and only one takes over the former identity")
    func startingAtOnce() throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let environment = state.environment
        let starts = 8
        let same = Mutex<[LocalIdentity]>([])
        DispatchQueue.concurrentPerform(iterations: starts) { _ in
            let loaded = try? LocalIdentity.load(for: .controller(Self.controller), transport: .tcp(host: "127.0.0.1", port: 9000),
                                                 environment: environment)
            if let loaded, loaded.notKept == nil { same.withLock { $0.append(loaded.identity) } }
        }
        let identities = same.withLock { $0 }
        #expect(identities.count == starts && Set(identities.map(\.address)).count == 1, "\(identities.map(\.address))")

        let former = LocalIdentity.generate()
        try LocalIdentity.keep(former, at: state.formerIdentityPath, owner: .transport("tcp:127.0.0.1:9000"))
        let each = Mutex<[LocalIdentity.Loaded]>([])
        DispatchQueue.concurrentPerform(iterations: starts) { index in
            let loaded = try? LocalIdentity.load(for: .transport("serial:/dev/ttyUSB\(index)"),
                                                 transport: .serial(path: "/dev/ttyUSB\(index)", baudRate: nil), environment: environment)
            if let loaded, loaded.notKept == nil { each.withLock { $0.append(loaded) } }
        }
        let loaded = each.withLock { $0 }
        #expect(loaded.count == starts)
        #expect(loaded.filter { $0.identity == former }.count == 1 && loaded.filter { $0.adopted != nil }.count == 1)
        #expect(Set(loaded.map(\.identity.address)).count == starts)
        #expect(try Self.identityFiles(state).count == starts + 1, "the one made first and one per serial port; the former renamed")
    }
}
