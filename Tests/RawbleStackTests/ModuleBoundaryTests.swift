import Foundation
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// The layers stay where the package says they are: the contracts (`RawbleBearer` for ATT,
/// `RawbleHCITransport` for HCI) and the sans-I/O engines depend on no socket code, the engines
/// read no clock and touch no I/O library, every module imports exactly what the manifest
/// gives it, and only the umbrella re-exports. Read from the manifest and the sources
/// themselves, so the check cannot drift from them.
@Suite struct ModuleBoundaryTests {
    /// The repository's root: this file is Tests/RawbleStackTests/ModuleBoundaryTests.swift.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// What one target of the manifest depends on: targets of this package and products of others.
    struct Dependencies: Equatable {
        var targets: Set<String> = []
        var products: Set<String> = []
    }

    /// What the tests read of the manifest: each target's direct dependencies, and the folder
    /// of each target that names one (`path:`).
    struct Manifest: Sendable {
        var dependencies: [String: Dependencies] = [:]
        var paths: [String: String] = [:]
    }

    /// The manifest, read once for every test of the suite.
    static let parsedManifest = Task { try await readManifest() }
    static let manifest = Task { try await parsedManifest.value.dependencies }

    /// Targets whose folder is not Sources/<name>: the umbrella's would differ from the
    /// executable's Sources/rawble by case alone. `foldersAgreeWithTheManifest` keeps this and
    /// Package.swift the same.
    static let folders = ["Rawble": "Sources/RawbleUmbrella"]

    /// The folder of a module's sources, from the repository's root.
    static func folder(of module: String) -> String { folders[module] ?? "Sources/\(module)" }

    /// The module whose sources are in Sources/`folder`.
    static func module(inFolder folder: String) -> String {
        folders.first { $0.value == "Sources/\(folder)" }?.key ?? folder
    }

    /// Every target's direct dependencies and folder, as `swift package dump-package` reads
    /// Package.swift (evaluated with its own scratch path, so it never waits on the running
    /// build's lock).
    static func readManifest() async throws -> Manifest {
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("rawble-dump-package-\(getpid())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let (json, status) = try await within(seconds: 120) {
            try await runToEnd("/usr/bin/env", ["swift", "package", "--package-path", root.path,
                                                "--scratch-path", scratch.path, "dump-package"])
        }
        #expect(status == 0)
        let manifest = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let targets = try #require(manifest["targets"] as? [[String: Any]])
        var result = Manifest()
        for target in targets {
            let name = try #require(target["name"] as? String)
            if let path = target["path"] as? String { result.paths[name] = path }
            var dependencies = Dependencies()
            for dependency in target["dependencies"] as? [[String: Any]] ?? [] {
                if let byName = (dependency["byName"] ?? dependency["target"]) as? [Any],
                   let dependencyName = byName.first as? String {
                    dependencies.targets.insert(dependencyName)
                } else if let product = dependency["product"] as? [Any], let productName = product.first as? String {
                    dependencies.products.insert(productName)
                }
            }
            result.dependencies[name] = dependencies
        }
        return result
    }

    /// `target`'s dependencies and theirs, down to the leaves (this package's targets only
    /// recurse; products of other packages are leaves).
    static func closure(of target: String, in manifest: [String: Dependencies]) -> Dependencies {
        var seen = Dependencies()
        var work = [target]
        while let next = work.popLast() {
            guard let direct = manifest[next] else { continue }
            seen.products.formUnion(direct.products)
            for dependency in direct.targets where seen.targets.insert(dependency).inserted {
                work.append(dependency)
            }
        }
        return seen
    }

    /// The package's library modules (every target under Sources/ but the executable and the
    /// C headers), read from the folder so a new module is checked without being listed here.
    static func libraryModules() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Sources").path)
            .filter { $0.hasPrefix("Rawble") }.map(module(inFolder:)).sorted()
    }

    /// One `import` line of a source file: the module and the attribute before it, if any.
    struct Import: Hashable {
        var module: String
        var exported: Bool
    }

    /// Every import in `module`'s sources, by file name.
    static func imports(of module: String) throws -> [String: [Import]] {
        let folder = root.appendingPathComponent(folder(of: module))
        let files = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        var result: [String: [Import]] = [:]
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            var found: [Import] = []
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ").map(String.init)
                guard let index = words.firstIndex(of: "import"), index + 1 < words.count,
                      words[..<index].allSatisfy({ $0.hasPrefix("@") || $0 == "public" || $0 == "internal" || $0 == "package" })
                else { continue }
                let imported = words[index + 1].split(separator: ".").first.map(String.init) ?? ""
                found.append(Import(module: imported, exported: words[..<index].contains("@_exported")))
            }
            result[file.lastPathComponent] = found
        }
        return result
    }

    /// The sources of `module`, comments left out, by file name.
    static func code(of module: String) throws -> [String: String] {
        let folder = root.appendingPathComponent(folder(of: module))
        let files = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        var result: [String: String] = [:]
        for file in files {
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            result[file.lastPathComponent] = lines.filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
                .joined(separator: "\n")
        }
        return result
    }

    /// What the platform gives every module without a manifest entry.
    static let platformModules: Set<String> = [
        "Synchronization", "Dispatch", "Glibc", "Musl", "Foundation", "FoundationEssentials", "Testing",
    ]

    /// Modules that open sockets or devices, and those above them: everything else must not
    /// reach NIOPosix or swift-system, even through a dependency.
    static let socketModules: Set<String> = ["RawbleTransport", "RawbleKernel", "RawbleKernelHost", "RawbleStack", "Rawble",
                                             "RawbleLiveDisplay"]

    /// The test support: what tests (rawble's and embedders') run on, never linked by `rawble`.
    static let testSupport: Set<String> = ["RawbleTestSupport", "RawbleTestPeers"]

    /// The sans-I/O cores: bytes and events in, bytes and events out, time an input.
    static let engines = ["RawbleWire", "RawbleManagementCore", "RawbleHostCore", "RawbleGATTCore", "RawblePolarCore", "RawbleAnalysis", "RawbleReport", "RawbleSMP"]

    /// The one library an engine may use beyond the wire layer: the Security Manager's
    /// cryptography is swift-crypto's (AES, AES-CMAC and P-256 from BoringSSL), none of it I/O.
    static let engineProducts: [String: Set<String>] = ["RawbleSMP": ["Crypto", "CryptoExtras"]]

    /// The in-memory test support runs on NIO's embedded loop: no socket library, no process,
    /// no thread of its own (as swift-nio keeps NIOEmbedded apart from NIOTestUtils). The tests
    /// of the sans-I/O cores reach neither NIOPosix nor the peers that are real stacks, except
    /// where a test compares with a reference implementation run as a process (listed).
    @Test func theInMemoryTestSupportHasNoSocketsAndTheEngineTestsNoPeers() async throws {
        let manifest = try await Self.manifest.value
        let support = Self.closure(of: "RawbleTestSupport", in: manifest)
        #expect(support.products.isDisjoint(with: ["NIOPosix", "SystemPackage"]), "RawbleTestSupport reaches \(support.products)")
        #expect(!support.targets.contains("RawbleTestPeers"))
        #expect(try Self.imports(of: "RawbleTestSupport").values.allSatisfy { imports in
            !imports.contains { ["Foundation", "NIOPosix"].contains($0.module) }
        }, "RawbleTestSupport imports Foundation or NIOPosix")
        // Compared with reference tools run as processes (tshark, NeuroKit2, rsvg-convert).
        let withReferences: Set<String> = ["RawbleWireTests", "RawbleAnalysisTests", "RawbleReportTests"]
        for engine in Self.engines {
            let tests = engine + "Tests"
            guard manifest[tests] != nil else { continue }
            let closure = Self.closure(of: tests, in: manifest)
            #expect(!closure.products.contains("NIOPosix"), "\(tests) reaches NIOPosix")
            if !withReferences.contains(tests) {
                #expect(!closure.targets.contains("RawbleTestPeers"), "\(tests) depends on the test peers")
            }
        }
    }

    @Test func gattDependsOnTheWireTheBearerContractItsCoreAndLoggingOnly() async throws {
        let manifest = try await Self.manifest.value
        #expect(Self.closure(of: "RawbleGATT", in: manifest)
            == Dependencies(targets: ["RawbleWire", "RawbleBearer", "RawbleGATTCore"], products: ["Logging"]))
    }

    /// liblsl is opened at run time, never linked: RawbleLSL depends on nothing (the platform's
    /// loader aside), no manifest line links a library, and only the command line and the
    /// umbrella depend on it, so nothing else of rawble needs liblsl to build or run.
    @Test func theLSLBindingIsLoadedAtRunTimeNotLinked() async throws {
        let manifest = try await Self.manifest.value
        #expect(manifest["RawbleLSL"] != nil, "no RawbleLSL target in Package.swift")
        #expect(Self.closure(of: "RawbleLSL", in: manifest) == Dependencies())
        let packageText = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(!packageText.contains("linkedLibrary"), "Package.swift links a library: liblsl is loaded with dlopen")
        #expect(try Self.code(of: "RawbleLSL").values.contains { $0.contains("dlopen(") })
        let dependents = manifest.filter { $0.value.targets.contains("RawbleLSL") }.keys.filter { !$0.hasSuffix("Tests") }
        #expect(Set(dependents) == ["rawble", "Rawble"], "RawbleLSL's dependents: \(dependents.sorted())")
    }

    @Test func theContractsDependOnTheWireAndNIOCoreAtMost() async throws {
        let manifest = try await Self.manifest.value
        #expect(manifest["RawbleBearer"] != nil, "no RawbleBearer target in Package.swift")
        #expect(Self.closure(of: "RawbleBearer", in: manifest) == Dependencies())
        #expect(Self.closure(of: "RawbleHCITransport", in: manifest)
            == Dependencies(targets: ["RawbleWire"], products: ["NIOCore"]))
    }

    @Test func theHostSitsOnTheHCIContractNotOnTheTransports() async throws {
        let manifest = try await Self.manifest.value
        #expect(Self.closure(of: "RawbleHost", in: manifest)
            == Dependencies(targets: ["RawbleWire", "RawbleBearer", "RawbleHCITransport", "RawbleHostCore", "RawbleSMP"],
                            products: ["Logging", "NIOCore", "Crypto", "CryptoExtras"]))
    }

    @Test func noSocketLibraryBelowTheModulesThatOpenSockets() async throws {
        let manifest = try await Self.manifest.value
        for module in try Self.libraryModules() where !Self.socketModules.contains(module) {
            let closure = Self.closure(of: module, in: manifest)
            #expect(closure.products.isDisjoint(with: ["NIOPosix", "SystemPackage"]), "\(module) reaches \(closure.products)")
            #expect(closure.targets.isDisjoint(with: Self.socketModules), "\(module) reaches \(closure.targets)")
        }
    }

    /// An engine builds on other engines and the bearer contract at most (the session files on
    /// the PMD codec, say), never on a shell.
    @Test func theEnginesDependOnTheWireLayerAndOtherEnginesAtMost() async throws {
        let manifest = try await Self.manifest.value
        for module in Self.engines {
            let closure = Self.closure(of: module, in: manifest)
            #expect(closure.products.subtracting(Self.engineProducts[module] ?? []).isEmpty, "\(module) depends on \(closure.products)")
            #expect(closure.targets.isSubset(of: Set(Self.engines).union(["RawbleBearer"])), "\(module) depends on \(closure.targets)")
        }
    }

    @Test func theSecurityManagerDependsOnTheWireAndSwiftCryptoOnly() async throws {
        let manifest = try await Self.manifest.value
        #expect(manifest["RawbleSMP"] != nil, "no RawbleSMP target in Package.swift")
        #expect(Self.closure(of: "RawbleSMP", in: manifest)
            == Dependencies(targets: ["RawbleWire"], products: ["Crypto", "CryptoExtras"]))
    }

    /// The Security Manager's PDUs import the wire layer only, so Scripts/fuzz can compile them
    /// with it into one module; swift-crypto stays in its cryptography.
    @Test func theSecurityManagerPDUsImportTheWireLayerOnly() throws {
        let folder = Self.root.appendingPathComponent("Sources/RawbleSMP/PDU")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        #expect(!files.isEmpty)
        for (file, imports) in try Self.imports(of: "RawbleSMP") where files.contains(file) {
            #expect(imports.map(\.module) == ["RawbleWire"], "RawbleSMP/PDU/\(file) imports \(imports.map(\.module))")
        }
    }

    /// The bond values and their file import the wire layer only, so Scripts/fuzz compiles them
    /// with it (FuzzBondFile); what needs the cryptography stays in the files beside them.
    @Test func theBondValuesAndTheirFileImportTheWireLayerOnly() throws {
        let imports = try Self.imports(of: "RawbleSMP")
        for file in ["Bond.swift", "BondFile.swift"] {
            let found = try #require(imports[file], "no RawbleSMP/Bonds/\(file)")
            #expect(found.map(\.module) == ["RawbleWire"], "RawbleSMP/Bonds/\(file) imports \(found.map(\.module))")
        }
        let script = try String(contentsOf: Self.root.appendingPathComponent("Scripts/fuzz"), encoding: .utf8)
        #expect(script.contains("echo Sources/RawbleSMP/Bonds/Bond.swift") && script.contains("echo Sources/RawbleSMP/Bonds/BondFile.swift"))
    }

    /// No I/O library, no Dispatch, no clock and no sleep in an engine: time comes in as a value.
    @Test(arguments: engines)
    func enginesReadNoClock(module: String) throws {
        let banned = ["ContinuousClock", "SuspendingClock", "Task.sleep", "Date()", "DispatchQueue", "DispatchTime", "clock_gettime"]
        for (file, text) in try Self.code(of: module) {
            for word in banned {
                #expect(!text.contains(word), "\(module)/\(file) uses \(word)")
            }
        }
        for (file, imports) in try Self.imports(of: module) {
            for imported in imports where imported.module.hasPrefix("NIO") || ["Dispatch", "Foundation", "FoundationEssentials", "SystemPackage"].contains(imported.module) {
                Issue.record("\(module)/\(file) imports \(imported.module)")
            }
        }
    }

    /// The async shells take their clock (from their configuration or a parameter, the real
    /// continuous clock by default) and sleep only on it, so their timeouts are tested in
    /// virtual time (RawbleTestSupport's `ManualClock`): no library module reads the time or
    /// sleeps on a clock of its own. The exceptions, by file and word: two blocking calls
    /// whose wait is poll(2)'s own real-time timeout (the management command an adapter's
    /// opening sends before any event loop runs; a raw socket's full send buffer), a capture's
    /// timestamps (the wall clock by definition), and the event loop's clock itself.
    @Test func shellsReadNoClockOfTheirOwn() throws {
        let banned = ["ContinuousClock.now", "ContinuousClock.Instant", "SuspendingClock", "clock: .continuous",
                      "Task.sleep", "Thread.sleep", "usleep(", "nanosleep(", "Date()", "asyncAfter", "DispatchTime",
                      "DispatchWallTime", "clock_gettime"]
        let allowed: [String: Set<String>] = [
            "KernelManagement.swift": ["ContinuousClock.now", "usleep("],
            "KernelRawChannel.swift": ["ContinuousClock.now"],
            "BtsnoopCapture.swift": ["clock_gettime"],
            "EventLoopClock.swift": ["ContinuousClock.Instant"],
            "ArrivalRate.swift": ["ContinuousClock.Instant"],  // `ArrivalRate`: `Arrivals` on the real clock's instants
        ]
        for module in try Self.libraryModules() where !Self.testSupport.contains(module) {
            for (file, text) in try Self.code(of: module) {
                for word in banned where text.contains(word) && !(allowed[file]?.contains(word) ?? false) {
                    Issue.record("\(module)/\(file) uses \(word): take the clock as an input")
                }
            }
        }
    }

    /// Each module's sources import exactly its manifest dependencies (and the platform's own
    /// modules), and each dependency is imported somewhere: the two cannot drift apart.
    @Test func importsAgreeWithTheManifest() async throws {
        let manifest = try await Self.manifest.value
        for module in try Self.libraryModules() {
            let declared = try #require(manifest[module], "Sources/\(module) is no target in Package.swift")
            let allowed = declared.targets.union(declared.products).union(Self.platformModules)
            var used: Set<String> = []
            for (file, imports) in try Self.imports(of: module) {
                for imported in imports {
                    used.insert(imported.module)
                    #expect(allowed.contains(imported.module), "\(module)/\(file) imports \(imported.module), not a dependency in Package.swift")
                }
            }
            let unused = declared.targets.union(declared.products).subtracting(used)
            #expect(unused.isEmpty, "\(module) declares \(unused.sorted()) in Package.swift but imports none of it")
        }
    }

    /// The whole of Foundation and the libraries only it brings: ICU's data alone is ~30 MB of a
    /// static binary, and each of them a library loaded at every start.
    static let wholeFoundation: Set<String> = [
        "Foundation", "FoundationInternationalization", "FoundationNetworking", "FoundationXML",
    ]

    /// The `rawble` executable and every module of this package it links import
    /// `FoundationEssentials` at most, never the whole of Foundation, so the static binary
    /// stays small (docs/install.md); only the test support, which `rawble` does not link,
    /// may. Read from the manifest, so a module the executable starts to link is checked too.
    @Test func theCommandLineLinksFoundationEssentialsAtMost() async throws {
        let manifest = try await Self.manifest.value
        let linked = Self.closure(of: "rawble", in: manifest).targets.union(["rawble"])
        #expect(linked.contains("RawbleStack"), "rawble's closure in Package.swift: \(linked.sorted())")
        #expect(linked.isDisjoint(with: Self.testSupport), "rawble links the test support")
        for module in linked.sorted() {
            for (file, imports) in try Self.imports(of: module) {
                for imported in imports where Self.wholeFoundation.contains(imported.module) {
                    Issue.record("\(module)/\(file) imports \(imported.module): rawble links it, so import FoundationEssentials (or nothing)")
                }
            }
        }
    }

    /// The modules that may re-export: the umbrella, and RawbleStack, the umbrella before it,
    /// for the code written against it.
    static let reExporters: Set<String> = ["Rawble", "RawbleStack"]

    /// Re-exports hide the dependency graph: only the umbrella has them.
    @Test func onlyTheUmbrellaReExports() throws {
        for module in try Self.libraryModules() where !Self.reExporters.contains(module) {
            for (file, imports) in try Self.imports(of: module) {
                for imported in imports where imported.exported {
                    Issue.record("\(module)/\(file) re-exports \(imported.module): only \(Self.reExporters.sorted()) may")
                }
            }
        }
    }

    /// `import Rawble` brings every library module but the test support, so a new module is
    /// in the umbrella from its first day; the umbrella has nothing but re-exports.
    @Test func theUmbrellaReExportsEveryLibraryModule() throws {
        let expected = Set(try Self.libraryModules()).subtracting(Self.testSupport.union(["Rawble"]))
        var exported: Set<String> = []
        for (file, imports) in try Self.imports(of: "Rawble") {
            for imported in imports {
                #expect(imported.exported, "Rawble/\(file) imports \(imported.module) without re-exporting it")
                exported.insert(imported.module)
            }
        }
        #expect(exported == expected, "Rawble re-exports \(exported.sorted()), the library modules are \(expected.sorted())")
        for (file, code) in try Self.code(of: "Rawble") {
            let rest = code.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty && !$0.hasPrefix("@_exported import ") }
            #expect(rest.isEmpty, "Rawble/\(file) holds code: \(rest)")
        }
    }

    /// A target whose folder the manifest names (`path:`) is in `folders`, with that folder.
    @Test func foldersAgreeWithTheManifest() async throws {
        let moved = try await Self.parsedManifest.value.paths.filter { $0.value != "Sources/\($0.key)" }
        #expect(moved == Self.folders, "Package.swift's own folders \(moved), the tests' \(Self.folders)")
    }

    /// docs/architecture.md's "Depends on" column names each module's direct dependencies
    /// exactly as the manifest does (packages' products by product name; "—" for none).
    @Test func theArchitectureTableAgreesWithTheManifest() async throws {
        let manifest = try await Self.manifest.value
        let table = try String(contentsOf: Self.root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        var documented: Set<String> = []
        for line in table.split(separator: "\n") where line.hasPrefix("| `Sources/") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4 else { continue }
            let module = Self.module(inFolder: cells[1].replacingOccurrences(of: "`Sources/", with: "").replacingOccurrences(of: "/`", with: ""))
            guard let declared = manifest[module] else { continue }  // the DocC catalogs' row
            documented.insert(module)
            let named = cells[3] == "—" ? Set<String>() : Set(cells[3].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(named == declared.targets.union(declared.products),
                    "docs/architecture.md, \(module): \(named.sorted()) but Package.swift: \(declared.targets.union(declared.products).sorted())")
        }
        for module in try Self.libraryModules() {
            #expect(documented.contains(module), "docs/architecture.md has no row for Sources/\(module)/")
        }
    }
}
