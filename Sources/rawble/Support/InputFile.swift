import RawbleTransport
import SystemPackage

/// A file a command reads (`decode btsnoop`, `report`): its path, or `-` for standard input.
/// Opening it fails in one line naming the cause: a missing file (66, with what to name
/// instead) is not a permissions problem (77).
struct InputFile {
    let path: String

    /// How the file is named in a message: its path, or "standard input".
    var name: String { path == "-" ? "standard input" : path }

    /// Opens the file for reading; `missingFix` says what to name when there is no such file.
    /// The caller closes it with ``close(_:)``.
    func open(missingFix: String) throws -> FileDescriptor {
        guard path != "-" else { return .standardInput }
        do {
            return try FileDescriptor.open(path, .readOnly)
        } catch let error as Errno where error == .noSuchFileOrDirectory || error == .notDirectory {
            throw CLIError(.cannotOpen, "no such file: \(path)", fix: missingFix)
        } catch {
            throw CLIError(.permission, "cannot open \(path): \(error)", fix: "check its permissions")
        }
    }

    /// Closes what ``open(missingFix:)`` opened (standard input stays open).
    func close(_ descriptor: FileDescriptor) {
        if path != "-" { try? descriptor.close() }
    }
}
