import Foundation
import RawbleHostCore
@testable import rawble
import RawbleHost
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

/// The live scan table's content, drawn for a given terminal size and moment (no terminal).
@Suite("The live scan table")
struct ScanTableModelTests {
    static func device(_ last: UInt8, rssi: Int8?, name: String? = nil, connectable: Bool = true) -> DiscoveredDevice {
        var data: [UInt8] = [0x02, 0x01, 0x06]
        if let name {
            let bytes = Array(name.utf8)
            data += [UInt8(bytes.count + 1), 0x09] + bytes
        }
        return DiscoveredDevice(address: DeviceAddress(BluetoothAddress(0xC0B1_0000_0000 | UInt64(last)), type: .random),
                                rssi: rssi, isConnectable: connectable, advertisement: AdvertisingData(decoding: data))
    }

    @Test("rows sorted by signal (strongest first, then address), the header first, the count last; RSSI, connectable and age update with each report")
    func sortedAndUpdated() {
        var model = ScanTableModel()
        model.update(Self.device(1, rssi: -70, name: "far"), at: 0.5)
        model.update(Self.device(2, rssi: -40, name: "near", connectable: false), at: 1)
        model.update(Self.device(3, rssi: -70, name: "also-far"), at: 2)
        var lines = model.lines(now: 2.2, scanning: true, width: 200, height: 30)
        #expect(lines.first == ScanTableModel.header)
        #expect(lines.count == 5)
        #expect(lines[1].hasPrefix("C0:B1:00:00:00:02  random  -40   no   1 s ago  near"), "\(lines)")
        #expect(lines[2].hasPrefix("C0:B1:00:00:00:01  random  -70   yes  1 s ago  far"), "\(lines)")
        #expect(lines[3].hasPrefix("C0:B1:00:00:00:03  random  -70   yes  now      also-far"), "\(lines)")
        #expect(lines.last == "3 devices · scanning 2 s · Ctrl-C stops")
        // A new report of the far one: stronger now, seen now.
        model.update(Self.device(1, rssi: -30, name: "far"), at: 5)
        lines = model.lines(now: 5.1, scanning: false, width: 200, height: 30)
        #expect(lines[1].hasPrefix("C0:B1:00:00:00:01  random  -30   yes  now      far"), "\(lines)")
        #expect(lines[2].contains("4 s ago"), "\(lines)")
        #expect(lines.last == "3 devices in 5 s")
    }

    @Test("nothing heard: \"no devices found\"; one device: \"1 device\"")
    func counts() {
        var model = ScanTableModel()
        #expect(model.lines(now: 3, scanning: true, width: 80, height: 24).last == "no devices found · scanning 3 s · Ctrl-C stops")
        #expect(model.lines(now: 10, scanning: false, width: 80, height: 24) == [String(ScanTableModel.header.prefix(78)) + "…", "no devices found in 10 s"])
        model.update(Self.device(1, rssi: nil), at: 1)
        #expect(model.lines(now: 2, scanning: false, width: 200, height: 24).last == "1 device in 2 s")
        #expect(model.lines(now: 2, scanning: false, width: 200, height: 24)[1].contains("  ?     yes"), "no RSSI is ?")
    }

    @Test("never wider than the terminal (a wrapped line would throw the redraw off), wide characters counted as two columns; never taller: the rows left out are counted")
    func fitsTheTerminal() {
        var model = ScanTableModel()
        for index in 0..<30 { model.update(Self.device(UInt8(index), rssi: Int8(-index), name: "心拍計ストラップ-\(index)"), at: 0) }
        let lines = model.lines(now: 1, scanning: true, width: 60, height: 10)
        #expect(lines.count == 10)
        #expect(lines[8] == "… and 23 more", "\(lines)")
        #expect(lines.last == "30 devices · scanning 1 s · Ctrl-C stops")
        for line in lines { #expect(DisplayWidth.of(line) <= 59, "\(line)") }
        #expect(DisplayWidth.of("心拍") == 4 && DisplayWidth.of("e\u{301}") == 1 && DisplayWidth.of("abc") == 3)
    }

    @Test("an advertised name cannot drive the terminal: control characters are shown escaped")
    func hostileName() {
        var model = ScanTableModel()
        model.update(Self.device(1, rssi: -50, name: "x\u{1B}[2Jy\u{07}"), at: 0)
        let row = model.lines(now: 0, scanning: true, width: 200, height: 24)[1]
        #expect(!row.unicodeScalars.contains { $0.value < 0x20 }, "\(row.debugDescription)")
        #expect(row.contains("x\\u{1B}[2Jy\\u{07}"), "\(row)")
    }

    @Test("memory is bounded: past the limit the device heard longest ago makes room")
    func bounded() {
        var model = ScanTableModel(limit: 3)
        for index in 0..<10 { model.update(Self.device(UInt8(index), rssi: -50), at: Double(index)) }
        #expect(model.rows.count == 3)
        #expect(Set(model.rows.keys) == Set((7..<10).map { Self.device(UInt8($0), rssi: nil).address.description }))
    }
}

/// The live table as a person sees it (a pseudo-terminal from util-linux's `script`).
@Suite("The live scan table on a terminal", .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"),
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "util-linux's script is not installed"))
struct LiveScanTableTests {
    static let terminal = CLI.terminalLauncher(setup: "stty cols 150 rows 40")

    @Test("scan on a terminal redraws the table in place; it ends with every device and the count, and --trace lines go above it, never into it")
    func redrawnInPlace() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        let result = try await CLI.run(["scan", "--transport", peer.transport, "--duration", "3", "--trace"], launcher: Self.terminal)
        #expect(result.status == 0, "\(result.stdout.suffix(600))")
        let screen = result.stdout.replacingOccurrences(of: "\r\n", with: "\n")
        // Every redraw starts by going back to the table's first line and clearing below it.
        let redraws = screen.components(separatedBy: "\u{1B}[J")
        #expect(redraws.count > 3, "redrawn while scanning: \(screen.suffix(600).debugDescription)")
        // The last draw: the whole table, the result line, nothing after it.
        let last = try #require(redraws.last).split(separator: "\n").map(String.init)
        #expect(last.first?.hasPrefix("ADDRESS") == true, "\(last)")
        for device in peer.devices {
            #expect(last.contains { $0.hasPrefix(device.address) && $0.contains(device.connectable ? " yes " : " no ") }, "\(device.name): \(last)")
        }
        // The result line ends the table; what the trace prints after it (the scan switched off)
        // comes below it.
        // "in 3 s" for --duration 3; a loaded machine may round up to 4.
        let end = try #require(last.firstIndex { $0 == "\(peer.devices.count) devices in 3 s" || $0 == "\(peer.devices.count) devices in 4 s" },
                               "\(last)")
        #expect(last[(end + 1)...].allSatisfy { $0.contains(" > ") || $0.contains(" < ") }, "\(last)")
        // A trace line is written only right after the table was cleared (or before the first
        // draw, or after the last): never between a table's header and its count line.
        for part in redraws.dropFirst() {
            let lines = part.split(separator: "\n", omittingEmptySubsequences: false)
            guard let header = lines.firstIndex(where: { $0.hasPrefix("ADDRESS") }),
                  let count = lines.firstIndex(where: { $0.contains(" devices") || $0.hasPrefix("no devices") }) else { continue }
            let inside = lines[header...count].filter { $0.contains(" > ") || $0.contains(" < ") }
            #expect(inside.isEmpty, "a trace line inside the table: \(inside)")
        }
        #expect(screen.contains("> command LE Set Scan Enable"), "the trace was printed")
    }
}

/// `~/.rawble_history` stays small however long it is used.
@Suite("The shell's history file")
struct HistoryFileTests {
    static func file(_ lines: [String]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-history-\(UUID().uuidString)").path
        try lines.map { $0 + "\n" }.joined().write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("the last 1000 lines are kept; a file of twice as many is cut back to them; a shorter one is left as it is")
    func cutBack() throws {
        let long = try Self.file((0..<2500).map { "read 2A\($0)" })
        defer { try? FileManager.default.removeItem(atPath: long) }
        let kept = HistoryFile.load(from: long)
        #expect(kept.count == 1000 && kept.first == "read 2A1500" && kept.last == "read 2A2499")
        #expect(try String(contentsOfFile: long, encoding: .utf8).split(separator: "\n").map(String.init) == kept)

        let short = try Self.file((0..<1500).map { "read 2A\($0)" })
        defer { try? FileManager.default.removeItem(atPath: short) }
        #expect(HistoryFile.load(from: short).count == 1000)
        #expect(try String(contentsOfFile: short, encoding: .utf8).split(separator: "\n").count == 1500)
    }

    @Test("a huge file (one 1 MiB line among others) is read only at its end: whole lines, the cut one dropped, the file cut back")
    func hugeFile() throws {
        let path = try Self.file(["first", String(repeating: "x", count: 1 << 20), "services", "read 2A19"])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let kept = HistoryFile.load(from: path)
        #expect(kept == ["services", "read 2A19"])
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "services\nread 2A19\n")
        #expect(HistoryFile.load(from: path + ".missing").isEmpty)
    }

    /// The permission bits of `path`.
    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test("the history is the user's alone: made 0600, an older 0644 one made 0600 when written, cut back 0600; a symbolic link neither read nor written through")
    func privateHistory() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-history-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        HistoryFile.append("pair C0:B1:E0:00:00:01 --passkey 123456", to: path)
        #expect(try Self.mode(path) == 0o600)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        HistoryFile.append("read 2A19", to: path)
        #expect(try Self.mode(path) == 0o600)
        #expect(HistoryFile.load(from: path) == ["pair C0:B1:E0:00:00:01 --passkey 123456", "read 2A19"])

        let long = try Self.file((0..<2000).map { "read 2A\($0)" })
        defer { try? FileManager.default.removeItem(atPath: long) }
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: long)
        #expect(HistoryFile.load(from: long).count == 1000)
        #expect(try Self.mode(long) == 0o600, "the cut-back file is a new private one")

        let target = try Self.file(["scan"])
        defer { try? FileManager.default.removeItem(atPath: target) }
        let link = target + ".link"
        defer { try? FileManager.default.removeItem(atPath: link) }
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(HistoryFile.load(from: link).isEmpty)
        HistoryFile.append("services", to: link)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "scan\n")
    }
}
