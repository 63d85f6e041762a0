import Foundation
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// NeuroKit2's figures for RR series, from `Scripts/python/hrv_reference.py` run by
/// `Scripts/venv-python` (the project's environment, `RAWBLE_VENV`, default `.build/venv`, where
/// `Scripts/bootstrap` installs NeuroKit2). Missing, it fails with the script's one line naming
/// `Scripts/bootstrap`; `RAWBLE_TESTS_WITHOUT_BUMBLE=1` deselects it with the other suites that
/// need that environment.
struct NeuroKitReference {
    struct Figures: Decodable {
        var MeanNN: Double?
        var SDNN: Double?
        var RMSSD: Double?
        var pNN50: Double?
        var pNN20: Double?
        var MinNN: Double?
        var MaxNN: Double?
        var MeanHR: Double?
    }

    struct Kinds: Decodable {
        var ectopic: [Int]
        var missed: [Int]
        var extra: [Int]
        var longshort: [Int]

        /// Peak positions turned into interval positions (peak k ends interval k − 1), by kind.
        var intervalPositions: [Int: String] {
            var positions: [Int: String] = [:]
            for (kind, peaks) in [("ectopic", ectopic), ("missed", missed), ("extra", extra), ("longShort", longshort)] {
                for peak in peaks { positions[max(peak - 1, 0)] = kind }
            }
            return positions
        }
    }

    struct Result: Decodable {
        var raw: Figures
        var corrected: Figures
        var corrected_rr: [Double]
        var first_pass: Kinds
        var last_pass: Kinds
    }

    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// NeuroKit2's results for each series, in order (one Python process for all).
    static func results(for series: [[Double]]) async throws -> [Result] {
        let text = series.map { $0.map { String(Int($0)) }.joined(separator: " ") }.joined(separator: "\n") + "\n"
        let lines = try await runPythonReference("hrv_reference.py", root: root, input: text, seconds: 240)
        return try lines.map { try JSONDecoder().decode(Result.self, from: Data($0.utf8)) }
    }
}
