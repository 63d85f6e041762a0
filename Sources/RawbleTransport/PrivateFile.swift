#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Files rawble writes for its user alone — btsnoop captures, session files, the shell's
/// history, plots, the identity — made and opened so that no other account can read them or
/// steer the write elsewhere:
///
/// - a new file is created mode 0600 (whatever the umask) with `O_EXCL` and `O_NOFOLLOW`;
/// - a path that is a symbolic link is never followed, and refused;
/// - an existing file must be a regular file of this user's: another user's file, a directory,
///   a FIFO or a device is refused, never truncated or appended to.
///
/// Each refusal is a ``PrivateFileError`` whose description is one line with the fix.
public enum PrivateFile {
    /// A new file at `path`, empty, mode 0600, open for writing. When `path` is already a
    /// regular file of `owner`'s, it is replaced as a whole: the new file is made beside it
    /// (`O_EXCL`, mode 0600) and renamed over it, so nothing is ever written into the old file
    /// (or through another name of it, a hard link), and whatever mode the old one had, the new
    /// one is private.
    ///
    /// - Parameters:
    ///   - path: the file to create.
    ///   - owner: the user an existing file must belong to: this process's effective user.
    /// - Returns: the descriptor, owned by the caller (close-on-exec).
    public static func replace(_ path: String, owner: UInt32 = geteuid()) throws(PrivateFileError) -> Int32 {
        let created = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if created >= 0 { return try privatized(created, path) }
        guard errno == EEXIST else { throw .system(path, operation: "create", errno: errno) }
        try checkExisting(path, owner: owner)
        let temporary = temporaryName(beside: path)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .system(path, operation: "create \(temporary) beside", errno: errno) }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            close(descriptor)
            throw .system(path, operation: "replace", errno: code)
        }
        return try privatized(descriptor, path)
    }

    /// `path` open for appending (`O_APPEND`): created mode 0600 when missing (`isNew`), else
    /// the existing file, which must be a regular file of `owner`'s (its mode is left as the
    /// user set it).
    public static func openForAppending(_ path: String, owner: UInt32 = geteuid())
        throws(PrivateFileError) -> (descriptor: Int32, isNew: Bool) {
        let created = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if created >= 0 { return (try privatized(created, path), true) }
        guard errno == EEXIST else { throw .system(path, operation: "create", errno: errno) }
        // Non-blocking: a FIFO must not hold the open up (it is refused just after).
        let descriptor = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ELOOP || code == ENXIO { try checkExisting(path, owner: owner) }
            throw .system(path, operation: "open", errno: code)
        }
        do {
            try check(descriptor, path, owner: owner, private: false)
        } catch {
            close(descriptor)
            throw error
        }
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) }
        return (descriptor, false)
    }

    /// The bytes of `path` (at most `limit` + 1: more means the file is too long), which must
    /// be a regular file of `owner`'s that no one else may read or write, in a folder no one
    /// else may write (they could put another file in its place); `nil` when there is none.
    /// For files that hold keys.
    public static func readPrivate(_ path: String, limit: Int, owner: UInt32 = geteuid())
        throws(PrivateFileError) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { return nil }
            if code == ELOOP { throw .symbolicLink(path) }
            throw .system(path, operation: "open", errno: code)
        }
        defer { close(descriptor) }
        try check(descriptor, path, owner: owner, private: true)
        try checkFolder(of: path, owner: owner)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= limit {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .system(path, operation: "read", errno: errno)
            }
            if count == 0 { break }
            bytes += buffer[..<count]
        }
        return Array(bytes.prefix(limit + 1))
    }

    /// Refuses the folder `path` is in when it is not `owner`'s or others may write it (unless
    /// it is the root's, as `/`).
    static func checkFolder(of path: String, owner: UInt32) throws(PrivateFileError) {
        let folder = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        var status = stat()
        guard stat(folder, &status) == 0 else { throw .system(folder, operation: "stat", errno: errno) }
        guard status.st_uid == owner || status.st_uid == 0 else {
            throw .notOwned(folder, owner: status.st_uid, user: owner)
        }
        guard status.st_mode & 0o022 == 0 else { throw .tooOpen(folder, mode: status.st_mode & 0o7777, isFolder: true) }
    }

    /// A new descriptor's mode set to 0600 whatever the umask; the descriptor is closed on failure.
    private static func privatized(_ descriptor: Int32, _ path: String) throws(PrivateFileError) -> Int32 {
        guard fchmod(descriptor, 0o600) == 0 else {
            let code = errno
            close(descriptor)
            throw .system(path, operation: "chmod", errno: code)
        }
        return descriptor
    }

    /// Refuses what is at `path` (not followed) unless it is a regular file of `owner`'s. A
    /// folder is the system's EISDIR, so its message says to name a file in it.
    private static func checkExisting(_ path: String, owner: UInt32) throws(PrivateFileError) {
        var status = stat()
        guard lstat(path, &status) == 0 else { throw .system(path, operation: "stat", errno: errno) }
        try check(status, path, owner: owner, private: false)
    }

    private static func check(_ descriptor: Int32, _ path: String, owner: UInt32, private: Bool) throws(PrivateFileError) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .system(path, operation: "stat", errno: errno) }
        try check(status, path, owner: owner, private: `private`)
    }

    private static func check(_ status: stat, _ path: String, owner: UInt32, private: Bool) throws(PrivateFileError) {
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFLNK: throw .symbolicLink(path)
        case S_IFDIR: throw .system(path, operation: "create", errno: EISDIR)
        default: throw .notARegularFile(path)
        }
        guard status.st_uid == owner else { throw .notOwned(path, owner: status.st_uid, user: owner) }
        if `private`, status.st_mode & 0o077 != 0 {
            throw .tooOpen(path, mode: status.st_mode & 0o7777, isFolder: false)
        }
    }

    /// `.NAME.RANDOM.tmp` in the folder of `path`.
    private static func temporaryName(beside path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        return "\(folder).\(name).\(String(UInt64.random(in: .min ... .max), radix: 16)).tmp"
    }
}

/// Why a ``PrivateFile`` operation refused or failed: one line with the path and the fix.
public enum PrivateFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The path is a symbolic link: never followed (it could point anywhere, another user's file included).
    case symbolicLink(String)
    /// Not a regular file: a FIFO, a device, a socket.
    case notARegularFile(String)
    /// Another user's file or folder (its owner, and this process's user).
    case notOwned(String, owner: UInt32, user: UInt32)
    /// A key file others may read or write, or a folder others may write: its mode.
    case tooOpen(String, mode: UInt32, isFolder: Bool)
    /// A system call failed: what was being done, and its errno.
    case system(String, operation: String, errno: Int32)

    /// The path concerned.
    public var path: String {
        switch self {
        case .symbolicLink(let path), .notARegularFile(let path), .notOwned(let path, _, _),
             .tooOpen(let path, _, _), .system(let path, _, _):
            path
        }
    }

    public var description: String {
        switch self {
        case .symbolicLink(let path):
            "\(path) is a symbolic link, which rawble does not follow: name the file itself"
        case .notARegularFile(let path):
            "\(path) is not a regular file (a FIFO, a device, a socket): name a regular file"
        case let .notOwned(path, owner, user):
            "\(path) belongs to user \(owner), not to this user (\(user)): name a file of your own"
        case let .tooOpen(path, mode, isFolder):
            isFolder
                ? "\(path) can be written by other users (mode 0\(String(mode, radix: 8))), who could replace the files in it: chmod 700 \(path)"
                : "\(path) can be read or written by other users (mode 0\(String(mode, radix: 8))), and it holds keys: chmod 600 \(path)"
        case let .system(path, operation, code):
            "cannot \(operation) \(path): \(String(cString: strerror(code))) (errno \(code))"
        }
    }
}
