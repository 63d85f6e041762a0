import Foundation
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// The Debian package where users install it: `Scripts/package-deb` builds the `.deb`, and in a
/// real Linux kernel (Scripts/vm-test, each pinned kernel in its own phase) `dpkg -i` installs
/// it non-interactively (debconf's default answer); the binary is root:rawble 0754 with
/// cap_net_raw,cap_net_admin=ep and the system group rawble has no member. A user outside the
/// group (`nobody`) cannot run it, and a copy it makes runs with no capability: no monitor, raw
/// or control socket, one line naming the group. A member (nobody with the group, no
/// inheritable or ambient capability: the file capability is all it has) lists the adapters,
/// scans for the strap and logs three beats; `man rawble` renders. Reconfigured to "no", the
/// binary is root:root 0755 with no capability; an administrator's dpkg-statoverride is left
/// alone; `dpkg -r` leaves the file system as it was before the install.
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
    @Test("dpkg -i non-interactively: root:rawble 0754 with the two capabilities, an empty group; outside it rawble does not run and a copy opens nothing; a member (only the file capability) scans and logs 3 beats; man rawble renders; reconfigured to no: 0755 and no capability; an override is left alone; dpkg -r leaves nothing behind")
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
            step install env DEBIAN_FRONTEND=noninteractive dpkg -i "$deb"
            step getcap getcap /usr/bin/rawble
            step owner stat -c '%U %G %a' /usr/bin/rawble
            step group sh -c 'getent group rawble | cut -d: -f1,4'
            gid=$(getent group rawble | cut -d: -f3)
            # Outside the group: user nobody through Python's setresuid, which drops every
            # capability before the exec (setpriv keeps its own until the exec, so the kernel
            # would let root's CAP_DAC_OVERRIDE run a file nobody may not).
            cat > /tmp/outsider.py <<'EOF'
            import os, sys
            os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)
            try:
                os.execv(sys.argv[1], sys.argv[1:])
            except PermissionError as error:
                print(error, file=sys.stderr); sys.exit(126)
            EOF
            member="setpriv --reuid=65534 --regid=65534 --groups=$gid --inh-caps=-all"
            step caps $member -- sh -c 'id -u; id -G; grep -E "^Cap(Inh|Amb):" /proc/self/status'
            # Outside the group: not runnable; a copy of it (readable) has no capability.
            step outsider python3 /tmp/outsider.py /usr/bin/rawble scan --duration 2
            mkdir -p /tmp/outsider && chown 65534 /tmp/outsider
            step copy python3 /tmp/outsider.py /bin/sh -c 'cp /usr/bin/rawble /tmp/outsider/rawble && /tmp/outsider/rawble scan --duration 2 --btsnoop /tmp/outsider/all.log'
            step adapters $member -- /usr/bin/rawble adapters --json
            step scan $member -- /usr/bin/rawble scan --duration 4 --json
            step hr $member -- /usr/bin/rawble hr --count 3 --timeout 20 --json
            step man sh -c 'MANWIDTH=80 man -P cat rawble | col -b'
            # The administrator says no: everyone may run it, with no capability.
            step reconfigure sh -c 'echo "rawble rawble/group-capabilities boolean false" | debconf-set-selections && dpkg-reconfigure -fnoninteractive rawble && stat -c "%U %G %a" /usr/bin/rawble && getcap /usr/bin/rawble'
            # An administrator's override is the administrator's: the postinst changes nothing.
            step override sh -c 'dpkg-statoverride --add root root 0750 /usr/bin/rawble && chmod 0750 /usr/bin/rawble && echo "rawble rawble/group-capabilities boolean true" | debconf-set-selections && dpkg-reconfigure -fnoninteractive rawble && stat -c "%U %G %a" /usr/bin/rawble && getcap /usr/bin/rawble; dpkg-statoverride --remove /usr/bin/rawble'
            step remove dpkg -r rawble
            # Removed, it keeps only its debconf answer until purged (it has a postrm).
            step removed sh -c 'dpkg-query -W -f "\${Status}\n" rawble'
            step purge dpkg --purge rawble
            step known sh -c 'dpkg-query -W rawble; echo "status $?"'
            step after sh /tmp/present
            """#)
        #expect(result.status == 0, "vm-test: \(result.stderr)")

        let install = try #require(steps["install"], "\(result.stdout)\n\(result.stderr)")
        #expect(install.status == 0, "dpkg -i: \((install.stdout + install.stderr).joined(separator: "\n"))")
        // The postinst gave the binary its two capabilities, permitted and effective (getcap
        // prints them in its order), for root and the group only; the group has no member.
        let getcap = try #require(steps["getcap"])
        #expect(getcap.stdout.joined().hasSuffix(" cap_net_admin,cap_net_raw=ep"), "\(getcap.stdout) \(getcap.stderr)")
        #expect(steps["owner"]?.stdout == ["root rawble 754"], "\(steps["owner"].map { $0.stdout + $0.stderr } ?? [])")
        #expect(steps["group"]?.stdout == ["rawble:"], "\(steps["group"].map { $0.stdout + $0.stderr } ?? [])")
        #expect(install.stderr.contains { $0.contains("members of group rawble may use Bluetooth adapters") }, "\(install.stderr)")

        // The member's launching shell: nobody with the group, nothing inheritable or ambient.
        let caps = try #require(steps["caps"])
        #expect(caps.stdout.count == 4 && caps.stdout[0] == "65534" && caps.stdout[1].split(separator: " ").count == 2
                && Array(caps.stdout.suffix(2)) == ["CapInh:\t0000000000000000", "CapAmb:\t0000000000000000"], "\(caps.stdout) \(caps.stderr)")

        // Outside the group: rawble does not run, and a copy has no capability to open anything.
        let outsider = try #require(steps["outsider"])
        #expect(outsider.status == 126 && outsider.stderr.joined().contains("Permission denied"), "\(outsider.status) \(outsider.stdout) \(outsider.stderr)")
        let copy = try #require(steps["copy"])
        #expect(copy.status == 77, "\(copy.stdout) \(copy.stderr)")
        #expect(copy.stderr.count == 1 && copy.stderr.first?.contains("add you to the rawble group (`sudo adduser") == true, "\(copy.stderr)")

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

        // Reconfigured to no: root:root 0755, no capability (getcap prints nothing).
        let reconfigure = try #require(steps["reconfigure"])
        #expect(reconfigure.status == 0 && reconfigure.stdout == ["root root 755"], "\(reconfigure.stdout) \(reconfigure.stderr)")
        // An override: left as the administrator set it, and said so.
        let override = try #require(steps["override"])
        #expect(override.stdout == ["root root 750"], "\(override.stdout) \(override.stderr)")
        #expect(override.stderr.contains { $0.contains("has an override") }, "\(override.stderr)")

        let remove = try #require(steps["remove"])
        #expect(remove.status == 0, "dpkg -r: \((remove.stdout + remove.stderr).joined(separator: "\n"))")
        // Removed with no conffile left, dpkg forgets the package.
        #expect(steps["removed"]?.stdout == ["deinstall ok config-files"], "\(steps["removed"].map { $0.stdout + $0.stderr } ?? [])")
        #expect(steps["purge"]?.status == 0, "\(steps["purge"].map { $0.stdout + $0.stderr } ?? [])")
        let known = try #require(steps["known"])
        #expect(known.stdout.last == "status 1", "\(known.stdout) \(known.stderr)")
        let before = try #require(steps["before"]), after = try #require(steps["after"])
        #expect(before.stdout.contains("/usr/bin") && !before.stdout.contains("/usr/bin/rawble"), "\(before.stdout)")
        #expect(after.stdout == before.stdout, "left behind: \(Set(after.stdout).subtracting(before.stdout).sorted())")
    }
}
