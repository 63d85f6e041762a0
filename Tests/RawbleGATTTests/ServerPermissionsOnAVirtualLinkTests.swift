import RawbleBearer
import RawbleGATT
import RawbleGATTCore
import RawbleHost
import RawbleHostCore
@testable import RawbleSMP
import RawbleTestSupport
import RawbleWire
import Testing

// Attribute permissions enforced on rawble's own host end to end (issue 24): rawble's GATT
// server as the peripheral on one controller of a virtual link, rawble's GATT client as the
// central on the other, both in this process (rawble against rawble: Bumble's controller
// proved nothing more here); the server checks each request against the link's security as
// its L2CAP bearer reports it, and the client pairs after a refusal and asks again.

func openAdapter(_ controller: VirtualController, io: SMPIOCapability, passkey: UInt32?,
                 bonds: any BondStore = InMemoryBondStore(), ownAddress: BluetoothAddress? = nil) async throws -> Adapter {
    var configuration = Adapter.Configuration()
    configuration.logger.logLevel = .critical
    configuration.commandTimeout = .seconds(10)
    configuration.resetTimeout = .seconds(10)
    var pairing = PairingConfiguration(ioCapability: io)
    pairing.mitm = io != .noInputNoOutput
    pairing.testingFixedDisplayedPasskey = passkey  // the test-only path: the other side must know it
    configuration.pairing = pairing
    configuration.pairingAgent = FixedPairingAgent(passkey: passkey)
    configuration.bonds = bonds
    if let ownAddress { configuration.ownAddress = .randomStatic(ownAddress) }
    return try await Adapter.open(controller.transport, configuration: configuration)
}

@Suite("Server permissions over rawble's own host: refused, paired, served")
struct ServerPermissionsOnAVirtualLinkTests {
    /// The sample database's characteristic 0x2A3F (handle 30): readable only on an
    /// authenticated link; 0x2A39: writable only on an encrypted one.
    @Test("a write that needs encryption succeeds once the client paired after the refusal; a read that needs authentication: served after Passkey Entry, refused (Insufficient Authentication) after Just Works",
          arguments: [false, true])
    func permissions(authenticatedPairing: Bool) async throws {
        let link = VirtualLink()
        // Passkey Entry when asked: the peripheral displays 123456, the central types it.
        let peripheralAdapter = try await openAdapter(link.controllers[0], io: authenticatedPairing ? .displayOnly : .noInputNoOutput,
                                                      passkey: authenticatedPairing ? 123_456 : nil)
        let centralAdapter = try await openAdapter(link.controllers[1], io: authenticatedPairing ? .keyboardOnly : .noInputNoOutput,
                                                   passkey: authenticatedPairing ? 123_456 : nil)
        let server = GATTServer(database: try sampleDatabase())
        _ = try await peripheralAdapter.advertise(Advertisement(data: AdvertisingData(localName: "rawble-server")))
        let serving = Task {
            for await link in peripheralAdapter.incomingConnections {
                _ = await server.serve(link.att)
            }
        }
        defer { serving.cancel() }
        let address = await peripheralAdapter.controller.ownAddress
        let connection = try await centralAdapter.connect(to: address, timeout: .seconds(20))
        var clientConfiguration = ATTClient.Configuration()
        clientConfiguration.logger.logLevel = .critical
        let client = GATTClient(bearer: connection.att, configuration: clientConfiguration)
        #expect(connection.security == .none)

        try await within(seconds: 90) {
            guard let write = try await client.characteristic(BluetoothUUID(0x2A39)) else {
                Issue.record("no characteristic 2A39")
                return
            }
            try await client.write([0x01], to: write)
        }
        #expect(connection.security >= .encrypted, "paired after the refusal")
        if authenticatedPairing {
            #expect(connection.security == .authenticated)
            #expect(try await within(seconds: 60) { try await client.read(handle: 30) } == [0x01, 0x02])
        } else {
            let refused = GATTError.att(ATTError(code: .insufficientAuthentication, requestOpcode: .readRequest, handle: 30))
            await #expect(throws: refused) { try await within(seconds: 60) { try await client.read(handle: 30) } }
            #expect(connection.security == .encrypted, "Just Works cannot give an authenticated key")
        }
        await centralAdapter.close()
        await peripheralAdapter.close()
    }
}
