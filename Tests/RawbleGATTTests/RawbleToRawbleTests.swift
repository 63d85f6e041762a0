import RawbleGATT
import RawbleGATTCore
import RawbleHost
import RawbleHostCore
import RawbleSMP
import RawbleTestSupport
import RawbleWire
import Testing

// Two rawble hosts in one process on a virtual link (issue 40, item 4): a scan, a connection
// each way, pairing, a bond that encrypts the next link, and a bond the other side lost. No
// Python and no socket: what runs is the two hosts' own code, byte for byte, on one link layer
// played in memory.

@Suite("rawble to rawble on a virtual link")
struct RawbleToRawbleTests {
    private static let name = "rawble-peripheral"

    private static func advertise(_ adapter: Adapter) async throws {
        _ = try await adapter.advertise(Advertisement(
            data: AdvertisingData(serviceUUIDs: [BluetoothUUID(0x180D)], localName: name),
            scanResponse: AdvertisingData(flags: nil, txPowerLevel: 4)))
    }

    @Test("a scan of one host finds the other's advertisement (name, service) and, scanning actively, its scan response; the addresses are each adapter's own")
    func scanFindsTheOther() async throws {
        let link = VirtualLink()
        let peripheral = try await openAdapter(link.controllers[0], io: .noInputNoOutput, passkey: nil)
        let central = try await openAdapter(link.controllers[1], io: .noInputNoOutput, passkey: nil)
        try await Self.advertise(peripheral)
        let own = await peripheral.controller.ownAddress
        let found = try await within(seconds: 10) { () async throws -> DiscoveredDevice? in
            for try await device in try await central.scan(ScanOptions(active: true)) where device.scanResponse != nil {
                return device
            }
            return nil
        }
        let device = try #require(found)
        #expect(device.address == own)
        #expect(device.name == Self.name)
        #expect(device.advertisingData.serviceUUIDs == [BluetoothUUID(0x180D)])
        #expect(device.scanResponse?.txPowerLevel == 4)
        #expect(device.isConnectable)
        #expect(await central.controller.ownAddress != own, "one identity per adapter")
        await central.close()
        await peripheral.close()
    }

    @Test("paired once (Just Works, bonded both sides), the next connection is encrypted with the bond's key: the peripheral's controller is given the LTK, no second pairing")
    func bondEncryptsTheNextLink() async throws {
        let link = VirtualLink()
        let peripheralBonds = InMemoryBondStore(), centralBonds = InMemoryBondStore()
        let peripheral = try await openAdapter(link.controllers[0], io: .noInputNoOutput, passkey: nil, bonds: peripheralBonds)
        let central = try await openAdapter(link.controllers[1], io: .noInputNoOutput, passkey: nil, bonds: centralBonds)
        let server = GATTServer(database: try sampleDatabase())
        let serving = Task {
            for await connection in peripheral.incomingConnections { _ = await server.serve(connection.att) }
        }
        defer { serving.cancel() }
        try await Self.advertise(peripheral)
        let address = await peripheral.controller.ownAddress

        let first = try await central.connect(to: address, timeout: .seconds(10))
        #expect(try await first.pair(timeout: .seconds(10)) != nil, "paired")
        #expect(first.security == .encrypted)
        // Each host keeps its bond once its side of the key distribution ends: the peripheral's
        // may come a moment after the central's pair() returned.
        try await Self.bothBonded(centralBonds, peripheralBonds)
        try await first.disconnect()
        #expect(link.connectionCount == 0)

        // The peripheral advertises again on its own once the central left (Restart's default).
        let repliesBefore = Self.keyReplies(link.controllers[0])
        let second = try await central.connect(to: address, timeout: .seconds(10))
        #expect(try await second.secure(.encrypted, timeout: .seconds(10)) == .encrypted)
        #expect(Self.keyReplies(link.controllers[0]) == repliesBefore + 1, "the bond's LTK, given by the peripheral's host")
        let client = GATTClient(bearer: second.att)
        #expect(try await client.read(handle: 3).isEmpty == false, "the link carries ATT once encrypted")
        try await second.disconnect()
        #expect(link.connectionCount == 0)
        await central.close()
        await peripheral.close()
    }

    @Test("the peripheral asks for security (a Security Request, Passkey Entry): the central pairs, both sides hold an authenticated link and a bond")
    func peripheralAsksForSecurity() async throws {
        let link = VirtualLink()
        let peripheralBonds = InMemoryBondStore(), centralBonds = InMemoryBondStore()
        let peripheral = try await openAdapter(link.controllers[0], io: .displayOnly, passkey: 654_321, bonds: peripheralBonds)
        let central = try await openAdapter(link.controllers[1], io: .keyboardOnly, passkey: 654_321, bonds: centralBonds)
        try await Self.advertise(peripheral)
        let address = await peripheral.controller.ownAddress
        let incoming = Task { () -> Connection? in
            for await connection in peripheral.incomingConnections { return connection }
            return nil
        }
        let connection = try await central.connect(to: address, timeout: .seconds(10))
        let accepted = try #require(await incoming.value)
        #expect(try await accepted.pair(authenticated: true, timeout: .seconds(10)) != nil, "paired at the peripheral's request")
        #expect(accepted.security == .authenticated)
        #expect(try await within(seconds: 10) { try await connection.waitForSecurity(atLeast: .authenticated) } == .authenticated)
        try await Self.bothBonded(centralBonds, peripheralBonds)
        await central.close()
        await peripheral.close()
    }

    @Test("a bonded peer whose key is gone (another device at its address, Just Works only): encrypting with the bond is refused (PIN or Key Missing), the connection is made unencrypted, and pairing again weaker than the bond is refused; nothing waits forever")
    func impostorWithoutTheKey() async throws {
        let link = VirtualLink(count: 3)
        let address = BluetoothAddress(0xC0_11_22_33_44_55)  // random static: the top two bits set
        let peer = DeviceAddress(address, type: .random)
        let centralBonds = InMemoryBondStore()
        let genuine = try await openAdapter(link.controllers[0], io: .displayOnly, passkey: 123_456, ownAddress: address)
        let central = try await openAdapter(link.controllers[1], io: .keyboardOnly, passkey: 123_456, bonds: centralBonds)
        _ = try await genuine.advertise(Advertisement(data: AdvertisingData(localName: Self.name), restart: .never))
        let first = try await central.connect(to: peer, timeout: .seconds(10))
        _ = try await first.pair(authenticated: true, timeout: .seconds(10))
        #expect(first.security == .authenticated)
        try await first.disconnect()

        let impostor = try await openAdapter(link.controllers[2], io: .noInputNoOutput, passkey: nil, ownAddress: address)
        try await Self.advertise(impostor)
        let second = try await within(seconds: 30) { try await central.connect(to: peer, timeout: .seconds(10)) }
        #expect(second.security == .none, "the impostor has no key for the bond")
        #expect(link.controllers[2].commands.contains { if case .leLongTermKeyRequestNegativeReply = $0 { true } else { false } },
                "the impostor's host refused the bond's key")
        await #expect(throws: HostError.self) {
            _ = try await within(seconds: 30) { try await second.pair(timeout: .seconds(10)) }
        }
        #expect(await centralBonds.bonds().first?.authenticated == true, "the bond is kept")
        await central.close()
        await impostor.close()
        await genuine.close()
    }

    /// Waits (bounded) until each store holds one bond.
    private static func bothBonded(_ central: InMemoryBondStore, _ peripheral: InMemoryBondStore) async throws {
        try await within(seconds: 10) {
            try await central.waitForBonds()
            try await peripheral.waitForBonds()
        }
        #expect(await central.bonds().count == 1)
        #expect(await peripheral.bonds().count == 1)
    }

    /// LE Long Term Key Request Replies the host sent.
    private static func keyReplies(_ controller: VirtualController) -> Int {
        controller.commands.filter { if case .leLongTermKeyRequestReply = $0 { true } else { false } }.count
    }
}
