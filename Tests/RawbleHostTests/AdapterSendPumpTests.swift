import NIOCore
import NIOPosix
import RawbleHCITransport
import RawbleHost
import RawbleHostCore
import RawbleTestSupport
import RawbleTransport
import RawbleWire
import Synchronization
import Testing

/// A controller on a real event loop that records, for every packet the host sends, whether
/// `send` ran on that loop's thread.
private final class LoopController: HCITransport {
    private let loop = MultiThreadedEventLoopGroup.singleton.next()
    private let receiver = Mutex<(any HCIPacketReceiver)?>(nil)
    private let sends = Mutex<[Bool]>([])
    let packets: AsyncThrowingStream<H4Packet, any Error>

    init() {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: H4Packet.self, throwing: (any Error).self)
        continuation.finish()
        packets = stream
    }

    /// For each packet sent so far: whether its `send` ran on the loop.
    var sentOnLoop: [Bool] { sends.withLock { $0 } }
    var eventLoop: any EventLoop { loop }

    func deliverPackets(to receiver: any HCIPacketReceiver) -> Bool {
        self.receiver.withLock { $0 = receiver }
        return true
    }

    func send(_ packet: H4Packet) async throws(TransportError) {
        sends.withLock { $0.append(loop.inEventLoop) }
        guard packet.type == .command, let command = try? HCICommand.decode(packet.bytes),
              let answers = ScriptedController.minimal(command), let receiver = receiver.withLock({ $0 }) else { return }
        let packets = answers.map { H4Packet(type: .event, bytes: $0.encoded) }
        loop.execute { receiver.receive(packets) }
    }

    func close() async {
        guard let receiver = receiver.withLock({ state in defer { state = nil }; return state }) else { return }
        loop.execute { receiver.transportEnded(.closed) }
    }
}

@Suite("Adapter: the send pump")
struct AdapterSendPumpTests {
    @Test("every packet is sent from the host's loop (no trip through the global pool and back per packet)")
    func sendsRunOnTheLoop() async throws {
        let controller = LoopController()
        let adapter = try await within(seconds: 60) { try await Adapter.open(controller, configuration: quietConfiguration()) }
        await adapter.close()
        let sent = controller.sentOnLoop
        #expect(sent.count >= 3, "the start-up's commands were sent")
        #expect(sent.allSatisfy { $0 }, "sends off the loop: \(sent)")
    }
}
