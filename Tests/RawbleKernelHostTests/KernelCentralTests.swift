import NIOCore
import RawbleBearer
import RawbleHost
import RawbleHostCore
import RawbleKernelHost
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

private func configuration() -> Adapter.Configuration {
    var configuration = Adapter.Configuration()
    configuration.commandTimeout = .seconds(10)
    configuration.resetTimeout = .seconds(10)
    configuration.logger.logLevel = .critical
    return configuration
}

/// A kernel link as the opener would give it (the real one is an L2CAP socket): records
/// the disconnect it is asked for.
private final class KernelLinkStub: CentralLink {
    let peer: DeviceAddress
    let att = ScriptedATTBearer()
    private let ended = Mutex<HostError?>(nil)

    init(peer: DeviceAddress) { self.peer = peer }

    var ending: HostError? { ended.withLock { $0 } }
    func disconnect(timeout: Duration) async throws(HostError) {
        ended.withLock { $0 = $0 ?? .disconnected(.remoteUserTerminatedConnection) }
    }
    func waitUntilDisconnected() async -> HostError { ending ?? .cancelled }
}

private final class RecordingOpener: KernelLinkOpener {
    let requests = Mutex<[DeviceAddress]>([])
    let made = Mutex<[KernelLinkStub]>([])

    func openLink(to peer: DeviceAddress, timeout: Duration, on eventLoop: any EventLoop) async throws(HostError) -> KernelLinkStub {
        requests.withLock { $0.append(peer) }
        let link = KernelLinkStub(peer: peer)
        made.withLock { $0.append(link) }
        return link
    }
}

@Suite("KernelCentral: scanning on the raw channel, links through the kernel")
struct KernelCentralTests {
    @Test("connect goes to the kernel's opener, not LE Create Connection; close disconnects the links still up")
    func linksThroughTheOpener() async throws {
        let controller = ScriptedController { command in
            if case .readBDADDR = command { return [ScriptedController.complete(command.opcode, [0x00, 1, 0, 0, 0xDC, 0x1B, 0])] }
            return ScriptedController.minimal(command)
        }
        _ = controller.run()
        let opener = RecordingOpener()
        let central = try await KernelCentral.open(rawChannel: controller.transport, opener: opener, configuration: configuration())
        #expect(!controller.commands.contains(.reset))
        let peer = ScriptedController.peer
        let link = try await central.connect(to: peer, timeout: .seconds(5))
        #expect(link.peer == peer)
        #expect(opener.requests.withLock { $0 } == [peer])
        #expect(!controller.commands.contains { if case .leCreateConnection = $0 { true } else { false } })
        await central.close()
        #expect(link.ending == .disconnected(.remoteUserTerminatedConnection))
    }
}
