#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import RawbleSMP
import RawbleWire
import SystemPackage

/// The bonds of one local identity (an adapter's identity address), kept in one file: what
/// survives the process, for the CLI and any host given it.
///
/// The file is `<directory>/<AA-BB-CC-DD-EE-FF>-<public|random>.bonds`, named by the identity
/// (``fileName(for:)``), in the text format of RawbleSMP's `BondFile`; by default the directory
/// is `$XDG_STATE_HOME/rawble`, else `~/.local/state/rawble` (``defaultDirectory(environment:)``).
///
/// - Every change is written atomically: a new file in the same directory (mode 0600), synced,
///   renamed over the old one, and the directory synced, so a crash or a full disk leaves the old
///   bonds or the new ones, never half a file. Changes hold an exclusive `flock(2)` on the
///   directory from reading the file to the rename, so stores in other processes (the CLI beside
///   a running host) or other instances lose no change either.
/// - Missing directories are created with mode 0700; a missing file is no bonds.
/// - The file is read on every call (no cache), so a change made elsewhere is seen at once.
/// - A file this rawble cannot read is never dropped or overwritten: reading fails, and so does
///   every change, with a ``FileBondStoreError`` whose description is one line naming the path,
///   the line and the fix. The same for a file that is not this user's, or that other users can
///   read or write (like ssh with a private key: keys others could read are not private, and
///   keys others could write are not the user's), and for a directory others can write (they
///   could put their own file in its place).
///
/// Each call does its I/O synchronously, on the actor: files are a few kilobytes and local.
public actor FileBondStore: BondStore {
    /// The directory the file is in.
    public nonisolated let directory: FilePath
    /// The identity whose bonds the file holds; its type is `public` or `random` (the
    /// controller's identity types count as those).
    public nonisolated let localIdentity: DeviceAddress
    /// The file: ``directory`` and ``fileName(for:)``.
    public nonisolated let path: FilePath

    public init(directory: FilePath, localIdentity: DeviceAddress) {
        let identity = Self.identity(localIdentity)
        self.directory = directory
        self.localIdentity = identity
        path = directory.appending(Self.fileName(for: identity))
    }

    /// Where rawble keeps bonds by default, per the XDG Base Directory specification:
    /// `$XDG_STATE_HOME/rawble` when that is an absolute path (a relative one is ignored, as the
    /// specification says), else `$HOME/.local/state/rawble`; `nil` when neither is set to an
    /// absolute path.
    public static func defaultDirectory(environment: [String: String]) -> FilePath? {
        if let state = environment["XDG_STATE_HOME"].map({ FilePath($0) }), state.isAbsolute {
            return state.appending("rawble")
        }
        if let home = environment["HOME"].map({ FilePath($0) }), home.isAbsolute {
            return home.appending(".local/state/rawble")
        }
        return nil
    }

    /// The file name of `identity`'s bonds: `00-1A-7D-DA-71-13-public.bonds`.
    public static func fileName(for identity: DeviceAddress) -> String {
        let address = "\(identity.address)".split(separator: ":").joined(separator: "-")
        return "\(address)-\(identity.type.isPublic == true ? "public" : "random").bonds"
    }

    /// The identities with a bond file in `directory`, in address order: what `rawble bonds`
    /// lists. None when the directory does not exist; names that are not ``fileName(for:)`` of an
    /// identity (other files, temporary files of a change in progress) are left out.
    public static func localIdentities(in directory: FilePath) throws(FileBondStoreError) -> [DeviceAddress] {
        var failure: Int32 = 0
        let stream = directory.withPlatformString { path in
            let stream = opendir(path)
            if stream == nil { failure = errno }
            return stream
        }
        guard let stream else {
            if failure == ENOENT { return [] }
            throw FileBondStoreError(path: directory, problem: .system(operation: "list", Errno(rawValue: failure)))
        }
        defer { closedir(stream) }
        var found: [DeviceAddress] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasSuffix(".bonds") else { continue }
            let words = name.dropLast(".bonds".count).split(separator: "-", omittingEmptySubsequences: false)
            guard words.count == 7, let address = BluetoothAddress(words[..<6].joined(separator: ":")) else { continue }
            let identity = DeviceAddress(address, type: words[6] == "public" ? .public : .random)
            if fileName(for: identity) == name { found.append(identity) }
        }
        return found.sorted { ($0.address, $0.type.rawValue) < ($1.address, $1.type.rawValue) }
    }

    // MARK: BondStore

    /// Every bond in the file; none when there is no file.
    ///
    /// - Throws: ``FileBondStoreError`` when the file cannot be read, is no bond file this rawble
    ///   reads, holds another identity's bonds, or is not private.
    public func bonds() throws(FileBondStoreError) -> [Bond] {
        try read()?.bonds ?? []
    }

    /// Keeps `bond` in the file, replacing the bond with the same peer or one whose address its
    /// IRK resolves (`Bond.supersedes(_:)`), and creating the file and its directory if need be.
    ///
    /// - Throws: ``FileBondStoreError``, the file left as it was.
    public func save(_ bond: Bond) throws(FileBondStoreError) {
        _ = try update { bonds in
            bonds.removeAll { bond.supersedes($0) }
            bonds.append(bond)
            return true
        }
    }

    /// Removes the bond with `peer` from the file; `false`, and nothing written, when it has none.
    ///
    /// - Throws: ``FileBondStoreError``, the file left as it was.
    @discardableResult
    public func removeBond(with peer: DeviceAddress) throws(FileBondStoreError) -> Bool {
        // Nothing to remove: no lock, no directory created.
        guard try read()?.bonds.contains(where: { $0.peer == peer }) == true else { return false }
        return try update { bonds in
            let count = bonds.count
            bonds.removeAll { $0.peer == peer }
            return bonds.count != count
        }
    }

    // MARK: The file

    /// Reads the file, under the directory's lock, lets `change` change its bonds and, when it
    /// says it did, writes them back atomically.
    private func update(_ change: (inout [Bond]) -> Bool) throws(FileBondStoreError) -> Bool {
        try Self.makeDirectory(directory)
        try Self.checkOwnership(of: directory, isDirectory: true)
        let directoryDescriptor = try Self.system("open", directory) {
            try FileDescriptor.open(directory, .readOnly, options: [.directory, .closeOnExec])
        }
        // Closing the descriptor releases the lock.
        defer { try? directoryDescriptor.close() }
        while flock(directoryDescriptor.rawValue, LOCK_EX) != 0 {
            let error = errno
            guard error == EINTR else { throw fail(.system(operation: "lock", Errno(rawValue: error)), at: directory) }
        }
        var file = try read() ?? BondFile(localIdentity: localIdentity)
        guard change(&file.bonds) else { return false }
        file.localIdentity = localIdentity
        let bytes: [UInt8]
        do {
            bytes = try file.encoded()
        } catch {
            throw fail(.unwritable(error))
        }
        try write(bytes, directoryDescriptor: directoryDescriptor)
        return true
    }

    /// The file's bonds, `nil` when there is no file.
    private func read() throws(FileBondStoreError) -> BondFile? {
        guard let bytes = try readPrivateFile() else { return nil }
        let file: BondFile
        do {
            file = try BondFile(decoding: bytes)
        } catch {
            throw fail(.unreadable(error))
        }
        guard Self.identity(file.localIdentity) == localIdentity else { throw fail(.foreign(file.localIdentity)) }
        return file
    }

    /// The file's bytes (at most one more than a bond file can have), after checking that it is
    /// a regular file of this user's that no one else can read or write, in a directory no one
    /// else can write; `nil` when there is no file.
    private func readPrivateFile() throws(FileBondStoreError) -> [UInt8]? {
        let descriptor: FileDescriptor
        do {
            // Not following a symbolic link, and not blocking on a FIFO: either is refused below.
            descriptor = try FileDescriptor.open(path, .readOnly, options: [.noFollow, .nonBlocking, .closeOnExec])
        } catch let error as Errno where error == .noSuchFileOrDirectory {
            return nil
        } catch let error as Errno where error == .tooManySymbolicLinkLevels {
            throw fail(.notARegularFile)
        } catch {
            throw fail(.system(operation: "open", error as? Errno ?? .ioError))
        }
        defer { try? descriptor.close() }
        try Self.checkOwnership(of: directory, isDirectory: true)
        let status = try Self.system("stat", path) { try descriptor.stat() }
        guard status.type == .regular else { throw fail(.notARegularFile) }
        try Self.check(status, of: path, isDirectory: false)
        guard status.size <= BondFile.maximumByteCount else {
            throw fail(.unreadable(BondFileError(line: nil, problem: .tooLarge(byteCount: Int(status.size)))))
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count <= BondFile.maximumByteCount {
            let count = try Self.system("read", path) { try buffer.withUnsafeMutableBytes { try descriptor.read(into: $0) } }
            if count == 0 { break }
            bytes += buffer[..<count]
        }
        return bytes
    }

    /// Replaces the file with `bytes`: a new file beside it, synced, renamed over it, and the
    /// directory synced. The new file is removed when anything fails before the rename.
    private func write(_ bytes: [UInt8], directoryDescriptor: FileDescriptor) throws(FileBondStoreError) {
        let name = Self.fileName(for: localIdentity)
        let temporary = directory.appending(".\(name).\(String(UInt64.random(in: .min ... .max), radix: 16)).tmp")
        let descriptor = try Self.system("create", temporary) {
            try FileDescriptor.open(temporary, .writeOnly, options: [.create, .exclusiveCreate, .noFollow, .closeOnExec],
                                    permissions: .ownerReadWrite)
        }
        var renamed = false
        defer {
            if !renamed { _ = temporary.withPlatformString { unlink($0) } }
        }
        try Self.system("write", temporary) {
            try descriptor.closeAfter {
                // The mode asked for at creation, whatever the umask.
                guard fchmod(descriptor.rawValue, 0o600) == 0 else { throw Errno(rawValue: errno) }
                try descriptor.writeAll(bytes)
                guard fsync(descriptor.rawValue) == 0 else { throw Errno(rawValue: errno) }
            }
        }
        let failure = temporary.withPlatformString { from in
            path.withPlatformString { to in rename(from, to) == 0 ? 0 : errno }
        }
        guard failure == 0 else { throw fail(.system(operation: "replace it with \(temporary)", Errno(rawValue: failure))) }
        renamed = true
        // Some file systems cannot sync a directory (EINVAL): the rename is then as durable as they make it.
        if fsync(directoryDescriptor.rawValue) != 0 {
            let error = errno
            guard error == EINVAL else { throw fail(.system(operation: "sync", Errno(rawValue: error)), at: directory) }
        }
    }

    // MARK: Helpers

    /// An identity as a file names it: public or random.
    private static func identity(_ address: DeviceAddress) -> DeviceAddress {
        DeviceAddress(address.address, type: address.type.isPublic == true ? .public : .random)
    }

    private func fail(_ problem: FileBondStoreError.Problem, at path: FilePath? = nil) -> FileBondStoreError {
        FileBondStoreError(path: path ?? self.path, problem: problem)
    }

    /// Runs swift-system calls, their `Errno` as this store's error about `path`.
    private static func system<Result>(_ operation: String, _ path: FilePath, _ body: () throws -> Result)
        throws(FileBondStoreError) -> Result {
        do {
            return try body()
        } catch {
            // swift-system throws nothing but `Errno`.
            throw FileBondStoreError(path: path, problem: .system(operation: operation, error as? Errno ?? .ioError))
        }
    }

    /// Creates `directory` and the missing directories above it, each with mode 0700 (the XDG
    /// specification's); one that exists is left as it is.
    private static func makeDirectory(_ directory: FilePath) throws(FileBondStoreError) {
        /// `mkdir`'s errno, 0 when it made the directory.
        func make() -> Int32 {
            directory.withPlatformString { path in
                guard mkdir(path, 0o700) == 0 else { return errno }
                // The mode asked for, whatever the umask.
                _ = chmod(path, 0o700)
                return 0
            }
        }
        var failure = make()
        let parent = directory.removingLastComponent()
        if failure == ENOENT, parent != directory, !parent.isEmpty {
            try makeDirectory(parent)
            failure = make()
        }
        guard failure == 0 || failure == EEXIST else {
            throw FileBondStoreError(path: directory, problem: .system(operation: "create", Errno(rawValue: failure)))
        }
    }

    /// Checks that `path`, when it exists, is this user's and private (`check(_:of:isDirectory:)`).
    private static func checkOwnership(of path: FilePath, isDirectory: Bool) throws(FileBondStoreError) {
        let status: Stat
        do {
            status = try path.stat()
        } catch .noSuchFileOrDirectory {
            return
        } catch {
            throw FileBondStoreError(path: path, problem: .system(operation: "stat", error))
        }
        try check(status, of: path, isDirectory: isDirectory)
    }

    /// A file must be this user's, with no permission for anyone else; a directory this user's,
    /// writable by no one else.
    private static func check(_ status: Stat, of path: FilePath, isDirectory: Bool) throws(FileBondStoreError) {
        let user = geteuid()
        guard status.userID.rawValue == user else {
            throw FileBondStoreError(path: path, problem: .notOwned(owner: status.userID.rawValue, user: user))
        }
        let others: FilePermissions = isDirectory ? [.groupWrite, .otherWrite] : [.groupReadWriteExecute, .otherReadWriteExecute]
        guard status.permissions.isDisjoint(with: others) else {
            throw FileBondStoreError(path: path, problem: .tooOpen(status.permissions, isDirectory: isDirectory))
        }
    }
}

/// Why a ``FileBondStore`` could not read or change its file: one line, with the path and the fix.
public struct FileBondStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file (or directory) concerned.
    public var path: FilePath
    /// What is wrong.
    public var problem: Problem

    /// What is wrong with a bond file, or the directory it is in.
    public enum Problem: Hashable, Sendable {
        /// The file is not a bond file this rawble reads (damaged, cut short, written by a newer
        /// rawble, or something else): the bond file's own error, with the line.
        case unreadable(BondFileError)
        /// The change would make a file that cannot be read back (more bonds than a file holds,
        /// a key size outside 7–16, ...): it is refused and the file left as it was.
        case unwritable(BondFileError)
        /// The file holds the bonds of another identity (this one: copied or renamed).
        case foreign(DeviceAddress)
        /// Not a regular file: a symbolic link, a directory, a FIFO, ...
        case notARegularFile
        /// Another user's file or directory (the user ids of its owner and of this process).
        case notOwned(owner: UInt32, user: UInt32)
        /// A file others may read or write, or a directory others may write: its permissions.
        case tooOpen(FilePermissions, isDirectory: Bool)
        /// A system call failed: what was being done, and the error.
        case system(operation: String, Errno)
    }

    public init(path: FilePath, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    /// One line: the path, what is wrong, and what to do.
    public var description: String {
        let file = shellQuoted(path.string)
        let moveAside = "move it aside to start with no bonds: mv \(file) \(shellQuoted(path.string + ".old"))"
        switch problem {
        case .unreadable(let error):
            return "\(path): \(error); rawble leaves the file as it is: fix it, or \(moveAside)"
        case .unwritable(let error):
            return "\(path): cannot save: \(error)"
        case .foreign(let identity):
            let own = path.removingLastComponent().appending(FileBondStore.fileName(for: identity))
            return "\(path) holds the bonds of \(identity.address) (\(identity.type)), another identity: "
                + "rename it to \(shellQuoted(own.string)), or \(moveAside)"
        case .notARegularFile:
            return "\(path) is not a regular file (a link, a directory, ...): rawble keeps bonds in a file of its own; \(moveAside)"
        case let .notOwned(owner, user):
            return "\(path) belongs to user \(owner), not to this user (\(user)): rawble keeps keys only in its own "
                + "user's files; chown it to this user, or move it aside"
        case let .tooOpen(permissions, isDirectory):
            let mode = String(permissions.rawValue, radix: 8)
            return isDirectory
                ? "\(path) can be written by other users (mode 0\(mode)), who could replace the bond files in it: "
                    + "chmod 700 \(file)"
                : "\(path) can be read or written by other users (mode 0\(mode)): bond keys must be private: "
                    + "chmod 600 \(file)"
        case let .system(operation, error):
            return "\(path): cannot \(operation): \(error) (errno \(error.rawValue))"
        }
    }
}

/// `text` as a shell word: unchanged when it has only safe characters, else in single quotes.
private func shellQuoted(_ text: String) -> String {
    let safe = text.utf8.allSatisfy { byte in
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "/._-+:@%,".utf8.contains(byte)
        }
    }
    guard safe, !text.isEmpty else { return "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'" }
    return text
}
