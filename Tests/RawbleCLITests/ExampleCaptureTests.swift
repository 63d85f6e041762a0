import Foundation
import RawbleTestSupport
import RawbleWire
import Testing

/// `rawble decode btsnoop` on a capture nobody on this project wrote: the central's HCI traffic
/// of a heart-rate session between two Google Bumble devices over Bumble's virtual controllers
/// (`Scripts/record-example-capture`). The strap's side of the session — what it advertised and
/// the Heart Rate Measurements it notified — is in `heart-rate-session.expected.json`, written
/// by the same script from the script of measurements it sent, not from the capture.
@Suite("Example capture (Bumble heart-rate session)")
struct ExampleCaptureTests {
    static let examples = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // RawbleCLITests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // package root
        .appendingPathComponent("Examples")
    static let capture = examples.appendingPathComponent("heart-rate-session.btsnoop")
    static let expectedFile = examples.appendingPathComponent("heart-rate-session.expected.json")

    struct Expected {
        struct Measurement: Equatable, CustomStringConvertible {
            var bpm: Int
            var contact: String
            var energyExpended: Int?
            var rrIntervals: [Int]
            var description: String {
                "\(bpm) bpm, contact \(contact), energy \(energyExpended.map(String.init) ?? "none"), RR \(rrIntervals)"
            }
        }
        var strapAddress: String
        var strapName: String
        var services: [String]
        var bodySensorLocation: Int
        var manufacturerName: String
        var batteryLevel: Int
        var measurements: [Measurement]
    }

    static func loadExpected() throws -> Expected {
        let root = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: expectedFile)) as? [String: Any])
        let strap = try #require(root["strap"] as? [String: Any])
        let list = try #require(root["measurements"] as? [[String: Any]])
        let measurements = try list.map { m in
            Expected.Measurement(
                bpm: try #require(m["bpm"] as? Int),
                contact: try #require(m["contact"] as? String),
                energyExpended: m["energyExpended"] as? Int,
                rrIntervals: try #require(m["rrIntervals"] as? [Int]))
        }
        return Expected(
            strapAddress: try #require(strap["address"] as? String),
            strapName: try #require(strap["name"] as? String),
            services: try #require(strap["services"] as? [String]),
            bodySensorLocation: try #require(strap["bodySensorLocation"] as? Int),
            manufacturerName: try #require(strap["manufacturerName"] as? String),
            batteryLevel: try #require(strap["batteryLevel"] as? Int),
            measurements: measurements)
    }

    /// Every record of `rawble decode btsnoop <capture> --json`, in order.
    static func decodedRecords() async throws -> [[String: Any]] {
        let result = try await CLI.run(["decode", "btsnoop", capture.path, "--json"])
        #expect(!result.killedBySignal)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.isEmpty, "stderr: \(result.stderr)")
        return try result.stdoutLines.map(CLI.jsonObject)
    }

    static func handle(_ value: Any?) -> Int? {
        guard let text = value as? String, text.hasPrefix("0x") else { return nil }
        return Int(text.dropFirst(2), radix: 16)
    }

    /// Paths of every `error` that reports a decoding failure, anywhere in a record. An ATT
    /// Error Response's `error` (its integer error code) is protocol content, not a failure.
    static func decodeErrors(in value: Any, path: String = "") -> [String] {
        if let object = value as? [String: Any] {
            var found: [String] = []
            if let error = object["error"] {
                let isATTErrorCode = object["opcode"] as? Int == 0x01 && error is Int && !(error is Bool)
                if !isATTErrorCode { found.append("\(path).error = \(error)") }
            }
            for (key, child) in object where key != "error" {
                found += decodeErrors(in: child, path: "\(path).\(key)")
            }
            return found
        }
        if let array = value as? [Any] {
            return array.enumerated().flatMap { decodeErrors(in: $1, path: "\(path)[\($0)]") }
        }
        return []
    }

    static func att(_ record: [String: Any]) -> [String: Any]? { record["att"] as? [String: Any] }

    /// Characteristic declarations (`2803`) discovered with Read By Type: UUID → value handle.
    static func characteristicValueHandles(_ records: [[String: Any]]) throws -> [String: Int] {
        var handles: [String: Int] = [:]
        var lastReadByTypeRequest: String?
        for record in records {
            guard let att = att(record), let opcode = att["opcode"] as? Int else { continue }
            if opcode == 0x08 { lastReadByTypeRequest = att["type"] as? String }
            guard opcode == 0x09, lastReadByTypeRequest == "2803" else { continue }
            for entry in try #require(att["entries"] as? [[String: Any]]) {
                // Characteristic declaration value: properties u8, value handle u16 LE, UUID.
                let value = bytes(try #require(entry["value"] as? String))
                guard value.count == 5 else { continue }
                let uuid = String(format: "%02X%02X", value[4], value[3])
                handles[uuid] = Int(value[1]) | Int(value[2]) << 8
            }
        }
        return handles
    }

    @Test func everyRecordDecodesWithoutError() async throws {
        let records = try await Self.decodedRecords()
        #expect(records.count >= 100, "a whole session, not a fragment: \(records.count) records")
        #expect(records.map { $0["index"] as? Int } == Array(1...records.count).map { Optional($0) })
        for record in records {
            let errors = Self.decodeErrors(in: record)
            #expect(errors.isEmpty, "record \(record["index"] ?? "?"): \(errors)")
        }
        let types = Set(records.compactMap { $0["type"] as? String })
        #expect(types == ["command", "event", "acl"])
    }

    @Test func advertisingReportNamesTheStrap() async throws {
        let expected = try Self.loadExpected()
        let reports = try await Self.decodedRecords()
            .filter { ($0["name"] as? String)?.hasPrefix("LE") == true }
            .compactMap { $0["reports"] as? [[String: Any]] }
            .flatMap { $0 }
        #expect(!reports.isEmpty, "no LE advertising report in the capture")
        let strap = reports.filter {
            ($0["address"] as? String)?.uppercased() == expected.strapAddress.uppercased()
                && $0["addressType"] as? String == "random"
                && $0["name"] as? String == expected.strapName
                && Set($0["services"] as? [String] ?? []).isSuperset(of: expected.services)
        }
        #expect(!strap.isEmpty, "no report from \(expected.strapAddress) \"\(expected.strapName)\" with \(expected.services): \(reports)")
        #expect(strap.contains { $0["connectable"] as? Bool == true }, "the strap's connectable advertisement")
    }

    @Test func discoveryReadsAndControlPointWrite() async throws {
        let expected = try Self.loadExpected()
        let records = try await Self.decodedRecords()

        // Primary services discovered with Read By Group Type.
        let services = records.compactMap(Self.att)
            .filter { $0["opcode"] as? Int == 0x11 }
            .flatMap { $0["entries"] as? [[String: Any]] ?? [] }
            .compactMap { $0["uuid"] as? String }
        for uuid in ["180D", "180A", "180F"] { #expect(services.contains(uuid), "service \(uuid) in \(services)") }

        let handles = try Self.characteristicValueHandles(records)
        for uuid in ["2A37", "2A38", "2A39", "2A29", "2A24", "2A19"] {
            #expect(handles[uuid] != nil, "characteristic \(uuid) in \(handles)")
        }

        // Each Read Request sent, paired with the Read Response that follows it.
        var reads: [Int: [UInt8]] = [:]
        var pending: Int?
        for att in records.compactMap(Self.att) {
            switch att["opcode"] as? Int {
            case 0x0A: pending = Self.handle(att["handle"])
            case 0x0B:
                if let handle = pending { reads[handle] = bytes(try #require(att["value"] as? String)) }
                pending = nil
            default: break
            }
        }
        #expect(reads[try #require(handles["2A38"])] == [UInt8(expected.bodySensorLocation)])
        #expect(reads[try #require(handles["2A29"])] == Array(expected.manufacturerName.utf8))
        #expect(reads[try #require(handles["2A19"])] == [UInt8(expected.batteryLevel)])

        // Reset Energy Expended written to the Heart Rate Control Point.
        let controlPoint = try #require(handles["2A39"])
        let writes = records.compactMap(Self.att).filter {
            $0["opcode"] as? Int == 0x12 && Self.handle($0["handle"]) == controlPoint
        }
        #expect(writes.map { $0["value"] as? String } == ["01"])
    }

    @Test func notificationsEqualTheScriptTheStrapSent() async throws {
        let expected = try Self.loadExpected()
        let records = try await Self.decodedRecords()
        let hrmHandle = try #require(try Self.characteristicValueHandles(records)["2A37"],
                                     "no characteristic declaration for 2A37 in the discovery")

        let notifications = records.filter {
            $0["direction"] as? String == "received" && Self.att($0)?["opcode"] as? Int == 0x1B
        }
        // The strap notifies nothing but the Heart Rate Measurement.
        for record in notifications {
            #expect(Self.handle(Self.att(record)?["handle"]) == hrmHandle, "record \(record["index"] ?? "?")")
        }

        let received = try notifications.map { record in
            let value = bytes(try #require(Self.att(record)?["value"] as? String))
            let m = try HeartRateMeasurement.decode(value[...])
            return Expected.Measurement(
                bpm: Int(m.bpm),
                contact: m.contact.name,
                energyExpended: m.energyExpended.map(Int.init),
                rrIntervals: m.rrIntervals.map { Int($0.rawValue) })
        }
        #expect(received.count == expected.measurements.count)
        for (i, (got, want)) in zip(received, expected.measurements).enumerated() {
            #expect(got == want, "measurement \(i + 1)")
        }
        // The script covers what it is meant to cover.
        #expect(expected.measurements.contains { $0.bpm > 255 })
        #expect(Set(expected.measurements.map(\.contact)) == ["detected", "not-detected", "unsupported"])
        #expect(Set(expected.measurements.map(\.rrIntervals.count)) == [0, 1, 2, 3])
        #expect(expected.measurements.contains { $0.energyExpended != nil })
    }

    /// `decode btsnoop` itself names the Heart Rate Measurement handle from the discovery it
    /// saw earlier in the capture and decodes each notification with the shared decoder.
    @Test func decodeBtsnoopShowsEachHeartBeat() async throws {
        let expected = try Self.loadExpected()
        let records = try await Self.decodedRecords()
        let beats = records.compactMap { Self.att($0)?["heartRate"] as? [String: Any] }
        #expect(beats.count == expected.measurements.count)
        for (got, want) in zip(beats, expected.measurements) {
            #expect(got["bpm"] as? Int == want.bpm)
            #expect(got["contact"] as? String == want.contact)
            #expect((got["rrIntervals"] as? [Double])?.count == want.rrIntervals.count)
        }
        let location = records.compactMap { Self.att($0)?["bodySensorLocation"] as? String }
        #expect(location == ["chest"])
    }
}
