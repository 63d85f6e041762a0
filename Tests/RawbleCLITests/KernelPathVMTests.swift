import Foundation
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// The kernel path (`hciN`, `user:hciN`, `rawble adapters`) in a real Linux kernel with
/// Bluetooth: Scripts/vm-test boots Debian's kernel under qemu, whose hci0 is the controller of
/// a Bumble peer on this machine (the strap and the other standard devices). Each test boots
/// once and runs its steps in the guest; a step's status and output come back between
/// `@@@` markers. Scripts/test says, in one line, when the VM cannot run on a machine
/// (RAWBLE_TESTS_WITHOUT_VM=1 is then set and these are skipped).
@Suite("The kernel path in a real Linux kernel (Scripts/vm-test)", .serialized,
       .tags(.vm, .bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"),
       .enabled(if: ProcessInfo.processInfo.environment["RAWBLE_TESTS_WITHOUT_VM"] != "1",
                "RAWBLE_TESTS_WITHOUT_VM=1: Scripts/vm-test cannot run here"))
struct KernelPathVMTests {
    static let strap = "C0:B1:E0:00:00:01"
    static let controllerAddress = "00:1B:DC:0F:00:01"

    /// What one step printed in the guest.
    struct Step {
        var status: Int32
        var stdout: [String]
        var stderr: [String]
    }

    /// Boots the VM with a fresh peer as hci0 and runs `script` (sh; `$1` is the rawble binary,
    /// `step NAME CMD...` records a step); returns the steps by name and the whole result.
    /// `controllers`: the public addresses of the peers' controllers, one peer (and adapter,
    /// hci0, hci1, …) each; `peerArguments`: more bumble-peer options for every peer. `ports`
    /// above 1: ONE peer (`controllers` its addresses in port order) serving that many controllers on
    /// its one link, hci0, hci1, … in port order (two adapters of the guest that see each other).
    /// How long one step may run in the guest before it is stopped (and reported as such):
    /// every command bounds its own waits; this catches one that does not, so the other steps
    /// still run and the hung one is named.
    static let stepLimit = 100
    /// How long vm-test lets a whole boot run, boot included.
    static let vmLimit = 300
    /// Every peer a guest's kernel scans advertises at most every 200 ms: the guest, under qemu's
    /// TCG, decodes each report in its kernel and in rawble's debug build at ~2 ms apiece, and
    /// the fixture's 20-50 ms intervals (kept on the host, where scans stay short) had it
    /// decoding ~230 reports a second through every scan.
    static let guestPeerArguments = ["--advertising-floor", "200"]

    static func boot(_ script: String, controllers: [String] = [controllerAddress],
                     peerArguments: [String] = [], ports: Int = 1,
                     vmOptions: [String] = []) async throws -> (steps: [String: Step], result: CLIResult) {
        // One VM at a time in this test process: two or three guests under TCG at once on a
        // 2-core machine, beside the other suites' peers, ran slowly enough to meet the timeout.
        // (Scripts/test runs one process per pinned kernel, at once, with no other suite beside.)
        await VMQueue.shared.enter()
        do {
            let booted = try await bootNow(script, controllers: controllers, peerArguments: peerArguments, ports: ports,
                                           vmOptions: vmOptions)
            await VMQueue.shared.leave()
            return booted
        } catch {
            await VMQueue.shared.leave()
            throw error
        }
    }

    /// Boots the VM with the controllers at `transports` (a peer the caller started and stops:
    /// e.g. one of its controllers in the guest as hci0, another driven by rawble's own host in
    /// the test) and runs `script` as ``boot(_:controllers:peerArguments:ports:vmOptions:)`` does.
    static func boot(_ script: String, transports: [String],
                     vmOptions: [String] = []) async throws -> (steps: [String: Step], result: CLIResult) {
        await VMQueue.shared.enter()
        do {
            let booted = try await bootNow(script, controllers: [], peerArguments: [], ports: 1, vmOptions: vmOptions,
                                           transports: transports)
            await VMQueue.shared.leave()
            return booted
        } catch {
            await VMQueue.shared.leave()
            throw error
        }
    }

    private static func bootNow(_ script: String, controllers: [String], peerArguments: [String],
                                ports: Int, vmOptions: [String],
                                transports given: [String]? = nil) async throws -> (steps: [String: Step], result: CLIResult) {
        let started = ContinuousClock.now
        var peers: [BumblePeer] = []
        defer { for peer in peers { peer.stop() } }
        if given != nil {
            // The caller's peer.
        } else if ports > 1 {
            peers.append(try await BumblePeer.start(
                arguments: controllers.flatMap { ["--controller-address", $0] } + guestPeerArguments + peerArguments, ports: ports))
        } else {
            for address in controllers {
                peers.append(try await BumblePeer.start(arguments: ["--controller-address", address] + guestPeerArguments + peerArguments))
            }
        }
        let vmTest = CLIReferenceTests.root.appendingPathComponent("Scripts/vm-test").path
        let prelude = #"""
            r="$1"; shift
            step() {
              name="$1"; shift
              t0=$(date +%s%N)
              timeout -k 5 \#(stepLimit) "$@" >/tmp/step.out 2>/tmp/step.err; s=$?
              [ $s -eq 124 ] && echo "step $name: still running after \#(stepLimit) s, stopped (timeout)" >>/tmp/step.err
              echo "@@@ $name $s $(( ($(date +%s%N) - t0) / 1000000 ))"; cat /tmp/step.out; echo "@@@ stderr"; cat /tmp/step.err
            }
            """#
        let launcher = [vmTest, "--timeout", "\(vmLimit)"] + vmOptions
            + (given ?? peers.flatMap(\.transports)).flatMap { ["--controller", $0] }
            + ["--", "sh", "-c", prelude + "\n" + script, "sh"]
        // Bounded by vm-test's own --timeout (it kills the VM by PID); the runner's a bit above.
        let result = try await onOwnThread {
            try CLI.runBlocking([], launcher: launcher, limit: .seconds(vmLimit + 60))
        }
        var steps: [String: Step] = [:]
        var stepTimes: [String] = []
        var current: String?
        var inStderr = false
        for line in result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("@@@ ") {
                let words = line.split(separator: " ").map(String.init)
                if words.count == 2, words[1] == "stderr" {
                    inStderr = true
                } else if words.count == 3 || words.count == 4, let status = Int32(words[2]) {
                    // The step's milliseconds follow its status (a script's own marker may omit them).
                    current = words[1]
                    inStderr = false
                    steps[words[1]] = Step(status: status, stdout: [], stderr: [])
                    if words.count == 4 { stepTimes.append("\(words[1]) \(words[3])") }
                }
                continue
            }
            guard let name = current, !line.isEmpty else { continue }
            if inStderr { steps[name]?.stderr.append(line) } else { steps[name]?.stdout.append(line) }
        }
        recordStepTimes(stepTimes, whole: ContinuousClock.now - started)
        return (steps, result)
    }

    /// With RAWBLE_VM_STEP_TIMES=FILE, one line per boot appended to FILE: the boot's seconds in
    /// all (qemu's start, the guest's boot and the peers' included) and each step's milliseconds,
    /// so that a slow VM phase can be read step by step (Scripts/test's phase table gives only
    /// the whole).
    private static func recordStepTimes(_ times: [String], whole: Duration) {
        guard let path = ProcessInfo.processInfo.environment["RAWBLE_VM_STEP_TIMES"], !times.isEmpty else { return }
        let line = String(format: "%.1f", Double(whole.components.seconds) + Double(whole.components.attoseconds) / 1e18)
            + " " + times.joined(separator: ", ") + "\n"
        guard let file = fopen(path, "a") else { return }
        fputs(line, file)
        fclose(file)
    }

    static func objects(_ lines: [String]) -> [[String: Any]] {
        lines.compactMap { try? CLI.jsonObject($0) }
    }

    /// The first object a command printed with `--json` that is not an event: a wait of 2 s
    /// or more (a slow link, under load) prints `{"event":"status","waitingFor":…}` first.
    static func firstResult(_ lines: [String]) -> [String: Any]? {
        objects(lines).first { $0["event"] == nil }
    }

    /// The value `read --json` printed (see ``firstResult(_:)``).
    static func readValue(_ lines: [String]) -> String? {
        firstResult(lines)?["value"] as? String
    }

    @Test("hciN, the default: scan finds the strap (each service once); then, in the same kernel, adapters, a passive scan, gatt, read, write, notify and hr over the kernel's L2CAP socket; an absent peer times out in one line; a controller that stops answering is one line naming the fix; a passive scan during the kernel's discovery leaves that discovery running")
    func rawChannelAndL2CAP() async throws {
        let (steps, result) = try await Self.boot(#"""
            step scan "$r" scan --duration 4 --json
            step adapters "$r" adapters --json
            # A passive scan is rawble's own scan commands on the raw channel (the management
            # interface has none). Run while the kernel's discovery scans (btmgmt's here, as
            # bluetoothd's would), the controller already scans: rawble reads that scan and
            # leaves it on. Switched off, the kernel's discovery would never end (btmgmt would
            # not exit) and the kernel would make no connection. Afterwards it still connects.
            # (btmgmt find exits when the discovery ends, with a failure if it could not start.)
            ( btmgmt --index 0 find -l >/tmp/find.out 2>&1; echo $? >/tmp/find.status ) &
            sleep 2
            step passive "$r" scan --passive --duration 3 --json
            step discoveryends sh -c 'i=0
              while [ ! -s /tmp/find.status ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i+1)); done
              cat /tmp/find.out
              [ -s /tmp/find.status ] || { pkill -x btmgmt; echo "btmgmt find still running 15 s after the passive scan" >&2; exit 1; }
              exit "$(cat /tmp/find.status)"'
            step gatt "$r" gatt C0:B1:E0:00:00:01 --timeout 15 --json
            step read "$r" read C0:B1:E0:00:00:01 2A19 --timeout 15 --json
            step write "$r" write C0:B1:E0:00:00:01 2A39 01 --timeout 15 --json
            step notify "$r" notify C0:B1:E0:00:00:01 2A37 --count 3 --timeout 15 --json
            step hr "$r" hr --count 5 --timeout 15 --json
            step absent "$r" gatt 11:22:33:44:55:66 --address-type random --timeout 3
            # The controller stops answering (its relay frozen: the kernel's commands go
            # unanswered, as with a wedged dongle): one line naming the fix, 75, within bounds.
            kill -STOP "$(cat /run/rawble-vm/hci0.pid)"
            step mute "$r" scan --duration 3 --json
            kill -CONT "$(cat /run/rawble-vm/hci0.pid)"
            """#)
        #expect(result.status == 0, "vm-test: \(result.stderr)")

        let scan = try #require(steps["scan"], "\(result.stdout)\n\(result.stderr)")
        #expect(scan.status == 0, "\(scan.stderr)")
        #expect(Self.objects(scan.stdout).contains { $0["address"] as? String == Self.strap && $0["name"] as? String == "rawble-strap" })
        // Each service once, although the kernel's scan may deliver the list in both the
        // advertisement and the scan response.
        let strapServices = Self.objects(scan.stdout).first { $0["address"] as? String == Self.strap }?["services"] as? [String]
        #expect(strapServices == ["180D", "180F"], "\(scan.stdout)")

        let adapters = try #require(steps["adapters"])
        let hci0 = Self.objects(adapters.stdout).first
        #expect(hci0?["name"] as? String == "hci0")
        #expect(hci0?["address"] as? String == Self.controllerAddress)
        #expect(hci0?["up"] as? Bool == true, "the default transport brought it up")
        #expect(hci0?["le"] as? Bool == true)

        let passive = try #require(steps["passive"])
        #expect(passive.status == 0, "\(passive.stderr)")
        #expect(Self.objects(passive.stdout).contains { $0["address"] as? String == Self.strap }, "\(passive.stdout)")
        let discoveryEnds = try #require(steps["discoveryends"])
        #expect(discoveryEnds.status == 0, "the kernel's discovery ended by itself: \(discoveryEnds.stdout + discoveryEnds.stderr)")

        let gatt = try #require(steps["gatt"])
        #expect(gatt.status == 0, "\(gatt.stderr)")
        #expect(gatt.stdout.joined().contains("180D"))

        let read = try #require(steps["read"])
        #expect(read.status == 0, "\(read.stderr)")
        #expect(Self.firstResult(read.stdout)?["uuid"] as? String == "2A19")

        let write = try #require(steps["write"])
        #expect(write.status == 0, "\(write.stderr)")

        let notify = try #require(steps["notify"])
        #expect(notify.status == 0, "\(notify.stderr)")
        #expect(Self.objects(notify.stdout).filter { $0["value"] != nil }.count == 3, "\(notify.stdout)")

        let hr = try #require(steps["hr"])
        #expect(hr.status == 0, "\(hr.stderr)")
        #expect(Self.objects(hr.stdout).filter { $0["event"] as? String == "measurement" }.count == 5, "\(hr.stdout)")

        let absent = try #require(steps["absent"])
        #expect(absent.status == 75, "\(absent.stderr)")
        // One error line; the line saying what it waited for (the connection, 3 s) before it.
        #expect(absent.stderr.filter { !CLIResult.isWaitLine($0) }.count == 1, "\(absent.stderr)")

        let mute = try #require(steps["mute"])
        #expect(mute.status == 75, "\(mute.stderr)")
        #expect(mute.stderr.count == 1, "\(mute.stderr)")
        #expect(mute.stderr.first?.contains("hci0:") == true && mute.stderr.first?.contains("stopped answering") == true
                && mute.stderr.first?.contains("btmgmt --index 0 power off") == true, "\(mute.stderr)")
    }

    @Test("no capability: one line naming the rawble group and the administrator's adduser line, status 77; CAP_NET_RAW alone and the adapter down: one line, 77; exactly CAP_NET_RAW + CAP_NET_ADMIN: the scan works; no adapter left: one line, 69")
    func capabilities() async throws {
        let (steps, result) = try await Self.boot(#"""
            nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
            # hci0 powers itself off ~2 s after it appears when nobody raises it.
            i=0; while [ $i -lt 50 ] && "$r" adapters --json | grep -q '"up":true'; do sleep 0.2; i=$((i+1)); done
            step rawonly $nobody --inh-caps=+net_raw --ambient-caps=+net_raw -- "$r" scan --duration 2
            step bare $nobody --inh-caps=-all --bounding-set=-all -- "$r" scan --duration 2
            step granted $nobody --inh-caps=+net_raw,+net_admin --ambient-caps=+net_raw,+net_admin -- "$r" scan --duration 4 --json
            kill "$(cat /run/rawble-vm/hci0.pid)"
            i=0; while [ $i -lt 50 ] && "$r" adapters --json | grep -q hci0; do sleep 0.2; i=$((i+1)); done
            step none "$r" scan --duration 1
            """#)
        #expect(result.status == 0, "vm-test: \(result.stderr)")
        let bare = try #require(steps["bare"], "\(result.stdout)\n\(result.stderr)")
        #expect(bare.status == 77, "\(bare.stderr)")
        #expect(bare.stderr.count == 1, "\(bare.stderr)")
        #expect(bare.stderr.first?.contains("add you to the rawble group (`sudo adduser nobody rawble`") == true && bare.stderr.first?.contains("setcap") == false, "\(bare.stderr)")
        let granted = try #require(steps["granted"])
        #expect(granted.status == 0, "\(granted.stderr)")
        #expect(Self.objects(granted.stdout).contains { $0["address"] as? String == Self.strap })
        // CAP_NET_RAW alone cannot bring a down adapter up: one line saying so, with the fix.
        let rawOnly = try #require(steps["rawonly"])
        #expect(rawOnly.status == 77, "\(rawOnly.stderr)")
        #expect(rawOnly.stderr.count == 1 && rawOnly.stderr.first?.contains("hci0") == true
                && rawOnly.stderr.first?.contains("down") == true, "\(rawOnly.stderr)")
        // A kernel with Bluetooth and no adapter at all.
        let none = try #require(steps["none"])
        #expect(none.status == 69, "\(none.stderr)")
        #expect(none.stderr.count == 1 && none.stderr.first?.contains("no Bluetooth adapter found") == true, "\(none.stderr)")
    }

    @Test("two adapters: adapters lists both; --transport hci1 picks the second by name; a name that does not exist is one line listing those that do")
    func twoAdapters() async throws {
        let second = "00:1B:DC:0F:00:02"
        let (steps, result) = try await Self.boot(#"""
            step adapters "$r" adapters --json
            step hci1 "$r" scan --transport hci1 --duration 4 --json
            step listed "$r" adapters --json
            step missing "$r" scan --transport hci7 --duration 1
            """#, controllers: [Self.controllerAddress, second])
        #expect(result.status == 0, "vm-test: \(result.stderr)")
        let adapters = try #require(steps["adapters"], "\(result.stdout)\n\(result.stderr)")
        #expect(Self.objects(adapters.stdout).compactMap { $0["name"] as? String } == ["hci0", "hci1"])
        let hci1 = try #require(steps["hci1"])
        #expect(hci1.status == 0, "\(hci1.stderr)")
        #expect(Self.objects(hci1.stdout).contains { $0["address"] as? String == Self.strap })
        let listed = Self.objects(try #require(steps["listed"]).stdout)
        #expect(listed.first { $0["name"] as? String == "hci1" }?["up"] as? Bool == true, "hci1 was brought up")
        #expect(listed.first { $0["name"] as? String == "hci1" }?["address"] as? String == second)
        let missing = try #require(steps["missing"])
        #expect(missing.status == 69, "\(missing.stderr)")
        #expect(missing.stderr.count == 1 && missing.stderr.first?.contains("hci0, hci1") == true, "\(missing.stderr)")
    }

    @Test("a controller with the extended commands (Bluetooth 5): rawble scans with them on hci0, the kernel connects with LE Extended Create Connection, hr gets its values")
    func extendedController() async throws {
        let (steps, result) = try await Self.boot(#"""
            step hr "$r" hr --count 3 --timeout 15 --json --btsnoop /tmp/hr.log
            step commands sh -c "\"$r\" decode btsnoop /tmp/hr.log --json | grep '\"direction\":\"sent\",\"type\":\"command\"'"
            """#, peerArguments: ["--extended-controller"])
        #expect(result.status == 0, "vm-test: \(result.stderr)")
        let hr = try #require(steps["hr"], "\(result.stdout)\n\(result.stderr)")
        #expect(hr.status == 0, "\(hr.stderr)")
        #expect(Self.objects(hr.stdout).filter { $0["event"] as? String == "measurement" }.count == 3, "\(hr.stdout)")
        // The monitor capture holds every command on hci0: rawble's and the kernel's.
        let sent = Self.objects(try #require(steps["commands"]).stdout).compactMap { $0["opcode"] as? Int }
        #expect(sent.contains(0x2041) && sent.contains(0x2042), "extended scanning: \(sent)")
        #expect(sent.contains(0x2043), "the kernel's LE Extended Create Connection: \(sent)")
        #expect(!sent.contains(0x200B) && !sent.contains(0x200C), "no legacy scan command (Command Disallowed on a real Bluetooth 5 controller): \(sent)")
    }

    @Test("a controller without LE Extended Advertising: legacy scanning; hr reconnects after the strap drops the link; the adapter removed mid-hr ends it in one line")
    func legacyControllerReconnectionAndRemoval() async throws {
        let (steps, result) = try await Self.boot(#"""
            step scan "$r" scan --duration 4 --json --btsnoop /tmp/scan.log
            step commands sh -c "\"$r\" decode btsnoop /tmp/scan.log --json | grep '\"direction\":\"sent\",\"type\":\"command\"'"
            step hr "$r" hr --count 6 --timeout 15 --json
            "$r" hr --json --timeout 15 >/tmp/removed.out 2>/tmp/removed.err & pid=$!
            i=0; while [ $i -lt 100 ] && [ "$(grep -c measurement /tmp/removed.out)" -lt 2 ]; do sleep 0.2; i=$((i+1)); done
            kill "$(cat /run/rawble-vm/hci0.pid)"
            i=0; while [ $i -lt 150 ] && kill -0 $pid 2>/dev/null; do sleep 0.2; i=$((i+1)); done
            kill $pid 2>/dev/null
            wait $pid; echo $? >/tmp/removed.status
            step removed sh -c 'cat /tmp/removed.out; cat /tmp/removed.err >&2; exit "$(cat /tmp/removed.status)"'
            """#, peerArguments: ["--legacy-controller", "--hr-disconnect-after", "3"])
        #expect(result.status == 0, "vm-test: \(result.stderr)")

        let scan = try #require(steps["scan"], "\(result.stdout)\n\(result.stderr)")
        #expect(scan.status == 0, "\(scan.stderr)")
        #expect(Self.objects(scan.stdout).contains { $0["address"] as? String == Self.strap })
        // The capture holds every command on hci0 (the kernel's too): legacy scanning, none extended.
        let sent = Self.objects(try #require(steps["commands"]).stdout).compactMap { $0["opcode"] as? Int }
        #expect(sent.contains(0x200B) && sent.contains(0x200C), "LE Set Scan Parameters and Enable: \(sent)")
        #expect(!sent.contains { (0x2036...0x2043).contains($0) }, "no extended command: \(sent)")

        let hr = try #require(steps["hr"])
        #expect(hr.status == 0, "\(hr.stderr)")
        let events = Self.objects(hr.stdout).compactMap { $0["event"] as? String }
        #expect(events.filter { $0 == "measurement" }.count == 6, "\(hr.stdout)")
        #expect(events.filter { $0 == "connected" }.count == 2, "reconnected once: \(events)")
        #expect(events.contains("disconnected"), "\(events)")

        let removed = try #require(steps["removed"])
        #expect(Self.objects(removed.stdout).filter { $0["event"] as? String == "measurement" }.count >= 2, "\(removed.stdout)")
        #expect(removed.status == 74, "hr's exit status once hci0 went (143: still running 30 s later)")
        #expect(removed.stderr.count == 1 && removed.stderr.first?.contains("hci0 was removed") == true, "\(removed.stderr)")
    }

    @Test("user:hciN: rawble's own host on the user channel while the adapter is down (scan, gatt, read, write, notify, hr); busy (one line, how to free it) once it is up")
    func userChannel() async throws {
        let (steps, result) = try await Self.boot(#"""
            # hci0 powers itself off ~2 s after it appears when nobody raises it.
            i=0; while [ $i -lt 50 ] && "$r" adapters --json | grep -q '"up":true'; do sleep 0.2; i=$((i+1)); done
            step user "$r" scan --transport user:hci0 --duration 4 --json
            step usergatt "$r" gatt C0:B1:E0:00:00:01 --transport user:hci0 --timeout 15
            step userread "$r" read C0:B1:E0:00:00:01 2A19 --transport user:hci0 --timeout 15 --json
            step userwrite "$r" write C0:B1:E0:00:00:01 2A39 01 --transport user:hci0 --timeout 15 --json
            step usernotify "$r" notify C0:B1:E0:00:00:01 2A37 --count 3 --transport user:hci0 --timeout 15 --json
            step userhr "$r" hr --count 3 --transport user:hci0 --timeout 15 --json
            step raise "$r" scan --duration 1 --json
            step busy "$r" scan --transport user:hci0 --duration 1
            """#)
        #expect(result.status == 0, "vm-test: \(result.stderr)")
        let user = try #require(steps["user"], "\(result.stdout)\n\(result.stderr)")
        #expect(user.status == 0, "\(user.stderr)")
        #expect(Self.objects(user.stdout).contains { $0["address"] as? String == Self.strap })
        let gatt = try #require(steps["usergatt"])
        #expect(gatt.status == 0, "\(gatt.stderr)")
        #expect(gatt.stdout.joined().contains("Heart Rate"))
        let read = try #require(steps["userread"])
        #expect(read.status == 0, "\(read.stderr)")
        #expect(Self.firstResult(read.stdout)?["uuid"] as? String == "2A19")
        let write = try #require(steps["userwrite"])
        #expect(write.status == 0, "\(write.stderr)")
        let notify = try #require(steps["usernotify"])
        #expect(notify.status == 0, "\(notify.stderr)")
        #expect(Self.objects(notify.stdout).filter { $0["value"] != nil }.count == 3, "\(notify.stdout)")
        let hr = try #require(steps["userhr"])
        #expect(hr.status == 0, "\(hr.stderr)")
        #expect(Self.objects(hr.stdout).filter { $0["event"] as? String == "measurement" }.count == 3, "\(hr.stdout)")
        let busy = try #require(steps["busy"])
        #expect(busy.status == 74, "\(busy.stderr)")
        #expect(busy.stderr.count == 1 && busy.stderr.first?.contains("busy") == true, "\(busy.stderr)")
    }
}
