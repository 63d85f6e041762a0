import Foundation
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// The outside tools the tests need are found in one place, missing ones are one actionable line,
/// and one switch (`RAWBLE_TESTS_WITHOUT_BUMBLE=1`) deselects the Bumble-backed suites.
@Suite("Test requirements (tshark, Bumble switch)")
struct TestRequirementsTests {
    @Test("tshark is found on the search path; without it the error is one line naming Scripts/bootstrap")
    func tsharkIsFoundOrMissingLoudly() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-tools-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let empty = directory.appendingPathComponent("empty").path
        let bin = directory.appendingPathComponent("bin").path
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let fake = bin + "/tshark"
        #expect(FileManager.default.createFile(atPath: fake, contents: Data("#!/bin/sh\n".utf8),
                                               attributes: [.posixPermissions: 0o755]))

        #expect(try TestRequirements.tshark(searchPath: "\(empty)::\(bin)") == fake)
        #expect(throws: MissingTool(name: "tshark")) { try TestRequirements.tshark(searchPath: empty) }
        #expect(throws: MissingTool(name: "tshark")) { try TestRequirements.tshark(searchPath: "") }
        let line = MissingTool(name: "tshark").description
        #expect(line.contains("run Scripts/bootstrap") && !line.contains("\n"))
    }

    @Test("RAWBLE_TESTS_WITHOUT_BUMBLE=1, and only 1, deselects the Bumble-backed suites")
    func bumbleSwitch() {
        #expect(TestRequirements.bumbleSuitesEnabled(in: [:]))
        #expect(TestRequirements.bumbleSuitesEnabled(in: ["RAWBLE_TESTS_WITHOUT_BUMBLE": "0"]))
        #expect(!TestRequirements.bumbleSuitesEnabled(in: ["RAWBLE_TESTS_WITHOUT_BUMBLE": "1"]))
        #expect(BumblePeerError.bumbleNotInstalled.description.contains("RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
    }
}
