import Synchronization

/// Where one connection's incoming ATT PDUs go: held (bounded) until a reader chooses how to
/// take them, then into a bearer's ``ATTBearer/pdus`` stream or straight to an ``ATTPDUReceiver``
/// (its ``ATTBearer/deliverPDUs(to:)`` fast path). Bearers share it: rawble's own host and the
/// kernel's L2CAP socket.
/// Thread-safe; the receiver is called under the lock, so calls never overlap or reorder.
public final class ATTInbox: Sendable {
    private enum Reader {
        /// Nobody reads yet: PDUs wait in `pending`.
        case none
        case stream(AsyncThrowingStream<[UInt8], any Error>, AsyncThrowingStream<[UInt8], any Error>.Continuation)
        case receiver(any ATTPDUReceiver)
    }
    private struct State {
        var reader = Reader.none
        var pending: [ArraySlice<UInt8>] = []
        var end: BearerError?
    }
    private let state = Mutex(State())
    private let limit: Int

    /// `limit`: PDUs buffered for a reader that is behind; newer ones are dropped.
    public init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Hands a PDU on; `false` when it was dropped (the reader is `limit` PDUs behind).
    public func deliver(_ pdu: ArraySlice<UInt8>) -> Bool {
        state.withLock { state in
            guard state.end == nil else { return true }
            switch state.reader {
            case .none:
                guard state.pending.count < limit else { return false }
                state.pending.append(pdu)
                return true
            case .stream(_, let continuation):
                if case .dropped = continuation.yield(Array(pdu)) { return false }
                return true
            case .receiver(let receiver):
                receiver.receive(pdu)
                return true
            }
        }
    }

    /// The bearer ended: the reader learns why after every PDU before it. The first end wins.
    public func finish(_ error: BearerError) {
        state.withLock { state in
            guard state.end == nil else { return }
            state.end = error
            switch state.reader {
            case .none: break
            case .stream(_, let continuation): continuation.finish(throwing: error)
            case .receiver(let receiver): receiver.bearerEnded(error)
            }
        }
    }

    /// The stream reader: created on first use with what is pending.
    public func stream() -> AsyncThrowingStream<[UInt8], any Error> {
        state.withLock { state in
            switch state.reader {
            case .stream(let stream, _):
                return stream
            case .receiver:
                let (stream, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
                continuation.finish(throwing: BearerError.closed)
                return stream
            case .none:
                let (stream, continuation) = AsyncThrowingStream.makeStream(
                    of: [UInt8].self, throwing: (any Error).self, bufferingPolicy: .bufferingOldest(limit))
                for pdu in state.pending { continuation.yield(Array(pdu)) }
                state.pending = []
                if let end = state.end { continuation.finish(throwing: end) }
                state.reader = .stream(stream, continuation)
                return stream
            }
        }
    }

    /// Makes `receiver` the reader (given what is pending first); `false` when one is chosen.
    public func install(_ receiver: any ATTPDUReceiver) -> Bool {
        state.withLock { state in
            guard case .none = state.reader else { return false }
            state.reader = .receiver(receiver)
            for pdu in state.pending { receiver.receive(pdu) }
            state.pending = []
            if let end = state.end { receiver.bearerEnded(end) }
            return true
        }
    }
}
