import RawbleHost
import RawbleHostCore
import RawbleTestSupport
import RawbleWire
import Testing

// Task cancellation reaches every wait of the host: each test cancels a task blocked on a
// controller that never answers, and the task must end at once (within(seconds:) bounds it
// even if it does not) with HostError.cancelled, the controller told where it matters.

private func configuration() -> Adapter.Configuration {
    var configuration = Adapter.Configuration()
    configuration.commandTimeout = .seconds(30)
    configuration.resetTimeout = .seconds(30)
    configuration.logger.logLevel = .critical
    return configuration
}

private func isCreateConnection(_ command: HCICommand) -> Bool {
    if case .leCreateConnection = command { true } else { false }
}

/// A controller that starts connecting but never completes a connection; LE Create
/// Connection Cancel is answered as the specification says (Command Complete, then LE
/// Connection Complete with Unknown Connection Identifier).
private func neverConnects() -> ScriptedController {
    ScriptedController { command in
        switch command {
        case .leCreateConnection: [ScriptedController.status(command.opcode)]
        case .leCreateConnectionCancel:
            [ScriptedController.complete(command.opcode), ScriptedController.connectionComplete(status: .unknownConnectionIdentifier)]
        default: ScriptedController.minimal(command)
        }
    }
}

@Suite("Adapter: task cancellation")
struct AdapterCancellationTests {
    @Test("cancelling connect to a peer that never connects ends the task at once; the controller gets LE Create Connection Cancel")
    func cancelConnect() async throws {
        let controller = neverConnects()
        _ = controller.run()
        let adapter = try await Adapter.open(controller.transport, configuration: configuration())
        let attempt = Task { try await adapter.connect(to: ScriptedController.peer, timeout: .seconds(60)) }
        try await controller.waitForCommand(where: isCreateConnection)
        attempt.cancel()
        await #expect(throws: HostError.cancelled) { _ = try await within(seconds: 5) { try await attempt.value } }
        #expect(controller.commands.contains(.leCreateConnectionCancel))
        // The adapter is free for the next attempt.
        let next = Task { try await adapter.connect(to: ScriptedController.peer, timeout: .seconds(60)) }
        try await controller.waitForCommands(2, where: isCreateConnection)
        next.cancel()
        await #expect(throws: HostError.cancelled) { _ = try await within(seconds: 5) { try await next.value } }
        await adapter.close()
    }

    @Test("a connect waiting for its turn behind another attempt ends at once when cancelled")
    func cancelConnectWaitingForItsTurn() async throws {
        let controller = neverConnects()
        _ = controller.run()
        let adapter = try await Adapter.open(controller.transport, configuration: configuration())
        let first = Task { try await adapter.connect(to: ScriptedController.peer, timeout: .seconds(60)) }
        try await controller.waitForCommand(where: isCreateConnection)
        let second = Task { try await adapter.connect(to: ScriptedController.peer, timeout: .seconds(60)) }
        second.cancel()
        await #expect(throws: HostError.cancelled) { _ = try await within(seconds: 5) { try await second.value } }
        #expect(controller.commands.filter(isCreateConnection).count == 1)
        first.cancel()
        await #expect(throws: HostError.cancelled) { _ = try await within(seconds: 5) { try await first.value } }
        await adapter.close()
    }

    @Test("a command waiting for a credit the controller never grants ends at once when cancelled, and is never sent")
    func cancelCommandWaitingForCredit() async throws {
        let controller = ScriptedController { command in
            if command == .leSetScanEnable(enable: false, filterDuplicates: false) {
                return [.commandComplete(.init(numHCICommandPackets: 0, opcode: command.opcode, returnParameters: [0x00]))]
            }
            return ScriptedController.minimal(command)
        }
        _ = controller.run()
        let adapter = try await Adapter.open(controller.transport, configuration: configuration())
        try await adapter.execute(.leSetScanEnable(enable: false, filterDuplicates: false))  // credits now 0
        let waiting = Task { try await adapter.execute(.leSetScanParameters(.init(
            type: .passive, interval: 16, window: 16, ownAddressType: .random, filterPolicy: .basicUnfiltered))) }
        waiting.cancel()
        await #expect(throws: HostError.cancelled) { _ = try await within(seconds: 5) { try await waiting.value } }
        #expect(!controller.commands.contains { if case .leSetScanParameters = $0 { true } else { false } })
        await adapter.close()
    }

    @Test("a command sent and never answered stops being awaited when cancelled")
    func cancelCommandAwaitingItsAnswer() async throws {
        let controller = ScriptedController { command in
            command == .leSetScanEnable(enable: false, filterDuplicates: false) ? nil : ScriptedController.minimal(command)
        }
        _ = controller.run()
        let adapter = try await Adapter.open(controller.transport, configuration: configuration())
        let waiting = Task { try await adapter.execute(.leSetScanEnable(enable: false, filterDuplicates: false)) }
        try await controller.waitForCommand { $0 == .leSetScanEnable(enable: false, filterDuplicates: false) }
        waiting.cancel()
        await #expect(throws: HostError.cancelled) { _ = try await within(seconds: 5) { try await waiting.value } }
        await adapter.close()
    }

    @Test("waiting for a link's end and for a Disconnection Complete that never comes both end at once when cancelled")
    func cancelLinkWaits() async throws {
        let controller = ScriptedController { command in
            if case .disconnect = command { return [ScriptedController.status(command.opcode)] }
            return ScriptedController.minimal(command)
        }
        _ = controller.run()
        let adapter = try await Adapter.open(controller.transport, configuration: configuration())
        let connection = try await adapter.connect(to: ScriptedController.peer, timeout: .seconds(10))
        let watcher = Task { await connection.waitUntilDisconnected() }
        watcher.cancel()
        #expect(try await within(seconds: 5) { await watcher.value } == .cancelled)
        #expect(connection.ending == nil, "cancelling a waiter does not end the link")

        let disconnecting = Task { try await connection.disconnect(timeout: .seconds(60)) }
        try await controller.waitForCommand { if case .disconnect = $0 { true } else { false } }
        disconnecting.cancel()
        await #expect(throws: HostError.cancelled) { try await within(seconds: 5) { try await disconnecting.value } }
        controller.transport.inject(.disconnectionComplete(.init(status: .success, connectionHandle: ScriptedController.handle, reason: .connectionTerminatedByLocalHost)))
        #expect(try await within(seconds: 5) { await connection.waitUntilDisconnected() } == .disconnected(.connectionTerminatedByLocalHost))
        await adapter.close()
    }

    @Test("close from a cancelled task still disconnects and closes")
    func closeFromACancelledTask() async throws {
        let controller = ScriptedController()
        _ = controller.run()
        let adapter = try await Adapter.open(controller.transport, configuration: configuration())
        let connection = try await adapter.connect(to: ScriptedController.peer, timeout: .seconds(10))
        let closing = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await adapter.close()
        }
        try await within(seconds: 10) { await closing.value }
        #expect(controller.commands.contains { if case .disconnect = $0 { true } else { false } })
        #expect(connection.ending == .disconnected(.connectionTerminatedByLocalHost))
    }
}
