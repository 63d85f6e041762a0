import RawbleBearer
import RawbleGATT
import RawbleGATTCore
import RawbleHCITransport
import RawbleHost
import RawbleHostCore
import RawbleTestSupport
import RawbleTransport
import RawbleWire
import Synchronization
import Testing

// The ATT client on the host's own ATT bearer, over a controller the test plays byte by byte
// (InMemoryHCITransport): what the link does when the controller is slow to return credits.

/// A minimal controller (3 ACL buffers of 27 bytes) that completes no ACL packet by itself: the
/// test returns the credits (Number Of Completed Packets) when it wants. A Read Request from
/// the host is answered by the peer at once with one byte, the handle's low byte.
private func slowCreditController() -> ScriptedController {
    ScriptedController(completesACLAtOnce: false) { fragment in
        let payload = Array(fragment.payload)
        guard payload.count == 7, payload[2...4] == [0x04, 0x00, 0x0A] else { return [] }
        let response: [UInt8] = [0x02, 0x00, 0x04, 0x00, 0x0B, payload[5]]
        return [H4Packet(type: .acl, bytes: ACLPacket(handle: ScriptedController.handle, packetBoundary: .firstFlushable,
                                                       payload: response[...]).encoded)]
    }
}

private func quietHost() -> Adapter.Configuration {
    var configuration = Adapter.Configuration()
    configuration.commandTimeout = .seconds(10)
    configuration.resetTimeout = .seconds(10)
    configuration.logger.logLevel = .critical
    return configuration
}

@Suite("ATT client over the host: back-pressure")
struct ATTOverHostBackPressureTests {
    @Test("a burst of Write Commands larger than the outgoing ACL queue waits for credits: all are sent in order, the link and the client stay usable")
    func writeCommandBurst() async throws {
        let controller = slowCreditController()
        controller.run()
        let adapter = try await Adapter.open(controller.transport, configuration: quietHost())
        let connection = try await adapter.connect(to: ScriptedController.peer, timeout: .seconds(5))
        var attConfiguration = ATTClient.Configuration()
        attConfiguration.logger.logLevel = .critical
        let client = ATTClient(bearer: connection.att, configuration: attConfiguration)

        // 3 controller buffers + 256 queued fragments: the 260th write finds the queue full.
        let burst = 300
        let started = Recording<Int>()
        let writer = Task {
            for index in 0..<burst {
                started.append(index + 1)
                try await client.send(command: .writeCommand(handle: 0x0010, value: [UInt8(index & 0xFF), UInt8(index >> 8)]))
            }
        }
        // The controller returns credits only once the writer is blocked on (or failed at) the
        // full queue, then as it "transmits" them.
        try await started.wait(until: { $0.count >= 260 })
        let completer = controller.completingSentPackets()
        let outcome = try await within(seconds: 30) { await writer.result }
        #expect(throws: Never.self) { try outcome.get() }

        let writes = await controller.waitForACL(count: burst, timeout: .seconds(60))
        completer.cancel()
        #expect(writes.count == burst)
        let expected = (0..<burst).map { index -> [UInt8] in [0x05, 0x00, 0x04, 0x00, 0x52, 0x10, 0x00, UInt8(index & 0xFF), UInt8(index >> 8)] }
        #expect(writes.map { Array($0.payload) } == expected, "every write sent once, in order")
        #expect(connection.ending == nil, "the link is still up")

        // The client still works: a request and its response.
        let completing = controller.completingSentPackets()
        let response = try await within(seconds: 10) { try await client.request(.readRequest(handle: 0x0003)) }
        completing.cancel()
        #expect(response == .readResponse(value: [0x03]))
        await adapter.close()
    }

    @Test("a send that finds no room within the bound fails with a timeout, and one cancelled while waiting fails as cancelled; the link stays up")
    func blockedSendBounds() async throws {
        let controller = slowCreditController()
        controller.run()
        var configuration = quietHost()
        configuration.aclSendTimeout = .milliseconds(200)
        let clock = ManualClock()
        configuration.clock = clock
        let adapter = try await Adapter.open(controller.transport, configuration: configuration)
        let connection = try await adapter.connect(to: ScriptedController.peer, timeout: .seconds(5))
        // 3 in the controller's buffers, 256 queued: full.
        for index in 0..<259 {
            try await connection.att.send([0x52, 0x10, 0x00, UInt8(index & 0xFF)])
        }
        let blocked = Task { try await connection.att.send([0x52, 0x10, 0x00, 0xFF]) }
        try await clock.advanceOnceArmed(by: .milliseconds(200))
        await #expect(throws: BearerError.timedOut(operation: "waiting 0.2 s for room in the outgoing ACL queue of connection 0x40")) {
            try await within(seconds: 10) { try await blocked.value }
        }
        let cancelled = Task { try await connection.att.send([0x52, 0x10, 0x00, 0xFE]) }
        cancelled.cancel()
        await #expect(throws: BearerError.cancelled) { try await within(seconds: 10) { try await cancelled.value } }
        #expect(connection.ending == nil, "the link is still up")
        // Credits come back: sending works again.
        _ = controller.completeSentPackets()
        try await within(seconds: 10) { try await connection.att.send([0x52, 0x10, 0x00, 0xFD]) }
        await adapter.close()
    }
}
