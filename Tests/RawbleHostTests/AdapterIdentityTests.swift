import RawbleHCITransport
@testable import RawbleHost
import RawbleSMP
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

/// ``Adapter/Configuration/identityForController``: who the host is on this controller, chosen
/// once start-up has read its public address (one identity per controller, issue 39).
@Suite("Adapter: an identity chosen per controller")
struct AdapterIdentityTests {
    static let publicAddress = BluetoothAddress(0x00_1B_DC_00_00_01)
    static let chosen = BluetoothAddress(0xC7_11_22_33_44_55)

    /// The minimal controller, answering Read BD_ADDR with `address`.
    static func controller(publicAddress address: BluetoothAddress) -> ScriptedController {
        ScriptedController { command in
            guard command == .readBDADDR else { return ScriptedController.minimal(command) }
            let value = address.value
            return [ScriptedController.complete(command.opcode, [0x00] + (0..<6).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) })]
        }
    }

    @Test("the choice gets the controller's public address (nil when Read BD_ADDR gives all zeros); its own address is the one set, its identity the one distributed, its bonds the ones used")
    func chosenFromThePublicAddress() async throws {
        for (answered, seen) in [(Self.publicAddress, Self.publicAddress as BluetoothAddress?), (BluetoothAddress.any, nil)] {
            let controller = Self.controller(publicAddress: answered)
            let pump = controller.run()
            let asked = Mutex<[BluetoothAddress?]>([])
            let bonds = InMemoryBondStore()
            let identity = PairingIdentity(identityResolvingKey: 0x0102, address: DeviceAddress(Self.chosen, type: .random))
            await bonds.save(Bond(peer: ScriptedController.peer, centralKey: .init(value: 1), peripheralKey: nil,
                                      authenticated: false, secureConnections: true, keySize: 16))
            var configuration = quietConfiguration()
            configuration.identityForController = { info in
                asked.withLock { $0.append(info.publicAddress) }
                return Adapter.Identity(ownAddress: .randomStatic(Self.chosen), pairing: identity, bonds: bonds)
            }
            let adapter = try await Adapter.open(controller.transport, configuration: configuration)
            #expect(asked.withLock { $0 } == [seen])
            #expect(await adapter.controller.ownAddress == DeviceAddress(Self.chosen, type: .random))
            #expect(controller.commands.contains(.leSetRandomAddress(Self.chosen)))
            #expect(await adapter.configuration.pairing?.identity == identity)
            #expect(try await adapter.configuration.bonds.bonds().map(\.peer) == [ScriptedController.peer])
            await adapter.close()
            pump.cancel()
        }
    }

    @Test("a choice that fails ends start-up with identityUnavailable, its reason in words, before any own address is set")
    func choiceFails() async throws {
        struct Refused: Error, CustomStringConvertible { var description: String { "the identity file is refused" } }
        let controller = Self.controller(publicAddress: Self.publicAddress)
        let pump = controller.run()
        var configuration = quietConfiguration()
        configuration.identityForController = { _ in throw Refused() }
        await #expect(throws: HostError.identityUnavailable("the identity file is refused")) {
            _ = try await Adapter.open(controller.transport, configuration: configuration)
        }
        #expect(!controller.commands.contains { if case .leSetRandomAddress = $0 { true } else { false } })
        #expect(HostError.identityUnavailable("x").description == "no identity for this controller: x")
        pump.cancel()
    }
}
