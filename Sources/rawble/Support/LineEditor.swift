// The pure part of `rawble shell`'s line editor: keys decoded from a terminal's bytes, the line
// being edited, the history and the completion candidates. No terminal here, so every piece is
// tested with plain values (ShellCommandTests); Terminal.swift draws and reads.

/// One key the line editor acts on, decoded from the bytes a terminal sends.
enum Key: Equatable, Sendable {
    /// Printable text (one character, or several from a paste).
    case text(String)
    case enter, tab, backspace, delete
    case left, right, home, end, wordLeft, wordRight
    case up, down
    /// Ctrl-C: the line is dropped.
    case interrupt
    /// Ctrl-D: the end of input on an empty line, else delete.
    case endOfInput
    /// Ctrl-K, Ctrl-U, Ctrl-W.
    case killToEnd, killToStart, killWordBefore
    /// Ctrl-L.
    case clearScreen
}

/// Turns the bytes a terminal sends into ``Key``s: control bytes, ANSI escape sequences
/// (arrows, Home/End/Delete in their xterm and VT forms) and UTF-8 text. A sequence split
/// across reads is kept until its end arrives; unknown sequences are dropped whole.
struct KeyDecoder {
    private var pending: [UInt8] = []
    /// A carriage return was the last byte: a line feed right after it is the same Enter.
    private var afterCarriageReturn = false

    mutating func keys(from bytes: some Sequence<UInt8>) -> [Key] {
        pending.append(contentsOf: bytes)
        var keys: [Key] = []
        var text: [UInt8] = []
        func flushText() {
            if !text.isEmpty { keys.append(.text(String(decoding: text, as: UTF8.self))) }
            text.removeAll()
        }
        var index = 0
        decoding: while index < pending.count {
            let byte = pending[index]
            let wasCarriageReturn = afterCarriageReturn
            afterCarriageReturn = false
            switch byte {
            case 0x1B:
                guard let (key, length) = Self.escapeSequence(pending[index...]) else { break decoding }  // incomplete
                flushText()
                if let key { keys.append(key) }
                index += length
                continue
            case 0x0D:
                flushText()
                keys.append(.enter)
                afterCarriageReturn = true
            case 0x0A:
                flushText()
                if !wasCarriageReturn { keys.append(.enter) }
            case 0x20..<0x7F:
                text.append(byte)
            case 0x80...:
                let length = Self.utf8Length(lead: byte)
                guard index + length <= pending.count else { break decoding }  // the rest comes later
                text.append(contentsOf: pending[index..<index + length])
                index += length
                continue
            default:
                flushText()
                if let key = Self.control(byte) { keys.append(key) }
            }
            index += 1
        }
        flushText()
        pending.removeFirst(index)
        return keys
    }

    private static func control(_ byte: UInt8) -> Key? {
        switch byte {
        case 0x01: .home           // Ctrl-A
        case 0x02: .left           // Ctrl-B
        case 0x03: .interrupt      // Ctrl-C
        case 0x04: .endOfInput     // Ctrl-D
        case 0x05: .end            // Ctrl-E
        case 0x06: .right          // Ctrl-F
        case 0x08, 0x7F: .backspace
        case 0x09: .tab
        case 0x0B: .killToEnd      // Ctrl-K
        case 0x0C: .clearScreen    // Ctrl-L
        case 0x0E: .down           // Ctrl-N
        case 0x10: .up             // Ctrl-P
        case 0x15: .killToStart    // Ctrl-U
        case 0x17: .killWordBefore // Ctrl-W
        default: nil
        }
    }

    /// The key an escape sequence at the start of `bytes` means (`nil` for one not known) and
    /// its length; `nil` when the sequence is not complete yet.
    private static func escapeSequence(_ bytes: ArraySlice<UInt8>) -> (Key?, Int)? {
        let start = bytes.startIndex
        guard bytes.count >= 2 else { return nil }
        let second = bytes[start + 1]
        switch second {
        case UInt8(ascii: "["):
            // CSI: parameters (digits, ';'), then one final byte in 0x40...0x7E.
            var index = start + 2
            while index < bytes.endIndex, !(0x40...0x7E).contains(bytes[index]) { index += 1 }
            guard index < bytes.endIndex else { return nil }
            let parameters = String(decoding: bytes[(start + 2)..<index], as: UTF8.self)
            let length = index - start + 1
            switch (bytes[index], parameters) {
            case (UInt8(ascii: "A"), _): return (.up, length)
            case (UInt8(ascii: "B"), _): return (.down, length)
            case (UInt8(ascii: "C"), "1;5"), (UInt8(ascii: "C"), "1;3"): return (.wordRight, length)
            case (UInt8(ascii: "D"), "1;5"), (UInt8(ascii: "D"), "1;3"): return (.wordLeft, length)
            case (UInt8(ascii: "C"), _): return (.right, length)
            case (UInt8(ascii: "D"), _): return (.left, length)
            case (UInt8(ascii: "H"), _): return (.home, length)
            case (UInt8(ascii: "F"), _): return (.end, length)
            case (UInt8(ascii: "~"), "1"), (UInt8(ascii: "~"), "7"): return (.home, length)
            case (UInt8(ascii: "~"), "4"), (UInt8(ascii: "~"), "8"): return (.end, length)
            case (UInt8(ascii: "~"), "3"): return (.delete, length)
            default: return (nil, length)
            }
        case UInt8(ascii: "O"):
            guard bytes.count >= 3 else { return nil }
            let key: Key? = switch bytes[start + 2] {
            case UInt8(ascii: "A"): .up
            case UInt8(ascii: "B"): .down
            case UInt8(ascii: "C"): .right
            case UInt8(ascii: "D"): .left
            case UInt8(ascii: "H"): .home
            case UInt8(ascii: "F"): .end
            default: nil
            }
            return (key, 3)
        case UInt8(ascii: "b"): return (.wordLeft, 2)   // Alt-B
        case UInt8(ascii: "f"): return (.wordRight, 2)  // Alt-F
        case 0x7F: return (.killWordBefore, 2)          // Alt-Backspace
        default: return (nil, 2)
        }
    }

    /// How many bytes a UTF-8 sequence starting with `lead` has (1 for a stray byte, which
    /// then decodes as U+FFFD).
    private static func utf8Length(lead: UInt8) -> Int {
        switch lead {
        case 0xC0...0xDF: 2
        case 0xE0...0xEF: 3
        case 0xF0...0xF7: 4
        default: 1
        }
    }
}

/// Lines entered before, newest last, and where up/down stand among them. The line being
/// typed is kept while browsing, and comes back below the newest entry.
struct History {
    private(set) var entries: [String] = []
    let limit: Int
    /// The entry shown, as an index into `entries`; `nil` while on the line being typed.
    private var position: Int?
    private var draft = ""

    init(entries: [String] = [], limit: Int = 1000) {
        self.limit = limit
        self.entries = Array(entries.suffix(limit))
    }

    /// Remembers `line` (not blank ones, nor the newest entry again) and leaves browsing.
    mutating func add(_ line: String) {
        position = nil
        let trimmed = line.trimmingWhitespace
        guard !trimmed.isEmpty, entries.last != line else { return }
        entries.append(line)
        if entries.count > limit { entries.removeFirst(entries.count - limit) }
    }

    /// The entry before the one shown (`current` is the line on screen, kept when leaving the
    /// line being typed); `nil` at the oldest.
    mutating func previous(current: String) -> String? {
        let next: Int
        if let position {
            guard position > 0 else { return nil }
            next = position - 1
        } else {
            guard !entries.isEmpty else { return nil }
            draft = current
            next = entries.count - 1
        }
        position = next
        return entries[next]
    }

    /// The entry after the one shown, or the line being typed after the newest; `nil` when not
    /// browsing.
    mutating func next() -> String? {
        guard let position else { return nil }
        if position + 1 < entries.count {
            self.position = position + 1
            return entries[position + 1]
        }
        self.position = nil
        return draft
    }

    /// Leaves browsing (the line on screen becomes the one being typed).
    mutating func stopBrowsing() {
        position = nil
    }
}

/// What Tab may complete: command names, their flags, attribute targets (handles and UUIDs of
/// the database discovered) and addresses (seen in scans).
struct CompletionWords: Sendable {
    /// Command names, and per command its flags.
    var commands: [String: [String]] = [:]
    /// Commands whose first argument is an attribute target.
    var targetCommands: Set<String> = []
    /// Commands whose first argument is an address.
    var addressCommands: Set<String> = []
    /// Commands whose first argument is a command name (`help`).
    var commandCommands: Set<String> = []
    /// `0x001D` handles and UUIDs (`2A37`), in database order.
    var targets: [String] = []
    var addresses: [String] = []

    /// The word under the cursor (from its start to the cursor) and what it may become.
    func candidates(line: [Character], cursor: Int) -> (wordStart: Int, candidates: [String]) {
        let cursor = min(max(cursor, 0), line.count)
        var wordStart = cursor
        while wordStart > 0, !line[wordStart - 1].isWhitespace { wordStart -= 1 }
        let word = String(line[wordStart..<cursor])
        let before = String(line[..<wordStart]).split(whereSeparator: \.isWhitespace).map(String.init)
        let pool: [String]
        if let command = before.first {
            let arguments = before.dropFirst().filter { !$0.hasPrefix("-") }
            if word.hasPrefix("-") {
                pool = commands[command] ?? []
            } else if arguments.isEmpty, targetCommands.contains(command) {
                pool = targets
            } else if arguments.isEmpty, addressCommands.contains(command) {
                pool = addresses
            } else if arguments.isEmpty, commandCommands.contains(command) {
                pool = commands.keys.sorted()
            } else {
                pool = []
            }
        } else {
            pool = commands.keys.sorted()
        }
        let lowered = word.lowercased()
        var seen = Set<String>()
        let matches = pool.filter { $0.lowercased().hasPrefix(lowered) && seen.insert($0).inserted }
        return (wordStart, matches)
    }
}

/// The line being edited and its cursor, with the history; ``handle(_:words:)`` applies one key
/// and says what the terminal must do about it.
struct LineEditor {
    private(set) var line: [Character] = []
    /// Where the cursor stands, 0...line.count.
    private(set) var cursor = 0
    var history: History
    /// The last key was a Tab that completed nothing: a second one lists the candidates.
    private var tabbedWithoutProgress = false

    /// What the terminal must do after a key.
    enum Outcome: Equatable {
        /// Redraw the line (it or the cursor changed, or nothing did).
        case redraw
        /// The line is entered (it is remembered in the history and the editor is empty again).
        case accepted(String)
        /// Ctrl-C: the line was dropped.
        case interrupted
        /// Ctrl-D on an empty line.
        case endOfInput
        /// Print these candidates above the prompt, then redraw.
        case list([String])
        /// Nothing to do for this key: ring the bell.
        case bell
        /// Clear the screen, then redraw.
        case clearScreen
    }

    init(history: History = History()) {
        self.history = history
    }

    var text: String { String(line) }

    mutating func handle(_ key: Key, words: CompletionWords) -> Outcome {
        let wasTab = tabbedWithoutProgress
        tabbedWithoutProgress = false
        switch key {
        case .text(let text):
            let characters = Array(text)
            line.insert(contentsOf: characters, at: cursor)
            cursor += characters.count
            history.stopBrowsing()
        case .enter:
            let entered = String(line)
            history.add(entered)
            line = []
            cursor = 0
            return .accepted(entered)
        case .tab:
            return complete(words: words, listing: wasTab)
        case .backspace:
            guard cursor > 0 else { return .bell }
            line.remove(at: cursor - 1)
            cursor -= 1
        case .delete:
            guard cursor < line.count else { return .bell }
            line.remove(at: cursor)
        case .endOfInput:
            if line.isEmpty { return .endOfInput }
            guard cursor < line.count else { return .bell }
            line.remove(at: cursor)
        case .left:
            guard cursor > 0 else { return .bell }
            cursor -= 1
        case .right:
            guard cursor < line.count else { return .bell }
            cursor += 1
        case .home:
            cursor = 0
        case .end:
            cursor = line.count
        case .wordLeft:
            cursor = wordStart(before: cursor)
        case .wordRight:
            while cursor < line.count, line[cursor].isWhitespace { cursor += 1 }
            while cursor < line.count, !line[cursor].isWhitespace { cursor += 1 }
        case .up:
            guard let entry = history.previous(current: String(line)) else { return .bell }
            replaceLine(with: entry)
        case .down:
            guard let entry = history.next() else { return .bell }
            replaceLine(with: entry)
        case .interrupt:
            line = []
            cursor = 0
            history.stopBrowsing()
            return .interrupted
        case .killToEnd:
            line.removeSubrange(cursor...)
        case .killToStart:
            line.removeSubrange(..<cursor)
            cursor = 0
        case .killWordBefore:
            let start = wordStart(before: cursor)
            line.removeSubrange(start..<cursor)
            cursor = start
        case .clearScreen:
            return .clearScreen
        }
        return .redraw
    }

    /// Tab: one candidate completes the word (and a space follows); several extend it to what
    /// they share, and a second Tab that added nothing lists them.
    private mutating func complete(words: CompletionWords, listing: Bool) -> Outcome {
        let (start, candidates) = words.candidates(line: line, cursor: cursor)
        guard let first = candidates.first else { return .bell }
        let typed = cursor - start
        var replacement = Array(first)
        if candidates.count == 1 {
            let next = cursor < line.count ? line[cursor] : nil
            if next?.isWhitespace != true { replacement.append(" ") }
        } else {
            replacement = Array(first.prefix(Self.sharedPrefixLength(candidates)))
        }
        if candidates.count > 1, replacement.count <= typed {
            // Nothing more to add: list them on the second Tab.
            if listing { return .list(candidates) }
            tabbedWithoutProgress = true
            return .bell
        }
        line.replaceSubrange(start..<cursor, with: replacement)
        cursor = start + replacement.count
        return .redraw
    }

    /// How many leading characters every candidate shares, compared case-insensitively.
    static func sharedPrefixLength(_ candidates: [String]) -> Int {
        guard let first = candidates.first.map({ Array($0.lowercased()) }) else { return 0 }
        var length = first.count
        for candidate in candidates.dropFirst() {
            let other = Array(candidate.lowercased())
            var shared = 0
            while shared < min(length, other.count), first[shared] == other[shared] { shared += 1 }
            length = shared
        }
        return length
    }

    private mutating func replaceLine(with text: String) {
        line = Array(text)
        cursor = line.count
    }

    private func wordStart(before position: Int) -> Int {
        var index = position
        while index > 0, line[index - 1].isWhitespace { index -= 1 }
        while index > 0, !line[index - 1].isWhitespace { index -= 1 }
        return index
    }
}

/// The part of a line that fits beside the prompt on one row, so a line longer than the
/// terminal (a 200-digit value to write) scrolls sideways instead of wrapping under a redraw
/// that only returns to the start of its row.
struct VisibleLine: Equatable {
    /// The first character shown and how many are.
    var start: Int
    var count: Int
    /// The cursor's column after the prompt.
    var cursorColumn: Int

    init(start: Int, count: Int, cursorColumn: Int) {
        self.start = start
        self.count = count
        self.cursorColumn = cursorColumn
    }

    /// The window over `length` characters with the cursor at `cursor`, in `columns` columns
    /// (one character a column; the last column stays free, so the cursor never wraps).
    init(length: Int, cursor: Int, columns: Int) {
        self.init(widths: Array(repeating: 1, count: max(0, length)), cursor: cursor, columns: columns)
    }

    /// The same over characters of the given display `widths` (two columns for a wide one):
    /// as much of the line before the cursor as fits, then as much after it.
    init(widths: [Int], cursor: Int, columns: Int) {
        let room = max(1, columns - 1)
        let cursor = min(max(cursor, 0), widths.count)
        var start = cursor
        var before = 0
        while start > 0, before + widths[start - 1] <= room - 1 {
            start -= 1
            before += widths[start]
        }
        var end = start
        var used = 0
        while end < widths.count, used + widths[end] <= room {
            used += widths[end]
            end += 1
        }
        self.start = start
        count = end - start
        cursorColumn = before
    }
}

extension String {
    /// The text without leading and trailing spaces, tabs and newlines.
    var trimmingWhitespace: String {
        let characters = Array(self)
        guard let first = characters.firstIndex(where: { !$0.isWhitespace }),
              let last = characters.lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(characters[first...last])
    }
}
