import RawbleHost
import RawbleHostCore
import RawbleWire
import Synchronization

/// Which adapter a strap's next link goes through when a run has several
/// (`rawble hr --all --transport hci0,hci1`): the bookkeeping alone, with no I/O, so the policy
/// is tested with plain values. An adapter's load is the links it holds and the attempts under
/// way on it; one that refused a link (the controller out of room) is full while it holds as
/// many as it held then; one whose controller went is out for the rest of the run.
struct AdapterSpread: Sendable, Equatable {
    struct Adapter: Sendable, Equatable {
        var links = 0
        /// Attempts under way (counted as links, so straps starting together spread).
        var pending = 0
        /// How many links it held when it refused one more.
        var fullAt: Int?
        var failed = false

        var load: Int { links + pending }
        var hasRoom: Bool { !failed && fullAt.map { load < $0 } ?? true }
    }

    private(set) var adapters: [Adapter]

    init(count: Int) {
        adapters = Array(repeating: Adapter(), count: count)
    }

    /// The adapters to try for a strap, best first: those still working and not in `tried`;
    /// those with room before the full ones (which are still tried: another host may have let
    /// links go), then the least loaded, then in the order given.
    func candidates(excluding tried: Set<Int> = []) -> [Int] {
        adapters.indices
            .filter { !adapters[$0].failed && !tried.contains($0) }
            .sorted { a, b in
                let (x, y) = (adapters[a], adapters[b])
                if x.hasRoom != y.hasRoom { return x.hasRoom }
                if x.load != y.load { return x.load < y.load }
                return a < b
            }
    }

    /// An attempt on `index` begins.
    mutating func reserve(_ index: Int) { adapters[index].pending += 1 }

    /// The attempt on `index` made a link.
    mutating func connected(_ index: Int) {
        adapters[index].pending -= 1
        adapters[index].links += 1
        // More than it held when it refused: the room was taken by someone else then.
        if let full = adapters[index].fullAt, adapters[index].links > full { adapters[index].fullAt = nil }
    }

    /// The attempt on `index` ended without a link, for a reason that is not the adapter's.
    mutating func abandoned(_ index: Int) { adapters[index].pending -= 1 }

    /// The controller of `index` refused one more link: full while it holds as many as now.
    mutating func refused(_ index: Int) {
        adapters[index].pending -= 1
        adapters[index].fullAt = adapters[index].links
    }

    /// A link on `index` ended.
    mutating func released(_ index: Int) { adapters[index].links = max(0, adapters[index].links - 1) }

    /// The controller of `index` went (removed, not answering): no more links through it.
    /// Whether another adapter still works.
    mutating func failed(_ index: Int) -> Bool {
        adapters[index].failed = true
        return adapters.contains { !$0.failed }
    }
}

/// The adapters of a group run (`hr A B C`, `hr --all`): one ``HostSession`` and one
/// ``StrapScanHub`` each. A strap is looked for on all of them and connects through one that
/// heard it, the least loaded with room (``AdapterSpread``); when that one's controller refuses
/// the link (out of room), through the next. With one adapter it is the single adapter's hub
/// and host, as before several were possible.
final class StrapAdapters: Sendable {
    struct Member: Sendable {
        /// The adapter as rows, events and lines name it (its transport, as given).
        let name: String
        let host: HostSession
        let hub: StrapScanHub
    }

    /// A link made through one adapter.
    struct Placement: Sendable {
        let index: Int
        let link: any CentralLink
        /// The adapters that refused it first, with the links each held.
        let refusedBy: [(name: String, links: Int, reason: String)]
    }

    let members: [Member]
    /// Every heart-rate strap heard advertising on any adapter, once each (`--all` follows them).
    let newStraps: AsyncStream<DiscoveredDevice>
    private let spread: Mutex<AdapterSpread>
    /// Says a failed adapter's line (its straps move to the others).
    private let report: @Sendable (String) -> Void

    init(_ members: [Member], report: @escaping @Sendable (String) -> Void = { _ in }) {
        self.members = members
        self.report = report
        spread = Mutex(AdapterSpread(count: members.count))
        newStraps = members.count == 1 ? members[0].hub.newStraps : Self.merged(members.map(\.hub.newStraps))
    }

    /// `streams` as one, each device once (every adapter hears the same straps); it ends when
    /// they all have.
    private static func merged(_ streams: [AsyncStream<DiscoveredDevice>]) -> AsyncStream<DiscoveredDevice> {
        let (all, heard) = AsyncStream.makeStream(of: DiscoveredDevice.self, bufferingPolicy: .bufferingNewest(64))
        let (merged, continuation) = AsyncStream.makeStream(of: DiscoveredDevice.self, bufferingPolicy: .bufferingNewest(64))
        let forwarding = Task {
            await withTaskGroup(of: Void.self) { group in
                for stream in streams {
                    group.addTask {
                        for await device in stream { heard.yield(device) }
                    }
                }
            }
            heard.finish()
        }
        let once = Task {
            var seen: Set<BluetoothAddress> = []
            for await device in all where seen.insert(device.address.address).inserted {
                continuation.yield(device)
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in
            forwarding.cancel()
            once.cancel()
        }
        return merged
    }

    /// Whether the run has several adapters (rows and events then name each strap's).
    var several: Bool { members.count > 1 }

    /// How long an adapter that has room but has not heard a strap yet gets to hear it before
    /// the strap goes through one that did.
    static let hearingGrace = Duration.seconds(2)

    /// The strap `target` names, heard on any adapter still working (``StrapScanHub/next(_:heardAfter:owner:)``).
    /// An adapter whose scan fails leaves the others looking; when every one has failed, the
    /// last failure.
    func next(_ target: StrapTarget, heardAfter: ContinuousClock.Instant?, owner: ObjectIdentifier) async throws -> DiscoveredDevice {
        if members.count == 1 { return try await members[0].hub.next(target, heardAfter: heardAfter, owner: owner) }
        let working = spread.withLock { spread in members.indices.filter { !spread.adapters[$0].failed } }
        return try await withThrowingTaskGroup(of: DiscoveredDevice.self) { group in
            for index in working {
                let hub = members[index].hub
                group.addTask { try await hub.next(target, heardAfter: heardAfter, owner: owner) }
            }
            var failure: (any Error)?
            while let result = await group.nextResult() {
                switch result {
                case .success(let device):
                    group.cancelAll()
                    return device
                case .failure(let error):
                    // A hub closed under its waiter (its adapter failed over) is not the end
                    // of this wait: the others go on looking.
                    try Task.checkCancellation()
                    failure = error
                }
            }
            throw failure ?? CancellationError()
        }
    }

    /// Connects to `device` (found after `heardAfter`, for `owner`) through the best adapter
    /// that hears it, with that adapter's scan paused; through the next when one refuses the
    /// link. A timed-out attempt is `lost`'s error (the strap is looked for again), a refusal
    /// by every adapter one line naming each as full, any other failure the CLI's error for it.
    func connect(_ device: DiscoveredDevice, heardAfter: ContinuousClock.Instant?, owner: ObjectIdentifier,
                 timeout: Duration, lost: @escaping @Sendable (String) -> any Error) async throws -> Placement {
        if members.count == 1 {
            let (host, hub) = (members[0].host, members[0].hub)
            let link = try await hub.whileConnecting { try await host.connectStrap(device, timeout: timeout, lost: lost) }
            spread.withLock { $0.reserve(0); $0.connected(0) }
            return Placement(index: 0, link: link, refusedBy: [])
        }
        let address = device.address.address
        var tried: Set<Int> = []
        var refusals: [(name: String, links: Int, reason: String)] = []
        while let index = spread.withLock({ spread -> Int? in
            guard let best = spread.candidates(excluding: tried).first else { return nil }
            spread.reserve(best)
            return best
        }) {
            tried.insert(index)
            let member = members[index]
            guard await hears(address, on: member.hub, after: heardAfter, for: owner) else {
                spread.withLock { $0.abandoned(index) }
                continue
            }
            do {
                let link = try await member.hub.whileConnecting {
                    try await member.host.connectStrap(device, timeout: timeout, lost: lost, refused: { AdapterRefusal(reason: $0) })
                }
                spread.withLock { $0.connected(index) }
                return Placement(index: index, link: link, refusedBy: refusals)
            } catch let refusal as AdapterRefusal {
                let held = spread.withLock { spread in
                    spread.refused(index)
                    return spread.adapters[index].links
                }
                // The cause alone: its fix ("use another adapter") is what happens next.
                let cause = refusal.reason.firstRange(of: ": ").map { String(refusal.reason[..<$0.lowerBound]) } ?? refusal.reason
                refusals.append((member.name, held, cause))
            } catch let error as CLIError where error.status == .transport && failOver(index, error) {
                // Its controller went while connecting: the others are tried.
                spread.withLock { $0.abandoned(index) }
            } catch {
                spread.withLock { $0.abandoned(index) }
                throw error
            }
        }
        guard !refusals.isEmpty else {
            throw CLIError(.peerError, "\(address): no adapter of this run hears it any more", fix: "bring the strap nearer to one")
        }
        let full = refusals.map { "\($0.name) is full (holds \($0.links) link\($0.links == 1 ? "" : "s"))" }
        throw CLIError(.peerError, "no adapter has room for one more link: " + full.joined(separator: ", "),
                       fix: "add an adapter to --transport, or follow fewer straps")
    }

    /// A link through adapter `index` ended.
    func release(_ placement: Placement) {
        spread.withLock { $0.released(placement.index) }
    }

    /// The controller of adapter `index` went (`error`): with another adapter still working,
    /// a line says so, this one is closed (its links end, and their straps reconnect through
    /// the others) and `true`; `false` when it was the last (the run ends as with one adapter).
    func failOver(_ index: Int, _ error: any Error) -> Bool {
        guard several else { return false }
        let (first, others) = spread.withLock { spread in
            (!spread.adapters[index].failed, spread.failed(index))
        }
        guard others else { return false }
        if first {
            let member = members[index]
            report("rawble: \(member.name): \(error): its straps move to the other adapters")
            Task {
                await member.hub.close()
                await member.host.central.close()
            }
        }
        return true
    }

    /// Whether `hub` heard `address` after `instant` (held for `owner` from then on); an
    /// adapter that has not yet gets ``hearingGrace`` to.
    private func hears(_ address: BluetoothAddress, on hub: StrapScanHub, after instant: ContinuousClock.Instant?,
                       for owner: ObjectIdentifier) async -> Bool {
        if await hub.claimIfHeard(address, after: instant, for: owner) { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { (try? await hub.next(.address(address), heardAfter: instant, owner: owner)) != nil }
            group.addTask {
                try? await Task.sleep(for: Self.hearingGrace)
                return false
            }
            let heard = await group.next() ?? false
            group.cancelAll()
            return heard
        }
    }
}

/// A controller that refused one more link (``HostError/connectionRefused(_:reason:)``): with
/// several adapters the strap goes through another.
private struct AdapterRefusal: Error {
    var reason: String
}
