import Foundation
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

/// Writes a btsnoop file with this module's writer and checks that Wireshark's decoder
/// (tshark) reads the same packets, directions, timestamps and heart-rate values. Without
/// tshark it fails (run Scripts/bootstrap); there is no switch to skip it.
@Suite("btsnoop read by tshark")
struct BtsnoopTsharkTests {

    /// An ACL packet from the controller (PB `10`, handle 0x0040) carrying `att` on CID 4.
    static func attFromPeer(_ att: [UInt8], sent: Bool = false) -> H4Packet {
        let l2cap: [UInt8] = [UInt8(att.count), 0x00, 0x04, 0x00] + att
        let handle: [UInt8] = sent ? [0x40, 0x00] : [0x40, 0x20]
        return H4Packet(type: .acl, bytes: handle + [UInt8(l2cap.count), 0x00] + l2cap)
    }

    static let hrmDetected: [UInt8] = [0x06, 0x48]
    static let hrmFull: [UInt8] = [0x1E, 0x6D, 0x08, 0x00, 0x31, 0x02, 0x34, 0x02, 0x37, 0x02]

    static func capture() -> [UInt8] {
        let name = Array("HR Band".utf8)
        let ad: [UInt8] = [0x02, 0x01, 0x06, UInt8(name.count + 1), 0x09] + name + [0x03, 0x03, 0x0D, 0x18]
        let report: [UInt8] =
            [0x02, 0x01, 0x00, 0x00, 0xFF, 0xEE, 0xDD, 0xCC, 0xBB, 0xAA, UInt8(ad.count)] + ad + [0xC4]
        let connected: [UInt8] = [
            0x01, 0x00, 0x40, 0x00, 0x00, 0x00, 0xFF, 0xEE, 0xDD, 0xCC, 0xBB, 0xAA, 0x18, 0x00, 0x00, 0x00,
            0x48, 0x00, 0x00,
        ]
        let packets: [(H4Packet, BtsnoopRecord.Direction)] = [
            (H4Packet(type: .command, bytes: [0x03, 0x0C, 0x00]), .sent),  // Reset
            (H4Packet(type: .event, bytes: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]), .received),
            (H4Packet(type: .event, bytes: [0x3E, UInt8(report.count)] + report), .received),
            (H4Packet(type: .event, bytes: [0x3E, UInt8(connected.count)] + connected), .received),
            // Discovery, so Wireshark knows handle 0x0010 is the Heart Rate Measurement value.
            (attFromPeer([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28], sent: true), .sent),
            (attFromPeer([0x11, 0x06, 0x0E, 0x00, 0x13, 0x00, 0x0D, 0x18]), .received),
            (attFromPeer([0x08, 0x0E, 0x00, 0x13, 0x00, 0x03, 0x28], sent: true), .sent),
            (attFromPeer([0x09, 0x07, 0x0F, 0x00, 0x10, 0x10, 0x00, 0x37, 0x2A]), .received),
            (attFromPeer([0x1B, 0x10, 0x00] + hrmDetected), .received),
            (attFromPeer([0x1B, 0x10, 0x00] + hrmFull), .received),
        ]
        let records = packets.enumerated().map { i, entry in
            BtsnoopRecord(
                packet: entry.0, direction: entry.1, unixMicroseconds: 1_700_000_000_000_000 + Int64(i) * 1_500)
        }
        return BtsnoopWriter.file(datalink: .hciUART, records: records)
    }

    @Test func tsharkDecodesTheWrittenCapture() async throws {
        let tshark = try TestRequirements.tshark()
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("rawble-\(UUID().uuidString).btsnoop")
        try Data(Self.capture()).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }

        let fields = [
            "frame.number", "hci_h4.direction", "hci_h4.type", "bthci_cmd.opcode", "bthci_evt.code",
            "bthci_evt.le_meta_subevent", "bthci_evt.opcode", "bthci_evt.status",
            "btcommon.eir_ad.entry.device_name", "bthci_evt.bd_addr", "bthci_acl.chandle", "btl2cap.cid",
            "btatt.opcode", "btatt.handle", "btatt.heart_rate_measurement.value.8",
            "btatt.heart_rate_measurement.flags.sensor_contact_status.contact",
            "btatt.heart_rate_measurement.energy_expended", "btatt.heart_rate_measurement.rr_interval",
            "frame.time_epoch",
        ]
        let arguments = ["-r", url.path, "-T", "fields", "-E", "separator=|"] + fields.flatMap { ["-e", $0] }
        let (data, status) = try await within(seconds: 120) { try await runToEnd(tshark, arguments) }
        #expect(status == 0)

        let rows = String(decoding: data, as: UTF8.self).split(separator: "\n").map {
            $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        }
        try #require(rows.count == 10, "tshark rows: \(rows)")
        try #require(rows.allSatisfy { $0.count == fields.count })
        func field(_ frame: Int, _ name: String) -> String {
            rows[frame - 1][fields.firstIndex(of: name)!]
        }

        // Directions (bit 0 of the record flags) and packet types.
        #expect(rows.map { $0[1] } == ["0x00", "0x01", "0x01", "0x01", "0x00", "0x01", "0x00", "0x01", "0x01", "0x01"])
        #expect(rows.map { $0[2] } == ["0x01", "0x04", "0x04", "0x04"] + Array(repeating: "0x02", count: 6))
        // Timestamps: btsnoop time minus 0x00DCDDB30F2F8000 is Unix time.
        #expect(field(1, "frame.time_epoch") == "1700000000.000000000")
        #expect(field(4, "frame.time_epoch") == "1700000000.004500000")
        // HCI Reset and its Command Complete.
        #expect(field(1, "bthci_cmd.opcode") == "0x0c03")
        #expect(field(2, "bthci_evt.code") == "0x0e")
        #expect(field(2, "bthci_evt.opcode") == "0x0c03")
        #expect(field(2, "bthci_evt.status") == "0x00")
        // LE Advertising Report with the name.
        #expect(field(3, "bthci_evt.code") == "0x3e")
        #expect(field(3, "bthci_evt.le_meta_subevent") == "0x02")
        #expect(field(3, "btcommon.eir_ad.entry.device_name") == "HR Band")
        #expect(field(3, "bthci_evt.bd_addr") == "aa:bb:cc:dd:ee:ff")
        #expect(field(4, "bthci_evt.le_meta_subevent") == "0x01")
        // ATT over L2CAP CID 4 on handle 0x0040.
        for frame in 5...10 {
            #expect(field(frame, "bthci_acl.chandle") == "0x0040")
            #expect(field(frame, "btl2cap.cid") == "0x0004")
        }
        #expect((5...10).map { field($0, "btatt.opcode") } == ["0x10", "0x11", "0x08", "0x09", "0x1b", "0x1b"])
        #expect(field(9, "btatt.handle") == "0x0010")

        // Heart Rate Measurements: tshark and our decoder agree.
        let first = try HeartRateMeasurement.decode(Self.hrmDetected)
        #expect(field(9, "btatt.heart_rate_measurement.value.8") == "\(first.bpm)")
        #expect(field(9, "btatt.heart_rate_measurement.value.8") == "72")
        #expect(field(9, "btatt.heart_rate_measurement.flags.sensor_contact_status.contact") == "1")
        let full = try HeartRateMeasurement.decode(Self.hrmFull)
        #expect(field(10, "btatt.heart_rate_measurement.value.8") == "\(full.bpm)")
        #expect(field(10, "btatt.heart_rate_measurement.energy_expended") == "\(full.energyExpended ?? 0)")
        #expect(field(10, "btatt.heart_rate_measurement.rr_interval")
            == full.rrIntervals.map { "\($0.rawValue)" }.joined(separator: ","))
        #expect(field(10, "btatt.heart_rate_measurement.rr_interval") == "561,564,567")
    }
}
