#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix
import RawbleTransport

// ReadLoopFloor PORT COUNT [SIZE] handler|consumer — the SwiftNIO side of
// Scripts/benchmark-readloop (issue 10): what SwiftNIO's read loop alone costs per packet, with
// nothing of rawble's stack in it, next to a C program's blocking read(2).
//   handler:  a ChannelInboundHandler counts the bytes (NIO's epoll loop, read, pipeline).
//   consumer: the same, and each read also resumes one consumer task that runs on the loop
//             (rawble's EventLoopTaskExecutor), as `rawble hr` consumes its values.
// One JSON line: reads, and this process's CPU (CLOCK_PROCESS_CPUTIME_ID) from the first
// byte to the last, per packet.

let arguments = CommandLine.arguments
guard arguments.count == 5, let port = Int(arguments[1]), let count = Int(arguments[2]), let size = Int(arguments[3]),
      count > 1, size > 0, ["handler", "consumer"].contains(arguments[4]) else {
    print("usage: ReadLoopFloor PORT COUNT SIZE handler|consumer")
    exit(64)
}
let mode = arguments[4]

func cpuSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Loop-confined counters, and the consumer waiting for the next read (consumer mode).
final class ReadState: @unchecked Sendable {
    var bytes = 0
    var reads = 0
    var firstCPU = 0.0
    var handedOver = 0
    var waiting: UnsafeContinuation<Int, Never>?
    let count: Int
    let size: Int
    let done: EventLoopPromise<Void>
    init(count: Int, size: Int, done: EventLoopPromise<Void>) {
        self.count = count
        self.size = size
        self.done = done
    }

    /// Packets received that the consumer has not taken yet.
    var unclaimed: Int { bytes / size - handedOver }
}

final class Counter: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    let state: ReadState
    let resumesConsumer: Bool
    init(_ state: ReadState, resumesConsumer: Bool) {
        self.state = state
        self.resumesConsumer = resumesConsumer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if state.reads == 0 { state.firstCPU = cpuSeconds() }
        state.reads += 1
        state.bytes += unwrapInboundIn(data).readableBytes
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if resumesConsumer {
            if let waiting = state.waiting, state.unclaimed > 0 {
                state.waiting = nil
                let taken = state.unclaimed
                state.handedOver += taken
                waiting.resume(returning: taken)
            }
        } else if state.bytes >= state.count * state.size {
            state.done.succeed(())
        }
    }
}

/// Takes packets until `count`, resumed by each read, on the loop (nonisolated, as `rawble hr`'s loop is).
nonisolated func consume(_ state: ReadState, on executor: EventLoopTaskExecutor) async {
    await withTaskExecutorPreference(executor) {
        var taken = 0
        while taken < state.count {
            taken += await withUnsafeContinuation { continuation in
                if state.unclaimed > 0 {
                    let taken = state.unclaimed
                    state.handedOver += taken
                    continuation.resume(returning: taken)
                } else {
                    state.waiting = continuation
                }
            }
        }
        state.done.succeed(())
    }
}

let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let loop = group.next()
let state = ReadState(count: count, size: size, done: loop.makePromise())
let channel = try await ClientBootstrap(group: group)
    .channelOption(.socketOption(.tcp_nodelay), value: 1)
    .channelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(Counter(state, resumesConsumer: mode == "consumer"))
        }
    }
    .connect(host: "127.0.0.1", port: port).get()
if mode == "consumer" {
    await consume(state, on: EventLoopTaskExecutor(loop))
}
try await state.done.futureResult.get()
let cpu = cpuSeconds() - state.firstCPU
print(#"{"reader":"SwiftNIO \#(mode)","reads":\#(state.reads),"cpuPerPacketMicros":\#((cpu * 1e6 / Double(count - 1) * 100).rounded() / 100)}"#)
try? await channel.close().get()
try? await group.shutdownGracefully()
