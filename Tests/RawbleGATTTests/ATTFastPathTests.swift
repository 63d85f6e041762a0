import RawbleBearer
import RawbleGATT
import RawbleGATTCore
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

// The ATT client on a bearer with a fast path (ATTBearer.deliverPDUs(to:)): value updates are
// routed by the receiver itself, everything else still reaches the client in order.

/// A bearer that takes a receiver and lets the test push PDUs into it; records what is sent.
private final class FastBearer: ATTBearer {
    let pdus: AsyncThrowingStream<[UInt8], any Error>
    var maximumPDULength: Int { 517 }
    private struct State {
        var receiver: (any ATTPDUReceiver)?
        var sent: [[UInt8]] = []
        var answers: [[UInt8]: [UInt8]] = [:]
        /// Sends of this PDU wait until ``release()``.
        var held: [UInt8]?
        var heldSenders: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())
    /// Every PDU sent, awaitable (recorded with ``sent``).
    let sends = Recording<[UInt8]>()

    init() {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
        continuation.finish(throwing: BearerError.closed)  // never read on the fast path
        pdus = stream
    }

    var sent: [[UInt8]] { state.withLock { $0.sent } }

    /// The peer answers `request` with `response` (through the receiver).
    func answer(_ request: [UInt8], with response: [UInt8]) {
        state.withLock { $0.answers[request] = response }
    }

    func push(_ pdu: [UInt8]) {
        let receiver = state.withLock { $0.receiver }
        receiver?.receive(pdu[...])
    }

    func end(_ error: BearerError) {
        state.withLock { $0.receiver }?.bearerEnded(error)
    }

    /// Makes every send of `pdu` wait (recorded as sent first) until ``release()``: the client
    /// is then stuck, as behind a slow link.
    func hold(_ pdu: [UInt8]) {
        state.withLock { $0.held = pdu }
    }

    /// Lets the held sends return and stops holding.
    func release() {
        let waiting = state.withLock { state in
            state.held = nil
            defer { state.heldSenders = [] }
            return state.heldSenders
        }
        for sender in waiting { sender.resume() }
    }

    func send(_ pdu: [UInt8]) async throws(BearerError) {
        let answer = state.withLock { state in
            state.sent.append(pdu)
            return state.answers[pdu]
        }
        sends.append(pdu)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let hold = state.withLock { state -> Bool in
                guard state.held == pdu else { return false }
                state.heldSenders.append(continuation)
                return true
            }
            if !hold { continuation.resume() }
        }
        if let answer { push(answer) }
    }

    func close() async { end(.closed) }

    func deliverPDUs(to receiver: any ATTPDUReceiver) -> Bool {
        state.withLock { $0.receiver = receiver }
        return true
    }
}

/// Collects `count` updates from `stream`, failing after 10 s.
private func collect(
    _ count: Int, from stream: AsyncThrowingStream<ATTValueUpdate, any Error>
) async throws -> [ATTValueUpdate] {
    try await within(seconds: 10) {
        var updates: [ATTValueUpdate] = []
        for try await update in stream {
            updates.append(update)
            if updates.count == count { break }
        }
        return updates
    }
}

@Suite("ATT client fast path")
struct ATTFastPathTests {
    @Test("notifications pushed through the receiver reach the subscriber in order, values intact")
    func notificationsInOrder() async throws {
        let bearer = FastBearer()
        let client = ATTClient(bearer: bearer)
        let updates = await client.updates(for: 0x0010)
        for counter in UInt8(0)..<50 {
            bearer.push([0x1B, 0x10, 0x00, counter, 0xAA])
            bearer.push([0x1B, 0x11, 0x00, 0xFF])  // another handle: not this subscriber's
        }
        let received = try await collect(50, from: updates)
        #expect(received.map { Array($0.value) } == (UInt8(0)..<50).map { [$0, 0xAA] })
        #expect(received.allSatisfy { $0.handle == 0x0010 && !$0.isIndication })
    }

    @Test("responses still complete requests; an indication is routed and confirmed")
    func responsesAndIndications() async throws {
        let bearer = FastBearer()
        let client = ATTClient(bearer: bearer)
        bearer.answer([0x0A, 0x03, 0x00], with: [0x0B, 0x42])
        let response = try await client.request(.readRequest(handle: 3))
        #expect(response == .readResponse(value: [0x42]))
        let updates = await client.updates(for: nil)
        bearer.push([0x1D, 0x20, 0x00, 0x07])
        let received = try await collect(1, from: updates)
        #expect(received.first?.isIndication == true)
        #expect(received.first.map { Array($0.value) } == [0x07])
        try await bearer.sends.wait(until: { $0.contains([0x1E]) })  // the confirmation went out
    }

    @Test("an indication arriving while the client's inbound buffer is full is still confirmed (the confirmation is owed, never dropped)")
    func confirmationOwedWhenTheInboundBufferIsFull() async throws {
        let bearer = FastBearer()
        var configuration = ATTClient.Configuration()
        configuration.logger.logLevel = .critical
        let client = ATTClient(bearer: bearer, configuration: configuration)
        let updates = await client.updates(for: 0x0020)
        // The peer exchanges the MTU; the client's answer is held, so the client reads nothing more.
        let answer: [UInt8] = [0x03, 0x05, 0x02]
        bearer.hold(answer)
        bearer.push([0x02, 0x17, 0x00])
        try await bearer.sends.wait(until: { $0.contains(answer) })  // the client is stuck on it
        // Fill what waits for the client (stray responses), then the indication.
        for _ in 0..<1100 { bearer.push([0x0B, 0x00]) }
        bearer.push([0x1D, 0x20, 0x00, 0x07])
        bearer.release()
        try await bearer.sends.wait(until: { $0.contains([0x1E]) })
        #expect(bearer.sent.filter { $0 == [0x1E] }.count == 1, "one indication, one confirmation")
        let received = try await collect(1, from: updates)
        #expect(received.map { Array($0.value) } == [[0x07]])
    }

    @Test("malformed updates are dropped; the bearer's end finishes subscriptions with its error")
    func hostileInputAndEnd() async throws {
        let bearer = FastBearer()
        let client = ATTClient(bearer: bearer)
        let updates = await client.updates(for: 0x0010)
        bearer.push([0x1B, 0x10])  // too short
        bearer.push([0x1D])  // indication without a handle
        bearer.push([])  // empty
        bearer.push([0x1B, 0x10, 0x00, 0x01])
        bearer.end(.disconnected(reason: "gone"))
        let received = try await collect(1, from: updates)
        #expect(received.map { Array($0.value) } == [[0x01]])
        await #expect(throws: GATTError.bearer(.disconnected(reason: "gone"))) {
            _ = try await collect(1, from: updates)
        }
        await #expect(throws: GATTError.bearer(.disconnected(reason: "gone"))) {
            _ = try await client.request(.readRequest(handle: 3))
        }
    }
}
