import Foundation
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// What a person installing rawble gets: the version and the commit it was built from, a man page
/// and completions that are the commands' own help, an install script that does all of it or
/// nothing, and a binary that links no more of Foundation than FoundationEssentials.
@Suite("Shipping: version, man page, completions, install")
struct ShippingTests {
    /// The repository's root, from this file's place in it (Tests/RawbleCLITests/).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The version written in the file VERSION, its one place.
    static func versionFile() throws -> String {
        try String(contentsOf: root.appendingPathComponent("VERSION"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: The version and the commit

    @Test("rawble --version prints the version in VERSION and the commit of this checkout it was built from")
    func versionNamesTheCommit() async throws {
        let result = try await CLI.run(["--version"])
        #expect(result.status == 0, "\(result.stderr)")
        let line = result.stdout.trimmingCharacters(in: .newlines)
        let version = try Self.versionFile()
        let inGit = try await Program.run(["git", "-C", Self.root.path, "rev-parse", "--show-toplevel"])
        guard inGit.status == 0 else {
            #expect(line == "\(version) (unknown commit)")
            return
        }
        #expect(line.hasPrefix("\(version) (commit "), "\(line)")
        let commit = line.dropFirst("\(version) (commit ".count).prefix { $0.isHexDigit }
        #expect(commit.count == 12, "\(line)")
        let known = try await Program.run(["git", "-C", Self.root.path, "cat-file", "-e", "\(commit)^{commit}"])
        #expect(known.status == 0, "\(commit) is no commit of this repository: \(known.stderr)")
    }

    /// Runs Scripts/version-stamp on `package` and returns what it wrote.
    static func stamp(_ package: URL, environment: [String: String] = [:]) async throws -> (result: ProgramResult, text: String) {
        let output = package.appendingPathComponent("stamp-out")
        let result = try await Program.run(["/bin/sh", root.appendingPathComponent("Scripts/version-stamp").path, package.path, output.path],
                                           environment: environment)
        let text = (try? String(contentsOf: output.appendingPathComponent("BuildStamp.swift"), encoding: .utf8)) ?? ""
        return (result, text)
    }

    @Test("the stamp names the commit of the package's own repository, and says when files were modified")
    func stampInsideGit() async throws {
        let repository = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(repository) }
        let git = ["git", "-C", repository.path, "-c", "user.name=rawble tests", "-c", "user.email=tests@rawble.invalid"]
        try "0.4.2\n".write(to: repository.appendingPathComponent("VERSION"), atomically: true, encoding: .utf8)
        #expect(try await Program.run(git + ["init", "-q"]).status == 0)
        #expect(try await Program.run(git + ["add", "VERSION"]).status == 0)
        #expect(try await Program.run(git + ["commit", "-q", "-m", "v0.4.2"]).status == 0)
        let head = try await Program.run(git + ["rev-parse", "--short=12", "HEAD"]).stdout.trimmingCharacters(in: .newlines)
        #expect(head.count == 12)

        let clean = try await Self.stamp(repository)
        #expect(clean.result.status == 0, "\(clean.result.stderr)")
        #expect(clean.text.contains(#"static let version = "0.4.2""#))
        #expect(clean.text.contains(#"static let commit: String? = "\#(head)""#), "\(clean.text)")
        #expect(clean.text.contains("static let modified = false"))

        try "0.5.0\n".write(to: repository.appendingPathComponent("VERSION"), atomically: true, encoding: .utf8)
        let modified = try await Self.stamp(repository)
        #expect(modified.text.contains(#"static let version = "0.5.0""#))
        #expect(modified.text.contains(#"static let commit: String? = "\#(head)""#))
        #expect(modified.text.contains("static let modified = true"))
    }

    @Test("built outside a git checkout of its own (a tarball, a copy inside another repository), the stamp says unknown commit")
    func stampOutsideGit() async throws {
        let folder = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(folder) }
        try "1.2.3\n".write(to: folder.appendingPathComponent("VERSION"), atomically: true, encoding: .utf8)
        let ceiling = ["GIT_CEILING_DIRECTORIES": folder.deletingLastPathComponent().path]
        let plain = try await Self.stamp(folder, environment: ceiling)
        #expect(plain.result.status == 0, "\(plain.result.stderr)")
        #expect(plain.text.contains(#"static let version = "1.2.3""#))
        #expect(plain.text.contains("static let commit: String? = nil"), "\(plain.text)")

        // A copy of the sources inside some other repository: not rawble's commit to name.
        #expect(try await Program.run(["git", "-C", folder.path, "init", "-q"]).status == 0)
        let package = folder.appendingPathComponent("rawble-src")
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        try "1.2.3\n".write(to: package.appendingPathComponent("VERSION"), atomically: true, encoding: .utf8)
        let nested = try await Self.stamp(package, environment: ceiling)
        #expect(nested.result.status == 0, "\(nested.result.stderr)")
        #expect(nested.text.contains("static let commit: String? = nil"), "\(nested.text)")
    }

    @Test("a VERSION that is no MAJOR.MINOR.PATCH stops the build with one line")
    func stampRejectsAMalformedVersion() async throws {
        let folder = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(folder) }
        try "one point oh\n".write(to: folder.appendingPathComponent("VERSION"), atomically: true, encoding: .utf8)
        let stamped = try await Self.stamp(folder)
        #expect(stamped.result.status == 65)
        #expect(stamped.result.stderr.contains("not a version MAJOR.MINOR.PATCH"), "\(stamped.result.stderr)")
        #expect(stamped.text.isEmpty)
    }

    @Test("CHANGELOG.md's newest release is the version in VERSION, headed `## vX.Y.Z — YYYY-MM-DD`")
    func changelogLeadsWithTheVersion() throws {
        let changelog = try String(contentsOf: Self.root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let newest = try #require(changelog.split(separator: "\n").first { $0.hasPrefix("## v") }, "CHANGELOG.md has no `## v` heading")
        let version = try Self.versionFile()
        #expect(newest.hasPrefix("## v\(version) — "), "\(newest)")
        #expect(newest.wholeMatch(of: /## v\d+\.\d+\.\d+ — \d{4}-\d{2}-\d{2}/) != nil, "\(newest)")
    }

    @Test("docs/install.md's sizes of the binary and the .deb are the last measurement's (Scripts/release-figures), at the version in VERSION")
    func readmeSizesAreMeasured() async throws {
        let script = Self.root.appendingPathComponent("Scripts/release-figures").path
        let checked = try await Program.run([script, "--check"])
        #expect(checked.status == 0, "\(checked.stderr)")
        // Measured at this version: a release re-measures.
        let figures = try String(contentsOf: Self.root.appendingPathComponent("docs/release-figures.json"), encoding: .utf8)
        #expect(figures.contains("\"version\": \"\(try Self.versionFile())\""), "\(figures)")
        // Every package name the docs show is this version's.
        let version = try Self.versionFile()
        let docs = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 } + ["README.md"]
        for file in docs {
            let text = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: /rawble_(\d+\.\d+\.\d+)_/) {
                #expect(match.output.1 == version, "\(file) names rawble_\(match.output.1)_…, but VERSION is \(version)")
            }
        }
    }

    // MARK: The man page and the completions

    @Test("docs/man/rawble.1 and docs/completions/ are the commands' own help (run Scripts/manual after changing a command)")
    func manualIsCurrent() async throws {
        let script = Self.root.appendingPathComponent("Scripts/manual").path
        // The first run on a machine builds swift-argument-parser's generate-manual (Scripts/test
        // builds it before the tests, so here it is a no-op build).
        let result = try await onOwnThread {
            try CLI.runBlocking([], launcher: ["/usr/bin/env", "python3", script, "--check", "--binary"], limit: .seconds(900))
        }
        #expect(result.status == 0, "\(result.stderr)\n\(result.stdout)")
    }

    @Test("man renders the page: every command, the version in the footer, no warning but the unbreakable type lists")
    func manPageRenders() async throws {
        let page = Self.root.appendingPathComponent("docs/man/rawble.1").path
        let environment = ["MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat"]
        // troff notes the one word it cannot break at 80 columns, the `--as` types joined by `|`
        // (`utf8|hex|u8|…`, four options); the page's structure must draw no other warning.
        let rendered = try await Program.run(["man", "--warnings", "-l", page], environment: environment)
        #expect(rendered.status == 0, "\(rendered.stderr)")
        let warnings = rendered.stderr.split(separator: "\n").filter { !$0.hasSuffix("can't break line") }
        #expect(warnings.isEmpty, "\(warnings)")
        let text = rendered.stdout
        for command in ["adapters", "decode", "scan", "gatt", "read", "write", "notify", "shell", "hr", "report", "peripheral"] {
            #expect(text.contains("rawble \(command)") || text.contains(" \(command) "), "no \(command) in the page")
        }
        #expect(text.contains("rawble \(try Self.versionFile())"), "the footer names no version")
    }

    @Test("the bash completion is valid bash")
    func bashCompletionParses() async throws {
        let file = Self.root.appendingPathComponent("docs/completions/rawble.bash").path
        let checked = try await Program.run(["bash", "-n", file])
        #expect(checked.status == 0, "\(checked.stderr)")
    }

    // MARK: Scripts/install

    /// Scripts/install with `arguments`, the binary under test given with --binary. As root it
    /// runs in a mount namespace of its own over `etc`, a copy of /etc (``privateEtc(in:)``):
    /// the system group it creates lands there, and the machine's own groups stay as they were.
    static func install(_ arguments: [String], environment: [String: String] = [:], etc: URL? = nil) async throws -> ProgramResult {
        let script = root.appendingPathComponent("Scripts/install").path
        let command = [script, "--binary", CLI.executable.path] + arguments
        guard let etc else { return try await Program.run(command, environment: environment) }
        return try await Program.run(["unshare", "--mount", "sh", "-c", #"mount --bind "$0" /etc && exec "$@""#, etc.path] + command,
                                     environment: environment)
    }

    /// A copy of /etc in `folder`, for ``install(_:environment:etc:)``.
    static func privateEtc(in folder: URL) async throws -> URL {
        let etc = folder.appendingPathComponent("etc")
        let copied = try await Program.run(["cp", "-a", "/etc", etc.path])
        try #require(copied.status == 0, "cp -a /etc: \(copied.stderr)")
        return etc
    }

    /// The line of group `name` in the group file `file` (`name:x:GID:members`), if any.
    static func groupLine(_ name: String, in file: URL) throws -> [Substring]? {
        try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
            .map { $0.split(separator: ":", omittingEmptySubsequences: false) }
            .first { $0.first.map(String.init) == name }
    }

    /// Scripts/install and the binary under test where a user without root runs them: as
    /// themselves when the tests do not run as root; as root, copies in `folder` (which every
    /// user may enter) run as nobody, since the checkout may be closed to other users (a
    /// 0700 home, as root's `/root` is).
    struct UnprivilegedInstall {
        let script: String
        let binary: String
        let asNobody: Bool

        init(in folder: URL) throws {
            asNobody = getuid() == 0
            guard asNobody else {
                script = ShippingTests.root.appendingPathComponent("Scripts/install").path
                binary = CLI.executable.resolvingSymlinksInPath().path
                return
            }
            let copies = folder.appendingPathComponent("copies")
            try FileManager.default.createDirectory(at: copies.appendingPathComponent("Scripts"), withIntermediateDirectories: true)
            let script = copies.appendingPathComponent("Scripts/install")
            let binary = copies.appendingPathComponent("rawble")
            try FileManager.default.copyItem(at: ShippingTests.root.appendingPathComponent("Scripts/install"), to: script)
            try FileManager.default.copyItem(at: CLI.executable.resolvingSymlinksInPath(), to: binary)
            for (path, mode) in [(copies.path, 0o755), (copies.appendingPathComponent("Scripts").path, 0o755),
                                 (script.path, 0o755), (binary.path, 0o755)] {
                guard chmod(path, mode_t(mode)) == 0 else { throw CocoaError(.fileWriteNoPermission) }
            }
            self.script = script.path
            self.binary = binary.path
        }

        /// Runs the script with `arguments` and --binary, as that user, from `folder`.
        func run(_ arguments: [String]) async throws -> ProgramResult {
            let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
            return try await Program.run((asNobody ? nobody : []) + [script, "--binary", binary] + arguments)
        }
    }

    /// Every file under `folder`, relative, sorted.
    static func files(under folder: URL) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: folder.path)
        var found: [String] = []
        while let next = enumerator?.nextObject() as? String {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent(next).path, isDirectory: &isFolder), !isFolder.boolValue {
                found.append(next)
            }
        }
        return found.sorted()
    }

    static let installedFiles = [
        "bin/rawble",
        "share/bash-completion/completions/rawble",
        "share/fish/vendor_completions.d/rawble.fish",
        "share/man/man1/rawble.1",
        "share/zsh/site-functions/_rawble",
    ]

    @Test("install puts the five files in place with the capability, again changes nothing, uninstall removes them")
    func installAndUninstall() async throws {
        let folder = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(folder) }
        let prefix = folder.appendingPathComponent("usr")
        guard getuid() == 0 else {
            // Not root: the exact sudo line, and nothing written.
            let refused = try await Self.install(["--prefix", prefix.path])
            #expect(refused.status == 77)
            #expect(refused.stderr.contains("sudo \(Self.root.path)/Scripts/install --prefix \(prefix.path) --binary "), "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: prefix.path))
            return
        }
        // The machine's groups are not touched: the group is created in a copy of /etc.
        try #require(try Self.groupLine("rawble", in: URL(fileURLWithPath: "/etc/group")) == nil,
                     "this machine has a group rawble already: the test could not tell the script created it")
        let etc = try await Self.privateEtc(in: folder)
        let dryRun = try await Self.install(["--prefix", prefix.path, "--dry-run"], etc: etc)
        #expect(dryRun.status == 0, "\(dryRun.stderr)")
        #expect(dryRun.stdout.contains("would create the system group rawble"), "\(dryRun.stdout)")
        #expect(dryRun.stdout.contains("would run: chown root:rawble, chmod 0754, setcap cap_net_raw,cap_net_admin=ep \(prefix.path)/bin/rawble"),
                "\(dryRun.stdout)")
        #expect(!FileManager.default.fileExists(atPath: prefix.path), "a dry run wrote files")
        #expect(try Self.groupLine("rawble", in: etc.appendingPathComponent("group")) == nil, "a dry run created the group")

        let first = try await Self.install(["--prefix", prefix.path], etc: etc)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("with cap_net_raw,cap_net_admin=ep: for root and the members of group rawble only (no one is added"),
                "\(first.stdout)")
        #expect(first.stdout.contains("created the system group rawble"), "\(first.stdout)")
        #expect(Self.files(under: prefix) == Self.installedFiles)
        // A system group (below 1000 in Debian's login.defs), with no member.
        let group = try #require(try Self.groupLine("rawble", in: etc.appendingPathComponent("group")), "no group rawble in the private /etc")
        let gid = try #require(group.count == 4 ? UInt32(group[2]) : nil, "\(group)")
        #expect(gid < 1000 && group[3].isEmpty, "\(group)")
        #expect(try Self.groupLine("rawble", in: URL(fileURLWithPath: "/etc/group")) == nil, "the machine's own /etc/group was changed")
        // root:rawble 0754: others may not run it (nor use its capability).
        let installed = try FileManager.default.attributesOfItem(atPath: prefix.appendingPathComponent("bin/rawble").path)
        #expect((installed[.ownerAccountID] as? NSNumber)?.uint32Value == 0)
        #expect((installed[.groupOwnerAccountID] as? NSNumber)?.uint32Value == gid)
        #expect((installed[.posixPermissions] as? NSNumber)?.intValue == 0o754)
        let capability = try await Program.run(["getcap", prefix.appendingPathComponent("bin/rawble").path])
        #expect(capability.stdout.contains("cap_net_admin,cap_net_raw=ep"), "\(capability.stdout)")
        let version = try await Program.run([prefix.appendingPathComponent("bin/rawble").path, "--version"])
        #expect(version.stdout.hasPrefix(try Self.versionFile() + " ("), "\(version.stdout)")
        let bash = try String(contentsOf: prefix.appendingPathComponent("share/bash-completion/completions/rawble"), encoding: .utf8)
        let asked = try await Program.run([CLI.executable.path, "--generate-completion-script", "bash"])
        #expect(bash == asked.stdout, "the bash completion installed is not the binary's own")
        let manPage = try Data(contentsOf: prefix.appendingPathComponent("share/man/man1/rawble.1"))
        #expect(manPage == (try Data(contentsOf: Self.root.appendingPathComponent("docs/man/rawble.1"))))

        let again = try await Self.install(["--prefix", prefix.path], etc: etc)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("already installed"), "\(again.stdout)")
        #expect(Self.files(under: prefix) == Self.installedFiles)

        let removed = try await Self.install(["--prefix", prefix.path, "--uninstall"], etc: etc)
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(Self.files(under: prefix).isEmpty, "left behind: \(Self.files(under: prefix))")
        let removedAgain = try await Self.install(["--prefix", prefix.path, "--uninstall"], etc: etc)
        #expect(removedAgain.status == 0)
        #expect(removedAgain.stdout.contains("nothing to remove"), "\(removedAgain.stdout)")
    }

    @Test("without root: the exact sudo line, and nothing changed (install and uninstall)")
    func installWithoutRoot() async throws {
        let setpriv = FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
        try #require(setpriv || getuid() != 0, "root, and no setpriv (util-linux) to run the script as nobody")
        let folder = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(folder) }
        // World-writable, so only the missing root can be what stops the script.
        #expect(chmod(folder.path, 0o777) == 0)
        let prefix = folder.appendingPathComponent("usr")
        let unprivileged = try UnprivilegedInstall(in: folder)
        let refused = try await unprivileged.run(["--prefix", prefix.path])
        #expect(refused.status == 77, "\(refused.stderr)")
        #expect(refused.stderr.contains("nothing was changed. Run: sudo \(unprivileged.script) --prefix \(prefix.path) --binary \(unprivileged.binary)"),
                "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: prefix.path))

        // Something to remove, which nobody may not.
        let bin = prefix.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: bin.appendingPathComponent("rawble"))
        let notRemoved = try await unprivileged.run(["--prefix", prefix.path, "--uninstall"])
        #expect(notRemoved.status == 77)
        #expect(notRemoved.stderr.contains("Run: sudo \(unprivileged.script) --prefix \(prefix.path) --uninstall"), "\(notRemoved.stderr)")
        #expect(FileManager.default.fileExists(atPath: bin.appendingPathComponent("rawble").path))
    }

    @Test("a prefix that cannot be written: one line naming the fix, nothing written")
    func installIntoAnUnwritablePrefix() async throws {
        try #require(getuid() == 0, "run as root (CI is): without root the script stops earlier, at the sudo line")
        let folder = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(folder) }
        let file = folder.appendingPathComponent("a-file")
        try Data().write(to: file)
        let etcFolder = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(etcFolder) }
        let result = try await Self.install(["--prefix", file.appendingPathComponent("usr").path], etc: try await Self.privateEtc(in: etcFolder))
        #expect(result.status == 73)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("choose a writable --prefix; nothing was changed"), "\(result.stderr)")
        #expect(Self.files(under: folder) == ["a-file"])
    }

    @Test("no setcap: how to install it, nothing written")
    func installWithoutSetcap() async throws {
        try #require(getuid() == 0, "run as root (CI is): without root the script stops earlier, at the sudo line")
        let folder = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(folder) }
        // Debian's setcap is /usr/sbin/setcap: a PATH without the sbin folders finds none.
        let etc = try await Self.privateEtc(in: folder)
        let result = try await Self.install(["--prefix", folder.appendingPathComponent("usr").path], environment: ["PATH": "/usr/bin:/bin"], etc: etc)
        #expect(result.status == 69)
        #expect(result.stderr.contains("apt-get install libcap2-bin"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("usr").path))
        #expect(try Self.groupLine("rawble", in: etc.appendingPathComponent("group")) == nil)
    }

    @Test("a file system without extended attributes (ramfs): one line, nothing left behind")
    func installOntoAFileSystemWithoutXattrs() async throws {
        try #require(getuid() == 0, "run as root (CI is): mounting the ramfs needs it")
        let folder = try TemporaryFolder.make()
        defer { TemporaryFolder.remove(folder) }
        let script = Self.root.appendingPathComponent("Scripts/install").path
        let etc = try await Self.privateEtc(in: folder)
        let target = folder.appendingPathComponent("ramfs")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
        // A mount namespace of its own: the ramfs (and the copy of /etc) are seen by this command
        // alone and go with it.
        let command = """
            mount --bind "$4" /etc && mount -t ramfs ramfs "$1" && "$2" --binary "$3" --prefix "$1"; status=$?; find "$1" -mindepth 1; exit $status
            """
        let result = try await Program.run(["unshare", "--mount", "sh", "-c", command, "sh", target.path, script, CLI.executable.path, etc.path])
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr.contains("keeps no extended attributes, so the capability cannot be set"), "\(result.stderr)")
        #expect(result.stdout.isEmpty, "left behind on the ramfs: \(result.stdout)")
        // The group it created for the binary went with it.
        #expect(try Self.groupLine("rawble", in: etc.appendingPathComponent("group")) == nil, "the group created for the failed install stayed")
    }

    // MARK: The binary

    @Test("rawble links FoundationEssentials at most: no library of the whole Foundation (ICU, networking, XML)")
    func noWholeFoundationLinked() async throws {
        let dynamic = try await Program.run(["readelf", "-d", CLI.executable.path])
        #expect(dynamic.status == 0, "\(dynamic.stderr)")
        let needed = dynamic.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(!needed.isEmpty, "readelf found no NEEDED entry: is this the dynamic debug build?")
        for library in ["libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so",
                        "libFoundationNetworking.so", "libFoundationXML.so"] {
            #expect(!needed.contains { $0.contains("[\(library)]") }, "rawble needs \(library)")
        }
    }
}

/// What a command printed and how it ended.
struct ProgramResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs a program (not the binary under test) to its end, on a thread of its own.
enum Program {
    /// `argv[0]` is looked up on `PATH` (this process's, or `environment`'s); `environment` adds
    /// to this process's. Output goes through files, so neither stream can fill and block it.
    static func run(_ argv: [String], environment: [String: String] = [:]) async throws -> ProgramResult {
        try await onOwnThread {
            let folder = try TemporaryFolder.make()
            defer { TemporaryFolder.remove(folder) }
            let out = folder.appendingPathComponent("stdout"), err = folder.appendingPathComponent("stderr")
            try Data().write(to: out)
            try Data().write(to: err)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = argv
            var env = ProcessInfo.processInfo.environment
            env.removeValue(forKey: "RAWBLE_TRANSPORT")
            env.removeValue(forKey: "RAWBLE_LOG")
            for (key, value) in environment { env[key] = value }
            process.environment = env
            process.standardOutput = try FileHandle(forWritingTo: out)
            process.standardError = try FileHandle(forWritingTo: err)
            process.standardInput = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return ProgramResult(status: process.terminationStatus,
                                 stdout: try String(contentsOf: out, encoding: .utf8),
                                 stderr: try String(contentsOf: err, encoding: .utf8))
        }
    }
}

/// Folders of a test's own under the temporary directory: made empty, removed with everything
/// in them by the test's `defer`.
enum TemporaryFolder {
    static func make() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-shipping-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func remove(_ url: URL) {
        try? FileManager.default.removeItem(at: url)
    }
}
