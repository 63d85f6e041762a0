// What every procedure shares: the handle/value pair, the checks on a response's handles and
// the errors for answers that break the rules. Imports nothing, so the fuzz build can compile
// the procedures into one module with the wire layer.

import RawbleWire

/// An attribute handle with a value: what Read Using Characteristic UUID returns and what a
/// reliable write writes.
public struct GATTHandleValue: Hashable, Sendable {
    public var handle: UInt16
    public var value: [UInt8]

    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

extension GATTError {
    /// A response of the wrong kind for `request` (another response opcode, an unknown PDU).
    static func unexpected(_ response: ATTPDU, to request: ATTOpcode) -> GATTError {
        .invalidResponse("\(response.opcode) in answer to \(request.name)")
    }

    /// The error an Error Response reports, after checking it answers `request`.
    static func fromErrorResponse(requestOpcode: ATTOpcode, handle: UInt16, code: ATTErrorCode,
                                  answering request: ATTOpcode) throws(GATTError) -> ATTError {
        guard requestOpcode == request else {
            throw .invalidResponse("Error Response for \(requestOpcode.name) in answer to \(request.name)")
        }
        return ATTError(code: code, requestOpcode: requestOpcode, handle: handle)
    }

    /// An Error Response during a walk over handles: Attribute Not Found means nothing more
    /// is there (the walk is complete); anything else fails the procedure with the ATT error.
    static func expectEndOfWalk(requestOpcode: ATTOpcode, handle: UInt16, code: ATTErrorCode,
                                answering request: ATTOpcode) throws(GATTError) {
        let error = try fromErrorResponse(requestOpcode: requestOpcode, handle: handle, code: code, answering: request)
        guard code == .attributeNotFound else { throw .att(error) }
    }

    /// Called when a response arrives though no request is outstanding (the procedure ended).
    static func noRequestOutstanding(_ response: ATTPDU) -> GATTError {
        .invalidResponse("\(response.opcode) after the procedure ended")
    }
}

/// The most entries a discovery list may hold: one per handle. Handles strictly ascend, so
/// this cannot be reached; it bounds memory should that reasoning ever break.
let maximumDiscoveredEntries = 0xFFFF

/// The handles a discovery procedure still has to ask about, and the checks that make it
/// terminate: every handle in a response lies in the request's range and above the one before
/// it, so the next request always starts past the previous one's start.
struct HandleCursor: Hashable, Sendable {
    /// The first handle of the next request.
    private(set) var start: UInt16
    /// The last handle of every request.
    let end: UInt16
    /// Whether the whole range has been covered.
    private(set) var isDone: Bool

    /// A cursor over `range`; handle 0 is not a valid attribute handle, so it is skipped.
    init(_ range: ClosedRange<UInt16>) {
        start = max(1, range.lowerBound)
        end = range.upperBound
        isDone = range.upperBound == 0
    }

    /// Throws unless `handle` is in the current request's range and above `previous`.
    func check(_ handle: UInt16, after previous: UInt16?, in what: String) throws(GATTError) {
        if handle == 0 {
            throw .invalidResponse("handle 0x0000 in \(what)")
        }
        if handle < start || handle > end {
            throw .invalidResponse("handle 0x\(Hex.padded(handle, digits: 4)) in \(what) is outside the requested range 0x\(Hex.padded(start, digits: 4))–0x\(Hex.padded(end, digits: 4))")
        }
        if let previous, handle <= previous {
            throw .invalidResponse("handle 0x\(Hex.padded(handle, digits: 4)) in \(what) does not advance past 0x\(Hex.padded(previous, digits: 4))")
        }
    }

    /// Moves past `last` (a handle that passed ``check(_:after:in:)``, or an end at or above
    /// it): done when it reaches the end of the range.
    mutating func advance(past last: UInt16) {
        if last >= end {
            isDone = true
        } else {
            start = last + 1
        }
    }
}

/// Throws when a discovery list would grow past ``maximumDiscoveredEntries``.
func checkBound(_ count: Int, _ what: String) throws(GATTError) {
    if count > maximumDiscoveredEntries {
        throw .invalidResponse("more than \(maximumDiscoveredEntries) \(what)")
    }
}

/// The UUID in an attribute value of 2 or 16 bytes, or an invalid-response error naming `what`.
func decodeUUID(_ bytes: ArraySlice<UInt8>, in what: String) throws(GATTError) -> BluetoothUUID {
    guard bytes.count == 2 || bytes.count == 16, let uuid = BluetoothUUID(littleEndianBytes: bytes) else {
        throw .invalidResponse("\(what) holds a UUID of \(bytes.count) bytes; must be 2 or 16")
    }
    return uuid
}

/// What every walk over a handle range shares (discovering services, descriptors, values by
/// UUID): the cursor, what was found, whether a request is outstanding, and the rules that
/// make it terminate. A procedure keeps one, says how to ask for the next handles and how to
/// read one entry of a response; the walk does the rest.
struct HandleWalk<Item: Sendable>: Sendable {
    /// The handles still to ask about; a procedure with its own advance rule moves it itself.
    var cursor: HandleCursor
    /// What the walk found so far, in handle order.
    private(set) var items: [Item] = []
    /// The request every step sends; an answer to anything else is invalid.
    let request: ATTOpcode
    /// What `items` holds, for the error when the list would grow past its bound.
    private let itemsName: String
    private var awaiting = false

    init(_ range: ClosedRange<UInt16>, request: ATTOpcode, finding itemsName: String) {
        cursor = HandleCursor(range)
        self.request = request
        self.itemsName = itemsName
    }

    /// The next request, made by `request` from the cursor, or `nil` once the range is covered
    /// (no request outstanding then).
    mutating func nextRequest(_ request: (HandleCursor) -> ATTPDU) -> ATTPDU? {
        awaiting = !cursor.isDone
        return awaiting ? request(cursor) : nil
    }

    /// The next step: the next request, or the items once the range is covered.
    mutating func next(_ request: (HandleCursor) -> ATTPDU) -> GATTProcedureStep<[Item]> {
        guard let next = nextRequest(request) else { return .finished(items) }
        return .send(next)
    }

    /// Takes an answer: throws unless a request is outstanding. Until the next request none
    /// is, so an answer that throws ends the procedure.
    mutating func accept(_ response: ATTPDU) throws(GATTError) {
        guard awaiting else { throw .noRequestOutstanding(response) }
        awaiting = false
    }

    /// Reads one response's entries in order: each entry's handle must lie in the request's
    /// range and past the end of the entry before it; `read` makes the item and names the last
    /// handle it covers. The cursor then moves past the last entry.
    mutating func collect<Entry>(_ entries: [Entry], in response: String, handle: (Entry) -> UInt16,
                                 read: (Entry) throws(GATTError) -> (item: Item, end: UInt16)) throws(GATTError) {
        guard !entries.isEmpty else { throw .invalidResponse("empty \(response)") }
        var previousEnd: UInt16?
        for entry in entries {
            try cursor.check(handle(entry), after: previousEnd, in: response)
            let (item, end) = try read(entry)
            try append(item)
            previousEnd = end
        }
        if let previousEnd { cursor.advance(past: previousEnd) }
    }

    /// Adds an item a procedure checked itself, within the bound on discovered entries.
    mutating func append(_ item: Item) throws(GATTError) {
        items.append(item)
        try checkBound(items.count, itemsName)
    }

    /// An answer that is not a response to collect: Attribute Not Found on the walk's request
    /// ends the walk (return; the caller finishes with what was found); any other Error
    /// Response or PDU throws.
    func expectEnd(_ response: ATTPDU) throws(GATTError) {
        guard case let .errorResponse(requestOpcode, handle, code) = response else {
            throw .unexpected(response, to: request)
        }
        try GATTError.expectEndOfWalk(requestOpcode: requestOpcode, handle: handle, code: code, answering: request)
    }
}
