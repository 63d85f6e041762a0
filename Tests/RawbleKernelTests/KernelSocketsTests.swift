#if canImport(Glibc)
import Glibc
#endif
import CBluetooth
import NIOCore
@testable import RawbleKernel
import RawbleBearer
import RawbleTestPeers
import RawbleTestSupport
import RawbleTransport
import RawbleWire
import Logging
import Synchronization
import SystemPackage
import Testing

/// The HCI socket transport's and the L2CAP ATT bearer's typed parts, and on this machine's
/// kernel what opening them does.
@Suite struct HCISocketTransportTests {
    @Test func receiveBufferFitsTheLargestPacketTheSocketCanGet() {
        #expect(HCISocketTransport.maximumPacketLength(channel: .raw, filter: .central) == 259)
        #expect(HCISocketTransport.maximumPacketLength(channel: .user, filter: .central) == 65_540)
        let withACL = HCIFilter(packetTypes: [.event, .acl], events: [0x0E])
        #expect(HCISocketTransport.maximumPacketLength(channel: .raw, filter: withACL) == 65_540)
    }

    /// Every HCI and management socket asks for a receive queue that holds seconds of a flood
    /// (the kernel drops what does not fit, a command's answer included). Shown on a datagram
    /// socket, the same option the kernel's sockets take; with CAP_NET_ADMIN (root here) past
    /// `net.core.rmem_max`.
    @Test("the receive queue of an HCI or management socket is enlarged past the default",
          .enabled(if: geteuid() == 0, "SO_RCVBUFFORCE needs CAP_NET_ADMIN"))
    func receiveQueueIsEnlarged() throws {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0, &pair) == 0)
        defer { for fd in pair { _ = close(fd) } }
        let size = { (fd: Int32) -> Int32 in
            var value: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, &length)
            return value
        }
        let before = size(pair[0])
        BluetoothSocket.enlargeReceiveBuffer(FileDescriptor(rawValue: pair[0]))
        // The kernel reports double what was asked (its bookkeeping overhead).
        #expect(size(pair[0]) >= 8 << 20, "was \(before)")
        #expect(before < 8 << 20)
    }

    @Test func bindFailuresSayWhatToDo() {
        #expect(HCISocketTransport.bindFailure(.resourceBusy, channel: .user, index: 0) == .userChannelBusy(adapter: "hci0"))
        #expect(HCISocketTransport.bindFailure(.tooManyUsers, channel: .user, index: 1) == .userChannelBusy(adapter: "hci1"))
        #expect(HCISocketTransport.bindFailure(Errno(rawValue: 132), channel: .user, index: 0) == .rfkillBlocked(adapter: "hci0"))
        let denied = HCISocketTransport.bindFailure(.notPermitted, channel: .user, index: 0)
        #expect(denied.description.contains(KernelError.groupLine(user: KernelError.userName)))
        #expect(HCISocketTransport.bindFailure(.operationNotSupportedByDevice, channel: .raw, index: 9)
            == .noSuchAdapter("hci9", available: (try? KernelAdapters.list().map(\.name)) ?? []))
    }

    @Test func transportNamesParse() {
        #expect(KernelTransportName("hci0").map { [$0.adapter, "\($0.channel)"] } == ["hci0", "raw"])
        #expect(KernelTransportName("user:hci2").map { [$0.adapter, "\($0.channel)"] } == ["hci2", "user"])
        #expect(KernelTransportName("user:hci2")?.description == "user:hci2")
        #expect(KernelTransportName("user:") == nil)
        #expect(KernelTransportName("tcp:1.2.3.4:9000") == nil)
        #expect(KernelTransportName("hci") == nil)
    }

    /// Here (no Bluetooth in the kernel) opening fails with the typed error; in the VM it opens
    /// hci0's raw channel and reads the controller's version through it.
    @Test func openingTheRawChannelOnThisKernel() async throws {
        if bluetoothSocketsMissing() != nil {
            #expect(throws: KernelError.noBluetoothInKernel) { try HCISocketTransport.open(adapter: 0, channel: .raw) }
            #expect(throws: KernelError.noBluetoothInKernel) { try HCISocketTransport.open(adapter: 0, channel: .user) }
            print("HCISocketTransportTests: no AF_BLUETOOTH in this kernel: checked the typed error only; the raw-channel round trip runs in the VM")
            return
        }
        guard let adapter = try KernelAdapters.list().first(where: \.isUp) else {
            print("HCISocketTransportTests: SKIPPED the raw-channel round trip: this kernel has Bluetooth but no adapter is up")
            return
        }
        let transport = try HCISocketTransport.open(adapter: adapter.index, channel: .raw)
        // Read Local Version Information (0x1001): allowed on the raw channel without CAP_NET_RAW.
        try await transport.send(H4Packet(type: .command, bytes: [0x01, 0x10, 0x00]))
        let answer = try await within(seconds: 10) { () -> H4Packet? in
            for try await packet in transport.packets where packet.type == .event {
                if packet.bytes.first == 0x0E, packet.bytes.count >= 5, packet.bytes[packet.bytes.startIndex + 3] == 0x01,
                    packet.bytes[packet.bytes.startIndex + 4] == 0x10
                {
                    return packet
                }
            }
            return nil
        }
        #expect(answer != nil)
        await transport.close()
    }
}

@Suite struct KernelATTBearerTests {
    @Test func linkLossReasonsNameTheHCIReason() {
        #expect(KernelLinkLoss.reason(for: .connectionReset).contains("0x13"))
        #expect(KernelLinkLoss.reason(for: .timedOut).contains("0x08"))
        #expect(KernelLinkLoss.reason(for: .connectionAbort).contains("0x16"))
        let end = PDUBridge.end(for: IOError(errnoCode: ECONNRESET, reason: "read"))
        #expect(end == .disconnected(reason: "the peer ended the connection (HCI remote user terminated, 0x13) (errno 104)"))
    }

    @Test func connectFailuresAreTyped() {
        #expect(L2CAPATTSocket.connectFailure(.hostIsDown, peer: "C0:B1:E0:00:00:01")
            == .connectFailed(peer: "C0:B1:E0:00:00:01", errno: .hostIsDown, reason: KernelLinkLoss.reason(for: .hostIsDown)))
        #expect(L2CAPATTSocket.connectFailure(.addressFamilyNotSupported, peer: "x") == .noBluetoothInKernel)
        if case .missingCapability = L2CAPATTSocket.connectFailure(.notPermitted, peer: "x") {} else {
            Issue.record("EPERM is a missing capability")
        }
    }

    /// The connect wait: ready when writable, a timeout when not, cancellation ends it.
    @Test func connectWaitEndsOnWritabilityTimeoutOrCancellation() async throws {
        let (ours, peer) = try seqpacketPair()
        defer {
            close(ours)
            close(peer)
        }
        let ready = await L2CAPATTSocket.waitWritable(FileDescriptor(rawValue: ours), timeout: .seconds(30))
        #expect(ready == .ready)
        // Fill the socket so it is no longer writable.
        _ = fcntl(ours, F_SETFL, fcntl(ours, F_GETFL) | O_NONBLOCK)
        let chunk = [UInt8](repeating: 0, count: 512)
        while chunk.withUnsafeBytes({ send(ours, $0.baseAddress, $0.count, 0) }) > 0 {}
        let timedOut = await L2CAPATTSocket.waitWritable(FileDescriptor(rawValue: ours), timeout: .milliseconds(200))
        #expect(timedOut == .timedOut)
        let waiting = Task { await L2CAPATTSocket.waitWritable(FileDescriptor(rawValue: ours), timeout: .seconds(60)) }
        waiting.cancel()
        let cancelled = try await within(seconds: 30) { await waiting.value }
        #expect(cancelled == .cancelled)
    }

    /// PDUs both ways over a packet socket pair, one per message; the peer going away ends
    /// `pdus` with `disconnected`, and later sends throw.
    @Test func pdusTravelWholeAndTheEndIsTyped() async throws {
        let (ours, peer) = try seqpacketPair()
        let bearer = try await KernelATTBearer.adopt(
            FileDescriptor(rawValue: ours), peer: .any, sendMTU: 247, receiveMTU: 517, sendTimeout: .seconds(30))
        let request: [UInt8] = [0x02, 0xF7, 0x00]  // Exchange MTU Request, 247
        try await bearer.send(request)
        let received = try await within(seconds: 30) {
            try await onOwnThread { () -> [UInt8] in
                var buffer = [UInt8](repeating: 0, count: 1024)
                let n = buffer.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, 0) }
                return Array(buffer.prefix(max(n, 0)))
            }
        }
        #expect(received == request)
        let notification: [UInt8] = [0x1B, 0x2A, 0x00] + [UInt8](repeating: 0x55, count: 240)
        _ = notification.withUnsafeBytes { send(peer, $0.baseAddress, $0.count, 0) }
        await #expect(throws: BearerError.pduTooLong(length: 248, maximum: 247)) {
            try await bearer.send([UInt8](repeating: 0x52, count: 248))
        }
        let outcome = try await within(seconds: 30) { () -> ([[UInt8]], BearerError?) in
            var pdus: [[UInt8]] = []
            do {
                for try await pdu in bearer.pdus {
                    pdus.append(pdu)
                    if pdus.count == 1 { close(peer) }
                }
                return (pdus, nil)
            } catch {
                return (pdus, error as? BearerError)
            }
        }
        #expect(outcome.0 == [notification])
        if case .disconnected = outcome.1 {} else { Issue.record("ended with \(String(describing: outcome.1))") }
        await #expect(throws: BearerError.self) { try await bearer.send(request) }
        await bearer.close()
    }

    /// The ATT client's fast path: PDUs read before the receiver came and every later one go to
    /// it in order, on the socket's loop, then the end; `pdus` is then not a second reader.
    @Test func theFastPathGetsEveryPDUInOrderThenTheEnd() async throws {
        let (ours, peer) = try seqpacketPair()
        let bearer = try await KernelATTBearer.adopt(
            FileDescriptor(rawValue: ours), peer: .any, sendMTU: 23, receiveMTU: 23, sendTimeout: .seconds(30))
        let pdus: [[UInt8]] = (0..<6).map { [0x1B, 0x10, 0x00, UInt8($0)] }
        for pdu in pdus.prefix(3) { _ = pdu.withUnsafeBytes { send(peer, $0.baseAddress, $0.count, 0) } }
        // The first three reach the bearer (read, waiting for a reader) before the receiver does.
        try await within(seconds: 30) { try await bearer.waitUntilRead(3) }
        let receiver = RecordingReceiver()
        #expect(bearer.deliverPDUs(to: receiver))
        for pdu in pdus.suffix(3) { _ = pdu.withUnsafeBytes { send(peer, $0.baseAddress, $0.count, 0) } }
        try await receiver.pdus.wait(until: { $0.count >= 6 })
        close(peer)
        try await receiver.ends.wait(until: { !$0.isEmpty })
        #expect(receiver.received == pdus)
        if case .disconnected = receiver.end {} else { Issue.record("ended with \(String(describing: receiver.end))") }
        #expect(!bearer.deliverPDUs(to: RecordingReceiver()), "one reader")
        await bearer.close()
    }

    /// A peer that floods while nobody reads: at most the limit waits, the rest is counted as
    /// dropped and reported, and what waits comes out first, in order.
    @Test func aFloodWithNoReaderIsBoundedAndCounted() async throws {
        let (ours, peer) = try seqpacketPair()
        defer { close(peer) }
        let warnings = RecordingLogHandler(level: .warning)
        let bearer = try await KernelATTBearer.adopt(
            FileDescriptor(rawValue: ours), peer: .any, sendMTU: 23, receiveMTU: 23, sendTimeout: .seconds(30),
            receiveBufferLimit: 4, logger: Logger(label: "test") { _ in warnings })
        let pdus: [[UInt8]] = (0..<10).map { [0x1B, 0x10, 0x00, UInt8($0)] }
        for pdu in pdus { _ = pdu.withUnsafeBytes { send(peer, $0.baseAddress, $0.count, 0) } }
        // Every PDU read: 4 wait, 6 are dropped.
        try await within(seconds: 30) { try await bearer.waitUntilRead(pdus.count) }
        #expect(bearer.droppedPDUCount == 6)
        // Reported, at 1, 2 and 4 dropped: not a line per PDU.
        #expect(warnings.lines.map { $0.prefix(18) } == ["1 ATT PDUs from 00", "2 ATT PDUs from 00", "4 ATT PDUs from 00"],
                "\(warnings.lines)")
        let kept = try await within(seconds: 30) { () -> [[UInt8]] in
            var kept: [[UInt8]] = []
            for try await pdu in bearer.pdus {
                kept.append(pdu)
                if kept.count == 4 { break }
            }
            return kept
        }
        #expect(kept == Array(pdus.prefix(4)))
        await bearer.close()
    }

    @Test func closingEndsThePDUsWithClosed() async throws {
        let (ours, peer) = try seqpacketPair()
        defer { close(peer) }
        let bearer = try await KernelATTBearer.adopt(
            FileDescriptor(rawValue: ours), peer: .any, sendMTU: 23, receiveMTU: 23, sendTimeout: .seconds(30))
        await bearer.close()
        let end = try await within(seconds: 30) { () -> (any Error)? in
            do {
                for try await _ in bearer.pdus {}
                return nil
            } catch { return error }
        }
        #expect(end as? BearerError == .closed)
        await #expect(throws: BearerError.closed) { try await bearer.send([0x0A, 0x01, 0x00]) }
    }

    /// Here connecting fails with the typed error; in the VM, connecting to an address nobody
    /// advertises ends with the stack's own timeout, not the kernel's ~40 s.
    @Test func connectingOnThisKernel() async throws {
        let absent = try #require(BluetoothAddress("C0:00:00:00:0A:B5"))
        if bluetoothSocketsMissing() != nil {
            await #expect(throws: KernelError.noBluetoothInKernel) {
                _ = try await KernelATTBearer.connect(to: absent, type: .random, timeout: .seconds(2))
            }
            print("KernelATTBearerTests: no AF_BLUETOOTH in this kernel: checked the typed error only; the absent-peer timeout runs in the VM")
            return
        }
        guard try KernelAdapters.list().contains(where: \.isUp) else {
            print("KernelATTBearerTests: SKIPPED the absent-peer timeout: this kernel has Bluetooth but no adapter is up")
            return
        }
        await #expect(throws: KernelError.connectTimeout(peer: absent.description, seconds: 2)) {
            _ = try await within(seconds: 30) { try await KernelATTBearer.connect(to: absent, type: .random, timeout: .seconds(2)) }
        }
    }
}

/// An ATT client's receiver as the fast path sees it: what arrived, and the end.
private final class RecordingReceiver: ATTPDUReceiver {
    /// The PDUs received, in order, and the bearer's end: each awaitable.
    let pdus = Recording<[UInt8]>()
    let ends = Recording<BearerError>()
    var received: [[UInt8]] { pdus.items }
    var end: BearerError? { ends.items.first }
    func receive(_ pdu: ArraySlice<UInt8>) { pdus.append(Array(pdu)) }
    func bearerEnded(_ error: BearerError) { ends.append(error) }
}

