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
///
/// A request (a PDU that waits for an answer) that is not the script's next one fails at once
/// (``MismatchPolicy/fail``, the default): the send throws, and the bearer ends, with a
/// `BearerError.transport(_:)` that names the step and shows both PDUs in hex, e.g. `script
/// step 2 of 3: expected 0A 03 00, sent 0A 05 00`, so the procedure under test fails with it
/// instead of waiting for its ATT timeout. ``mismatch`` keeps that line for the test to show.
/// PDUs that wait for no answer (Write Command, Handle Value Confirmation, the answer to a
/// request the peer injected) match the script's next step when it lists them, and are
/// otherwise only recorded in ``unexpectedPDUs``.
public final class ScriptedATTBearer: ATTBearer {
    /// What a PDU the script does not expect does.
    public enum MismatchPolicy: Sendable {
        /// A request the script does not expect: the send throws and the bearer ends, naming
        /// the step with both PDUs in hex.
        case fail
        /// The PDU is recorded in ``unexpectedPDUs`` and not answered; the script goes on
        /// (for tests of what a client does when its peer stays silent).
        case record
    }

    public let pdus: AsyncThrowingStream<[UInt8], any Error>
    public let maximumPDULength: Int

    /// What a PDU the script does not expect does.
    public let mismatchPolicy: MismatchPolicy

    private let toClient: AsyncThrowingStream<[UInt8], any Error>.Continuation
    private let responder: (@Sendable ([UInt8]) -> [[UInt8]])?
    private struct State {
        var expectations: [(request: [UInt8], replies: [[UInt8]])] = []
        /// Steps queued so far, and how many of them the client has sent.
        var stepCount = 0
        var stepsDone = 0
        var sent: [[UInt8]] = []
        var unexpected: [[UInt8]] = []
        var mismatch: String?
        var endError: BearerError?
    }
    private let state = Mutex(State())

    /// A bearer that answers the requests queued with ``expect(_:reply:)``, in order.
    public init(maximumPDULength: Int = 517, onMismatch policy: MismatchPolicy = .fail) {
        self.maximumPDULength = maximumPDULength
        self.mismatchPolicy = policy
        self.responder = nil
        (pdus, toClient) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
    }

    /// A bearer whose peer answers every PDU the client sends with `respond(pdu)` (zero or
    /// more PDUs), for peers easier to write as a function than as a script.
    public init(maximumPDULength: Int = 517, respond: @escaping @Sendable ([UInt8]) -> [[UInt8]]) {
        self.maximumPDULength = maximumPDULength
        self.mismatchPolicy = .record
        self.responder = respond
        (pdus, toClient) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
    }

    // MARK: The script

    /// Queues an expected request and the PDUs the peer answers to it (zero replies: the peer
    /// never answers).
    public func expect(_ request: [UInt8], reply: [[UInt8]]) {
        state.withLock { state in
            state.expectations.append((request, reply))
            state.stepCount += 1
        }
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
    /// The first PDU that did not match the script, as the line the bearer failed with
    /// (``MismatchPolicy/fail``); nil while the client followed the script.
    public var mismatch: String? { state.withLock { $0.mismatch } }
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
                state.stepsDone += 1
                for reply in next.replies { toClient.yield(reply) }
                return
            }
            state.unexpected.append(pdu)
            // PDUs that wait for no answer (commands, confirmations, answers to the peer's own
            // requests) are only recorded: a script lists the requests a procedure makes.
            guard mismatchPolicy == .fail, let opcode = pdu.first, Self.requestOpcodes.contains(opcode) else { return }
            let step = state.stepsDone + 1
            let line = if let next = state.expectations.first {
                "script step \(step) of \(state.stepCount): expected \(Self.hex(next.request)), sent \(Self.hex(pdu))"
            } else {
                "script step \(step): the script expects nothing more (\(state.stepCount) steps), sent \(Self.hex(pdu))"
            }
            if state.mismatch == nil { state.mismatch = line }
            let error = BearerError.transport(line)
            state.endError = error
            toClient.finish(throwing: error)
            throw error
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

    /// The ATT requests (Core Vol 3 Part F 3.4.8): the PDUs a client sends and then waits for
    /// an answer to, from Exchange MTU (0x02) to Read Multiple Variable (0x20).
    static let requestOpcodes: Set<UInt8> = [0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20]

    /// `0A 03 00`: bytes as the mismatch line shows them.
    public static func hex(_ bytes: [UInt8]) -> String {
        bytes.isEmpty ? "(nothing)" : hexString(bytes)
    }
}
