import Foundation
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

/// `--btsnoop` on `hciN` in a real Linux kernel (Scripts/vm-test, one boot): the capture comes
/// from the adapter's HCI monitor channel, so it holds what the kernel itself sent for the L2CAP
/// connection (LE Create Connection, the ATT PDUs on its L2CAP socket) as well as rawble's own
/// raw-channel packets, each once. The guest writes the capture to its tmpfs and prints it in
/// base64; tshark (and the project's reader) read it on this machine.
@Suite("--btsnoop on the kernel's raw channel (Scripts/vm-test)", .serialized,
       .tags(.vm, .bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"),
       .enabled(if: ProcessInfo.processInfo.environment["RAWBLE_TESTS_WITHOUT_VM"] != "1",
                "RAWBLE_TESTS_WITHOUT_VM=1: Scripts/vm-test cannot run here"))
struct KernelCaptureVMTests {
    /// The frame numbers tshark lists for `filter` in the capture at `path`.
    static func frames(_ path: String, _ filter: String) async throws -> [String] {
        let tshark = try TestRequirements.tshark()
        let (data, status) = try await within(seconds: 120) {
            try await runToEnd(tshark, ["-r", path, "-Y", filter, "-T", "fields", "-e", "frame.number"])
        }
        #expect(status == 0, "tshark -Y \(filter)")
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Packets recorded twice: a packet written both from the raw channel and from the monitor
    /// shows as two identical records in a row (a command, an ACL packet, a Command
    /// Complete/Status), which a real exchange never produces.
    static func duplicates(_ packets: [(BtsnoopRecord.Direction, H4Packet)]) -> [String] {
        let checked: (H4Packet) -> Bool = { packet in
            packet.type == .command || packet.type == .acl
                || (packet.type == .event && [0x0E, 0x0F].contains(packet.bytes.first))
        }
        return zip(packets, packets.dropFirst()).filter { first, second in
            first.0 == second.0 && first.1 == second.1 && checked(first.1)
        }.map { "\($0.0.0) \($0.0.1)" }
    }

    @Test("gatt --btsnoop on hci0: the capture holds the kernel's LE Create Connection and the ATT Read By Group Type request and response, opens in tshark and btmon, and has no packet twice; --trace shows the same traffic as it happens; scan --btsnoop has rawble's own commands once; without CAP_NET_RAW one line naming the rawble group")
    func gattCapture() async throws {
        let (steps, result) = try await KernelPathVMTests.boot(#"""
            step gatt env RAWBLE_LOG=notice "$r" gatt C0:B1:E0:00:00:01 --timeout 15 --btsnoop /tmp/x.log --json
            step capture base64 /tmp/x.log
            step scan env RAWBLE_LOG=notice "$r" scan --duration 4 --btsnoop /tmp/scan.log --json
            step scancapture base64 /tmp/scan.log
            step trace "$r" read C0:B1:E0:00:00:01 2A19 --timeout 15 --trace
            mkdir -m 777 /tmp/nobody
            step bare setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all -- "$r" scan --duration 2 --btsnoop /tmp/nobody/x.log
            """#)
        #expect(result.status == 0, "vm-test: \(result.stderr)")
        let gatt = try #require(steps["gatt"], "\(result.stdout)\n\(result.stderr)")
        #expect(gatt.status == 0, "\(gatt.stderr)")
        #expect(gatt.stdout.joined().contains("180D"))
        #expect(!gatt.stderr.contains { $0.contains("not the kernel's own traffic") }, "no fallback notice: \(gatt.stderr)")

        // --trace on hci0 reads the same monitor channel: the kernel's own connection and the
        // ATT PDUs of its L2CAP socket, as lines on stderr, beside the value read.
        let trace = try #require(steps["trace"])
        #expect(trace.status == 0, "\(trace.stderr)")
        #expect(trace.stdout == ["87 %"], "\(trace.stdout)")
        #expect(trace.stderr.contains { $0.contains("> command LE Create Connection") || $0.contains("> command LE Extended Create Connection") },
                "the kernel's connection in the trace: \(trace.stderr.prefix(40))")
        #expect(trace.stderr.contains { $0.contains("ATT: Read By Type Request") || $0.contains("ATT: Read Request") }, "\(trace.stderr.prefix(60))")
        #expect(trace.stderr.contains { $0.contains("< acl") && $0.contains("ATT: Read") && $0.contains("Response") }, "\(trace.stderr.prefix(60))")

        let encoded = try #require(steps["capture"]).stdout.joined()
        let bytes = try #require(Data(base64Encoded: encoded), "the capture in base64: \(encoded.prefix(200))")
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-kernel-\(UUID().uuidString).btsnoop")
        try bytes.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }

        // What the kernel sent on its own: the connection (legacy or extended, as the
        // controller's features choose), and the ATT PDUs of its L2CAP socket.
        let create = try await Self.frames(url.path, "bthci_cmd.opcode == 0x200d || bthci_cmd.opcode == 0x2043")
        #expect(!create.isEmpty, "LE (Extended) Create Connection in the capture")
        let request = try await Self.frames(url.path, "btatt.opcode == 0x10")
        let response = try await Self.frames(url.path, "btatt.opcode == 0x11")
        #expect(!request.isEmpty, "ATT Read By Group Type Request in the capture")
        #expect(!response.isEmpty, "ATT Read By Group Type Response in the capture")

        // BlueZ's btmon reads it too and names the same packets. (Debian 12's btmon 5.66 then
        // dies of SIGSEGV in its own GATT tracking at the first Read By Type of characteristic
        // declarations, on any capture with a discovery, an H4 one of rawble's own host too
        // (Examples/): its exit status is not ours to check here; the scan capture's is, below.)
        let btmon = try TestRequirements.btmon()
        // Unbuffered (coreutils' stdbuf), so what btmon printed before dying reaches the pipe.
        let (decoded, _) = try await within(seconds: 120) { try await runToEnd("/usr/bin/stdbuf", ["-o0", btmon, "-r", url.path]) }
        let text = String(decoding: decoded, as: UTF8.self)
        #expect(text.contains("HCI Command: LE Create Connection") || text.contains("HCI Command: LE Extended Create Connection"),
                "btmon: \(text.prefix(400))")
        #expect(text.contains("ATT: Read By Group Type Request") && text.contains("ATT: Read By Group Type Response"))

        // Each packet once.
        let read = BtsnoopReader.read(Array(bytes))
        #expect(read.error == nil)
        #expect(read.header?.datalink == .hciUART)
        let packets = read.records.compactMap { record -> (BtsnoopRecord.Direction, H4Packet)? in
            (try? record.h4Packet(datalink: .hciUART)).flatMap { $0 }.map { (record.direction, $0) }
        }
        #expect(packets.count == read.records.count, "every record is a whole H4 packet")
        let duplicates = Self.duplicates(packets)
        #expect(duplicates.isEmpty, "packets recorded twice: \(duplicates)")
        // rawble's own raw-channel commands are there too (the kernel's central reads the
        // controller's features through it), each answered.
        let commands = packets.filter { $0.1.type == .command }
        #expect(commands.count >= 2, "\(packets.count) packets")

        // A scan alone: rawble's own raw-channel commands, each once: scanning enabled once,
        // and the capture's last scan command the disable rawble sends on its way out (read
        // from the monitor after the raw channel closed).
        let scan = try #require(steps["scan"])
        #expect(scan.status == 0, "\(scan.stderr)")
        let scanCapture = try #require(steps["scancapture"])
        let scanBytes = try #require(Data(base64Encoded: scanCapture.stdout.joined()))
        let scanRead = BtsnoopReader.read(Array(scanBytes))
        #expect(scanRead.error == nil)
        let scanPackets = scanRead.records.compactMap { record -> (BtsnoopRecord.Direction, H4Packet)? in
            (try? record.h4Packet(datalink: .hciUART)).flatMap { $0 }.map { (record.direction, $0) }
        }
        let enables = scanPackets.map(\.1).filter { $0.type == .command && $0.bytes.starts(with: [0x0C, 0x20]) }
        let states = enables.compactMap { $0.bytes.dropFirst(3).first }  // LE Set Scan Enable: 1 on, 0 off
        #expect(states.first == 1, "rawble's enable first: \(states)")
        // rawble's stop went through and the capture ends with its disable. On a loaded fresh
        // clone (every suite at once, load ~10) the virtual controller (Bumble, in Python on
        // the host) once took longer than the 3 s command timeout to answer that disable: rawble
        // said so in one warning and exited, and the kernel sent the queued command only after
        // the capture had closed (the capture held rawble's enable alone). That case, and only
        // that one, is a known issue of the environment, reported but not failing the run.
        let controllerTooSlow = scan.stderr.contains { $0.contains("did not answer LE Set Scan Enable") }
        withKnownIssue("the virtual controller answered the closing disable after the 3 s timeout", isIntermittent: true) {
            #expect(!scan.stderr.contains { $0.contains("its stop failed") }, "\(scan.stderr)")
            #expect(states.last == 0, "the disable on the way out: \(states); rawble said: \(scan.stderr)")
        } when: {
            controllerTooSlow
        }
        // The kernel stops scanning ~1.5 s after gatt's link is gone, under rawble's scan: every
        // stop before rawble's own is followed by rawble's enable, and reports come after it.
        for (index, state) in states.enumerated().dropLast() where state == 0 {
            #expect(states[index + 1] == 1, "scanning switched on again after another program stopped it: \(states)")
        }
        let lastOn = scanPackets.lastIndex { $0.1.type == .command && $0.1.bytes.starts(with: [0x0C, 0x20, 0x02, 0x01]) } ?? 0
        let reportsAfter = scanPackets[lastOn...].filter { $0.1.type == .event && $0.1.bytes.starts(with: [0x3E]) }.count
        #expect(reportsAfter > 0, "reports after the last enable: \(states)")
        // btmon reads the whole scan capture.
        let scanURL = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-scan-\(UUID().uuidString).btsnoop")
        try scanBytes.write(to: scanURL)
        defer { try? FileManager.default.removeItem(at: scanURL) }
        let (scanDecoded, scanStatus) = try await within(seconds: 120) { try await runToEnd(btmon, ["-r", scanURL.path]) }
        #expect(scanStatus == 0, "btmon -r on the scan capture")
        #expect(String(decoding: scanDecoded, as: UTF8.self).contains("HCI Command: LE Set Scan Enable"))
        let duplicatedInScan = Self.duplicates(scanPackets)
        #expect(duplicatedInScan.isEmpty, "packets recorded twice: \(duplicatedInScan)")

        // Without CAP_NET_RAW the monitor cannot be opened, nor can the raw channel work: one
        // line naming the rawble group, as without --btsnoop.
        let bare = try #require(steps["bare"])
        #expect(bare.status == 77, "\(bare.stderr)")
        #expect(bare.stderr.count == 1 && bare.stderr.first?.contains("rawble group (`sudo adduser") == true, "\(bare.stderr)")
    }
}
