import Foundation
import Testing

/// docs/architecture.md is the map a newcomer reads first, so a test holds it to the tree: the
/// kinds of module it names are the package's library modules, each once, and its cores are the
/// engines `ModuleBoundaryTests` keeps sans I/O; every folder and file it names exists, in the
/// module it is listed under; a type it names under a module is declared there or below it; and
/// its "where is X" table answers the questions a newcomer asks first with files that exist.
/// (Each module's "Depends on" cell is `ModuleBoundaryTests.theArchitectureTableAgreesWithTheManifest`'s.)
@Suite struct ArchitectureDocTests {
    typealias Boundaries = ModuleBoundaryTests

    static func document() throws -> String {
        try String(contentsOf: Boundaries.root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
    }

    /// The rows of the table that follows `heading` (the first table after it), as trimmed cells.
    static func table(after heading: String, in text: String) throws -> [[String]] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex(of: heading), "docs/architecture.md has no \"\(heading)\"")
        var rows: [[String]] = []
        for line in lines[(start + 1)...] {
            if line.hasPrefix("#") { break }
            guard line.hasPrefix("|") else {
                if rows.isEmpty { continue } else { break }
            }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            if cells.allSatisfy({ $0.allSatisfy { "-: ".contains($0) } }) { continue }  // the separator
            rows.append(cells)
        }
        return Array(rows.dropFirst())  // the header
    }

    /// What a cell puts in backticks, in order.
    static func codeSpans(_ cell: String) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// Names in a cell, comma-separated, backticks dropped.
    static func names(_ cell: String) -> [String] {
        cell.replacingOccurrences(of: "`", with: "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The types, protocols and aliases each module of Sources/ declares, by module.
    static func declarations() throws -> [String: Set<String>] {
        let sources = Boundaries.root.appendingPathComponent("Sources")
        let pattern = try Regex(#"(?:struct|enum|class|actor|protocol|typealias)\s+([A-Z][A-Za-z0-9_]*)"#)
        var result: [String: Set<String>] = [:]
        for folder in try FileManager.default.contentsOfDirectory(atPath: sources.path) {
            let module = Boundaries.module(inFolder: folder)
            let files = FileManager.default.enumerator(at: sources.appendingPathComponent(folder), includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
            for file in files {
                let text = try String(contentsOf: file, encoding: .utf8)
                for match in text.matches(of: pattern) {
                    if let name = match.output[1].substring { result[module, default: []].insert(String(name)) }
                }
            }
        }
        return result
    }

    static func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: Boundaries.root.appendingPathComponent(path).path)
    }

    /// The kinds of module: every library module and the command line in exactly one, the cores
    /// exactly the engines whose rules `ModuleBoundaryTests` enforces, and a name ending in
    /// `Core` only on a core.
    @Test func theKindsOfModuleAreThePackagesModules() throws {
        let rows = try Self.table(after: "## Kinds of module", in: Self.document())
        var listed: [String] = []
        var cores: [String] = []
        for row in rows {
            try #require(row.count >= 2, "a kind row without modules: \(row)")
            listed += Self.names(row[1])
            if row[0].lowercased().contains("core") { cores = Self.names(row[1]) }
        }
        #expect(Set(listed).count == listed.count, "a module in two kinds: \(listed.sorted())")
        let modules = try Boundaries.libraryModules() + ["rawble"]
        #expect(Set(listed) == Set(modules), "kinds name \(listed.sorted()), the package has \(modules)")
        #expect(Set(cores) == Set(Boundaries.engines), "the doc's cores \(cores.sorted()), the tests' engines \(Boundaries.engines.sorted())")
        for module in listed where module.hasSuffix("Core") {
            #expect(Boundaries.engines.contains(module), "\(module) is named a core but is not kept sans I/O")
        }
    }

    /// Each folder and file the module table names exists: a module's row by its path, the rows
    /// under it relative to it; a module that lists its folders lists them all; and a type named
    /// under a module is that module's or one it depends on (so a type that moves takes its row
    /// along). Names no module declares (SwiftNIO's, the kernel's) are free.
    @Test func theModuleTableNamesWhatIsOnDisk() async throws {
        let manifest = try await Boundaries.manifest.value
        let declared = try Self.declarations()
        let rows = try Self.table(after: "## Modules", in: Self.document())
        var module: String?
        var folder = ""
        var listedFolders: [String: Set<String>] = [:]
        for row in rows {
            let paths = Self.codeSpans(row[0])
            if let first = paths.first, !first.hasPrefix(" ") {
                for path in paths where !path.contains("<") {
                    #expect(Self.exists(path), "docs/architecture.md names \(path), which is not in the tree")
                }
                if first.hasPrefix("Sources/") {
                    folder = first
                    let name = Boundaries.module(inFolder: String(first.dropFirst("Sources/".count).dropLast()))
                    module = manifest[name] == nil ? nil : name
                } else {
                    module = nil
                }
            } else {
                for path in paths {
                    let relative = path.trimmingCharacters(in: .whitespaces)
                    #expect(Self.exists(folder + relative), "docs/architecture.md names \(folder + relative), which is not in the tree")
                    if relative.hasSuffix("/"), !relative.dropLast().contains("/") {
                        listedFolders[folder, default: []].insert(String(relative.dropLast()))
                    }
                }
            }
            guard let module else { continue }
            let allowed = Boundaries.closure(of: module, in: manifest).targets.union([module])
            for name in row.dropLast().flatMap(Self.codeSpans) where name.wholeMatch(of: /[A-Z][A-Za-z0-9]*/) != nil {
                let owners = declared.filter { $0.value.contains(name) }.map(\.key)
                guard !owners.isEmpty else { continue }
                #expect(!allowed.isDisjoint(with: owners),
                        "docs/architecture.md names \(name) under \(module), but it is declared in \(owners.sorted())")
            }
        }
        for (folder, listed) in listedFolders {
            let onDisk = try FileManager.default.contentsOfDirectory(atPath: Boundaries.root.appendingPathComponent(folder).path)
                .filter { name in
                    var isFolder: ObjCBool = false
                    let exists = FileManager.default.fileExists(atPath: Boundaries.root.appendingPathComponent(folder + name).path, isDirectory: &isFolder)
                    return exists && isFolder.boolValue && !name.hasSuffix(".docc")
                }
            #expect(Set(onDisk) == listed, "docs/architecture.md lists \(folder)'s folders as \(listed.sorted()), the tree has \(onDisk.sorted())")
        }
    }

    /// "Where is X": the questions a newcomer asks first each have a row, and each row's files
    /// exist in the modules the row names.
    @Test func whereIsXNamesFilesThatExist() async throws {
        let manifest = try await Boundaries.manifest.value
        let rows = try Self.table(after: "## Where is X", in: Self.document())
        let asked = ["scan on hciN", "scan on rawble's own host", "connect", "ATT client", "GATT server", "pairing", "Polar", "HRV"]
        for question in asked {
            #expect(rows.contains { $0[0].replacingOccurrences(of: "`", with: "").localizedCaseInsensitiveContains(question) },
                    "docs/architecture.md's \"Where is X\" has no row for \(question)")
        }
        for row in rows {
            try #require(row.count == 3, "a \"Where is X\" row needs what, modules and files: \(row)")
            let modules = Self.names(row[1])
            for module in modules {
                #expect(manifest[module] != nil, "\"Where is X\" names \(module), no target in Package.swift")
            }
            let files = Self.codeSpans(row[2]).filter { $0.contains("/") }  // the rest is code (`Adapter`, `hciN`)
            #expect(!files.isEmpty, "\"Where is X\": \(row[0]) names no file")
            for file in files {
                #expect(Self.exists(file), "\"Where is X\" names \(file), which is not in the tree")
                #expect(modules.contains { file.hasPrefix(Boundaries.folder(of: $0) + "/") },
                        "\"Where is X\": \(file) is in none of \(modules)")
            }
        }
    }
}
