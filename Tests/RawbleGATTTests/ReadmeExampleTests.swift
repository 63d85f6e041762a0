import RawbleBearer
import RawbleGATT
import RawbleGATTCore
import RawbleTestSupport
import RawbleWire
import Testing

/// The procedure-test example of docs/library.md, as written there.
@Suite("README examples (GATT)")
struct GATTReadmeExampleTests {
    @Test("a read on a scripted server")
    func scriptedRead() async throws {
        let server = ScriptedATTBearer()
        server.expect([0x0A, 0x03, 0x00], reply: [[0x0B, 0x01]])    // Read Request 0x0003 → Read Response 01
        let att = ATTClient(bearer: server)
        let value = try await att.run(ReadValue(handle: 0x0003))
        #expect(value == [0x01])                                      // the value shows when it differs
        #expect(server.remainingExpectations == 0)
    }

    @Test("the same script with a read of another handle fails at once with the line the docs show")
    func scriptedReadMismatch() async throws {
        let server = ScriptedATTBearer()
        server.expect([0x0A, 0x03, 0x00], reply: [[0x0B, 0x01]])
        let att = ATTClient(bearer: server)
        await #expect(throws: (any Error).self) { _ = try await att.run(ReadValue(handle: 0x0005)) }
        #expect(server.mismatch == "script step 1 of 1: expected 0A 03 00, sent 0A 05 00")
    }
}
