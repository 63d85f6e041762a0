@testable import RawbleHost
import RawbleBearer
import RawbleHostCore
import RawbleWire
import Synchronization
import Testing

// LinkRouter on packets alone: no adapter, no transport, no controller. What it writes goes to
// an outbound stream the test reads after finishing it.

/// Collects the ATT PDUs the router hands to a connection's inbox.
private final class CollectingReceiver: ATTPDUReceiver {
    let pdus = Mutex<[[UInt8]]>([])
    func receive(_ pdu: ArraySlice<UInt8>) { pdus.withLock { $0.append(Array(pdu)) } }
    func bearerEnded(_ error: BearerError) {}
}

@Suite("LinkRouter: reassembly and routing of received ACL data")
struct LinkRouterTests {
    static let handle: UInt16 = 0x0040

    let router: LinkRouter
    let record: ConnectionRecord
    let outbound: AsyncStream<H4Packet>.Continuation
    let written: AsyncStream<H4Packet>

    init() throws {
        (written, outbound) = AsyncStream.makeStream(of: H4Packet.self)
        router = LinkRouter(maximumFrameLength: 4 + 1024, outbound: outbound, logger: Adapter.Configuration().logger)
        router.useFlowControl(try ACLFlowControl(dataLength: 27, totalPackets: 4))
        record = ConnectionRecord(
            lifetime: LinkLifetime(id: 1, handle: Self.handle),
            peer: DeviceAddress(BluetoothAddress(0xC1_22_33_44_55_66), type: .random),
            parameters: LinkParameters(interval: 24, latency: 0, supervisionTimeout: 400), attBufferLimit: 16,
            isCentral: true, pairing: nil)
        router.add(record)
    }

    /// Every ACL packet the router wrote so far (the stream is finished first, so this ends).
    func writtenACL() async throws -> [ACLPacket] {
        outbound.finish()
        var packets: [ACLPacket] = []
        for await packet in written where packet.type == .acl {
            packets.append(try ACLPacket.decode(packet.bytes[...]))
        }
        return packets
    }

    @Test("ACL data for a handle with no connection is dropped and counted; nothing is written")
    func unknownHandleDropped() async throws {
        let receiver = CollectingReceiver()
        #expect(record.attInbox.install(receiver))
        let frame = L2CAPFrame(channelID: .att, payload: [0x1B, 0x03, 0x00, 0x48]).encoded
        let request = router.receive(ACLPacket(handle: 0x0041, packetBoundary: .firstFlushable, payload: frame[...]))
        #expect(request == nil)
        #expect(router.droppedForUnknownHandle == 1)
        #expect(receiver.pdus.withLock { $0 }.isEmpty)
        #expect(try await writtenACL().isEmpty)
    }

    @Test("an ATT PDU in two fragments reaches the connection's inbox whole, once")
    func attFrameReachesInbox() async throws {
        let receiver = CollectingReceiver()
        #expect(record.attInbox.install(receiver))
        let pdu: [UInt8] = [0x1B, 0x03, 0x00, 0x48, 0x65, 0x6C, 0x6C, 0x6F]
        let frame = L2CAPFrame(channelID: .att, payload: pdu).encoded
        #expect(router.receive(ACLPacket(handle: Self.handle, packetBoundary: .firstFlushable, payload: frame[..<5])) == nil)
        #expect(receiver.pdus.withLock { $0 }.isEmpty, "half a frame is not delivered")
        #expect(router.receive(ACLPacket(handle: Self.handle, packetBoundary: .continuation, payload: frame[5...])) == nil)
        #expect(receiver.pdus.withLock { $0 } == [pdu])
        #expect(router.droppedForUnknownHandle == 0)
        #expect(try await writtenACL().isEmpty)
    }

    @Test("an LE Connection Parameter Update Request is accepted on the signaling channel and handed to the adapter")
    func signalingRequestAnswered() async throws {
        // Code 0x12, identifier 7, length 8: interval 6–12, latency 0, timeout 100 (×10 ms).
        let command: [UInt8] = [0x12, 0x07, 0x08, 0x00, 0x06, 0x00, 0x0C, 0x00, 0x00, 0x00, 0x64, 0x00]
        let frame = L2CAPFrame(channelID: .leSignaling, payload: command).encoded
        let request = router.receive(ACLPacket(handle: Self.handle, packetBoundary: .firstFlushable, payload: frame[...]))
        guard case .parameterUpdate(let parameters, let forwardedRecord)? = request else {
            Issue.record("not forwarded as a parameter update: \(String(describing: request))")
            return
        }
        #expect(forwardedRecord === record)
        #expect(parameters == HCICommand.ConnectionParameters(
            intervalMin: 6, intervalMax: 12, maxLatency: 0, supervisionTimeout: 100, minCELength: 0, maxCELength: 0))
        let sent = try await writtenACL()
        // Response 0x13, identifier 7, length 2, result 0 (accepted), on CID 0x0005.
        #expect(sent.map(\.handle) == [Self.handle])
        #expect(sent.map { Array($0.payload) } == [[0x06, 0x00, 0x05, 0x00, 0x13, 0x07, 0x02, 0x00, 0x00, 0x00]])
    }

    @Test("once the host stopped, links end and sends throw the host's error")
    func stopEndsLinks() throws {
        router.stop(.closed, bearerError: .closed)
        #expect(record.lifetime.ending == .closed)
        #expect(router[Self.handle] == nil)
        #expect(throws: HostError.closed) { try router.send([0x01], channel: .att, on: Self.handle) }
    }
}
