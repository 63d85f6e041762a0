import Foundation
import RawbleTestSupport
import Testing

/// `Scripts/package-deb` on this machine: what the `.deb` holds and declares, lintian's verdict,
/// and the one-line refusals. Installing and using it is `PackageVMTests` (in a real kernel).
///
/// It packages the binary under test, the debug build linked to the toolchain's runtime
/// (`--toolchain-runtime`): lintian's one complaint about that binary, its RUNPATH into the
/// toolchain, is the only tag suppressed; the static release build has no RUNPATH.
@Suite("Shipping: the Debian package (Scripts/package-deb)")
struct DebianPackageTests {
    static let script = ShippingTests.root.appendingPathComponent("Scripts/package-deb").path

    /// Scripts/package-deb with `arguments`, bounded in time.
    static func packageDeb(_ arguments: [String]) async throws -> ProgramResult {
        try await Program.run(["timeout", "-k", "5", "300", script] + arguments)
    }

    /// The files a package of rawble installs, as `dpkg-deb -c` lists them (folders left out).
    static let packagedFiles = [
        "./usr/bin/rawble",
        "./usr/share/bash-completion/completions/rawble",
        "./usr/share/doc/rawble/changelog.gz",
        "./usr/share/doc/rawble/copyright",
        "./usr/share/fish/vendor_completions.d/rawble.fish",
        "./usr/share/man/man1/rawble.1.gz",
        "./usr/share/zsh/vendor-completions/_rawble",
    ]

    @Test("the package: its seven files, owned by root, the fields Debian needs, Depends only on libc6, libstdc++6, libgcc-s1, adduser and debconf, a debconf question and a postinst that give the capabilities to the group rawble only; lintian finds no error or warning")
    func packageContents() async throws {
        let output = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(output) }
        let packaged = try await Self.packageDeb(["--binary", CLI.executable.path, "--toolchain-runtime",
                                                  "--compression", "gzip", "--output", output.path])
        try #require(packaged.status == 0, "\(packaged.stderr)")
        let deb = packaged.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let version = try ShippingTests.versionFile()
        let architecture = try await Program.run(["dpkg", "--print-architecture"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(deb == output.appendingPathComponent("rawble_\(version)_\(architecture).deb").path, "\(packaged.stdout)")

        // Contents: exactly these files, root's, the binary executable.
        let listing = try await Program.run(["dpkg-deb", "--contents", deb])
        try #require(listing.status == 0, "\(listing.stderr)")
        let entries = listing.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        let files = entries.filter { $0.first?.hasPrefix("-") == true }
        #expect(files.compactMap { $0.last.map(String.init) }.sorted() == Self.packagedFiles, "\(listing.stdout)")
        #expect(entries.allSatisfy { $0.count > 1 && $0[1] == "root/root" }, "\(listing.stdout)")
        #expect(files.first { $0.last == "./usr/bin/rawble" }?.first == "-rwxr-xr-x", "\(listing.stdout)")

        // Control: every field, the version from VERSION, only the libraries it links.
        let control = try await Program.run(["dpkg-deb", "--field", deb])
        try #require(control.status == 0, "\(control.stderr)")
        var fields: [String: String] = [:]
        for line in control.stdout.split(separator: "\n") where !line.hasPrefix(" ") {
            if let colon = line.firstIndex(of: ":") {
                fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        #expect(fields["Package"] == "rawble")
        #expect(fields["Version"] == version)
        #expect(fields["Architecture"] == architecture)
        #expect(fields["Recommends"] == "libcap2-bin")
        #expect(fields["Maintainer"]?.contains("@") == true)
        #expect(Int(fields["Installed-Size"] ?? "") ?? 0 > 1_000, "\(fields)")
        let depends = (fields["Depends"] ?? "").split(separator: ",").map {
            String($0.trimmingCharacters(in: .whitespaces).prefix { $0 != " " })
        }
        // The libraries it links, and what its maintainer scripts use (addgroup, debconf).
        #expect(depends.contains("libc6") && Set(depends).isSubset(of: ["libc6", "libstdc++6", "libgcc-s1", "adduser", "debconf"]),
                "\(fields)")
        #expect(fields["Depends"]?.hasSuffix(", adduser, debconf (>= 0.5) | debconf-2.0") == true, "\(fields)")

        // The debconf question and its config script; the postinst gives the capabilities to
        // the group rawble only (root:rawble 0754, =ep) unless an override exists; the postrm
        // forgets the answer on purge.
        let folder = output.appendingPathComponent("control")
        let extracted = try await Program.run(["dpkg-deb", "--control", deb, folder.path])
        try #require(extracted.status == 0, "\(extracted.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
                == ["config", "control", "md5sums", "postinst", "postrm", "templates"])
        let templates = try String(contentsOf: folder.appendingPathComponent("templates"), encoding: .utf8)
        #expect(templates.hasPrefix("Template: rawble/group-capabilities\nType: boolean\nDefault: true\n"), "\(templates)")
        #expect(templates.contains("record") && templates.contains("every Bluetooth packet"), "the question says what membership allows: \(templates)")
        let postinst = try String(contentsOf: folder.appendingPathComponent("postinst"), encoding: .utf8)
        for line in ["dpkg-statoverride --list \"$program\"", "addgroup --quiet --system \"$group\"", "chown root:\"$group\" \"$program\"",
                     "chmod u=rwx,g=rx,o=r \"$program\"", "capabilities=cap_net_raw,cap_net_admin=ep", "setcap \"$capabilities\" \"$program\""] {
            #expect(postinst.contains(line), "the postinst lacks \(line): \(postinst)")
        }
        #expect(!postinst.contains("+eip"), "nothing inheritable: \(postinst)")
        // No one is added to the group: adduser appears only in what the postinst says.
        let adds = postinst.split(separator: "\n").filter { $0.contains("adduser ") }
        #expect(!adds.isEmpty && adds.allSatisfy { $0.contains("echo ") }, "\(adds)")
        for script in ["config", "postinst", "postrm"] {
            let syntax = try await Program.run(["sh", "-n", folder.appendingPathComponent(script).path])
            #expect(syntax.status == 0, "\(script): \(syntax.stderr)")
        }

        // Debian's own checker (Scripts/bootstrap installs it; missing, this fails).
        let lintian = try await Program.run(["timeout", "-k", "5", "300", "lintian", "--fail-on", "error,warning",
                                             "--suppress-tags", "custom-library-search-path", deb])
        #expect(lintian.status == 0, "lintian: \(lintian.stdout)\(lintian.stderr)")
        #expect(!lintian.stdout.split(separator: "\n").contains { $0.hasPrefix("E:") || $0.hasPrefix("W:") }, "\(lintian.stdout)")
    }

    @Test("a binary linked to the toolchain's runtime, without --toolchain-runtime: one line naming the static build (65)")
    func refusesTheToolchainRuntime() async throws {
        let output = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(output) }
        let result = try await Self.packageDeb(["--binary", CLI.executable.path, "--output", output.path])
        #expect(result.status == 65)
        #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains("package the static build"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: output.path).isEmpty)
    }

    @Test("not rawble, no binary, an unknown compressor: one line each (65, 66, 64)",
          arguments: [(["--binary", "/bin/true"], Int32(65), "VERSION is"),
                      (["--binary", "/nonexistent/rawble"], Int32(66), "no rawble executable"),
                      (["--compression", "zip"], Int32(64), "--compression is xz, gzip or none")])
    func refusals(arguments: [String], status: Int32, says: String) async throws {
        let result = try await Self.packageDeb(arguments)
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stderr.contains(says), "\(result.stderr)")
    }
}
