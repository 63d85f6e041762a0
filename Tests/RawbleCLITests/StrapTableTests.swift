@testable import rawble
import RawbleReport
import Testing

/// The table `rawble hr` draws with several straps, and the file names a group run makes.
@Suite("hr with several straps: the table and the file names")
struct StrapTableTests {
    @Test("a row per strap: name, address, bpm, zone, RMSSD, battery, link, the last value's age; a count line; rows cut to the terminal's height")
    func rows() {
        var model = StrapTableModel()
        let a = model.add(name: "“Polar H10 A”")
        _ = model.add(name: "C0:B1:E0:00:01:02")
        model.update(a) { row in
            row.name = "Polar H10 A"
            row.address = "C0:B1:E0:00:01:01"
            row.bpm = 72
            row.zone = 2
            row.rmssd = 41.6
            row.battery = 80
            row.state = .streaming
            row.lastValue = 10.2
        }
        let lines = model.lines(now: 12.9, width: 200, height: 24)
        #expect(lines.count == 4)
        #expect(lines[0] == "strap            address           bpm zone RMSSD  batt link           last")
        #expect(lines[1] == "Polar H10 A      C0:B1:E0:00:01:01 72  Z2   42 ms  80 % streaming      2 s ago")
        #expect(lines.allSatisfy { $0.count <= 80 }, "a row fits 80 columns")
        #expect(lines[2].hasPrefix("C0:B1:E0:00:01:0                   –   –    –      –    scanning"))
        #expect(lines[3] == "2 straps, 1 streaming (Ctrl-C ends)")
        #expect(model.lines(now: 12.9, width: 200, height: 24, ended: true).last == "2 straps: ended")
        // Three rows on a terminal with room for two: one row, then how many more.
        _ = model.add(name: "third")
        let short = model.lines(now: 12.9, width: 40, height: 4)
        #expect(short.count == 4 && short[2] == "… and 2 more (a taller terminal shows th")
        #expect(short.allSatisfy { $0.count <= 40 })
    }

    @Test("several adapters (--transport A,B): an adapter column (via) after the address, a long transport shown by its end, rows still within 80 columns")
    func adapterColumn() {
        var model = StrapTableModel()
        let a = model.add(name: "Polar H10 A")
        let b = model.add(name: "Polar H10 B")
        model.update(a) { $0.address = "C0:B1:E0:00:01:01"; $0.adapter = "hci1"; $0.state = .streaming; $0.bpm = 72 }
        model.update(b) { $0.address = "C0:B1:E0:00:01:02"; $0.adapter = "tcp:127.0.0.1:9002"; $0.state = .connecting }
        let lines = model.lines(now: 1, width: 200, height: 24)
        #expect(lines[0] == "strap           address           via   bpm zone RMSSD  batt link       last")
        #expect(lines[1].hasPrefix("Polar H10 A     C0:B1:E0:00:01:01 hci1  72  –"), "\(lines[1])")
        #expect(lines[2].hasPrefix("Polar H10 B     C0:B1:E0:00:01:02 …9002 –"), "\(lines[2])")
        #expect(lines.allSatisfy { $0.count <= 80 }, "a row still fits 80 columns")
    }

    @Test("ecg's rows: name, address, the ECG's bpm, the strap's own bpm, samples received, link, the last value's age")
    func ecgRows() {
        var model = StrapTableModel(columns: .ecg)
        let a = model.add(name: "Polar H10 5EED0001")
        model.update(a) { row in
            row.address = "C0:B1:E0:00:02:01"
            row.bpm = 61
            row.strapBPM = 60
            row.samples = 1300
            row.state = .streaming
            row.lastValue = 10.2
        }
        let lines = model.lines(now: 12.9, width: 200, height: 24)
        #expect(lines[0] == "H10                address           bpm strap samples link           last")
        #expect(lines[1] == "Polar H10 5EED0001 C0:B1:E0:00:02:01 61  60    1300    streaming      2 s ago")
        #expect(lines.allSatisfy { $0.count <= 80 }, "a row fits 80 columns")
        #expect(lines.last == "1 strap, 1 streaming (Ctrl-C ends)")
    }

    @Test("per-strap file names: {name} (else the address, dashed) and {address}, with no path separators, leading dots or control characters from a strap's name")
    func fileNames() {
        #expect(GroupFiles.path("s-{name}.csv", for: StrapLabel(address: "C0:B1:E0:00:01:01", name: "Polar H10 A")) == "s-Polar-H10-A.csv")
        #expect(GroupFiles.path("s-{name}.csv", for: StrapLabel(address: "C0:B1:E0:00:01:01", name: nil)) == "s-C0-B1-E0-00-01-01.csv")
        #expect(GroupFiles.path("out/{address}.jsonl", for: StrapLabel(address: "C0:B1:E0:00:01:01", name: "x")) == "out/C0-B1-E0-00-01-01.jsonl")
        #expect(GroupFiles.path("{name}.csv", for: StrapLabel(address: "A", name: "../../etc/passwd")) == "_.._etc_passwd.csv")
        #expect(GroupFiles.isTemplate("a-{address}.csv") && !GroupFiles.isTemplate("a.csv"))
    }
}
