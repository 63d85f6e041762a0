import NIOCore
import RawbleHost
import RawbleHostCore
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

private func configuration(clock: any Clock<Duration> = ContinuousClock()) -> Adapter.Configuration {
    var configuration = Adapter.Configuration()
    configuration.commandTimeout = .seconds(10)
    configuration.resetTimeout = .seconds(10)
    configuration.clock = clock
    configuration.logger.logLevel = .critical
    return configuration
}

/// The adapter's configuration on a controller the kernel owns (an HCI raw socket).
private func kernelConfiguration(clock: any Clock<Duration> = ContinuousClock()) -> Adapter.Configuration {
    var configuration = configuration(clock: clock)
    configuration.owner = .kernel
    return configuration
}

private let scanOff = HCICommand.leSetScanEnable(enable: false, filterDuplicates: false)

private func isScanEnable(_ command: HCICommand) -> Bool {
    if case .leSetScanEnable = command { true } else { false }
}

/// A controller as the kernel left it: it answers reads and scanning; Read BD_ADDR gives its
/// public address.
private func kernelController() -> ScriptedController {
    ScriptedController { command in
        switch command {
        case .readBDADDR: [ScriptedController.complete(command.opcode, [0x00, 0x01, 0x00, 0x00, 0xDC, 0x1B, 0x00])]
        default: ScriptedController.minimal(command)
        }
    }
}

/// Injects an advertising report of the strap (non-connectable, so the aggregator emits it at
/// once) and returns the first device the scan delivers after it: the events injected before
/// it were handled by then (one loop, in order).
private func strapReportArrives(_ controller: ScriptedController,
                                _ devices: AsyncThrowingStream<DiscoveredDevice, any Error>) async throws -> Bool {
    let strap = BluetoothAddress(0xC0_B1_E0_00_00_01)
    controller.transport.inject(.le(.advertisingReport([AdvertisingReport(
        legacy: .advNonconnInd, addressType: .random, address: strap, rssi: -50, data: [0x02, 0x01, 0x06][...])])))
    let first = try await within(seconds: 10) { () -> DiscoveredDevice? in
        for try await device in devices { return device }
        return nil
    }
    return first?.address.address == strap
}

@Suite("Adapter: stopping a scan")
struct AdapterScanStopTests {
    /// The consumer's end starts the stop on a task of its own; a close that comes at once must
    /// wait for it, not close the transport under it (CI caught `scan` after Ctrl-C leaving the
    /// controller scanning: the last command sent was Set Scan Enable on). The two race, so
    /// the test runs many rounds, each in both orders' reach.
    @Test("closing right after the scan's consumer stops still disables scanning, before the transport closes")
    func closeRightAfterTheConsumerStops() async throws {
        for round in 0..<40 {
            let controller = ScriptedController()
            _ = controller.run()
            let adapter = try await Adapter.open(controller.transport, configuration: configuration())
            let devices = try await adapter.scan()
            let consumer = Task { for try await _ in devices {} }
            consumer.cancel()
            if round.isMultiple(of: 2) { _ = await consumer.result }
            try await within(seconds: 30) { await adapter.close() }
            let scanCommands = controller.commands.filter(isScanEnable)
            #expect(scanCommands.last == scanOff, "round \(round): \(scanCommands)")
            #expect(scanCommands.filter { $0 == scanOff }.count == 1, "round \(round): \(scanCommands)")
        }
    }

    @Test("a scan with a duration ends by itself: its sequence finishes and scanning is switched off; the next scan is not busy")
    func durationEndsTheScan() async throws {
        let controller = ScriptedController()
        _ = controller.run()
        let clock = ManualClock()
        let adapter = try await Adapter.open(controller.transport, configuration: configuration(clock: clock))
        let devices = try await adapter.scan(ScanOptions(duration: .milliseconds(200)))
        try await clock.advanceOnceArmed(by: .milliseconds(200))
        try await within(seconds: 30) { for try await _ in devices {} }
        // Waits for the stop already on its way (it sends nothing more).
        try await adapter.stopScanning()
        #expect(controller.commands.filter(isScanEnable) == [.leSetScanEnable(enable: true, filterDuplicates: false), scanOff],
                "\(controller.commands)")
        let again = try await adapter.scan()
        withExtendedLifetime(again) {}
        await adapter.close()
    }

    /// Once the consumer has stopped, a new scan is not busy (the old one is as good as
    /// stopped), and the old stop's Set Scan Enable (off) cannot come after the new one's on.
    @Test("a new scan right after the consumer stopped the last one is not busy, nor switched off by the old stop")
    func scanAgainRightAfterTheConsumerStops() async throws {
        for round in 0..<40 {
            let controller = ScriptedController()
            _ = controller.run()
            let adapter = try await Adapter.open(controller.transport, configuration: configuration())
            let first = try await adapter.scan()
            let consumer = Task { for try await _ in first {} }
            consumer.cancel()
            _ = await consumer.result
            let second = try await within(seconds: 30) { try await adapter.scan() }
            let scanCommands = controller.commands.filter(isScanEnable)
            #expect(scanCommands.last == .leSetScanEnable(enable: true, filterDuplicates: false), "round \(round): \(scanCommands)")
            withExtendedLifetime(second) {}
            await adapter.close()
        }
    }
}

@Suite("Adapter: scanning off when it is off already")
struct AdapterScanAlreadyOffTests {
    private static let extendedTable = SupportedCommands(supporting: [
        .reset, .readLocalSupportedCommands, .leReadBufferSize, .leSetRandomAddress, .leReadLocalSupportedFeatures,
        .leSetExtendedScanParameters, .leSetExtendedScanEnable,
    ])

    /// Broadcom controllers answer Set Scan Enable (off) with Command Disallowed when scanning
    /// is off already (the kernel may have stopped rawble's scan): that stop succeeded.
    @Test("Command Disallowed for Set Scan Enable (off): the stop succeeds, and the next scan starts", arguments: [false, true])
    func commandDisallowedStopsAnyway(extended: Bool) async throws {
        let controller = ScriptedController { command in
            switch command {
            case .leSetScanEnable(enable: false, _):
                [ScriptedController.complete(command.opcode, [HCIStatus.commandDisallowed.rawValue])]
            case .leSetExtendedScanEnable(let parameters) where !parameters.enable:
                [ScriptedController.complete(command.opcode, [HCIStatus.commandDisallowed.rawValue])]
            case .readLocalSupportedCommands where extended:
                [ScriptedController.complete(command.opcode, [0x00] + Self.extendedTable.octets)]
            case .leReadLocalSupportedFeatures where extended:
                [ScriptedController.complete(command.opcode, [0x00, 0x00, 0x10, 0, 0, 0, 0, 0, 0])]  // bit 12: extended advertising
            case .leSetExtendedScanParameters, .leSetExtendedScanEnable:
                [ScriptedController.complete(command.opcode)]
            default:
                ScriptedController.minimal(command)
            }
        }
        _ = controller.run()
        let adapter = try await Adapter.open(controller.transport, configuration: configuration())
        #expect(await adapter.controller.usesExtendedScanning == extended)
        let devices = try await within(seconds: 30) { try await adapter.scan() }
        withExtendedLifetime(devices) {}
        try await within(seconds: 30) { try await adapter.stopScanning() }
        // Still usable: a scan again, and a stop again.
        let again = try await within(seconds: 30) { try await adapter.scan() }
        withExtendedLifetime(again) {}
        try await within(seconds: 30) { try await adapter.stopScanning() }
        let offs = controller.commands.filter {
            switch $0 {
            case .leSetScanEnable(enable: false, _): true
            case .leSetExtendedScanEnable(let parameters): !parameters.enable
            default: false
            }
        }
        #expect(offs.count == 2, "\(controller.commands)")
        await adapter.close()
    }

    /// Any other refusal of the stop is still an error.
    @Test("another status for Set Scan Enable (off) is still the controller's error")
    func otherStatusIsAnError() async throws {
        let controller = ScriptedController { command in
            switch command {
            case .leSetScanEnable(enable: false, _):
                [ScriptedController.complete(command.opcode, [HCIStatus(0x1F).rawValue])]
            default:
                ScriptedController.minimal(command)
            }
        }
        _ = controller.run()
        let adapter = try await Adapter.open(controller.transport, configuration: configuration())
        let devices = try await within(seconds: 30) { try await adapter.scan() }
        withExtendedLifetime(devices) {}
        await #expect(throws: HostError.self) { try await within(seconds: 30) { try await adapter.stopScanning() } }
        await adapter.close()
    }
}

@Suite("Adapter as a Central")
struct AdapterCentralTests {
    /// What the CLI and embedders do through the seam: connect, reach the ATT bearer,
    /// disconnect, and learn why the link ended, without naming `Adapter` or `Connection`.
    @Test("connect, send on the ATT bearer and disconnect through `any Central`")
    func throughTheSeam() async throws {
        let controller = ScriptedController()
        _ = controller.run()
        // Every step bounded: a wait that never ends fails here, naming the step, instead of
        // holding the whole test run (seen once in a full parallel run on 2 cores).
        let central: any Central = try await within(seconds: 30) {
            try await Adapter.open(controller.transport, configuration: configuration())
        }
        let link = try await within(seconds: 30) { try await central.connect(to: ScriptedController.peer, timeout: .seconds(10)) }
        #expect(link.peer == ScriptedController.peer)
        #expect(link.ending == nil)
        try await within(seconds: 30) { try await link.att.send([0x02, 0x17, 0x00]) }  // Exchange MTU Request
        let sent = await controller.waitForACL(count: 1)
        #expect(sent.first.map { Array($0.payload.suffix(3)) } == [0x02, 0x17, 0x00])
        try await within(seconds: 30) { try await link.disconnect(timeout: .seconds(5)) }
        #expect(link.ending != nil)
        #expect(controller.commands.contains { if case .disconnect(_, .remoteUserTerminatedConnection) = $0 { true } else { false } })
        try await within(seconds: 30) { await central.close() }
    }
}

@Suite("Adapter on a kernel-owned controller (the raw HCI channel)")
struct AdapterKernelOwnedTests {
    @Test("never resets or configures the controller; scans from its public address; makes no connection itself")
    func changesNothing() async throws {
        let controller = kernelController()
        _ = controller.run()
        let adapter = try await Adapter.open(controller.transport, configuration: kernelConfiguration())
        let info = await adapter.controller
        #expect(info.ownAddress == DeviceAddress(BluetoothAddress(0x00_1B_DC_00_00_01), type: .public))
        for command in controller.commands {
            switch command {
            case .reset, .setEventMask, .leSetEventMask, .leSetRandomAddress, .writeLEHostSupport, .leReadBufferSize, .readBufferSize:
                Issue.record("sent \(command) to a controller the kernel owns")
            default: break
            }
        }

        let devices = try await adapter.scan(ScanOptions(active: true))
        let parameters = controller.commands.compactMap { command -> HCICommand.ScanParameters? in
            if case .leSetScanParameters(let parameters) = command { parameters } else { nil }
        }
        #expect(parameters.last?.ownAddressType == .public)
        // Another host's command answered on the shared channel is ignored; reports still flow.
        controller.transport.inject(ScriptedController.complete(.leSetScanEnable))
        let strap = BluetoothAddress(0xC0_B1_E0_00_00_01)
        controller.transport.inject(.le(.advertisingReport([AdvertisingReport(
            legacy: .advNonconnInd, addressType: .random, address: strap, rssi: -50,
            data: [0x02, 0x01, 0x06][...])])))
        let first = try await within(seconds: 10) { () -> DiscoveredDevice? in
            for try await device in devices { return device }
            return nil
        }
        #expect(first?.address.address == strap)

        await #expect(throws: HostError.self) {
            _ = try await adapter.connect(to: DeviceAddress(strap, type: .random), timeout: .seconds(1))
        }
        await adapter.close()
        let scanCommands = controller.commands.filter { if case .leSetScanEnable = $0 { true } else { false } }
        #expect(scanCommands.last == .leSetScanEnable(enable: false, filterDuplicates: false))
    }

    @Test("advertises through the raw channel; a central's connection is the kernel's (no Connection, no Disconnect); advertising starts again after its disconnection")
    func advertisesAndFollowsTheKernelsLinks() async throws {
        let controller = ScriptedController { command in
            switch command {
            case .readBDADDR: [ScriptedController.complete(command.opcode, [0x00, 0x01, 0x00, 0x00, 0xDC, 0x1B, 0x00])]
            case .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData, .leSetAdvertisingEnable:
                [ScriptedController.complete(command.opcode)]
            default: ScriptedController.minimal(command)
            }
        }
        _ = controller.run()
        let adapter = try await Adapter.open(controller.transport, configuration: kernelConfiguration())
        let enable = HCICommand.leSetAdvertisingEnable(true)
        try await adapter.advertise(Advertisement(data: AdvertisingData(localName: "strap")))
        let parameters = controller.commands.compactMap { command -> HCICommand.AdvertisingParameters? in
            if case .leSetAdvertisingParameters(let parameters) = command { parameters } else { nil }
        }
        #expect(parameters.first?.ownAddressType == .public, "the kernel's controller advertises from its public address")
        #expect(controller.commands.filter { $0 == enable }.count == 1)

        controller.transport.inject(ScriptedController.connectionComplete(handle: 0x0040, role: .peripheral))
        // The host went on (a command round trip after the event): advertising is not on again.
        try await adapter.execute(.leSetScanEnable(enable: false, filterDuplicates: false))
        #expect(controller.commands.filter { $0 == enable }.count == 1)
        controller.transport.inject(.disconnectionComplete(.init(
            status: .success, connectionHandle: 0x0040, reason: .remoteUserTerminatedConnection)))
        try await controller.waitForCommands(2) { $0 == enable }
        await adapter.close()
        #expect(controller.commands.last(where: { if case .leSetAdvertisingEnable = $0 { true } else { false } })
                == .leSetAdvertisingEnable(false), "close stops advertising")
        #expect(!controller.commands.contains { if case .disconnect = $0 { true } else { false } },
                "the link is the kernel's: the adapter never disconnects it")
        let incoming = try await within(seconds: 10) { () -> Int in
            var count = 0
            for await _ in adapter.incomingConnections { count += 1 }
            return count
        }
        #expect(incoming == 0, "the kernel's links reach its L2CAP sockets, not incomingConnections")
    }
}

@Suite("Adapter: a controller that refuses the legacy scan commands")
struct AdapterLegacyRefusedTests {
    /// A Bluetooth 5 controller after the kernel (or another host) used the extended commands:
    /// its features claim no extended advertising, its command table lists the extended scan
    /// commands, and it answers the legacy ones Command Disallowed until power-off.
    private static func controller(listsExtended: Bool) -> ScriptedController {
        var table: Set<HCIOpcode> = [.reset, .readLocalSupportedCommands, .readBDADDR, .leReadBufferSize,
                                     .leSetRandomAddress, .leSetScanParameters, .leSetScanEnable]
        if listsExtended { table.formUnion([.leSetExtendedScanParameters, .leSetExtendedScanEnable]) }
        let supported = SupportedCommands(supporting: Array(table))
        return ScriptedController { command in
            switch command {
            case .readLocalSupportedCommands:
                [ScriptedController.complete(command.opcode, [0x00] + supported.octets)]
            case .readBDADDR:
                [ScriptedController.complete(command.opcode, [0x00, 0x01, 0x00, 0x00, 0xDC, 0x1B, 0x00])]
            case .leSetScanParameters, .leSetScanEnable:
                [ScriptedController.complete(command.opcode, [HCIStatus.commandDisallowed.rawValue])]
            case .leSetExtendedScanParameters, .leSetExtendedScanEnable:
                [ScriptedController.complete(command.opcode)]
            default:
                ScriptedController.minimal(command)
            }
        }
    }

    private static func isExtendedEnable(_ command: HCICommand) -> Bool {
        if case .leSetExtendedScanEnable = command { true } else { false }
    }

    @Test("Command Disallowed for the legacy commands: the scan switches to the extended ones, and stops with them", arguments: [ControllerOwner.kernel, .host])
    func switchesToExtended(owner: ControllerOwner) async throws {
        let controller = Self.controller(listsExtended: true)
        _ = controller.run()
        var configuration = configuration()
        configuration.owner = owner
        let adapter = try await Adapter.open(controller.transport, configuration: configuration)
        #expect(await !adapter.controller.usesExtendedScanning, "the features claim no extended advertising")
        let devices = try await within(seconds: 30) { try await adapter.scan() }
        let enables = controller.commands.filter(Self.isExtendedEnable)
        #expect(enables.count == 1, "\(controller.commands)")
        #expect(await adapter.controller.usesExtendedScanning)
        withExtendedLifetime(devices) {}
        try await adapter.stopScanning()
        let after = controller.commands.filter(Self.isExtendedEnable)
        #expect(after.count == 2, "scanning stopped with the extended command: \(after)")
        await adapter.close()
    }

    @Test("Command Disallowed and no extended commands to switch to: on rawble's own host the scan fails with the controller's answer; on the kernel's the controller scans for the kernel, and the scan reads that", arguments: [ControllerOwner.kernel, .host])
    func noExtendedToSwitchTo(owner: ControllerOwner) async throws {
        let controller = Self.controller(listsExtended: false)
        _ = controller.run()
        var configuration = configuration()
        configuration.owner = owner
        let adapter = try await Adapter.open(controller.transport, configuration: configuration)
        if owner == .host {
            await #expect(throws: HostError.self) {
                _ = try await within(seconds: 30) { try await adapter.scan() }
            }
        } else {
            let devices = try await within(seconds: 30) { try await adapter.scan() }
            #expect(!controller.commands.contains(where: isScanEnable), "\(controller.commands)")
            withExtendedLifetime(devices) {}
        }
        #expect(!controller.commands.contains { if case .leSetExtendedScanParameters = $0 { true } else { false } })
        await adapter.close()
    }
}

@Suite("Adapter on a kernel-owned controller: another program stops the scan")
struct AdapterForeignScanStopTests {

    private static let scanOn = HCICommand.leSetScanEnable(enable: true, filterDuplicates: false)

    /// What the kernel copies to a raw socket when it sends a command of its own.
    private static func foreign(_ command: HCICommand) -> H4Packet {
        H4Packet(type: .command, bytes: command.encoded)
    }

    @Test("the kernel disables scanning under a running scan: it is switched on again, with its own parameters; reports flow again")
    func scanResumes() async throws {
        let controller = kernelController()
        _ = controller.run()
        let adapter = try await Adapter.open(controller.transport, configuration: kernelConfiguration())
        let devices = try await adapter.scan(ScanOptions(active: true))
        #expect(controller.commands.filter { $0 == Self.scanOn }.count == 1)
        // The kernel's own passive scan parameters, then its disable, as it sends them.
        controller.transport.inject(Self.foreign(.leSetScanEnable(enable: false, filterDuplicates: false)))
        try await controller.waitForCommands(2) { $0 == Self.scanOn }
        let parameters = controller.commands.compactMap { command -> HCICommand.ScanParameters? in
            if case .leSetScanParameters(let parameters) = command { parameters } else { nil }
        }
        #expect(parameters.count == 2 && parameters.last?.type == .active, "its own parameters again: \(parameters)")
        // A command that stops nothing (an enable, another command) changes nothing.
        controller.transport.inject(Self.foreign(.leSetScanEnable(enable: true, filterDuplicates: true)))
        controller.transport.inject(Self.foreign(.readBDADDR))
        #expect(try await strapReportArrives(controller, devices))
        #expect(controller.commands.filter { $0 == Self.scanOn }.count == 2)
        await adapter.close()
    }

    @Test("a stop that comes while the scan is being switched on again still leaves the controller not scanning")
    func stopDuringTheResume() async throws {
        // The resume's Set Scan Parameters is held unanswered until the stop has begun.
        let parametersSeen = Mutex(0)
        let controller = ScriptedController { command in
            switch command {
            case .readBDADDR: return [ScriptedController.complete(command.opcode, [0x00, 0x01, 0x00, 0x00, 0xDC, 0x1B, 0x00])]
            case .leSetScanParameters:
                let count = parametersSeen.withLock { $0 += 1; return $0 }
                return count == 2 ? [] : [ScriptedController.complete(command.opcode)]
            default: return ScriptedController.minimal(command)
            }
        }
        _ = controller.run()
        let adapter = try await Adapter.open(controller.transport, configuration: kernelConfiguration())
        let devices = try await adapter.scan(ScanOptions(active: true))
        controller.transport.inject(Self.foreign(.leSetScanEnable(enable: false, filterDuplicates: false)))
        try await controller.waitForCommands(2) { if case .leSetScanParameters = $0 { true } else { false } }
        let stop = Task { try await adapter.stopScanning() }
        // The stop has begun once the scan's sequence ends (it finishes it first).
        try await within(seconds: 30) { for try await _ in devices {} }
        // `stopScanning` ended the sequence and started its stop task in one job on the
        // adapter's loop; a read of the adapter, queued behind that task's first job, returns
        // once the stop waits for the resume (the loop runs its jobs in order).
        _ = await adapter.ownAddressChanges
        controller.transport.inject(ScriptedController.complete(.leSetScanParameters))
        try await within(seconds: 30) { try await stop.value }
        let enables = controller.commands.filter { if case .leSetScanEnable = $0 { true } else { false } }
        #expect(enables.last == .leSetScanEnable(enable: false, filterDuplicates: false), "\(enables)")
        await adapter.close()
    }

    @Test("with no scan running, or on rawble's own host, another program's scan disable is left alone")
    func nothingToResume() async throws {
        for owner in [ControllerOwner.kernel, .host] {
            let controller = kernelController()
            _ = controller.run()
            var configuration = configuration()
            configuration.owner = owner
            let adapter = try await Adapter.open(controller.transport, configuration: configuration)
            if owner == .host {
                let devices = try await adapter.scan()
                controller.transport.inject(Self.foreign(.leSetScanEnable(enable: false, filterDuplicates: false)))
                withExtendedLifetime(devices) {}
            } else {
                controller.transport.inject(Self.foreign(.leSetScanEnable(enable: false, filterDuplicates: false)))
            }
            // The adapter handles packets in order: a command answered after the injection
            // proves the injected one was seen.
            _ = try await adapter.execute(.readBDADDR)
            #expect(controller.commands.filter { $0 == Self.scanOn }.count == (owner == .host ? 1 : 0), "\(owner)")
            await adapter.close()
        }
    }
}

@Suite("Adapter on a kernel-owned controller: a scan of another program is never switched off")
struct AdapterForeignScanSharedTests {
    private static let scanOn = HCICommand.leSetScanEnable(enable: true, filterDuplicates: false)

    private static func foreign(_ command: HCICommand) -> H4Packet {
        H4Packet(type: .command, bytes: command.encoded)
    }

    /// Switched off behind the kernel's back, the kernel's discovery scan never ends and finds
    /// nothing more, and the kernel makes no LE connection (seen beside a discovering
    /// bluetoothd: gatt's scan for the address type did it).
    @Test("the controller already scans for the kernel (Set Scan Parameters: Command Disallowed): the scan reads its reports and sends no Set Scan Enable, on or off")
    func readsTheKernelsScan() async throws {
        let controller = ScriptedController { command in
            switch command {
            case .readBDADDR: [ScriptedController.complete(command.opcode, [0x00, 0x01, 0x00, 0x00, 0xDC, 0x1B, 0x00])]
            case .leSetScanParameters: [ScriptedController.complete(command.opcode, [HCIStatus.commandDisallowed.rawValue])]
            default: ScriptedController.minimal(command)
            }
        }
        _ = controller.run()
        let adapter = try await Adapter.open(controller.transport, configuration: kernelConfiguration())
        let devices = try await within(seconds: 30) { try await adapter.scan(ScanOptions(active: false)) }
        #expect(try await strapReportArrives(controller, devices))
        try await within(seconds: 30) { try await adapter.stopScanning() }
        #expect(!controller.commands.contains(where: isScanEnable), "\(controller.commands)")
        await adapter.close()
    }

    @Test("the kernel switches scanning on under a scan of rawble's own (its discovery, with its parameters): the stop leaves it on")
    func kernelsEnableMakesItTheKernels() async throws {
        let controller = kernelController()
        _ = controller.run()
        let adapter = try await Adapter.open(controller.transport, configuration: kernelConfiguration())
        let devices = try await adapter.scan(ScanOptions(active: false))
        #expect(controller.commands.filter { $0 == Self.scanOn } .count == 1)
        controller.transport.inject(Self.foreign(.leSetScanEnable(enable: true, filterDuplicates: true)))
        #expect(try await strapReportArrives(controller, devices))
        try await within(seconds: 30) { try await adapter.stopScanning() }
        #expect(controller.commands.last(where: isScanEnable) == Self.scanOn, "no disable: \(controller.commands)")
        await adapter.close()
    }

    @Test("the kernel switches scanning off and on again (its discovery starting): rawble's scan does not start its own again, and leaves the kernel's on")
    func kernelRestartsItsScan() async throws {
        let controller = kernelController()
        _ = controller.run()
        let clock = ManualClock()
        let adapter = try await Adapter.open(controller.transport, configuration: kernelConfiguration(clock: clock))
        let devices = try await adapter.scan(ScanOptions(active: false))
        controller.transport.inject(Self.foreign(.leSetScanEnable(enable: false, filterDuplicates: false)))
        controller.transport.inject(Self.foreign(.leSetScanParameters(HCICommand.ScanParameters(
            type: .active, interval: 0x12, window: 0x12, ownAddressType: .random, filterPolicy: .basicUnfiltered))))
        controller.transport.inject(Self.foreign(.leSetScanEnable(enable: true, filterDuplicates: true)))
        // Its answer comes after the three: once it is back, the adapter has read them all (the
        // enable too) before the resume's wait ends.
        _ = try await adapter.execute(.readBDADDR)
        // Past the time a resume waits (its timer armed when the disable was read), the adapter decides.
        try await clock.advanceOnceArmed(by: Adapter.foreignScanSettleTime)
        _ = try await adapter.execute(.readBDADDR)
        let parameters = controller.commands.filter { if case .leSetScanParameters = $0 { true } else { false } }
        #expect(parameters.count == 1, "no scan of its own again: \(controller.commands)")
        #expect(try await strapReportArrives(controller, devices))
        // The stop waits for a resume still under way: what it would send is in by then.
        try await within(seconds: 30) { try await adapter.stopScanning() }
        #expect(controller.commands.filter(isScanEnable) == [Self.scanOn], "\(controller.commands)")
        #expect(controller.commands.filter { if case .leSetScanParameters = $0 { true } else { false } }.count == 1,
                "no scan of its own again: \(controller.commands)")
        await adapter.close()
    }
}

/// What an adapter asked of its ``ScanControl``, answering as told.
private final class RecordingScanControl: ScanControl {
    private let log = Mutex<[String]>([])
    private let outcome: ScanControlOutcome

    init(answering outcome: ScanControlOutcome) {
        self.outcome = outcome
    }

    var calls: [String] { log.withLock { $0 } }

    func startScanning(active: Bool) async throws(HostError) -> ScanControlOutcome {
        log.withLock { $0.append("start \(active ? "active" : "passive")") }
        return outcome
    }

    func stopScanning() async throws(HostError) {
        log.withLock { $0.append("stop") }
    }
}

@Suite("Adapter on a kernel-owned controller: scans asked of the kernel (ScanControl)")
struct AdapterScanControlTests {

    private static func isScanCommand(_ command: HCICommand) -> Bool {
        switch command {
        case .leSetScanParameters, .leSetScanEnable, .leSetExtendedScanParameters, .leSetExtendedScanEnable: true
        default: false
        }
    }

    @Test("the kernel scans: the adapter sends no scan command, reads the reports of the kernel's scan, leaves a foreign disable to the kernel, and stops through the control")
    func noScanCommandOfItsOwn() async throws {
        let controller = kernelController()
        _ = controller.run()
        let control = RecordingScanControl(answering: .scanning)
        var configuration = kernelConfiguration()
        configuration.scanControl = control
        let adapter = try await Adapter.open(controller.transport, configuration: configuration)
        let devices = try await adapter.scan(ScanOptions(active: true))
        #expect(control.calls == ["start active"])
        // The kernel's own commands around its scan, copied to the raw socket: nothing to resume.
        controller.transport.inject(H4Packet(type: .command, bytes: HCICommand.leSetScanEnable(enable: false, filterDuplicates: true).encoded))
        let strap = BluetoothAddress(0xC0_B1_E0_00_00_01)
        controller.transport.inject(.le(.advertisingReport([AdvertisingReport(
            legacy: .advNonconnInd, addressType: .random, address: strap, rssi: -48,
            data: [0x02, 0x01, 0x06, 0x03, 0x03, 0x0D, 0x18, 0x03, 0x03, 0x0D, 0x18][...])])))
        let first = try await within(seconds: 10) { () -> DiscoveredDevice? in
            for try await device in devices { return device }
            return nil
        }
        #expect(first?.address.address == strap)
        #expect(first?.serviceUUIDs == [.heartRateService], "the list repeated: each service once")
        try await adapter.stopScanning()
        #expect(control.calls == ["start active", "stop"])
        #expect(!controller.commands.contains(where: Self.isScanCommand), "\(controller.commands)")
        await adapter.close()
    }

    @Test("the kernel declines (passive, or no CAP_NET_ADMIN): the adapter scans with its own commands and stops them itself")
    func declinedFallsBackToOwnCommands() async throws {
        let controller = kernelController()
        _ = controller.run()
        let control = RecordingScanControl(answering: .declined(reason: "passive"))
        var configuration = kernelConfiguration()
        configuration.scanControl = control
        let adapter = try await Adapter.open(controller.transport, configuration: configuration)
        // Kept until the checks: a scan whose devices nobody holds is stopped (its stream's end),
        // which on a loaded machine came before the check of the last command (a flake).
        let devices = try await adapter.scan(ScanOptions(active: false))
        #expect(control.calls == ["start passive"])
        let parameters = controller.commands.compactMap { command -> HCICommand.ScanParameters? in
            if case .leSetScanParameters(let parameters) = command { parameters } else { nil }
        }
        #expect(parameters.last?.type == .passive)
        #expect(controller.commands.last == .leSetScanEnable(enable: true, filterDuplicates: false))
        withExtendedLifetime(devices) {}
        try await adapter.stopScanning()
        #expect(control.calls == ["start passive"], "the control's stop is for a scan it runs")
        #expect(controller.commands.last == scanOff)
        await adapter.close()
    }
}

@Suite("Adapter on a kernel-owned controller: connections rawble did not ask for")
struct AdapterForeignConnectionTests {
    /// bluetoothd (or `bluetoothctl connect`, or the kernel's auto-connect) makes its own links
    /// on the shared adapter; the raw channel sees their LE Connection Complete and Disconnection
    /// Complete. They are the kernel's: rawble takes none for its own, disconnects none, and
    /// its scan goes on.
    @Test("another program's links (central and peripheral role) are ignored: no Disconnect, the scan goes on")
    func othersLinksAreLeftAlone() async throws {
        let controller = kernelController()
        _ = controller.run()
        let adapter = try await Adapter.open(controller.transport, configuration: kernelConfiguration())
        let devices = try await adapter.scan(ScanOptions(active: true))
        controller.transport.inject(ScriptedController.connectionComplete(handle: 0x0041, role: .central))
        controller.transport.inject(ScriptedController.connectionComplete(handle: 0x0042, role: .peripheral))
        controller.transport.inject(.disconnectionComplete(.init(status: .success, connectionHandle: 0x0041,
                                                                 reason: .remoteUserTerminatedConnection)))
        // A report after them still arrives: the events before it were handled.
        #expect(try await strapReportArrives(controller, devices))
        #expect(!controller.commands.contains { if case .disconnect = $0 { true } else { false } }, "\(controller.commands)")
        #expect(!controller.commands.contains(.leSetScanEnable(enable: false, filterDuplicates: false)), "\(controller.commands)")
        try await adapter.stopScanning()
        await adapter.close()
        #expect(!controller.commands.contains { if case .disconnect = $0 { true } else { false } }, "closing left them alone too")
    }
}
