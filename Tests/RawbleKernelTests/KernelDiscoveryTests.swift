#if canImport(Glibc)
import Glibc
import RawbleHostCore
#endif
import RawbleHost
import RawbleKernel
import RawbleKernelHost
import RawbleManagementCore
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

/// The kernel's end of a management socket, played by the test on a `SOCK_SEQPACKET` pair (one
/// packet per read and write, as the control channel): it reads what rawble sends, decoded by
/// the wire layer, and answers with the events the kernel sends.
private final class ScriptedManagementKernel: Sendable {
    let kernel: Int32
    let rawble: Int32

    init() throws {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw ScriptError.socketpair(errno)
        }
        kernel = pair[0]
        rawble = pair[1]
    }

    deinit { close(kernel) }

    enum ScriptError: Error { case socketpair(Int32), nothingWithin(Double), closedByRawble, undecodable([UInt8]) }

    /// The next command rawble sent, waiting at most `seconds`.
    func nextCommand(within seconds: Double = 10) async throws -> ManagementCommand {
        let fd = kernel
        let bytes = try await onOwnThread { () throws -> [UInt8] in
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(seconds * 1000)) == 1 else { throw ScriptError.nothingWithin(seconds) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            return Array(buffer.prefix(max(0, count)))
        }
        guard !bytes.isEmpty else { throw ScriptError.closedByRawble }
        guard let command = try? ManagementCommand.decode(bytes[...]) else { throw ScriptError.undecodable(bytes) }
        return command
    }

    /// Whether rawble sends nothing within `seconds` (closing its end sends nothing either).
    func sendsNothing(within seconds: Double) async throws -> Bool {
        do {
            _ = try await nextCommand(within: seconds)
            return false
        } catch ScriptError.nothingWithin {
            return true
        } catch ScriptError.closedByRawble {
            return true
        }
    }

    func send(_ event: ManagementEvent) {
        let bytes = event.encoded
        _ = bytes.withUnsafeBytes { Glibc.send(kernel, $0.baseAddress, $0.count, 0) }
    }

    func complete(_ command: ManagementCommand, _ status: ManagementStatus = .success, returnParameters: [UInt8] = [0x06]) {
        send(.commandComplete(index: command.index, opcode: command.opcode, status: status, returnParameters: returnParameters))
    }
}

@Suite("Scanning asked of the kernel: KernelDiscovery on a scripted management socket")
struct KernelDiscoveryTests {
    /// The restart delay, on the discovery's clock.
    private static let restartDelay = Duration.milliseconds(10)

    /// A discovery on `kernel`'s socket whose restart delay and command bound (2 s) run on
    /// `clock`: a test on a `ManualClock` moves time past them instead of waiting.
    private static func discovery(_ kernel: ScriptedManagementKernel, index: UInt16 = 0,
                                  clock: any Clock<Duration> = ContinuousClock()) -> KernelDiscovery {
        let fd = kernel.rawble
        return KernelDiscovery(adapter: index, restartDelay: restartDelay, commandTimeout: .seconds(2), clock: clock) {
            ManagementSocket.adopt(fd, clock: clock)
        }
    }

    /// A scan started while another program discovers: the kernel answers Start Discovery with
    /// Busy, and the other program's discovery serves the scan.
    private static func scanningBesideAnotherDiscovery(
        clock: any Clock<Duration> = ContinuousClock()
    ) async throws -> (ScriptedManagementKernel, KernelDiscovery) {
        let kernel = try ScriptedManagementKernel()
        let discovery = Self.discovery(kernel, clock: clock)
        async let started = discovery.startScanning(active: true)
        let start = try await kernel.nextCommand()
        kernel.send(.commandStatus(index: 0, opcode: start.opcode, status: .busy))
        #expect(try await started == .scanning)
        return (kernel, discovery)
    }

    @Test("Start Discovery (LE) for the adapter; the kernel's own end of it starts it again; stop sends Stop Discovery")
    func ownDiscovery() async throws {
        // The real clock: "nothing sent" is only worth checking while time moves on its own.
        let kernel = try ScriptedManagementKernel()
        let discovery = Self.discovery(kernel, index: 1)
        async let started = discovery.startScanning(active: true)
        let start = try await kernel.nextCommand()
        #expect(start == .startDiscovery(index: 1, addressTypes: .le))
        kernel.complete(start)
        #expect(try await started == .scanning)

        // Another adapter's discovery ending is not ours.
        kernel.send(.discovering(index: 0, addressTypes: .le, discovering: false))
        #expect(try await kernel.sendsNothing(within: 0.3))
        // The kernel ends an LE discovery by itself (~10 s): asked for again.
        kernel.send(.discovering(index: 1, addressTypes: .le, discovering: true))
        kernel.send(.discovering(index: 1, addressTypes: .le, discovering: false))
        let again = try await kernel.nextCommand()
        #expect(again == .startDiscovery(index: 1, addressTypes: .le))
        kernel.complete(again)

        async let stopped: Void = discovery.stopScanning()
        let stop = try await kernel.nextCommand()
        #expect(stop == .stopDiscovery(index: 1, addressTypes: .le))
        kernel.complete(stop)
        try await stopped
    }

    @Test("another program discovers (Busy): its scan serves, and stopping stops nothing of it; once it ends, rawble's own starts")
    func sharedDiscovery() async throws {
        let clock = ManualClock()
        let (kernel, discovery) = try await Self.scanningBesideAnotherDiscovery(clock: clock)

        // The other program's discovery ends: rawble's own starts, and is rawble's to stop.
        kernel.send(.discovering(index: 0, addressTypes: .le, discovering: false))
        try await clock.advanceOnceArmed(by: Self.restartDelay)
        let own = try await kernel.nextCommand()
        #expect(own == .startDiscovery(index: 0, addressTypes: .le))
        kernel.complete(own)
        async let stopped: Void = discovery.stopScanning()
        #expect(try await kernel.nextCommand() == .stopDiscovery(index: 0, addressTypes: .le))
        kernel.complete(.stopDiscovery(index: 0, addressTypes: .le))
        try await stopped
    }

    @Test("Busy to the end: the stop leaves the other program's discovery alone")
    func busyToTheEnd() async throws {
        let (kernel, discovery) = try await Self.scanningBesideAnotherDiscovery()
        try await discovery.stopScanning()
        #expect(try await kernel.sendsNothing(within: 0.3))
    }

    @Test("Permission Denied (no CAP_NET_ADMIN) and a passive scan are declined, each with the reason; passive asks nothing")
    func declined() async throws {
        let kernel = try ScriptedManagementKernel()
        let discovery = Self.discovery(kernel)
        let passive = try await discovery.startScanning(active: false)
        guard case .declined(let why) = passive else { Issue.record("passive: \(passive)"); return }
        #expect(why.contains("passive"))
        #expect(try await kernel.sendsNothing(within: 0.2))

        async let started = discovery.startScanning(active: true)
        let start = try await kernel.nextCommand()
        kernel.send(.commandStatus(index: 0, opcode: start.opcode, status: .permissionDenied))
        let outcome = try await started
        guard case .declined(let reason) = outcome else { Issue.record("\(outcome)"); return }
        #expect(reason.contains("CAP_NET_ADMIN") && reason.contains("rawble group") && !reason.contains("setcap"), "\(reason)")
    }

    @Test("no answer: the controller behind the kernel has stopped answering, within the bound")
    func noAnswer() async throws {
        let kernel = try ScriptedManagementKernel()
        let clock = ManualClock()
        let discovery = Self.discovery(kernel, clock: clock)
        let started = Task { try await discovery.startScanning(active: true) }
        #expect(try await kernel.nextCommand() == .startDiscovery(index: 0, addressTypes: .le))
        try await clock.advanceOnceArmed(by: .seconds(2))  // the command's bound, in virtual time
        let error = await #expect(throws: HostError.self) { _ = try await within { try await started.value } }
        guard case .controllerNotAnswering(let what)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(what.contains("hci0"), "\(what)")
    }

    /// The kernel's commands to a wedged controller time out (HCI_CMD_TIMEOUT, 2 s); its
    /// `-ETIMEDOUT` reaches the management socket as Authentication Failed.
    @Test("the kernel's commands timed out (Authentication Failed, Timeout): the controller has stopped answering",
          arguments: [ManagementStatus.authenticationFailed, .timeout])
    func kernelCommandsTimedOut(status: ManagementStatus) async throws {
        let kernel = try ScriptedManagementKernel()
        let discovery = Self.discovery(kernel)
        let started = Task { try await discovery.startScanning(active: true) }
        let start = try await kernel.nextCommand()
        kernel.send(.commandStatus(index: 0, opcode: start.opcode, status: status))
        let error = await #expect(throws: HostError.self) { _ = try await started.value }
        guard case .controllerNotAnswering? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(error?.description.hasSuffix("the controller has stopped answering") == true, "\(String(describing: error))")
    }

    @Test("Failed and other refusals are not taken for a silent controller")
    func otherFailures() async throws {
        let kernel = try ScriptedManagementKernel()
        let discovery = Self.discovery(kernel)
        let started = Task { try await discovery.startScanning(active: true) }
        let start = try await kernel.nextCommand()
        kernel.send(.commandStatus(index: 0, opcode: start.opcode, status: .failed))
        let error = await #expect(throws: HostError.self) { _ = try await started.value }
        if case .controllerNotAnswering? = error { Issue.record("\(String(describing: error))") }
    }

    @Test("garbage from the kernel's end is dropped and counted; the answer after it is still taken")
    func garbageIsDropped() async throws {
        let kernel = try ScriptedManagementKernel()
        let socket = ManagementSocket.adopt(kernel.rawble)
        async let reply = socket.send(.readControllerInformation(index: 0))
        let command = try await kernel.nextCommand()
        // Too short, a length that lies, then the answer.
        for garbage: [UInt8] in [[0x01], [0x01, 0x00, 0x00, 0x00, 0x09, 0x00, 0x04, 0x00]] {
            _ = garbage.withUnsafeBytes { Glibc.send(kernel.kernel, $0.baseAddress, $0.count, 0) }
        }
        kernel.complete(command, returnParameters: [])
        #expect(try await reply.status == .success)
        #expect(socket.undecodablePackets == 2)
        await socket.close()
    }
}

@Suite struct ProcessCapabilitiesTests {
    @Test func theEffectiveMaskNamesBothCapabilities() {
        let status = "Name:\trawble\nCapInh:\t0000000000000000\nCapPrm:\t0000000000003000\nCapEff:\t0000000000003000\n"
        #expect(ProcessCapabilities.effectiveMask(inStatus: status) == 0x3000)
        #expect(ProcessCapabilities(effective: 0x3000) == ProcessCapabilities(netRaw: true, netAdmin: true))
        #expect(ProcessCapabilities(effective: 0x2000) == ProcessCapabilities(netRaw: true, netAdmin: false))
        #expect(ProcessCapabilities(effective: 0x1000) == ProcessCapabilities(netRaw: false, netAdmin: true))
        #expect(ProcessCapabilities.effectiveMask(inStatus: "CapEff:\tzz\n") == nil)
        #expect(ProcessCapabilities.effectiveMask(inStatus: "") == nil)
    }
}
