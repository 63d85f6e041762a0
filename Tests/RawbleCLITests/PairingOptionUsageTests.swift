import RawbleTestSupport
import Testing

/// Pairing options that cannot take effect are usage errors (64, one line naming the option and
/// the fix), never silently ignored: a passkey with nothing that types it (today's
/// `pair ADDR --passkey 123456` would pair Just Works), a comparison answer with no comparison.
/// No peer needed: the arguments are refused before anything opens.
@Suite("Pairing options that cannot take effect: usage errors")
struct PairingOptionUsageTests {
    static let address = "C0:B1:E0:00:00:01"

    @Test("--passkey without an --io that types, --confirm without an --io that compares: 64, one line",
          arguments: [
            (["pair", address, "--passkey", "123456"], "--passkey"),
            (["pair", address, "--io", "display", "--passkey", "123456"], "--passkey"),
            (["pair", address, "--io", "yesno", "--passkey", "123456"], "--passkey"),
            (["pair", address, "--confirm"], "--confirm"),
            (["pair", address, "--io", "keyboard", "--confirm"], "--confirm"),
            (["read", address, "2A19", "--passkey", "1"], "--passkey"),
            (["peripheral", "hr", "--io", "display", "--passkey", "123456"], "--passkey"),
          ])
    func refused(arguments: [String], option: String) async throws {
        let result = try await CLI.run(arguments)
        ExitStatusTests.expectOneLine(result, status: 64, containing: option)
        #expect(result.stderr.contains("add --io"), "the line names the fix: \(result.stderr)")
    }

    @Test("the same options where they take effect pass the usage check (then stop at the kernel path's refusal, 69)",
          arguments: [
            ["pair", address, "--io", "keyboard", "--passkey", "123456", "--transport", "hci0"],
            ["pair", address, "--io", "keyboard-display", "--passkey", "123456", "--confirm", "--transport", "hci0"],
            ["pair", address, "--io", "yesno", "--confirm", "--legacy", "--transport", "hci0"],
          ])
    func accepted(arguments: [String]) async throws {
        let result = try await CLI.run(arguments)
        ExitStatusTests.expectOneLine(result, status: 69, containing: "bluetoothctl")
    }
}
