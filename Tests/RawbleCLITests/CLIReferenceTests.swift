import Foundation
import Testing

/// docs/cli.md's command reference is the commands' own `--help`: regenerated in memory by
/// `Scripts/cli-reference --check` from the binary under test, it must equal the file, so the
/// documentation cannot drift from the commands.
@Suite("The CLI reference in docs/cli.md")
struct CLIReferenceTests {
    /// The repository's root, from this file's place in it (Tests/RawbleCLITests/).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("docs/cli.md holds every command's current --help (run Scripts/cli-reference after changing a command)")
    func referenceIsCurrent() async throws {
        let script = Self.root.appendingPathComponent("Scripts/cli-reference").path
        let result = try await CLI.run([], launcher: ["/usr/bin/env", "python3", script, "--check", "--binary"])
        #expect(result.status == 0, "\(result.stderr)\n\(result.stdout)")
    }

    @Test("the README points at docs/cli.md, and the file exists")
    func readmePointsAtTheReference() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("docs/cli.md"))
        #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent("docs/cli.md").path))
    }
}
