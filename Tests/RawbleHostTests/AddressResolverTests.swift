@testable import RawbleHost
import RawbleSMP
import RawbleWire
import Testing

@Suite("AddressResolver: bonded peers' private addresses resolved with their IRKs")
struct AddressResolverTests {
    /// Core Vol 3 Part H D.7 (ah): IRK ec0234a357c8ad05341010a60a397d9b, prand 708194, hash 0dfbaa.
    static let irk: UInt128 = 0xEC02_34A3_57C8_AD05_3410_10A6_0A39_7D9B
    static let privateAddress = DeviceAddress(BluetoothAddress(0x70_81_94_0D_FB_AA), type: .random)
    static let identity = DeviceAddress(BluetoothAddress(0xC0_11_22_33_44_55), type: .random)

    static func bond(irk: UInt128?, identity: DeviceAddress = identity) -> Bond {
        Bond(peer: identity, peerIdentityResolvingKey: irk, centralKey: Bond.LongTermKey(value: 1), peripheralKey: nil,
             authenticated: false, secureConnections: true, keySize: 16)
    }

    @Test("the specification's sample address resolves to the bond's identity and becomes where the identity is connected; other addresses do not resolve")
    func resolves() {
        let resolver = AddressResolver()
        #expect(resolver.identity(of: Self.privateAddress) == nil, "no bonds yet")
        resolver.use([Self.bond(irk: nil, identity: DeviceAddress(BluetoothAddress(0xC0_00_00_00_00_09), type: .random)),
                      Self.bond(irk: Self.irk)])
        #expect(resolver.identity(of: Self.privateAddress) == Self.identity)
        #expect(resolver.lastPrivateAddress[Self.identity] == Self.privateAddress)
        // One bit of the hash changed; the same bits as a public address; a static random address.
        #expect(resolver.identity(of: DeviceAddress(BluetoothAddress(0x70_81_94_0D_FB_AB), type: .random)) == nil)
        #expect(resolver.identity(of: DeviceAddress(Self.privateAddress.address, type: .public)) == nil)
        #expect(resolver.identity(of: Self.identity) == nil)
    }

    @Test("a bond added later resolves at once (the cache of misses is dropped); replacing a bond's IRK replaces what resolves")
    func addedLater() {
        let resolver = AddressResolver()
        resolver.use([])
        #expect(resolver.identity(of: Self.privateAddress) == nil)
        resolver.add(Self.bond(irk: Self.irk))
        #expect(resolver.identity(of: Self.privateAddress) == Self.identity)
        resolver.add(Self.bond(irk: Self.irk ^ 1))
        #expect(resolver.identity(of: Self.privateAddress) == nil)
    }
}
