#if canImport(Glibc)
import Glibc
import RawbleHCITransport
#endif
import RawbleTransport

/// Why a file a command writes (`--btsnoop`, `--csv`, `--jsonl`, `report --plot`) cannot be
/// created, as one line naming the cause and its fix: a missing folder is not a permissions
/// problem, and a folder given where a file was meant is neither.
enum OutputFile {
    /// The error for creating `path` (what it is for: "the btsnoop file") failing with `code`.
    static func error(creating what: String, at path: String, errno code: Int32) -> CLIError {
        let folder = Self.folder(of: path)
        let (cause, fix): (String, String) = switch code {
        case ENOENT: ("the folder \(folder) does not exist", "create it first (mkdir -p \(folder)) or name a file in a folder that exists")
        case ENOTDIR: ("\(folder) is not a folder", "name a file in a folder")
        case EISDIR: ("\(path) is a folder", "name a file in it, e.g. \(path.hasSuffix("/") ? path : path + "/")\(Self.example(for: what))")
        case EACCES, EPERM: ("permission denied", "name a file in a folder you can write to, or check the file's permissions")
        case EROFS: ("the file system is read-only", "name a file on a writable file system")
        case ENOSPC: ("no space left on the device", "free some space or name a file on another file system")
        default: (String(cString: strerror(code)), "check the path")
        }
        return CLIError(.cannotOpen, "cannot write \(what) \(path): \(cause)", fix: fix)
    }

    /// The same for a file only its user may read (``PrivateFile``): a system error as above;
    /// a refused path (a symbolic link, not a regular file: 66; another user's, or a key file
    /// others can read: 77) with the refusal's own fix. Nothing was written to what is there.
    static func error(creating what: String, at path: String, _ failure: PrivateFileError) -> CLIError {
        switch failure {
        case .system(let concerned, _, let code) where concerned == path:
            error(creating: what, at: path, errno: code)
        case .system:
            CLIError(.cannotOpen, "cannot write \(what) \(path): \(failure)")
        case .notOwned, .tooOpen:
            CLIError(.permission, "will not write \(what): \(failure)")
        default:
            CLIError(.cannotOpen, "will not write \(what): \(failure)")
        }
    }

    /// The folder a path names its file in (`.` for a bare name).
    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func example(for what: String) -> String {
        if what.contains("btsnoop") { return "capture.log" }
        if what.contains("plot") { return "session.svg" }
        return "session.csv"
    }
}
