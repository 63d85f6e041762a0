import Foundation
import RawbleTestSupport
import Testing

/// The Debian package where users install it: `Scripts/package-deb` builds the `.deb`, and in a
/// real Linux kernel (Scripts/vm-test, each pinned kernel in its own phase) `dpkg -i` installs
/// it; then user `nobody`, with no inheritable or ambient capability (the file capability the
/// postinst set is all it has), lists the adapters, scans for the strap and logs three beats;
/// `man rawble` renders; with the capability removed, the one line names the installed path;
/// `dpkg -r` leaves the file system as it was before the install.
///
/// The package holds the binary under test (the debug build every test runs, linked to the
/// toolchain's runtime: `--toolchain-runtime`), not the static release build, whose build would
/// add minutes to every CI run: what this proves is the package (its files, postinst, removal)
/// and the file capability as the only privilege. The release package is built and checked
/// with lintian by `Scripts/package-deb --lintian` (docs/testing.md), and this test installs it
/// instead when `RAWBLE_TEST_DEB` names it (by hand: its build takes minutes).
@Suite("The Debian package in a real Linux kernel (Scripts/package-deb, Scripts/vm-test)", .serialized,
       .tags(.vm, .bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"),
       .enabled(if: ProcessInfo.processInfo.environment["RAWBLE_TESTS_WITHOUT_VM"] != "1",
                "RAWBLE_TESTS_WITHOUT_VM=1: Scripts/vm-test cannot run here"))
struct PackageVMTests {
    @Test("dpkg -i, then as nobody with only the file capability: adapters, scan finds the strap, hr --count 3; man rawble renders; without the capability one line naming the rawble group; dpkg -r leaves nothing behind")
    func installUseRemove() async throws {
        // Under the repository's .build, which the guest sees at the same path (the host's / is
        // its root); removed afterwards.
        let output = CLIReferenceTests.root.appendingPathComponent(".build/vm-package-\(UUID().uuidString)")
        defer { TemporaryFolder.remove(output) }
        let deb: String
        if let given = ProcessInfo.processInfo.environment["RAWBLE_TEST_DEB"] {
            // A package built beforehand (the release package: `Scripts/package-deb`), by hand.
            deb = given
        } else {
            let script = CLIReferenceTests.root.appendingPathComponent("Scripts/package-deb").path
            let packaged = try await Program.run(["timeout", "-k", "5", "300", script, "--binary", CLI.executable.path,
                                                  "--toolchain-runtime", "--compression", "none", "--output", output.path])
            try #require(packaged.status == 0, "Scripts/package-deb: \(packaged.stderr)")
            deb = packaged.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(deb.hasSuffix(".deb"), "\(deb)")
        #expect(FileManager.default.fileExists(atPath: deb), "\(deb)")

        let (steps, result) = try await KernelPathVMTests.boot(#"""
            deb='\#(deb)'
            # Every path the package holds, and which of them exist before it is installed.
            dpkg-deb -c "$deb" | awk '{ print $6 }' | sed -e 's|^\./|/|' -e 's|/$||' | grep -v '^$' > /tmp/contents
            echo 'while read -r p; do [ -e "$p" ] && echo "$p"; done < /tmp/contents; true' > /tmp/present
            step before sh /tmp/present
            # man-db's dpkg trigger re-indexes every manual page of the host's root (~18,000,
            # read over 9p under TCG: minutes); `man rawble` finds the page without that index.
            rm -f /var/lib/man-db/auto-update
            step install dpkg -i "$deb"
            step getcap getcap /usr/bin/rawble
            nobody="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all"
            step caps $nobody -- sh -c 'id -u; grep -E "^Cap(Inh|Amb):" /proc/self/status'
            step adapters $nobody -- /usr/bin/rawble adapters --json
            step scan $nobody -- /usr/bin/rawble scan --duration 4 --json
            step hr $nobody -- /usr/bin/rawble hr --count 3 --timeout 20 --json
            step man sh -c 'MANWIDTH=80 man -P cat rawble | col -b'
            # Without the file capability (removed by hand): the one line naming the installed path.
            step dropcap setcap -r /usr/bin/rawble
            step nocap $nobody -- /usr/bin/rawble scan --duration 2
            step remove dpkg -r rawble
            step known sh -c 'dpkg-query -W rawble; echo "status $?"'
            step after sh /tmp/present
            """#)
        #expect(result.status == 0, "vm-test: \(result.stderr)")

        let install = try #require(steps["install"], "\(result.stdout)\n\(result.stderr)")
        #expect(install.status == 0, "dpkg -i: \((install.stdout + install.stderr).joined(separator: "\n"))")
        // The postinst gave the binary its two capabilities (getcap prints them in its order).
        let getcap = try #require(steps["getcap"])
        #expect(getcap.stdout.joined().contains("cap_net_admin,cap_net_raw=eip"), "\(getcap.stdout) \(getcap.stderr)")

        // The launching shell: nobody, nothing inheritable or ambient.
        let caps = try #require(steps["caps"])
        #expect(caps.stdout == ["65534", "CapInh:\t0000000000000000", "CapAmb:\t0000000000000000"], "\(caps.stdout) \(caps.stderr)")

        let adapters = try #require(steps["adapters"])
        #expect(adapters.status == 0, "\(adapters.stderr)")
        #expect(KernelPathVMTests.objects(adapters.stdout).contains { $0["name"] as? String == "hci0" }, "\(adapters.stdout)")

        let scan = try #require(steps["scan"])
        #expect(scan.status == 0, "\(scan.stderr)")
        #expect(KernelPathVMTests.objects(scan.stdout).contains { $0["address"] as? String == KernelPathVMTests.strap },
                "\(scan.stdout)")

        let hr = try #require(steps["hr"])
        #expect(hr.status == 0, "\(hr.stderr)")
        #expect(KernelPathVMTests.objects(hr.stdout).filter { $0["event"] as? String == "measurement" }.count == 3, "\(hr.stdout)")

        let man = try #require(steps["man"])
        #expect(man.status == 0, "\(man.stderr)")
        let page = man.stdout.joined(separator: "\n")
        #expect(page.contains("RAWBLE(1)") && page.contains("SYNOPSIS") && page.contains("rawble hr"), "\(page.prefix(2_000))")

        let nocap = try #require(steps["nocap"])
        #expect(steps["dropcap"]?.status == 0, "\(steps["dropcap"]?.stderr ?? [])")
        #expect(nocap.status == 77, "\(nocap.stderr)")
        #expect(nocap.stderr.count == 1 && nocap.stderr.first?.contains("add you to the rawble group (`sudo adduser") == true,
                "\(nocap.stderr)")

        let remove = try #require(steps["remove"])
        #expect(remove.status == 0, "dpkg -r: \((remove.stdout + remove.stderr).joined(separator: "\n"))")
        // Removed with no conffile left, dpkg forgets the package.
        let known = try #require(steps["known"])
        #expect(known.stdout.last == "status 1", "\(known.stdout) \(known.stderr)")
        let before = try #require(steps["before"]), after = try #require(steps["after"])
        #expect(before.stdout.contains("/usr/bin") && !before.stdout.contains("/usr/bin/rawble"), "\(before.stdout)")
        #expect(after.stdout == before.stdout, "left behind: \(Set(after.stdout).subtracting(before.stdout).sorted())")
    }
}
