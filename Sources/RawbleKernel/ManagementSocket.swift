#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CBluetooth
import NIOCore
import NIOPosix
import RawbleManagementCore
import RawbleTransport
import RawbleWire
import Synchronization
import SystemPackage

/// A socket on the kernel's Bluetooth management interface (`HCI_CHANNEL_CONTROL`, the binary
/// protocol bluetoothd and btmgmt speak): commands out, each answered by Command Complete or
/// Command Status; every other event of every adapter in ``events``. All of it decoded by the
/// wire layer (`ManagementCommand`, `ManagementEvent`): a packet that does not decode is
/// dropped and counted, never trusted.
///
/// Any user may open one and send the read commands; the others (Set Powered, Start Discovery…)
/// need CAP_NET_ADMIN and are answered Permission Denied without it.
public final class ManagementSocket: Sendable {
    /// What the kernel answered to one command.
    public struct Reply: Hashable, Sendable {
        public var status: ManagementStatus
        /// Command Complete's return parameters (empty for Command Status).
        public var returnParameters: [UInt8]
    }

    private let channel: EventLoopFuture<any Channel>
    /// The clock the answers' timeouts run on.
    private let clock: any Clock<Duration>
    private let state: Mutex<State>
    private let eventOutput: AsyncStream<ManagementEvent>.Continuation
    /// Every management event that is not an answer to this socket's commands, in order
    /// (the newest 1024 kept when the reader falls behind); it finishes when the socket closes.
    public let events: AsyncStream<ManagementEvent>

    private struct Waiting {
        let id: UInt64
        let opcode: UInt16
        let index: UInt16
        let continuation: CheckedContinuation<Result<Reply, KernelError>, Never>
    }

    private struct State {
        var waiting: [Waiting] = []
        var nextID: UInt64 = 0
        var undecodable = 0
        var closed = false
    }

    private init(channel: EventLoopFuture<any Channel>, clock: any Clock<Duration>,
                 events: AsyncStream<ManagementEvent>, eventOutput: AsyncStream<ManagementEvent>.Continuation) {
        self.channel = channel
        self.clock = clock
        self.state = Mutex(State())
        self.events = events
        self.eventOutput = eventOutput
    }

    deinit {
        channel.whenSuccess { $0.close(promise: nil) }
    }

    /// Opens and binds a management socket (it sees every adapter). `clock`: what the answers'
    /// timeouts run on (the real continuous clock by default; a test's virtual one).
    /// - Throws: ``KernelError/noBluetoothInKernel`` and the other failures of a socket call.
    public static func open(clock: any Clock<Duration> = ContinuousClock()) throws(KernelError) -> ManagementSocket {
        adopt(try KernelManagement.openControlChannel().rawValue, clock: clock)
    }

    /// A management socket on `descriptor`, a bound socket that carries one management packet
    /// per read and per write (the kernel's control channel, or one end of a `SOCK_SEQPACKET`
    /// pair whose other end a test scripts as the kernel). The socket owns it from now on.
    /// `clock`: what the answers' timeouts run on (the real continuous clock by default).
    public static func adopt(_ descriptor: Int32, clock: any Clock<Duration> = ContinuousClock()) -> ManagementSocket {
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0, flags & O_NONBLOCK == 0 { _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) }
        let (events, output) = AsyncStream.makeStream(of: ManagementEvent.self, bufferingPolicy: .bufferingNewest(1024))
        let box = SocketBox()
        let channel = NIOPipeBootstrap(group: MultiThreadedEventLoopGroup.singleton.next())
            .channelOption(ChannelOptions.recvAllocator,
                           value: FixedSizeRecvByteBufferAllocator(capacity: 6 + ManagementPacket.maximumParameterCount))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        PacketWriteSerializer(), ManagementReader { box.socket?.receive($0) },
                    ])
                }
            }
            .takingOwnershipOfDescriptor(inputOutput: descriptor)
        let socket = ManagementSocket(channel: channel, clock: clock, events: events, eventOutput: output)
        box.set(socket)
        channel.whenSuccess { channel in
            channel.closeFuture.whenComplete { [weak socket] _ in socket?.finish() }
        }
        return socket
    }

    /// Sends `command` and waits for its answer, at most `timeout` on the socket's clock.
    /// - Throws: ``KernelError/system(operation:errno:)`` (ETIMEDOUT) when no answer comes in
    ///   time, or the socket's failure.
    public func send(_ command: ManagementCommand, timeout: Duration = .seconds(5)) async throws(KernelError) -> Reply {
        let operation = "\(command.name) for hci\(command.index)"
        let channel: any Channel
        do {
            channel = try await self.channel.get()
        } catch {
            throw .system(operation: "opening the management channel", errno: .ioError)
        }
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        let clock = self.clock
        let timer = Task { [weak self] in
            guard (try? await clock.sleep(for: timeout)) != nil else { return }
            self?.resolve(id, with: .failure(.system(operation: "waiting for the answer to \(operation)", errno: .timedOut)))
        }
        defer { timer.cancel() }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Reply, KernelError>, Never>) in
            let closed = state.withLock { state -> Bool in
                guard !state.closed else { return true }
                state.waiting.append(Waiting(id: id, opcode: command.opcode, index: command.index, continuation: continuation))
                return false
            }
            if closed {
                continuation.resume(returning: .failure(.system(operation: operation, errno: .badFileDescriptor)))
                return
            }
            var buffer = channel.allocator.buffer(capacity: 6 + command.parameters.count)
            buffer.writeBytes(command.encoded)
            channel.writeAndFlush(buffer).whenFailure { [weak self] _ in
                self?.resolve(id, with: .failure(.system(operation: "sending \(operation)", errno: .ioError)))
            }
        }
        return try result.get()
    }

    /// How many received packets did not decode (and were dropped).
    public var undecodablePackets: Int { state.withLock { $0.undecodable } }

    /// Closes the socket: commands still waiting fail, ``events`` finishes.
    public func close() async {
        if let channel = try? await channel.get() { try? await channel.close() }
        finish()
    }

    private func receive(_ datagram: ArraySlice<UInt8>) {
        let event: ManagementEvent
        do {
            event = try ManagementEvent.decode(datagram)
        } catch {
            state.withLock { $0.undecodable += 1 }
            return
        }
        let answered: (opcode: UInt16, index: UInt16, reply: Reply)? = switch event {
        case let .commandComplete(index, opcode, status, returnParameters):
            (opcode, index, Reply(status: status, returnParameters: returnParameters))
        case let .commandStatus(index, opcode, status):
            (opcode, index, Reply(status: status, returnParameters: []))
        default: nil
        }
        guard let answered else {
            eventOutput.yield(event)
            return
        }
        let waiter = state.withLock { state -> Waiting? in
            guard let at = state.waiting.firstIndex(where: { $0.opcode == answered.opcode && $0.index == answered.index }) else { return nil }
            return state.waiting.remove(at: at)
        }
        waiter?.continuation.resume(returning: .success(answered.reply))
    }

    private func resolve(_ id: UInt64, with result: Result<Reply, KernelError>) {
        let waiter = state.withLock { state -> Waiting? in
            guard let at = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiting.remove(at: at)
        }
        waiter?.continuation.resume(returning: result)
    }

    private func finish() {
        let waiting = state.withLock { state -> [Waiting] in
            state.closed = true
            defer { state.waiting.removeAll() }
            return state.waiting
        }
        for waiter in waiting {
            waiter.continuation.resume(returning: .failure(.system(operation: "the management channel closed", errno: .badFileDescriptor)))
        }
        eventOutput.finish()
    }
}

/// Lets the channel's reader reach the socket made after the channel (weakly: the socket owns
/// the channel, not the other way round).
private final class SocketBox: Sendable {
    private struct Reference {
        weak var socket: ManagementSocket?
    }
    private let reference = Mutex(Reference())

    var socket: ManagementSocket? { reference.withLock { $0.socket } }
    func set(_ socket: ManagementSocket) { reference.withLock { $0.socket = socket } }
}

/// One management packet per read (a packet socket), handed on as bytes.
private final class ManagementReader: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let onPacket: (ArraySlice<UInt8>) -> Void

    init(_ onPacket: @escaping (ArraySlice<UInt8>) -> Void) {
        self.onPacket = onPacket
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        onPacket(ArraySlice(buffer.readableBytesView))
    }
}
