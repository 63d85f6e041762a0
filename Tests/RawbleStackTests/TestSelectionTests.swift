import Foundation
import Testing

/// `Scripts/test` runs the kernel path's suites alone, after the others, selected by name
/// (`--filter VMTests`, `--skip VMTests`): Swift 6.3's `swift test` cannot select by tag (the
/// `tag:` filter arrived in swift-testing after it, #1531). The suites also carry the tags
/// `.vm` and `.bumble` (RawbleTestSupport), for toolchains that can. This keeps the two ways
/// the same: a suite is named `…VMTests` exactly when it is tagged `.vm`, and every suite that
/// needs Bumble (the `RAWBLE_TESTS_WITHOUT_BUMBLE` switch) is tagged `.bumble`.
@Suite struct TestSelectionTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every suite attribute in Tests/ with the type it names: (file, attribute text, type name).
    static func suites() throws -> [(file: String, attribute: String, type: String)] {
        let tests = root.appendingPathComponent("Tests")
        let files = try #require(FileManager.default.enumerator(at: tests, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" && $0.lastPathComponent != "TestSelectionTests.swift" }
        var found: [(String, String, String)] = []
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            var rest = text[...]
            while let start = rest.range(of: "@Suite") {
                let after = rest[start.upperBound...]
                guard let declaration = after.range(of: #"(struct|final class|class|enum|actor) [A-Za-z0-9_]+"#, options: .regularExpression)
                else { break }
                let attribute = String(rest[start.lowerBound..<declaration.lowerBound])
                let type = String(after[declaration].split(separator: " ").last ?? "")
                found.append((file.lastPathComponent, attribute, type))
                rest = after[declaration.upperBound...]
            }
        }
        return found
    }

    @Test func theVMSuitesAreNamedAndTaggedAlike() throws {
        let suites = try Self.suites()
        #expect(suites.count > 100, "found only \(suites.count) suites: the scan is broken")
        var vm = 0
        for suite in suites {
            let tagged = suite.attribute.contains(".tags(.vm")
            let named = suite.type.contains("VMTests")
            if tagged { vm += 1 }
            #expect(tagged == named, "\(suite.file): \(suite.type) is \(named ? "" : "not ")named …VMTests but \(tagged ? "" : "not ")tagged .vm")
        }
        #expect(vm >= 5, "only \(vm) suites tagged .vm")
    }

    @Test func everySuiteBehindTheBumbleSwitchIsTaggedBumble() throws {
        for suite in try Self.suites() where suite.attribute.contains("bumbleSuitesEnabled") {
            #expect(suite.attribute.contains(".bumble"), "\(suite.file): \(suite.type) needs Bumble but is not tagged .bumble")
        }
    }
}
