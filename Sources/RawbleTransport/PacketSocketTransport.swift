#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import NIOCore
import NIOPosix
import RawbleWire

/// H4 over a packet socket (the Linux HCI raw or user channel): each `read` returns one whole
/// packet with its type byte, each `write` must carry exactly one.
extension H4StreamTransport {
    /// Hands `descriptor`, a bound packet socket that carries one H4 packet per read and per
    /// write, to NIO on the same core as the stream transports; the transport owns it from now on.
    ///
    /// The two traps of packet sockets are handled here: reads use a fixed buffer of
    /// `maximumPacketLength` bytes (NIO's adaptive allocator shrinks to 64 bytes after small
    /// reads, and a packet socket drops what does not fit), and writes go out one at a time
    /// (``PacketWriteSerializer``: NIO would gather queued packets into one `writev`, which the
    /// kernel takes as one packet). The descriptor is made non-blocking (NIO does not do it
    /// for an adopted descriptor, and a blocking write would stall the loop). `name` names the
    /// socket in errors (`write to hci0`).
    public static func adoptPacketSocket(
        _ descriptor: Int32, maximumPacketLength: Int, name: String, writeStallTimeout: Duration = .seconds(10),
        onFramingError: FramingErrorHandler? = nil
    ) -> H4StreamTransport {
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0, flags & O_NONBLOCK == 0 { _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) }
        let (link, reader) = Link.make(on: eventLoopGroup.next())
        let channel = NIOPipeBootstrap(group: link.loop)
            .channelOption(ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: maximumPacketLength))
            .channelInitializer { channel in link.install(on: channel, onFramingError: onFramingError, packetSocket: true) }
            .takingOwnershipOfDescriptor(inputOutput: descriptor)
        channel.whenFailure { error in link.finish(failure: transportError(error, operation: "register \(name)")) }
        return H4StreamTransport(channel: channel, link: link, reader: reader, writeStall: (TimeAmount(writeStallTimeout), "write to \(name)"))
    }
}

/// Keeps at most one write in flight on a channel over a packet socket, each flushed alone:
/// the next buffer goes down the pipeline only once the previous one reached the kernel. NIO
/// gathers the buffers queued on a channel into one `writev` (e.g. after the socket was briefly
/// not writable); on a packet socket that would send two packets as one. Every write is
/// flushed as it goes, so `flush` has nothing left to do. Writes waiting when the handler is
/// removed (the channel closed) fail with `ChannelError.ioOnClosedChannel`.
public final class PacketWriteSerializer: ChannelOutboundHandler, RemovableChannelHandler {
    public typealias OutboundIn = ByteBuffer
    public typealias OutboundOut = ByteBuffer

    private var waiting = CircularBuffer<(ByteBuffer, EventLoopPromise<Void>?)>()
    private var inFlight = false

    public init() {}

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let buffer = unwrapOutboundIn(data)
        if inFlight {
            waiting.append((buffer, promise))
        } else {
            send(buffer, promise: promise, context: context)
        }
    }

    public func flush(context: ChannelHandlerContext) {}

    public func handlerRemoved(context: ChannelHandlerContext) {
        while let (_, promise) = waiting.popFirst() { promise?.fail(ChannelError.ioOnClosedChannel) }
    }

    private func send(_ buffer: ByteBuffer, promise: EventLoopPromise<Void>?, context: ChannelHandlerContext) {
        inFlight = true
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.assumeIsolated().whenComplete { result in
            promise?.completeWith(result)
            self.inFlight = false
            if let (next, nextPromise) = self.waiting.popFirst() {
                self.send(next, promise: nextPromise, context: context)
            }
        }
        context.writeAndFlush(wrapOutboundOut(buffer), promise: written)
    }
}
