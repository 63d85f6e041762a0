import Foundation
import Synchronization
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

/// `rawble hr --all --transport P1,P2`: two adapters in one process (issue 41), each one of the
/// served controllers of one Bumble process (`--ports 2`) on the link where the straps are.
@Suite("rawble hr with several straps over two adapters")
struct HeartRateAdaptersTests {
    /// The JSON events of `result`.
    private static func events(_ result: CLIResult) -> [[String: Any]] {
        result.stdout.split(separator: "\n").compactMap { try? CLI.jsonObject(String($0)) }
    }

    /// How many measurement events each strap's address has in `stdout` so far.
    private static func measurementsPerStrap(_ stdout: String) -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in stdout.split(separator: "\n") where line.contains("\"event\":\"measurement\"") {
            if let address = (try? CLI.jsonObject(String(line)))?["address"] as? String { counts[address, default: 0] += 1 }
        }
        return counts
    }

    @Test("hr --all --max 6 --count 12 over two adapters: all six followed, each through one of them and both used; per strap every value once, in order, as the strap sent it")
    func sixStrapsOverTwoAdapters() async throws {
        let peer = try await BumblePeer.start(arguments: [
            "--ports", "2", "--strap-only", "--straps", "6", "--hr-interval", "0.05",
        ])
        defer { peer.stop() }
        let adapters = peer.transports
        try #require(adapters.count == 2)
        let result = try await CLI.run(["hr", "--all", "--max", "6", "--count", "12", "--json", "--timeout", "20",
                                        "--transport", adapters.joined(separator: ",")])
        #expect(result.status == 0, "\(result.stderr)")
        let events = Self.events(result)
        let straps = peer.straps
        #expect(straps.count == 6)
        var used: Set<String> = []
        for strap in straps {
            let own = events.filter { $0["address"] as? String == strap.address }
            let raws = own.filter { $0["event"] as? String == "measurement" }.compactMap { $0["raw"] as? String }
            let sent = try peer.sentHeartRateMeasurements(strap: strap.address).map { Hex.encode($0.bytes) }
            #expect(raws.count == 12, "\(strap.name): \(raws.count) measurements")
            #expect(raws == Array(sent.prefix(raws.count)), "\(strap.name): every value once, in order")
            let connected = own.filter { $0["event"] as? String == "connected" }
            #expect(connected.count == 1, "\(strap.name): \(connected)")
            let adapter = try #require(connected.first?["adapter"] as? String, "\(strap.name): the event names its adapter")
            #expect(adapters.contains(adapter))
            used.insert(adapter)
        }
        #expect(used == Set(adapters), "links on both adapters: \(used)")
    }

    // The first adapter, full after one link, is tried again while the second holds at most one
    // (the least loaded first, ties to the first given): the strap it refuses goes through the
    // second, which has room for all the others (four).
    @Test("an adapter that refuses a link (full after one): the strap goes through the other adapter, its event naming the full one; all four straps stream to --count")
    func fullAdapterMovesTheStrap() async throws {
        let peer = try await BumblePeer.start(arguments: [
            "--ports", "2", "--strap-only", "--straps", "4", "--hr-interval", "0.05", "--max-links", "1,4",
        ])
        defer { peer.stop() }
        let adapters = peer.transports
        try #require(adapters.count == 2)
        let result = try await CLI.run(["hr", "--all", "--max", "4", "--count", "8", "--json", "--timeout", "20",
                                        "--transport", adapters.joined(separator: ",")])
        #expect(result.status == 0, "\(result.stderr)")
        let events = Self.events(result)
        #expect(Self.measurementsPerStrap(result.stdout).values.sorted() == [8, 8, 8, 8], "\(result.stdout)")
        var onAdapter: [String: Int] = [:]
        for event in events where event["event"] as? String == "connected" {
            onAdapter[event["adapter"] as? String ?? "none", default: 0] += 1
        }
        #expect(onAdapter == [adapters[0]: 1, adapters[1]: 3], "\(onAdapter)")
        let moved = try #require(events.first { $0["event"] as? String == "adapterFull" }, "\(result.stdout)")
        #expect(moved["full"] as? String == adapters[0])
        #expect(moved["adapter"] as? String == adapters[1])
        #expect(moved["links"] as? Int == 1)
        #expect((moved["message"] as? String)?.contains("0x0D") == true, "\(moved)")
        #expect(!events.contains { $0["event"] as? String == "error" }, "\(result.stdout)")
    }

    @Test("both adapters full (two links each): four straps followed, two on each; the fifth's line says both are full and how many links each holds, and it never streams")
    func bothAdaptersFull() async throws {
        let peer = try await BumblePeer.start(arguments: [
            "--ports", "2", "--strap-only", "--straps", "5", "--hr-interval", "0.05", "--max-links", "2",
        ])
        defer { peer.stop() }
        let adapters = peer.transports
        try #require(adapters.count == 2)
        // No --count: the four keep their links, so the fifth never finds room. Ctrl-C once
        // each of the four sent 8 values and the fifth's line came.
        let result = try await onOwnThread {
            try CLI.runBlocking(["hr", "--all", "--max", "5", "--json", "--timeout", "20",
                                 "--transport", adapters.joined(separator: ",")],
                                trigger: CLI.Trigger(
                                    ready: { stdout, _ in
                                        guard stdout.contains("no adapter has room") else { return false }
                                        return Self.measurementsPerStrap(stdout).values.filter { $0 >= 8 }.count == 4
                                    },
                                    readyLimit: .seconds(60), action: { kill($0, SIGINT) }),
                                limit: .seconds(90))
        }
        #expect(result.reachedReady, "\(result.stdout)\n\(result.stderr)")
        #expect(result.status == 0, "Ctrl-C ends a live view: \(result.stderr)")
        let events = Self.events(result)
        #expect(Self.measurementsPerStrap(result.stdout).count == 4, "the fifth never streamed")
        var onAdapter: [String: Int] = [:]
        for event in events where event["event"] as? String == "connected" {
            onAdapter[event["adapter"] as? String ?? "none", default: 0] += 1
        }
        #expect(onAdapter == [adapters[0]: 2, adapters[1]: 2], "\(onAdapter)")
        let refused = try #require(events.first { ($0["message"] as? String)?.contains("no adapter has room") == true })
        #expect(refused["event"] as? String == "error")
        let message = try #require(refused["message"] as? String)
        #expect(message.contains("\(adapters[0]) is full (holds 2 links)") && message.contains("\(adapters[1]) is full (holds 2 links)"),
                "\(message)")
        #expect(!message.contains("\n"))
    }

    @Test("one adapter's controller goes: its strap reconnects through the other and streams again, a line says so; the strap on the other adapter streams on undisturbed")
    func adapterGoes() async throws {
        let link = try VirtualLinkSockets(count: 4)
        defer { link.stop() }
        let names = ["ci-move-a", "ci-move-b"]
        let adapters = [link.transports[2], link.transports[3]]
        // Each strap ends after as many disconnections as it sees: two for the one whose
        // adapter goes (then the run's end), one for the other (the run's end).
        let expected = Shared([2, 2])
        let straps = names.enumerated().map { index, name in
            Task {
                try await onOwnThread {
                    try CLI.runBlocking(["peripheral", "hr", "--transport", link.transports[index], "--rate", "20", "--name", name, "--json"],
                                        trigger: CLI.Trigger(
                                            ready: { stdout, _ in
                                                stdout.components(separatedBy: "\"event\":\"disconnected\"").count - 1
                                                    >= expected.withLock { $0[index] }
                                            },
                                            readyLimit: .seconds(90), action: { kill($0, SIGINT) }),
                                        limit: .seconds(120))
                }
            }
        }
        // Once both stream, the adapter of the first strap goes; the run ends once that strap
        // has 10 values through the other.
        let dropped = Shared<String?>(nil)
        let central = try await onOwnThread {
            try CLI.runBlocking(["hr"] + names + ["--json", "--timeout", "20", "--transport", adapters.joined(separator: ",")],
                                trigger: CLI.Trigger(
                                    ready: { stdout, _ in
                                        let events = stdout.split(separator: "\n").compactMap { try? CLI.jsonObject(String($0)) }
                                        func values(_ name: String, after connections: Int) -> Int {
                                            var seen = 0, count = 0
                                            for event in events where event["name"] as? String == name {
                                                if event["event"] as? String == "connected" { seen += 1 }
                                                if event["event"] as? String == "measurement", seen > connections { count += 1 }
                                            }
                                            return count
                                        }
                                        guard dropped.withLock({ $0 }) != nil else {
                                            guard names.allSatisfy({ values($0, after: 0) >= 10 }),
                                                  let on = events.first(where: { $0["event"] as? String == "connected" && $0["name"] as? String == names[0] })?["adapter"] as? String,
                                                  let index = adapters.firstIndex(of: on) else { return false }
                                            dropped.withLock { $0 = on }
                                            // The other strap disconnects only at the run's end, unless it shares the adapter.
                                            let shared = events.contains { $0["event"] as? String == "connected" && $0["name"] as? String == names[1] && $0["adapter"] as? String == on }
                                            if !shared { expected.withLock { $0[1] = 1 } }
                                            link.dropHost(of: 2 + index)
                                            return false
                                        }
                                        return values(names[0], after: 1) >= 10
                                    },
                                    readyLimit: .seconds(60), action: { kill($0, SIGINT) }),
                                limit: .seconds(90))
        }
        for strap in straps { _ = try await strap.value }
        #expect(central.reachedReady, "\(central.stdout)\n\(central.stderr)")
        #expect(central.status == 0, "\(central.stderr)")
        let gone = try #require(dropped.withLock { $0 })
        let other = try #require(adapters.first { $0 != gone })
        #expect(central.stderr.contains("\(gone): ") && central.stderr.contains("its straps move to the other adapters"), "\(central.stderr)")
        let events = Self.events(central)
        let moved = events.filter { $0["event"] as? String == "connected" && $0["name"] as? String == names[0] }.compactMap { $0["adapter"] as? String }
        #expect(moved == [gone, other], "the first strap's links: \(moved)")
        let stayed = events.filter { $0["name"] as? String == names[1] }
        #expect(stayed.filter { $0["event"] as? String == "connected" }.map { $0["adapter"] as? String } == [other],
                "the second strap was on the adapter that stayed (the straps spread over both)")
        #expect(!stayed.contains { $0["event"] as? String == "disconnected" }, "undisturbed")
    }
}

/// A value the test and its runs' triggers share.
private final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    init(_ value: Value) { self.value = Mutex(value) }

    func withLock<R>(_ body: (inout Value) -> R) -> R { value.withLock { body(&$0) } }
}
