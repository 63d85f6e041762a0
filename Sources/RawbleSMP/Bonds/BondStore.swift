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

    public init(_ bonds: [Bond] = []) {
        kept = bonds
    }

    public func bonds() -> [Bond] { kept }

    public func save(_ bond: Bond) {
        kept.removeAll { bond.supersedes($0) }
        kept.append(bond)
    }

    @discardableResult
    public func removeBond(with peer: DeviceAddress) -> Bool {
        let before = kept.count
        kept.removeAll { $0.peer == peer }
        return kept.count != before
    }
}
