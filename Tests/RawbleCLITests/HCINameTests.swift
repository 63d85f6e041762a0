import Foundation
import RawbleWire
import Testing

/// `rawble decode btsnoop` names every HCI command, event and LE subevent of two public captures
/// (an Android phone's and a Linux host's, recorded on real hardware by other people) as tshark
/// does, and `opcode` is a number in every JSON line.
///
/// The captures are not in the repository (their licence is unknown). `Fixtures/tshark-hci-names.tsv`
/// holds tshark's name for each code they contain, written by `Scripts/tshark-hci-names` (its
/// header says how), so these tests need neither the captures nor tshark: a capture built here
/// with one packet per code stands in for them. `RAWBLE_PUBLIC_CAPTURES`, naming the directory
/// that holds the phone's capture (`android-hidrate-btsnoop_hci.log`), also runs the real one.
@Suite("HCI names against tshark")
struct HCINameTests {
    enum Kind: String {
        case command, event, subevent
    }

    /// One row of the fixture: a code the captures hold and tshark's name for it.
    struct Entry: CustomStringConvertible {
        var kind: Kind
        var code: UInt16
        var tsharkName: String

        /// `command 0x0C33`, `event 0x05`: the key of ``HCINameTests/differences``.
        var description: String {
            "\(kind.rawValue) 0x" + String(code, radix: 16, uppercase: true).leftPadded(kind == .command ? 4 : 2)
        }
    }

    static let fixture = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .appendingPathComponent("Fixtures")
        .appendingPathComponent("tshark-hci-names.tsv")

    /// Where rawble's name, the specification's (Core 5.4 Vol 4 Part E 7), is not tshark's
    /// (Wireshark 4.0.17), and why. Every other code must be named exactly as tshark names it.
    static let differences: [String: (rawble: String, tshark: String, reason: String)] = {
        let vendor = (rawble: "Vendor Specific", tshark: "Unknown",
                      reason: "OGF 0x3F is the specification's vendor-specific group; tshark names no opcode in it")
        return [
            "command 0x0C13": ("Write Local Name", "Change Local Name", "tshark keeps the Core 1.1 name"),
            "command 0x0C24": ("Write Class Of Device", "Write Class of Device",
                               "the specification capitalizes Of (HCI_Write_Class_Of_Device)"),
            "command 0x0C6D": ("Write LE Host Support", "Write LE Host Supported",
                               "the specification's name is HCI_Write_LE_Host_Support"),
            "command 0x1009": ("Read BD_ADDR", "Read BD ADDR", "the specification writes BD_ADDR"),
            "command 0x2002": ("LE Read Buffer Size", "LE Read Buffer Size [v1]",
                               "rawble marks only later versions (LE Read Buffer Size v2)"),
            "command 0x200F": ("LE Read Filter Accept List Size", "LE Read White List Size",
                               "Core 5.3 renamed the white list the filter accept list"),
            "command 0x2011": ("LE Add Device To Filter Accept List", "LE Add Device To White List",
                               "Core 5.3 renamed the white list the filter accept list"),
            "command 0xFD53": vendor,
            "command 0xFD57": vendor,
            "command 0xFD7D": vendor,
            "command 0xFFFF": vendor,
            "event 0x05": ("Disconnection Complete", "Disconnect Complete",
                           "the specification's name is HCI_Disconnection_Complete"),
            "event 0x13": ("Number Of Completed Packets", "Number of Completed Packets",
                           "the specification capitalizes Of (HCI_Number_Of_Completed_Packets)"),
        ]
    }()

    static func entries() throws -> [Entry] {
        let text = try String(contentsOf: fixture, encoding: .utf8)
        var entries: [Entry] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.hasPrefix("kind\t") {
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            try #require(columns.count == 3, "fixture line: \(line)")
            let kind = try #require(Kind(rawValue: columns[0]), "fixture line: \(line)")
            let code = try #require(UInt16(columns[1].dropFirst(2), radix: 16), "fixture line: \(line)")
            entries.append(Entry(kind: kind, code: code, tsharkName: columns[2]))
        }
        return entries
    }

    /// rawble's own name for the entry's code, from the tables the decoders use.
    static func rawbleName(_ entry: Entry) -> String? {
        switch entry.kind {
        case .command: HCIOpcode(entry.code).name
        case .event: HCIEvent.name(ofCode: UInt8(truncatingIfNeeded: entry.code))
        case .subevent: LEMetaEvent.name(ofSubevent: UInt8(truncatingIfNeeded: entry.code))
        }
    }

    /// The name `decode btsnoop` must print for the entry: tshark's, or the listed difference.
    static func expectedName(_ entry: Entry) -> String {
        differences[entry.description]?.rawble ?? entry.tsharkName
    }

    @Test func everyCodeIsNamedAsTsharkNamesIt() throws {
        let entries = try Self.entries()
        #expect(entries.count == 57, "the fixture lists the captures' 57 distinct codes")
        for entry in entries {
            let name = Self.rawbleName(entry)
            #expect(name != nil, "\(entry) (\(entry.tsharkName)) has no name")
            if let difference = Self.differences[entry.description] {
                #expect(entry.tsharkName == difference.tshark, "\(entry): tshark's name changed; update the difference")
                #expect(name == difference.rawble, "\(entry): \(difference.reason)")
            } else {
                #expect(name == entry.tsharkName, "\(entry)")
            }
        }
        let listed = Set(entries.map(\.description))
        #expect(Set(Self.differences.keys).subtracting(listed).isEmpty, "a difference for a code the fixture does not list")
    }

    // MARK: decode btsnoop

    /// What one record of the stand-in capture must print: `field` (`name`, or `command` for the
    /// command a Command Complete or Command Status answers) equal to `name`.
    struct Expectation {
        var record: Int
        var field: String
        var name: String
    }

    /// The shortest parameter block that `decodes` accepts: zeros, or 1 then zeros (a count of
    /// reports); `nil` when none of up to 255 bytes does.
    static func parameters(_ decodes: ([UInt8]) -> Bool) -> [UInt8]? {
        for length in 0...255 {
            let zeros = [UInt8](repeating: 0, count: length)
            if decodes(zeros) { return zeros }
            if length > 0, decodes([1] + zeros.dropFirst()) { return [1] + zeros.dropFirst() }
        }
        return nil
    }

    /// A capture with, per code of the fixture: for a command, the command, a Command Status and a
    /// Command Complete (status Command Disallowed, which every command may return) answering it;
    /// for an event or LE subevent, that event. Each packet's parameters are the shortest block
    /// that decodes, so every record decodes and shows the name under test.
    static func standInCapture(_ entries: [Entry]) throws -> (records: [BtsnoopRecord], expectations: [Expectation]) {
        var packets: [(H4Packet, BtsnoopRecord.Direction)] = []
        var expectations: [Expectation] = []
        func add(_ type: H4PacketType, _ bytes: [UInt8], _ direction: BtsnoopRecord.Direction, expect: [(String, String)]) {
            packets.append((H4Packet(type: type, bytes: bytes), direction))
            for (field, name) in expect { expectations.append(Expectation(record: packets.count, field: field, name: name)) }
        }
        for entry in entries {
            let name = expectedName(entry)
            switch entry.kind {
            case .command:
                let opcode = HCIOpcode(entry.code)
                let block = try #require(parameters { (try? HCICommand.decode(opcode: opcode, parameters: $0[...])) != nil },
                                         "no parameters decode for \(entry)")
                let low = UInt8(truncatingIfNeeded: entry.code), high = UInt8(truncatingIfNeeded: entry.code >> 8)
                add(.command, [low, high, UInt8(block.count)] + block, .sent, expect: [("name", name)])
                add(.event, [0x0F, 4, 0x00, 1, low, high], .received, expect: [("name", "Command Status"), ("command", name)])
                add(.event, [0x0E, 4, 1, low, high, 0x0C], .received, expect: [("name", "Command Complete"), ("command", name)])
            case .event:
                // LE Meta's records are named by their subevent; those come next.
                guard entry.code != 0x3E else { continue }
                let code = UInt8(truncatingIfNeeded: entry.code)
                let block = try #require(parameters { (try? HCIEvent.decode(code: code, parameters: $0[...])) != nil },
                                         "no parameters decode for \(entry)")
                add(.event, [code, UInt8(block.count)] + block, .received, expect: [("name", name)])
            case .subevent:
                let subevent = UInt8(truncatingIfNeeded: entry.code)
                let block = try #require(
                    parameters { (try? HCIEvent.decode(code: 0x3E, parameters: ([subevent] + $0)[...])) != nil },
                    "no parameters decode for \(entry)")
                add(.event, [0x3E, UInt8(block.count + 1), subevent] + block, .received, expect: [("name", name)])
            }
        }
        let base: Int64 = 1_763_800_000_000_000
        let records = packets.enumerated().map { index, packet in
            BtsnoopRecord(packet: packet.0, direction: packet.1, unixMicroseconds: base + Int64(index) * 1_000)
        }
        return (records, expectations)
    }

    /// The values of every `opcode` key in a JSON line, at any depth, as written: the text right
    /// after `"opcode":`. (Foundation's parser would read `1` and `true` alike.)
    static func opcodeTexts(in line: String) -> [Substring] {
        line.components(separatedBy: "\"opcode\":").dropFirst().map { $0.prefix { $0 != "," && $0 != "}" } }
    }

    /// Every line of `decode btsnoop --json`, after checking that each `opcode` in it is a number.
    static func decode(_ path: String) async throws -> [[String: Any]] {
        let result = try await CLI.run(["decode", "btsnoop", path, "--json"])
        #expect(!result.killedBySignal)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.isEmpty, "stderr: \(result.stderr)")
        for line in result.stdoutLines {
            for opcode in opcodeTexts(in: line) where Int(opcode) == nil {
                Issue.record("opcode \(opcode) is not a number: \(line)")
            }
        }
        return try result.stdoutLines.map(CLI.jsonObject)
    }

    /// Every command, event and subevent printed with its name.
    static func expectEveryPacketNamed(_ lines: [[String: Any]]) {
        for line in lines {
            let index = line["index"] as? Int ?? 0
            switch line["type"] as? String {
            case "command":
                let name = line["name"] as? String ?? ""
                #expect(!name.isEmpty && !name.hasPrefix("0x"), "record \(index): command without a name: \(name)")
            case "event":
                let name = line["name"] as? String ?? ""
                #expect(!name.isEmpty && !name.contains("Unknown"), "record \(index): event without a name: \(name)")
                if let command = line["command"] as? String {
                    #expect(!command.hasPrefix("0x"), "record \(index): \(name) for a command without a name: \(command)")
                }
            default:
                break
            }
        }
    }

    @Test func everyCodeOfTheCapturesDecodesWithItsName() async throws {
        let (records, expectations) = try Self.standInCapture(try Self.entries())
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("rawble-hci-names-\(UUID().uuidString).btsnoop").path
        try Data(BtsnoopWriter.file(records: records)).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let lines = try await Self.decode(path)
        try #require(lines.count == records.count, "one line per record")
        for line in lines { #expect(line["error"] == nil, "\(line)") }
        for expectation in expectations {
            let line = lines[expectation.record - 1]
            #expect(line[expectation.field] as? String == expectation.name, "record \(expectation.record): \(line)")
        }
        Self.expectEveryPacketNamed(lines)
    }

    @Test func theExampleCaptureNamesEveryPacket() async throws {
        Self.expectEveryPacketNamed(try await Self.decode(ExampleCaptureTests.capture.path))
    }

    /// A command this stack does not model: its opcode a number, its name, and its parameters in
    /// hex under `parameterBytes` (once they came as `parameters: {"opcode": "0x0C33", …}`).
    @Test func anUndecodedCommandKeepsItsParametersAsBytes() async throws {
        let result = try await CLI.run(["decode", "hci", "01330c079b06ff14000a00", "040e0401330c00", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let command = try CLI.jsonObject(try #require(result.stdoutLines.first))
        #expect(command["opcode"] as? Int == 0x0C33, "\(command)")
        #expect(command["name"] as? String == "Host Buffer Size")
        #expect(command["parameterBytes"] as? String == "9b06ff14000a00")
        #expect(command["parameters"] == nil)
        let complete = try CLI.jsonObject(try #require(result.stdoutLines.last))
        #expect(complete["opcode"] as? Int == 0x0C33, "\(complete)")
        #expect(complete["command"] as? String == "Host Buffer Size")
        #expect(complete["status"] as? String == "Success (0x00)")
        #expect(complete["returnParameterBytes"] as? String == "00")
        #expect(complete["returnParameters"] == nil)
    }

    /// The real phone capture, when `RAWBLE_PUBLIC_CAPTURES` names the directory holding it.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["RAWBLE_PUBLIC_CAPTURES"] != nil,
                   "RAWBLE_PUBLIC_CAPTURES names the directory of the public captures"))
    func thePhoneCaptureAsTsharkNamesIt() async throws {
        let directory = try #require(ProcessInfo.processInfo.environment["RAWBLE_PUBLIC_CAPTURES"])
        var expected: [String: String] = [:]
        for entry in try Self.entries() { expected[entry.description] = Self.expectedName(entry) }
        func key(_ kind: Kind, _ code: Any?) -> String {
            guard let code = code as? Int else { return "\(kind.rawValue) without a code" }
            return Entry(kind: kind, code: UInt16(truncatingIfNeeded: code), tsharkName: "").description
        }
        let lines = try await Self.decode(directory + "/android-hidrate-btsnoop_hci.log")
        #expect(lines.count == 3046)
        Self.expectEveryPacketNamed(lines)
        for line in lines {
            let name = line["name"] as? String
            switch line["type"] as? String {
            case "command":
                #expect(name == expected[key(.command, line["opcode"])], "\(line)")
            case "event":
                let code = line["code"] as? Int
                if code == 0x3E {
                    #expect(name == expected[key(.subevent, line["subevent"])], "\(line)")
                } else {
                    #expect(name == expected[key(.event, code)], "\(line)")
                }
                if let command = line["command"] as? String {
                    #expect(command == expected[key(.command, line["opcode"])], "\(line)")
                }
            default:
                break
            }
        }
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
