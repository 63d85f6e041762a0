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

    /// The names under a help text's SUBCOMMANDS heading (as Scripts/cli-reference walks them).
    static func subcommands(_ help: String) -> [String] {
        var names: [String] = []
        var inSection = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("SUBCOMMANDS:") { inSection = true; continue }
            guard inSection else { continue }
            if !line.hasPrefix(" ") { if !line.isEmpty { break } else { continue } }
            // "  hrm   A Heart Rate …", not the closing "  See 'rawble help …'" line.
            if let match = line.prefixMatch(of: /\ \ ([a-z][a-z0-9-]*)( |$)/) { names.append(String(match.output.1)) }
        }
        return names.filter { $0 != "help" }
    }

    /// Paragraphs written line by line (examples, lists) must fit 80 columns as written:
    /// argument-parser wraps each line that does not on its own, leaving a word or two on a line
    /// of its own in the middle of a phrase. A paragraph written as one long line is wrapped
    /// whole, which reads well. Checked on the text above USAGE (the overview and the
    /// discussion), at 80 columns against a width that wraps nothing.
    @Test("help at 80 columns: no line of a paragraph written line by line is wrapped mid-phrase")
    func helpFitsEightyColumns() async throws {
        var queue: [[String]] = [[]]
        var wrapped: [String] = []
        while let path = queue.popLast() {
            let narrow = try await CLI.run(path + ["--help"], environment: ["COLUMNS": "80"])
            let wide = try await CLI.run(path + ["--help"], environment: ["COLUMNS": "5000"])
            queue += Self.subcommands(wide.stdout).map { path + [$0] }
            let lines = { (text: String) in text.components(separatedBy: "\n").prefix { !$0.hasPrefix("USAGE:") } }
            let fitting = Set(lines(narrow.stdout))
            let written = Array(lines(wide.stdout))
            for (index, line) in written.enumerated() where !fitting.contains(line) {
                let alone = (index == 0 || written[index - 1].isEmpty) && (index + 1 == written.count || written[index + 1].isEmpty)
                if !alone { wrapped.append("rawble \(path.joined(separator: " ")): \(line)") }
            }
        }
        #expect(wrapped.isEmpty, "lines longer than 79 columns in a paragraph written line by line:\n\(wrapped.joined(separator: "\n"))")
    }

    @Test("the README points at docs/cli.md, and the file exists")
    func readmePointsAtTheReference() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("docs/cli.md"))
        #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent("docs/cli.md").path))
    }

    @Test("the README is a front page (at most 200 lines), and every relative link of it and of docs/ reaches a file")
    func readmeIsAFrontPageAndLinksResolve() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count - (readme.hasSuffix("\n") ? 1 : 0)
        #expect(lines <= 200, "README.md has \(lines) lines: the rest belongs in docs/")
        let docs = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        var checked = 0
        for file in ["README.md", "SECURITY.md"] + docs {
            let text = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8)
            let folder = Self.root.appendingPathComponent(file).deletingLastPathComponent()
            for match in text.matches(of: /\]\(([^)\s#]+)(#[^)\s]*)?\)/) {
                let target = String(match.output.1)
                if target.contains("://") || target.hasPrefix("mailto:") { continue }
                checked += 1
                #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(target).path),
                        "\(file) links to \(target), which is not there")
            }
        }
        #expect(checked > 20, "only \(checked) links found: the pattern no longer matches")
    }
}
