import Foundation
import RawbleTestSupport
import Testing

/// Every class of failure the CLI reports (see `rawble --help`): exactly one non-empty line on
/// stderr, by default, and the class's exit status. With `-v` or `RAWBLE_LOG` more may come.
@Suite("One stderr line and the class's status for each failure")
struct ExitStatusTests {
    /// Fails unless `result` ended with `status` and stderr is exactly one non-empty line.
    static func expectOneLine(_ result: CLIResult, status: Int32, containing text: String? = nil,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!result.killedBySignal, sourceLocation: sourceLocation)
        #expect(result.status == status, "stderr: \(result.stderr)", sourceLocation: sourceLocation)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines.last == "" && lines.first?.hasPrefix("rawble: ") == true,
                "not exactly one line: \(result.stderr)", sourceLocation: sourceLocation)
        if let text {
            #expect(result.stderr.contains(text), "\(result.stderr)", sourceLocation: sourceLocation)
        }
    }

    /// A path no test creates.
    static func missingPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("rawble-missing-\(UUID().uuidString)").path
    }

    @Test("64 usage: a bad RAWBLE_LOG")
    func usage() async throws {
        Self.expectOneLine(try await CLI.run(["decode", "hrm", "0648"], environment: ["RAWBLE_LOG": "loud"]),
                           status: 64, containing: "RAWBLE_LOG")
    }

    @Test("74 transport: nothing listens; the controller hangs up in the middle of a command")
    func transport() async throws {
        Self.expectOneLine(try await CLI.run(["gatt", "AA:BB:CC:DD:EE:FF", "--transport", "unix:" + Self.missingPath()]),
                           status: 74, containing: "nothing listens")
        let controller = try UnixSocketController(.hangUpOnATT)
        defer { controller.stop() }
        let result = try await CLI.run(["read", UnixSocketController.peer, "0x0003", "--address-type", "random",
                                        "--timeout", "5", "--transport", controller.transport])
        Self.expectOneLine(result, status: 74)
    }

    @Test("75 timeout: a peer that stops answering ATT requests is one line, no log record before it")
    func timeout() async throws {
        let controller = try UnixSocketController(.silentPeer)
        defer { controller.stop() }
        let result = try await CLI.run(["read", UnixSocketController.peer, "0x0003", "--address-type", "random",
                                        "--timeout", "1", "--transport", controller.transport])
        Self.expectOneLine(result, status: 75, containing: "no response")
    }

    @Test("with -v or RAWBLE_LOG the same timeout also logs, live, before the error line")
    func timeoutVerbose() async throws {
        let controller = try UnixSocketController(.silentPeer)
        defer { controller.stop() }
        let arguments = ["read", UnixSocketController.peer, "0x0003", "--address-type", "random",
                         "--timeout", "1", "--transport", controller.transport]
        for result in [try await CLI.run(arguments + ["-v"]),
                       try await CLI.run(arguments, environment: ["RAWBLE_LOG": "warning"])] {
            #expect(result.status == 75)
            #expect(result.stderrLines.contains { $0.contains("warning rawble.att") && $0.contains("closing the ATT bearer") },
                    "\(result.stderr)")
            #expect(result.stderrLines.last?.hasPrefix("rawble: ") == true, "\(result.stderr)")
        }
    }

    @Test("a warning in a command that ends well is shown once, after the command's work, not as it happens")
    func warningAfterSuccess() async throws {
        let controller = try UnixSocketController(.strayCommandComplete)
        defer { controller.stop() }
        let result = try await CLI.run(["scan", "--duration", "1", "--json", "--transport", controller.transport])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        // One line however often it was logged (counted when more than once).
        #expect(result.stderrLines.count == 1, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("rawble: warning: controller answered a command that is not pending"), "\(result.stderr)")
    }
}
