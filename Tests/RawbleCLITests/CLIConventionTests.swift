import Foundation
import Testing

/// The conventions every command shares (../shared notes cli.md): one-line errors on stderr,
/// distinct exit statuses below 128, never death by a signal.
@Suite("CLI conventions")
struct CLIConventionTests {
    @Test func helpListsEveryCommand() async throws {
        let result = try await CLI.run(["--help"])
        #expect(result.status == 0)
        for command in ["decode", "scan", "gatt", "read", "write", "notify", "shell", "hr", "pair", "bonds"] {
            #expect(result.stdout.contains(command), "help lacks \(command)")
        }
    }

    /// The top-level help teaches what every command shares: the options, the environment, a
    /// strap when none is at hand (rawble's own, which the package ships: not the checkout's
    /// Scripts/sim-strap, which it does not), completions; every command's own help shows
    /// examples of it.
    @Test func helpTeaches() async throws {
        let top = try await CLI.run(["--help"])
        for text in ["--transport", "--btsnoop", "--trace", "--timeout", "--json", "RAWBLE_TRANSPORT", "RAWBLE_LOG",
                     "rawble peripheral hr", "--generate-completion-script"] {
            #expect(top.stdout.contains(text), "rawble --help lacks \(text)")
        }
        #expect(!top.stdout.contains("Scripts/"), "rawble --help names a script the package does not ship")
        let commands: [[String]] = [["adapters"], ["decode"], ["decode", "value"], ["scan"], ["gatt"], ["read"], ["write"], ["notify"], ["shell"], ["hr"],
                                    ["report"], ["peripheral"], ["peripheral", "hr"], ["peripheral", "echo"], ["pair"], ["bonds"],
                                    ["bonds", "list"], ["bonds", "remove"]]
        for command in commands {
            let help = try await CLI.run(command + ["--help"])
            #expect(help.status == 0)
            #expect(help.stdout.contains("Examples:\n") && help.stdout.contains("rawble \(command.joined(separator: " "))"),
                    "rawble \(command.joined(separator: " ")) --help has no example of itself")
        }
    }

    @Test func badAddressIsAOneLineUsageError() async throws {
        let result = try await CLI.run(["read", "11:22", "180D"])
        #expect(result.status == 64)
        #expect(result.stderrLines.count == 1)
        #expect(result.stderr.contains("11:22"))
        #expect(result.stdout.isEmpty)
    }

    @Test func handleZeroIsNotATarget() async throws {
        let result = try await CLI.run(["read", "11:22:33:44:55:66", "0x0000"])
        #expect(result.status == 64)
        #expect(result.stderrLines.count == 1)
    }

    @Test func unknownCommandIsAUsageError() async throws {
        let result = try await CLI.run(["frobnicate"])
        #expect(result.status == 64)
        #expect(result.stderrLines.count == 1)
    }

    @Test func badTransportInEnvironmentNamesTheVariable() async throws {
        let result = try await CLI.run(["scan", "--duration", "1"], environment: ["RAWBLE_TRANSPORT": "bluetooth!"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("RAWBLE_TRANSPORT"))
        #expect(result.stderrLines.count == 1)
    }

    @Test(arguments: ["tcp:127.0.0.1", "tcp::9000", "user:eth0", "serial:", "hciX", "unix:"])
    func malformedTransportIsRejected(spec: String) async throws {
        let result = try await CLI.run(["scan", "--transport", spec])
        #expect(result.status == 64)
        #expect(result.stderrLines.count == 1)
    }

    /// Commands that open a transport fail in one line with the status of the cause when there
    /// is none (nothing listening, no such device, a kernel transport not in this version).
    @Test(arguments: [
        (["gatt", "AA:BB:CC:DD:EE:FF", "--transport", "unix:/tmp/rawble-nothing-here"], 74),
        (["read", "AA:BB:CC:DD:EE:FF", "2A37", "--transport", "serial:/dev/ttyUSB0:1000000"], 66),
        (["write", "AA:BB:CC:DD:EE:FF", "0x001D", "01", "--transport", "user:hci0"], 69),
        (["notify", "AA:BB:CC:DD:EE:FF", "2A37", "--count", "3", "--transport", "hci1"], 69),
        (["hr", "--count", "1", "--transport", "unix:/tmp/rawble-nothing-here"], 74),
    ] as [([String], Int32)])
    func commandsWithoutAControllerFailClearly(arguments: [String], status: Int32) async throws {
        let result = try await CLI.run(arguments)
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stderrLines.count == 1)
        #expect(!result.killedBySignal)
    }

    @Test func globalOptionsAreAcceptedBeforeTheSubcommand() async throws {
        let before = try await CLI.run(["--json", "--transport", "tcp:127.0.0.1:9000", "scan"])
        let after = try await CLI.run(["scan", "--json", "--transport", "tcp:127.0.0.1:9000"])
        #expect(before.status == after.status)
        #expect(before.stderr == after.stderr)
    }
}
