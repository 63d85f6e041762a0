import Foundation
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

/// Values shown as what they mean (`gatt`, `read`, `notify`) and written typed (`write --as`),
/// against Bumble's lab device and strap.
@Suite("readable values: gatt, read, write --as, notify against Bumble",
       .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct ReadableValueCommandTests {
    static let presented = "72617762-6C65-4C61-6200-000000000005"
    static let writable = "72617762-6C65-4C61-6200-000000000003"

    static func handle(_ value: UInt16) -> String { GATTCommandTests.handle(value) }

    /// The lab's handles of `uuid`'s value and of its descriptors, from the ready line.
    static func layout(_ lab: BumblePeer.Device, _ uuid: String) throws -> (value: UInt16, descriptors: [UInt16]) {
        let characteristic = try #require(lab.gatt?.flatMap(\.characteristics).first { $0.uuid == uuid }, "\(uuid)")
        return (characteristic.value, characteristic.descriptors.map(\.handle))
    }

    @Test("gatt's tree: battery in percent, body sensor location by name, strings as text, appearance by name, descriptors read")
    func tree() async throws {
        let (peer, lab) = try await GATTCommandTests.lab()
        defer { peer.stop() }
        let result = try await CLI.run(["gatt", lab.address, "--transport", peer.transport])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let lines = result.stdoutLines
        let battery = try Self.layout(lab, "2A19").value
        let location = try Self.layout(lab, "2A38").value
        let name = try Self.layout(lab, "2A29").value
        let appearance = try Self.layout(lab, "2A01").value
        let write = try Self.layout(lab, Self.writable)
        let presented = try Self.layout(lab, Self.presented)
        for expected in [
            "  Battery Level (2A19)  \(Self.handle(battery))  [read, notify]  = 87 %  (57)",
            "  Body Sensor Location (2A38)  \(Self.handle(location))  [read]  = chest  (01)",
            "  Manufacturer Name String (2A29)  \(Self.handle(name))  [read]  = \"rawble-sim\"",
            "  Appearance (2A01)  \(Self.handle(appearance))  [read]  = Heart Rate Sensor: Heart Rate Belt (0x0341)  (4103)",
            "    Characteristic User Description (2901)  \(Self.handle(write.descriptors[0]))  = \"lab write\"",
            // A value of a UUID rawble does not know, read by its Presentation Format: sint16 2150 × 10⁻² °C.
            "  \(Self.presented)  \(Self.handle(presented.value))  [read]  = 21.50 °C  (6608)",
            "    Characteristic User Description (2901)  \(Self.handle(presented.descriptors[0]))  = \"lab temperature\"",
            "    Characteristic Presentation Format (2904)  \(Self.handle(presented.descriptors[1]))  = sint16, Celsius temperature (degree Celsius) (272F), exponent -2, Bluetooth SIG description main (0x0106)",
        ] {
            #expect(lines.contains(expected), "missing: \(expected)\n\(result.stdout)")
        }
        // The CCCD is not read (its state is this client's own): no value on its line.
        #expect(lines.contains { $0.hasPrefix("    Client Characteristic Configuration (2902)") && !$0.contains("=") })
    }

    @Test("gatt --json: value stays hex, decoded is added for characteristics and descriptors")
    func treeJSON() async throws {
        let (peer, lab) = try await GATTCommandTests.lab()
        defer { peer.stop() }
        let result = try await CLI.run(["gatt", lab.address, "--transport", peer.transport, "--json"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let document = try CLI.jsonObject(result.stdoutExceptStatus)
        let characteristics = (document["services"] as? [[String: Any]] ?? []).flatMap { $0["characteristics"] as? [[String: Any]] ?? [] }
        func characteristic(_ uuid: String) throws -> [String: Any] {
            try #require(characteristics.first { $0["uuid"] as? String == uuid }, "\(uuid)")
        }
        let battery = try characteristic("2A19")
        #expect(battery["value"] as? String == "57")
        #expect((battery["decoded"] as? [String: Any])?["percent"] as? Int == 87)
        let location = try characteristic("2A38")
        #expect((location["decoded"] as? [String: Any])?["location"] as? String == "chest")
        #expect((try characteristic("2A29")["decoded"] as? [String: Any])?["text"] as? String == "rawble-sim")
        // A format rawble does not know: hex only, no decoded field.
        let long = try characteristic("72617762-6C65-4C61-6200-000000000002")
        #expect(long["value"] is String)
        #expect(long["decoded"] == nil)
        let presented = try characteristic(Self.presented)
        #expect(presented["value"] as? String == "6608")
        let decoded = try #require(presented["decoded"] as? [String: Any])
        #expect(decoded["value"] as? Int == 2150)
        #expect(decoded["scaled"] as? Double == 21.5)
        #expect(decoded["unit"] as? String == "272F")
        let descriptors = try #require(presented["descriptors"] as? [[String: Any]])
        #expect(descriptors.map { $0["uuid"] as? String } == ["2901", "2904"])
        #expect(descriptors[0]["value"] as? String == Hex.encode(Array("lab temperature".utf8)))
        #expect((descriptors[0]["decoded"] as? [String: Any])?["text"] as? String == "lab temperature")
        let format = try #require(descriptors[1]["decoded"] as? [String: Any])
        #expect(format["formatName"] as? String == "sint16")
        #expect(format["exponent"] as? Int == -2)
        #expect(format["unitName"] as? String == "Celsius temperature (degree Celsius)")
        #expect(format["descriptionName"] as? String == "main")
    }

    @Test("read prints what a value means: 87 %, chest, the text; --json adds decoded; --as hex gives the bytes")
    func read() async throws {
        let (peer, lab) = try await GATTCommandTests.lab()
        defer { peer.stop() }
        let strap = try #require(peer.devices.first { $0.name == "rawble-strap" })
        for (address, target, arguments, output) in [
            (lab.address, "2A19", [String](), "87 %"),
            (strap.address, "2A38", [], "chest"),
            (lab.address, "2A29", [], "\"rawble-sim\""),
            (lab.address, "2A29", ["--as", "utf8"], "rawble-sim"),
            (lab.address, "2A29", ["--as", "hex"], Hex.encode(Array("rawble-sim".utf8))),
            (lab.address, "2A01", ["--as", "u16"], "833"),
            (lab.address, "2A01", [], "Heart Rate Sensor: Heart Rate Belt (0x0341)"),
        ] {
            let result = try await CLI.run(["read", address, target, "--transport", peer.transport] + arguments)
            #expect(result.status == 0, "stderr: \(result.stderr)")
            #expect(result.stdout == output + "\n", "\(target) \(arguments)")
        }
        let json = try await CLI.run(["read", lab.address, "2A19", "--transport", peer.transport, "--json"])
        #expect(json.stdout == #"{"handle":"\#(Self.handle(try Self.layout(lab, "2A19").value))","uuid":"2A19","value":"57","decoded":{"percent":87}}"# + "\n")
        // A value that does not fit the type asked for: its hex and why, still status 0.
        let wrong = try await CLI.run(["read", lab.address, "2A19", "--as", "u16", "--transport", peer.transport])
        #expect(wrong.status == 0, "stderr: \(wrong.stderr)")
        #expect(wrong.stdout == "57 (does not decode: u16: truncated: needs 2 bytes, 1 left at byte 0)\n")
        let wrongJSON = try await CLI.run(["read", lab.address, "2A19", "--as", "u16", "--transport", peer.transport, "--json"])
        let object = try CLI.jsonObject(wrongJSON.stdout)
        #expect(object["value"] as? String == "57")
        #expect(object["decoded"] is NSNull)
        #expect(object["decodeError"] as? String == "u16: truncated: needs 2 bytes, 1 left at byte 0")
    }

    @Test("write --as then read back: u16, s16 (negative, no -- needed), utf8, medfloat32; the peer got the little-endian bytes")
    func typedRoundTrips() async throws {
        let (peer, lab) = try await GATTCommandTests.lab()
        defer { peer.stop() }
        let target = Self.handle(try #require(lab.handles).write)
        for (type, text, bytes, readBack) in [
            ("u16", "513", [UInt8]([0x01, 0x02]), "513"),
            ("u8", "0xff", [0xFF], "255"),
            ("s16", "-5", [0xFB, 0xFF], "-5"),
            ("s32", "-70000", [0x90, 0xEE, 0xFE, 0xFF], "-70000"),
            ("utf8", "hello wörld", Array("hello wörld".utf8), "hello wörld"),
            ("medfloat32", "36.5", [0x6D, 0x01, 0x00, 0xFF], "36.5"),
            ("f32", "1.5", [0x00, 0x00, 0xC0, 0x3F], "1.5"),
        ] {
            let write = try await CLI.run(["write", lab.address, target, "--as", type, text, "--transport", peer.transport])
            #expect(write.status == 0, "\(type) \(text): \(write.stderr)")
            #expect(try peer.completedWrites().last?.bytes == bytes, "\(type) \(text)")
            let read = try await CLI.run(["read", lab.address, target, "--as", type, "--transport", peer.transport])
            #expect(read.stdout == readBack + "\n", "\(type) \(text): \(read.stderr)")
        }
        // write --json says what was written, in hex as before.
        let json = try await CLI.run(["write", lab.address, target, "--as", "u16", "258", "--json", "--transport", peer.transport])
        #expect(try CLI.jsonObject(json.stdout)["value"] as? String == "0201")
    }

    @Test("a value the type does not accept is one usage line (64) saying what it accepts, before connecting")
    func badTypedValues() async throws {
        for (arguments, text) in [
            (["--as", "u8", "300"], "'300' is not a u8 value: --as u8 takes an integer from 0 to 255 (or 0x hex)"),
            (["--as", "s8", "-129"], "'-129' is not a s8 value: --as s8 takes an integer from -128 to 127"),
            (["--as", "u16", "ten"], "'ten' is not a u16 value: --as u16 takes an integer from 0 to 65535 (or 0x hex)"),
            (["--as", "medfloat16", "12345"], "--as medfloat16 takes a decimal with at most 4 significant digits"),
            (["--as", "u9", "1"], "'u9' is not a type: --as takes utf8|hex|u8|u16|u24|u32|u64|s8|s16|s24|s32|s64|f32|f64|medfloat16|medfloat32"),
            (["zz"], "'zz' is not hex ('z' is not a hex digit at character 0): give bytes such as 01ff, or a type with --as"),
        ] {
            // No transport is opened for a usage error: the address needs no controller.
            let result = try await CLI.run(["write", "C0:B1:E0:00:00:05", "0x0022"] + arguments + ["--transport", "tcp:127.0.0.1:9"])
            ExitStatusTests.expectOneLine(result, status: 64, containing: text)
        }
    }

    @Test("notify prints each Heart Rate Measurement as bpm and contact; --json adds decoded beside the hex")
    func notify() async throws {
        let (peer, lab) = try await GATTCommandTests.lab(["--hr-interval", "0.05"])
        defer { peer.stop() }
        let text = try await CLI.run(["notify", lab.address, "2A37", "--count", "3", "--transport", peer.transport])
        #expect(text.status == 0, "stderr: \(text.stderr)")
        let sent = try peer.sentLabHeartRateValues().prefix(3)
        let expected = try sent.map { try HeartRateMeasurement.decode($0).readableSummary }
        #expect(text.stdoutLines == Array(expected))
        #expect(text.stdoutLines.allSatisfy { $0.contains(" bpm, contact ") })

        let json = try await CLI.run(["notify", lab.address, "2A37", "--count", "2", "--json", "--transport", peer.transport])
        let lines = try json.stdoutLines.map(CLI.jsonObject)
        #expect(lines.count == 2)
        for line in lines {
            let raw = try #require(line["value"] as? String)
            let decoded = try #require(line["decoded"] as? [String: Any])
            let measurement = try HeartRateMeasurement.decode(try Hex.decode(raw))
            #expect(decoded["bpm"] as? Int == Int(measurement.bpm))
            #expect(decoded["contact"] as? String == measurement.contact.name)
        }
    }
}
