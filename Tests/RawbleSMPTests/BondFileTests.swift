import RawbleSMP
import RawbleWire
import Testing

/// The bond file: what it writes, byte for byte; that it reads back what it wrote; and that each
/// kind of bad input is refused with its typed problem on the right line, never a trap.
@Suite("Bond file")
struct BondFileTests {
    static let local = DeviceAddress(BluetoothAddress(0x00_1A_7D_DA_71_13), type: .public)
    static let key: UInt128 = 0x00112233_44556677_8899aabb_ccddeeff

    /// LE Secure Connections, with the peer's IRK: the same LTK both ways, EDIV and Rand 0.
    static let secure = Bond(
        peer: DeviceAddress(BluetoothAddress(0xC4_5B_BE_12_34_56), type: .random),
        peerIdentityResolvingKey: 0x01234567_89abcdef_01234567_89abcdef,
        centralKey: Bond.LongTermKey(value: key), peripheralKey: Bond.LongTermKey(value: key),
        authenticated: true, secureConnections: true, keySize: 16)

    /// The file of ``secure`` alone, as rawble writes it.
    static let secureText = """
        rawble bonds 1
        # rawble's bonds: the keys that encrypt links with these peers again. Keep this file private.
        # rawble rewrites it whole on every change; comments written here are not kept.
        local 00:1A:7D:DA:71:13 public

        peer C4:5B:BE:12:34:56 random
        irk 0123456789abcdef0123456789abcdef
        central-ltk 00112233445566778899aabbccddeeff ediv 0000 rand 0000000000000000
        peripheral-ltk 00112233445566778899aabbccddeeff ediv 0000 rand 0000000000000000
        authenticated yes
        secure-connections yes
        key-size 16

        end

        """

    /// Every kind of bond: legacy pairing with EDIV and Rand for each role, one key only, no key,
    /// with and without IRK and CSRK, each address type a file holds.
    static let kinds: [Bond] = [
        secure,
        Bond(peer: DeviceAddress(BluetoothAddress(0x00_11_22_33_44_55), type: .public),
             centralKey: Bond.LongTermKey(value: 0xffeeddcc_bbaa9988_77665544_33221100, encryptedDiversifier: 0x1234,
                               random: 0x01234567_89abcdef),
             peripheralKey: Bond.LongTermKey(value: 0x0f1e2d3c_4b5a6978_8796a5b4_c3d2e1f0, encryptedDiversifier: 0xBEEF,
                                  random: 0xfedcba98_76543210),
             peerSignatureKey: 0x11112222_33334444_55556666_77778888,
             authenticated: false, secureConnections: false, keySize: 7),
        Bond(peer: DeviceAddress(BluetoothAddress(0xD0_00_00_00_00_01), type: .randomIdentity),
             peerIdentityResolvingKey: .max, centralKey: Bond.LongTermKey(value: .max, encryptedDiversifier: .max, random: .max),
             peripheralKey: nil, peerSignatureKey: 0, authenticated: true, secureConnections: false, keySize: 12),
        Bond(peer: DeviceAddress(BluetoothAddress(0xFF_FF_FF_FF_FF_FF), type: .publicIdentity),
             centralKey: nil, peripheralKey: Bond.LongTermKey(value: 0, encryptedDiversifier: 0, random: 1),
             authenticated: false, secureConnections: true, keySize: 16),
        Bond(peer: DeviceAddress(BluetoothAddress(0), type: .public), centralKey: nil, peripheralKey: nil,
             authenticated: false, secureConnections: false, keySize: 8),
    ]

    static func decode(_ text: String) throws(BondFileError) -> BondFile {
        try BondFile(decoding: Array(text.utf8))
    }

    static func error(_ bytes: [UInt8]) -> BondFileError? {
        do {
            _ = try BondFile(decoding: bytes)
            return nil
        } catch {
            return error
        }
    }

    // MARK: What it writes and reads back

    @Test func writesTheExactBytesOfTheFormat() throws {
        let file = BondFile(localIdentity: Self.local, bonds: [Self.secure])
        #expect(String(decoding: try file.encoded(), as: UTF8.self) == Self.secureText)
        #expect(try Self.decode(Self.secureText) == file)
    }

    @Test func aFileWithNoBonds() throws {
        let file = BondFile(localIdentity: DeviceAddress(BluetoothAddress(0xC0_00_00_00_00_01), type: .random))
        let text = String(decoding: try file.encoded(), as: UTF8.self)
        #expect(text.hasSuffix("local C0:00:00:00:00:01 random\n\nend\n"))
        #expect(try Self.decode(text) == file)
    }

    @Test func everyKindOfBondRoundTrips() throws {
        let file = BondFile(localIdentity: Self.local, bonds: Self.kinds)
        let bytes = try file.encoded()
        #expect(try BondFile(decoding: bytes) == file)
        // One at a time too, and in the reverse order: the order is kept.
        for bond in Self.kinds {
            let one = BondFile(localIdentity: Self.local, bonds: [bond])
            #expect(try BondFile(decoding: one.encoded()) == one)
        }
        let reversed = BondFile(localIdentity: Self.local, bonds: Self.kinds.reversed())
        #expect(try BondFile(decoding: reversed.encoded()).bonds == Self.kinds.reversed())
    }

    /// The encoder's limit keeps it from writing a file the decoder refuses for its size: the
    /// most bonds, each with every key and the longest address type, fit (in about 650 KiB).
    @Test func theLargestFileThatCanBeWrittenIsReadBack() throws {
        let bonds = (0..<BondFile.maximumBondCount).map { index in
            Bond(peer: DeviceAddress(BluetoothAddress(UInt64(index)), type: .randomIdentity),
                 peerIdentityResolvingKey: .max, centralKey: Bond.LongTermKey(value: .max, encryptedDiversifier: .max, random: .max),
                 peripheralKey: Bond.LongTermKey(value: .max, encryptedDiversifier: .max, random: .max), peerSignatureKey: .max,
                 authenticated: true, secureConnections: true, keySize: 16)
        }
        let file = BondFile(localIdentity: Self.local, bonds: bonds)
        let bytes = try file.encoded()
        #expect(bytes.count < BondFile.maximumByteCount)
        #expect(try BondFile(decoding: bytes) == file)
    }

    // MARK: What a person may write

    /// Keys in any order within a bond, upper-case hex, tabs and runs of spaces, trailing blanks,
    /// comments and blank lines anywhere, CR LF line ends, no newline after `end`.
    @Test func readsWhatAPersonMayWrite() throws {
        let text = "rawble bonds 1\r\n# edited by hand\r\n\r\nlocal  00:1a:7d:da:71:13\tpublic  \r\n"
            + "peer c4:5b:be:12:34:56 random\r\n   # a comment in a bond\r\nkey-size 16\r\nsecure-connections yes\r\n"
            + "authenticated\tyes\r\nperipheral-ltk 00112233445566778899AABBCCDDEEFF ediv 0000 rand 0000000000000000\r\n"
            + "central-ltk 00112233445566778899aabbccddeeff  ediv 0000  rand 0000000000000000\r\n"
            + "irk 0123456789ABCDEF0123456789abcdef\r\n\r\nend"
        #expect(try Self.decode(text) == BondFile(localIdentity: Self.local, bonds: [Self.secure]))
    }

    @Test func crLFLineEndingsReadAsLF() throws {
        let file = BondFile(localIdentity: Self.local, bonds: Self.kinds)
        let text = String(decoding: try file.encoded(), as: UTF8.self)
        let crlf = text.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n")
        #expect(try Self.decode(crlf) == file)
    }

    // MARK: What it refuses

    /// One bad input: the text, the line and the problem expected.
    struct BadInput: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: [UInt8]
        var line: Int?
        var problem: BondFileError.Problem
        var testDescription: String { name }

        init(_ name: String, _ text: String, line: Int?, _ problem: BondFileError.Problem) {
            self.init(name, Array(text.utf8), line: line, problem)
        }

        init(_ name: String, _ bytes: [UInt8], line: Int?, _ problem: BondFileError.Problem) {
            self.name = name
            self.bytes = bytes
            self.line = line
            self.problem = problem
        }
    }

    /// ``secureText`` with line `number` (from 1) replaced by `lines` (none: removed).
    static func replacing(line number: Int, with lines: String...) -> String {
        var all = secureText.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        all.replaceSubrange((number - 1)..<number, with: lines)
        return all.joined(separator: "\n")
    }

    /// The first `count` lines of ``secureText``.
    static func firstLines(_ count: Int) -> String {
        secureText.split(separator: "\n", omittingEmptySubsequences: false).prefix(count).joined(separator: "\n") + "\n"
    }

    static let peer = secure.peer
    static let header = "rawble bonds 1\nlocal 00:1A:7D:DA:71:13 public\n"
    static let bondBody = "authenticated no\nsecure-connections no\nkey-size 16\n"

    static let badInputs: [BadInput] = [
        BadInput("empty", "", line: nil, .empty),
        BadInput("not a bond file", "[General]\nName=strap\n", line: 1, .notABondFile(firstLine: "[General]")),
        BadInput("a blank first line", "\nrawble bonds 1\n", line: 1, .notABondFile(firstLine: "")),
        BadInput("binary", [0x7F, 0x45, 0x4C, 0x46, 0xFF, 0x0A], line: 1, .notABondFile(firstLine: "\u{7F}ELF\u{FFFD}")),
        BadInput("no version", "rawble bonds\n", line: 1, .unknownVersion("")),
        BadInput("version 0", "rawble bonds 0\n", line: 1, .unknownVersion("0")),
        BadInput("version not a number", "rawble bonds 1.0\n", line: 1, .unknownVersion("1.0")),
        BadInput("version with a sign", "rawble bonds +1\n", line: 1, .unknownVersion("+1")),
        BadInput("two versions", "rawble bonds 1 2\n", line: 1, .unknownVersion("1 2")),
        BadInput("version beyond Int", "rawble bonds 99999999999999999999999\n", line: 1,
                 .unknownVersion("99999999999999999999999")),
        BadInput("newer version", replacing(line: 1, with: "rawble bonds 2", "future-key 42"), line: 1, .newerVersion(2)),
        BadInput("too large", Array(repeating: UInt8(ascii: "#"), count: BondFile.maximumByteCount + 1), line: nil,
                 .tooLarge(byteCount: BondFile.maximumByteCount + 1)),
        BadInput("not UTF-8", Array("rawble bonds 1\n# caf".utf8) + [0xE9] + Array("\n".utf8), line: 2, .notUTF8),
        BadInput("not UTF-8 in a key", replacing(line: 7, with: "irk 0123456789abcdef0123456789abcdeX").utf8.map {
            $0 == UInt8(ascii: "X") ? 0xC3 : $0
        }, line: 7, .notUTF8),
        BadInput("cut short between lines", replacing(line: 14), line: 13, .truncated),
        BadInput("cut short in a bond", firstLines(9), line: 9, .truncated),
        BadInput("cut short in a key", String(secureText.dropLast(60)), line: 9,
                 .wrongDigitCount(field: "rand", found: 15, expected: 16)),
        BadInput("cut short before the bonds", header, line: 2, .truncated),
        BadInput("text after end", secureText + "peer 00:11:22:33:44:55 public\n", line: 15,
                 .textAfterEnd("peer 00:11:22:33:44:55 public")),
        BadInput("bad hex", replacing(line: 7, with: "irk 0123456789abcdef0123456789abcdeg"), line: 7,
                 .notHex(field: "irk", text: "0123456789abcdef0123456789abcdeg")),
        BadInput("hex with 0x", replacing(line: 7, with: "irk 0x0123456789abcdef0123456789abcdef"), line: 7,
                 .notHex(field: "irk", text: "0x0123456789abcdef0123456789abcdef")),
        BadInput("key too long", replacing(line: 7, with: "irk 0123456789abcdef0123456789abcdef00"), line: 7,
                 .wrongDigitCount(field: "irk", found: 34, expected: 32)),
        BadInput("key too short", replacing(line: 8, with: "central-ltk 112233445566778899aabbccddeeff ediv 0000 rand 0000000000000000"),
                 line: 8, .wrongDigitCount(field: "central-ltk", found: 30, expected: 32)),
        BadInput("EDIV too long", replacing(line: 9, with: "peripheral-ltk 00112233445566778899aabbccddeeff ediv 00000 rand 0000000000000000"),
                 line: 9, .wrongDigitCount(field: "ediv", found: 5, expected: 4)),
        BadInput("Rand too short", replacing(line: 9, with: "peripheral-ltk 00112233445566778899aabbccddeeff ediv 0000 rand 0"),
                 line: 9, .wrongDigitCount(field: "rand", found: 1, expected: 16)),
        BadInput("LTK without EDIV", replacing(line: 8, with: "central-ltk 00112233445566778899aabbccddeeff rand 0000000000000000"),
                 line: 8, .malformed(key: "central-ltk")),
        BadInput("IRK split in two", replacing(line: 7, with: "irk 0123456789abcdef 0123456789abcdef"), line: 7, .malformed(key: "irk")),
        BadInput("unknown key", replacing(line: 7, with: "ltk 00112233445566778899aabbccddeeff"), line: 7, .unknownKey("ltk")),
        BadInput("a key of another case", replacing(line: 7, with: "IRK 0123456789abcdef0123456789abcdef"), line: 7, .unknownKey("IRK")),
        BadInput("duplicate peer", replacing(line: 13, with: "", "peer C4:5B:BE:12:34:56 random", bondBody), line: 14,
                 .duplicatePeer(peer, firstLine: 6)),
        BadInput("duplicate key", replacing(line: 12, with: "key-size 16", "key-size 16"), line: 13, .duplicateKey("key-size", firstLine: 12)),
        BadInput("two local lines", replacing(line: 4, with: "local 00:1A:7D:DA:71:13 public", "local 00:1A:7D:DA:71:13 public"), line: 5,
                 .duplicateKey("local", firstLine: 4)),
        BadInput("missing key-size", replacing(line: 12), line: 6, .missingKey("key-size", bond: peer)),
        BadInput("missing authenticated", replacing(line: 10), line: 6, .missingKey("authenticated", bond: peer)),
        BadInput("missing secure-connections", replacing(line: 11), line: 6, .missingKey("secure-connections", bond: peer)),
        BadInput("missing local", replacing(line: 4), line: 5, .missingKey("local", bond: nil)),
        BadInput("missing local, no bonds", "rawble bonds 1\nend\n", line: 2, .missingKey("local", bond: nil)),
        BadInput("a bond's key before the first peer", replacing(line: 5, with: "key-size 16"), line: 5, .misplacedKey("key-size")),
        BadInput("local among the bonds", replacing(line: 13, with: "local 00:1A:7D:DA:71:13 public"), line: 13, .misplacedKey("local")),
        BadInput("end with more", replacing(line: 14, with: "end now"), line: 14, .malformed(key: "end")),
        BadInput("bad address", replacing(line: 6, with: "peer C4:5B:BE:12:34 random"), line: 6, .badAddress("C4:5B:BE:12:34")),
        BadInput("address with a sign", replacing(line: 6, with: "peer +4:5B:BE:12:34:56 random"), line: 6, .badAddress("+4:5B:BE:12:34:56")),
        BadInput("address with dashes", replacing(line: 6, with: "peer C4-5B-BE-12-34-56 random"), line: 6, .badAddress("C4-5B-BE-12-34-56")),
        BadInput("address without a type", replacing(line: 6, with: "peer C4:5B:BE:12:34:56"), line: 6, .malformed(key: "peer")),
        BadInput("bad address type", replacing(line: 4, with: "local 00:1A:7D:DA:71:13 anonymous"), line: 4, .badAddressType("anonymous")),
        BadInput("bad flag", replacing(line: 10, with: "authenticated true"), line: 10, .badFlag(key: "authenticated", text: "true")),
        BadInput("key size too small", replacing(line: 12, with: "key-size 6"), line: 12, .badKeySize("6")),
        BadInput("key size too large", replacing(line: 12, with: "key-size 17"), line: 12, .badKeySize("17")),
        BadInput("key size with a sign", replacing(line: 12, with: "key-size +9"), line: 12, .badKeySize("+9")),
        BadInput("key size with a zero", replacing(line: 12, with: "key-size 016"), line: 12, .badKeySize("016")),
        BadInput("too many bonds", header + (0...BondFile.maximumBondCount).map {
            "peer \(BluetoothAddress(UInt64($0))) public\n" + bondBody
        }.joined() + "end\n", line: 2 + 4 * BondFile.maximumBondCount + 1, .tooManyBonds(limit: BondFile.maximumBondCount)),
    ]

    @Test(arguments: badInputs)
    func refuses(_ input: BadInput) throws {
        let error = try #require(Self.error(input.bytes), "\(input.name) decoded")
        #expect(error.problem == input.problem, "\(error)")
        #expect(error.line == input.line, "\(error)")
        // One line a person can act on, that says where.
        #expect(!error.description.contains("\n") && !error.description.contains("\r"))
        #expect(error.description.hasPrefix(input.line.map { "line \($0): " } ?? ""))
        #expect(error.description.count < 300, "\(error.description)")
    }

    @Test func aNewerVersionSaysSo() throws {
        let error = try #require(Self.error(Array("rawble bonds 7\nwhatever a later rawble writes\n".utf8)))
        #expect(error.description == "line 1: written by a newer rawble (format version 7; this one reads version 1): use that rawble or a newer one")
    }

    @Test func hostileTextIsQuotedOnOneShortLine() throws {
        let error = try #require(Self.error(Array((Self.header + "peer\t\u{1B}[2J\r" + String(repeating: "x", count: 5000) + " random\n").utf8)))
        #expect(error.problem == .badAddress("\u{1B}[2J\r" + String(repeating: "x", count: 5000)))
        #expect(error.description == #"line 3: "\u{1B}[2J\r"# + String(repeating: "x", count: 35) + #"…" is not an address written AA:BB:CC:DD:EE:FF"#)
    }

    // MARK: What it refuses to write

    @Test func refusesToWriteWhatItCouldNotRead() {
        func problem(_ bonds: [Bond], local: DeviceAddress = Self.local) -> BondFileError.Problem? {
            do {
                _ = try BondFile(localIdentity: local, bonds: bonds).encoded()
                return nil
            } catch {
                #expect(error.line == nil)
                return error.problem
            }
        }
        var small = Self.secure
        small.keySize = 6
        #expect(problem([small]) == .unstorableKeySize(6, peer: Self.peer))
        var anonymous = Self.secure
        anonymous.peer.type = .anonymous
        #expect(problem([anonymous]) == .unstorableAddressType(anonymous.peer))
        #expect(problem([], local: DeviceAddress(BluetoothAddress(1), type: .other(7)))
            == .unstorableAddressType(DeviceAddress(BluetoothAddress(1), type: .other(7))))
        #expect(problem([Self.secure, Self.kinds[1], Self.secure]) == .duplicatePeer(Self.peer, firstLine: nil))
        let many = (0...BondFile.maximumBondCount).map { index in
            Bond(peer: DeviceAddress(BluetoothAddress(UInt64(index)), type: .public), centralKey: nil, peripheralKey: nil,
                 authenticated: false, secureConnections: false, keySize: 16)
        }
        #expect(problem(many) == .tooManyBonds(limit: BondFile.maximumBondCount))
        #expect(problem(Array(many.dropLast())) == nil)
    }
}
