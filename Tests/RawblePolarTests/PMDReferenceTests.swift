import Foundation
import RawblePolarCore
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

/// RawbleWire's PMD frame decoders against `Scripts/python/pmd_reference.py`, an independent
/// plain-Python decoder, run by `Scripts/venv-python` (the project's environment, `RAWBLE_VENV`,
/// default `.build/venv`). Missing, it fails with the script's one line naming
/// `Scripts/bootstrap`; `RAWBLE_TESTS_WITHOUT_BUMBLE=1` deselects it with the other suites that
/// need that environment.
@Suite("PMD frames against the Python reference decoder", .tags(.bumble),
       .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct PMDReferenceTests {
    struct Decoded: Decodable, Equatable {
        var type: Int?
        var timestamp: UInt64?
        var frame_type: Int?
        var samples: [[Int64]]?
        var error: String?
    }

    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The reference's reading of each (factor, frame), in order (one Python process for all).
    static func reference(_ frames: [(Float, [UInt8])]) async throws -> [Decoded] {
        let text = frames.map { "\(Double($0.0)) " + $0.1.map(hexByte).joined() }.joined(separator: "\n") + "\n"
        return try await runPythonReference("pmd_reference.py", root: root, input: text, seconds: 120).map {
            try JSONDecoder().decode(Decoded.self, from: Data($0.utf8))
        }
    }

    /// RawbleWire's reading of a frame, in the reference's form (`error` only says that it failed).
    static func rawble(_ bytes: [UInt8], factor: Float) -> Decoded {
        do throws(WireError) {
            let frame = try PMDDataFrame.decode(bytes)
            let samples: [[Int64]]
            switch frame.type {
            case .ecg: samples = try frame.ecgSamples().map { [Int64($0)] }
            case .acceleration:
                samples = try frame.accelerationSamples(factor: factor).map { [Int64($0.x), Int64($0.y), Int64($0.z)] }
            default: throw WireError(.unknownValue(UInt64(frame.type.rawValue)), at: 0, in: "test")
            }
            return Decoded(
                type: Int(frame.type.rawValue), timestamp: frame.timestamp, frame_type: Int(frame.frameType.rawValue),
                samples: samples)
        } catch {
            return Decoded(error: "\(error)")
        }
    }

    /// Random ECG, raw ACC and delta ACC frames, some of them cut or with a byte changed.
    static func frames(count: Int, seed: UInt64) -> [(Float, [UInt8])] {
        var rng = SplitMix64(state: seed)
        let factors: [Float] = [1, 0.5, 0.001, 1.0 / 3, 2.44e-4, 1000]
        var out: [(Float, [UInt8])] = []
        for n in 0..<count {
            let timestamp = rng.next()
            let samples = Int.random(in: 0...40, using: &rng)
            var bytes: [UInt8]
            switch n % 4 {
            case 0:
                let ecg = (0..<samples).map { _ in Int32.random(in: -(1 << 23)..<(1 << 23), using: &rng) }
                bytes = PMDTestEncoder.frame(type: 0, timestamp: timestamp, frameType: 0, payload: PMDTestEncoder.raw(ecg, width: 3))
            case 1:
                let layout = Int.random(in: 0...2, using: &rng)
                let width = layout + 1
                let values = (0..<3 * samples).map { _ in
                    Int32.random(in: -(1 << (8 * width - 1))..<(1 << (8 * width - 1)), using: &rng)
                }
                bytes = PMDTestEncoder.frame(
                    type: 2, timestamp: timestamp, frameType: UInt8(layout), payload: PMDTestEncoder.raw(values, width: width))
            default:
                let series = PMDFrameRoundTripTests.series(
                    &rng, count: samples + 1, channels: 3, resolution: 16, step: Int64.random(in: 0...3000, using: &rng))
                bytes = PMDTestEncoder.frame(
                    type: 2, timestamp: timestamp, frameType: n % 4 == 2 ? 0x81 : 0x80,
                    payload: PMDTestEncoder.delta(series, resolution: 16, blockLength: Int.random(in: 1...20, using: &rng)))
            }
            switch Int.random(in: 0..<8, using: &rng) {
            case 0: bytes.removeLast(Int.random(in: 0...min(12, bytes.count), using: &rng))
            case 1: bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            default: break
            }
            out.append((factors[Int.random(in: 0..<factors.count, using: &rng)], bytes))
        }
        return out
    }

    @Test("random ECG and acceleration frames, whole, cut or damaged, decode as the reference decodes them")
    func randomFramesAgree() async throws {
        let frames = Self.frames(count: 2000, seed: 0x504D_4400_2026)
        let reference = try await Self.reference(frames)
        try #require(reference.count == frames.count)
        var failures = 0
        for ((factor, bytes), expected) in zip(frames, reference) {
            let ours = Self.rawble(bytes, factor: factor)
            let agree = expected.error != nil ? ours.error != nil : ours == expected
            if !agree {
                failures += 1
                if failures <= 5 {
                    Issue.record("\(factor) \(hexString(bytes)): reference \(expected), rawble \(ours)")
                }
            }
        }
        #expect(failures == 0)
        // The set is not all errors nor all successes.
        #expect(reference.contains { $0.error != nil } && reference.contains { $0.error == nil })
    }
}
