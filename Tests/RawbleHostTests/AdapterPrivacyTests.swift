import RawbleHost
import RawbleHostCore
import RawbleSMP
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

// rawble's own resolvable private address (OwnAddressChoice.resolvablePrivate), against a
// scripted controller that refuses LE Set Random Address while legacy advertising, scanning or
// initiating are on, as Core Vol 4 Part E 7.8.4 says a controller shall: a host that changed
// its address at the wrong moment fails these tests.

private let irk: UInt128 = 0x0123_4567_89AB_CDEF_FEDC_BA98_7654_3210
private let identity = PairingIdentity(identityResolvingKey: irk,
                                       address: DeviceAddress(BluetoothAddress(0xC1_22_33_44_55_66), type: .random))

/// A controller with legacy advertising, scanning and connections that tracks what is on and
/// answers a random address change during any of them with Command Disallowed.
private final class StrictController: Sendable {
    private struct State { var advertising = false, scanning = false }
    private final class Shared: Sendable { let state = Mutex(State()) }
    let scripted: ScriptedController

    init() {
        let shared = Shared()
        scripted = ScriptedController { command in
            switch command {
            case .leSetRandomAddress:
                let busy = shared.state.withLock { $0.advertising || $0.scanning }
                return [ScriptedController.complete(command.opcode, [busy ? HCIStatus.commandDisallowed.rawValue : 0])]
            case .leSetAdvertisingEnable(let on):
                shared.state.withLock { $0.advertising = on }
                return [ScriptedController.complete(command.opcode)]
            case .leSetScanEnable(let on, _):
                shared.state.withLock { $0.scanning = on }
                return [ScriptedController.complete(command.opcode)]
            case .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData:
                return [ScriptedController.complete(command.opcode)]
            default:
                return ScriptedController.minimal(command)
            }
        }
    }

    /// The addresses the host set, in order.
    var randomAddresses: [BluetoothAddress] {
        scripted.commands.compactMap { if case .leSetRandomAddress(let address) = $0 { address } else { nil } }
    }

    /// Waits (bounded) until the host has set `count` random addresses.
    func waitForRandomAddresses(_ count: Int) async throws -> [BluetoothAddress] {
        try await scripted.waitForCommands(count) { if case .leSetRandomAddress = $0 { true } else { false } }
        return randomAddresses
    }
}

private func privateConfiguration(clock: ManualClock, every period: Duration = .seconds(60)) -> Adapter.Configuration {
    var configuration = quietConfiguration(clock: clock)
    var pairing = PairingConfiguration()
    pairing.identity = identity
    configuration.pairing = pairing
    configuration.ownAddress = .resolvablePrivate(rotatingEvery: period)
    return configuration
}

/// Waits (bounded) until the adapter's own address has changed `count` times (its state
/// changes when the controller has completed the command).
private func waitForChanges(_ count: Int, _ adapter: Adapter) async throws {
    try await within(seconds: 60) { try await adapter.waitForOwnAddressChanges(count) }
}

private func isResolvablePrivate(_ address: BluetoothAddress) -> Bool {
    address.randomKind == .resolvablePrivate && address.isResolvable(with: irk)
}

@Suite("Adapter: its own resolvable private address, changed every period (Core Vol 6 Part B 1.3.2.2)")
struct AdapterPrivacyTests {
    @Test("the address set at start-up is resolvable with the identity's IRK, and it changes every period to another one")
    func changesEveryPeriod() async throws {
        let controller = StrictController()
        let pump = controller.scripted.run()
        let clock = ManualClock()
        let adapter = try await Adapter.open(controller.scripted.transport, configuration: privateConfiguration(clock: clock))
        let first = try #require(controller.randomAddresses.first)
        #expect(isResolvablePrivate(first), "\(first)")
        #expect(await adapter.controller.ownAddress == DeviceAddress(first, type: .random))
        #expect(!first.isResolvable(with: irk ^ 1), "another IRK does not resolve it")

        try await clock.advanceOnceArmed(by: .seconds(60))
        try await waitForChanges(1, adapter)
        let second = try #require(controller.randomAddresses.dropFirst().first)
        #expect(controller.randomAddresses.count == 2)
        #expect(isResolvablePrivate(second) && second != first)
        try await clock.advanceOnceArmed(by: .seconds(60))
        try await waitForChanges(2, adapter)
        let third = try #require(controller.randomAddresses.last)
        #expect(controller.randomAddresses.count == 3)
        #expect(isResolvablePrivate(third) && third != second)
        #expect(await adapter.controller.ownAddress == DeviceAddress(third, type: .random))
        await adapter.close()
        pump.cancel()
    }

    @Test("a change due during a scan waits (the controller would refuse it); the next scan sets the new address before it starts")
    func changeWaitsForScanning() async throws {
        let controller = StrictController()
        let pump = controller.scripted.run()
        let clock = ManualClock()
        let adapter = try await Adapter.open(controller.scripted.transport, configuration: privateConfiguration(clock: clock))
        // Kept until the scan is stopped below: a sequence dropped ends its scan.
        let devices = try await adapter.scan()
        try await clock.advanceOnceArmed(by: .seconds(60))
        // The period's timer ran and found the scan: the next one is armed, nothing was sent.
        try await within(seconds: 60) { try await clock.waitForSleepers(dueWithin: .seconds(60)) }
        #expect(controller.randomAddresses.count == 1, "no address change while scanning")
        #expect(await adapter.ownAddressChanges == 0)

        withExtendedLifetime(devices) {}
        try await adapter.stopScanning()
        let next = try await adapter.scan()
        let sent = controller.scripted.commands
        let change = try #require(sent.lastIndex { if case .leSetRandomAddress = $0 { true } else { false } })
        let disable = try #require(sent.firstIndex(of: .leSetScanEnable(enable: false, filterDuplicates: false)))
        let enable = try #require(sent.lastIndex(of: .leSetScanEnable(enable: true, filterDuplicates: false)))
        #expect(disable < change && change < enable, "off, new address, on: \(sent)")
        #expect(await adapter.ownAddressChanges == 1)
        #expect(isResolvablePrivate(controller.randomAddresses[1]))
        withExtendedLifetime(next) {}
        await adapter.close()
        pump.cancel()
    }

    @Test("running advertising is switched off, moved to the new address and switched on again")
    func advertisingMoves() async throws {
        let controller = StrictController()
        let pump = controller.scripted.run()
        let clock = ManualClock()
        let adapter = try await Adapter.open(controller.scripted.transport, configuration: privateConfiguration(clock: clock))
        var advertisement = Advertisement(data: AdvertisingData(serviceUUIDs: [BluetoothUUID(UInt16(0x180D))], localName: "rawble"))
        advertisement.commands = .legacy
        try await adapter.advertise(advertisement)
        let before = controller.scripted.commands.count
        try await clock.advanceOnceArmed(by: .seconds(60))
        _ = try await controller.waitForRandomAddresses(2)
        try await controller.scripted.waitForCommands(until: { $0.last == .leSetAdvertisingEnable(true) })
        let after = Array(controller.scripted.commands[before...])
        #expect(after == [.leSetAdvertisingEnable(false), .leSetRandomAddress(controller.randomAddresses[1]),
                          .leSetAdvertisingEnable(true)])
        #expect(await adapter.ownAddressChanges == 1)
        await adapter.close()
        pump.cancel()
    }

    @Test("without an identity to distribute, a resolvable private own address is refused at open, in one line")
    func needsAnIdentity() async throws {
        let controller = StrictController()
        let pump = controller.scripted.run()
        var configuration = quietConfiguration()
        configuration.ownAddress = .resolvablePrivate(rotatingEvery: .seconds(900))
        await #expect {
            _ = try await Adapter.open(controller.scripted.transport, configuration: configuration)
        } throws: { error in
            guard case HostError.unsupported(let what)? = error as? HostError else { return false }
            return what.contains("identity") && !what.contains("\n")
        }
        pump.cancel()
    }

    @Test("the generator: two top bits 01, prand neither all 0 nor all 1, the hash ah(IRK, prand) (the specification's sample IRK)")
    func generator() {
        var generator = SplitMix64(state: 7)
        let sample: UInt128 = 0xEC02_34A3_57C8_AD05_3410_10A6_0A39_7D9B  // Core Vol 3 Part H D.7
        for _ in 0..<500 {
            let address = BluetoothAddress.resolvablePrivate(irk: sample, using: &generator)
            #expect(address.randomKind == .resolvablePrivate)
            let prand = address.value >> 24
            #expect(prand & 0x3F_FFFF != 0 && prand & 0x3F_FFFF != 0x3F_FFFF)
            #expect(UInt32(address.value & 0xFF_FFFF) == SMPCrypto.randomAddressHash(irk: sample, prand: UInt32(prand)))
        }
        // D.7: prand 0x708194 gives the hash 0x0dfbaa.
        #expect(SMPCrypto.randomAddressHash(irk: sample, prand: 0x70_8194) == 0x0D_FBAA)
    }
}
