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
