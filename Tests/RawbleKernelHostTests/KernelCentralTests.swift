import NIOCore
import RawbleBearer
import RawbleHost
import RawbleHostCore
import RawbleKernel
import RawbleKernelHost
import RawbleTestSupport
import RawbleWire
import Synchronization
import SystemPackage
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
    /// The links held that each request was told of.
    let held = Mutex<[Int]>([])
    let made = Mutex<[KernelLinkStub]>([])

    func openLink(to peer: DeviceAddress, timeout: Duration, holding: Int, on eventLoop: any EventLoop) async throws(HostError) -> KernelLinkStub {
        requests.withLock { $0.append(peer) }
        held.withLock { $0.append(holding) }
        let link = KernelLinkStub(peer: peer)
        made.withLock { $0.append(link) }
        return link
    }
}

/// A kernel central on a scripted raw channel (the controller answers what the host reads),
/// its links from a ``RecordingOpener``.
private func openCentral() async throws -> (ScriptedController, RecordingOpener, KernelCentral<RecordingOpener>) {
    let controller = ScriptedController { command in
        if case .readBDADDR = command { return [ScriptedController.complete(command.opcode, [0x00, 1, 0, 0, 0xDC, 0x1B, 0])] }
        return ScriptedController.minimal(command)
    }
    _ = controller.run()
    let opener = RecordingOpener()
    let central = try await KernelCentral.open(rawChannel: controller.transport, opener: opener, configuration: configuration())
    return (controller, opener, central)
}

@Suite("KernelCentral: scanning on the raw channel, links through the kernel")
struct KernelCentralTests {
    @Test("connect goes to the kernel's opener, not LE Create Connection; close disconnects the links still up")
    func linksThroughTheOpener() async throws {
        let (controller, opener, central) = try await openCentral()
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

@Suite("KernelCentral: a controller with no room for one more link, through the kernel's errno")
struct KernelLinkLimitTests {
    @Test("each connect tells the opener how many of the central's links are up (ended ones do not count)")
    func openerHearsTheLinksHeld() async throws {
        let (_, opener, central) = try await openCentral()
        let peers = (1...3).map { DeviceAddress(BluetoothAddress(0xC0B1_E000_0100 + UInt64($0)), type: .random) }
        let first = try await central.connect(to: peers[0], timeout: .seconds(5))
        _ = try await central.connect(to: peers[1], timeout: .seconds(5))
        try await first.disconnect(timeout: .seconds(1))
        _ = try await central.connect(to: peers[2], timeout: .seconds(5))
        #expect(opener.held.withLock { $0 } == [0, 1, 1])
        await central.close()
    }

    static let peer = DeviceAddress(BluetoothAddress(0xC0B1_E000_0101), type: .random)

    @Test("ENOMEM and EMLINK (0x07, 0x09 in bt_to_errno) name the status, the links held and another adapter", arguments: [
        (Errno.noMemory, "Memory Capacity Exceeded, 0x07", "ENOMEM"),
        (Errno.tooManyLinks, "Connection Limit Exceeded, 0x09", "EMLINK"),
    ])
    func statusFromTheErrno(errno: Errno, status: String, name: String) {
        let failure = KernelError.connectFailed(peer: "C0:B1:E0:00:01:01", errno: errno, reason: KernelLinkLoss.reason(for: errno))
        let error = KernelL2CAPOpener.hostError(failure, peer: Self.peer, timeout: .seconds(10), holding: 4)
        guard case .connectionRefused(Self.peer, let reason) = error else {
            Issue.record("\(error)")
            return
        }
        #expect(reason.contains(status) && reason.contains(name), "\(reason)")
        #expect(reason.contains("5th link") && reason.contains("holds 4") && reason.contains("another adapter"), "\(reason)")
    }

    @Test("ECONNREFUSED while links are up says the controller may be full; with none it keeps the kernel's meaning")
    func connectionRefused() {
        let failure = KernelError.connectFailed(peer: "C0:B1:E0:00:01:01", errno: .connectionRefused,
                                                reason: KernelLinkLoss.reason(for: .connectionRefused))
        let full = KernelL2CAPOpener.hostError(failure, peer: Self.peer, timeout: .seconds(10), holding: 2)
        #expect(full.description.contains("3rd link") && full.description.contains("0x0D")
                && full.description.contains("another adapter"), "\(full)")
        let alone = KernelL2CAPOpener.hostError(failure, peer: Self.peer, timeout: .seconds(10), holding: 0)
        #expect(alone == .connectionRefused(Self.peer, reason: failure.description), "\(alone)")
        #expect(!alone.description.contains("another adapter"))
    }
}
