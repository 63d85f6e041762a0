import Foundation
import RawbleTestSupport
import Testing

/// What a new user typed wrong, or typed as other tools write it, and what rawble answers: one
/// line that says why and what would be right (issue 14's list), or the value taken as meant.
@Suite("Usage: values taken as written, and errors that say why")
struct UsageMessageTests {
    static func expectUsage(_ arguments: [String], containing texts: String...,
                            sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let result = try await CLI.run(arguments)
        ExitStatusTests.expectOneLine(result, status: 64, sourceLocation: sourceLocation)
        for text in texts {
            #expect(result.stderr.contains(text), "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        }
    }

    @Test("a bad --transport says what was wrong and what to write (RawbleStack's parse error); a bad RAWBLE_TRANSPORT too")
    func badTransport() async throws {
        try await Self.expectUsage(["scan", "--transport", "tcp:localhost"], containing: "tcp:localhost has no port", "tcp:HOST:PORT")
        try await Self.expectUsage(["scan", "--transport", "bluetooth"], containing: "bluetooth is not a kind of transport",
                                   "hciN, user:hciN, tcp:HOST:PORT, unix:PATH or serial:PATH[:BAUD]")
        try await Self.expectUsage(["gatt", "AA:BB:CC:DD:EE:FF", "--transport", "user:hci"], containing: "hci is not an adapter")
        let environment = try await CLI.run(["scan", "--duration", "1"], environment: ["RAWBLE_TRANSPORT": "bogus"])
        ExitStatusTests.expectOneLine(environment, status: 64, containing: "RAWBLE_TRANSPORT=bogus is not a transport")
    }

    @Test("decode with a kind that does not exist names the kinds there are; decode alone shows its help")
    func decodeUnknownKind() async throws {
        try await Self.expectUsage(["decode", "foo", "00"], containing: "decode has no kind 'foo'", "hrm, adv, hci, att, value, btsnoop")
        let help = try await CLI.run(["decode"])
        #expect(help.status == 0, "\(help.stderr)")
        #expect(help.stdout.contains("SUBCOMMANDS"), "\(help.stdout)")
    }

    @Test("decode hrm/att/hci: one value per argument, single bytes as one value, a bad value named by position")
    func decodeSeveralValues() async throws {
        let two = try await CLI.run(["decode", "hrm", "10480004", "16500008"])
        #expect(two.status == 0, "\(two.stderr)")
        #expect(two.stdoutLines.count == 2, "\(two.stdout)")
        #expect(two.stdoutLines.first?.contains("72 bpm") == true && two.stdoutLines.last?.contains("80 bpm") == true, "\(two.stdout)")
        #expect(two.stdoutLines.first?.contains("1000.0 ms") == true, "\(two.stdout)")
        let json = try await CLI.run(["decode", "hrm", "10480004", "16500008", "--json"])
        #expect(try json.stdoutLines.map(CLI.jsonObject).compactMap { $0["bpm"] as? Int } == [72, 80], "\(json.stdout)")
        let bytes = try await CLI.run(["decode", "hrm", "10", "48", "00", "04"])
        #expect(bytes.status == 0 && bytes.stdoutLines.count == 1, "\(bytes.stdout)\(bytes.stderr)")
        #expect(bytes.stdout.contains("72 bpm") && bytes.stdout.contains("1000.0 ms"), "\(bytes.stdout)")
        let att = try await CLI.run(["decode", "att", "1b0f00065a", "0a0300"])
        #expect(att.status == 0, "\(att.stderr)")
        #expect(att.stdout.contains("Handle Value Notification") && att.stdout.contains("Read Request"), "\(att.stdout)")
        // The first value printed, then the second named in the error.
        let bad = try await CLI.run(["decode", "hrm", "10480004", "1e6d08"])
        ExitStatusTests.expectOneLine(bad, status: 65, containing: "value 2 (1e6d08)")
        #expect(bad.stdoutLines.count == 1, "\(bad.stdout)")
        ExitStatusTests.expectOneLine(try await CLI.run(["decode", "hrm", "10480004", "zz"]), status: 65, containing: "value 2 (zz): bad hex")
    }

    @Test("a UUID as the Assigned Numbers write it (0x180D) is taken by --service; a bad one says what a UUID is")
    func serviceUUIDs() async throws {
        // Taken: the command goes on to the transport, which is not there.
        let missing = ExitStatusTests.missingPath()
        let result = try await CLI.run(["scan", "--service", "0x180D", "--duration", "1", "--transport", "unix:\(missing)"])
        ExitStatusTests.expectOneLine(result, status: 74, containing: "nothing listens")
        // …and the hint names the simulated strap users are told to start.
        #expect(result.stderr.contains("Scripts/sim-strap"), "\(result.stderr)")
        try await Self.expectUsage(["scan", "--service", "18", "--transport", "unix:\(missing)"], containing: "a UUID is 16-bit")
    }

    @Test("a target, an address or a number that is not one says why")
    func invalidValuesSayWhy() async throws {
        let address = "11:22:33:44:55:66"
        try await Self.expectUsage(["read", address, "2A3"], containing: "neither a handle (0x001D) nor a UUID")
        try await Self.expectUsage(["read", address, "0x0"], containing: "a handle is 0x0001 to 0xFFFF")
        try await Self.expectUsage(["read", "11:22", "180D"], containing: "an address is six bytes")
        try await Self.expectUsage(["scan", "--address", "11:22"], containing: "an address is six bytes")
    }

    @Test("a value argument-parser refuses is said in rawble's words: the value and what it was for, then why")
    func parserMessagesReworded() async throws {
        let address = "11:22:33:44:55:66"
        let cases: [([String], String)] = [
            (["read", address, "2A3"], "rawble: 2A3 is not a target: neither a handle"),
            (["read", "11:22", "180D"], "rawble: 11:22 is not an address: an address is six bytes"),
            (["hr", "--count", "abc"], "rawble: --count abc: not a value --count takes"),
            (["scan", "--duration"], "rawble: --duration needs a value"),
            (["read", address], "rawble: no target given"),
        ]
        for (arguments, text) in cases {
            let result = try await CLI.run(arguments)
            ExitStatusTests.expectOneLine(result, status: 64, containing: text)
            #expect(!result.stderr.contains("The value") && !result.stderr.contains("<"), "\(arguments): \(result.stderr)")
        }
    }

    @Test("a negative number is a bad value, not a missing one")
    func negativeNumbers() async throws {
        let transport = "unix:\(ExitStatusTests.missingPath())"
        try await Self.expectUsage(["hr", "--count", "-1", "--transport", transport], containing: "--count must be at least 1")
        try await Self.expectUsage(["notify", "11:22:33:44:55:66", "2A37", "--count", "-3", "--transport", transport],
                                   containing: "--count must be at least 1")
        try await Self.expectUsage(["read", "11:22:33:44:55:66", "2A37", "--timeout", "-5", "--transport", transport],
                                   containing: "--timeout must be a positive number")
        try await Self.expectUsage(["scan", "--duration", "-1", "--transport", transport], containing: "--duration must be a positive number")
    }

    @Test("a mistyped command or decode kind: did you mean the one a letter away; far from all, the list")
    func didYouMean() async throws {
        let command = try await CLI.run(["sacn", "--duration", "1"])
        ExitStatusTests.expectOneLine(command, status: 64)
        #expect(command.stderr == "rawble: no command 'sacn': did you mean 'scan'? (rawble --help lists them)\n", "\(command.stderr)")
        try await Self.expectUsage(["notfiy", "C0:B1:E0:00:00:01", "2A37"], containing: "did you mean 'notify'?")
        try await Self.expectUsage(["xyzzy"], containing: "no command 'xyzzy': name one of adapters, decode, scan")
        try await Self.expectUsage(["decode", "hmr", "065a"], containing: "decode has no kind 'hmr': did you mean 'hrm'?")
    }
}
