import RawbleGATT
import RawbleTestSupport
import Testing

/// The procedure-test example of docs/library.md, as written there.
@Suite("README examples (GATT)")
struct GATTReadmeExampleTests {
    @Test("a read on a scripted server")
    func scriptedRead() async throws {
        let server = ScriptedATTBearer()
        server.expect([0x0A, 0x03, 0x00], reply: [[0x0B, 0x01]])    // Read Request 0x0003 → Read Response 01
        let att = ATTClient(bearer: server)
        #expect(try await att.run(ReadValue(handle: 0x0003)) == [0x01])
        #expect(server.remainingExpectations == 0)
    }
}
