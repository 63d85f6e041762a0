#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CBluetooth
import NIOCore
import NIOPosix
import RawbleWire
import Synchronization
import SystemPackage

/// The kernel's HCI monitor channel (what btmon reads) for one adapter: every HCI packet that
/// passes between the kernel and that adapter's controller — the kernel's own commands and its
/// L2CAP traffic as well as what any raw socket sends — handed to `onPacket` as it is read.
/// Needs CAP_NET_RAW. The socket runs on the same NIO core as the HCI socket transports, with a
/// fixed receive buffer as large as the largest record (a packet socket drops what does not fit).
public final class HCIMonitorSocket: Sendable {
    /// Called on the socket's event loop for each of the adapter's packets, in the order read.
    public typealias PacketHandler = @Sendable (HCIMonitorPacket) -> Void

    private let channel: EventLoopFuture<any Channel>
    private let sink: MonitorSink
    private let descriptor: Int32
    private let closed = Mutex(false)

    private init(channel: EventLoopFuture<any Channel>, sink: MonitorSink, descriptor: Int32) {
        self.channel = channel
        self.sink = sink
        self.descriptor = descriptor
    }

    deinit {
        // Dropped without close(): close the channel (and so the descriptor) all the same.
        if !closed.withLock({ $0 }) { channel.whenSuccess { $0.close(promise: nil) } }
    }

    /// Opens the monitor channel (bound to no adapter: the kernel offers no per-adapter monitor)
    /// and hands adapter `index`'s packets to `onPacket` from now on. Throws
    /// ``KernelError/noBluetoothInKernel``, ``KernelError/missingCapability(operation:errno:user:)``
    /// (no CAP_NET_RAW) or ``KernelError/system(operation:errno:)``.
    public static func open(adapter index: UInt16, onPacket: @escaping PacketHandler) throws(KernelError) -> HCIMonitorSocket {
        let fd: SystemPackage.FileDescriptor
        do {
            fd = try BluetoothSocket.open(type: Int32(SOCK_RAW.rawValue), protocol: BTPROTO_HCI, nonBlocking: true)
        } catch {
            throw KernelError.classify(error, operation: "opening the HCI monitor channel")
        }
        do {
            try Privileges.perform(.netRaw) { () throws(Errno) in
                try BluetoothSocket.bind(fd, BluetoothSocketAddress.hci(adapter: HCIMonitorRecord.noAdapter, channel: .monitor))
            }
        } catch {
            BluetoothSocket.closeQuietly(fd)
            throw KernelError.classify(error, operation: "binding the HCI monitor channel")
        }
        // A few seconds of advertising reports fill the default buffer while the reader is
        // held up; the kernel then drops records silently.
        BluetoothSocket.enlargeReceiveBuffer(fd)
        return adopt(fd.rawValue, adapter: index, onPacket: onPacket)
    }

    /// Hands `descriptor`, a socket that returns one monitor record per read (the
    /// bound monitor channel; in tests, a unix datagram socket), to NIO; the returned socket owns
    /// it from now on (and makes it non-blocking) and hands adapter `index`'s packets to `onPacket`.
    public static func adopt(_ descriptor: Int32, adapter index: UInt16, onPacket: @escaping PacketHandler) -> HCIMonitorSocket {
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0, flags & O_NONBLOCK == 0 { _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) }
        let sink = MonitorSink(HCIMonitorDecoder(adapterIndex: index), onPacket: onPacket)
        let channel = NIOPipeBootstrap(group: MultiThreadedEventLoopGroup.singleton.next())
            .channelOption(ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: HCIMonitorRecord.maximumByteCount))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(MonitorReader(sink)) }
            }
            .takingOwnershipOfDescriptor(input: descriptor)
        return HCIMonitorSocket(channel: channel, sink: sink, descriptor: descriptor)
    }

    /// The decoder's tally so far (packets handed out, records skipped, records malformed).
    public var counts: HCIMonitorDecoder.Counts { sink.counts }

    /// Why reading stopped early, if it did (the descriptor failed); `nil` while reading or
    /// after a clean close.
    public var failure: (any Error)? { sink.failure }

    /// Hands on the records already waiting in the socket, then closes it. Everything the
    /// kernel had sent to the monitor before this call is in those records: a packet a raw
    /// socket of this process saw (an event) went to the monitor first, so closing the session's
    /// raw channel, then this, loses nothing of what the session saw. Safe to call more than once.
    public func close() async {
        let wasClosed = closed.withLock { state in
            let was = state
            state = true
            return was
        }
        guard !wasClosed else { return }
        guard let channel = try? await channel.get() else { return }
        let sink = sink
        let descriptor = descriptor
        // On the channel's loop, so NIO's own reads (same thread) cannot interleave with this one.
        try? await channel.eventLoop.submit {
            if channel.isActive { Self.drain(descriptor, into: sink) }
        }.get()
        try? await channel.close()
    }

    /// Reads, without blocking, the records waiting in `descriptor` (at most a bounded number,
    /// so a busy adapter cannot keep the close going) and hands each to `sink`.
    private static func drain(_ descriptor: Int32, into sink: MonitorSink) {
        var buffer = [UInt8](repeating: 0, count: HCIMonitorRecord.maximumByteCount)
        for _ in 0..<4096 {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            sink.receive(buffer[..<count])
        }
    }
}

/// The decoder and the handler, shared by NIO's reads and the final drain (both on the loop;
/// the lock only makes the sharing Sendable).
private final class MonitorSink: Sendable {
    private struct State {
        var decoder: HCIMonitorDecoder
        var failure: (any Error)?
    }

    private let state: Mutex<State>
    private let onPacket: HCIMonitorSocket.PacketHandler

    init(_ decoder: HCIMonitorDecoder, onPacket: @escaping HCIMonitorSocket.PacketHandler) {
        state = Mutex(State(decoder: decoder))
        self.onPacket = onPacket
    }

    var counts: HCIMonitorDecoder.Counts { state.withLock { $0.decoder.counts } }
    var failure: (any Error)? { state.withLock { $0.failure } }

    /// One datagram: the adapter's packet goes to the handler; anything else is only counted.
    func receive(_ datagram: ArraySlice<UInt8>) {
        let packet = state.withLock { try? $0.decoder.packet(in: datagram) }
        if let packet { onPacket(packet) }
    }

    func fail(_ error: any Error) {
        state.withLock { if $0.failure == nil { $0.failure = error } }
    }
}

/// Hands each read (one monitor record: a packet socket keeps datagram boundaries) to the sink.
private final class MonitorReader: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let sink: MonitorSink

    init(_ sink: MonitorSink) {
        self.sink = sink
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        sink.receive(ArraySlice(buffer.readableBytesView))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        sink.fail(error)
        context.close(promise: nil)
    }
}
