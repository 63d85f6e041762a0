import Foundation

/// An independent Lab Streaming Layer inlet for tests: pylsl in the project's venv
/// (`Scripts/python/lsl_inlet.py`), which receives what an outlet sends as LabRecorder would,
/// with liblsl from pylsl's wheel. Discovery stays on this machine (``writeMachineOnlyConfig(in:)``).
public enum LSLInlet {
    /// The package's root (this file is Sources/RawbleTestSupport/LSLInlet.swift).
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The liblsl of pylsl in the project's venv (`RAWBLE_VENV`, default `.build/venv`), which
    /// `Scripts/bootstrap` installs.
    ///
    /// - Throws: a ``PythonReferenceFailure`` naming the fix when it is not there.
    public static func venvLibrary() throws -> String {
        let venv = ProcessInfo.processInfo.environment["RAWBLE_VENV"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? root.appendingPathComponent(".build/venv")
        let lib = venv.appendingPathComponent("lib")
        let pythons = (try? FileManager.default.contentsOfDirectory(atPath: lib.path))?.filter { $0.hasPrefix("python3") } ?? []
        guard let path = pythons.sorted().map({ lib.appendingPathComponent("\($0)/site-packages/pylsl/lib/liblsl.so.2").path })
            .first(where: { FileManager.default.fileExists(atPath: $0) })
        else {
            throw PythonReferenceFailure(description: "no pylsl (with its liblsl.so.2) in \(venv.path): run Scripts/bootstrap")
        }
        return path
    }

    /// Writes an `lsl_api.cfg` into `directory` that keeps LSL's discovery on this machine
    /// (multicast scope `machine`, no IPv6) and liblsl's own log quiet; returns its path, for
    /// `LSLAPICFG`.
    public static func writeMachineOnlyConfig(in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("lsl_api.cfg").path
        try Data("[ports]\nIPv6 = disable\n\n[multicast]\nResolveScope = machine\n\n[log]\nlevel = -3\n".utf8)
            .write(to: URL(fileURLWithPath: path))
        return path
    }

    /// What the inlet received of one stream, and the stream's metadata as its XML says it.
    public struct Stream: Decodable, Sendable {
        public struct Channel: Decodable, Hashable, Sendable {
            public var label: String?
            public var unit: String?
            public var type: String?
        }
        public var sourceID: String
        public var resolved: Bool
        public var name: String?
        public var type: String?
        public var nominalRate: Double?
        public var channelCount: Int?
        public var sourceIDInXML: String?
        public var channels: [Channel]?
        public var acquisition: [String: String]?
        /// One array of channel values per sample, in order.
        public var values: [[Double]]
        /// Each sample's timestamp, as the outlet gave it (LSL's clock of the sending machine).
        public var timestamps: [Double]
        /// `local_clock()` when each sample was pulled by the inlet.
        public var pulledAt: [Double]
    }

    /// What ``receive(_:config:seconds:)`` answered.
    public struct Reception: Decodable, Sendable {
        /// Whether every stream got its minimum of samples in time.
        public var complete: Bool
        public var streams: [Stream]

        /// The stream with that source ID.
        public func stream(_ sourceID: String) -> Stream? { streams.first { $0.sourceID == sourceID } }
    }

    /// Resolves each stream (source ID, and the samples to wait for) with pylsl under `config`,
    /// receives until each has its minimum or `seconds` pass, closes the inlets and answers.
    public static func receive(_ streams: [(sourceID: String, minimum: Int)], config: String, seconds: Double) async throws -> Reception {
        let request: [String: Any] = [
            "config": config, "timeout": seconds,
            "streams": streams.map { ["sourceID": $0.sourceID, "minimum": $0.minimum] as [String: Any] },
        ]
        let input = String(decoding: try JSONSerialization.data(withJSONObject: request), as: UTF8.self)
        let lines = try await runPythonReference("lsl_inlet.py", root: root, input: input, seconds: seconds + 30)
        guard let last = lines.last else { throw PythonReferenceFailure(description: "lsl_inlet.py printed nothing") }
        return try JSONDecoder().decode(Reception.self, from: Data(last.utf8))
    }
}
