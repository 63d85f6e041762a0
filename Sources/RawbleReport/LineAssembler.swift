/// Joins a file's lines from chunks as they arrive (a line may span chunks), holding at most
/// `limit` bytes of an unfinished line, so a file without newlines cannot make a reader hold it
/// whole. The session readers (``SessionFileReader``, ``ECGSessionReader``) read through it.
///
/// Package-wide, not public API.
package struct LineAssembler: Sendable {
    /// A completed line: its bytes (without the newline), or the fact that it was longer than
    /// the limit (its bytes were dropped as they came).
    package enum Line {
        case bytes(ArraySlice<UInt8>)
        case tooLong
    }

    /// The longest line kept, in bytes.
    package let limit: Int
    /// The start of a line split across chunks.
    private var pending: [UInt8] = []
    private var pendingTooLong = false

    /// An assembler of lines up to `limit` bytes (at least 1).
    package init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Splits `chunk` at its newlines and hands `line` every line it completes, in order; the
    /// bytes after the last newline wait for the next chunk (or ``finish(_:)``).
    package mutating func add<E: Error>(_ chunk: some Collection<UInt8>, _ line: (Line) throws(E) -> Void) throws(E) {
        let bytes = Array(chunk)
        var start = 0
        while start < bytes.count {
            guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                keep(bytes[start...])
                return
            }
            try line(complete(with: bytes[start..<newline]))
            start = newline + 1
        }
    }

    /// Hands `line` the last line when the file did not end with a newline.
    package mutating func finish<E: Error>(_ line: (Line) throws(E) -> Void) throws(E) {
        guard !pending.isEmpty || pendingTooLong else { return }
        try line(complete(with: [][...]))
    }

    private mutating func keep(_ part: ArraySlice<UInt8>) {
        guard !pendingTooLong else { return }
        if pending.count + part.count > limit {
            pendingTooLong = true
            pending.removeAll()
        } else {
            pending.append(contentsOf: part)
        }
    }

    private mutating func complete(with tail: ArraySlice<UInt8>) -> Line {
        if pendingTooLong || pending.count + tail.count > limit {
            pendingTooLong = false
            pending.removeAll(keepingCapacity: true)
            return .tooLong
        }
        guard !pending.isEmpty else { return .bytes(tail) }
        pending.append(contentsOf: tail)
        let line = pending
        pending.removeAll(keepingCapacity: true)
        return .bytes(line[...])
    }
}
