import Foundation
import RawbleHost
import RawbleTestSupport
import RawbleTransport
import Synchronization
import Testing

/// A Bumble central (Tests/Fixtures/bumble_central_for_advertising.py, through the project's
/// Python: Scripts/venv-python) on a virtual link with the controller rawble drives: it finds
/// rawble's advertisement by name, connects, exchanges the ATT MTU with rawble, disconnects,
/// and does it again once rawble advertises again.
@Suite("Advertising: a Bumble central connects to rawble", .serialized,
       .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct AdapterAdvertisingBumbleTests {
    /// The central's process and the JSON lines it printed so far.
    final class Central: Sendable {
        let process: Process
        private let output: Pipe
        private let lines = Mutex<[String]>([])
        private let partial = Mutex<String>("")

        init(name: String, rounds: Int, extended: Bool) throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            process = Process()
            process.executableURL = root.appendingPathComponent("Scripts/venv-python")
            process.arguments = [root.appendingPathComponent("Tests/Fixtures/bumble_central_for_advertising.py").path, name, String(rounds)]
                + (extended ? ["--extended"] : [])
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            self.output = output
            output.fileHandleForReading.readabilityHandler = { [weak self] handle in
                self?.received(String(decoding: handle.availableData, as: UTF8.self))
            }
            try process.run()
        }

        private func received(_ text: String) {
            partial.withLock { partial in
                partial += text
                while let newline = partial.firstIndex(of: "\n") {
                    let line = String(partial[..<newline])
                    partial = String(partial[partial.index(after: newline)...])
                    lines.withLock { $0.append(line) }
                }
            }
        }

        var printed: [String] { lines.withLock { $0 } }

        /// Waits (bounded) for a line containing `text`; fails on the script's error line.
        func line(containing text: String, count: Int = 1) async throws -> String {
            try await within(seconds: 60) {
                while true {
                    let printed = self.printed
                    if let error = printed.first(where: { $0.contains("\"error\"") }) {
                        Issue.record("the Bumble central failed: \(error)")
                        throw TestTimeout()
                    }
                    let matching = printed.filter { $0.contains(text) }
                    if matching.count >= count, let last = matching.last { return last }
                    if !self.process.isRunning, matching.count < count {
                        let status = self.process.terminationStatus
                        let hint = status == 69 ? " (no project Python with bumble 0.0.236: run Scripts/bootstrap, or set RAWBLE_VENV)" : ""
                        Issue.record("the Bumble central exited with status \(status)\(hint): \(printed)")
                        throw TestTimeout()
                    }
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
        }

        func stop() {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            output.fileHandleForReading.readabilityHandler = nil
        }
    }

    @Test("found by name, connected, ATT MTU exchanged both ways; advertising again after the disconnection for a second round",
          arguments: [false, true])
    func bumbleCentralConnectsTwice(extended: Bool) async throws {
        let name = "rawble-adv-test"
        let central = try Central(name: name, rounds: 2, extended: extended)
        defer { central.stop() }
        let ready = try await central.line(containing: "\"ready\"")
        struct Ready: Decodable { let port: UInt16 }
        let port = try JSONDecoder().decode(Ready.self, from: Data(ready.utf8)).port

        var configuration = Adapter.Configuration()
        configuration.logger.logLevel = .critical
        let adapter = try await Adapter.open(try await H4StreamTransport.connect(tcp: "127.0.0.1", port: port),
                                             configuration: configuration)
        #expect(await adapter.usesExtendedAdvertising == extended)
        let set = try await adapter.advertise(Advertisement(
            data: AdvertisingData(serviceUUIDs: [BluetoothUUID(UInt16(0x180D))], localName: name),
            scanResponse: AdvertisingData([.txPowerLevel(-4)])))
        #expect(set.isExtended == extended)

        // rawble answers each Exchange MTU Request with 64 and counts the links.
        let serving = Task { () -> [[UInt8]] in
            var requests: [[UInt8]] = []
            var links = 0
            for await connection in adapter.incomingConnections {
                links += 1
                do {
                    for try await pdu in connection.att.pdus {
                        requests.append(pdu)
                        if pdu.first == 0x02 { try await connection.att.send([0x03, 0x40, 0x00]) }
                    }
                } catch {}
                if links == 2 { break }
            }
            return requests
        }
        let found = try await central.line(containing: "\"found\"")
        #expect(found.contains("\"connectable\": true"))
        #expect(found.contains(await adapter.controller.ownAddress.address.description))
        #expect(try await central.line(containing: "\"mtu\": 64", count: 2).contains("64"))
        _ = try await central.line(containing: "\"disconnected\": 1")
        let requests = try await within(seconds: 30) { await serving.value }
        #expect(requests == [[0x02, 0x64, 0x00], [0x02, 0x64, 0x00]], "Exchange MTU Request (100) on each link")
        await adapter.close()
    }
}
