import Foundation
import RawbleTestSupport
import Testing

/// The GATT client and the bearer contract stay free of the transports (and of the I/O
/// library under them): an embedder who brings their own ``ATTBearer`` links neither. Read
/// from the manifest and the sources themselves, so the check cannot drift from them.
@Suite struct ModuleBoundaryTests {
    /// The repository's root: this file is Tests/RawbleGATTTests/ModuleBoundaryTests.swift.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// What one target of the manifest depends on: targets of this package and products of others.
    struct Dependencies: Equatable {
        var targets: Set<String> = []
        var products: Set<String> = []
    }

    /// The manifest, read once for every test of the suite.
    static let manifest = Task { try await manifestDependencies() }

    /// Every target's direct dependencies, as `swift package dump-package` reads Package.swift
    /// (evaluated with its own scratch path, so it never waits on the running build's lock).
    static func manifestDependencies() async throws -> [String: Dependencies] {
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
        var result: [String: Dependencies] = [:]
        for target in targets {
            let name = try #require(target["name"] as? String)
            var dependencies = Dependencies()
            for dependency in target["dependencies"] as? [[String: Any]] ?? [] {
                if let byName = (dependency["byName"] ?? dependency["target"]) as? [Any],
                   let dependencyName = byName.first as? String {
                    dependencies.targets.insert(dependencyName)
                } else if let product = dependency["product"] as? [Any], let productName = product.first as? String {
                    dependencies.products.insert(productName)
                }
            }
            result[name] = dependencies
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

    @Test func gattDependsOnTheWireTheBearerContractAndLoggingOnly() async throws {
        let manifest = try await Self.manifest.value
        #expect(Self.closure(of: "RawbleGATT", in: manifest)
            == Dependencies(targets: ["RawbleWire", "RawbleBearer"], products: ["Logging"]))
    }

    @Test func theBearerContractDependsOnNothing() async throws {
        let manifest = try await Self.manifest.value
        #expect(manifest["RawbleBearer"] != nil, "no RawbleBearer target in Package.swift")
        #expect(Self.closure(of: "RawbleBearer", in: manifest) == Dependencies())
    }

    /// The sources agree with the manifest: no file of these modules imports anything else.
    @Test(arguments: [
        ("RawbleGATT", ["RawbleWire", "RawbleBearer", "Logging", "Synchronization"]),
        ("RawbleBearer", ["Synchronization"]),  // the standard library's Mutex (ATTInbox)
    ])
    func importsStayInside(module: String, allowed: [String]) throws {
        let folder = Self.root.appendingPathComponent("Sources/\(module)")
        let files = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
        #expect(!files.isEmpty, "no sources in Sources/\(module)")
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ").map(String.init)
                guard let index = words.firstIndex(of: "import"), index + 1 < words.count,
                      words[..<index].allSatisfy({ $0.hasPrefix("@") || $0 == "public" || $0 == "internal" })
                else { continue }
                let imported = words[index + 1].split(separator: ".").first.map(String.init) ?? ""
                #expect(allowed.contains(imported), "\(file.lastPathComponent) imports \(imported)")
            }
        }
    }
}
