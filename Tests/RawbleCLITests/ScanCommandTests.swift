import Foundation
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

/// `rawble scan` as a user runs it, against Bumble's virtual controller and peripherals.
@Suite("rawble scan against Bumble's virtual controller", .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct ScanCommandTests {
    /// The JSON device lines of a scan, keyed by address (the last line of each).
    static func devices(_ result: CLIResult) throws -> [String: [String: Any]] {
        var devices: [String: [String: Any]] = [:]
        for line in result.stdoutLines {
            let object = try CLI.jsonObject(line)
            let address = try #require(object["address"] as? String)
            devices[address] = object
        }
        return devices
    }

    @Test("--first stops at the first device that matches (0); none within --duration is one line (75)")
    func first() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        #expect(peer.devices.count > 1)
        let one = try await CLI.run(["scan", "--first", "--service", "0x180D", "--json", "--transport", peer.transport])
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.stdoutLines.count == 1, "\(one.stdout)")
        let device = try CLI.jsonObject(one.stdout)
        #expect(device["name"] as? String == "rawble-strap", "\(device)")
        let none = try await CLI.run(["scan", "--first", "--name", "no-such-device", "--duration", "2", "--transport", peer.transport])
        ExitStatusTests.expectOneLine(none, status: 75, containing: "no device matched within 2 s")
    }

    @Test("--json lists every advertiser with the fields it advertises (scan response merged, broken AD still listed)")
    func jsonListsEveryAdvertiser() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        let result = try await CLI.run(["scan", "--transport", peer.transport, "--duration", "3", "--json"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(!result.killedBySignal)
        let devices = try Self.devices(result)
        for expected in peer.devices {
            let device = try #require(devices[expected.address], "\(expected.name) missing from: \(result.stdout)")
            #expect(device["addressType"] as? String == "random")
            #expect(device["rssi"] is Int)
            #expect(device["connectable"] as? Bool == expected.connectable, "\(expected.name)")
            #expect(device["services"] as? [String] == expected.services, "\(expected.name)")
            let name = expected.nameInScanResponse == true ? expected.name : expected.advertisedName
            #expect(device["name"] as? String == name, "\(expected.name)")
            let manufacturer = device["manufacturerData"] as? [[String: Any]] ?? []
            #expect(manufacturer.map { $0["company"] as? Int } == expected.manufacturerData.map { Int($0.company) })
            #expect(manufacturer.map { $0["data"] as? String } == expected.manufacturerData.map { $0.data.lowercased() })
            let serviceData = device["serviceData"] as? [[String: Any]] ?? []
            #expect(serviceData.map { $0["uuid"] as? String } == (expected.serviceData ?? []).map(\.uuid), "\(expected.name)")
            #expect(device["txPower"] as? Int == expected.txPower.map(Int.init), "\(expected.name)")
            #expect(device["appearance"] as? Int == expected.appearance.map(Int.init), "\(expected.name)")
            #expect((device["error"] != nil) == (expected.malformed ?? false), "\(expected.name)")
        }
        // Without --duplicates each device is printed once: nothing it advertises changes.
        #expect(result.stdoutLines.count == peer.devices.count, "\(result.stdout)")
    }

    @Test("filters: --name (case-insensitive), --service, --address; the transport from RAWBLE_TRANSPORT")
    func filters() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        let strap = try #require(peer.devices.first { $0.name == "rawble-strap" })
        let environment = ["RAWBLE_TRANSPORT": peer.transport]

        let byName = try await CLI.run(["scan", "--duration", "2", "--json", "--name", "THERMO"], environment: environment)
        #expect(byName.status == 0, "stderr: \(byName.stderr)")
        #expect(try Self.devices(byName).values.compactMap { $0["name"] as? String } == ["rawble-thermo"])

        let byService = try await CLI.run(["scan", "--duration", "2", "--json", "--service", "180d"], environment: environment)
        #expect(try Array(Self.devices(byService).keys) == [strap.address])

        let beacon = try #require(peer.devices.first { $0.name == "rawble-beacon" })
        let byAddress = try await CLI.run(["scan", "--duration", "2", "--json", "--address", beacon.address.lowercased()], environment: environment)
        #expect(try Array(Self.devices(byAddress).keys) == [beacon.address])
    }

    @Test("--passive sends no scan requests: a name carried only by the scan response is not seen")
    func passive() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        let thermo = try #require(peer.devices.first { $0.name == "rawble-thermo" })
        let result = try await CLI.run(["scan", "--transport", peer.transport, "--duration", "2", "--json", "--passive"])
        let devices = try Self.devices(result)
        let device = try #require(devices[thermo.address])
        #expect(device["name"] is NSNull)
    }

    @Test("--duplicates prints every report: devices repeat")
    func duplicates() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        let result = try await CLI.run(["scan", "--transport", peer.transport, "--duration", "3", "--json", "--duplicates"])
        #expect(result.status == 0)
        let strap = try #require(peer.devices.first { $0.name == "rawble-strap" })
        let strapLines = result.stdoutLines.filter { $0.contains(strap.address) }
        #expect(strapLines.count >= 3, "\(result.stdout)")
    }

    @Test("the table has a header and one row per device; --btsnoop writes the session as a capture `rawble decode btsnoop` reads back")
    func tableAndCapture() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-scan-\(UUID().uuidString).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let result = try await CLI.run(["scan", "--transport", peer.transport, "--duration", "2", "--btsnoop", capture])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let lines = result.stdoutLines
        #expect(lines.first?.hasPrefix("ADDRESS") == true)
        for device in peer.devices {
            #expect(lines.contains { $0.hasPrefix(device.address) }, "\(device.name)")
        }
        #expect(lines.contains { $0.contains("rawble-strap") && $0.contains("Heart Rate") })

        let decoded = try await CLI.run(["decode", "btsnoop", capture, "--json"])
        #expect(decoded.status == 0, "stderr: \(decoded.stderr)")
        let records = try decoded.stdoutLines.map(CLI.jsonObject)
        #expect(records.first?["type"] as? String == "command")
        #expect(records.first?["direction"] as? String == "sent")
        #expect(records.contains { ($0["reports"] as? [[String: Any]])?.isEmpty == false }, "advertising reports captured")
        // The scan was switched off before the transport closed: the last command disables it.
        let lastSent = try #require(records.last { $0["direction"] as? String == "sent" })
        #expect(lastSent["name"] as? String == "LE Set Scan Enable")
        #expect((lastSent["parameters"] as? [String: Any])?["enable"] as? Bool == false, "\(lastSent)")
    }

    @Test("Ctrl-C stops the scan, disables scanning, completes the capture and exits 0 within seconds")
    func interrupt() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-int-\(UUID().uuidString).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: capture) }
        // Ctrl-C once every advertiser is listed: the scan is running.
        let count = peer.devices.count
        let result = try await CLI.run(["scan", "--transport", peer.transport, "--json", "--btsnoop", capture],
                                       when: { stdout, _ in stdout.split(separator: "\n").count >= count })
        #expect(result.reachedReady, "not every device listed: \(result.stdout) \(result.stderr)")
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(!result.killedBySignal)
        #expect(result.stdoutLines.count >= peer.devices.count)
        let decoded = try await CLI.run(["decode", "btsnoop", capture, "--json"])
        let sent = try decoded.stdoutLines.map(CLI.jsonObject).filter { $0["direction"] as? String == "sent" }
        let last = try #require(sent.last)
        #expect(last["name"] as? String == "LE Set Scan Enable", "\(last)")
        #expect((last["parameters"] as? [String: Any])?["enable"] as? Bool == false, "\(last)")
    }
}
