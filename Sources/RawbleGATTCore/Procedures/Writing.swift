// Write procedures (Core Vol 3 Part G 4.9, 4.12.3): a Write Request, and the Prepare/Execute
// Write queue behind long and reliable writes. Values the caller gives are checked when the
// procedure is made (the initializers throw), so a procedure never sends a PDU that cannot fit.

import RawbleWire

/// Write Characteristic Value, or write a descriptor (Core Vol 3 Part G 4.9.3, 4.12.3): one
/// Write Request. The value must fit one PDU (ATT_MTU − 3 bytes); longer values take a
/// ``LongWrite``.
public struct WriteValue: GATTProcedure {
    public let handle: UInt16
    public let value: [UInt8]
    private var awaiting = false

    /// Throws ``GATTError/valueTooLong(_:)`` when `value` is longer than ATT_MTU − 3 bytes.
    public init(handle: UInt16, value: [UInt8], mtu: UInt16) throws(GATTError) {
        if value.count > Int(max(mtu, ATTPDU.defaultMTU)) - 3 { throw .valueTooLong(value.count) }
        self.handle = handle
        self.value = value
    }

    /// A value known to fit (a descriptor value of a few bytes).
    init(handle: UInt16, shortValue: [UInt8]) {
        self.handle = handle
        value = shortValue
    }

    public mutating func start() -> GATTProcedureStep<Void> {
        awaiting = true
        return .send(.writeRequest(handle: handle, value: value[...]))
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTError) -> GATTProcedureStep<Void> {
        guard awaiting else { throw .noRequestOutstanding(response) }
        awaiting = false
        switch response {
        case .writeResponse:
            return .finished(())
        case let .errorResponse(requestOpcode, handle, code):
            throw .att(try GATTError.fromErrorResponse(requestOpcode: requestOpcode, handle: handle, code: code, answering: .writeRequest))
        default:
            throw .unexpected(response, to: .writeRequest)
        }
    }
}

/// Writes a Client Characteristic Configuration descriptor (Core Vol 3 Part G 4.12.3): a
/// ``WriteValue`` of its 2 bytes, which always fit.
public struct WriteCCCD: GATTProcedure {
    private var write: WriteValue

    public init(handle: UInt16, value: ClientCharacteristicConfiguration) {
        write = WriteValue(handle: handle, shortValue: [UInt8(value.rawValue & 0xFF), UInt8(value.rawValue >> 8)])
    }

    public mutating func start() -> GATTProcedureStep<Void> { write.start() }

    public mutating func receive(_ response: ATTPDU) throws(GATTError) -> GATTProcedureStep<Void> {
        try write.receive(response)
    }
}

/// Write Long Characteristic Values (Core Vol 3 Part G 4.9.4): Prepare Write Requests of at most
/// ATT_MTU − 5 bytes each, every echo checked, then Execute Write. A wrong echo or a failed part
/// cancels the queue on the server (Execute Write, cancel) before the procedure fails.
public struct LongWrite: GATTProcedure {
    private var queue: PreparedWriteQueue

    /// Throws ``GATTError/valueTooLong(_:)`` when `offset` + `value` pass 512 bytes.
    public init(handle: UInt16, value: [UInt8], mtu: UInt16, offset: UInt16 = 0) throws(GATTError) {
        try checkValueLength(Int(offset) + value.count)
        queue = PreparedWriteQueue(mtu: mtu)
        queue.add(handle: handle, value: value, offset: offset)
    }

    public mutating func start() -> GATTProcedureStep<Void> { queue.start() }

    public mutating func receive(_ response: ATTPDU) throws(GATTError) -> GATTProcedureStep<Void> {
        try queue.receive(response)
    }
}

/// Reliable Writes (Core Vol 3 Part G 4.9.5): every part of every write prepared and its echo
/// verified, then one Execute Write, so the server applies all of them or none. A wrong echo
/// cancels the queue before the procedure fails.
public struct ReliableWrite: GATTProcedure {
    private var queue: PreparedWriteQueue

    /// Throws ``GATTError/valueTooLong(_:)`` when a value is longer than 512 bytes.
    public init(_ writes: [GATTHandleValue], mtu: UInt16) throws(GATTError) {
        queue = PreparedWriteQueue(mtu: mtu)
        for write in writes {
            try checkValueLength(write.value.count)
            queue.add(handle: write.handle, value: write.value, offset: 0)
        }
    }

    public mutating func start() -> GATTProcedureStep<Void> { queue.start() }

    public mutating func receive(_ response: ATTPDU) throws(GATTError) -> GATTProcedureStep<Void> {
        try queue.receive(response)
    }
}

/// The Prepare Write / Execute Write exchange shared by long and reliable writes.
struct PreparedWriteQueue: Sendable {
    /// One Prepare Write Request's worth of a value.
    struct Part: Hashable, Sendable {
        var handle: UInt16
        var offset: UInt16
        var value: ArraySlice<UInt8>
    }

    private enum Phase: Sendable {
        case idle
        case preparing
        case executing
        /// Execute Write (cancel) is out; the procedure then fails with this error.
        case cancelling(GATTError)
        case done
    }

    private let partSize: Int
    private var parts: [Part] = []
    private var index = 0
    private var phase = Phase.idle

    init(mtu: UInt16) {
        partSize = Int(max(mtu, ATTPDU.defaultMTU)) - 5
    }

    /// Splits `value` into parts (one empty part for an empty value). The caller has checked
    /// that `offset` + `value.count` ≤ 512, so every offset fits.
    mutating func add(handle: UInt16, value: [UInt8], offset: UInt16) {
        var start = 0
        repeat {
            let end = min(start + partSize, value.count)
            parts.append(Part(handle: handle, offset: offset &+ UInt16(truncatingIfNeeded: start), value: value[start..<end]))
            start = end
        } while start < value.count
    }

    mutating func start() -> GATTProcedureStep<Void> {
        guard let first = parts.first else {
            phase = .done
            return .finished(())
        }
        phase = .preparing
        return .send(.prepareWriteRequest(handle: first.handle, offset: first.offset, value: first.value))
    }

    mutating func receive(_ response: ATTPDU) throws(GATTError) -> GATTProcedureStep<Void> {
        let current = phase
        phase = .done // until the next request: an answer that throws ends the procedure
        switch current {
        case .idle, .done:
            throw .noRequestOutstanding(response)
        case .preparing:
            return try receivePrepared(response)
        case .executing:
            switch response {
            case .executeWriteResponse:
                return .finished(())
            case let .errorResponse(requestOpcode, handle, code):
                throw .att(try GATTError.fromErrorResponse(requestOpcode: requestOpcode, handle: handle, code: code, answering: .executeWriteRequest))
            default:
                throw .unexpected(response, to: .executeWriteRequest)
            }
        case .cancelling(let error):
            // Whatever the server says to the cancel, the procedure has already failed.
            throw error
        }
    }

    private mutating func receivePrepared(_ response: ATTPDU) throws(GATTError) -> GATTProcedureStep<Void> {
        guard parts.indices.contains(index) else { throw .noRequestOutstanding(response) }
        let sent = parts[index]
        let failure: GATTError
        switch response {
        case let .prepareWriteResponse(handle, offset, value):
            if handle == sent.handle && offset == sent.offset && value.elementsEqual(sent.value) {
                index += 1
                phase = .preparing
                guard parts.indices.contains(index) else {
                    phase = .executing
                    return .send(.executeWriteRequest(flags: .write))
                }
                let next = parts[index]
                return .send(.prepareWriteRequest(handle: next.handle, offset: next.offset, value: next.value))
            }
            failure = .invalidResponse("Prepare Write Response echoes handle 0x\(Hex.padded(handle, digits: 4)), offset \(offset), \(value.count) bytes for handle 0x\(Hex.padded(sent.handle, digits: 4)), offset \(sent.offset), \(sent.value.count) bytes sent")
        case let .errorResponse(requestOpcode, handle, code):
            let error = try? GATTError.fromErrorResponse(requestOpcode: requestOpcode, handle: handle, code: code, answering: .prepareWriteRequest)
            guard let error else {
                failure = .invalidResponse("Error Response for \(requestOpcode.name) in answer to Prepare Write Request")
                break
            }
            // Nothing queued yet: nothing to cancel.
            if index == 0 {
                throw .att(error)
            }
            failure = .att(error)
        default:
            failure = .unexpected(response, to: .prepareWriteRequest)
        }
        phase = .cancelling(failure)
        return .send(.executeWriteRequest(flags: .cancel))
    }
}
