/// The straps of a session file that names several (`rawble hr A B`, `rawble ecg --all`): each
/// keyed by its address, in the order they first appear, at most ``limit`` (a file naming more
/// is read for the first ones). Both readers (``SessionFileReader``, ``ECGSessionReader``) keep
/// their straps in one, each with what that reader gathers of a strap.
struct StrapRoster<Strap> {
    /// The most straps one file is read for.
    static var limit: Int { 64 }

    private(set) var straps: [Strap] = []
    private var indices: [String: Int] = [:]

    /// The index of the strap at `address`, if it is one already met.
    func index(of address: String) -> Int? { indices[address] }

    /// The index of the strap at `address`, added (made by `make`) when it is new; `nil` when
    /// it is new and the roster already holds ``limit``.
    mutating func index(of address: String, adding make: () -> Strap) -> Int? {
        if let known = indices[address] { return known }
        guard straps.count < Self.limit else { return nil }
        indices[address] = straps.count
        straps.append(make())
        return straps.count - 1
    }

    subscript(index: Int) -> Strap {
        get { straps[index] }
        set { straps[index] = newValue }
    }

    var indexRange: Range<Int> { straps.indices }

    /// A strap's name as a line holds it: CSV's doubled quotes and JSON's `\"` and `\\` undone,
    /// control characters dropped, at most ``StrapLabel/maxNameLength`` bytes; `nil` when empty.
    static func name(_ field: ArraySlice<UInt8>) -> String? {
        var bytes: [UInt8] = []
        var index = field.startIndex
        while index < field.endIndex, bytes.count < StrapLabel.maxNameLength {
            let byte = field[index]
            let next = field.index(after: index)
            if (byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"")), next < field.endIndex,
               field[next] == UInt8(ascii: "\"") || (byte == UInt8(ascii: "\\") && field[next] == UInt8(ascii: "\\")) {
                bytes.append(field[next])
                index = field.index(after: next)
                continue
            }
            if byte >= 0x20 { bytes.append(byte) }
            index = next
        }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.isEmpty ? nil : text
    }
}

extension StrapRoster: Sendable where Strap: Sendable {}
