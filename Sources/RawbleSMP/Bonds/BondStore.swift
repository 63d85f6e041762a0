import RawbleWire

/// Where a host keeps its bonds: one set per local identity (the adapter's address). rawble's
/// host uses ``InMemoryBondStore`` unless given another; the CLI keeps them in files.
///
/// Implementations are untrusted storage to the host: a store that throws makes the host
/// log one line and go on without the bond (pairing again, or refusing to encrypt), never crash.
public protocol BondStore: Sendable {
    /// Every bond kept.
    func bonds() async throws -> [Bond]
    /// Keeps `bond`, replacing any bond with the same peer (``Bond/peer``) or one whose IRK
    /// resolves to it.
    func save(_ bond: Bond) async throws
    /// Forgets the bond with `peer`; `false` when there was none.
    @discardableResult
    func removeBond(with peer: DeviceAddress) async throws -> Bool
}

extension BondStore {
    /// The bond whose peer is `address` or whose IRK resolves it; `nil` when none is.
    public func bond(for address: DeviceAddress) async throws -> Bond? {
        let all = try await bonds()
        return all.first { $0.peer == address } ?? all.first { $0.matches(address) }
    }
}

/// Bonds kept in memory, for one process's life (the host's default; tests).
public actor InMemoryBondStore: BondStore {
    private var kept: [Bond]
    /// Tasks in ``waitForBonds(count:)``: how many bonds each waits for.
    private var waiters: [UInt64: (count: Int, continuation: CheckedContinuation<Void, any Error>)] = [:]
    private var nextWaiter: UInt64 = 0

    public init(_ bonds: [Bond] = []) {
        kept = bonds
    }

    public func bonds() -> [Bond] { kept }

    public func save(_ bond: Bond) {
        kept.removeAll { bond.supersedes($0) }
        kept.append(bond)
        for (id, waiter) in waiters where kept.count >= waiter.count {
            waiters[id] = nil
            waiter.continuation.resume()
        }
    }

    /// Returns once the store holds at least `count` bonds: how a test on a byte stream learns
    /// that a pairing's bond was kept (the host saves it before it tells the pairing's waiters,
    /// but a pairing the peer started has no waiter). Bound it with the caller's own timeout:
    /// it throws `CancellationError` when the task is cancelled.
    public func waitForBonds(count: Int = 1) async throws {
        if kept.count >= count { return }
        nextWaiter += 1
        let id = nextWaiter
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    waiters[id] = (count, continuation)
                }
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    private func cancelWaiter(_ id: UInt64) {
        waiters.removeValue(forKey: id)?.continuation.resume(throwing: CancellationError())
    }

    @discardableResult
    public func removeBond(with peer: DeviceAddress) -> Bool {
        let before = kept.count
        kept.removeAll { $0.peer == peer }
        return kept.count != before
    }
}
