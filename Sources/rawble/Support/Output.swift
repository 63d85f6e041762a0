#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// stdout for machine output and results, stderr for people. Lines go straight to the file
/// descriptor with write(2), so pipes and files see each JSON line as it happens.
enum Output {
    static func line(_ text: String) {
        write(text + "\n", to: 1)
    }

    static func json(_ value: JSON) {
        line(value.serialized())
    }

    /// Bytes on stdout as they are (a whole line, newline included), with one write(2).
    static func lineBytes(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { writeAll($0, to: 1) }
    }

    /// Text on stdout as is (no newline): the live views' redraws.
    static func raw(_ text: String) {
        write(text, to: 1)
    }

    static func error(_ text: String) {
        write(text + "\n", to: 2)
    }

    /// Text on stderr as is (no newline): the status line's redraws.
    static func status(_ text: String) {
        write(text, to: 2)
    }

    /// Whether stderr is a terminal (status lines and spinners only then).
    static var stderrIsTerminal: Bool { isatty(2) == 1 }

    /// Whether stdout is a terminal (live views) or a pipe/file (plain lines).
    static var stdoutIsTerminal: Bool { isatty(1) == 1 }

    private static func write(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { writeAll(UnsafeRawBufferPointer($0), to: descriptor) }
    }

    /// Writes every byte to `descriptor` (retrying short writes and EINTR); gives up silently on
    /// EPIPE or a closed descriptor, where there is nothing more to do.
    static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32) {
        var offset = 0
        while offset < buffer.count, let base = buffer.baseAddress {
            let n = Glibc.write(descriptor, base + offset, buffer.count - offset)
            if n > 0 {
                offset += n
            } else if n < 0, errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}
