#if canImport(Glibc)
import Glibc
import RawbleHCITransport
#elseif canImport(Musl)
import Musl
#endif
import NIOCore
import NIOPosix
import RawbleWire
import Synchronization

/// H4 over a connected stream socket (TCP or unix) or a serial line (``openSerial(path:baudRate:hardwareFlowControl:writeStallTimeout:onFramingError:)``):
/// each packet is its type byte followed by its bytes, back to back.
///
/// The I/O runs on a SwiftNIO event loop (epoll): no thread of its own, no blocking call on the
/// Swift concurrency pool. `PacketBridge` splits the bytes with `H4Framer`; a framing
/// error (a garbage type byte, a lying length) goes to `onFramingError` and the byte is skipped;
/// the stream goes on. Inbound is back-pressured: ``packets`` buffers at most
/// `inboundHighWatermark` packets (plus one read's worth), then the loop stops reading, so the
/// kernel's socket buffers fill and the peer's sends block. Each send awaits its write reaching
/// the kernel, so the outbound buffer holds at most one packet per concurrent sender, and fails
/// with `.timedOut` when the bytes stop going out (a peer that does not read).
/// ``close()``, the peer closing, the consumer cancelling its iteration, or the transport being
/// dropped all close the channel, which closes the descriptor.
///
/// Instead of ``packets``, a host whose state lives on ``eventLoop`` can take each read's
/// packets where they are decoded (``deliverPackets(to:)``): no stream, no thread hop.
public final class H4StreamTransport: HCITransport {
    /// Called on the event loop for each framing error (the offending byte is skipped).
    public typealias FramingErrorHandler = @Sendable (H4FramerError) -> Void

    /// Above this many packets waiting for the consumer, the transport stops reading.
    static let inboundHighWatermark = 256
    /// Reading resumes once the consumer has brought the backlog down to this many packets.
    static let inboundLowWatermark = 64

    public let packets: AsyncThrowingStream<H4Packet, any Error>
    /// The event loop the channel runs on: reads, decoding and ``deliverPackets(to:)`` calls.
    public let eventLoop: any EventLoop

    /// The channel, once set up (a serial line registers on the loop after `openSerial` returns).
    private let channel: EventLoopFuture<any Channel>
    private let link: Link
    /// A send whose bytes make no progress for this long fails with `.timedOut(operation:)` naming
    /// the write (a peer that stops reading, CTS held low by an unpowered controller).
    private let writeStall: (timeout: TimeAmount, operation: String)

    init(
        channel: EventLoopFuture<any Channel>, link: Link, reader: PacketReader,
        writeStall: (timeout: TimeAmount, operation: String)
    ) {
        self.channel = channel
        self.link = link
        self.writeStall = writeStall
        eventLoop = link.loop
        packets = AsyncThrowingStream(unfolding: { try await reader.next() })
    }

    deinit {
        // Dropped without close(): close the channel (and so the descriptor) all the same.
        link.markClosing()
        channel.whenSuccess { $0.close(promise: nil) }
    }

    /// The shared event loops every transport runs on (NIO's process-wide group).
    static var eventLoopGroup: MultiThreadedEventLoopGroup { .singleton }

    // MARK: Connecting

    /// Connects over TCP to `host` (a name or an IPv4/IPv6 literal) at `port`, trying every
    /// address the name resolves to, all within `timeout` (then `TransportError.timedOut(operation:)`:
    /// a host that drops the connection attempt, or a listener too busy to take it). TCP_NODELAY is on.
    /// A send fails with `.timedOut` when its bytes make no progress for `writeStallTimeout` (a
    /// peer that stopped reading).
    public static func connect(
        tcp host: String, port: UInt16, timeout: Duration = .seconds(10), writeStallTimeout: Duration = .seconds(10),
        onFramingError: FramingErrorHandler? = nil
    ) async throws(TransportError) -> H4StreamTransport {
        let (link, reader) = Link.make(on: eventLoopGroup.next())
        let bootstrap = ClientBootstrap(group: link.loop)
            .connectTimeout(TimeAmount(timeout))
            .channelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in link.install(on: channel, onFramingError: onFramingError) }
        do {
            let channel = try await bootstrap.connect(host: host, port: Int(port)).get()
            return H4StreamTransport(
                channel: channel.eventLoop.makeSucceededFuture(channel), link: link, reader: reader,
                writeStall: (TimeAmount(writeStallTimeout), "write to \(host) port \(port)"))
        } catch {
            throw connectFailure(error, host: host, port: port)
        }
    }

    /// The typed error for a failed TCP connect.
    private static func connectFailure(_ error: any Error, host: String, port: UInt16) -> TransportError {
        let operation = "connect to \(host) port \(port)"
        if case ChannelError.connectTimeout = error { return .timedOut(operation: operation) }
        guard let failure = error as? NIOConnectionError else { return transportError(error, operation: operation) }
        guard let last = failure.connectionErrors.last else {
            let dns = failure.dnsAError ?? failure.dnsAAAAError
            let message = (dns as? SocketAddressError.UnknownHost)?.errorDescription ?? dns.map { "\($0)" } ?? "no address"
            return .addressResolution(host: host, message: message)
        }
        switch (last.error as? IOError)?.errnoCode {
        case ECONNREFUSED: return .connectionRefused(host: host, port: port)
        case ETIMEDOUT: return .timedOut(operation: operation)
        default: return transportError(last.error, operation: operation)
        }
    }

    /// Connects to the unix stream socket at `path`. A send fails with `.timedOut` when its bytes
    /// make no progress for `writeStallTimeout` (a peer that stopped reading).
    public static func connect(
        unix path: String, writeStallTimeout: Duration = .seconds(10), onFramingError: FramingErrorHandler? = nil
    ) async throws(TransportError) -> H4StreamTransport {
        let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
        let length = path.utf8.count
        guard length > 0, length < capacity else {
            throw .invalidAddress("unix socket path must be 1…\(capacity - 1) bytes: \(path)")
        }
        let (link, reader) = Link.make(on: eventLoopGroup.next())
        let bootstrap = ClientBootstrap(group: link.loop)
            .channelInitializer { channel in link.install(on: channel, onFramingError: onFramingError) }
        do {
            let channel = try await bootstrap.connect(unixDomainSocketPath: path).get()
            return H4StreamTransport(
                channel: channel.eventLoop.makeSucceededFuture(channel), link: link, reader: reader,
                writeStall: (TimeAmount(writeStallTimeout), "write to \(path)"))
        } catch {
            throw transportError(error, operation: "connect to \(path)")
        }
    }

    /// Hands `descriptor` (a configured terminal) to NIO; the transport owns it from now on.
    static func adoptTerminal(
        _ descriptor: Int32, writeStall: Duration, onFramingError: FramingErrorHandler?
    ) -> H4StreamTransport {
        let (link, reader) = Link.make(on: eventLoopGroup.next())
        let channel = NIOPipeBootstrap(group: link.loop)
            .channelInitializer { channel in link.install(on: channel, onFramingError: onFramingError) }
            .takingOwnershipOfDescriptor(inputOutput: descriptor)
        channel.whenFailure { error in link.finish(failure: transportError(error, operation: "register serial line")) }
        return H4StreamTransport(channel: channel, link: link, reader: reader, writeStall: (TimeAmount(writeStall), "serial write"))
    }

    // MARK: HCITransport

    public func send(_ packet: H4Packet) async throws(TransportError) {
        if let end = link.end { throw end }
        let channel: any Channel
        do {
            channel = try await self.channel.get()
        } catch {
            throw link.end ?? Self.transportError(error, operation: "write")
        }
        var buffer = channel.allocator.buffer(capacity: 1 + packet.bytes.count)
        buffer.writeInteger(packet.type.rawValue)
        buffer.writeBytes(packet.bytes)
        let promise = channel.eventLoop.makePromise(of: Void.self)
        channel.writeAndFlush(buffer, promise: promise)
        var written = promise.futureResult
        written = Self.bounding(written, on: channel, stall: writeStall.timeout, operation: writeStall.operation)
        do {
            try await written.get()
        } catch {
            if let failure = error as? TransportError { throw failure }
            throw link.end ?? Self.transportError(error, operation: "write", closing: link.isClosing)
        }
    }

    public func deliverPackets(to receiver: any HCIPacketReceiver) -> Bool {
        link.chooseReceiver(receiver)
    }

    public func close() async {
        link.markClosing()
        guard let channel = try? await self.channel.get() else { return }
        channel.close(promise: nil)
        try? await channel.closeFuture.get()
    }

    /// Completes once the channel has closed, the descriptor with it (NIO closes the descriptor
    /// before it completes the channel's close future): how a test learns that a transport it
    /// dropped let go of its descriptor. It holds no reference to the transport.
    package var channelClosed: EventLoopFuture<Void> { channel.flatMap { $0.closeFuture } }

    // MARK: Internals

    /// `written`, failed with `.timedOut(operation:)` when the channel's queued bytes do not go
    /// down for `stall` (a peer that stopped reading, CTS held low by an unpowered controller).
    private static func bounding(
        _ written: EventLoopFuture<Void>, on channel: any Channel, stall: TimeAmount, operation: String
    ) -> EventLoopFuture<Void> {
        let loop = channel.eventLoop
        return loop.flatSubmit {
            let promise = loop.makePromise(of: Void.self)
            // `queued` starts below any reading, so the first check never counts as "no progress";
            // a channel that cannot tell its queue (-1) is timed out after `stall` in all.
            let state = NIOLoopBoundBox((done: false, queued: Int.min), eventLoop: loop)
            written.whenComplete { result in
                guard !state.value.done else { return }
                state.value.done = true
                promise.completeWith(result)
            }
            @Sendable func check() {
                guard !state.value.done else { return }
                let queued = (try? channel.syncOptions?.getOption(ChannelOptions.bufferedWritableBytes)) ?? -1
                if queued == state.value.queued {
                    state.value.done = true
                    promise.fail(TransportError.timedOut(operation: operation))
                    return
                }
                state.value.queued = queued
                loop.scheduleTask(in: stall) { check() }
            }
            check()
            return promise.futureResult
        }
    }

    /// The typed error for an error NIO reported while doing `operation`.
    static func transportError(_ error: any Error, operation: String, closing: Bool = false) -> TransportError {
        if let transport = error as? TransportError { return transport }
        if let io = error as? IOError {
            switch io.errnoCode {
            // EIO: a terminal hung up (a pty's master closed, a USB adapter unplugged).
            case ECONNRESET, EPIPE, EIO, ENOTCONN: return closing ? .closed : .closedByPeer
            default: return .ioError(errno: io.errnoCode, operation: operation)
            }
        }
        switch error as? ChannelError {
        case .ioOnClosedChannel?, .alreadyClosed?: return closing ? .closed : .closedByPeer
        case .eof?, .inputClosed?, .outputClosed?: return closing ? .closed : .closedByPeer
        case .connectTimeout?: return .timedOut(operation: operation)
        default: return .ioError(errno: EIO, operation: "\(operation): \(error)")
        }
    }
}

// MARK: - The pieces on the loop

/// The producer that `packets` pulls from: back-pressured by high/low watermarks.
typealias PacketProducer = NIOThrowingAsyncSequenceProducer<
    H4Packet, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, LinkControl
>

/// The pipeline's one handler: frames the bytes of each read with the sans-I/O `H4Framer`
/// (a framing error goes to `onFramingError` and the byte is skipped), hands the read's
/// packets to the link in one batch, and holds the loop's next read while the reader lags.
/// One handler rather than a decoder in front of it: no packet is boxed on its way through the
/// pipeline.
final class PacketBridge: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = Any
    typealias OutboundOut = Any

    private let link: Link
    private var context: ChannelHandlerContext?
    private var framer = H4Framer()
    private var framingFinished = false
    private let onFramingError: H4StreamTransport.FramingErrorHandler?
    private var batch: [H4Packet] = []
    /// The producer is above its high watermark: hold reads.
    private var paused = false
    /// A read was asked for while paused: issue it on resume.
    private var readHeld = false
    /// The first error the channel reported: why it is going away.
    private var failure: (any Error)?

    init(link: Link, onFramingError: H4StreamTransport.FramingErrorHandler?) {
        self.link = link
        self.onFramingError = onFramingError
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        finishFraming()
        deliver()
        link.finish(failure: failure)
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Through the buffer's bytes, one copy: appending the `ByteBufferView` itself went
        // element by element (3 % of `hr`'s CPU, measured).
        unwrapInboundIn(data).withUnsafeReadableBytes { framer.append($0) }
        while true {
            do {
                guard let packet = try framer.nextPacket() else { break }
                batch.append(packet)
            } catch {
                onFramingError?(error)
            }
        }
    }

    /// The stream ended: an incomplete packet left in the framer is a framing error.
    private func finishFraming() {
        guard !framingFinished else { return }
        framingFinished = true
        do throws(H4FramerError) {
            try framer.finish()
        } catch {
            onFramingError?(error)
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        deliver()
        context.fireChannelReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if failure == nil { failure = error }
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        if link.activated(context.channel) { context.close(promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        finishFraming()
        deliver()
        link.finish(failure: failure)
        context.fireChannelInactive()
    }

    func read(context: ChannelHandlerContext) {
        if paused {
            readHeld = true
        } else {
            context.read()
        }
    }

    /// The reader caught up (or was chosen): read again.
    func resume() {
        paused = false
        if readHeld {
            readHeld = false
            context?.read()
        }
    }

    private func deliver() {
        guard !batch.isEmpty else { return }
        if link.deliver(batch) { paused = true }
        batch.removeAll(keepingCapacity: true)
    }
}

/// What the transport, its pipeline and its reader share: who reads (the `packets` stream or an
/// `HCIPacketReceiver`, chosen by whichever comes first), what was read before that choice,
/// whether the end is local, and why the connection ended.
final class Link: Sendable {
    let source: PacketProducer.Source
    /// The loop the channel runs on; every delivery happens there.
    let loop: any EventLoop
    private let control: LinkControl

    private init(source: PacketProducer.Source, loop: any EventLoop, control: LinkControl) {
        self.source = source
        self.loop = loop
        self.control = control
    }

    /// A link on `loop` and the reader of its packets.
    static func make(on loop: any EventLoop) -> (Link, PacketReader) {
        let control = LinkControl()
        let made = PacketProducer.makeSequence(
            backPressureStrategy: .init(
                lowWatermark: H4StreamTransport.inboundLowWatermark, highWatermark: H4StreamTransport.inboundHighWatermark),
            finishOnDeinit: false,
            delegate: control)
        let link = Link(source: made.source, loop: loop, control: control)
        return (link, PacketReader(made.sequence.makeAsyncIterator(), link: link))
    }

    /// The channel initializer: decoder and bridge (behind a ``PacketWriteSerializer`` on a
    /// packet socket, so no two packets leave in one `writev`).
    func install(
        on channel: any Channel, onFramingError: H4StreamTransport.FramingErrorHandler?, packetSocket: Bool = false
    ) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            let bridge = PacketBridge(link: self, onFramingError: onFramingError)
            if packetSocket { try channel.pipeline.syncOperations.addHandler(PacketWriteSerializer()) }
            try channel.pipeline.syncOperations.addHandler(bridge)
            control.state.withLock { $0.bridge = NIOLoopBound(bridge, eventLoop: channel.eventLoop) }
        }
    }

    /// The channel is registered and connected: from now on the consumer going away closes it.
    /// Returns whether the transport is already closing (then the caller closes the channel).
    func activated(_ channel: any Channel) -> Bool {
        control.state.withLock { state in
            state.channel = channel
            return state.closing
        }
    }

    var end: TransportError? { control.state.withLock { $0.end } }
    var isClosing: Bool { control.state.withLock { $0.closing } }

    func markClosing() { control.state.withLock { $0.closing = true } }

    // MARK: Choosing the reader

    /// `packets` is being read: the stream is the reader unless a receiver was chosen first
    /// (then `false`: the stream has nothing to give).
    func chooseStream() -> Bool {
        let (isStream, changed) = control.state.withLock { state -> (Bool, Bool) in
            switch state.reader {
            case .undecided:
                state.reader = .stream
                return (true, true)
            case .stream: return (true, false)
            case .receiver, .ended: return (false, false)
            }
        }
        if changed { settle() }
        return isStream
    }

    /// Makes `receiver` the reader, unless the stream was chosen first.
    func chooseReceiver(_ receiver: any HCIPacketReceiver) -> Bool {
        let chosen = control.state.withLock { state in
            guard case .undecided = state.reader else { return false }
            state.reader = .receiver(receiver)
            return true
        }
        if chosen { settle() }
        return chosen
    }

    /// Once the reader is chosen, on the loop: hands it what was read before (and the end, if
    /// it came), then lets the channel read again unless the stream is full.
    private func settle() {
        guard loop.inEventLoop else {
            loop.execute { self.settle() }
            return
        }
        let pause = deliver([])
        deliverEnd()
        guard !pause, let bridge = control.state.withLock({ $0.bridge }) else { return }
        bridge.value.resume()
    }

    // MARK: On the loop

    /// Hands `batch` (after anything held) to the reader, or holds it while none is chosen.
    /// Returns whether reading should pause: the stream is above its high watermark, or too
    /// much is held for a reader not chosen yet.
    func deliver(_ batch: [H4Packet]) -> Bool {
        enum Step {
            case hold(count: Int)
            case stream([H4Packet])
            case receiver(any HCIPacketReceiver, [H4Packet])
            /// After the receiver was given the end: nobody takes them.
            case drop
        }
        let step = control.state.withLock { state -> Step in
            var packets = batch
            if !state.pending.isEmpty {
                state.pending.append(contentsOf: batch)
                packets = state.pending
            }
            switch state.reader {
            case .undecided:
                if state.pending.isEmpty { state.pending = batch }
                return .hold(count: state.pending.count)
            case .stream:
                state.pending = []
                return .stream(packets)
            case .receiver(let receiver):
                state.pending = []
                return .receiver(receiver, packets)
            case .ended:
                state.pending = []
                return .drop
            }
        }
        switch step {
        case .drop:
            return false
        case .hold(let count):
            return count >= H4StreamTransport.inboundHighWatermark
        case .stream(let packets):
            guard !packets.isEmpty else { return false }
            if case .stopProducing = source.yield(contentsOf: packets) { return true }
            return false
        case .receiver(let receiver, let packets):
            if !packets.isEmpty { receiver.receive(packets) }
            return false
        }
    }

    /// Records why the connection ended (once: the first reason wins) and gives the reader the
    /// end after the packets already delivered (or at once when it is chosen, if later).
    func finish(failure: (any Error)?) {
        control.state.withLock { state in
            if state.end == nil {
                state.end =
                    state.closing
                    ? .closed
                    : failure.map { H4StreamTransport.transportError($0, operation: "read") } ?? .closedByPeer
            }
            state.bridge = nil
            state.channel = nil
        }
        deliverEnd()
    }

    /// The end, once, to the chosen reader, after what it was still owed.
    private func deliverEnd() {
        enum Step {
            case none
            case stream([H4Packet], TransportError)
            case receiver(any HCIPacketReceiver, [H4Packet], TransportError)
        }
        let step = control.state.withLock { state -> Step in
            guard let end = state.end, !state.endDelivered else { return .none }
            let packets = state.pending
            switch state.reader {
            case .undecided, .ended: return .none
            case .stream:
                state.endDelivered = true
                state.pending = []
                return .stream(packets, end)
            case .receiver(let receiver):
                state.endDelivered = true
                state.pending = []
                state.reader = .ended  // drop the receiver: nothing more comes
                return .receiver(receiver, packets, end)
            }
        }
        switch step {
        case .none: break
        case .stream(let packets, let end):
            if !packets.isEmpty { _ = source.yield(contentsOf: packets) }
            source.finish(end)
        case .receiver(let receiver, let packets, let end):
            if !packets.isEmpty { receiver.receive(packets) }
            receiver.transportEnded(end)
        }
    }
}

/// The producer's delegate: resumes reading when the consumer catches up, closes the channel
/// when the consumer is gone.
final class LinkControl: NIOAsyncSequenceProducerDelegate {
    /// Who takes the packets.
    enum Reader {
        /// Neither yet: packets are held in `pending` (bounded: reads pause).
        case undecided
        case stream
        case receiver(any HCIPacketReceiver)
        /// The receiver was given the end (and released).
        case ended
    }

    struct State {
        var closing = false
        var end: TransportError?
        /// Whether the reader was given the end.
        var endDelivered = false
        var reader = Reader.undecided
        /// Packets read before a reader was chosen.
        var pending: [H4Packet] = []
        var bridge: NIOLoopBound<PacketBridge>?
        var channel: (any Channel)?
    }

    let state = Mutex(State())

    func produceMore() {
        guard let bridge = state.withLock({ $0.bridge }) else { return }
        if bridge.eventLoop.inEventLoop {
            bridge.value.resume()
        } else {
            bridge.eventLoop.execute { bridge.value.resume() }
        }
    }

    /// The consumer is gone (cancelled, or the stream dropped): stop reading, close.
    func didTerminate() {
        let channel = state.withLock { state in
            state.closing = true
            return state.channel
        }
        channel?.close(promise: nil)
    }
}

/// The single consumer's handle on the producer, behind `packets`.
///
/// `@unchecked Sendable`: `iterator` is only touched by the one `next()` that won `busy`, so
/// there is never concurrent access (a second, concurrent consumer gets `nil`).
final class PacketReader: @unchecked Sendable {
    private var iterator: PacketProducer.AsyncIterator?
    private let busy = Mutex(false)
    private let link: Link

    init(_ iterator: PacketProducer.AsyncIterator, link: Link) {
        self.iterator = iterator
        self.link = link
    }

    func next() async throws -> H4Packet? {
        // A receiver took the packets: the stream has none.
        guard link.chooseStream() else { return nil }
        let mine = busy.withLock { busy in
            defer { busy = true }
            return !busy
        }
        guard mine else { return nil }
        defer { busy.withLock { $0 = false } }
        guard let current = iterator else { return nil }
        do {
            guard let packet = try await current.next() else {
                iterator = nil
                return nil
            }
            return packet
        } catch {
            iterator = nil  // ended: later calls return nil
            throw error
        }
    }
}
