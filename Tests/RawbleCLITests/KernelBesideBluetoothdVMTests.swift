import Foundation
import RawbleTestPeers
import RawbleTestSupport
import Testing

/// The default transport where users are: a desktop's bluetoothd runs and powers the adapter,
/// idle or discovering (a Bluetooth settings panel open). rawble scans, connects and reads
/// beside it, without a capability it fails in one line, and afterwards the daemon still works:
/// running, powered, still discovering when it was, finding the strap and connecting to it.
/// With the daemon idle, a client then asks it to discover after rawble's own connections, and
/// rawble still finds and reads the strap during that discovery and after it.
@Suite("Beside bluetoothd in a real kernel (Scripts/vm-test --bluetoothd)", .serialized,
       .tags(.vm, .bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"),
       .enabled(if: ProcessInfo.processInfo.environment["RAWBLE_TESTS_WITHOUT_VM"] != "1",
                "RAWBLE_TESTS_WITHOUT_VM=1: Scripts/vm-test cannot run here"))
struct KernelBesideBluetoothdVMTests {
    @Test("scan, then gatt, hr, notify and ecg --acc (the simulated Polar H10's raw ECG and acceleration) in the same kernel; no capability: one line naming the rawble group (77) with the adapter up; bluetoothd works afterwards",
          arguments: ["idle", "discovering"])
    func besideTheDaemon(mode: String) async throws {
        let (steps, result) = try await KernelPathVMTests.boot(#"""
            step scan "$r" scan --duration 4 --json
            step gatt "$r" gatt C0:B1:E0:00:00:01 --timeout 20 --json
            step hr "$r" hr --count 5 --timeout 20 --json
            step notify "$r" notify C0:B1:E0:00:00:01 2A37 --count 3 --timeout 20 --json
            step ecg "$r" ecg --acc --count 260 --timeout 20 --json
            step nocap setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all -- "$r" scan --duration 2
            \#(mode == "idle" ? Self.clientDiscoveryAfterwards : "")
            step daemon /run/rawble-vm/bluetoothd-check C0:B1:E0:00:00:01
            # What the kernel and the daemon logged, for a failure's message (the guest is gone after).
            step logs sh -c 'dmesg | grep -i bluetooth | tail -n 25; echo "-- bluetoothd.log"; tail -n 25 /run/rawble-vm/bluetoothd.log'
            """#, peerArguments: ["--h10"], vmOptions: ["--bluetoothd", mode])
        let logs = (steps["logs"]?.stdout ?? []).joined(separator: "\n")
        #expect(result.status == 0, "vm-test: \(result.stderr)")

        let scan = try #require(steps["scan"], "\(result.stdout)\n\(result.stderr)")
        #expect(scan.status == 0, "\(scan.stderr)")
        let strap = KernelPathVMTests.objects(scan.stdout).first { $0["address"] as? String == KernelPathVMTests.strap }
        #expect(strap?["services"] as? [String] == ["180D", "180F"], "\(scan.stdout)")

        let gatt = try #require(steps["gatt"])
        #expect(gatt.status == 0, "\(gatt.stderr)\n\(logs)")
        #expect(gatt.stdout.joined().contains("180D"))

        let hr = try #require(steps["hr"])
        #expect(hr.status == 0, "\(hr.stderr)\n\(logs)")
        #expect(KernelPathVMTests.objects(hr.stdout).filter { $0["event"] as? String == "measurement" }.count == 5, "\(hr.stdout)")

        let notify = try #require(steps["notify"])
        #expect(notify.status == 0, "\(notify.stderr)\n\(logs)")
        #expect(KernelPathVMTests.objects(notify.stdout).filter { $0["value"] != nil }.count == 3, "\(notify.stdout)")

        // Polar's PMD over the kernel's L2CAP socket: the MTU exchanged to at least 232, ECG and
        // acceleration started, two seconds of ECG with the vectors beside it.
        let ecg = try #require(steps["ecg"])
        #expect(ecg.status == 0, "\(ecg.stderr)\n\(logs)")
        let ecgEvents = KernelPathVMTests.objects(ecg.stdout)
        #expect((ecgEvents.first { $0["event"] as? String == "connected" }?["mtu"] as? Int ?? 0) >= 232, "\(ecg.stdout)")
        #expect(ecgEvents.filter { $0["event"] as? String == "ecg" }.flatMap { $0["uV"] as? [Int] ?? [] }.count == 260, "\(ecg.stdout)")
        #expect(ecgEvents.filter { $0["event"] as? String == "started" }.compactMap { $0["type"] as? String } == ["ecg", "acc"])
        #expect(!ecgEvents.filter { $0["event"] as? String == "acc" }.flatMap { $0["mG"] as? [[Int]] ?? [] }.isEmpty, "\(ecg.stdout)")

        // The adapter is up (the daemon powered it): no capability is one line naming the group.
        let nocap = try #require(steps["nocap"])
        #expect(nocap.status == 77, "\(nocap.stderr)")
        #expect(nocap.stderr.count == 1 && nocap.stderr.first?.contains("rawble group (`sudo adduser") == true, "\(nocap.stderr)")

        if mode == "idle" { try Self.expectClientDiscoveryAfterwards(steps, logs: logs) }

        let daemon = try #require(steps["daemon"])
        #expect(daemon.status == 0, "bluetoothd after rawble:\n\((daemon.stdout + daemon.stderr).joined(separator: "\n"))\n\(logs)")
    }

    @Test("hr --all --max 5 on hci0 beside an idle bluetoothd: five straps followed at once over the kernel's L2CAP sockets, 8 measurements each, every event naming its strap; with a sixth strap and a controller that holds five links, the kernel's refusal of the sixth is one line with the links held and another adapter while the five stream; with --transport hci0,hci1 the six spread over both adapters; bluetoothd works afterwards (issue 41)")
    func fiveStraps() async throws {
        // Six straps on the link, a controller that refuses a sixth link with Connection
        // Rejected due to Limited Resources (0x0D, as Marvell's 88W8897 does after two): the
        // kernel hands rawble ECONNREFUSED for it (bt_to_errno).
        // Two adapters on the one link (hci0, hci1: one Bumble process serving two controllers):
        // the steps before the last use hci0 alone; the last spreads the six over both.
        let (steps, result) = try await KernelPathVMTests.boot(#"""
            step hr "$r" hr --all --max 5 --count 8 --timeout 20 --json --transport hci0
            sleep 3
            step full timeout -s INT 25 "$r" hr --all --max 6 --json --timeout 20 --transport hci0
            sleep 3
            step two "$r" hr --all --max 6 --count 5 --timeout 20 --json --transport hci0,hci1
            step daemon /run/rawble-vm/bluetoothd-check C0:B1:E0:00:01:01
            step logs sh -c 'dmesg | grep -i bluetooth | tail -n 25; echo "-- bluetoothd.log"; tail -n 25 /run/rawble-vm/bluetoothd.log'
            """#, controllers: [KernelPathVMTests.controllerAddress, "00:1B:DC:0F:00:02"],
            peerArguments: ["--strap-only", "--straps", "6", "--max-links", "5", "--hr-interval", "0.25", "--hr-count", "400"],
            ports: 2, vmOptions: ["--bluetoothd", "idle"])
        let logs = (steps["logs"]?.stdout ?? []).joined(separator: "\n")
        #expect(result.status == 0, "vm-test: \(result.stderr)")
        let hr = try #require(steps["hr"], "\(result.stdout)\n\(result.stderr)")
        #expect(hr.status == 0, "\(hr.stderr)\n\(logs)")
        let events = KernelPathVMTests.objects(hr.stdout)
        let measurements = events.filter { $0["event"] as? String == "measurement" }
        let followed = Set(measurements.compactMap { $0["address"] as? String })
        #expect(followed.count == 5, "\(followed.sorted())\n\(hr.stderr)\n\(logs)")
        for address in followed {
            let values = measurements.filter { $0["address"] as? String == address }
            #expect(values.count == 8, "\(address): \(values.count) measurements\n\(hr.stderr)\n\(logs)")
            let number = String(address.suffix(2))
            #expect(values.allSatisfy { $0["name"] as? String == "rawble-strap-\(number)" })
        }

        let full = try #require(steps["full"], "\(result.stdout)\n\(result.stderr)")
        let fullEvents = KernelPathVMTests.objects(full.stdout)
        let streaming = Set(fullEvents.filter { $0["event"] as? String == "measurement" }.compactMap { $0["address"] as? String })
        #expect(streaming.count == 5, "with room for five links, five straps stream: \(streaming.sorted())\n\(full.stderr)\n\(logs)")
        let refusals = fullEvents.filter { $0["event"] as? String == "error" }.compactMap { $0["message"] as? String }
        #expect(refusals.contains { $0.contains("6th link") && $0.contains("holds 5") && $0.contains("ECONNREFUSED")
                    && $0.contains("another adapter") },
                "the sixth strap's refusal names the links held and the fix: \(refusals)\n\(full.stderr)\n\(logs)")

        // Two adapters in one process (issue 41): the six straps spread over hci0 and hci1, each
        // to --count, every value's strap named; both adapters hold links.
        let two = try #require(steps["two"], "\(result.stdout)\n\(result.stderr)")
        #expect(two.status == 0, "\(two.stderr)\n\(logs)")
        let twoEvents = KernelPathVMTests.objects(two.stdout)
        let perStrap = Dictionary(grouping: twoEvents.filter { $0["event"] as? String == "measurement" }) { $0["address"] as? String ?? "" }
        #expect(perStrap.count == 6 && perStrap.values.allSatisfy { $0.count == 5 },
                "\(perStrap.mapValues(\.count))\n\(two.stderr)\n\(logs)")
        let via = Set(twoEvents.filter { $0["event"] as? String == "connected" }.compactMap { $0["adapter"] as? String })
        #expect(via == ["hci0", "hci1"], "the adapters the straps connected through: \(via.sorted())\n\(two.stdout.prefix(40))")

        let daemon = try #require(steps["daemon"])
        #expect(daemon.status == 0, "bluetoothd after rawble:\n\((daemon.stdout + daemon.stderr).joined(separator: "\n"))\n\(logs)")
    }

    /// Issue 39's sequence: after rawble's own connections, with the daemon idle, a client
    /// (a settings panel, `bluetoothctl scan on`) asks the daemon to discover. While it does,
    /// and after it has ended, rawble still lists the strap and `hr` connects to it.
    static let clientDiscoveryAfterwards = #"""
        bluetoothctl --timeout 15 scan on > /tmp/client-scan.log 2>&1 < /dev/null &
        echo $! > /tmp/client-scan.pid
        sleep 3
        step scanDuring "$r" scan --duration 4 --json
        step hrDuring "$r" hr --count 5 --timeout 20 --json
        step clientScan sh -c 'while kill -0 $(cat /tmp/client-scan.pid) 2>/dev/null; do sleep 0.5; done; cat /tmp/client-scan.log'
        step hrAfter "$r" hr --count 3 --timeout 20 --json
        """#

    static func expectClientDiscoveryAfterwards(_ steps: [String: KernelPathVMTests.Step], logs: String) throws {
        let client = (steps["clientScan"]?.stdout ?? []).joined(separator: "\n")
        let scan = try #require(steps["scanDuring"])
        #expect(scan.status == 0, "\(scan.stderr)\n\(logs)")
        #expect(KernelPathVMTests.objects(scan.stdout).contains { $0["address"] as? String == KernelPathVMTests.strap },
                "while the daemon discovers for a client, rawble scan lists no strap: \(scan.stdout)\n\(scan.stderr)\nbluetoothctl: \(client)\n\(logs)")
        for (name, count) in [("hrDuring", 5), ("hrAfter", 3)] {
            let hr = try #require(steps[name])
            #expect(hr.status == 0, "\(name): \(hr.stderr)\nbluetoothctl: \(client)\n\(logs)")
            #expect(KernelPathVMTests.objects(hr.stdout).filter { $0["event"] as? String == "measurement" }.count == count,
                    "\(name): \(hr.stdout)")
        }
    }
}
