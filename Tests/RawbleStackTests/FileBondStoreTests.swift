#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import RawbleSMP
import RawbleStack
import RawbleWire
import SystemPackage
import Testing

/// `FileBondStore` on a real file system, each test in a fresh temporary directory removed after.
@Suite struct FileBondStoreTests {
    static let identity = DeviceAddress(BluetoothAddress(0x00_1A_7D_DA_71_13), type: .public)

    static func bond(_ address: UInt64, type: LEAddressType = .public, irk: UInt128? = nil, keySize: UInt8 = 16) -> Bond {
        Bond(peer: DeviceAddress(BluetoothAddress(address), type: type), peerIdentityResolvingKey: irk,
             centralKey: Bond.LongTermKey(value: UInt128(address) << 64 | 0xABCD, encryptedDiversifier: 0x1234, random: address),
             peripheralKey: nil, authenticated: true, secureConnections: false, keySize: keySize)
    }

    /// Runs `body` in a new directory under the temporary directory, removed after.
    static func inTemporaryDirectory<Result>(_ body: (FilePath) async throws -> Result) async throws -> Result {
        var template = Array("\(FileManager.default.temporaryDirectory.path)/rawble-bonds-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        _ = try #require(made, "mkdtemp: \(Errno(rawValue: errno))")
        let directory = FilePath(String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        defer { try? FileManager.default.removeItem(atPath: directory.string) }
        return try await body(directory)
    }

    static func bytes(of path: FilePath) throws -> [UInt8] {
        try [UInt8](Data(contentsOf: URL(fileURLWithPath: path.string)))
    }

    static func write(_ text: String, to path: FilePath, mode: mode_t = 0o600) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path.string))
        #expect(chmod(path.string, mode) == 0)
    }

    /// The names in `directory`, hidden ones included.
    static func names(in directory: FilePath) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.string).sorted()
    }

    /// The error `body` throws, `nil` when it throws none.
    static func error(_ body: () async throws -> Void) async -> FileBondStoreError? {
        do {
            try await body()
            return nil
        } catch let error as FileBondStoreError {
            return error
        } catch {
            Issue.record("not a FileBondStoreError: \(error)")
            return nil
        }
    }

    // MARK: Keeping bonds

    @Test func savesReplacesAndRemoves() async throws {
        try await Self.inTemporaryDirectory { temporary in
            let directory = temporary.appending("state/rawble")
            let store = FileBondStore(directory: directory, localIdentity: Self.identity)
            #expect(store.path == directory.appending("00-1A-7D-DA-71-13-public.bonds"))
            // No file is no bonds, and reading creates nothing.
            #expect(try await store.bonds().isEmpty)
            #expect(try await store.removeBond(with: Self.bond(1).peer) == false)
            #expect(try Self.names(in: temporary).isEmpty)

            let first = Self.bond(1), second = Self.bond(2, type: .random)
            try await store.save(first)
            try await store.save(second)
            #expect(try await store.bonds() == [first, second])
            #expect(try await store.bond(for: second.peer) == second)

            // The same peer again replaces its bond.
            var changed = first
            changed.authenticated = false
            changed.keySize = 7
            try await store.save(changed)
            #expect(try await store.bonds() == [second, changed])

            // A bond made with a private address is replaced by the one made with the identity
            // whose IRK resolves it.
            let irk: UInt128 = 0xec0234a3_57c8ad05_341010a6_0a397d9b
            let prand: UInt32 = 0x70_81_94
            let privateAddress = UInt64(prand) << 24 | UInt64(SMPCrypto.randomAddressHash(irk: irk, prand: prand))
            let before = Self.bond(privateAddress, type: .random)
            try await store.save(before)
            #expect(try await store.bonds().count == 3)
            let identified = Self.bond(0xC0_11_22_33_44_55, type: .random, irk: irk)
            try await store.save(identified)
            #expect(try await store.bonds() == [second, changed, identified])
            #expect(try await store.bond(for: before.peer) == identified)

            #expect(try await store.removeBond(with: second.peer))
            #expect(try await store.bonds() == [changed, identified])
            #expect(try await store.removeBond(with: second.peer) == false)
            #expect(try Self.names(in: directory) == ["00-1A-7D-DA-71-13-public.bonds"])

            // A new instance, as a new process would, reads what was saved.
            let reopened = FileBondStore(directory: directory, localIdentity: Self.identity)
            #expect(try await reopened.bonds() == [changed, identified])
            // The file is the bond file of those bonds.
            #expect(try BondFile(decoding: Self.bytes(of: store.path))
                == BondFile(localIdentity: Self.identity, bonds: [changed, identified]))
        }
    }

    @Test func theFileIsPrivateAndItsDirectoriesToo() async throws {
        try await Self.inTemporaryDirectory { temporary in
            let directory = temporary.appending("state/rawble")
            let store = FileBondStore(directory: directory, localIdentity: Self.identity)
            try await store.save(Self.bond(1))
            let file = try store.path.stat(followTargetSymlink: false)
            #expect(file.type == .regular)
            #expect(file.permissions == .ownerReadWrite)
            #expect(file.userID.rawValue == geteuid())
            for created in [directory, temporary.appending("state")] {
                let status = try created.stat()
                #expect(status.type == .directory)
                #expect(status.permissions == .ownerReadWriteExecute, "\(created)")
            }
            // Replacing keeps the mode.
            try await store.save(Self.bond(2))
            #expect(try store.path.stat().permissions == .ownerReadWrite)
        }
    }

    @Test func aDirectoryThatExistsKeepsItsMode() async throws {
        try await Self.inTemporaryDirectory { directory in
            #expect(chmod(directory.string, 0o755) == 0)
            let store = FileBondStore(directory: directory, localIdentity: Self.identity)
            try await store.save(Self.bond(1))
            #expect(try directory.stat().permissions.rawValue == 0o755)
        }
    }

    // MARK: Files it will not use

    /// A damaged file is refused on reading, and every change refused with it: the file stays
    /// byte for byte as it was, for its owner to fix or move aside.
    @Test func aDamagedFileIsRefusedAndLeftAlone() async throws {
        try await Self.inTemporaryDirectory { directory in
            let store = FileBondStore(directory: directory, localIdentity: Self.identity)
            try await store.save(Self.bond(1))
            let good = try Self.bytes(of: store.path)
            let damaged = String(decoding: good, as: UTF8.self).replacingOccurrences(of: "key-size 16", with: "key-size 61")
            try Self.write(damaged, to: store.path)
            let expected = FileBondStoreError(path: store.path, problem: .unreadable(BondFileError(line: 10, problem: .badKeySize("61"))))
            #expect(await Self.error { _ = try await store.bonds() } == expected)
            #expect(await Self.error { try await store.save(Self.bond(2)) } == expected)
            #expect(await Self.error { _ = try await store.removeBond(with: Self.bond(1).peer) } == expected)
            await #expect(throws: FileBondStoreError.self) { try await store.bond(for: Self.bond(1).peer) }
            #expect(try Self.bytes(of: store.path) == Array(damaged.utf8))
            #expect(try Self.names(in: directory) == [store.path.lastComponent!.string])
            let path = store.path.string
            #expect(expected.description == "\(path): line 10: key-size is a number of octets from 7 to 16, not \"61\"; "
                + "rawble leaves the file as it is: fix it, or move it aside to start with no bonds: mv \(path) \(path).old")
        }
    }

    @Test func aHugeFileIsRefusedByItsSize() async throws {
        try await Self.inTemporaryDirectory { directory in
            let store = FileBondStore(directory: directory, localIdentity: Self.identity)
            try Self.write("rawble bonds 1\n" + String(repeating: "#\n", count: 1 << 20), to: store.path)
            let expected = FileBondStoreError(
                path: store.path, problem: .unreadable(BondFileError(line: nil, problem: .tooLarge(byteCount: 15 + (2 << 20)))))
            #expect(await Self.error { _ = try await store.bonds() } == expected)
            #expect(await Self.error { try await store.save(Self.bond(1)) } == expected)
            #expect(try Self.bytes(of: store.path).count == 15 + (2 << 20))
        }
    }

    @Test func aFileOfANewerRawbleIsRefusedAndLeftAlone() async throws {
        try await Self.inTemporaryDirectory { directory in
            let store = FileBondStore(directory: directory, localIdentity: Self.identity)
            let newer = "rawble bonds 2\nlocal 00:1A:7D:DA:71:13 public\nsomething new\nend\n"
            try Self.write(newer, to: store.path)
            let error = try #require(await Self.error { try await store.save(Self.bond(1)) })
            #expect(error.problem == .unreadable(BondFileError(line: 1, problem: .newerVersion(2))))
            #expect(error.description.contains("written by a newer rawble"))
            #expect(try Self.bytes(of: store.path) == Array(newer.utf8))
        }
    }

    @Test func anotherIdentitysFileIsForeign() async throws {
        try await Self.inTemporaryDirectory { directory in
            let other = DeviceAddress(BluetoothAddress(0xC0_FF_EE_C0_FF_EE), type: .random)
            let theirs = FileBondStore(directory: directory, localIdentity: other)
            try await theirs.save(Self.bond(1))
            let store = FileBondStore(directory: directory, localIdentity: Self.identity)
            // Copied to this identity's name.
            let copied = try Self.bytes(of: theirs.path)
            try Data(copied).write(to: URL(fileURLWithPath: store.path.string))
            #expect(chmod(store.path.string, 0o600) == 0)
            let expected = FileBondStoreError(path: store.path, problem: .foreign(other))
            #expect(await Self.error { _ = try await store.bonds() } == expected)
            #expect(await Self.error { try await store.save(Self.bond(2)) } == expected)
            #expect(try Self.bytes(of: store.path) == copied)
            #expect(expected.description.contains("rename it to \(directory)/C0-FF-EE-C0-FF-EE-random.bonds"))
        }
    }

    @Test func filesOthersCanReadOrWriteAreRefused() async throws {
        try await Self.inTemporaryDirectory { directory in
            let store = FileBondStore(directory: directory, localIdentity: Self.identity)
            try await store.save(Self.bond(1))
            let saved = try Self.bytes(of: store.path)
            for mode: mode_t in [0o640, 0o604, 0o602, 0o620] {
                #expect(chmod(store.path.string, mode) == 0)
                let expected = FileBondStoreError(path: store.path, problem: .tooOpen(FilePermissions(rawValue: mode), isDirectory: false))
                #expect(await Self.error { _ = try await store.bonds() } == expected)
                #expect(await Self.error { try await store.save(Self.bond(2)) } == expected)
                #expect(try store.path.stat().permissions.rawValue == mode)
                #expect(try Self.bytes(of: store.path) == saved)
                #expect(expected.description.hasSuffix("chmod 600 \(store.path)"))
            }
            #expect(chmod(store.path.string, 0o400) == 0)
            #expect(try await store.bonds() == [Self.bond(1)])
            // A directory others can write: they could put their own file in place of this one.
            #expect(chmod(store.path.string, 0o600) == 0)
            #expect(chmod(directory.string, 0o777) == 0)
            let expected = FileBondStoreError(path: directory, problem: .tooOpen(FilePermissions(rawValue: 0o777), isDirectory: true))
            #expect(await Self.error { _ = try await store.bonds() } == expected)
            #expect(await Self.error { try await store.save(Self.bond(2)) } == expected)
            #expect(try Self.bytes(of: store.path) == saved)
        }
    }

    @Test(.enabled(if: geteuid() == 0, "chown to another user needs root"))
    func anotherUsersFileIsRefused() async throws {
        try await Self.inTemporaryDirectory { directory in
            let store = FileBondStore(directory: directory, localIdentity: Self.identity)
            try await store.save(Self.bond(1))
            #expect(chown(store.path.string, 65534, 65534) == 0)
            let expected = FileBondStoreError(path: store.path, problem: .notOwned(owner: 65534, user: geteuid()))
            #expect(await Self.error { _ = try await store.bonds() } == expected)
            #expect(await Self.error { try await store.save(Self.bond(2)) } == expected)
        }
    }

    @Test func aLinkOrADirectoryInPlaceOfTheFileIsRefused() async throws {
        try await Self.inTemporaryDirectory { directory in
            let store = FileBondStore(directory: directory, localIdentity: Self.identity)
            let elsewhere = FileBondStore(directory: directory.appending("elsewhere"), localIdentity: Self.identity)
            try await elsewhere.save(Self.bond(1))
            #expect(symlink(elsewhere.path.string, store.path.string) == 0)
            let expected = FileBondStoreError(path: store.path, problem: .notARegularFile)
            #expect(await Self.error { _ = try await store.bonds() } == expected)
            #expect(await Self.error { try await store.save(Self.bond(2)) } == expected)
            #expect(try elsewhere.path.stat(followTargetSymlink: false).type == .regular)
            #expect(try await elsewhere.bonds() == [Self.bond(1)])
            #expect(unlink(store.path.string) == 0)
            #expect(mkdir(store.path.string, 0o700) == 0)
            #expect(await Self.error { _ = try await store.bonds() } == expected)
        }
    }

    @Test func aBondNoFileCanHoldIsRefused() async throws {
        try await Self.inTemporaryDirectory { directory in
            let store = FileBondStore(directory: directory, localIdentity: Self.identity)
            try await store.save(Self.bond(1))
            let saved = try Self.bytes(of: store.path)
            let error = await Self.error { try await store.save(Self.bond(2, keySize: 5)) }
            #expect(error == FileBondStoreError(
                path: store.path, problem: .unwritable(BondFileError(line: nil, problem: .unstorableKeySize(5, peer: Self.bond(2).peer)))))
            #expect(try Self.bytes(of: store.path) == saved)
            #expect(try Self.names(in: directory) == [store.path.lastComponent!.string])
        }
    }

    // MARK: Concurrent changes

    @Test func concurrentSavesAreAllKept() async throws {
        try await Self.inTemporaryDirectory { directory in
            let store = FileBondStore(directory: directory, localIdentity: Self.identity)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 1...32 {
                    group.addTask { try await store.save(Self.bond(UInt64(index))) }
                }
                try await group.waitForAll()
            }
            #expect(Set(try await store.bonds()) == Set((1...32).map { Self.bond(UInt64($0)) }))
            #expect(try Self.names(in: directory) == [store.path.lastComponent!.string])
        }
    }

    /// Two stores on one file, as two processes would have: the directory's lock keeps each
    /// one's read, change and write from interleaving with the other's.
    @Test func concurrentSavesFromTwoStoresAreAllKept() async throws {
        try await Self.inTemporaryDirectory { directory in
            let stores = [FileBondStore(directory: directory, localIdentity: Self.identity),
                          FileBondStore(directory: directory, localIdentity: Self.identity)]
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 1...40 {
                    group.addTask { try await stores[index % 2].save(Self.bond(UInt64(index))) }
                }
                try await group.waitForAll()
            }
            #expect(Set(try await stores[0].bonds()) == Set((1...40).map { Self.bond(UInt64($0)) }))
            #expect(try Self.names(in: directory) == [stores[0].path.lastComponent!.string])
        }
    }

    // MARK: Where the files are

    @Test func theDefaultDirectoryFollowsXDG() {
        func directory(_ environment: [String: String]) -> String? {
            FileBondStore.defaultDirectory(environment: environment)?.string
        }
        #expect(directory(["XDG_STATE_HOME": "/var/state", "HOME": "/home/ada"]) == "/var/state/rawble")
        #expect(directory(["XDG_STATE_HOME": "/var/state/", "HOME": "/home/ada"]) == "/var/state/rawble")
        // A relative XDG_STATE_HOME is ignored, as the specification says; so is an empty one.
        #expect(directory(["XDG_STATE_HOME": "state", "HOME": "/home/ada"]) == "/home/ada/.local/state/rawble")
        #expect(directory(["XDG_STATE_HOME": "", "HOME": "/home/ada"]) == "/home/ada/.local/state/rawble")
        #expect(directory(["HOME": "/home/ada"]) == "/home/ada/.local/state/rawble")
        #expect(directory(["XDG_STATE_HOME": "state"]) == nil)
        #expect(directory(["HOME": "ada"]) == nil)
        #expect(directory([:]) == nil)
    }

    @Test func filesAreNamedByIdentityAndListed() async throws {
        try await Self.inTemporaryDirectory { directory in
            #expect(try FileBondStore.localIdentities(in: directory.appending("none")).isEmpty)
            let random = DeviceAddress(BluetoothAddress(0xC0_FF_EE_C0_FF_EE), type: .random)
            #expect(FileBondStore.fileName(for: random) == "C0-FF-EE-C0-FF-EE-random.bonds")
            #expect(FileBondStore.fileName(for: Self.identity) == "00-1A-7D-DA-71-13-public.bonds")
            // The controller's identity types name the same file.
            let resolved = FileBondStore(directory: directory, localIdentity: DeviceAddress(random.address, type: .randomIdentity))
            #expect(resolved.localIdentity == random)
            #expect(resolved.path == directory.appending("C0-FF-EE-C0-FF-EE-random.bonds"))

            try await FileBondStore(directory: directory, localIdentity: random).save(Self.bond(1))
            try await FileBondStore(directory: directory, localIdentity: Self.identity).save(Self.bond(2))
            // Other files, and names that only look like a bond file's, are not identities.
            for name in ["notes.txt", ".00-1A-7D-DA-71-13-public.bonds.1f2e.tmp", "00-1a-7d-da-71-13-public.bonds",
                         "00-1A-7D-DA-71-13-static.bonds", "00-1A-7D-DA-71-13.bonds", "+0-1A-7D-DA-71-13-public.bonds"] {
                try Self.write("", to: directory.appending(name))
            }
            #expect(try FileBondStore.localIdentities(in: directory) == [Self.identity, random])
        }
    }
}
