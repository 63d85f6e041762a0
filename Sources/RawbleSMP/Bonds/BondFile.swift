import RawbleWire

/// One local identity's bonds as a text file a person can read: ``Bond``s ⇄ bytes, sans I/O.
///
/// The bytes are what a store keeps on disk (RawbleStack's `FileBondStore`); this type only
/// encodes and decodes them. Decoding takes untrusted input: anything that is not a file this
/// version of rawble would write fails with a ``BondFileError`` naming the line and what is wrong,
/// never a trap, in time and memory bounded by ``maximumByteCount``.
///
/// ## The format, version 1
///
/// ```
/// rawble bonds 1
/// # rawble's bonds: the keys that encrypt links with these peers again. Keep this file private.
/// # rawble rewrites it whole on every change; comments written here are not kept.
/// local 00:1A:7D:DA:71:13 public
///
/// peer C4:5B:BE:12:34:56 random
/// irk 0123456789abcdef0123456789abcdef
/// central-ltk 00112233445566778899aabbccddeeff ediv 0000 rand 0000000000000000
/// peripheral-ltk 00112233445566778899aabbccddeeff ediv 0000 rand 0000000000000000
/// authenticated yes
/// secure-connections yes
/// key-size 16
///
/// end
/// ```
///
/// - The first line is `rawble bonds` and the format's version; `local` then names the identity
///   (the adapter's address) the bonds belong to, so a file copied to another identity's name is
///   recognised as foreign.
/// - Each bond starts with `peer ADDRESS TYPE` (``Bond/peer``) and runs to the next `peer` or to
///   `end`. Its other lines come in any order, each at most once: `irk`, `csrk` (optional),
///   `central-ltk`, `peripheral-ltk` (optional: `nil` when absent), `authenticated`,
///   `secure-connections` (`yes` or `no`) and `key-size` (7 to 16), which are required.
/// - Addresses are written `AA:BB:CC:DD:EE:FF` (either case), most significant octet first; the
///   type is `public` or `random` (or `public-identity`, `random-identity`, the controller's
///   names for an identity it resolved). Keys are 128-bit numbers written as 32 hex digits,
///   most significant first, as the specification's sample data prints them; EDIV is 4 hex
///   digits, Rand 16, in the same order.
/// - The last line is `end`: a file cut short anywhere, even between two bonds, lacks it.
/// - Words are separated by spaces or tabs; blank lines and lines starting with `#` are ignored;
///   lines may end in CR LF as well as LF (a file edited elsewhere still reads); the last line
///   need not end with a newline. The text must be UTF-8.
///
/// ## Versions and unknown keys
///
/// A key this version does not know is an error, not skipped: a store rewrites the whole file
/// on every change, so a key skipped on reading would be silently dropped on the next save. A
/// later rawble that adds keys therefore writes a higher version, which this one refuses with
/// ``BondFileError/Problem/newerVersion(_:)`` ("written by a newer rawble") before reading on,
/// leaving the file for the rawble that wrote it.
public struct BondFile: Hashable, Sendable {
    /// The format version this rawble writes and reads (the first line's number).
    public static let formatVersion = 1
    /// The largest file decoded: 1 MiB. The largest file ``encoded()`` writes, ``maximumBondCount``
    /// bonds with every key, is about 650 KiB.
    public static let maximumByteCount = 1 << 20
    /// The most bonds one file holds. A host's bonds are counted in tens; the bound keeps a
    /// hostile file from making every address lookup (one AES operation per bond) slow.
    public static let maximumBondCount = 2048

    /// The local identity (the adapter's identity address) the bonds belong to.
    public var localIdentity: DeviceAddress
    /// The bonds, in the order they are written, one per peer.
    public var bonds: [Bond]

    public init(localIdentity: DeviceAddress, bonds: [Bond] = []) {
        self.localIdentity = localIdentity
        self.bonds = bonds
    }

    /// Reads a bond file.
    ///
    /// - Throws: ``BondFileError``, with the line (from 1) where the problem is, when `bytes` are
    ///   not a bond file of version ``formatVersion`` or break one of its rules.
    public init(decoding bytes: some Collection<UInt8>) throws(BondFileError) {
        guard bytes.count <= Self.maximumByteCount else {
            throw BondFileError(line: nil, problem: .tooLarge(byteCount: bytes.count))
        }
        var reader = Reader()
        let input = Array(bytes)
        var start = 0
        var lineNumber = 0
        while start < input.count {
            let end = input[start...].firstIndex(of: UInt8(ascii: "\n")) ?? input.count
            lineNumber += 1
            var line = input[start..<end]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            try reader.read(line, number: lineNumber)
            start = end + 1
        }
        self = try reader.finish(lastLine: lineNumber)
    }

    /// The file's bytes: what ``init(decoding:)`` reads back as this value.
    ///
    /// - Throws: ``BondFileError`` (with no line) for a value no file holds: more than
    ///   ``maximumBondCount`` bonds, two with the same peer, a key size outside 7–16, or an
    ///   address whose type is not one an identity has. A store then refuses the change rather
    ///   than write a file it could not read back.
    public func encoded() throws(BondFileError) -> [UInt8] {
        func fail(_ problem: BondFileError.Problem) -> BondFileError { BondFileError(line: nil, problem: problem) }
        guard bonds.count <= Self.maximumBondCount else { throw fail(.tooManyBonds(limit: Self.maximumBondCount)) }
        guard let local = Self.text(of: localIdentity) else { throw fail(.unstorableAddressType(localIdentity)) }
        var text = """
            rawble bonds \(Self.formatVersion)
            # rawble's bonds: the keys that encrypt links with these peers again. Keep this file private.
            # rawble rewrites it whole on every change; comments written here are not kept.
            local \(local)

            """
        var peers: Set<DeviceAddress> = []
        for bond in bonds {
            guard let peer = Self.text(of: bond.peer) else { throw fail(.unstorableAddressType(bond.peer)) }
            guard peers.insert(bond.peer).inserted else { throw fail(.duplicatePeer(bond.peer, firstLine: nil)) }
            guard Self.keySizes.contains(bond.keySize) else {
                throw fail(.unstorableKeySize(bond.keySize, peer: bond.peer))
            }
            text += "\npeer \(peer)\n"
            if let irk = bond.peerIdentityResolvingKey { text += "irk \(Self.hex(irk, digits: 32))\n" }
            if let key = bond.centralKey { text += "central-ltk \(Self.text(of: key))\n" }
            if let key = bond.peripheralKey { text += "peripheral-ltk \(Self.text(of: key))\n" }
            if let csrk = bond.peerSignatureKey { text += "csrk \(Self.hex(csrk, digits: 32))\n" }
            text += "authenticated \(bond.authenticated ? "yes" : "no")\n"
            text += "secure-connections \(bond.secureConnections ? "yes" : "no")\n"
            text += "key-size \(bond.keySize)\n"
        }
        text += "\nend\n"
        return Array(text.utf8)
    }

    /// The key sizes a bond may have, in octets (Core Vol 3 Part H 3.5.1).
    static let keySizes: ClosedRange<UInt8> = 7...16

    /// The address types a file holds, by the word it writes for each.
    static let addressTypes: [(word: String, type: LEAddressType)] = [
        ("public", .public), ("random", .random), ("public-identity", .publicIdentity), ("random-identity", .randomIdentity),
    ]

    /// `AA:BB:CC:DD:EE:FF type`, or `nil` for a type no identity has (anonymous, reserved).
    static func text(of address: DeviceAddress) -> String? {
        guard let word = addressTypes.first(where: { $0.type == address.type })?.word else { return nil }
        return "\(address.address) \(word)"
    }

    static func text(of key: Bond.LongTermKey) -> String {
        "\(hex(key.value, digits: 32)) ediv \(hex(key.encryptedDiversifier, digits: 4)) rand \(hex(key.random, digits: 16))"
    }

    /// Lower-case hex of `value`, zero-padded to `digits`.
    static func hex(_ value: some BinaryInteger, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

/// Why bytes are not a bond file this rawble reads, and on which line; or why a ``BondFile``
/// value cannot be written.
public struct BondFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The line (from 1) the problem is on; `nil` for the file as a whole (too large, or empty)
    /// and for encoding.
    public var line: Int?
    /// What is wrong.
    public var problem: Problem

    /// What is wrong with a bond file, or with a value being encoded (the `unstorable` cases,
    /// and `duplicatePeer` and `tooManyBonds` with no line).
    public enum Problem: Hashable, Sendable {
        /// More than ``BondFile/maximumByteCount`` bytes.
        case tooLarge(byteCount: Int)
        /// No bytes at all (where a file was expected: a store reads a missing file as no bonds).
        case empty
        /// The first line is not `rawble bonds VERSION`: the text it holds instead.
        case notABondFile(firstLine: String)
        /// `rawble bonds` with a version that is no number rawble ever wrote.
        case unknownVersion(String)
        /// A version above ``BondFile/formatVersion``: a newer rawble wrote the file.
        case newerVersion(Int)
        /// A line that is not UTF-8.
        case notUTF8
        /// The file ends without its `end` line: it was cut short.
        case truncated
        /// Something other than blank lines and comments after `end`.
        case textAfterEnd(String)
        /// A key that format version 1 has not.
        case unknownKey(String)
        /// A key where it cannot be: a bond's key before the first `peer` line, `local` after it.
        case misplacedKey(String)
        /// A key given a second time in the same bond (or `local` twice): the line it was first on.
        case duplicateKey(String, firstLine: Int)
        /// A required key is missing: from the bond with `bond`, or (`nil`) the file's `local` line.
        case missingKey(String, bond: DeviceAddress?)
        /// A line whose words are not the key's form (`peer ADDRESS TYPE`, `key-size N`, ...).
        case malformed(key: String)
        /// Not an address written `AA:BB:CC:DD:EE:FF`.
        case badAddress(String)
        /// Not one of the address types (`public`, `random`, `public-identity`, `random-identity`).
        case badAddressType(String)
        /// A field (a key, EDIV or Rand) that is not hex digits.
        case notHex(field: String, text: String)
        /// A field with too many or too few hex digits.
        case wrongDigitCount(field: String, found: Int, expected: Int)
        /// Neither `yes` nor `no`.
        case badFlag(key: String, text: String)
        /// Not a key size from 7 to 16.
        case badKeySize(String)
        /// A second bond with the same peer: the line of the first (`nil` when encoding).
        case duplicatePeer(DeviceAddress, firstLine: Int?)
        /// More than ``BondFile/maximumBondCount`` bonds.
        case tooManyBonds(limit: Int)
        /// Encoding: an address whose type no identity has (anonymous, or a reserved value).
        case unstorableAddressType(DeviceAddress)
        /// Encoding: a bond whose key size is outside 7–16.
        case unstorableKeySize(UInt8, peer: DeviceAddress)
    }

    public init(line: Int?, problem: Problem) {
        self.line = line
        self.problem = problem
    }

    /// One line: where, what is wrong, and what to do when that is not plain.
    public var description: String {
        let usage = "a version-\(BondFile.formatVersion) file has local, peer, irk, central-ltk, peripheral-ltk, csrk, "
            + "authenticated, secure-connections, key-size and end"
        let what: String
        switch problem {
        case .tooLarge(let count):
            what = "\(count) bytes, more than a bond file can be (\(BondFile.maximumByteCount)): not a bond file"
        case .empty:
            what = "empty, not a rawble bond file (which starts with \"rawble bonds \(BondFile.formatVersion)\")"
        case .notABondFile(let first):
            what = "not a rawble bond file: it starts with \(quoted(first)), not \"rawble bonds \(BondFile.formatVersion)\""
        case .unknownVersion(let text):
            what = "format version \(quoted(text)) is no version rawble writes (this one reads \(BondFile.formatVersion))"
        case .newerVersion(let version):
            what = "written by a newer rawble (format version \(version); this one reads version "
                + "\(BondFile.formatVersion)): use that rawble or a newer one"
        case .notUTF8:
            what = "not UTF-8 text"
        case .truncated:
            what = "the file ends without its \"end\" line: it was cut short, and bonds after this line may be lost"
        case .textAfterEnd(let text):
            what = "\(quoted(text)) after the \"end\" line"
        case .unknownKey(let key):
            what = "unknown key \(quoted(key)) (\(usage))"
        case .misplacedKey(let key):
            what = key == "local"
                ? "\"local\" after the first bond: it comes once, before the bonds"
                : "\(quoted(key)) before the first bond: each bond starts with \"peer ADDRESS TYPE\""
        case .duplicateKey(let key, let first):
            what = "\(quoted(key)) a second time (first at line \(first))"
        case .missingKey(let key, let bond?):
            what = "the bond with \(Self.text(of: bond)) has no \"\(key)\" line"
        case .missingKey(let key, nil):
            what = "no \"\(key)\" line before the bonds (\"local ADDRESS TYPE\", the identity the bonds belong to)"
        case .malformed(let key):
            what = "\"\(key)\" is written \(Self.form(of: key))"
        case .badAddress(let text):
            what = "\(quoted(text)) is not an address written AA:BB:CC:DD:EE:FF"
        case .badAddressType(let text):
            what = "address type \(quoted(text)) is none of public, random, public-identity, random-identity"
        case .notHex(let field, let text):
            what = "\(field) \(quoted(text)) is not hex digits"
        case .wrongDigitCount(let field, let found, let expected):
            what = "\(field) has \(found) hex digit\(found == 1 ? "" : "s"), not \(expected)"
        case .badFlag(let key, let text):
            what = "\(key) is yes or no, not \(quoted(text))"
        case .badKeySize(let text):
            what = "key-size is a number of octets from 7 to 16, not \(quoted(text))"
        case .duplicatePeer(let peer, let first?):
            what = "a second bond with \(Self.text(of: peer)) (the first starts at line \(first)): remove one"
        case .duplicatePeer(let peer, nil):
            what = "two bonds with \(Self.text(of: peer))"
        case .tooManyBonds(let limit):
            what = "more than \(limit) bonds, the most a bond file holds"
        case .unstorableAddressType(let address):
            what = "cannot write \(address.address) with address type \(address.type): an identity's type is public or random"
        case .unstorableKeySize(let size, let peer):
            what = "cannot write the bond with \(Self.text(of: peer)): key size \(size), not 7 to 16"
        }
        return line.map { "line \($0): \(what)" } ?? what
    }

    /// An address as the file writes it, or the type's own name when the file has none for it.
    static func text(of address: DeviceAddress) -> String {
        BondFile.text(of: address) ?? "\(address.address) \(address.type)"
    }

    /// How `key`'s line is written, with an example.
    static func form(of key: String) -> String {
        switch key {
        case "local", "peer": "\"\(key) ADDRESS TYPE\", e.g. \"\(key) C4:5B:BE:12:34:56 random\""
        case "irk", "csrk": "\"\(key)\" and 32 hex digits"
        case "central-ltk", "peripheral-ltk": "\"\(key) KEY ediv EDIV rand RAND\" (32, 4 and 16 hex digits)"
        case "authenticated", "secure-connections": "\"\(key) yes\" or \"\(key) no\""
        case "key-size": "\"key-size N\", N from 7 to 16"
        default: "\"\(key)\" alone"
        }
    }
}

/// `text` in double quotes, control and non-ASCII characters escaped, cut at 40 characters: a
/// hostile file's text in a one-line message.
private func quoted(_ text: some StringProtocol) -> String {
    var result = "\""
    for (index, scalar) in text.unicodeScalars.enumerated() {
        if index == 40 {
            result += "…"
            break
        }
        result += scalar.escaped(asASCII: true)
    }
    return result + "\""
}

/// The decoder's state, one line at a time.
private struct Reader {
    enum Stage {
        case header, preamble, bonds, ended
    }

    /// The bond whose lines are being read.
    struct Pending {
        let peer: DeviceAddress
        let line: Int
        var keyLines: [String: Int] = [:]
        var identityResolvingKey: UInt128?
        var centralKey: Bond.LongTermKey?
        var peripheralKey: Bond.LongTermKey?
        var signatureKey: UInt128?
        var authenticated: Bool?
        var secureConnections: Bool?
        var keySize: UInt8?

        func bond() throws(BondFileError) -> Bond {
            func missing(_ key: String) -> BondFileError {
                BondFileError(line: line, problem: .missingKey(key, bond: peer))
            }
            guard let authenticated else { throw missing("authenticated") }
            guard let secureConnections else { throw missing("secure-connections") }
            guard let keySize else { throw missing("key-size") }
            return Bond(peer: peer, peerIdentityResolvingKey: identityResolvingKey, centralKey: centralKey,
                        peripheralKey: peripheralKey, peerSignatureKey: signatureKey, authenticated: authenticated,
                        secureConnections: secureConnections, keySize: keySize)
        }
    }

    var stage = Stage.header
    var local: (address: DeviceAddress, line: Int)?
    var pending: Pending?
    var bonds: [Bond] = []
    var peerLines: [DeviceAddress: Int] = [:]

    mutating func read(_ bytes: ArraySlice<UInt8>, number: Int) throws(BondFileError) {
        func fail(_ problem: BondFileError.Problem) -> BondFileError { BondFileError(line: number, problem: problem) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            if stage == .header { throw fail(.notABondFile(firstLine: String(decoding: bytes, as: UTF8.self))) }
            throw fail(.notUTF8)
        }
        let words = text.unicodeScalars.split { $0 == " " || $0 == "\t" }.map { String($0) }
        if stage == .header {
            try readHeader(words, text: text, number: number)
            return
        }
        guard let key = words.first, !key.hasPrefix("#") else { return }
        let values = words.dropFirst()
        if stage == .ended { throw fail(.textAfterEnd(text)) }
        switch key {
        case "local":
            guard stage == .preamble else { throw fail(.misplacedKey(key)) }
            if let local { throw fail(.duplicateKey(key, firstLine: local.line)) }
            local = (try address(values, key: key, number: number), number)
        case "peer":
            try finishBond(number: number)
            guard bonds.count < BondFile.maximumBondCount else { throw fail(.tooManyBonds(limit: BondFile.maximumBondCount)) }
            let peer = try address(values, key: key, number: number)
            if let first = peerLines[peer] { throw fail(.duplicatePeer(peer, firstLine: first)) }
            peerLines[peer] = number
            pending = Pending(peer: peer, line: number)
            stage = .bonds
        case "end":
            guard values.isEmpty else { throw fail(.malformed(key: key)) }
            try finishBond(number: number)
            stage = .ended
        case "irk", "csrk", "central-ltk", "peripheral-ltk", "authenticated", "secure-connections", "key-size":
            guard var bond = pending else { throw fail(.misplacedKey(key)) }
            if let first = bond.keyLines[key] { throw fail(.duplicateKey(key, firstLine: first)) }
            bond.keyLines[key] = number
            switch key {
            case "irk": bond.identityResolvingKey = try Self.key(values, key: key, number: number)
            case "csrk": bond.signatureKey = try Self.key(values, key: key, number: number)
            case "central-ltk": bond.centralKey = try Self.longTermKey(values, key: key, number: number)
            case "peripheral-ltk": bond.peripheralKey = try Self.longTermKey(values, key: key, number: number)
            case "authenticated": bond.authenticated = try Self.flag(values, key: key, number: number)
            case "secure-connections": bond.secureConnections = try Self.flag(values, key: key, number: number)
            default:
                guard values.count == 1 else { throw fail(.malformed(key: key)) }
                let text = values[values.startIndex]
                guard text.utf8.count <= 2, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let size = UInt8(text),
                      BondFile.keySizes.contains(size)
                else { throw fail(.badKeySize(text)) }
                bond.keySize = size
            }
            pending = bond
        default:
            throw fail(.unknownKey(key))
        }
    }

    mutating func readHeader(_ words: [String], text: String, number: Int) throws(BondFileError) {
        func fail(_ problem: BondFileError.Problem) -> BondFileError { BondFileError(line: number, problem: problem) }
        guard words.count >= 2, words[0] == "rawble", words[1] == "bonds" else { throw fail(.notABondFile(firstLine: text)) }
        let version = words.dropFirst(2).joined(separator: " ")
        guard words.count == 3, version.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(version),
              number > 0
        else { throw fail(.unknownVersion(version)) }
        guard number <= BondFile.formatVersion else { throw fail(.newerVersion(number)) }
        stage = .preamble
    }

    /// Ends the bond being read, if any, before `peer` or `end` on line `number`.
    mutating func finishBond(number: Int) throws(BondFileError) {
        guard local != nil else { throw BondFileError(line: number, problem: .missingKey("local", bond: nil)) }
        if let pending { bonds.append(try pending.bond()) }
        pending = nil
    }

    func finish(lastLine: Int) throws(BondFileError) -> BondFile {
        switch stage {
        case .header: throw BondFileError(line: nil, problem: .empty)
        case .preamble, .bonds: throw BondFileError(line: lastLine, problem: .truncated)
        case .ended: break
        }
        guard let local else { throw BondFileError(line: lastLine, problem: .missingKey("local", bond: nil)) }
        return BondFile(localIdentity: local.address, bonds: bonds)
    }

    /// `ADDRESS TYPE`, the address strictly as `AA:BB:CC:DD:EE:FF`.
    func address(_ values: ArraySlice<String>, key: String, number: Int) throws(BondFileError) -> DeviceAddress {
        func fail(_ problem: BondFileError.Problem) -> BondFileError { BondFileError(line: number, problem: problem) }
        guard values.count == 2 else { throw fail(.malformed(key: key)) }
        let text = values[values.startIndex], typeText = values[values.startIndex + 1]
        let utf8 = Array(text.utf8)
        guard utf8.count == 17,
              utf8.indices.allSatisfy({ $0 % 3 == 2 ? utf8[$0] == UInt8(ascii: ":") : Self.nibble(utf8[$0]) != nil }),
              let address = BluetoothAddress(text)
        else { throw fail(.badAddress(text)) }
        guard let type = BondFile.addressTypes.first(where: { $0.word == typeText })?.type else {
            throw fail(.badAddressType(typeText))
        }
        return DeviceAddress(address, type: type)
    }

    /// A 128-bit key, the line's one value.
    static func key(_ values: ArraySlice<String>, key: String, number: Int) throws(BondFileError) -> UInt128 {
        guard values.count == 1 else { throw BondFileError(line: number, problem: .malformed(key: key)) }
        return try hex(values[values.startIndex], digits: 32, field: key, number: number)
    }

    /// `KEY ediv EDIV rand RAND`.
    static func longTermKey(_ values: ArraySlice<String>, key: String, number: Int) throws(BondFileError) -> Bond.LongTermKey {
        let words = Array(values)
        guard words.count == 5, words[1] == "ediv", words[3] == "rand" else {
            throw BondFileError(line: number, problem: .malformed(key: key))
        }
        return Bond.LongTermKey(
            value: try hex(words[0], digits: 32, field: key, number: number),
            encryptedDiversifier: UInt16(try hex(words[2], digits: 4, field: "ediv", number: number)),
            random: UInt64(try hex(words[4], digits: 16, field: "rand", number: number)))
    }

    static func flag(_ values: ArraySlice<String>, key: String, number: Int) throws(BondFileError) -> Bool {
        guard values.count == 1 else { throw BondFileError(line: number, problem: .malformed(key: key)) }
        switch values[values.startIndex] {
        case "yes": return true
        case "no": return false
        case let text: throw BondFileError(line: number, problem: .badFlag(key: key, text: text))
        }
    }

    /// Exactly `digits` hex digits, either case, most significant first (at most 32).
    static func hex(_ text: String, digits: Int, field: String, number: Int) throws(BondFileError) -> UInt128 {
        var value: UInt128 = 0
        for byte in text.utf8 {
            guard let nibble = nibble(byte) else {
                throw BondFileError(line: number, problem: .notHex(field: field, text: text))
            }
            value = value << 4 | UInt128(nibble)
        }
        let count = text.utf8.count
        guard count == digits else {
            throw BondFileError(line: number, problem: .wrongDigitCount(field: field, found: count, expected: digits))
        }
        return value
    }

    static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
