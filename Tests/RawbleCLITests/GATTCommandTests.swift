import Foundation
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

/// `rawble gatt`, `read`, `write`, `notify` as a user runs them, against Bumble's lab device.
@Suite("rawble gatt, read, write, notify against Bumble", .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct GATTCommandTests {
    static func lab(_ arguments: [String] = []) async throws -> (BumblePeer, BumblePeer.Device) {
        let peer = try await BumblePeer.start(arguments: ["--lab"] + arguments)
        let lab = try #require(peer.devices.first { $0.name == "rawble-lab" })
        return (peer, lab)
    }

    /// The values of the Write Requests to `handle` in the btsnoop `records` (decode btsnoop
    /// --json lines), in order: e.g. a CCCD's `0100`, then `0000`.
    static func writeRequests(to handle: String, in records: [[String: Any]]) -> [String] {
        records.compactMap { $0["att"] as? [String: Any] }
            .filter { $0["name"] as? String == "Write Request" && $0["handle"] as? String == handle }
            .compactMap { $0["value"] as? String }
    }

    static func handle(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    @Test("gatt --json is the whole database the server holds, with every readable value (long ones whole)")
    func gattJSON() async throws {
        let (peer, lab) = try await Self.lab()
        defer { peer.stop() }
        let result = try await CLI.run(["gatt", lab.address, "--transport", peer.transport, "--json"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        // One JSON line, as every --json output is.
        #expect(result.stdoutLinesExceptStatus.count == 1, "\(result.stdout.prefix(300))")
        let document = try CLI.jsonObject(result.stdoutExceptStatus)
        #expect(document["address"] as? String == lab.address)
        #expect(document["mtu"] as? Int == 517)
        let services = try #require(document["services"] as? [[String: Any]])
        let layout = try #require(lab.gatt)
        #expect(services.count == layout.count)
        for (service, expected) in zip(services, layout) {
            #expect(service["uuid"] as? String == expected.uuid)
            #expect(service["start"] as? String == Self.handle(expected.start))
            #expect(service["end"] as? String == Self.handle(expected.end))
            let characteristics = try #require(service["characteristics"] as? [[String: Any]])
            #expect(characteristics.map { $0["valueHandle"] as? String } == expected.characteristics.map { Self.handle($0.value) })
            for (characteristic, expectedCharacteristic) in zip(characteristics, expected.characteristics) {
                #expect(characteristic["handle"] as? String == Self.handle(expectedCharacteristic.declaration))
                if let data = expectedCharacteristic.data, expectedCharacteristic.properties & 0x02 != 0 {
                    #expect(characteristic["value"] as? String == data.lowercased(), "\(expectedCharacteristic.uuid)")
                }
                let descriptors = characteristic["descriptors"] as? [[String: Any]] ?? []
                #expect(descriptors.map { $0["handle"] as? String } == expectedCharacteristic.descriptors.map { Self.handle($0.handle) })
            }
        }
        let longValue = services.flatMap { $0["characteristics"] as? [[String: Any]] ?? [] }
            .first { $0["uuid"] as? String == "72617762-6C65-4C61-6200-000000000002" }?["value"] as? String
        #expect(longValue?.count == 600, "300 bytes read whole")
    }

    @Test("gatt prints a readable tree with names, handles, properties and values")
    func gattTree() async throws {
        let (peer, lab) = try await Self.lab()
        defer { peer.stop() }
        let result = try await CLI.run(["gatt", lab.address, "--transport", peer.transport])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdoutLines.first?.hasPrefix(lab.address) == true)
        #expect(result.stdout.contains("Heart Rate (180D)"))
        #expect(result.stdout.contains("Body Sensor Location (2A38)"))
        #expect(result.stdout.contains("\"rawble-sim\""))
        #expect(result.stdout.contains("[notify]"))
    }

    @Test("read by UUID and by handle (--json), write then read back, write without response")
    func readAndWrite() async throws {
        let (peer, lab) = try await Self.lab()
        defer { peer.stop() }
        let handles = try #require(lab.handles)
        let manufacturer = try await CLI.run(["read", lab.address, "2a29", "--transport", peer.transport])
        #expect(manufacturer.status == 0, "stderr: \(manufacturer.stderr)")
        // A string characteristic reads as its text (issue 14: readable values).
        #expect(manufacturer.stdout == "\"rawble-sim\"\n")

        let long = try await CLI.run(["read", lab.address, Self.handle(handles.longRead), "--transport", peer.transport, "--json"])
        let object = try CLI.jsonObject(long.stdout)
        #expect(object["handle"] as? String == Self.handle(handles.longRead))
        #expect(object["uuid"] as? String == "72617762-6C65-4C61-6200-000000000002")
        #expect(object["value"] as? String == Hex.encode((0..<300).map { UInt8($0 % 256) }))

        let value = (0..<200).map { UInt8($0) }
        let write = try await CLI.run(["write", lab.address, Self.handle(handles.write), Hex.encode(value), "--transport", peer.transport])
        #expect(write.status == 0, "stderr: \(write.stderr)")
        #expect(write.stdout.isEmpty)
        #expect(try peer.completedWrites().last?.bytes == value)
        let back = try await CLI.run(["read", lab.address, Self.handle(handles.write), "--transport", peer.transport])
        #expect(back.stdout == Hex.encode(value) + "\n")

        let command = try await CLI.run(["write", lab.address, Self.handle(handles.write), "beef", "--without-response", "--transport", peer.transport, "--json"])
        #expect(command.status == 0, "stderr: \(command.stderr)")
        // --json says what was written, in one line.
        #expect(command.stdoutLinesExceptStatus.count == 1, "\(command.stdout)")
        let written = try CLI.jsonObject(command.stdoutExceptStatus)
        #expect(written["handle"] as? String == Self.handle(handles.write))
        #expect(written["value"] as? String == "beef")
        #expect(written["withoutResponse"] as? Bool == true)
        let afterCommand = try await CLI.run(["read", lab.address, Self.handle(handles.write), "--transport", peer.transport])
        #expect(afterCommand.stdout == "beef\n")
    }

    @Test("notify --count 3 --json prints the first three Heart Rate values the server sent, then unsubscribes")
    func notify() async throws {
        let (peer, lab) = try await Self.lab(["--hr-interval", "0.05"])
        defer { peer.stop() }
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-notify-\(UUID().uuidString).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let result = try await CLI.run(["notify", lab.address, "2A37", "--count", "3", "--json", "--transport", peer.transport, "--btsnoop", capture])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let lines = try result.stdoutLines.map(CLI.jsonObject)
        #expect(lines.count == 3)
        let sent = try peer.sentLabHeartRateValues().prefix(3).map { Hex.encode($0) }
        #expect(lines.map { $0["value"] as? String } == Array(sent))
        #expect(lines.allSatisfy { $0["uuid"] as? String == "2A37" && ($0["time"] as? String)?.hasSuffix("Z") == true })
        // The CCCD was written 0100, then 0000 before disconnecting.
        let decoded = try await CLI.run(["decode", "btsnoop", capture, "--json"])
        let cccd = Self.handle(try #require(lab.handles?.heartRateMeasurementCCCD))
        let writes = Self.writeRequests(to: cccd, in: try decoded.stdoutLines.map(CLI.jsonObject))
        #expect(writes == ["0100", "0000"])
    }

    @Test("Ctrl-C during notify unsubscribes, disconnects and exits 0")
    func notifyInterrupted() async throws {
        let (peer, lab) = try await Self.lab(["--hr-interval", "0.05", "--hr-count", "1000"])
        defer { peer.stop() }
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-notify-int-\(UUID().uuidString).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: capture) }
        // Ctrl-C once three values are shown: the subscription is live.
        let result = try await CLI.run(["notify", lab.address, "2A37", "--transport", peer.transport, "--btsnoop", capture],
                                       when: { stdout, _ in stdout.split(separator: "\n").count >= 3 })
        #expect(result.reachedReady, "no three values: \(result.stdout) \(result.stderr)")
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(!result.killedBySignal)
        #expect(result.stdoutLines.count >= 3)
        // After the Ctrl-C: the CCCD written 0000, then the link disconnected.
        let decoded = try await CLI.run(["decode", "btsnoop", capture, "--json"])
        let records = try decoded.stdoutLines.map(CLI.jsonObject)
        let cccd = Self.handle(try #require(lab.handles?.heartRateMeasurementCCCD))
        let writes = Self.writeRequests(to: cccd, in: records)
        #expect(writes == ["0100", "0000"])
        let sent = records.filter { $0["direction"] as? String == "sent" && $0["type"] as? String == "command" }
        #expect(sent.contains { ($0["name"] as? String)?.hasPrefix("Disconnect") == true }, "\(sent.compactMap { $0["name"] })")
    }

    @Test("notify --duration: the values of that long, then unsubscribed, status 0 (its own end)")
    func notifyForADuration() async throws {
        let peer = try await BumblePeer.start(arguments: ["--strap-only", "--hr-interval", "0.1", "--hr-count", "1000"])
        defer { peer.stop() }
        let strap = try #require(peer.devices.first)
        let result = try await CLI.run(["notify", strap.address, "2A37", "--duration", "2", "--json", "--transport", peer.transport])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        // About 20 values in 2 s at 10 a second; at least a few, whatever the machine's load.
        #expect(result.stdoutLines.count >= 3, "\(result.stdout)")
        #expect(try result.stdoutLines.map(CLI.jsonObject).allSatisfy { $0["value"] is String })
    }

    @Test("a peer that disconnects during notify is one line, the peer-error status, the reason said once")
    func notifyPeerDisconnects() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.02", "--hr-count", "1000", "--hr-disconnect-after", "3"])
        defer { peer.stop() }
        let strap = try #require(peer.devices.first { $0.name == "rawble-strap" })
        let result = try await CLI.run(["notify", strap.address, "2A37", "--transport", peer.transport])
        #expect(result.status == 76, "stderr: \(result.stderr)")
        #expect(result.stderrLinesExceptWaits.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("disconnected: Remote User Terminated Connection"), "\(result.stderr)")
        #expect(!result.stderr.contains("disconnected: disconnected"), "\(result.stderr)")
    }

    @Test("errors are one line with the class's status: no such characteristic (76), an ATT error from the peer (76), no such device (75)")
    func errors() async throws {
        let (peer, lab) = try await Self.lab()
        defer { peer.stop() }
        let missing = try await CLI.run(["read", lab.address, "2A6E", "--transport", peer.transport])
        #expect(missing.status == 76)
        #expect(missing.stderrLinesExceptWaits.count == 1)
        #expect(missing.stderr.contains("2A6E"))

        // The strap's Heart Rate Control Point refuses anything but 01 with ATT error 0x80.
        let strap = try #require(peer.devices.first { $0.name == "rawble-strap" })
        let refused = try await CLI.run(["write", strap.address, "2A39", "02", "--transport", peer.transport])
        #expect(refused.status == 76)
        #expect(refused.stderrLinesExceptWaits.count == 1)
        #expect(refused.stderr.contains("0x80"), "\(refused.stderr)")

        // What a characteristic does not allow is said before any request, from its properties
        // (Control Point 2A39: write only; Body Sensor Location 2A38: read only; 2A37: notify).
        for (arguments, text) in [
            (["read", strap.address, "2A39"], "characteristic 2A39 (Heart Rate Control Point) cannot be read: its properties are write"),
            (["write", strap.address, "2A38", "01"], "2A38 (Body Sensor Location) cannot be written: its properties are read"),
            (["write", strap.address, "2A39", "01", "--without-response"], "takes no Write Command: its properties are write: leave out --without-response"),
            (["notify", strap.address, "2A38"], "2A38 (Body Sensor Location) can neither notify nor indicate: its properties are read"),
            (["notify", strap.address, "2A37", "--indicate"], "notifies and does not indicate: its properties are notify: leave out --indicate"),
        ] {
            ExitStatusTests.expectOneLine(try await CLI.run(arguments + ["--transport", peer.transport]), status: 76, containing: text)
        }

        // 0x2A19 is a handle the strap does not have; its Battery Level (2A19) is what was meant.
        let slip = try await CLI.run(["read", strap.address, "0x2A19", "--transport", peer.transport])
        ExitStatusTests.expectOneLine(slip, status: 76, containing: "write 2A19 without 0x")
        #expect(slip.stderr.contains("characteristic 2A19 (Battery Level) is at 0x"), "\(slip.stderr)")

        let absent = try await CLI.run(["read", "C0:00:00:00:00:99", "2A29", "--address-type", "random", "--timeout", "1", "--transport", peer.transport])
        #expect(absent.status == 75)
        #expect(absent.stderrLinesExceptWaits.count == 1)
    }
}
