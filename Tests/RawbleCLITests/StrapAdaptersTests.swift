import Foundation
import RawbleStack
import RawbleWire
import Testing

@testable import rawble

/// Several adapters in one `rawble hr` run (issue 41): which adapter a strap's link goes
/// through (``AdapterSpread``, plain values), `--transport A,B` as written, and the identities
/// of the adapters (``OwnIdentities``): never one address for two.
@Suite("several adapters in one hr run: spreading, --transport lists, identities")
struct StrapAdaptersTests {
    @Test("straps spread over the adapters, least loaded first, attempts under way counted; ties go to the first given")
    func leastLoadedFirst() {
        var spread = AdapterSpread(count: 2)
        var placed: [Int] = []
        for _ in 0..<5 {
            let best = spread.candidates().first!
            spread.reserve(best)
            placed.append(best)
        }
        #expect(placed == [0, 1, 0, 1, 0])
        for index in placed { spread.connected(index) }
        #expect(spread.adapters.map(\.links) == [3, 2])
        spread.released(0)
        spread.released(0)
        #expect(spread.candidates() == [0, 1], "the one that lost links is the least loaded again")
    }

    @Test("an adapter that refused a link is full while it holds as many, tried after those with room, and has room again when one of its links ends")
    func fullAdapterLast() {
        var spread = AdapterSpread(count: 3)
        for index in [0, 0, 1] {
            spread.reserve(index)
            spread.connected(index)
        }
        spread.reserve(2)
        spread.refused(2)  // holding none: another host holds its links
        spread.reserve(1)
        spread.refused(1)  // holding 1
        #expect(!spread.adapters[1].hasRoom && !spread.adapters[2].hasRoom && spread.adapters[0].hasRoom)
        #expect(spread.candidates() == [0, 2, 1], "room first; the full ones after, least loaded first")
        #expect(spread.candidates(excluding: [0]) == [2, 1])
        spread.released(1)
        #expect(spread.adapters[1].hasRoom)
        #expect(spread.candidates() == [1, 0, 2])
        // A link made beyond what it held when it refused: that limit was not the adapter's.
        for _ in 0..<2 {
            spread.reserve(1)
            spread.connected(1)
        }
        #expect(spread.adapters[1].fullAt == nil)
    }

    @Test("an adapter whose controller went is never a candidate again; the last one going says none is left")
    func failedAdapters() {
        var spread = AdapterSpread(count: 2)
        let othersAfterFirst = spread.failed(1)
        #expect(othersAfterFirst)
        #expect(spread.candidates() == [0])
        spread.reserve(0)
        spread.abandoned(0)
        #expect(spread.adapters[0].load == 0)
        let othersAfterLast = spread.failed(0)
        #expect(!othersAfterLast)
        #expect(spread.candidates().isEmpty)
    }

    @Test("--transport: one transport, or a comma-separated list of adapters; a unix path with a comma stays one; an adapter given twice is refused")
    func transportLists() throws {
        #expect(try TransportList("hci0").adapters == [.kernel(adapter: 0)])
        #expect(try TransportList("hci0,hci1").adapters == [.kernel(adapter: 0), .kernel(adapter: 1)])
        #expect(try TransportList("tcp:127.0.0.1:9001,tcp:127.0.0.1:9002").description == "tcp:127.0.0.1:9001,tcp:127.0.0.1:9002")
        #expect(try TransportList("unix:/tmp/a,b").adapters == [.unix(path: "/tmp/a,b")])
        #expect(throws: (any Error).self) { try TransportList("hci0,hci0") }
        #expect(throws: (any Error).self) { try TransportList("hci0,nonsense") }
    }

    @Test("a list given to a command that takes one adapter: one line naming the commands that take several, status 64")
    func listToOneAdapterCommand() async throws {
        for arguments in [["scan", "--duration", "1"], ["hr", "C0:B1:E0:00:00:01"]] {
            let result = try await CLI.run(arguments + ["--transport", "unix:/nonexistent/a,unix:/nonexistent/b"])
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("hr A B") && result.stderr.contains("--all"), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        }
    }

    @Test("two adapters whose controllers report one public address (clones of one dongle) present two addresses: the second takes its transport's identity")
    func clonesGetTwoIdentities() throws {
        let state = try TemporaryState()
        defer { state.remove() }
        let clone = IdentityOwner.controller(BluetoothAddress(0x00_1B_DC_00_00_01))
        let identities = OwnIdentities()
        let first = try identities.claim(for: clone, transport: try TransportAddress("user:hci0"), environment: state.environment)
        let second = try identities.claim(for: clone, transport: try TransportAddress("user:hci1"), environment: state.environment)
        #expect(first.identity.address != second.identity.address)
        #expect(first.notKept == nil)
        #expect(second.notKept?.contains("user:hci1") == true, "\(second.notKept ?? "")")
        // The same on the next run: each keeps its own.
        let again = OwnIdentities()
        #expect(try again.claim(for: clone, transport: try TransportAddress("user:hci0"), environment: state.environment).identity == first.identity)
        #expect(try again.claim(for: clone, transport: try TransportAddress("user:hci1"), environment: state.environment).identity == second.identity)
    }
}
