// Read procedures (Core Vol 3 Part G 4.8): one value, a long value, several values, values by
// type. Values longer than the 512 bytes an attribute may hold are rejected.

import RawbleWire

/// Throws ``GATTError/valueTooLong(_:)`` for a value over 512 bytes.
func checkValueLength(_ count: Int) throws(GATTError) {
    if count > ATTPDU.maximumValueLength { throw .valueTooLong(count) }
}

/// Read Characteristic Value, or read a descriptor (Core Vol 3 Part G 4.8.1, 4.12.1): one Read
/// Request. The value is at most ATT_MTU − 1 bytes; use ``ReadLongValue`` for longer ones.
public struct ReadValue: GATTProcedure {
    public let handle: UInt16
    private var awaiting = false

    public init(handle: UInt16) { self.handle = handle }

    public mutating func start() -> GATTProcedureStep<[UInt8]> {
        awaiting = true
        return .send(.readRequest(handle: handle))
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTError) -> GATTProcedureStep<[UInt8]> {
        guard awaiting else { throw .noRequestOutstanding(response) }
        awaiting = false
        switch response {
        case .readResponse(let value):
            try checkValueLength(value.count)
            return .finished(Array(value))
        case let .errorResponse(requestOpcode, handle, code):
            throw .att(try GATTError.fromErrorResponse(requestOpcode: requestOpcode, handle: handle, code: code, answering: .readRequest))
        default:
            throw .unexpected(response, to: .readRequest)
        }
    }
}

/// Read Long Characteristic Values (Core Vol 3 Part G 4.8.3): a Read Request, then Read Blob
/// Requests at the running offset while each part filled the response (ATT_MTU − 1 bytes).
/// Attribute Not Long or Invalid Offset on the first blob means the first part was all of it.
public struct ReadLongValue: GATTProcedure {
    public let handle: UInt16
    /// The ATT_MTU in force (at least 23).
    public let mtu: UInt16
    private var value: [UInt8] = []
    private var pending: ATTOpcode?

    public init(handle: UInt16, mtu: UInt16) {
        self.handle = handle
        self.mtu = max(mtu, ATTPDU.defaultMTU)
    }

    /// The most value bytes a Read or Read Blob Response carries.
    private var fullPart: Int { Int(mtu) - 1 }

    public mutating func start() -> GATTProcedureStep<[UInt8]> {
        pending = .readRequest
        return .send(.readRequest(handle: handle))
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTError) -> GATTProcedureStep<[UInt8]> {
        guard let request = pending else { throw .noRequestOutstanding(response) }
        pending = nil
        switch (request, response) {
        case (.readRequest, .readResponse(let part)), (.readBlobRequest, .readBlobResponse(let part)):
            try checkValueLength(value.count + part.count)
            value += part
            // A part shorter than a full response is the last one; a value of exactly 512 bytes
            // has nothing after it.
            guard part.count >= fullPart, value.count < ATTPDU.maximumValueLength else { return .finished(value) }
            pending = .readBlobRequest
            return .send(.readBlobRequest(handle: handle, offset: UInt16(value.count)))
        case let (_, .errorResponse(requestOpcode, errorHandle, code)):
            let error = try GATTError.fromErrorResponse(requestOpcode: requestOpcode, handle: errorHandle, code: code, answering: request)
            let firstBlob = request == .readBlobRequest && value.count == fullPart
            if firstBlob && code == .attributeNotLong { return .finished(value) }
            // Invalid Offset at the value's end: a server's way of saying there is no more.
            if request == .readBlobRequest && code == .invalidOffset { return .finished(value) }
            throw .att(error)
        default:
            throw .unexpected(response, to: request)
        }
    }
}

/// Read Multiple Characteristic Values (Core Vol 3 Part G 4.8.4): one Read Multiple Request
/// for two or more handles; the answer is the values concatenated (the caller knows their
/// lengths). Fewer than two handles is the caller's mistake, which the server rejects.
public struct ReadMultipleValues: GATTProcedure {
    public let handles: [UInt16]
    private var awaiting = false

    public init(handles: [UInt16]) { self.handles = handles }

    public mutating func start() -> GATTProcedureStep<[UInt8]> {
        awaiting = true
        return .send(.readMultipleRequest(handles: handles))
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTError) -> GATTProcedureStep<[UInt8]> {
        guard awaiting else { throw .noRequestOutstanding(response) }
        awaiting = false
        switch response {
        case .readMultipleResponse(let values):
            return .finished(Array(values))
        case let .errorResponse(requestOpcode, handle, code):
            throw .att(try GATTError.fromErrorResponse(requestOpcode: requestOpcode, handle: handle, code: code, answering: .readMultipleRequest))
        default:
            throw .unexpected(response, to: .readMultipleRequest)
        }
    }
}

/// Read Multiple Variable Length Characteristic Values (Core Vol 3 Part G 4.8.5): one value per
/// handle, in order. The server may cut the list at the ATT_MTU: then fewer values come back,
/// and the last may be shorter than its length (read the rest with ``ReadLongValue``).
public struct ReadMultipleVariableValues: GATTProcedure {
    public let handles: [UInt16]
    private var awaiting = false

    public init(handles: [UInt16]) { self.handles = handles }

    public mutating func start() -> GATTProcedureStep<[[UInt8]]> {
        awaiting = true
        return .send(.readMultipleVariableRequest(handles: handles))
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTError) -> GATTProcedureStep<[[UInt8]]> {
        guard awaiting else { throw .noRequestOutstanding(response) }
        awaiting = false
        switch response {
        case .readMultipleVariableResponse(let tuples):
            guard tuples.count <= handles.count else {
                throw .invalidResponse("Read Multiple Variable Response holds \(tuples.count) values for \(handles.count) handles")
            }
            var values: [[UInt8]] = []
            values.reserveCapacity(tuples.count)
            for tuple in tuples {
                try checkValueLength(Int(tuple.length))
                values.append(Array(tuple.value))
            }
            return .finished(values)
        case let .errorResponse(requestOpcode, handle, code):
            throw .att(try GATTError.fromErrorResponse(requestOpcode: requestOpcode, handle: handle, code: code, answering: .readMultipleVariableRequest))
        default:
            throw .unexpected(response, to: .readMultipleVariableRequest)
        }
    }
}

/// Read Using Characteristic UUID (Core Vol 3 Part G 4.8.2): Read By Type with the
/// characteristic's UUID over `range`, continuing after each response's last handle, ending on
/// Attribute Not Found. A value may be cut at ATT_MTU − 4 bytes by the server.
public struct ReadUsingCharacteristicUUID: GATTProcedure {
    public let uuid: BluetoothUUID
    private var walk: HandleWalk<GATTHandleValue>

    public init(_ uuid: BluetoothUUID, range: ClosedRange<UInt16> = 0x0001...0xFFFF) {
        self.uuid = uuid
        walk = HandleWalk(range, request: .readByTypeRequest, finding: "values")
    }

    public mutating func start() -> GATTProcedureStep<[GATTHandleValue]> { next() }

    private mutating func next() -> GATTProcedureStep<[GATTHandleValue]> {
        walk.next { [uuid] in .readByTypeRequest(startHandle: $0.start, endHandle: $0.end, attributeType: uuid) }
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTError) -> GATTProcedureStep<[GATTHandleValue]> {
        try walk.accept(response)
        guard case .readByTypeResponse(let entries) = response else {
            try walk.expectEnd(response)
            return .finished(walk.items)
        }
        try walk.collect(entries, in: "Read By Type Response", handle: \.handle) { entry throws(GATTError) in
            try checkValueLength(entry.value.count)
            return (GATTHandleValue(handle: entry.handle, value: Array(entry.value)), entry.handle)
        }
        return next()
    }
}
