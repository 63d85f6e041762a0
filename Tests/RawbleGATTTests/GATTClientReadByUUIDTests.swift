import RawbleBearer
import RawbleGATT
import RawbleGATTCore
import RawbleTestSupport
import RawbleWire
import Testing

@Suite("GATT client: reading by characteristic UUID")
struct GATTClientReadByUUIDTests {
    @Test("read(.batteryLevel) is Read By Type over every handle until Attribute Not Found; no discovery")
    func readsWithoutDiscovery() async throws {
        let server = ScriptedATTBearer()
        server.expect([0x08, 0x01, 0x00, 0xFF, 0xFF, 0x19, 0x2A], reply: [[0x09, 0x03, 0x03, 0x00, 0x55]])
        server.expect([0x08, 0x04, 0x00, 0xFF, 0xFF, 0x19, 0x2A], reply: [[0x01, 0x08, 0x04, 0x00, 0x0A]])
        let gatt = GATTClient(att: ATTClient(bearer: server))
        let values = try await gatt.read(.batteryLevel)
        #expect(values == [GATTHandleValue(handle: 0x0003, value: [0x55])])
        #expect(server.remainingExpectations == 0)
    }

    @Test("a value the server cut at ATT_MTU − 4 bytes is read again whole at its handle")
    func cutValueIsReadWhole() async throws {
        let cut = [UInt8](repeating: 0x41, count: 19)      // 23 − 4: as much as the response holds
        let whole = [UInt8](repeating: 0x41, count: 20)
        let server = ScriptedATTBearer()
        server.expect([0x08, 0x01, 0x00, 0xFF, 0xFF, 0x29, 0x2A], reply: [[0x09, 0x15, 0x03, 0x00] + cut])
        server.expect([0x08, 0x04, 0x00, 0xFF, 0xFF, 0x29, 0x2A], reply: [[0x01, 0x08, 0x04, 0x00, 0x0A]])
        server.expect([0x0A, 0x03, 0x00], reply: [[0x0B] + whole])
        let gatt = GATTClient(att: ATTClient(bearer: server))
        #expect(try await gatt.read(.manufacturerNameString) == [GATTHandleValue(handle: 0x0003, value: whole)])
    }

    @Test("none on the device: an empty list after one request")
    func noneFound() async throws {
        let server = ScriptedATTBearer()
        server.expect([0x08, 0x01, 0x00, 0xFF, 0xFF, 0x19, 0x2A], reply: [[0x01, 0x08, 0x01, 0x00, 0x0A]])
        let gatt = GATTClient(att: ATTClient(bearer: server))
        let values = try await gatt.read(.batteryLevel)
        #expect(values.isEmpty)
    }
}
