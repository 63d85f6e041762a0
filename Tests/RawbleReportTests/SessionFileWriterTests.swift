import RawbleReport
import RawbleWire
import Testing

/// The writer beside the reader: the lines `rawble hr --csv`/`--jsonl` write, exactly, and
/// read back by ``SessionFileReader`` as the measurements written.
@Suite("Session files written: CSV and JSON lines, read back")
struct SessionFileWriterTests {
    /// 2026-11-22T05:14:12Z in microseconds since 1970.
    static let t0: Int64 = 1_795_324_452_000_000

    /// Heart Rate Measurement values: 8-bit bpm with contact and RR, 16-bit bpm with energy.
    static let values: [[UInt8]] = [[0x16, 0x48, 0x41, 0x03, 0x2D, 0x03], [0x0D, 0x49, 0x00, 0x08, 0x00]]

    @Test("CSV: the header once, then one line per measurement, RR in whole milliseconds")
    func csv() throws {
        var writer = SessionFileWriter(format: .csv)
        #expect(writer.header == "time,bpm,contact,energy_expended_kj,rr_intervals_ms,raw\n")
        let first = try HeartRateMeasurement.decode(Self.values[0])
        #expect(writer.line(for: first, raw: Self.values[0], time: Self.t0 + 250_001)
                == "2026-11-22T05:14:12.250001Z,72,detected,,813 794,164841032d03\n")
        let second = try HeartRateMeasurement.decode(Self.values[1])
        #expect(writer.line(for: second, raw: Self.values[1], time: Self.t0)
                == "2026-11-22T05:14:12.000000Z,73,not-detected,8,,0d49000800\n")
    }

    @Test("JSON lines: no header, one measurement event a line, RR in seconds")
    func jsonLines() throws {
        var writer = SessionFileWriter(format: .jsonLines)
        #expect(writer.header == nil)
        let measurement = try HeartRateMeasurement.decode(Self.values[0])
        #expect(writer.line(for: measurement, raw: Self.values[0], time: Self.t0)
                == #"{"event":"measurement","time":"2026-11-22T05:14:12.000000Z","bpm":72,"contact":"detected","energyExpended":null,"rrIntervals":[0.8134765625,0.7939453125],"raw":"164841032d03"}"# + "\n")
    }

    @Test("a file of several straps: CSV has strap and strap_name after time (a name with a comma or a quote quoted); JSON lines have address and name after time (escaped)")
    func labelled() throws {
        let measurement = try HeartRateMeasurement.decode(Self.values[1])
        var csv = SessionFileWriter(format: .csv, labelled: true)
        #expect(csv.header == "time,strap,strap_name,bpm,contact,energy_expended_kj,rr_intervals_ms,raw\n")
        #expect(csv.line(for: measurement, raw: Self.values[1], time: Self.t0, strap: StrapLabel(address: "C0:B1:E0:00:01:02", name: "Team \"B\", 2"))
                == "2026-11-22T05:14:12.000000Z,C0:B1:E0:00:01:02,\"Team \"\"B\"\", 2\",73,not-detected,8,,0d49000800\n")
        #expect(csv.line(for: measurement, raw: Self.values[1], time: Self.t0, strap: StrapLabel(address: "C0:B1:E0:00:01:03", name: nil))
                == "2026-11-22T05:14:12.000000Z,C0:B1:E0:00:01:03,,73,not-detected,8,,0d49000800\n")
        var lines = SessionFileWriter(format: .jsonLines, labelled: true)
        #expect(lines.line(for: measurement, raw: Self.values[1], time: Self.t0, strap: StrapLabel(address: "C0:B1:E0:00:01:02", name: "a\\b\"c\u{1}"))
                == #"{"event":"measurement","time":"2026-11-22T05:14:12.000000Z","address":"C0:B1:E0:00:01:02","name":"a\\b\"c","bpm":73,"contact":"not-detected","energyExpended":8,"rrIntervals":[],"raw":"0d49000800"}"# + "\n")
        // A writer that does not label ignores the strap given.
        var plain = SessionFileWriter(format: .jsonLines)
        #expect(!plain.line(for: measurement, raw: Self.values[1], time: Self.t0, strap: StrapLabel(address: "C0:B1:E0:00:01:02", name: "x")).contains("address"))
    }

    @Test("a strap's name is cleaned: control characters out, at most 64 bytes in whole characters, spaces trimmed, empty is none")
    func strapNames() {
        #expect(StrapLabel(address: "A", name: "  Polar\u{0}H10\n ").name == "PolarH10")
        #expect(StrapLabel(address: "A", name: String(repeating: "é", count: 40)).name?.utf8.count == 64)
        #expect(StrapLabel(address: "A", name: " \u{7} ").name == nil)
        #expect(StrapLabel(address: "A", name: nil).description == "A")
    }

    @Test("both formats read back as the samples written, times to the microsecond", arguments: [SessionFileFormat.csv, .jsonLines])
    func roundTrip(format: SessionFileFormat) throws {
        var writer = SessionFileWriter(format: format)
        var bytes = Array((writer.header ?? "").utf8)
        var written: [(HeartRateMeasurement, Int64)] = []
        for index in 0..<100 {
            let raw = Self.values[index % 2]
            let measurement = try HeartRateMeasurement.decode(raw)
            let time = Self.t0 + Int64(index) * 1_000_003
            writer.append(measurement, raw: raw, time: time, to: &bytes)
            written.append((measurement, time))
        }
        let (samples, summary) = try SessionFileReader.read(bytes)
        #expect(summary.format == format)
        #expect(summary.leftOut.isEmpty)
        #expect(samples.count == written.count)
        for (sample, (measurement, time)) in zip(samples, written) {
            #expect(sample.time == time)
            #expect(sample.bpm == measurement.bpm)
            #expect(sample.contact == measurement.contact)
            #expect(sample.energyExpended == measurement.energyExpended)
            #expect(sample.rrIntervals.count == measurement.rrIntervals.count)
        }
    }
}
