import RawbleGATT
import RawbleHeartRate
import RawbleHost
import RawbleTestPeers
import RawbleTestSupport
import RawbleTransport
import RawbleWire
import Synchronization
import Testing

/// Several straps at once on rawble's own host (issue 41): Bumble's virtual controller with
/// `--straps N` Heart Rate straps (rawble-strap-NN), each followed as a heart-rate app follows
/// it: connect (the adapter queues the attempts, one at a time), subscribe with
/// `HeartRateMonitor`, and connect again when the strap drops the link. What each link
/// delivered is checked per strap against the strap's log (every line names its strap).
///
/// Every strap streams without end (the realistic script, `--hr-count 0`), so what was received
/// is checked as a prefix of what the strap sent: a value lost, duplicated or out of order
/// anywhere in it fails the comparison.
@Suite("Adapter: many links at once against Bumble's straps", .serialized, .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct AdapterManyLinksBumbleTests {
    /// One strap followed from outside: the values received (over every link to it) and the
    /// links made, each a ``Recording`` a test awaits.
    final class Follower: Sendable {
        let strap: BumblePeer.Device
        let address: DeviceAddress
        let values = Recording<[UInt8]>()
        let links = Recording<Connection>()

        init(_ strap: BumblePeer.Device) throws {
            self.strap = strap
            address = DeviceAddress(try #require(BluetoothAddress(strap.address)), type: .random)
        }

        /// Waits (bounded) until more than `count` values arrived.
        func waitForValues(beyond count: Int) async throws {
            try await values.wait(until: { $0.count > count }, timeout: .seconds(30))
        }
    }

    /// Starts a peer with `--strap-only --straps count`, every strap streaming its realistic
    /// script without end every 0.1 s, plus `arguments`; opens an adapter on it.
    static func start(straps count: Int, _ arguments: [String] = []) async throws -> (BumblePeer, Adapter) {
        let peer = try await BumblePeer.start(arguments: [
            "--strap-only", "--straps", "\(count)", "--hr-script", "realistic", "--hr-count", "0",
            "--hr-interval", "0.1",
        ] + arguments)
        let names = (1...count).map { number in number < 10 ? "rawble-strap-0\(number)" : "rawble-strap-\(number)" }
        #expect(peer.straps.map(\.name) == names)
        return (peer, try await AdapterBumbleTests.openAdapter(peer))
    }

    /// Follows the strap until the task is cancelled: connects, subscribes to Heart Rate
    /// Measurement and records every value (valid or not: the raw bytes); when the strap drops
    /// the link, connects and subscribes again. A failure other than the link ending is
    /// recorded as the test's issue.
    static func follow(_ follower: Follower, on adapter: Adapter) -> Task<Void, Never> {
        Task {
            var attConfiguration = ATTClient.Configuration()
            attConfiguration.transactionTimeout = .seconds(10)
            while !Task.isCancelled {
                do {
                    let connection = try await adapter.connect(to: follower.address, timeout: .seconds(20))
                    follower.links.append(connection)
                    let gatt = GATTClient(att: ATTClient(bearer: connection.att, configuration: attConfiguration))
                    let monitor = try await HeartRateMonitor.attach(to: gatt)
                    do {
                        for try await event in try await monitor.measurements() {
                            switch event {
                            case .measurement(_, let raw), .invalid(let raw, _): follower.values.append(raw)
                            }
                        }
                    } catch where connection.ending != nil {
                        continue  // the strap dropped the link: connect again
                    }
                } catch {
                    if !Task.isCancelled { Issue.record("following \(follower.strap.name): \(error)") }
                    return
                }
            }
        }
    }

    /// What each follower received is, value for value, the start of what its strap sent: none
    /// lost, none duplicated, in order; the strap's log has each position once, in order.
    static func expectReceivedAsSent(_ followers: [Follower], by peer: BumblePeer) throws {
        for follower in followers {
            let sent = try peer.sentHeartRateMeasurements(strap: follower.strap.address)
            let received = follower.values.items
            #expect(sent.map(\.position) == Array(0..<sent.count).map(Optional.some), "\(follower.strap.name)")
            #expect(received.count <= sent.count, "\(follower.strap.name): more received than sent")
            #expect(Array(sent.prefix(received.count).map(\.bytes)) == received,
                    "\(follower.strap.name): \(received.count) values received are not the first \(received.count) sent")
        }
    }

    @Test("10 straps: all connected through the adapter's queue, all streaming; 3 and 7 drop twice and are reconnected while the others keep streaming; per strap none lost, duplicated or out of order")
    func tenStraps() async throws {
        let (peer, adapter) = try await Self.start(straps: 10, [
            "--hr-disconnect-after", "4", "--hr-disconnects", "2", "--strap-drops", "3,7"])
        defer { peer.stop() }
        let followers = try peer.straps.map(Follower.init)
        let tasks = followers.map { Self.follow($0, on: adapter) }
        let dropping = [followers[2], followers[6]]
        let steady = followers.filter { follower in !dropping.contains { $0 === follower } }
        #expect(peer.straps.map(\.heartRate?.disconnectAfter) == [nil, nil, 4, nil, nil, nil, 4, nil, nil, nil])

        // Each dropping strap: two drops, three links, and values on the third.
        for follower in dropping {
            try await follower.links.wait(until: { $0.count == 3 }, timeout: .seconds(30))
            try await follower.waitForValues(beyond: 8)
        }
        // The others kept their one link and go on streaming after the drops.
        let afterDrops = steady.map(\.values.items.count)
        for (follower, count) in zip(steady, afterDrops) {
            try await follower.waitForValues(beyond: count)
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }

        for follower in steady {
            #expect(follower.links.items.count == 1, "\(follower.strap.name) was connected \(follower.links.items.count) times")
            #expect(follower.links.items.first?.ending == nil, "\(follower.strap.name)'s link ended")
            #expect(try peer.strapDisconnects(strap: follower.strap.address).isEmpty)
        }
        for follower in dropping {
            let drops = try peer.strapDisconnects(strap: follower.strap.address)
            #expect(drops.map(\.after) == [4, 8], "\(follower.strap.name)")
            #expect(follower.links.items.prefix(2).map(\.ending) == [.disconnected(.remoteUserTerminatedConnection), .disconnected(.remoteUserTerminatedConnection)])
        }
        try Self.expectReceivedAsSent(followers, by: peer)
        #expect(Set(followers.compactMap { $0.values.items.first }).count == 10, "two straps sent the same first value")
        await adapter.close()
    }

    @Test("a scan started while links stream reports the straps still advertising; one is connected during the scan, which goes on reporting; the links keep streaming")
    func scanWhileConnected() async throws {
        let (peer, adapter) = try await Self.start(straps: 5)
        defer { peer.stop() }
        let followers = try peer.straps.map(Follower.init)
        var tasks = followers.prefix(3).map { Self.follow($0, on: adapter) }
        for follower in followers.prefix(3) { try await follower.waitForValues(beyond: 1) }

        var options = ScanOptions(active: false)
        options.reportsDuplicates = true
        let reports = Recording<BluetoothAddress>()
        let stream = try await adapter.scan(options)
        let scanning = Task {
            for try await device in stream { reports.append(device.address.address) }
        }
        let fourth = followers[3].address.address, fifth = followers[4].address.address
        try await reports.wait(until: { $0.contains(fourth) && $0.contains(fifth) }, timeout: .seconds(30))
        let streaming = followers.prefix(3).map(\.values.items.count)

        // Strap 4 connected while the scan runs; strap 5 is still reported after it.
        tasks.append(Self.follow(followers[3], on: adapter))
        try await followers[3].waitForValues(beyond: 1)
        let connectedAt = reports.items.count
        try await reports.wait(until: { $0.dropFirst(connectedAt).filter { $0 == fifth }.count >= 2 }, timeout: .seconds(30))
        for (follower, count) in zip(followers.prefix(3), streaming) {
            try await follower.waitForValues(beyond: count)
        }
        try await adapter.stopScanning()
        try await within(seconds: 30) { try await scanning.value }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        for follower in followers.prefix(4) {
            #expect(follower.links.items.count == 1, "\(follower.strap.name)")
        }
        try Self.expectReceivedAsSent(Array(followers.prefix(4)), by: peer)
        await adapter.close()
    }

    @Test("a controller that holds 4 links refuses the 5th: one line with its status, the 4 links held and the fix; the 4 keep streaming")
    func controllerLinkLimit() async throws {
        let (peer, adapter) = try await Self.start(straps: 5, ["--max-links", "4"])
        defer { peer.stop() }
        let followers = try peer.straps.map(Follower.init)
        let tasks = followers.prefix(4).map { Self.follow($0, on: adapter) }
        for follower in followers.prefix(4) { try await follower.waitForValues(beyond: 1) }

        let fifth = followers[4].address
        let reason = "the controller refused a 5th link (Connection Rejected due to Limited Resources, 0x0D) while this adapter holds 4: use another adapter for more devices"
        let error = await #expect(throws: HostError.connectionRefused(fifth, reason: reason)) {
            _ = try await adapter.connect(to: fifth, timeout: .seconds(20))
        }
        #expect(error?.description == "connection to \(fifth) failed: \(reason)")
        let counts = followers.prefix(4).map(\.values.items.count)
        for (follower, count) in zip(followers.prefix(4), counts) {
            try await follower.waitForValues(beyond: count)
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        for follower in followers.prefix(4) {
            #expect(follower.links.items.count == 1, "\(follower.strap.name)")
            #expect(follower.links.items.first?.ending == nil, "\(follower.strap.name)")
        }
        #expect(try peer.sentHeartRateMeasurements(strap: followers[4].strap.address).isEmpty)
        try Self.expectReceivedAsSent(Array(followers.prefix(4)), by: peer)
        await adapter.close()
    }
}
