import Foundation
@testable import rawble
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

/// `--trace`'s line formatter on its own: well-formed packets read as `decode btsnoop` reads
/// them, and no byte sequence makes it trap or print more than one line.
@Suite struct TraceLineTests {
    static func line(_ type: H4PacketType, _ bytes: [UInt8], _ direction: BtsnoopRecord.Direction,
                     at milliseconds: Int = 0, session: inout PacketDescription.Session) -> String {
        PacketTrace.line(H4Packet(type: type, bytes: bytes), direction: direction,
                         elapsed: .milliseconds(milliseconds), session: &session)
    }

    @Test("time, direction, then decode btsnoop's summary: a command, its Command Complete, an ATT read and its response")
    func wellFormedPackets() {
        var session = PacketDescription.Session()
        #expect(Self.line(.command, [0x03, 0x0C, 0x00], .sent, at: 4, session: &session) == "  0.004 > command Reset")
        #expect(Self.line(.event, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00], .received, at: 1_235, session: &session)
            == "  1.235 < event Command Complete: Reset Success (0x00)")
        // ACL handle 0x040, first non-flushable; L2CAP 3 bytes on CID 4; ATT Read Request 0x0003.
        #expect(Self.line(.acl, [0x40, 0x00, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x0A, 0x03, 0x00], .sent, at: 2_000, session: &session)
            == "  2.000 > acl handle 64 ATT: Read Request 0x0003")
        // From the controller: first flushable (0x2040); Read Response 01 02.
        #expect(Self.line(.acl, [0x40, 0x20, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x0B, 0x01, 0x02], .received, at: 2_001, session: &session)
            == "  2.001 < acl handle 64 ATT: Read Response 0102")
        // A 30-byte L2CAP PDU whose first fragment holds 5 bytes, then a continuation.
        #expect(Self.line(.acl, [0x40, 0x20, 0x09, 0x00, 0x1E, 0x00, 0x04, 0x00, 0x0B, 1, 2, 3, 4], .received, session: &session)
            == "  0.000 < acl handle 64 ATT: Read Response, first fragment of a 30-byte PDU")
        #expect(Self.line(.acl, [0x40, 0x10, 0x03, 0x00, 5, 6, 7], .received, session: &session)
            == "  0.000 < acl handle 64 continuation fragment")
        // The facts a link is followed by: a flag, a handle, a reason.
        #expect(Self.line(.command, [0x0A, 0x20, 0x01, 0x01], .sent, session: &session)
            == "  0.000 > command LE Set Advertising Enable: on")
        #expect(Self.line(.event, [0x05, 0x04, 0x00, 0x40, 0x00, 0x13], .received, session: &session)
            == "  0.000 < event Disconnection Complete: handle 64 Success (0x00), reason Remote User Terminated Connection (0x13)")
    }

    @Test("seconds since the start, to the millisecond, right-aligned in seven columns")
    func seconds() {
        #expect(PacketTrace.seconds(.zero) == "  0.000")
        #expect(PacketTrace.seconds(.milliseconds(1_234)) == "  1.234")
        #expect(PacketTrace.seconds(.microseconds(999_999)) == "  0.999")
        #expect(PacketTrace.seconds(.seconds(1_000) + .milliseconds(5)) == "1000.005")
    }

    @Test("a packet that does not decode is one `malformed` line: its type, the decoder's error, its H4 bytes in hex")
    func malformedPackets() {
        var session = PacketDescription.Session()
        // Command Complete whose length says 4 bytes follow, and one does.
        let event = Self.line(.event, [0x0E, 0x04, 0x01], .received, at: 7, session: &session)
        #expect(event.hasPrefix("  0.007 < malformed event ("), "\(event)")
        #expect(event.hasSuffix("): 040e0401"), "\(event)")
        // ATT Read Request without its handle.
        let att = Self.line(.acl, [0x40, 0x00, 0x05, 0x00, 0x01, 0x00, 0x04, 0x00, 0x0A], .sent, session: &session)
        #expect(att.hasPrefix("  0.000 > malformed acl ("), "\(att)")
        #expect(att.hasSuffix("): 0240000500010004000a"), "\(att)")
        // An ACL packet of 300 bytes whose header claims 0xFFFF: shown cut to 64 bytes, with its size.
        let long = Self.line(.acl, [0x40, 0x00, 0xFF, 0xFF] + [UInt8](repeating: 0xAB, count: 296), .received, session: &session)
        #expect(long.hasSuffix("): 024000ffff" + String(repeating: "ab", count: 59) + "… (301 bytes)"), "\(long)")
        // Nothing at all after the type byte, for every type.
        for type in [H4PacketType.command, .event, .acl, .sco, .iso] {
            let empty = Self.line(type, [], .received, session: &session)
            #expect(empty.contains("< malformed \(PacketDescription.typeName(type)) ("), "\(empty)")
        }
    }

    @Test("random bytes of every packet type: never a trap, always one line with time and direction")
    func randomBytes() throws {
        var random = SplitMix64(state: 0x7261_7762_6C65)
        var session = PacketDescription.Session()
        let shape = try Regex(#"^ *\d+\.\d{3} [<>] \S"#)
        for _ in 0..<20_000 {
            let type = [H4PacketType.command, .event, .acl, .sco, .iso].randomElement(using: &random) ?? .event
            var bytes = (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            // Often a header whose length fits, so decoding goes past the header into L2CAP and ATT.
            if type == .acl, bytes.count >= 8, Bool.random(using: &random) {
                bytes[2] = UInt8(bytes.count - 4)
                bytes[3] = 0
                bytes[6] = 0x04
                bytes[7] = 0x00
                if Bool.random(using: &random) { bytes[4] = UInt8(bytes.count - 8); bytes[5] = 0 }
            } else if type == .event, bytes.count >= 2, Bool.random(using: &random) {
                bytes[1] = UInt8(bytes.count - 2)
            }
            let line = Self.line(type, bytes, Bool.random(using: &random) ? .sent : .received, session: &session)
            #expect(!line.contains("\n"), "\(line)")
            #expect(line.firstMatch(of: shape) != nil, "\(line)")
        }
    }

    @Test("lines from many threads: each whole, in time order")
    func concurrentObservers() async {
        let lines = LinesSeen()
        let trace = PacketTrace { lines.append($0) }
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<4 {
                group.addTask {
                    for _ in 0..<200 {
                        trace.observe(H4Packet(type: .command, bytes: [0x03, 0x0C, 0x00]), direction: index.isMultiple(of: 2) ? .sent : .received)
                    }
                }
            }
        }
        let all = lines.all
        #expect(all.count == 800)
        #expect(all.allSatisfy { $0.hasSuffix(" command Reset") })
        let times = all.compactMap { Double($0.prefix(7).trimmingCharacters(in: .whitespaces)) }
        #expect(times.count == 800 && times == times.sorted())
    }

    @Test("keys show as zeros unless included, also in the hex of a malformed line: an LTK reply and SMP Encryption Information whose lengths are off by one")
    func keysRedacted() throws {
        let key = (0..<16).map { UInt8(0xA0 + $0) }
        // Summaries name these packets without their keys; a malformed line shows the bytes.
        let reply = H4Packet(type: .command, bytes: [0x1A, 0x20, 0x13, 0x40, 0x00] + key)
        let smp = H4Packet(type: .acl, bytes: [0x40, 0x00, 0x16, 0x00, 0x11, 0x00, 0x06, 0x00, 0x06] + key)
        for keys in [KeyMaterial.redacted, .included] {
            let lines = LinesSeen()
            let trace = PacketTrace(keys: keys) { lines.append($0) }
            for packet in [reply, smp] { trace.observe(packet, direction: .sent) }
            let all = lines.all
            #expect(all.count == 2 && all.allSatisfy { $0.contains("malformed") }, "\(all)")
            let shown = all.filter { $0.contains(Hex.encode(key)) }.count
            let zeros = all.filter { $0.contains(Hex.encode([UInt8](repeating: 0, count: 16))) }.count
            #expect(keys == .included ? shown == 2 && zeros == 0 : shown == 0 && zeros == 2, "\(keys): \(all)")
        }
    }
}

/// What a trace printed, collected from any thread.
private final class LinesSeen: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

/// `--trace` as a user runs it, against Bumble's virtual controller.
@Suite("rawble --trace against Bumble", .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct TraceCommandTests {
    /// Direction and summary of every trace line on stderr; a line that is not one fails the test.
    static func traced(_ stderr: String, sourceLocation: SourceLocation = #_sourceLocation) -> [(time: Double, direction: String, summary: String)] {
        stderr.split(separator: "\n").compactMap { line in
            // Time, direction, summary.
            guard let match = line.wholeMatch(of: #/ *(\d+\.\d{3}) ([<>]) (.*)/#) else {
                Issue.record("not a trace line: \(line)", sourceLocation: sourceLocation)
                return nil
            }
            return (Double(match.1) ?? -1, String(match.2), String(match.3))
        }
    }

    @Test("scan --trace (before the subcommand, with --json): Reset, its Command Complete and advertising reports on stderr, in time order; stdout's JSON lines as without it")
    func scan() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        let strap = try #require(peer.devices.first { $0.name == "rawble-strap" })
        let result = try await CLI.run(["--trace", "scan", "--transport", peer.transport, "--duration", "2", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = Self.traced(result.stderr)
        #expect(lines.first.map { "\($0.direction) \($0.summary)" } == "> command Reset", "\(result.stderr.prefix(300))")
        #expect(lines.dropFirst().first.map { "\($0.direction) \($0.summary)" } == "< event Command Complete: Reset Success (0x00)")
        let report = #/^event LE (Extended )?Advertising Report: (.*)$/#
        let strapReports = lines.filter { line in
            line.direction == "<" && (line.summary.wholeMatch(of: report)?.2.contains("\(strap.address) \"rawble-strap\" -") ?? false)
        }
        #expect(!strapReports.isEmpty, "\(result.stderr.prefix(2000))")
        #expect(lines.map(\.time) == lines.map(\.time).sorted())
        // The scan is switched off at the end: the last command sent.
        #expect(lines.last { $0.direction == ">" }?.summary == "command LE Set Scan Enable: off")
        // stdout: the devices' JSON lines, nothing else.
        let devices = try ScanCommandTests.devices(result)
        #expect(Set(devices.keys) == Set(peer.devices.map(\.address)))
        #expect(result.stdoutLines.count == peer.devices.count, "\(result.stdout)")
    }

    @Test("read --trace: the ATT Read Request with its handle and the Read Response with the value, named; stdout exactly the value")
    func read() async throws {
        let (peer, lab) = try await GATTCommandTests.lab()
        defer { peer.stop() }
        let manufacturer = try #require(lab.service("180A")?.characteristic("2A29"))
        let result = try await CLI.run(["read", lab.address, "2a29", "--transport", peer.transport, "--trace"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "\"rawble-sim\"\n", "the value as read prints it (a string, quoted)")
        let att = Self.traced(result.stderr).filter { $0.summary.contains(" ATT: ") }
        let request = try #require(att.firstIndex { $0.summary.hasSuffix("ATT: Read Request \(GATTCommandTests.handle(manufacturer.value))") },
                                   "\(result.stderr)")
        #expect(att[request].direction == ">")
        #expect(att[request].summary.wholeMatch(of: #/acl handle \d+ ATT: Read Request 0x[0-9A-F]{4}/#) != nil)
        let response = try #require(att.dropFirst(request + 1).first, "no ATT after the read request")
        #expect(response.direction == "<")
        #expect(response.summary.wholeMatch(of: #/acl handle \d+ ATT: Read Response 726177626c652d73696d \(Manufacturer Name String\)/#) != nil,
                "\(response.summary)")
        // The link was opened by exchanging the MTU, as traced.
        #expect(att.first?.summary.hasSuffix("ATT: Exchange MTU Request mtu 517") == true, "\(att.first?.summary ?? "")")
    }

    @Test("gatt --trace --btsnoop --json: both work together; the trace's lines are decode btsnoop's of the capture; stdout the one JSON document")
    func gattWithCapture() async throws {
        let (peer, lab) = try await GATTCommandTests.lab()
        defer { peer.stop() }
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-trace-\(UUID().uuidString).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: capture) }
        let result = try await CLI.run(["gatt", lab.address, "--transport", peer.transport, "--json", "--trace", "--btsnoop", capture])
        #expect(result.status == 0, "\(result.stderr.suffix(500))")
        #expect(result.stdoutLinesExceptStatus.count == 1)
        let document = try CLI.jsonObject(result.stdoutExceptStatus)
        #expect(document["address"] as? String == lab.address)
        #expect((document["services"] as? [[String: Any]])?.count == lab.gatt?.count)

        let traced = Self.traced(result.stderr).map { "\($0.direction) \($0.summary)" }
        #expect(traced.contains { $0.contains("ATT: Read By Group Type Request 0x0001-0xFFFF 2800 (Primary Service)") })
        let decoded = try await CLI.run(["decode", "btsnoop", capture])
        #expect(decoded.status == 0, "\(decoded.stderr)")
        let record = #/^ *\d+ \S+ ([<>]) (.*)$/#
        let captured = decoded.stdoutLines.compactMap { line in line.wholeMatch(of: record).map { "\($0.1) \($0.2)" } }
        #expect(captured.count == decoded.stdoutLines.count)
        // The same packets, summarised by the same decoders (two taps: sort, as a send and a
        // receive on two threads may pass them in either order).
        #expect(traced.count == captured.count)
        #expect(traced.sorted() == captured.sorted())
    }

    @Test("hr --trace on a terminal: every trace line starts on a cleared line, above the status line, never glued to it",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "util-linux's script is not installed"))
    func aboveTheStatusLine() async throws {
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.1", "--hr-script", "realistic", "--hr-count", "0"])
        defer { peer.stop() }
        let result = try await CLI.run(["hr", "--transport", peer.transport, "--count", "20", "--trace"],
                                       launcher: CLI.terminalLauncher())
        #expect(result.status == 0, "\(result.stdout.suffix(400))")
        let screen = result.stdout
        #expect(screen.contains(" bpm"), "no status line drawn: \(screen.suffix(400))")
        // What is on screen of each line is what follows its last "clear line"; a trace line
        // printed past the status line would follow the status text on the same line.
        // (On a terminal lines end in "\r\n", one Character: split at any newline.)
        let traced = screen.split(whereSeparator: \.isNewline).filter { $0.contains(" < acl handle ") || $0.contains(" > command ") }
        #expect(traced.filter { $0.contains("Handle Value Notification") }.count >= 20, "\(screen.suffix(600))")
        for line in traced {
            let shown = line.components(separatedBy: "\u{1B}[2K").last ?? ""
            #expect(shown.firstMatch(of: #/^ *\d+\.\d{3} [<>] /#) != nil, "glued to the status line: \(line.debugDescription)")
        }
    }
}
