import PropertyBased
import RawblePolarCore
import RawbleTestSupport
import RawbleWire
import Testing

private func frame(_ hex: String) throws(WireError) -> PMDDataFrame { try PMDDataFrame.decode(bytes(hex)) }

@Suite("PMD data frames: worked examples")
struct PMDFrameExampleTests {
    @Test("SPEC19's ECG frame: header, reset-clock time, first samples in µV")
    func ecgFrame() throws {
        let f = try frame("00 EA 1C AC CC 99 43 52 08 00 68 00 00 58 00 00 46 00 00 3D 00 00")
        #expect(f.type == .ecg)
        #expect(f.timestamp == 0x0852_4399_CCAC_1CEA)
        #expect(f.timestamp == 599_616_028_236_586_218)
        #expect(f.frameType == PMDFrameType(0))
        #expect(!f.frameType.isDeltaCompressed)
        #expect(Array(try f.ecgSamples()) == [104, 88, 70, 61])
        // 2019-01-01T00:00:28.237Z: an H10 whose clock was reset.
        #expect(PMDTime.unixNanoseconds(f.timestamp) == 1_546_300_828_236_586_218)
        #expect(f.timestamp - PMDTime.h10ResetTime == 28_236_586_218)
        #expect(f.encoded == bytes("00 EA 1C AC CC 99 43 52 08 00 68 00 00 58 00 00 46 00 00 3D 00 00"))
    }

    @Test("the Android SDK's ECG sign example: int24 values below and above 16 bits")
    func ecgSign() throws {
        let f = try frame("00 00 94 35 77 00 00 00 00 00 02 80 FF 02 80 00")
        #expect(f.timestamp == 2_000_000_000)
        let samples = try f.ecgSamples()
        #expect(Array(samples) == [-32766, 32770])
        // The second (last) sample is at the frame's time.
        var clock = PMDSampleClock()
        let times = clock.sampleTimes(of: f, sampleCount: samples.count, sampleRate: 130)
        #expect(times.last == 2_000_000_000)
        #expect(times[1] == 2_000_000_000)
    }

    @Test("SPEC19's raw ACC frame: x is −187 mG (SPEC19 and blehrm print −184, a slip)")
    func rawAcceleration() throws {
        let f = try frame("02 EA 54 A2 42 8B 45 52 08 01 45 FF E4 FF B5 03")
        #expect(f.type == .acceleration)
        #expect(f.frameType == PMDFrameType(1))
        let samples = try f.accelerationSamples()
        #expect(Array(samples) == [PMDAcceleration(x: -187, y: -28, z: 949)])
    }

    @Test("the Android SDK's ACC delta frame: reference and one 6-bit delta sample")
    func accelerationDelta() throws {
        // (Its comments say −22 and "10 samples"; the bytes give −20 and 2 samples.)
        let f = try frame("02 65 00 00 00 00 00 00 00 81 F1 FF 14 00 F0 03 06 01 7B 0F 08")
        #expect(f.frameType.isDeltaCompressed)
        #expect(f.timestamp == 0x65)
        let samples = try f.accelerationSamples()
        #expect(Array(samples) == [PMDAcceleration(x: -15, y: 20, z: 1008), PMDAcceleration(x: -20, y: 17, z: 1008)])
        let delta = try f.deltaSamples(channels: 3, resolution: 16)
        #expect(delta.count == 2)
        #expect(delta.values() == [-15, 20, 1008, -20, 17, 1008])
    }

    @Test("SPEC21's Verity delta frame: 8-bit deltas, 29 samples after the reference")
    func verityDelta() throws {
        // The specification shows the first three deltas; the other 84 bytes are zero deltas here.
        let payload = bytes("D0 FF 65 01 E4 0F 08 1D FC 07 FF") + [UInt8](repeating: 0, count: 84)
        let delta = try PMDDeltaSamples(payload[...], channels: 3, resolution: 16)
        #expect(delta.count == 30)
        let values = delta.values()
        #expect(Array(values[0..<3]) == [-48, 357, 4068])
        #expect(Array(values[3..<6]) == [-52, 364, 4067])
        #expect(Array(values[87..<90]) == [-52, 364, 4067])
        // As printed (cut after three deltas), the block is short of 84 bytes.
        #expect(wireError { () throws(WireError) in
            try PMDDeltaSamples(bytes("D0 FF 65 01 E4 0F 08 1D FC 07 FF")[...], channels: 3, resolution: 16)
        } == WireError(.truncated(needed: 87, available: 3), at: 8, in: "PMD delta block"))
    }

    @Test("delta frames 81 scale by the factor and 80 (values in G) by factor × 1000, truncating")
    func deltaFactors() throws {
        let payload = PMDTestEncoder.delta([[3, -3, 7], [4, -5, 1000]], resolution: 16)
        let f81 = try PMDDataFrame.decode(PMDTestEncoder.frame(type: 2, timestamp: 1, frameType: 0x81, payload: payload))
        #expect(Array(try f81.accelerationSamples(factor: 0.5))
            == [PMDAcceleration(x: 1, y: -1, z: 3), PMDAcceleration(x: 2, y: -2, z: 500)])
        let f80 = try PMDDataFrame.decode(PMDTestEncoder.frame(type: 2, timestamp: 1, frameType: 0x80, payload: payload))
        #expect(Array(try f80.accelerationSamples(factor: 0.5))
            == [PMDAcceleration(x: 1500, y: -1500, z: 3500), PMDAcceleration(x: 2000, y: -2500, z: 500_000)])
        // NaN and huge factors never trap.
        #expect(Array(try f81.accelerationSamples(factor: .nan)).first == PMDAcceleration(x: 0, y: 0, z: 0))
        #expect(Array(try f80.accelerationSamples(factor: .greatestFiniteMagnitude)).first
            == PMDAcceleration(x: .max, y: .min, z: .max))
    }

    @Test("a PPI frame: heart rate, interval, error estimate, flags")
    func ppiFrame() throws {
        let f = try frame("03 00 00 00 00 00 00 00 00 00 3C E8 03 0A 00 06 3D D0 03 14 00 01")
        let samples = try f.ppiSamples()
        #expect(Array(samples) == [
            PMDPPISample(heartRate: 60, interval: 1000, errorEstimate: 10, flags: 6),
            PMDPPISample(heartRate: 61, interval: 976, errorEstimate: 20, flags: 1),
        ])
        #expect(samples[0].skinContact && samples[0].skinContactSupported && !samples[0].isInvalid)
        #expect(samples[1].isInvalid)
    }

    @Test("the type byte of a frame is masked with 3F")
    func typeMask() throws {
        #expect(try frame("C2 00 00 00 00 00 00 00 00 01").type == .acceleration)
    }
}

@Suite("PMD data frames: bad input")
struct PMDFrameBadInputTests {
    @Test("a frame shorter than its header is truncated")
    func shortHeader() {
        #expect(wireError { () throws(WireError) in try frame("00 EA 1C AC CC 99 43 52 08") }
            == WireError(.truncated(needed: 1, available: 0), at: 9, in: "PMD data frame"))
        #expect(wireError { () throws(WireError) in try frame("00 EA 1C") }
            == WireError(.truncated(needed: 8, available: 2), at: 1, in: "PMD data frame"))
        #expect(wireError { () throws(WireError) in try PMDDataFrame.decode([]) }?.kind
            == .truncated(needed: 1, available: 0))
    }

    @Test("a raw frame that is not whole samples ends in trailing bytes")
    func partialSamples() throws {
        #expect(wireError { () throws(WireError) in try frame("00 00 00 00 00 00 00 00 00 00 68 00 00 58").ecgSamples() }
            == WireError(.trailingBytes(count: 1), at: 13, in: "PMD ECG frame"))
        #expect(wireError { () throws(WireError) in try frame("02 00 00 00 00 00 00 00 00 01 45 FF E4 FF B5").accelerationSamples() }
            == WireError(.trailingBytes(count: 5), at: 10, in: "PMD acceleration frame"))
        #expect(wireError { () throws(WireError) in try frame("03 00 00 00 00 00 00 00 00 00 3C E8").ppiSamples() }?.kind
            == .trailingBytes(count: 2))
        // No samples at all is a valid, empty frame.
        #expect(try frame("00 00 00 00 00 00 00 00 00 00").ecgSamples().isEmpty)
    }

    @Test("unknown frame types and the wrong measurement type are typed errors")
    func unknownFrameTypes() {
        #expect(wireError { () throws(WireError) in try frame("00 00 00 00 00 00 00 00 00 01 68 00 00").ecgSamples() }
            == WireError(.unknownValue(1), at: 9, in: "PMD ECG frame"))
        #expect(wireError { () throws(WireError) in try frame("02 00 00 00 00 00 00 00 00 03").accelerationSamples() }
            == WireError(.unknownValue(3), at: 9, in: "PMD acceleration frame"))
        #expect(wireError { () throws(WireError) in try frame("02 00 00 00 00 00 00 00 00 82").accelerationSamples() }
            == WireError(.unknownValue(0x82), at: 9, in: "PMD acceleration frame"))
        #expect(wireError { () throws(WireError) in try frame("03 00 00 00 00 00 00 00 00 01").ppiSamples() }?.kind
            == .unknownValue(1))
        #expect(wireError { () throws(WireError) in try frame("02 00 00 00 00 00 00 00 00 00 68 00 00").ecgSamples() }
            == WireError(.invalidValue("acc frame, expected ecg"), at: 0, in: "PMD ECG frame"))
        #expect(wireError { () throws(WireError) in try frame("00 00 00 00 00 00 00 00 00 00 68 00 00").accelerationSamples() }?.kind
            == .invalidValue("ecg frame, expected acc"))
        #expect(wireError { () throws(WireError) in try frame("02 00 00 00 00 00 00 00 00 01").deltaSamples(channels: 3, resolution: 16) }
            == WireError(.invalidValue("frame type 0x01 is not delta-compressed"), at: 9, in: "PMD delta frame"))
    }

    @Test("delta widths of 0 and above 32 are refused at the width byte")
    func deltaWidths() {
        let reference = "01 00 02 00 03 00"
        #expect(wireError { () throws(WireError) in try PMDDeltaSamples(bytes(reference + " 00 01")[...], channels: 3, resolution: 16) }
            == WireError(.invalidValue("delta width 0 bits (1...32)"), at: 6, in: "PMD delta block header"))
        #expect(wireError { () throws(WireError) in try PMDDeltaSamples(bytes(reference + " 21 01" + String(repeating: " FF", count: 13))[...], channels: 3, resolution: 16) }
            == WireError(.invalidValue("delta width 33 bits (1...32)"), at: 6, in: "PMD delta block header"))
        // Width 32 is the widest allowed.
        #expect(wireError { () throws(WireError) in try PMDDeltaSamples(bytes(reference + " 20 01" + String(repeating: " FF", count: 12))[...], channels: 3, resolution: 16) } == nil)
    }

    @Test("a delta block whose bits run past the frame is truncated")
    func deltaBitsPastFrame() {
        // 6 bits × 3 channels × 2 samples = 36 bits: 5 bytes, 4 present.
        #expect(wireError { () throws(WireError) in try PMDDeltaSamples(bytes("01 00 02 00 03 00 06 02 7B 0F 08 00")[...], channels: 3, resolution: 16) }
            == WireError(.truncated(needed: 5, available: 4), at: 8, in: "PMD delta block"))
        // A block header cut after its width.
        #expect(wireError { () throws(WireError) in try PMDDeltaSamples(bytes("01 00 02 00 03 00 06")[...], channels: 3, resolution: 16) }
            == WireError(.truncated(needed: 2, available: 1), at: 6, in: "PMD delta block header"))
    }

    @Test("the largest block a header can announce is sized exactly, without overflow or allocation")
    func largestBlock() {
        // 32 bits × 255 channels × 255 samples = 260 100 bytes, announced in a 1 KiB frame.
        let payload = [UInt8](repeating: 0, count: 255) + [32, 255] + [UInt8](repeating: 0, count: 800)
        #expect(wireError { () throws(WireError) in try PMDDeltaSamples(payload[...], channels: 255, resolution: 8) }
            == WireError(.truncated(needed: 260_100, available: 800), at: 257, in: "PMD delta block"))
    }

    @Test("a reference longer than the frame, and settings out of range, are typed errors")
    func deltaReferenceAndSettings() {
        #expect(wireError { () throws(WireError) in try PMDDeltaSamples(bytes("01 00 02 00 03")[...], channels: 3, resolution: 16) }
            == WireError(.truncated(needed: 6, available: 5), at: 0, in: "PMD delta frame"))
        #expect(wireError { () throws(WireError) in try PMDDeltaSamples(bytes("01")[...], channels: 0, resolution: 16) }?.kind
            == .invalidValue("0 channels (1...255)"))
        #expect(wireError { () throws(WireError) in try PMDDeltaSamples(bytes("01")[...], channels: 256, resolution: 16) }?.kind
            == .invalidValue("256 channels (1...255)"))
        #expect(wireError { () throws(WireError) in try PMDDeltaSamples(bytes("01")[...], channels: Int.max, resolution: 16) }?.kind
            == .invalidValue("\(Int.max) channels (1...255)"))
        #expect(wireError { () throws(WireError) in try PMDDeltaSamples(bytes("01")[...], channels: 1, resolution: 0) }?.kind
            == .invalidValue("resolution 0 bits (1...32)"))
        #expect(wireError { () throws(WireError) in try PMDDeltaSamples(bytes("01")[...], channels: 1, resolution: 33) }?.kind
            == .invalidValue("resolution 33 bits (1...32)"))
        // A reference alone is one sample.
        #expect((try? PMDDeltaSamples(bytes("01 00")[...], channels: 1, resolution: 16))?.values() == [1])
    }

    @Test("blocks of zero samples are allowed and add nothing")
    func emptyBlocks() throws {
        let delta = try PMDDeltaSamples(bytes("05 00 08 00 08 00 04 01 0F")[...], channels: 1, resolution: 16)
        #expect(delta.count == 2)
        #expect(delta.values() == [5, 4])
    }

    @Test("32-bit values wrap as on the device instead of trapping")
    func wrapping() throws {
        // Reference Int32.max, then +1 (32-bit delta).
        let delta = try PMDDeltaSamples(bytes("FF FF FF 7F 20 01 01 00 00 00")[...], channels: 1, resolution: 32)
        #expect(delta.values() == [.max, .min])
    }

    @Test("random bytes never trap any frame decoder")
    func randomBytes() async {
        await propertyCheck(count: 2000, input: Gen.uint8().array(of: 0...40), Gen.int(in: 0...5), Gen.int(in: 0...33)) {
            input, channels, resolution in
            guard let f = try? PMDDataFrame.decode(input) else { return }
            _ = try? f.ecgSamples().reduce(0) { $0 &+ $1 }
            _ = try? f.accelerationSamples(factor: 0.25).map(\.x)
            _ = try? f.ppiSamples().map(\.interval)
            if let delta = try? PMDDeltaSamples(f.payload, channels: channels, resolution: resolution) {
                #expect(delta.values().count == delta.count * channels)
            }
            // Everything re-encodes but the two bits of byte 0 the type mask drops.
            #expect(f.encoded == [input[0] & 0x3F] + input.dropFirst())
        }
    }
}

@Suite("PMD data frames: round trips")
struct PMDFrameRoundTripTests {
    /// A random walk of `count` samples of `channels` values that fit `resolution` bits, with
    /// steps up to `step` (or any value when `step` is nil).
    static func series(
        _ rng: inout SplitMix64, count: Int, channels: Int, resolution: Int, step: Int64?
    ) -> [[Int32]] {
        let low = -(Int64(1) << (resolution - 1)), high = (Int64(1) << (resolution - 1)) - 1
        var current = (0..<channels).map { _ in Int64.random(in: low...high, using: &rng) }
        var out: [[Int32]] = []
        for _ in 0..<count {
            out.append(current.map { Int32($0) })
            current = current.map { value in
                guard let step else { return Int64.random(in: low...high, using: &rng) }
                return min(high, max(low, value + Int64.random(in: -step...step, using: &rng)))
            }
        }
        return out
    }

    @Test("random series, delta-encoded by the test encoder, decode back exactly")
    func deltaRoundTrip() async {
        await propertyCheck(
            count: 300, input: Gen.uint64(), Gen.int(in: 1...6), Gen.int(in: 1...32), Gen.int(in: 1...80),
            Gen.int(in: 1...40)
        ) { seed, channels, resolution, count, blockLength in
            var rng = SplitMix64(state: seed)
            let stepBits = Int.random(in: 0...resolution, using: &rng)
            let step: Int64? = stepBits == resolution ? nil : (Int64(1) << stepBits) - 1
            let samples = Self.series(&rng, count: count, channels: channels, resolution: resolution, step: step)
            let payload = PMDTestEncoder.delta(samples, resolution: resolution, blockLength: blockLength)
            let decoded = try? PMDDeltaSamples(payload[...], channels: channels, resolution: resolution)
            #expect(decoded?.count == count)
            #expect(decoded?.values() == samples.flatMap { $0 })
        }
    }

    @Test("random ACC series in delta frames 81 decode back as vectors")
    func accelerationDeltaRoundTrip() async {
        await propertyCheck(count: 200, input: Gen.uint64(), Gen.int(in: 1...60)) { seed, count in
            var rng = SplitMix64(state: seed)
            let samples = Self.series(&rng, count: count, channels: 3, resolution: 16, step: 200)
            let bytes = PMDTestEncoder.frame(
                type: 2, timestamp: seed, frameType: 0x81, payload: PMDTestEncoder.delta(samples, resolution: 16))
            let decoded = try? PMDDataFrame.decode(bytes).accelerationSamples()
            #expect(decoded.map(Array.init) == samples.map { PMDAcceleration(x: $0[0], y: $0[1], z: $0[2]) })
        }
    }

    @Test("random raw ECG and ACC frames decode back exactly")
    func rawRoundTrip() async {
        await propertyCheck(count: 300, input: Gen.uint64(), Gen.int(in: 0...73), Gen.int(in: 0...2)) { seed, count, layout in
            var rng = SplitMix64(state: seed)
            let ecg = Self.series(&rng, count: count, channels: 1, resolution: 24, step: nil).map { $0[0] }
            let ecgFrame = try? PMDDataFrame.decode(
                PMDTestEncoder.frame(type: 0, timestamp: seed, frameType: 0, payload: PMDTestEncoder.raw(ecg, width: 3)))
            #expect(ecgFrame?.timestamp == seed)
            #expect((try? ecgFrame?.ecgSamples()).map { Array($0) } == ecg)
            let width = layout + 1
            let acc = Self.series(&rng, count: count, channels: 3, resolution: 8 * width, step: nil)
            let accFrame = try? PMDDataFrame.decode(PMDTestEncoder.frame(
                type: 2, timestamp: seed, frameType: UInt8(layout), payload: PMDTestEncoder.raw(acc.flatMap { $0 }, width: width)))
            #expect((try? accFrame?.accelerationSamples()).map { Array($0) }
                == acc.map { PMDAcceleration(x: $0[0], y: $0[1], z: $0[2]) })
        }
    }
}
