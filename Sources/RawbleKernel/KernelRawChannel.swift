#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import NIOCore
import RawbleHCITransport
import RawbleTransport
import RawbleWire
import Synchronization

/// An adapter's raw HCI channel (`hciN`): read on NIO like every packet socket, written
/// through ``Privileges``. The kernel checks CAP_NET_RAW at each send of a command outside its
/// security filter (every LE command) and of any ACL packet, on the thread that sends; so each
/// send runs on the one thread that holds the capability, raised just for it, and no other
/// thread of the process needs it. The sends use a descriptor of their own (a `dup` of the
/// socket), so a send racing the close never writes to a descriptor number reused meanwhile.
public final class KernelRawChannel: HCITransport {
    private let reading: H4StreamTransport
    private let sending: Mutex<Int32?>
    private let name: String
    private let writeStallTimeout: Duration

    init(reading: H4StreamTransport, sendDescriptor: Int32, name: String, writeStallTimeout: Duration) {
        self.reading = reading
        sending = Mutex(sendDescriptor)
        self.name = name
        self.writeStallTimeout = writeStallTimeout
    }

    public var packets: AsyncThrowingStream<H4Packet, any Error> { reading.packets }
    public var eventLoop: any EventLoop { reading.eventLoop }

    public func deliverPackets(to receiver: any HCIPacketReceiver) -> Bool {
        reading.deliverPackets(to: receiver)
    }

    public func send(_ packet: H4Packet) async throws(TransportError) {
        let bytes = [packet.type.rawValue] + packet.bytes
        let bound = writeStallTimeout
        let failure: Int32? = Privileges.perform(.netRaw) {
            self.sending.withLock { descriptor -> Int32? in
                guard let descriptor else { return EBADF }
                return Self.write(bytes, to: descriptor, stallingAtMost: bound)
            }
        }
        guard let failure else { return }
        if failure == EBADF { throw .closed }
        if failure == ETIMEDOUT { throw .timedOut(operation: "write to \(name)") }
        throw .ioError(errno: failure, operation: "write to \(name)")
    }

    public func close() async {
        sending.withLock { descriptor in
            if let open = descriptor { _ = Glibc.close(open) }
            descriptor = nil
        }
        await reading.close()
    }

    /// Writes one packet with one `write`; a full socket buffer (EAGAIN) is waited out for at
    /// most `bound`. Returns the errno of a failure, ETIMEDOUT when the bound passed.
    private static func write(_ bytes: [UInt8], to descriptor: Int32, stallingAtMost bound: Duration) -> Int32? {
        let deadline = ContinuousClock.now + bound
        while true {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written == bytes.count { return nil }
            let failure = written < 0 ? errno : EIO
            guard failure == EAGAIN || failure == EINTR else { return failure }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return ETIMEDOUT }
            var entry = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            _ = poll(&entry, 1, Int32(min(1_000, max(1, (left / .milliseconds(1)).rounded(.up)))))
        }
    }
}
