import RawbleHost
import RawbleHostCore
import RawbleTestSupport
import RawbleWire
import Testing

// Connection Parameter Update Requests from the peer: each is answered, but the controller is
// asked for one LE Connection Update at a time per connection, the newest request winning.

private func isUpdate(_ command: HCICommand) -> Bool {
    if case .leConnectionUpdate = command { true } else { false }
}

@Suite("Adapter: connection parameter updates")
struct AdapterParameterUpdateTests {
    /// A Connection Parameter Update Request (identifier `id`): interval `minimum`–`minimum + 16`,
    /// latency 0, supervision timeout 400.
    static func request(id: UInt8, minimum: UInt16) -> [UInt8] {
        let maximum = minimum + 16
        return [0x12, id, 0x08, 0x00, UInt8(minimum & 0xFF), UInt8(minimum >> 8),
                UInt8(maximum & 0xFF), UInt8(maximum >> 8), 0x00, 0x00, 0x90, 0x01]
    }

    static func updateComplete(interval: UInt16) -> HCIEvent {
        .le(.connectionUpdateComplete(.init(status: .success, connectionHandle: ScriptedController.handle,
                                            connectionInterval: interval, peripheralLatency: 0, supervisionTimeout: 400)))
    }

    /// Waits (bounded) until the controller received `count` LE Connection Update commands.
    static func updates(atLeast count: Int, _ controller: ScriptedController) async throws -> [HCICommand] {
        try await controller.waitForCommands(count, where: isUpdate)
    }

    @Test("a burst of accepted requests gives one LE Connection Update at a time; the newest request supersedes the queued ones")
    func burstIsSerialized() async throws {
        let (controller, adapter, connection, pump) = try await AdapterFixedChannelTests.connected()
        let burst = 10
        // The first request: the controller is asked for it at once, and the update stays in
        // progress until its Complete event.
        AdapterFixedChannelTests.inject(Self.request(id: 1, minimum: 25), channel: 0x0005, into: controller)
        let first = try await Self.updates(atLeast: 1, controller)
        guard case let .leConnectionUpdate(_, parameters)? = first.first else { return }
        #expect(parameters.intervalMin == 25)
        // The rest of the burst arrives meanwhile.
        for index in 2...burst {
            AdapterFixedChannelTests.inject(Self.request(id: UInt8(index), minimum: 24 + UInt16(index)), channel: 0x0005, into: controller)
        }
        // Every request is answered (accepted) on the signaling channel.
        let answers = await controller.waitForACL(count: burst)
        #expect(answers.count == burst)
        #expect(answers.map { $0.payload[$0.payload.startIndex + 5] } == (1...burst).map { UInt8($0) })
        try await adapter.execute(.leSetScanEnable(enable: false, filterDuplicates: false))  // the host went on
        #expect(controller.commands.filter(isUpdate).count == 1, "one LE Connection Update in flight, not \(burst)")

        // Its completion lets the newest request through; the ones in between are superseded.
        controller.transport.inject(Self.updateComplete(interval: 30))
        let second = try await Self.updates(atLeast: 2, controller)
        guard case let .leConnectionUpdate(handle, latest)? = second.last else { return }
        #expect(handle == ScriptedController.handle)
        #expect(latest.intervalMin == 24 + UInt16(burst) && latest.intervalMax == 40 + UInt16(burst))
        controller.transport.inject(Self.updateComplete(interval: 40))
        try await adapter.execute(.leSetScanEnable(enable: false, filterDuplicates: false))
        #expect(controller.commands.filter(isUpdate).count == 2)
        #expect(await connection.currentParameters()?.interval == 40)
        await adapter.close()
        pump.cancel()
    }
}
