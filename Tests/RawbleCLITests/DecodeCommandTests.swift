import Foundation
import RawbleWire
import Testing

/// `rawble decode …` as a user runs it: vectors from the Heart Rate specification and the Core
/// specification, JSON field names from the CLI documentation, and one-line errors that name
/// the byte offset.
@Suite("rawble decode")
struct DecodeCommandTests {
    // MARK: hrm

    @Test func heartRateContactDetected() async throws {
        let result = try await CLI.run(["decode", "hrm", "065A", "--json"])
        #expect(result.status == 0)
        let object = try CLI.jsonObject(try #require(result.stdoutLines.first))
        #expect(object["bpm"] as? Int == 90)
        #expect(object["contact"] as? String == "detected")
        #expect(object["energyExpended"] is NSNull)
        #expect((object["rrIntervals"] as? [Double]) == [])
        #expect(object["raw"] as? String == "065a")
    }

    @Test func heartRateWithOneRRInterval() async throws {
        let result = try await CLI.run(["decode", "hrm", "10 48 00 04", "--json"])
        #expect(result.status == 0)
        let object = try CLI.jsonObject(try #require(result.stdoutLines.first))
        #expect(object["bpm"] as? Int == 72)
        #expect(object["contact"] as? String == "unsupported")
        #expect((object["rrIntervals"] as? [Double]) == [1.0])
    }

    @Test func heartRateEveryFieldReadable() async throws {
        let result = try await CLI.run(["decode", "hrm", "1e6d0800310234023702"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("109 bpm"))
        #expect(result.stdout.contains("energy 8 kJ"))
        #expect(result.stdout.contains("RR 547.9 ms 550.8 ms 553.7 ms"))
    }

    @Test func heartRateTruncatedNamesFieldAndOffset() async throws {
        let result = try await CLI.run(["decode", "hrm", "1e6d08"])
        #expect(result.status == 65)
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines.count == 1)
        #expect(result.stderr.contains("Energy Expended"))
        #expect(result.stderr.contains("byte 2"))
    }

    @Test(arguments: ["0x", "06 5", "06zz", ""])
    func badHexIsAOneLineError(hex: String) async throws {
        let result = try await CLI.run(["decode", "hrm", hex])
        #expect(result.status == 65)
        #expect(result.stderrLines.count == 1)
        #expect(!result.killedBySignal)
    }

    // MARK: adv

    @Test func advertisementFields() async throws {
        let data = AdvertisingData(flags: .generalDiscoverableLEOnly, serviceUUIDs: [.heartRateService],
                                   localName: "Polar H10", txPowerLevel: -4,
                                   manufacturerData: ManufacturerData(companyID: 0x006B, data: [0x01, 0x02]))
        let result = try await CLI.run(["decode", "adv", Hex.encode(data.encoded), "--json"])
        #expect(result.status == 0)
        let object = try CLI.jsonObject(try #require(result.stdoutLines.first))
        #expect(object["name"] as? String == "Polar H10")
        #expect(object["services"] as? [String] == ["180D"])
        #expect(object["txPower"] as? Int == -4)
        let manufacturer = try #require((object["manufacturerData"] as? [[String: Any]])?.first)
        #expect(manufacturer["company"] as? Int == 0x006B)
        #expect(manufacturer["data"] as? String == "0102")
    }

    @Test func brokenStructureKeepsEarlierOnes() async throws {
        // Flags, a complete name, then a structure claiming 9 bytes with 2 present.
        let result = try await CLI.run(["decode", "adv", "020106 0409414243 0903 0d18", "--json"])
        #expect(result.status == 65)
        let object = try CLI.jsonObject(try #require(result.stdoutLines.first))
        #expect(object["name"] as? String == "ABC")
        #expect(result.stderrLines.count == 1)
        #expect(result.stderr.contains("byte 8"))
    }

    // MARK: hci

    @Test func commandCompleteForReset() async throws {
        let result = try await CLI.run(["decode", "hci", "040e0401030c00", "--json"])
        #expect(result.status == 0)
        let object = try CLI.jsonObject(try #require(result.stdoutLines.first))
        #expect(object["type"] as? String == "event")
        #expect(object["name"] as? String == "Command Complete")
        #expect(object["command"] as? String == "Reset")
        #expect(object["numHCICommandPackets"] as? Int == 1)
    }

    /// The opcode is a number in every record (as in Command Complete and in commands), the
    /// command's name beside it: a Command Status once gave "Disconnect (0x0406)" instead.
    @Test func commandStatusOpcodeIsANumber() async throws {
        let result = try await CLI.run(["decode", "hci", "040f0400010604", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try CLI.jsonObject(try #require(result.stdoutLines.first))
        #expect(object["name"] as? String == "Command Status")
        #expect(object["opcode"] as? Int == 0x0406, "\(result.stdout)")
        #expect(object["command"] as? String == "Disconnect")
        #expect(object["status"] as? String == "Success (0x00)", "\(result.stdout)")
        #expect(object["numHCICommandPackets"] as? Int == 1)
    }

    @Test func resetCommand() async throws {
        let result = try await CLI.run(["decode", "hci", "01030c00", "--json"])
        #expect(result.status == 0)
        let object = try CLI.jsonObject(try #require(result.stdoutLines.first))
        #expect(object["type"] as? String == "command")
        #expect(object["opcode"] as? Int == 0x0C03)
        #expect(object["name"] as? String == "Reset")
    }

    @Test func advertisingReportsWithDeviceFields() async throws {
        let first = AdvertisingData(serviceUUIDs: [.heartRateService], localName: "Strap")
        let second = AdvertisingData(flags: nil, localName: "Scale")
        let event = HCIEvent.le(.advertisingReport([
            AdvertisingReport(legacy: .advInd, addressType: .random,
                              address: try #require(BluetoothAddress("C1:22:33:44:55:66")), rssi: -60, data: first.encoded[...]),
            AdvertisingReport(legacy: .scanRsp, addressType: .public,
                              address: try #require(BluetoothAddress("00:11:22:33:44:55")), rssi: -70, data: second.encoded[...]),
        ]))
        let packet = H4Packet(type: .event, bytes: event.encoded)
        let result = try await CLI.run(["decode", "hci", Hex.encode(packet.encoded), "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try CLI.jsonObject(try #require(result.stdoutLines.first))
        let reports = try #require(object["reports"] as? [[String: Any]])
        #expect(reports.count == 2)
        #expect(reports[0]["address"] as? String == "C1:22:33:44:55:66")
        #expect(reports[0]["addressType"] as? String == "random")
        #expect(reports[0]["name"] as? String == "Strap")
        #expect(reports[0]["connectable"] as? Bool == true)
        #expect(reports[0]["services"] as? [String] == ["180D"])
        #expect(reports[0]["rssi"] as? Int == -60)
        #expect(reports[1]["name"] as? String == "Scale")
        #expect(reports[1]["connectable"] as? Bool == false)
    }

    @Test func aclCarryingAnATTNotification() async throws {
        // ACL handle 0x0040, L2CAP length 5 on CID 4, Handle Value Notification of HRM 06 5A.
        let result = try await CLI.run(["decode", "hci", "02 4000 0900 0500 0400 1b 1000 065a", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try CLI.jsonObject(try #require(result.stdoutLines.first))
        #expect(object["type"] as? String == "acl")
        #expect(object["channel"] as? Int == 4)
        let att = try #require(object["att"] as? [String: Any])
        #expect(att["opcode"] as? Int == 0x1B)
        #expect(att["handle"] as? String == "0x0010")
        #expect(att["value"] as? String == "065a")
    }

    @Test func unknownPacketTypeNamesByteZero() async throws {
        let result = try await CLI.run(["decode", "hci", "0c0001"])
        #expect(result.status == 65)
        #expect(result.stderrLines.count == 1)
        #expect(result.stderr.contains("byte 0"))
    }

    @Test func eventLengthMismatchIsMalformed() async throws {
        let result = try await CLI.run(["decode", "hci", "040e05 01030c00"])
        #expect(result.status == 65)
        #expect(result.stderrLines.count == 1)
    }

    // MARK: att

    @Test func attErrorResponse() async throws {
        let result = try await CLI.run(["decode", "att", "01 08 0100 0a", "--json"])
        #expect(result.status == 0)
        let object = try CLI.jsonObject(try #require(result.stdoutLines.first))
        #expect(object["name"] as? String == "Error Response")
        #expect(object["errorName"] as? String == "Attribute Not Found")
        #expect(object["handle"] as? String == "0x0001")
    }

    @Test func attTruncated() async throws {
        let result = try await CLI.run(["decode", "att", "0a01"])
        #expect(result.status == 65)
        #expect(result.stderrLines.count == 1)
        #expect(result.stderr.contains("byte 1"))
    }

    // MARK: value

    @Test("decode value: a characteristic or descriptor value by its UUID, as what it means")
    func valuesByUUID() async throws {
        for (arguments, line) in [
            (["2A19", "57"], "Battery Level: 87 %"),
            (["2a38", "01"], "Body Sensor Location: chest"),
            (["2A01", "4103"], "Appearance: Heart Rate Sensor: Heart Rate Belt (0x0341)"),
            (["2A29", "726177626c652d73696d"], "Manufacturer Name String: \"rawble-sim\""),
            (["2A50", "01590034121001"], "PnP ID: vendor 0x0059 Nordic Semiconductor ASA (Bluetooth SIG), product 0x1234, version 1.1.0"),
            (["2A23", "0100000000C9A000"], "System ID: manufacturer 0x0000000001, OUI 00:A0:C9"),
            (["2A37", "10480004"], "Heart Rate Measurement: 72 bpm, contact unsupported, RR 1000.0 ms"),
            (["2A1C", "00", "6D", "01", "00", "FF"], "Temperature Measurement: 36.5 °C"),
            (["2A5B", "022C01000A"], "CSC Measurement: crank 300 revolutions (last at 2.500 s)"),
            (["2A53", "0000035A"], "RSC Measurement: walking 3.000 m/s, 90 steps/min"),
            (["2A05", "0100FFFF"], "Service Changed: handles 0x0001–0xFFFF"),
            (["2902", "0200"], "Client Characteristic Configuration: indications"),
            (["2904", "0400AD27010601"], "Characteristic Presentation Format: uint8, percentage (27AD), exponent 0, Bluetooth SIG description main (0x0106)"),
            (["--as", "s16", "feff"], "s16: -2"),
            (["--as", "medfloat16", "6DF1"], "medfloat16: 36.5"),
        ] {
            let result = try await CLI.run(["decode", "value"] + arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.stdout == line + "\n", "\(arguments)")
        }
        // One value per argument, as the other kinds (single bytes form one value).
        let two = try await CLI.run(["decode", "value", "2A01", "4103", "4003"])
        #expect(two.stdout == "Appearance: Heart Rate Sensor: Heart Rate Belt (0x0341)\nAppearance: Heart Rate Sensor (0x0340)\n")
        ExitStatusTests.expectOneLine(try await CLI.run(["decode", "value", "2A19", "57", "64"]), status: 65,
                                      containing: "Battery Level: 1 unexpected trailing byte at byte 1")
    }

    @Test("decode value --json: uuid, name, value (hex) and decoded")
    func valueJSON() async throws {
        let result = try await CLI.run(["decode", "value", "2A38", "01", "--json"])
        #expect(result.stdout == #"{"uuid":"2A38","name":"Body Sensor Location","value":"01","decoded":{"location":"chest","code":1}}"# + "\n")
        let typed = try await CLI.run(["decode", "value", "--as", "u16", "0102", "--json"])
        #expect(typed.stdout == #"{"value":"0102","decoded":{"type":"u16","value":513}}"# + "\n")
    }

    @Test("decode value: bytes that do not fit are 65 naming the byte; an unknown UUID is 64 suggesting --as")
    func valueErrors() async throws {
        ExitStatusTests.expectOneLine(try await CLI.run(["decode", "value", "2A19", "65"]), status: 65,
                                      containing: "Battery Level: 101 % is above 100 % (reserved) at byte 0")
        ExitStatusTests.expectOneLine(try await CLI.run(["decode", "value", "2A50", "0159"]), status: 65,
                                      containing: "PnP ID: truncated: needs 2 bytes, 1 left at byte 1")
        ExitStatusTests.expectOneLine(try await CLI.run(["decode", "value", "2AFF", "01"]), status: 64,
                                      containing: "rawble knows no format for 2AFF (Luminous Flux): name a type with --as")
        ExitStatusTests.expectOneLine(try await CLI.run(["decode", "value", "2A19"]), status: 64,
                                      containing: "give a UUID and the value in hex")
        ExitStatusTests.expectOneLine(try await CLI.run(["decode", "value", "zz", "01"]), status: 64,
                                      containing: "'zz' is not a UUID")
        ExitStatusTests.expectOneLine(try await CLI.run(["decode", "value", "--as", "u9", "01"]), status: 64,
                                      containing: "'u9' is not a type")
    }

    // MARK: btsnoop

    private func writeCapture(_ records: [BtsnoopRecord], truncateBy: Int = 0) throws -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("rawble-decode-\(UUID().uuidString).btsnoop").path
        var bytes = BtsnoopWriter.file(records: records)
        bytes.removeLast(truncateBy)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    private var session: [BtsnoopRecord] {
        let base: Int64 = 1_763_800_000_000_000  // 2025-11-22T08:26:40Z
        return [
            BtsnoopRecord(packet: H4Packet(type: .command, bytes: [0x03, 0x0C, 0x00]), direction: .sent, unixMicroseconds: base),
            BtsnoopRecord(packet: H4Packet(type: .event, bytes: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]),
                          direction: .received, unixMicroseconds: base + 1_500),
            BtsnoopRecord(packet: H4Packet(type: .acl, bytes: [0x40, 0x20, 0x09, 0x00, 0x05, 0x00, 0x04, 0x00, 0x1B, 0x10, 0x00, 0x06, 0x5A]),
                          direction: .received, unixMicroseconds: base + 2_000_123),
            // An event whose length byte lies: reported in its record, the rest still decodes.
            BtsnoopRecord(packet: H4Packet(type: .event, bytes: [0x0E, 0x09, 0x01]), direction: .received, unixMicroseconds: base + 3_000_000),
        ]
    }

    @Test func btsnoopRecordsAsJSONLines() async throws {
        let path = try writeCapture(session)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await CLI.run(["decode", "btsnoop", path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try result.stdoutLines.map(CLI.jsonObject)
        #expect(lines.count == 4)
        #expect(lines[0]["index"] as? Int == 1)
        #expect(lines[0]["time"] as? String == "2025-11-22T08:26:40.000000Z")
        #expect(lines[0]["direction"] as? String == "sent")
        #expect(lines[0]["type"] as? String == "command")
        #expect(lines[0]["name"] as? String == "Reset")
        #expect(lines[1]["direction"] as? String == "received")
        #expect(lines[1]["type"] as? String == "event")
        #expect(lines[2]["time"] as? String == "2025-11-22T08:26:42.000123Z")
        let att = try #require(lines[2]["att"] as? [String: Any])
        #expect(att["name"] as? String == "Handle Value Notification")
        #expect(att["value"] as? String == "065a")
        #expect(lines[3]["error"] is String)
        #expect(result.stderrLines.count == 1)  // "1 of 4 records did not decode"
    }

    @Test func btsnoopTruncatedFileShowsRecordsBeforeTheBreak() async throws {
        let path = try writeCapture(session, truncateBy: 2)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await CLI.run(["decode", "btsnoop", path])
        #expect(result.status == 65)
        #expect(result.stdoutLines.count == 3)
        #expect(result.stderrLines.count == 1)
    }

    @Test func btsnoopCharacteristicDeclarationsDecodedFromTheirRequest() async throws {
        // Read By Type Request for 2803 on handles 1-FFFF, then its response with the Heart Rate
        // Measurement declaration: notify, value handle 0x0010, UUID 2A37.
        let request: [UInt8] = [0x40, 0x00, 0x0B, 0x00, 0x07, 0x00, 0x04, 0x00, 0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28]
        let response: [UInt8] = [0x40, 0x20, 0x0D, 0x00, 0x09, 0x00, 0x04, 0x00, 0x09, 0x07, 0x0F, 0x00, 0x10, 0x10, 0x00, 0x37, 0x2A]
        let path = try writeCapture([
            BtsnoopRecord(packet: H4Packet(type: .acl, bytes: request), direction: .sent, unixMicroseconds: 0),
            BtsnoopRecord(packet: H4Packet(type: .acl, bytes: response), direction: .received, unixMicroseconds: 1),
        ])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await CLI.run(["decode", "btsnoop", path, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try result.stdoutLines.map(CLI.jsonObject)
        let att = try #require(lines.last?["att"] as? [String: Any])
        let entry = try #require((att["entries"] as? [[String: Any]])?.first)
        #expect(entry["valueHandle"] as? String == "0x0010")
        #expect(entry["uuid"] as? String == "2A37")
        #expect(entry["properties"] as? [String] == ["notify"])
    }

    /// A capture that is not a regular file (a FIFO a capture tool writes into, a pipe on
    /// standard input) has no size beforehand: it is read to its end, not refused as unreadable.
    @Test("a capture from a FIFO and from standard input (`-`) decodes as from a file")
    func btsnoopFromAFIFOAndStandardInput() async throws {
        let path = try writeCapture(session)
        let fifo = path + ".fifo"
        defer { for file in [path, fifo] { try? FileManager.default.removeItem(atPath: file) } }
        #expect(mkfifo(fifo, 0o600) == 0)
        // The writer's open waits for the reader (the binary): the shell holds it, not the test.
        let throughFIFO = try await CLI.run(["decode", "btsnoop", fifo, "--json"],
                                            launcher: ["/bin/sh", "-c", #"cat "$0" > "$1" & shift; exec "$@""#, path, fifo])
        #expect(throughFIFO.status == 0, "\(throughFIFO.stderr)")
        #expect(throughFIFO.stdoutLines.count == 4, "\(throughFIFO.stdout)")
        let throughStdin = try await CLI.run(["decode", "btsnoop", "-", "--json"],
                                             launcher: ["/bin/sh", "-c", #"file="$0"; exec "$@" < "$file""#, path])
        #expect(throughStdin.status == 0, "\(throughStdin.stderr)")
        #expect(throughStdin.stdoutLines == throughFIFO.stdoutLines)
    }

    @Test func btsnoopMissingFile() async throws {
        let result = try await CLI.run(["decode", "btsnoop", "/nonexistent/capture.log"])
        #expect(result.status == 66)
        #expect(result.stderrLines.count == 1)
    }

    @Test func btsnoopNotACapture() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-not-btsnoop-\(UUID().uuidString)").path
        try Data("hello, this is not a capture".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await CLI.run(["decode", "btsnoop", path])
        #expect(result.status == 65)
        #expect(result.stderrLines.count == 1)
    }
}
