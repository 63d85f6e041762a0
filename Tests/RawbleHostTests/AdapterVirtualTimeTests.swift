import RawbleHost
import RawbleTestSupport
import RawbleWire
import Testing

// The adapter's longer bounds, in virtual time (a ManualClock in its configuration): each
// would cost a test seconds of real waiting, so none was tested before the clock was injected.

private func isUpdate(_ command: HCICommand) -> Bool {
    if case .leConnectionUpdate = command { true } else { false }
}

@Suite("Adapter: its longer bounds, in virtual time")
struct AdapterVirtualTimeTests {
    @Test("a Create Connection Cancel whose Connection Complete never comes: the attempt ends as a timeout after the 2 s grace period, not before")
    func cancelGracePeriod() async throws {
        let controller = ScriptedController { command in
            switch command {
            case .leCreateConnection: [ScriptedController.status(command.opcode)]
            case .leCreateConnectionCancel: [ScriptedController.complete(command.opcode)]
            default: ScriptedController.minimal(command)
            }
        }
        let pump = controller.run()
        let clock = ManualClock()
        let adapter = try await Adapter.open(controller.transport, configuration: quietConfiguration(clock: clock))
        let connecting = Task { try await adapter.connect(to: ScriptedController.peer, timeout: .seconds(1)) }
        try await clock.advanceOnceArmed(by: .seconds(1))
        try await controller.waitForCommand(.leCreateConnectionCancel)
        // The grace period's timer: not due a millisecond early, due at 2 s.
        try await within(seconds: 60) { try await clock.waitForSleepers(dueWithin: .seconds(2)) }
        #expect(clock.advance(by: .seconds(2) - .milliseconds(1)) == 0)
        #expect(clock.advance(by: .milliseconds(1)) == 1)
        await #expect(throws: HostError.connectionTimedOut(ScriptedController.peer, seconds: 1)) {
            _ = try await within(seconds: 60) { try await connecting.value }
        }
        await adapter.close()
        pump.cancel()
    }

    @Test("a Disconnection Complete that never comes: disconnect fails with its timeout, naming Disconnect")
    func disconnectionNeverCompletes() async throws {
        let controller = ScriptedController { command in
            if case .disconnect = command { return [ScriptedController.status(command.opcode)] }
            return ScriptedController.minimal(command)
        }
        let pump = controller.run()
        let clock = ManualClock()
        let adapter = try await Adapter.open(controller.transport, configuration: quietConfiguration(clock: clock))
        let connection = try await adapter.connect(to: ScriptedController.peer)
        let disconnecting = Task { try await connection.disconnect(timeout: .seconds(5)) }
        try await controller.waitForCommand(.disconnect(handle: ScriptedController.handle, reason: .remoteUserTerminatedConnection))
        try await clock.advanceOnceArmed(by: .seconds(5))
        await #expect(throws: HostError.commandTimedOut(.disconnect, seconds: 5)) {
            try await within(seconds: 60) { try await disconnecting.value }
        }
        // The link is still up: closing disconnects it again, and that wait (2 s) is bounded too.
        try await within(seconds: 60) {
            try await clock.run(advancingToDeadlinesWithin: .seconds(2)) { await adapter.close() }
        }
        #expect(controller.commands.filter { if case .disconnect = $0 { true } else { false } }.count == 2)
        pump.cancel()
    }

    @Test("an LE Connection Update the controller never completes holds the next one back for 10 s, then lets it go")
    func parameterUpdateNeverCompletes() async throws {
        let controller = ScriptedController()
        let pump = controller.run()
        let clock = ManualClock()
        // Command timers far beyond the update's 10 s, so that its timer is the only one due.
        let configuration = quietConfiguration(commandTimeout: .seconds(60), resetTimeout: .seconds(60), clock: clock)
        let adapter = try await Adapter.open(controller.transport, configuration: configuration)
        _ = try await adapter.connect(to: ScriptedController.peer)
        AdapterFixedChannelTests.inject(AdapterParameterUpdateTests.request(id: 1, minimum: 25), channel: 0x0005, into: controller)
        _ = try await AdapterParameterUpdateTests.updates(atLeast: 1, controller)
        AdapterFixedChannelTests.inject(AdapterParameterUpdateTests.request(id: 2, minimum: 30), channel: 0x0005, into: controller)
        // Both requests answered on the signaling channel; the second update waits.
        #expect(await controller.waitForACL(count: 2).count == 2)
        try await adapter.execute(.leSetScanEnable(enable: false, filterDuplicates: false))  // the host went on
        #expect(controller.commands.filter(isUpdate).count == 1, "the second waits for the first's Complete")
        try await clock.advanceOnceArmed(by: .seconds(10))
        let updates = try await AdapterParameterUpdateTests.updates(atLeast: 2, controller)
        guard case let .leConnectionUpdate(_, parameters)? = updates.last else {
            Issue.record("expected LE Connection Update, got \(String(describing: updates.last))")
            return
        }
        #expect(parameters.intervalMin == 30)
        await adapter.close()
        pump.cancel()
    }
}
