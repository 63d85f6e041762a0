#if canImport(Glibc)
import Glibc
#endif
import RawbleTransport

/// A file that lines are appended to, each with one write(2) on an O_APPEND descriptor: every
/// line written is on disk even after Ctrl-C or a crash (no user-space buffer to lose).
/// Session files (`--csv`, `--jsonl`) hold a person's heart data: a new one is created mode
/// 0600; an existing one must be a regular file of the user's, never a symbolic link
/// (``PrivateFile/openForAppending(_:owner:)``), and keeps the mode the user gave it.
final class AppendFile: Sendable {
    let path: String
    private let descriptor: Int32

    /// Opens (creating) `path` for appending; `header` (its newline included) is written first
    /// when the file is new.
    init(path: String, header: String? = nil) throws {
        self.path = path
        do {
            descriptor = try PrivateFile.openForAppending(path).descriptor
        } catch {
            throw OutputFile.error(creating: "the file", at: path, error)
        }
        var status = stat()
        if let header, fstat(descriptor, &status) == 0, status.st_size == 0 {
            append(line: ArraySlice(header.utf8))
        }
    }

    deinit { close(descriptor) }

    /// Appends `line` and a newline.
    func append(_ line: String) {
        var text = line + "\n"
        text.withUTF8 { Output.writeAll(UnsafeRawBufferPointer($0), to: descriptor) }
    }

    /// Appends a whole line as bytes (its newline included), with one write(2).
    func append(line bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { Output.writeAll($0, to: descriptor) }
    }
}
