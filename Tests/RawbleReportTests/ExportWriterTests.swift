import RawbleReport
import RawbleWire
import Testing

/// The export writers byte for byte: EDF+'s header fields, record layout and TALs
/// (edfplus.info), the ECG session's EDF+ (records, run positions, acceleration, clipping,
/// R-peaks, gaps), and the RR text layouts. The files read back by pyedflib and NeuroKit2:
/// `RawbleCLITests/ReportExportTests`.
@Suite("report --export's writers: EDF+ and RR text, byte for byte")
struct ExportWriterTests {
    /// An EDF+ file's header and records, read by offsets (the test's own reading of the layout).
    struct Layout {
        var bytes: [UInt8]
        var signals: Int { Int(text(252, 4)) ?? 0 }
        var headerBytes: Int { 256 * (signals + 1) }

        func text(_ offset: Int, _ width: Int) -> String {
            String(decoding: bytes[offset..<(offset + width)], as: UTF8.self).trimmingSuffix(" ")
        }

        /// Signal `index`'s header field at `fieldOffset` (bytes of every earlier field per
        /// signal, times the signal count) of `width`.
        func signalField(_ index: Int, before: Int, width: Int) -> String {
            text(256 + before * signals + index * width, width)
        }

        var samplesPerRecord: [Int] {
            (0..<signals).map { Int(signalField($0, before: 16 + 80 + 8 * 5 + 80, width: 8)) ?? 0 }
        }

        var recordBytes: Int { samplesPerRecord.reduce(0) { $0 + 2 * $1 } }

        /// Record `record`'s samples of signal `signal`.
        func samples(record: Int, signal: Int) -> [Int16] {
            var offset = headerBytes + record * recordBytes
            for earlier in 0..<signal { offset += 2 * samplesPerRecord[earlier] }
            return (0..<samplesPerRecord[signal]).map { index in
                Int16(bitPattern: UInt16(bytes[offset + 2 * index]) | UInt16(bytes[offset + 2 * index + 1]) << 8)
            }
        }

        /// Record `record`'s annotation signal (the last), its TALs up to the zero padding.
        func annotations(record: Int) -> [UInt8] {
            let signal = signals - 1
            var offset = headerBytes + record * recordBytes
            for earlier in 0..<signal { offset += 2 * samplesPerRecord[earlier] }
            var tals = Array(bytes[offset..<(offset + 2 * samplesPerRecord[signal])])
            while tals.last == 0, tals.count >= 2, tals[tals.count - 2] == 0 { tals.removeLast() }
            return tals
        }
    }

    /// TAL bytes from a readable form: `|` is 0x14, `~` is 0x15, `#` is 0x00.
    static func tals(_ text: String) -> [UInt8] {
        Array(text.utf8).map { byte in
            switch byte {
            case UInt8(ascii: "|"): 0x14
            case UInt8(ascii: "~"): 0x15
            case UInt8(ascii: "#"): 0x00
            default: byte
            }
        }
    }

    @Test("the header's fields: version, patient, recording with the start date and equipment, local date and time, sizes, EDF+C/D, signals; each left-justified and space-padded")
    func headerFields() {
        // 2026-12-06 01:02:03 UTC, shown an hour east.
        let start = EDFStart(unixSeconds: 1_796_518_923, utcOffset: 3600)
        let signal = EDFSignal(label: "ECG", transducer: "chest electrodes", physicalDimension: "uV", physicalMinimum: -32767,
                               physicalMaximum: 32767, digitalMinimum: -32767, digitalMaximum: 32767, samplesPerRecord: 3)
        let bytes = EDFPlusWriter.file(start: start, recordingEquipment: "Polar H10 ABC", continuous: false, signals: [signal],
                                       records: [EDFDataRecord(onset: 500_000_000, samples: [[-1, 256, 32767]])], annotations: [])
        let layout = Layout(bytes: bytes)
        #expect(bytes.count == 768 + layout.recordBytes)
        #expect(layout.text(0, 8) == "0")
        #expect(String(decoding: bytes[8..<88], as: UTF8.self) == "X X X X" + String(repeating: " ", count: 73))
        #expect(layout.text(88, 80) == "Startdate 06-DEC-2026 X X Polar_H10_ABC")
        #expect(layout.text(168, 8) == "06.12.26")
        #expect(layout.text(176, 8) == "02.02.03")
        #expect(layout.text(184, 8) == "768")
        #expect(layout.text(192, 44) == "EDF+D")
        #expect(layout.text(236, 8) == "1")
        #expect(layout.text(244, 8) == "1")
        #expect(layout.signals == 2)
        #expect(layout.signalField(0, before: 0, width: 16) == "ECG")
        #expect(layout.signalField(1, before: 0, width: 16) == "EDF Annotations")
        #expect(layout.signalField(0, before: 16, width: 80) == "chest electrodes")
        #expect(layout.signalField(0, before: 96, width: 8) == "uV")
        #expect(layout.signalField(0, before: 104, width: 8) == "-32767")
        #expect(layout.signalField(0, before: 112, width: 8) == "32767")
        #expect(layout.signalField(1, before: 120, width: 8) == "-32768")
        #expect(layout.signalField(1, before: 128, width: 8) == "32767")
        #expect(layout.samplesPerRecord == [3, 4], "the annotation signal as long as its 7 bytes need")
        #expect(layout.text(layout.headerBytes - 64, 64) == "", "reserved")
        let continuous = EDFPlusWriter.file(start: start, recordingEquipment: "", continuous: true, signals: [signal],
                                            records: [], annotations: [])
        #expect(Layout(bytes: continuous).text(192, 44) == "EDF+C")
        #expect(Layout(bytes: continuous).text(88, 80).hasSuffix("X X X"), "unknown equipment is X")
    }

    @Test("records: each signal's samples as 16-bit little-endian two's complement (a short one held at its last value), then the annotation signal: the time-keeping TAL, the record's annotations, zero padding")
    func recordsAndTALs() {
        let signal = EDFSignal(label: "ECG", transducer: "", physicalDimension: "uV", physicalMinimum: -32767,
                               physicalMaximum: 32767, digitalMinimum: -32767, digitalMaximum: 32767, samplesPerRecord: 3)
        let bytes = EDFPlusWriter.file(
            start: EDFStart(unixSeconds: 0, utcOffset: 0), recordingEquipment: "H10", continuous: false, signals: [signal],
            records: [EDFDataRecord(onset: 500_000_000, samples: [[-1, 256, 32767]]),
                      EDFDataRecord(onset: 2_000_000_000, samples: [[-32767]])],
            annotations: [EDFAnnotation(onset: 2_250_000_000, text: "R"),
                          EDFAnnotation(onset: 1_500_000_000, duration: 500_000_000, text: "gap"),
                          EDFAnnotation(onset: 750_000_000, text: "R")])
        let layout = Layout(bytes: bytes)
        #expect(layout.text(236, 8) == "2")
        let first = layout.headerBytes
        #expect(Array(bytes[first..<(first + 6)]) == [0xFF, 0xFF, 0x00, 0x01, 0xFF, 0x7F])
        #expect(layout.samples(record: 1, signal: 0) == [-32767, -32767, -32767])
        #expect(layout.annotations(record: 0) == Self.tals("+0.5||#+0.75|R|#+1.5~0.5|gap|#"))
        #expect(layout.annotations(record: 1) == Self.tals("+2||#+2.25|R|#"))
        #expect(layout.samplesPerRecord[1] * 2 >= Self.tals("+0.5||#+0.75|R|#+1.5~0.5|gap|#").count)
        #expect(bytes.count == layout.headerBytes + 2 * layout.recordBytes)
    }

    @Test("onsets in seconds: a sign, no trailing zeros, nanoseconds kept; control characters out of annotation texts")
    func onsetText() {
        let list = EDFPlusWriter.file(start: EDFStart(unixSeconds: 0, utcOffset: 0), recordingEquipment: "", continuous: true,
                                      signals: [], records: [EDFDataRecord(onset: 0, samples: [])],
                                      annotations: [EDFAnnotation(onset: 7_692_308, text: "R\npeak"),
                                                    EDFAnnotation(onset: 3_000_000_000, duration: 10_000_000_000, text: "gap")])
        let layout = Layout(bytes: list)
        #expect(layout.annotations(record: 0) == Self.tals("+0||#+0.007692308|R peak|#+3~10|gap|#"))
    }

    /// A session of two runs (300 samples from a quarter past a whole second, 100 samples 10 s
    /// later), with acceleration from 0.1 s into the first run and 0.5 s into the second (and
    /// one vector before the first ECG sample), one ECG and one acceleration value out of range.
    static func session() -> ECGRecording {
        var session = ECGRecording()
        let start: Int64 = 1_796_518_923_250_000
        var first = ECGRun(startTime: start)
        for index in 0..<300 {
            first.deviceTimes.append(UInt64(index) * 7_692_308)
            first.microvolts.append(index == 5 ? 40_000 : Int32(index) - 150)
        }
        var second = ECGRun(startTime: start + 10_000_000)
        for index in 0..<100 {
            second.deviceTimes.append(100_000_000_000 + UInt64(index) * 7_692_308)
            second.microvolts.append(Int32(-index))
        }
        session.runs = [first, second]
        session.gaps = [ECGGap(start: start + 2_300_000, end: start + 10_000_000, marked: true)]
        for index in 0..<100 {
            session.acceleration.append(ECGAccelerationSample(time: start + 100_000 + Int64(index) * 5000,
                                                              x: Int32(index), y: index == 3 ? -50_000 : 1000, z: -Int32(index)))
        }
        for index in 0..<10 {
            session.acceleration.append(ECGAccelerationSample(time: start + 10_500_000 + Int64(index) * 5000, x: 7, y: 8, z: 9))
        }
        // Before the first ECG sample: left out.
        session.acceleration.insert(ECGAccelerationSample(time: start - 5000, x: 99, y: 99, z: 99), at: 0)
        return session
    }

    @Test("an ECG session: EDF+C of 1-s records (130 ECG, 200 acceleration samples), each run at its host time's sample, 0 where no sample is, a gap annotation across the gap, R-peaks at their samples' onsets; out-of-range values clipped and counted")
    func ecgSession() throws {
        let export = try #require(ECGEDFExport(session: Self.session(), peaks: [[10, 140], [65]], utcOffset: 0, equipment: "Polar H10 ABC"))
        #expect(export.hasAcceleration)
        #expect(export.runPositions == [0, 1300])
        #expect(export.recordCount == 11, "1400 samples at 130 a record")
        #expect(export.clippedCount == 2)
        #expect(export.peakCount == 3)
        #expect(export.gapCount == 1)
        let layout = Layout(bytes: export.bytes)
        #expect(layout.text(176, 8) == "01.02.03")
        #expect(layout.text(192, 44) == "EDF+C")
        #expect(layout.signals == 5)
        #expect((0..<4).map { layout.signalField($0, before: 0, width: 16) } == ["ECG", "Accelerometer X", "Accelerometer Y", "Accelerometer Z"])
        #expect((0..<4).map { layout.signalField($0, before: 96, width: 8) } == ["uV", "mG", "mG", "mG"])
        #expect(Array(layout.samplesPerRecord.prefix(4)) == [130, 200, 200, 200])
        let ecg = (0..<11).flatMap { layout.samples(record: $0, signal: 0) }
        let recorded: [Int16] = (0..<300).map { (index: Int) -> Int16 in index == 5 ? 32767 : Int16(index - 150) }
        let second: [Int16] = (0..<100).map { (index: Int) -> Int16 in Int16(-index) }
        #expect(Array(ecg[0..<300]) == recorded)
        #expect(ecg[300..<1300].allSatisfy { $0 == 0 }, "the gap")
        #expect(Array(ecg[1300..<1400]) == second)
        #expect(ecg[1400...].allSatisfy { $0 == 0 }, "after the last sample")
        // Acceleration: the first run's from 0.1 s (sample 20), the second's 0.5 s into its run.
        let x = (0..<11).flatMap { layout.samples(record: $0, signal: 1) }
        let y = (0..<11).flatMap { layout.samples(record: $0, signal: 2) }
        let placed: [Int16] = (0..<100).map { (index: Int) -> Int16 in Int16(index) }
        #expect(Array(x[0..<20]) == Array(repeating: 0, count: 20))
        #expect(Array(x[20..<120]) == placed)
        #expect(x[120..<2100].allSatisfy { $0 == 0 })
        #expect(Array(x[2100..<2110]) == Array(repeating: 7, count: 10), "10 s × 200 + 0.5 s × 200")
        #expect(x[2110...].allSatisfy { $0 == 0 })
        #expect(y[23] == -32767, "clipped to the declared range")
        // Time-keeping TALs at each record's onset; R-peaks at onset + position / 130 s; the
        // gap from the first run's last sample (300 / 130 s) to the second's (1300 / 130 s).
        #expect(layout.annotations(record: 0) == Self.tals("+0.25||#+0.326923077|R|#"))
        #expect(layout.annotations(record: 1) == Self.tals("+1.25||#+1.326923077|R|#"))
        #expect(layout.annotations(record: 2) == Self.tals("+2.25||#+2.557692308~7.692307692|gap|#"))
        #expect(layout.annotations(record: 10) == Self.tals("+10.25||#+10.75|R|#"))
        #expect(layout.annotations(record: 5) == Self.tals("+5.25||#"))
    }

    @Test("a gap over an hour is shortened to one, its annotation saying how long it was")
    func longGap() throws {
        var session = Self.session()
        session.runs[1].startTime += 86_400_000_000
        session.acceleration = []
        let export = try #require(ECGEDFExport(session: session, peaks: [], utcOffset: 0, equipment: nil))
        #expect(export.runPositions == [0, 300 + 3600 * 130])
        #expect(export.recordCount == (300 + 3600 * 130 + 100 + 129) / 130)
        let layout = Layout(bytes: export.bytes)
        #expect(layout.annotations(record: 2) == Self.tals("+2.25||#+2.557692308~3600|gap (shortened from 86407.692307692 s)|#"))
    }

    @Test("without acceleration only the ECG and annotation signals; a session without ECG none; the local start from the offset")
    func withoutAcceleration() throws {
        var session = Self.session()
        session.runs.removeLast()
        session.gaps = []
        session.acceleration = []
        let export = try #require(ECGEDFExport(session: session, peaks: [], utcOffset: -5 * 3600, equipment: nil))
        #expect(!export.hasAcceleration)
        #expect(export.recordCount == 3)
        let layout = Layout(bytes: export.bytes)
        #expect(layout.text(192, 44) == "EDF+C")
        #expect(layout.signals == 2)
        #expect(layout.text(168, 8) == "05.12.26")
        #expect(layout.text(176, 8) == "20.02.03")
        #expect(layout.text(88, 80).hasSuffix("X X Polar_H10"))
        #expect(ECGEDFExport(session: ECGRecording(), peaks: [], utcOffset: 0, equipment: nil) == nil)
    }

    @Test("RR text: ms a line (up to 3 decimals), Kubios' comment lines and fixed 3 decimals, HRVAS' .ibi time and IBI in s")
    func rrText() {
        let runs = [RRRun(time: 100, intervals: [800, 850.25, 791.015625]), RRRun(time: 101, intervals: [1000])]
        #expect(String(decoding: RRTextExport.file(runs, format: .rr, origin: 0), as: UTF8.self) == "800\n850.25\n791.016\n1000\n")
        #expect(String(decoding: RRTextExport.file(runs, format: .kubios, origin: 0, comments: ["rawble", "File: a\nb"]), as: UTF8.self)
            == "# rawble\n# File: ab\n800.000\n850.250\n791.016\n1000.000\n")
        // The second run would start before the first's last beat (101.641): it starts its
        // first interval after it instead, so the times keep increasing.
        #expect(String(decoding: RRTextExport.file(runs, format: .ibi, origin: 99), as: UTF8.self)
            == "1,0.8\n1.85,0.85025\n2.641,0.791016\n3.641,1\n")
        let times = RRTextExport.beatTimes([RRRun(time: 10, intervals: [500]), RRRun(time: 20, intervals: [600, 500])])
        #expect(times.map(\.time) == [10, 20, 20.5])
        #expect(RRTextExport.file([], format: .rr, origin: 0).isEmpty)
    }
}

extension String {
    fileprivate func trimmingSuffix(_ character: Character) -> String {
        var text = Substring(self)
        while text.last == character { text.removeLast() }
        return String(text)
    }

    /// Host times are a file's: one far from the first, even where the product with the rate
    /// fits and only its rounding would not, is the bound, never a trap.
    @Test func aSamplePositionFromAFarHostTimeIsBoundedNotATrap() {
        #expect(ECGEDFExport.samples(from: 0, to: 1_000_000, rate: 130) == 130)
        #expect(ECGEDFExport.samples(from: 0, to: 3_846, rate: 130) == 0)
        #expect(ECGEDFExport.samples(from: 0, to: 3_847, rate: 130) == 1, "rounded to the nearest sample")
        #expect(ECGEDFExport.samples(from: 10, to: 5, rate: 130) == 0)
        #expect(ECGEDFExport.samples(from: 0, to: Int64.max / 130, rate: 130) == Int(Int32.max))
        #expect(ECGEDFExport.samples(from: 0, to: Int64.max, rate: 130) == Int(Int32.max))
        #expect(ECGEDFExport.samples(from: Int64.min, to: Int64.max, rate: 200) == 0, "a span that wraps is before the origin")
    }
}
