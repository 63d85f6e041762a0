import RawbleSMP
import RawbleWire
import Testing

@Suite("InMemoryBondStore.waitForBonds: a test learns a bond was kept without polling")
struct BondStoreWaitTests {
    static func bond(_ last: UInt64) -> Bond {
        let key = Bond.LongTermKey(value: 0x0123_4567_89AB_CDEF_FEDC_BA98_7654_3210)
        return Bond(peer: DeviceAddress(BluetoothAddress(0xC0_B1_E0_00_00_00 + last), type: .random),
                    centralKey: key, peripheralKey: key, authenticated: false, secureConnections: true, keySize: 16)
    }

    @Test("returns at once when the bonds are there; else when the save that makes the count comes, not before")
    func wakesOnTheSave() async throws {
        let store = InMemoryBondStore([Self.bond(1)])
        try await store.waitForBonds(count: 1)
        let waiting = Task { try await store.waitForBonds(count: 3) }
        await store.save(Self.bond(2))
        // The same peer again replaces its bond: still two.
        await store.save(Self.bond(2))
        await store.save(Self.bond(3))
        try await waiting.value
        #expect(await store.bonds().count == 3)
    }

    @Test("below the count it goes on waiting whatever is saved: only cancellation ends it")
    func waitsBelowTheCount() async throws {
        let store = InMemoryBondStore()
        let waiting = Task { try await store.waitForBonds(count: 3) }
        await store.save(Self.bond(1))
        await store.save(Self.bond(2))
        await store.save(Self.bond(2))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }

    @Test("a cancelled wait throws CancellationError, and a later save does not resume it twice")
    func cancelled() async throws {
        let store = InMemoryBondStore()
        let waiting = Task { try await store.waitForBonds() }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        await store.save(Self.bond(1))
        try await store.waitForBonds()
    }
}
