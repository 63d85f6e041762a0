import Foundation
import RawbleTestPeers
import RawbleTestSupport

/// NeuroKit2's R peaks, from `Scripts/python/rpeak_reference.py` run by `Scripts/venv-python`
/// (the project's environment, `RAWBLE_VENV`, default `.build/venv`, where `Scripts/bootstrap`
/// installs NeuroKit2). Missing, it fails with the script's one line naming `Scripts/bootstrap`;
/// `RAWBLE_TESTS_WITHOUT_BUMBLE=1` deselects it with the other suites that need that environment.
struct RPeakReference {
    /// One ECG for NeuroKit2 to simulate (`ecg_simulate(method="ecgsyn")`), in integer µV.
    struct Request: Encodable {
        var seed: Int
        var duration: Double
        var heart_rate: Double
        var sampling_rate: Int = 130
        var noise: Double
        var cleaned = false
    }

    struct Result: Decodable, Sendable {
        /// The samples, µV.
        var ecg: [Double]
        /// NeuroKit2's R peaks (`ecg_peaks(ecg_clean(ecg))`), sample indices.
        var peaks: [Int]
        var sampling_rate: Double
        /// NeuroKit2's `ecg_clean(ecg)`, when asked for.
        var cleaned: [Double]?
    }

    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// NeuroKit2's answer for each request, in order (one Python process for all).
    static func results(for requests: [Request]) async throws -> [Result] {
        let encoder = JSONEncoder()
        let text = try requests.map { String(decoding: try encoder.encode($0), as: UTF8.self) }.joined(separator: "\n") + "\n"
        let lines = try await runPythonReference("rpeak_reference.py", root: root, input: text, seconds: 300)
        return try lines.map { try JSONDecoder().decode(Result.self, from: Data($0.utf8)) }
    }
}

/// How one list of peaks agrees with a reference list: each reference peak matched to at most one
/// of ours within `tolerance` samples (both lists increasing, so a greedy sweep finds the most
/// matches), what is left on either side, and the largest RR interval difference over
/// consecutive reference peaks that are both matched.
struct PeakAgreement: CustomStringConvertible {
    var referenceCount = 0
    var oursCount = 0
    var matched = 0
    /// Matches on the very same sample.
    var exact = 0
    var maximumOffset = 0
    var maximumRRDifference = 0.0
    var comparedIntervals = 0

    var missed: Int { referenceCount - matched }
    var extra: Int { oursCount - matched }
    var matchedFraction: Double { referenceCount == 0 ? 0 : Double(matched) / Double(referenceCount) }
    var extraFraction: Double { referenceCount == 0 ? 0 : Double(extra) / Double(referenceCount) }

    init(ours: [Int], reference: [Int], tolerance: Int = 1, samplingRate: Double) {
        referenceCount = reference.count
        oursCount = ours.count
        var partner = [Int?](repeating: nil, count: reference.count)
        var next = 0
        for (index, peak) in reference.enumerated() {
            while next < ours.count && ours[next] < peak - tolerance { next += 1 }
            guard next < ours.count, abs(ours[next] - peak) <= tolerance else { continue }
            partner[index] = ours[next]
            maximumOffset = max(maximumOffset, abs(ours[next] - peak))
            if ours[next] == peak { exact += 1 }
            matched += 1
            next += 1
        }
        for index in reference.indices.dropFirst() {
            guard let a = partner[index - 1], let b = partner[index] else { continue }
            let theirs = Double(reference[index] - reference[index - 1]) * 1000 / samplingRate
            let mine = Double(b - a) * 1000 / samplingRate
            maximumRRDifference = max(maximumRRDifference, abs(mine - theirs))
            comparedIntervals += 1
        }
    }

    var description: String {
        let percent = (matchedFraction * 10_000).rounded() / 100
        return "\(matched)/\(referenceCount) matched (\(percent) %; \(exact) on the same sample), \(extra) extra, \(missed) missed, "
            + "largest offset \(maximumOffset) samples, largest RR difference \(maximumRRDifference) ms over \(comparedIntervals) intervals"
    }
}

/// A synthetic ECG-like signal, µV: narrow Gaussian R waves (σ 12 ms, `amplitude`) at beats drawn
/// from `meanInterval` ± 15 %, a broad T wave 250 ms after each, a 0.25 Hz baseline wander and
/// uniform noise. Returns the samples and the sample nearest each R wave's centre.
struct SyntheticECG {
    var samples: [Double]
    var beats: [Int]

    init(seconds: Double, samplingRate: Double, meanInterval: Double = 0.8, amplitude: Double = 1200,
         noise: Double = 10, wander: Double = 300, seed: UInt64) {
        var generator = SplitMix64(state: seed)
        let count = Int(seconds * samplingRate)
        var centres: [Double] = []
        var time = 0.6
        while time < seconds - 0.6 {
            centres.append(time)
            time += meanInterval * Double.random(in: 0.85...1.15, using: &generator)
        }
        samples = [Double](repeating: 0, count: count)
        let sigma = 0.012, tSigma = 0.05
        for (index, _) in samples.enumerated() {
            let t = Double(index) / samplingRate
            // 0.25 Hz wander: a triangle wave (no Foundation for sin), slow enough for the high-pass.
            let phase = (t * 0.25).truncatingRemainder(dividingBy: 1)
            var value = wander * (phase < 0.5 ? 4 * phase - 1 : 3 - 4 * phase)
            value += noise * Double.random(in: -1...1, using: &generator)
            samples[index] = value
        }
        for centre in centres {
            let first = max(Int((centre - 0.1) * samplingRate), 0)
            let last = min(Int((centre + 0.5) * samplingRate), count - 1)
            guard first <= last else { continue }
            for index in first...last {
                let t = Double(index) / samplingRate
                samples[index] += amplitude * Self.gaussian((t - centre) / sigma)
                samples[index] += 0.25 * amplitude * Self.gaussian((t - centre - 0.25) / tSigma)
            }
        }
        beats = centres.map { Int(($0 * samplingRate).rounded()) }
    }

    /// exp(−x²/2), by squaring a short series (no Foundation): exact enough for a test signal.
    static func gaussian(_ x: Double) -> Double {
        let y = x * x / 2
        guard y < 40 else { return 0 }
        // e^−y = (e^(−y/64))^64, the inner term by its Taylor series.
        let small = y / 64
        var term = 1.0, sum = 1.0
        for n in 1...8 {
            term *= -small / Double(n)
            sum += term
        }
        var result = sum
        for _ in 0..<6 { result *= result }
        return result
    }
}
