import RawbleBearer
import Synchronization

/// An `ATTBearer` whose peer is a script, for byte-stream procedure tests in the manner of
/// BlueZ's `unit/test-gatt.c`: each expected request with the PDUs the peer answers, checked
/// byte for byte. No I/O, no clocks; thread-safe.
///
/// ```swift
/// let bearer = ScriptedATTBearer()
/// bearer.expect([0x02, 0x05, 0x02], reply: [[0x03, 0xF7, 0x00]])   // Exchange MTU 517 → 247
/// let client = ATTClient(bearer: bearer)
/// #expect(try await client.exchangeMTU() == 247)
/// #expect(bearer.remainingExpectations == 0)
/// ```
public final class ScriptedATTBearer: ATTBearer {
    public let pdus: AsyncThrowingStream<[UInt8], any Error>
    public let maximumPDULength: Int

    private let toClient: AsyncThrowingStream<[UInt8], any Error>.Continuation
    private let responder: (@Sendable ([UInt8]) -> [[UInt8]])?
    private struct State {
        var expectations: [(request: [UInt8], replies: [[UInt8]])] = []
        var sent: [[UInt8]] = []
        var unexpected: [[UInt8]] = []
        var endError: BearerError?
    }
    private let state = Mutex(State())

    /// A bearer that answers the requests queued with ``expect(_:reply:)``, in order.
    public init(maximumPDULength: Int = 517) {
        self.maximumPDULength = maximumPDULength
        self.responder = nil
        (pdus, toClient) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
    }

    /// A bearer whose peer answers every PDU the client sends with `respond(pdu)` (zero or
    /// more PDUs), for peers easier to write as a function than as a script.
    public init(maximumPDULength: Int = 517, respond: @escaping @Sendable ([UInt8]) -> [[UInt8]]) {
        self.maximumPDULength = maximumPDULength
        self.responder = respond
        (pdus, toClient) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
    }

    // MARK: The script

    /// Queues an expected request and the PDUs the peer answers to it (zero replies: the peer
    /// never answers).
    public func expect(_ request: [UInt8], reply: [[UInt8]]) {
        state.withLock { $0.expectations.append((request, reply)) }
    }

    /// Delivers a PDU from the peer at once (notifications, indications, late or stray
    /// responses, requests from the peer).
    public func inject(_ pdu: [UInt8]) {
        state.withLock { state in
            if state.endError == nil { toClient.yield(pdu) }
        }
    }

    /// Ends the bearer as the peer would (e.g. disconnection): `pdus` finishes throwing
    /// `error`, and later sends fail with it.
    public func end(with error: BearerError) {
        state.withLock { state in
            guard state.endError == nil else { return }
            state.endError = error
            toClient.finish(throwing: error)
        }
    }

    /// Every PDU the client sent, in order.
    public var sentPDUs: [[UInt8]] { state.withLock { $0.sent } }
    /// PDUs the client sent that did not match the next expectation (recorded, not answered).
    public var unexpectedPDUs: [[UInt8]] { state.withLock { $0.unexpected } }
    /// Expected requests the client has not sent yet.
    public var remainingExpectations: Int { state.withLock { $0.expectations.count } }
    /// Why the bearer ended (`.closed` after ``close()``), or nil while it is up.
    public var endError: BearerError? { state.withLock { $0.endError } }

    // MARK: ATTBearer

    public func send(_ pdu: [UInt8]) async throws(BearerError) {
        if pdu.count > maximumPDULength {
            throw .pduTooLong(length: pdu.count, maximum: maximumPDULength)
        }
        try state.withLock { state throws(BearerError) in
            if let error = state.endError { throw error }
            state.sent.append(pdu)
            if responder != nil { return }
            if let next = state.expectations.first, next.request == pdu {
                state.expectations.removeFirst()
                for reply in next.replies { toClient.yield(reply) }
            } else {
                state.unexpected.append(pdu)
            }
        }
        if let responder {
            let answers = responder(pdu)
            state.withLock { state in
                if state.endError == nil { for answer in answers { toClient.yield(answer) } }
            }
        }
    }

    public func close() async {
        end(with: .closed)
    }
}
