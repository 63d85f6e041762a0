import RawbleSMP
import RawbleWire

/// Resolves bonded peers' resolvable private addresses to their identities (Core Vol 3 Part C
/// 10.8.2.3): a random address whose two top bits are `01` is tried against each bond's IRK
/// with ah (Part H 2.2.2). Phones and watches change such an address every few minutes; with
/// the IRK they distributed when bonding, each new address still names the same peer.
///
/// Used only on the adapter's executor. Answers are cached per address (bounded), so a scan
/// that hears the same address many times runs ah once per bond for it.
final class AddressResolver {
    private var keys: [(irk: UInt128, identity: DeviceAddress)] = []
    private var cache: [BluetoothAddress: DeviceAddress?] = [:]
    /// Most addresses kept in the cache before it is emptied.
    static let cacheLimit = 4096
    /// The resolvable private address each identity was last heard from: where a connection
    /// to that identity goes.
    private(set) var lastPrivateAddress: [DeviceAddress: DeviceAddress] = [:]

    /// The IRKs of these bonds (bonds without one resolve nothing).
    func use(_ bonds: [Bond]) {
        keys = bonds.compactMap { bond in bond.peerIdentityResolvingKey.map { ($0, bond.peer) } }
        cache.removeAll()
    }

    /// One more bond (replacing any with the same identity).
    func add(_ bond: Bond) {
        keys.removeAll { $0.identity == bond.peer }
        if let irk = bond.peerIdentityResolvingKey { keys.append((irk, bond.peer)) }
        cache.removeAll()
    }

    /// The identity `address` resolves to, `nil` when it is not a resolvable private address
    /// or no bond's IRK resolves it.
    func identity(of address: DeviceAddress) -> DeviceAddress? {
        guard address.type == .random, address.address.randomKind == .resolvablePrivate, !keys.isEmpty else { return nil }
        if let known = cache[address.address] { return known }
        let identity = keys.first { address.address.isResolvable(with: $0.irk) }?.identity
        if cache.count >= Self.cacheLimit { cache.removeAll() }
        cache[address.address] = identity
        if let identity { lastPrivateAddress[identity] = address }
        return identity
    }
}
