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
        // The lines saying what was awaited (a wait that lasted 2 s) may come before it.
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).filter { !CLIResult.isWaitLine($0) }
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

    @Test("64 usage: a bad argument, an unknown command, a bad RAWBLE_LOG, --include-keys with nothing to keep them in")
    func usage() async throws {
        Self.expectOneLine(try await CLI.run(["read", "11:22", "180D"]), status: 64)
        Self.expectOneLine(try await CLI.run(["frobnicate"]), status: 64)
        Self.expectOneLine(try await CLI.run(["decode", "hrm", "0648"], environment: ["RAWBLE_LOG": "loud"]),
                           status: 64, containing: "RAWBLE_LOG")
        Self.expectOneLine(try await CLI.run(["scan", "--include-keys", "--transport", "unix:" + Self.missingPath()]),
                           status: 64, containing: "--include-keys keeps the keys in --btsnoop and --trace")
    }

    /// Without /proc Swift's runtime found no argument (it reads /proc/self/cmdline), so every
    /// command printed the top-level help and exited 0; and libdispatch's thread pool traps
    /// when it cannot read /proc/TID/stat. Run in a mount namespace whose /proc is an empty
    /// tmpfs (a user namespace of its own when not root).
    @Test("71 system: without /proc, one line saying to mount it, for any command, not the help and 0",
          arguments: [["decode", "hrm", "065a"], ["scan", "--duration", "1"], []])
    func withoutProc(arguments: [String]) async throws {
        let namespace = ["/usr/bin/unshare", "--mount"] + (getuid() == 0 ? [] : ["--map-root-user"])
        let launcher = namespace + ["sh", "-c", #"mount -t tmpfs none /proc && exec "$@""#, "sh"]
        let result = try await CLI.run(arguments, launcher: launcher)
        Self.expectOneLine(result, status: 71, containing: "/proc is not mounted")
        #expect(result.stderr.contains("mount -t proc proc /proc"), "\(result.stderr)")
        #expect(result.stdout.isEmpty, "\(result.stdout)")
    }

    @Test("64 usage: a --timeout or --duration too large to be a Duration is refused, not a trap")
    func hugeDurations() async throws {
        Self.expectOneLine(try await CLI.run(["read", "11:22:33:44:55:66", "180D", "--timeout", "1e300",
                                              "--transport", "unix:\(Self.missingPath())"]),
                           status: 64, containing: "--timeout")
        Self.expectOneLine(try await CLI.run(["scan", "--duration", "1e300", "--transport", "unix:\(Self.missingPath())"]),
                           status: 64, containing: "--duration")
    }

    @Test("65 malformed input: a value that does not decode, a file that is not a capture")
    func malformedInput() async throws {
        Self.expectOneLine(try await CLI.run(["decode", "hrm", "1e6d08"]), status: 65, containing: "byte 2")
        let path = Self.missingPath()
        try Data("not a capture".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        Self.expectOneLine(try await CLI.run(["decode", "btsnoop", path]), status: 65)
    }

    @Test("66 cannot open a file: a missing capture, a directory, a btsnoop file in a missing folder")
    func cannotOpen() async throws {
        Self.expectOneLine(try await CLI.run(["decode", "btsnoop", Self.missingPath()]), status: 66)
        Self.expectOneLine(try await CLI.run(["decode", "btsnoop", FileManager.default.temporaryDirectory.path]),
                           status: 66, containing: "directory")
        let controller = try UnixSocketController(.silentPeer)
        defer { controller.stop() }
        // The missing folder is named as the cause, with the way out; not "check the path (for
        // a serial device, that it is plugged in)", the transport's words for a missing device.
        let folder = Self.missingPath()
        let missing = try await CLI.run(["scan", "--duration", "1", "--transport", controller.transport,
                                         "--btsnoop", folder + "/capture.log"])
        Self.expectOneLine(missing, status: 66)
        #expect(missing.stderr == "rawble: cannot write the btsnoop file \(folder)/capture.log: the folder \(folder) does not exist: "
                 + "create it first (mkdir -p \(folder)) or name a file in a folder that exists\n", "\(missing.stderr)")
        let directory = FileManager.default.temporaryDirectory.path
        let isFolder = try await CLI.run(["scan", "--duration", "1", "--transport", controller.transport, "--btsnoop", directory])
        Self.expectOneLine(isFolder, status: 66, containing: "cannot write the btsnoop file \(directory): \(directory) is a folder: name a file in it")
        let csv = try await CLI.run(["hr", "--count", "1", "--transport", controller.transport, "--csv", folder + "/hr.csv"])
        Self.expectOneLine(csv, status: 66, containing: "cannot write the file \(folder)/hr.csv: the folder \(folder) does not exist")
        // A symbolic link is refused, never followed: its target is left as it was.
        let links = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-links-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: links, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: links) }
        try Data("kept".utf8).write(to: URL(fileURLWithPath: links + "/target"))
        for name in ["capture.log", "hr.csv"] {
            try FileManager.default.createSymbolicLink(atPath: links + "/" + name, withDestinationPath: links + "/target")
        }
        let linked = try await CLI.run(["scan", "--duration", "1", "--transport", controller.transport, "--btsnoop", links + "/capture.log"])
        Self.expectOneLine(linked, status: 66, containing: "will not write the btsnoop file: \(links)/capture.log is a symbolic link")
        let linkedCSV = try await CLI.run(["hr", "--count", "1", "--transport", controller.transport, "--csv", links + "/hr.csv"])
        Self.expectOneLine(linkedCSV, status: 66, containing: "will not write the file: \(links)/hr.csv is a symbolic link")
        #expect(try String(contentsOfFile: links + "/target", encoding: .utf8) == "kept")
    }

    /// This machine's kernel has no Bluetooth (the VM tests cover a kernel that has it).
    @Test("69 unavailable: a kernel transport on a kernel without Bluetooth (EAFNOSUPPORT), with the fix")
    func unavailable() async throws {
        try #require(!KernelSupport.hasBluetooth, "this kernel has Bluetooth: the VM tests cover the kernel path here")
        Self.expectOneLine(try await CLI.run(["gatt", "AA:BB:CC:DD:EE:FF", "--transport", "hci0"]), status: 69,
                           containing: "no Bluetooth support")
        Self.expectOneLine(try await CLI.run(["scan", "--duration", "1"]), status: 69, containing: "modprobe bluetooth")
        Self.expectOneLine(try await CLI.run(["adapters"]), status: 69, containing: "no Bluetooth support")
    }

    @Test("74 transport: nothing listens (unix, tcp); the controller hangs up in the middle of a command")
    func transport() async throws {
        Self.expectOneLine(try await CLI.run(["gatt", "AA:BB:CC:DD:EE:FF", "--transport", "unix:" + Self.missingPath()]),
                           status: 74, containing: "nothing listens")
        Self.expectOneLine(try await CLI.run(["scan", "--transport", "tcp:127.0.0.1:\(try freePort())", "--duration", "1"]),
                           status: 74, containing: "nothing listens")
        let controller = try UnixSocketController(.hangUpOnATT)
        defer { controller.stop() }
        let result = try await CLI.run(["read", UnixSocketController.peer, "0x0003", "--address-type", "random",
                                        "--timeout", "5", "--transport", controller.transport])
        Self.expectOneLine(result, status: 74)
    }

    @Test("75 timeout: --timeout is one bound for finding the peer and connecting, and the line says which failed")
    func connectingIsOneBound() async throws {
        let controller = try UnixSocketController(.nothingAdvertises)
        defer { controller.stop() }
        // The scan for its address type takes the whole bound: nothing is left to connect in
        // (before, the connection then took a second --timeout of its own). Shorter than the
        // 2 s after which a wait is told, so the error line is all there is.
        let unseen = try await CLI.run(["gatt", UnixSocketController.peer, "--timeout", "1.5", "--transport", controller.transport])
        Self.expectOneLine(unseen, status: 75)
        #expect(unseen.stderr == "rawble: no connection to \(UnixSocketController.peer): it did not advertise within 1.5 s: "
                 + "check it is on, in range and advertising (rawble scan lists what is), or give a longer --timeout\n",
                 "\(unseen.stderr)")
        // With its type given there is no scan: the connection has the whole bound.
        let typed = try await CLI.run(["read", UnixSocketController.peer, "2A19", "--address-type", "random", "--timeout", "1.5",
                                       "--transport", controller.transport])
        Self.expectOneLine(typed, status: 75, containing: "no connection to \(UnixSocketController.peer) (random static) within 1.5 s: is it advertising and connectable?")
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

    @Test("76 peer error: the connection cannot be established")
    func peerError() async throws {
        let controller = try UnixSocketController(.refuseConnection)
        defer { controller.stop() }
        let result = try await CLI.run(["gatt", UnixSocketController.peer, "--address-type", "random",
                                        "--timeout", "5", "--transport", controller.transport])
        Self.expectOneLine(result, status: 76)
    }

    /// Run as nobody: root reads every file whatever its mode.
    @Test("76 peer error: a GATT server with a characteristic declaration at 0xFFFF is an invalid response, not a crash")
    func declarationAtTopHandle() async throws {
        let controller = try UnixSocketController(.declarationAtTopHandle)
        defer { controller.stop() }
        let result = try await CLI.run(["gatt", UnixSocketController.peer, "--address-type", "random",
                                        "--timeout", "10", "--transport", controller.transport])
        Self.expectOneLine(result, status: 76, containing: "0xFFFF")
    }

    @Test("77 permission: a capture the user may not read")
    func permission() async throws {
        let path = Self.missingPath()
        try Data([0]).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        chmod(path, 0)
        let asNobody = try await CLI.runAsNobody(["decode", "btsnoop", path])
        let result: CLIResult
        if let asNobody {
            result = asNobody
        } else {
            try #require(getuid() != 0, "root reads every file, and there is no setpriv to run as nobody")
            result = try await CLI.run(["decode", "btsnoop", path])
        }
        Self.expectOneLine(result, status: 77, containing: "permissions")
    }
}
