// The measured work, shared by the package-benchmark suite (WireBenchmarks) and the
// plain-clock rate tool (WireRates), so both time exactly the same loops.
//
// Inputs are read and hex-decoded once, at load time; the loops only decode. Each loop folds
// what it read into a checksum that the caller consumes, so nothing can be optimised away.
import Foundation
import RawbleWire

/// The benchmark inputs (Benchmarks/Inputs/*.hex, written by Reference/make_inputs.py with
/// Bumble's encoders): one byte array per line.
public struct WireInputs: Sendable {
    /// Heart Rate Measurement values (1,000).
    public let hrm: [[UInt8]]
    /// H4 packets (type byte 0x04 + event): LE Advertising Report events (2,000).
    public let advertisingEvents: [[UInt8]]
    /// Reports in `advertisingEvents` (6,933).
    public let advertisingReportCount: Int
    /// ATT PDUs (1,000).
    public let att: [[UInt8]]

    /// The Inputs directory, found from this source file's location.
    public static var directory: URL {
        URL(fileURLWithPath: #filePath)  // Benchmarks/Sources/WireWorkloads/Workloads.swift
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Inputs")
    }

    /// Loads and checks every input: each must decode without error (the loops then count
    /// on that), and the report count must match the events. (Advertising Data is decoded
    /// tolerantly: make_inputs.py cuts data longer than 31 bytes at byte 31, so some reports
    /// end in a truncated AD structure; see ``advertisingDataErrorCount``.)
    public static func load(from directory: URL = WireInputs.directory) -> WireInputs {
        let inputs = WireInputs(
            hrm: readHexLines(directory.appendingPathComponent("hrm.hex")),
            advertisingEvents: readHexLines(directory.appendingPathComponent("adv-reports.hex")),
            att: readHexLines(directory.appendingPathComponent("att.hex")))
        inputs.validate()
        return inputs
    }

    init(hrm: [[UInt8]], advertisingEvents: [[UInt8]], att: [[UInt8]]) {
        self.hrm = hrm
        self.advertisingEvents = advertisingEvents
        self.att = att
        // Num_Reports is the byte after 04 3E len 02.
        self.advertisingReportCount = advertisingEvents.reduce(0) { $0 + Int($1[4]) }
    }

    /// Reports whose Advertising Data has an error (a truncated last structure).
    public var advertisingDataErrorCount: Int {
        var count = 0
        for packet in advertisingEvents {
            guard let h4 = try? H4Packet.decode(packet),
                  case .le(.advertisingReport(let reports))? = try? HCIEvent.decode(h4.bytes) else { continue }
            for report in reports where AdvertisingData(decoding: report.data).error != nil { count += 1 }
        }
        return count
    }

    func validate() {
        for value in hrm {
            do { _ = try HeartRateMeasurement.decode(value) } catch {
                fatalError("hrm.hex: \(Hex.encode(value)): \(error)")
            }
        }
        var reports = 0
        for packet in advertisingEvents {
            do {
                let h4 = try H4Packet.decode(packet)
                guard case .le(.advertisingReport(let list)) = try HCIEvent.decode(h4.bytes) else {
                    fatalError("adv-reports.hex: not an LE Advertising Report: \(Hex.encode(packet))")
                }
                reports += list.count
            } catch {
                fatalError("adv-reports.hex: \(Hex.encode(packet)): \(error)")
            }
        }
        precondition(reports == advertisingReportCount, "report count \(reports) != \(advertisingReportCount)")
        for pdu in att {
            do { _ = try ATTPDU.decode(pdu) } catch {
                fatalError("att.hex: \(Hex.encode(pdu)): \(error)")
            }
        }
    }

    /// The first events of `advertisingEvents` holding exactly `reports` reports (the last one
    /// swapped for a later event with the right count if needed): package-benchmark's scaling
    /// factor is a power of 1000, so its per-report figures use a 1,000-report slice.
    public func advertisingEvents(holdingExactly reports: Int) -> [[UInt8]] {
        var chosen: [[UInt8]] = []
        var total = 0
        for event in advertisingEvents {
            let n = Int(event[4])
            if total + n <= reports {
                chosen.append(event)
                total += n
            }
            if total == reports { return chosen }
        }
        fatalError("cannot pick events with exactly \(reports) reports")
    }
}

/// Reads a file of hex lines (blank lines skipped) into byte arrays.
func readHexLines(_ url: URL) -> [[UInt8]] {
    guard let text = try? String(contentsOf: url, encoding: .utf8) else {
        fatalError("cannot read \(url.path)")
    }
    return text.split(whereSeparator: \.isNewline).compactMap { line -> [UInt8]? in
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { return nil }
        guard let bytes = try? Hex.decode(trimmed) else { fatalError("bad hex line in \(url.lastPathComponent): \(trimmed)") }
        return bytes
    }
}

// MARK: - The measured loops (one pass over the given items)

/// Decodes every Heart Rate Measurement value; folds bpm, energy and the sum of the RR
/// intervals into the checksum. Per item: one `HeartRateMeasurement.decode`.
@inline(never)
public func decodeHeartRateMeasurements(_ values: [[UInt8]]) -> UInt64 {
    var checksum: UInt64 = 0
    for value in values {
        guard let m = try? HeartRateMeasurement.decode(value) else { checksum &+= 1; continue }
        var rrSum: UInt64 = 0
        for rr in m.rrIntervals { rrSum &+= UInt64(rr.rawValue) }
        checksum &+= UInt64(m.bpm) &+ UInt64(m.energyExpended ?? 0) &+ rrSum
    }
    return checksum
}

/// Decodes every H4 packet and its HCI event, and reads each report's address, RSSI and data
/// length. Per report (reports/event 1–6): its share of `H4Packet.decode` + `HCIEvent.decode`.
@inline(never)
public func parseAdvertisingReports(_ packets: [[UInt8]]) -> UInt64 {
    var checksum: UInt64 = 0
    for packet in packets {
        guard let h4 = try? H4Packet.decode(packet),
              case .le(.advertisingReport(let reports))? = try? HCIEvent.decode(h4.bytes)
        else { checksum &+= 1; continue }
        for report in reports {
            checksum &+= report.address.value &+ UInt64(bitPattern: Int64(report.rssi ?? 0)) &+ UInt64(report.data.count)
        }
    }
    return checksum
}

/// As ``parseAdvertisingReports(_:)``, plus `AdvertisingData(decoding:)` on each report's
/// data, reading the local name's byte count and the service UUID count
/// (`AdvertisingData.serviceUUIDs`, an array).
@inline(never)
public func parseAdvertisingReportsAndData(_ packets: [[UInt8]]) -> UInt64 {
    var checksum: UInt64 = 0
    for packet in packets {
        guard let h4 = try? H4Packet.decode(packet),
              case .le(.advertisingReport(let reports))? = try? HCIEvent.decode(h4.bytes)
        else { checksum &+= 1; continue }
        for report in reports {
            checksum &+= report.address.value &+ UInt64(bitPattern: Int64(report.rssi ?? 0)) &+ UInt64(report.data.count)
            let ad = AdvertisingData(decoding: report.data)
            checksum &+= UInt64(ad.name?.bytes.count ?? 0) &+ UInt64(ad.serviceUUIDs.count)
        }
    }
    return checksum
}

/// Decodes every ATT PDU; folds its opcode into the checksum. Per item: one `ATTPDU.decode`.
@inline(never)
public func decodeATTPDUs(_ pdus: [[UInt8]]) -> UInt64 {
    var checksum: UInt64 = 0
    for bytes in pdus {
        guard let pdu = try? ATTPDU.decode(bytes) else { checksum &+= 1; continue }
        checksum &+= UInt64(pdu.opcode.rawValue)
    }
    return checksum
}

/// Keeps a result alive without the optimiser seeing through it (for WireRates; the
/// package-benchmark suite uses its own `blackHole`).
@inline(never) @_optimize(none)
public func consume(_ value: UInt64) {}
