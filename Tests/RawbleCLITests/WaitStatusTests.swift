import Foundation
@testable import rawble
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

/// When a wait goes on the status line and is told (``WaitReports``): plain values, no clock.
@Suite("What a command waits for: when it is shown and told")
struct WaitReportsTests {
    static let absent = BluetoothAddress("C0:00:00:00:00:99")!
    static let strap = BluetoothAddress("C0:B1:E0:00:00:01")!
    static let lab = BluetoothAddress("C0:B1:E0:00:00:02")!

    @Test("a wait is shown after half a second and told once at 2 s, with the devices seen; nothing repeats without a change")
    func toldOnce() throws {
        var reports = WaitReports()
        let atOnce = reports.begin(.advertising("\(Self.absent)"), at: .seconds(10))
        #expect(!atOnce, "no wait was shown before it")
        #expect(reports.nextDue() == .seconds(10) + WaitReports.showDelay)
        let early = reports.show(at: .milliseconds(10_400))
        #expect(early == nil)
        let shown = reports.show(at: .milliseconds(10_500))
        #expect(shown?.wait.kind == .advertising && shown?.elapsed == WaitReports.showDelay)
        let again = reports.show(at: .seconds(11))
        #expect(again == nil, "shown once")
        reports.saw(Self.strap, name: nil)
        reports.saw(Self.strap, name: "rawble-strap")
        let tooSoon = reports.report(at: .milliseconds(11_900))
        #expect(tooSoon == nil)
        #expect(reports.nextDue() == .seconds(12))
        let reportMade = reports.report(at: .seconds(12))
        let report = try #require(reportMade)
        #expect(report.elapsed == .seconds(2))
        #expect(report.seen.description == "rawble-strap (\(Self.strap))", "the name learned later is kept")
        let repeated = reports.report(at: .seconds(60))
        #expect(repeated == nil, "told once")
        #expect(reports.nextDue() == nil, "nothing more to tell until something changes")
    }

    @Test("more devices seen are told again, at most every 5 s; a device seen again is no news")
    func newDevicesToldAgain() throws {
        var reports = WaitReports()
        _ = reports.begin(.advertising("\(Self.absent)"), at: .zero)
        _ = reports.show(at: .seconds(1))
        reports.saw(Self.strap, name: "rawble-strap")
        let firstMade = reports.report(at: .seconds(2))
        let first = try #require(firstMade)
        #expect(first.seen.count == 1)
        let seenAgain = reports.saw(Self.strap, name: "rawble-strap")
        #expect(!seenAgain && reports.nextDue() == nil)
        reports.saw(Self.lab, name: "rawble-lab")
        let tooSoon = reports.report(at: .seconds(3))
        #expect(tooSoon == nil, "too soon after the last")
        #expect(reports.nextDue() == .seconds(7))
        let againMade = reports.report(at: .seconds(7))
        let again = try #require(againMade)
        #expect(again.seen.description == "rawble-strap (\(Self.strap)), rawble-lab (\(Self.lab))")
    }

    @Test("a new wait is told afresh; it takes a shown wait's place at once; waits that do not scan name no devices")
    func nextWait() throws {
        var reports = WaitReports()
        _ = reports.begin(.advertising("\(Self.absent)"), at: .zero)
        reports.saw(Self.strap, name: "rawble-strap")
        _ = reports.show(at: .seconds(1))
        _ = reports.report(at: .seconds(2))
        let replaces = reports.begin(.connection(to: Self.absent, heard: false), at: .seconds(5))
        #expect(replaces, "shown at once in the place of the one before")
        let same = reports.begin(.connection(to: Self.absent, heard: false), at: .seconds(6))
        #expect(!same, "the same wait again changes nothing")
        let connectingMade = reports.report(at: .seconds(7))
        let connecting = try #require(connectingMade)
        #expect(connecting.wait.text == "connecting to \(Self.absent) (not heard advertising)")
        #expect(connecting.seen.count == 1, "what the scan before it heard")
        _ = reports.begin(.response(Self.strap, "Exchange MTU"), at: .seconds(8))
        let answerMade = reports.report(at: .seconds(10))
        let answer = try #require(answerMade)
        #expect(answer.seen.isEmpty)
        let wasShown = reports.end()
        #expect(wasShown, "it was on the status line")
        let afterEnd = reports.report(at: .seconds(99))
        #expect(reports.nextDue() == nil && afterEnd == nil)
        _ = reports.begin(.firstValue("measurement", from: "rawble-strap"), at: .seconds(20))
        let endedUnshown = reports.end()
        #expect(!endedUnshown, "ended before it was shown")
    }

    @Test("the line and the JSON event of a report")
    func shapes() throws {
        var seen = SeenDevices()
        seen.add(Self.strap, name: "rawble-strap")
        seen.add(Self.lab, name: nil)
        let report = WaitReports.Report(wait: .advertising("\(Self.absent)"), elapsed: .milliseconds(2_300), seen: seen)
        #expect(WaitStatus.line(report) == "waiting for \(Self.absent) to advertise (2 s); devices seen: rawble-strap (\(Self.strap)), \(Self.lab)")
        let none = WaitReports.Report(wait: .advertising("a heart-rate strap"), elapsed: .seconds(2), seen: SeenDevices())
        #expect(WaitStatus.line(none) == "waiting for a heart-rate strap to advertise (2 s); no other device heard")
        let straps = WaitReports.Report(wait: .advertising("“rawble-strpa”", seenKind: "strap"), elapsed: .seconds(2), seen: seen)
        #expect(WaitStatus.line(straps).hasSuffix("; straps seen: rawble-strap (\(Self.strap)), \(Self.lab)"))
        let value = WaitReports.Report(wait: .firstValue("notification of 2A37", from: "\(Self.strap)"), elapsed: .seconds(3), seen: SeenDevices())
        #expect(WaitStatus.line(value) == "waiting for the first notification of 2A37 from \(Self.strap) (3 s)")

        let event = try CLI.jsonObject(WaitStatus.event(report, time: "2025-01-01T00:00:00.000000Z").serialized())
        #expect(event["event"] as? String == "status")
        #expect(event["time"] as? String == "2025-01-01T00:00:00.000000Z")
        #expect(event["waitingFor"] as? String == "advertising")
        #expect(event["target"] as? String == "\(Self.absent)")
        #expect(event["elapsedSeconds"] as? Int == 2)
        #expect(event["message"] as? String == "waiting for \(Self.absent) to advertise")
        let devices = try #require(event["seen"] as? [[String: Any]])
        #expect(devices.map { $0["address"] as? String } == ["\(Self.strap)", "\(Self.lab)"])
        #expect(devices.first?["name"] as? String == "rawble-strap" && devices.last?["name"] is NSNull)
    }

    @Test("at most 8 devices are named")
    func bounded() {
        var seen = SeenDevices()
        for index in 0..<20 { seen.add(BluetoothAddress("C0:00:00:00:00:\(String(format: "%02X", index))")!, name: nil) }
        #expect(seen.count == SeenDevices.limit)
    }
}

/// ``WaitStatus`` on a virtual clock: what it shows and tells, and where, with no real wait.
@Suite("What a command waits for, on each output")
struct WaitStatusTests {
    /// Everything shown, in order: `show TEXT`, `hide`, `stderr LINE`, `stdout LINE`; and each
    /// report made (told or not), as it comes.
    final class Recording: WaitDisplay {
        let showsStatus: Bool
        private let entries = Mutex<[String]>([])
        let reports: AsyncStream<WaitReports.Report>
        private let continuation: AsyncStream<WaitReports.Report>.Continuation

        init(showsStatus: Bool) {
            self.showsStatus = showsStatus
            (reports, continuation) = AsyncStream.makeStream()
        }

        var log: [String] { entries.withLock { $0 } }
        func showWait(_ text: String, elapsed: Duration) { entries.withLock { $0.append("show \(text)") } }
        func hideWait() { entries.withLock { $0.append("hide") } }
        func printError(_ line: String) { entries.withLock { $0.append("stderr \(line)") } }
        func printLine(_ line: String) { entries.withLock { $0.append("stdout \(line)") } }

        /// A WaitStatus drawing here, on `clock`.
        func waits(json: Bool, quiet: Bool = false, clock: ManualClock) -> WaitStatus {
            WaitStatus(display: self, json: json, quiet: quiet, clock: clock, onReport: { [continuation] in continuation.yield($0) })
        }

        /// The next report made (bounded: a report that never comes fails the test).
        func nextReport() async throws -> WaitReports.Report {
            let reports = self.reports
            return try await within {
                for await report in reports { return report }
                throw CancellationError()
            }
        }
    }

    static let absent = WaitReportsTests.absent
    static let strap = WaitReportsTests.strap

    /// Begins waiting for the absent address to advertise with the strap heard, moves the clock
    /// to the status line (0.5 s), then to the report (2 s), and returns it once made.
    static func waitTwoSeconds(_ waits: WaitStatus, _ clock: ManualClock, _ display: Recording) async throws -> WaitReports.Report {
        waits.begin(.advertising("\(absent)"))
        waits.saw(strap, name: "rawble-strap")
        try await clock.advanceOnceArmed(by: WaitReports.showDelay)
        try await clock.advanceOnceArmed(by: WaitReports.threshold - WaitReports.showDelay)
        return try await display.nextReport()
    }

    @Test("--json: a status event at 2 s naming the wait and the devices seen; nothing on stderr")
    func json() async throws {
        let clock = ManualClock()
        let display = Recording(showsStatus: false)
        let waits = display.waits(json: true, clock: clock)
        let report = try await Self.waitTwoSeconds(waits, clock, display)
        #expect(report.elapsed == WaitReports.threshold)
        let log = display.log
        #expect(log.count == 2 && log.first == "show waiting for \(Self.absent) to advertise", "\(log)")
        let line = try #require(log.last?.split(separator: " ", maxSplits: 1).last.map(String.init), "\(log)")
        #expect(log.last?.hasPrefix("stdout ") == true, "\(log)")
        let event = try CLI.jsonObject(line)
        #expect(event["event"] as? String == "status" && event["waitingFor"] as? String == "advertising")
        #expect(event["elapsedSeconds"] as? Int == 2)
        #expect((event["seen"] as? [[String: Any]])?.first?["name"] as? String == "rawble-strap")
        waits.end()
        #expect(display.log.last == "hide")
    }

    @Test("not a terminal, no --json: one line on stderr at 2 s; --quiet: none")
    func plain() async throws {
        let clock = ManualClock()
        let display = Recording(showsStatus: false)
        _ = try await Self.waitTwoSeconds(display.waits(json: false, clock: clock), clock, display)
        #expect(display.log.last == "stderr waiting for \(Self.absent) to advertise (2 s); devices seen: rawble-strap (\(Self.strap))")

        let quietClock = ManualClock()
        let quietDisplay = Recording(showsStatus: false)
        _ = try await Self.waitTwoSeconds(quietDisplay.waits(json: false, quiet: true, clock: quietClock), quietClock, quietDisplay)
        #expect(!quietDisplay.log.contains { $0.hasPrefix("stderr") }, "the report came due and said nothing: \(quietDisplay.log)")
    }

    @Test("on a terminal: the status line says the wait; a line only for what it cannot show, the devices seen")
    func terminal() async throws {
        let clock = ManualClock()
        let display = Recording(showsStatus: true)
        let waits = display.waits(json: false, clock: clock)
        _ = try await Self.waitTwoSeconds(waits, clock, display)
        #expect(display.log == ["show waiting for \(Self.absent) to advertise",
                                "stderr waiting for \(Self.absent) to advertise (2 s); devices seen: rawble-strap (\(Self.strap))"])
        // A wait that names no devices: the status line only.
        waits.begin(.response(Self.strap, "Exchange MTU"))
        #expect(display.log.last == "show waiting for \(Self.strap) to answer (Exchange MTU)", "in the place of the one before")
        try await clock.advanceOnceArmed(by: WaitReports.threshold)
        #expect(try await display.nextReport().wait.kind == .response)
        #expect(display.log.count == 3, "its report came due and added no line: \(display.log)")
        waits.stop()
        waits.begin(.advertising("\(Self.absent)"))
        #expect(display.log.last == "hide" && clock.sleeperCount == 0, "stopped: nothing more")
    }
}
