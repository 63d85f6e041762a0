import RawbleHost
import RawbleHostCore
import RawbleReport

/// The followers of a group run (`hr`, `ecg`), one task each: the straps named, and with
/// `--all` (`limit` > 0) each new one the shared scan announces (`newStraps`), up to `limit`.
/// Ends when every follower ended (or the first that throws what ends the run). The caller
/// starts the scan(s) first.
struct StrapGroupRun {
    let named: [StrapTarget]
    let limit: Int
    /// What the scan announces, each new strap once (``StrapScanHub/newStraps``).
    let newStraps: AsyncStream<DiscoveredDevice>
    /// With `--all`: says what the run waits for until the first strap is found.
    let lookingForAny: WaitStatus?
    /// What `--all` looks for, as the wait says it ("heart-rate straps").
    let kind: String
    /// A follower for a target (and its label, when the scan found it): the work that follows it.
    let follower: @Sendable (StrapTarget, StrapLabel?) -> @Sendable () async throws -> Void

    func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for target in named {
                let work = follower(target, nil)
                group.addTask { try await work() }
            }
            if limit > 0 {
                var followed = 0
                lookingForAny?.begin(.advertising(kind))
                for await strap in newStraps {
                    lookingForAny?.stop()
                    let work = follower(.address(strap.address.address), StrapLabel(address: "\(strap.address.address)", name: strap.name))
                    group.addTask { try await work() }
                    followed += 1
                    if followed >= limit { break }
                }
                try Task.checkCancellation()
            }
            try await group.waitForAll()
        }
    }
}

extension StrapScanHub {
    /// Starts the shared scan; the host's failure as its one line.
    func start(on host: HostSession) async throws {
        do {
            try await start()
        } catch let error as HostError {
            throw host.cliError(error)
        }
    }
}
