import Foundation
import RawbleGATT
import RawbleGATTCore
import RawbleHeartRate
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

/// The peripheral role on the kernel path: `rawble peripheral hr` on hci0 (advertising through
/// the raw channel, centrals accepted on a listening L2CAP socket) and `rawble hr` on hci1, two
/// adapters of one guest on ONE Bumble link (a peer with two served controllers).
@Suite("The peripheral role on hciN in a real Linux kernel (Scripts/vm-test)", .serialized,
       .tags(.vm, .bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"),
       .enabled(if: ProcessInfo.processInfo.environment["RAWBLE_TESTS_WITHOUT_VM"] != "1",
                "RAWBLE_TESTS_WITHOUT_VM=1: Scripts/vm-test cannot run here"))
struct KernelPeripheralVMTests {
    static let peripheralAddress = "00:1B:DC:0F:00:01"
    static let centralAddress = "00:1B:DC:0F:00:02"

    /// In the guest: waits (bounded, on the file's content) until /tmp/p.out has `word`.
    static func waitFor(_ word: String) -> String {
        #"for i in $(seq 150); do grep -q '"# + word + #"' /tmp/p.out && break; sleep 0.2; done"#
    }

    /// The first central's link is ended from hci1 with HCI Disconnect (hcitool): Debian's 6.1
    /// kernel, when the last socket on its LE link closes, sometimes sends LE Create Connection
    /// Cancel for the connected link instead of Disconnect ("hci1: Opcode 0x200e failed: -16",
    /// Command Disallowed) and then keeps the link up; the central's side, not the peripheral's.
    @Test("rawble peripheral hr on hci0, rawble hr on hci1: measurements that decode, twice (advertising starts again after the first central); the peripheral reports connected, subscribed, disconnected")
    func heartRateStrapOnTheKernel() async throws {
        let (steps, result) = try await KernelPathVMTests.boot(#"""
            "$r" peripheral hr --transport hci0 --rate 5 --json --duration 90 >/tmp/p.out 2>/tmp/p.err & p=$!
            step hr "$r" hr rawble-hr --transport hci1 --count 5 --json --timeout 30
            h=$(hcitool -i hci1 con | awk '/LE/ { print $5; exit }'); [ -n "$h" ] && hcitool -i hci1 ledc "$h" 19
            \#(Self.waitFor("disconnected"))
            step again "$r" hr rawble-hr --transport hci1 --count 2 --json --timeout 10
            kill -INT $p; wait $p; echo "@@@ peripheral $?"; cat /tmp/p.out; echo "@@@ stderr"; cat /tmp/p.err
            """#, controllers: [Self.peripheralAddress, Self.centralAddress], peerArguments: ["--no-standard"], ports: 2)
        #expect(result.status == 0, "vm-test: \(result.stderr)")
        let hr = try #require(steps["hr"], "\(result.stdout)\n\(result.stderr)")
        #expect(hr.status == 0, "\(hr.stderr)")
        let values = KernelPathVMTests.objects(hr.stdout).filter { $0["event"] as? String == "measurement" }
        #expect(values.count == 5, "\(hr.stdout)")
        for value in values {
            let raw = try Hex.decode(try #require(value["raw"] as? String))
            #expect(throws: Never.self) { try HeartRateMeasurement.decode(raw) }
        }
        let connected = KernelPathVMTests.objects(hr.stdout).first { $0["event"] as? String == "connected" }
        #expect(connected?["address"] as? String == Self.peripheralAddress, "\(hr.stdout)")

        let again = try #require(steps["again"])
        #expect(again.status == 0, "advertising started again after the first central: \(again.stderr)")
        #expect(KernelPathVMTests.objects(again.stdout).filter { $0["event"] as? String == "measurement" }.count == 2)

        let peripheral = try #require(steps["peripheral"])
        // Ctrl-C before its --duration (90 s, a bound for the VM): interrupted, after a clean stop.
        #expect(peripheral.status == 78, "\(peripheral.stderr)")
        let reported = KernelPathVMTests.objects(peripheral.stdout)
        let events = reported.map { $0["event"] as? String ?? "?" }
        #expect(events.first == "advertising", "\(peripheral.stdout)")
        #expect(reported.first?["address"] as? String == Self.peripheralAddress)
        #expect(events.filter { $0 == "connected" }.count == 2, "\(peripheral.stdout)")
        #expect(events.contains("subscribed"), "\(peripheral.stdout)")
        // The first central's link ended (its disconnection seen) before the second connected.
        let firstEnd = events.firstIndex(of: "disconnected")
        let secondConnection = events.indices.filter { events[$0] == "connected" }.dropFirst().first
        #expect((firstEnd ?? .max) < (secondConnection ?? .min), "\(peripheral.stdout)")
        let central = reported.first { $0["event"] as? String == "connected" }
        #expect(central?["central"] as? String == Self.centralAddress, "\(peripheral.stdout)")
    }

    /// `--require encrypted` on hci0: the kernel on hci1 (rawble read, a central with no
    /// bluetoothd) is refused with Insufficient Encryption, raises BT_SECURITY and pairs with
    /// the kernel on hci0, whose Security Manager answers for rawble's peripheral.
    @Test("rawble peripheral hr --require encrypted on hci0, rawble read on hci1: the read is refused, the two kernels pair (Just Works), the read is answered; the peripheral reports the central connected")
    func encryptedReadFromTheKernelsPeripheral() async throws {
        let (steps, result) = try await KernelPathVMTests.boot(#"""
            btmgmt --index 0 bondable on >/dev/null; btmgmt --index 1 bondable on >/dev/null
            "$r" peripheral hr --transport hci0 --require encrypted --json --duration 90 >/tmp/p.out 2>/tmp/p.err & p=$!
            \#(Self.waitFor("advertising"))
            step read "$r" read \#(Self.peripheralAddress) 2A38 --transport hci1 --json --timeout 40 -v
            kill -INT $p; wait $p; echo "@@@ peripheral $?"; cat /tmp/p.out; echo "@@@ stderr"; cat /tmp/p.err
            step dmesg sh -c 'dmesg | grep -i -E "bluetooth|smp" | tail -n 20'
            """#, controllers: [Self.peripheralAddress, Self.centralAddress], peerArguments: ["--no-standard"], ports: 2)
        #expect(result.status == 0, "vm-test: \(result.stderr)")
        let dmesg = steps["dmesg"].map { ($0.stdout + $0.stderr).joined(separator: "\n") } ?? "(no dmesg step)"
        let read = try #require(steps["read"], "\(result.stdout)\n\(result.stderr)")
        #expect(read.status == 0, "\(read.stderr)\n\(steps["peripheral"].map { $0.stdout + $0.stderr } ?? [])\n\(dmesg)")
        #expect(KernelPathVMTests.firstResult(read.stdout)?["uuid"] as? String == "2A38", "\(read.stdout)")
        // Refused first, then read after the kernels paired (-v's lines): not a read that
        // needed no security.
        #expect(read.stderr.contains { $0.contains("refused with Insufficient Encryption (0x0F)") }, "\(read.stderr)")
        #expect(read.stderr.contains { $0.contains("security raised from low to medium") }, "\(read.stderr)")
        let peripheral = try #require(steps["peripheral"])
        let central = KernelPathVMTests.objects(peripheral.stdout).first { $0["event"] as? String == "connected" }
        #expect(central?["central"] as? String == Self.centralAddress, "\(peripheral.stdout)")
    }
}
