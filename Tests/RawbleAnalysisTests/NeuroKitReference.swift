import Foundation
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

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// NeuroKit2's results for each series, in order (one Python process for all).
    static func results(for series: [[Double]]) async throws -> [Result] {
        let process = Process()
        process.executableURL = root.appendingPathComponent("Scripts/venv-python")
        process.arguments = [root.appendingPathComponent("Scripts/python/hrv_reference.py").path]
        // The series go through a file, not a pipe: a script that exits early (NeuroKit2 missing)
        // cannot raise SIGPIPE in the test process.
        let text = series.map { $0.map { String(Int($0)) }.joined(separator: " ") }.joined(separator: "\n") + "\n"
        let inputURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("rawble-hrv-reference-\(getpid())-\(UUID().uuidString.prefix(8)).txt")
        try Data(text.utf8).write(to: inputURL)
        defer { try? FileManager.default.removeItem(at: inputURL) }
        let output = Pipe(), errors = Pipe()
        process.standardInput = try FileHandle(forReadingFrom: inputURL)
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let reader = output.fileHandleForReading
        let errorReader = errors.fileHandleForReading
        let (data, errorData) = try await within(seconds: 240) {
            async let out = Task.detached { reader.readToEndRetryingInterrupts() }.value
            async let err = Task.detached { errorReader.readToEndRetryingInterrupts() }.value
            return await (out, err)
        }
        try await within(seconds: 60) { await Task.detached { process.waitUntilExit() }.value }
        guard process.terminationStatus == 0 else {
            let last = String(decoding: errorData, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
            throw Failure(description: "hrv_reference.py exited with status \(process.terminationStatus): \(last)")
        }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        return try lines.map { try JSONDecoder().decode(Result.self, from: Data($0.utf8)) }
    }
}
