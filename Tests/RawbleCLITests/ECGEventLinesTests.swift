@testable import rawble
@testable import RawblePolar
import RawblePolarCore
import RawbleReport
import RawbleTestSupport
import RawbleWire
import Testing

/// The `ecg`, `acc` and `beat` events `rawble ecg --json` writes byte by byte are exactly what
/// the general `JSON` serializer prints for the same fields (the documented output).
@Suite("ecg's JSON event lines")
struct ECGEventLinesTests {
    static func reference(_ fields: [(String, JSON)], time: Int64) -> String {
        JSON.object([fields[0], ("time", .string(iso8601(unixMicroseconds: time)))] + fields.dropFirst()).serialized() + "\n"
    }

    /// An ECG frame of `samples` (int24 LE) with timestamp `time`.
    static func ecgBytes(_ samples: [Int32], time: UInt64) -> [UInt8] {
        var bytes: [UInt8] = [0x00]
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: time >> UInt64(shift))) }
        bytes.append(0x00)
        for sample in samples {
            bytes += [UInt8(truncatingIfNeeded: sample), UInt8(truncatingIfNeeded: sample >> 8), UInt8(truncatingIfNeeded: sample >> 16)]
        }
        return bytes
    }

    @Test("ECG frames (the specification's example, then random ones, whole or cut by --count): the serializer's line, byte for byte")
    func ecgLines() throws {
        var random = SplitMix64(state: 0x5EED_0EC6)
        var clock = PMDSampleClock()
        var lines = ECGEventLines()
        var batch: [UInt8] = []
        var time: UInt64 = 599_616_028_236_586_218  // SPEC19's example frame's timestamp
        var frames: [[UInt8]] = [try Hex.decode("00EA1CACCC99435208006800005800004600003D0000")]
        for _ in 0..<300 {
            let count = Int(random.next() % 80) + 1
            let samples = (0..<count).map { _ in (Int32(truncatingIfNeeded: random.next() % (1 << 24)) << 8) >> 8 }
            time += UInt64(count) * 7_692_307 + random.next() % 3_000_000
            frames.append(Self.ecgBytes(samples, time: time))
        }
        for bytes in frames {
            let frame = try PMDDataFrame.decode(bytes[...])
            let samples = try frame.ecgSamples()
            let times = clock.sampleTimes(of: frame, sampleCount: samples.count, sampleRate: 130)
            let ecg = PMDECGFrame(frame: frame, microvolts: samples, times: times)
            let hostTime = Int64(random.next() % 4_102_444_800_000_000)
            let written = random.next() % 4 == 0 ? Int(random.next() % UInt64(samples.count)) + 1 : samples.count
            batch.removeAll(keepingCapacity: true)
            lines.appendECG(ecg, count: written, time: hostTime, to: &batch)
            let expected = Self.reference([
                ("event", "ecg"), ("deviceTime", JSON(Int64(clamping: times.first ?? 0))),
                ("interval", .double(times.interval / 1e9)), ("uV", .array((0..<written).map { JSON(Int(samples[$0])) })),
            ], time: hostTime)
            #expect(String(decoding: batch, as: UTF8.self) == expected)
        }
    }

    @Test("acceleration frames, raw and delta-compressed (the note's examples): the serializer's line")
    func accelerationLines() throws {
        var clock = PMDSampleClock()
        var lines = ECGEventLines()
        for hex in ["02EA54A2428B4552080145FFE4FFB503", "02650000000000000081F1FF1400F00306017B0F08"] {
            let frame = try PMDDataFrame.decode(try Hex.decode(hex)[...])
            let vectors = try frame.accelerationSamples()
            let times = clock.sampleTimes(of: frame, sampleCount: vectors.count, sampleRate: 200)
            let acc = PMDAccelerationFrame(frame: frame, vectors: vectors, times: times)
            var batch: [UInt8] = []
            lines.appendAcceleration(acc, time: 1_795_850_000_123_456, to: &batch)
            let expected = Self.reference([
                ("event", "acc"), ("deviceTime", JSON(Int64(clamping: times.first ?? 0))),
                ("interval", .double(times.interval / 1e9)),
                ("mG", .array(vectors.map { .array([JSON(Int($0.x)), JSON(Int($0.y)), JSON(Int($0.z))]) })),
            ], time: 1_795_850_000_123_456)
            #expect(String(decoding: batch, as: UTF8.self) == expected)
            #expect(!vectors.isEmpty)
        }
    }

    @Test("beats, with and without an RR interval: the serializer's line")
    func beatLines() {
        var lines = ECGEventLines()
        var random = SplitMix64(state: 0xBEA7)
        for index in 0..<1_000 {
            let deviceTime = random.next() >> 1
            let rr: Double? = index % 10 == 0 ? nil : (Double(random.next() % 30_000) / 10).rounded() / 10_000
            let time = Int64(random.next() % 4_102_444_800_000_000)
            var batch: [UInt8] = []
            lines.appendBeat(deviceTime: deviceTime, rrSeconds: rr, time: time, to: &batch)
            let expected = Self.reference([
                ("event", "beat"), ("deviceTime", JSON(Int64(clamping: deviceTime))), ("rr", rr.map { .double($0) } ?? .null),
            ], time: time)
            #expect(String(decoding: batch, as: UTF8.self) == expected)
        }
    }
}
