#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// stdout for machine output and results, stderr for people. Lines go straight to the file
/// descriptor with write(2), so pipes and files see each JSON line as it happens.
enum Output {
    /// A line for a person on stdout, made ``terminalSafe(_:)``.
    static func line(_ text: String) {
        write(terminalSafe(text) + "\n", to: 1)
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

    /// A line for a person on stderr, made ``terminalSafe(_:)``.
    static func error(_ text: String) {
        write(terminalSafe(text) + "\n", to: 2)
    }

    /// `text` with every control character but the newline and the tab (the rest of C0, DEL,
    /// C1) written as `\u{1B}`: what a peer names itself (an advertised name, a GATT Device
    /// Name, a manufacturer string) reaches many lines, and a name made of escape sequences
    /// must not clear the screen, set the window title or move the cursor. rawble's own
    /// escape sequences (the status line, the live tables) are written with ``status(_:)``
    /// and ``raw(_:)``, never through a line. Text with none is returned as it is.
    static func terminalSafe(_ text: String) -> String {
        // 0xC2 leads every C1 character's UTF-8 (U+0080…U+009F) and a few printable ones.
        guard text.utf8.contains(where: { ($0 < 0x20 && $0 != 0x0A && $0 != 0x09) || $0 == 0x7F || $0 == 0xC2 }) else {
            return text
        }
        var safe = ""
        for scalar in text.unicodeScalars {
            if scalar == "\n" || scalar == "\t" || !(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)) {
                safe.unicodeScalars.append(scalar)
            } else {
                let digits = String(scalar.value, radix: 16, uppercase: true)
                safe += "\\u{" + (digits.count < 2 ? "0" : "") + digits + "}"
            }
        }
        return safe
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
