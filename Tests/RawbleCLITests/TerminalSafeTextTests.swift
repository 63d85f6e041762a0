@testable import rawble
import Testing

/// What a peer names itself reaches lines for a person and JSON events: none of its control
/// characters may reach the terminal (issue 41, a strap named with escape sequences).
@Suite("A peer's text on the terminal")
struct TerminalSafeTextTests {
    @Test("a line: C0 (but newline and tab), DEL and C1 written as \\u{XX}; other text, emoji and accents kept as they are")
    func lines() {
        let hostile = "\u{1B}[2J\u{1B}]0;pwn\u{07}ev\u{9B}il\r\n"
        #expect(Output.terminalSafe(hostile) == #"\u{1B}[2J\u{1B}]0;pwn\u{07}ev\u{9B}il\u{0D}"# + "\n")
        #expect(Output.terminalSafe("a\u{7F}b\u{00}c\u{85}") == #"a\u{7F}b\u{00}c\u{85}"#)
        for kept in ["rawble-strap-01: ♥ 63 bpm", "Pulsgurt © Müller ½", "a\tb\nc", "心拍計 🫀", ""] {
            #expect(Output.terminalSafe(kept) == kept)
        }
    }

    @Test("a JSON string: C0, DEL and C1 escaped as \\u00XX, so `--json` on a terminal is as safe as a line")
    func json() {
        let value = JSON.object([("name", .string("ev\u{9B}il\u{1B}[2J\u{7F}é"))])
        #expect(value.serialized() == #"{"name":"ev\u009bil\u001b[2J\u007fé"}"#)
    }

    @Test("a value's hex in a line: whole up to 32 bytes, else the first 32, `…` and its length")
    func hexPreview() {
        #expect(HeartRateSession.hexPreview([0x10, 0x48]) == "1048")
        #expect(HeartRateSession.hexPreview(Array(repeating: 0xAB, count: 32)) == String(repeating: "ab", count: 32))
        let long = HeartRateSession.hexPreview([0x16] + Array(repeating: 0, count: 599))
        #expect(long == "16" + String(repeating: "00", count: 31) + "… (600 bytes)")
    }

    @Test("a once flag: true for its first caller only")
    func onceFlag() {
        let flag = OnceFlag()
        #expect(flag.first())
        #expect(!flag.first() && !flag.first())
    }
}
