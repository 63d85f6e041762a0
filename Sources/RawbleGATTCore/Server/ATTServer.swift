// The ATT server's sans-I/O core, one per connection: a PDU from the client in, the response
// and events out (Core Vol 3 Part F 3.4, Part G 4). The database is shared and passed in on
// each call; this value keeps what is per connection (ATT_MTU, CCCD values, the prepare queue,
// the indication in flight). No I/O, no clocks, no tasks: the indication timeout is a timer
// the shell runs and reports back (`indicationTimedOut`).

import RawbleBearer
import RawbleWire

/// Identifies one indication a server core sent or queued.
public struct ATTIndicationID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "indication #\(rawValue)" }
}

/// The embedder's answer to a read of a provided value: the whole value (at most 512 bytes are
/// served), or the ATT error code to answer with (e.g. an application error 0x80…0x9F).
public enum GATTValueResult: Hashable, Sendable {
    case value([UInt8])
    case error(ATTErrorCode)
}

/// The embedder's decision on a write to a provided value.
public enum GATTWriteVerdict: Hashable, Sendable {
    /// The write stands: the client gets its Write Response (or Execute Write Response).
    case accept
    /// The write is refused with this error code (e.g. 0x80 for a profile's own error).
    case reject(ATTErrorCode)
}

/// A write to a provided value that waits for the embedder's ``GATTWriteVerdict``.
public struct ATTServerWriteApproval: Hashable, Sendable {
    public var handle: UInt16
    public var value: [UInt8]
    public var kind: GATTWriteKind

    public init(handle: UInt16, value: [UInt8], kind: GATTWriteKind) {
        self.handle = handle
        self.value = value
        self.kind = kind
    }
}

/// How a client's write reached the server.
public enum GATTWriteKind: Hashable, Sendable {
    /// Write Request (answered with Write Response).
    case request
    /// Write Command (no response).
    case command
    /// Prepare Write Requests committed by an Execute Write Request (long or reliable writes).
    case prepared
}

/// Why an indication failed.
public enum ATTIndicationFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// No confirmation within the transaction timeout (30 s): the bearer is now unusable for ATT.
    case timedOut
    /// An earlier indication timed out, so this one was never sent (no more ATT on this bearer).
    case bearerTimedOut
    /// The database changed the handle's meaning before the indication went out.
    case databaseChanged
    /// The bearer refused the indication's PDU (the shell reported it with
    /// ``ATTServer/indicationNotSent(_:)``).
    case notSent

    public var description: String {
        switch self {
        case .timedOut: "no Handle Value Confirmation within 30 s"
        case .bearerTimedOut: "an earlier indication timed out; no more ATT on this bearer"
        case .databaseChanged: "the database changed before the indication was sent"
        case .notSent: "the bearer did not take the indication"
        }
    }
}

/// Why the server core would not start an indication.
public enum ATTIndicationRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// The client has not enabled indications on this characteristic (its CCCD).
    case notSubscribed
    /// Too many indications wait behind the one in flight.
    case queueFull(limit: Int)
    /// An indication timed out earlier: no more ATT on this bearer (Core Vol 3 Part F 3.3.3).
    case bearerTimedOut

    public var description: String {
        switch self {
        case .notSubscribed: "the client has not enabled indications"
        case .queueFull(let limit): "\(limit) indications already wait for confirmation"
        case .bearerTimedOut: "an earlier indication timed out; no more ATT on this bearer"
        }
    }
}

/// A PDU the server core did not answer, and why (for a log line).
public enum ATTServerDropReason: Hashable, Sendable, CustomStringConvertible {
    /// A zero-length PDU.
    case empty
    /// A command that does not decode (commands are never answered).
    case malformedCommand(ATTOpcode)
    /// A Write Command the server refused (commands are never answered).
    case commandRefused(ATTOpcode, ATTErrorCode, handle: UInt16)
    /// A Signed Write Command: signing is not supported, so it is ignored.
    case signedWriteNotSupported
    /// A command this server does not know.
    case unknownCommand(ATTOpcode)
    /// A request sent before the previous one was answered (the client broke the one
    /// transaction at a time rule): dropped, unanswered.
    case requestWhilePending(ATTOpcode)
    /// A Handle Value Confirmation with no indication in flight.
    case unexpectedConfirmation
    /// A response, notification or indication: PDUs a server does not take.
    case notForServer(ATTOpcode)
    /// An indication timed out earlier: the bearer takes no more ATT.
    case bearerTimedOut(ATTOpcode)
    /// A command or confirmation longer than the ATT_MTU.
    case tooLong(ATTOpcode, length: Int)

    public var description: String {
        switch self {
        case .empty: "empty PDU"
        case .malformedCommand(let opcode): "malformed \(opcode) ignored"
        case let .commandRefused(opcode, code, handle): "\(opcode) on handle 0x\(Hex.padded(handle, digits: 4)) refused: \(code)"
        case .signedWriteNotSupported: "Signed Write Command ignored (signing not supported)"
        case .unknownCommand(let opcode): "unknown command \(opcode) ignored"
        case .requestWhilePending(let opcode): "\(opcode) sent before the previous request was answered; dropped"
        case .unexpectedConfirmation: "Handle Value Confirmation with no indication outstanding"
        case .notForServer(let opcode): "\(opcode) is not for a server; ignored"
        case .bearerTimedOut(let opcode): "\(opcode) after an indication timed out; ignored"
        case let .tooLong(opcode, length): "\(opcode) of \(length) bytes exceeds the ATT_MTU; ignored"
        }
    }
}

/// Something a server core's input caused, for the shell and the embedder.
public enum ATTServerEvent: Hashable, Sendable {
    /// Exchange MTU set this connection's ATT_MTU.
    case mtuChanged(UInt16)
    /// A client wrote a characteristic value or descriptor (not a CCCD) at `handle`; fixed
    /// values are already stored in the database.
    case wrote(handle: UInt16, value: [UInt8], kind: GATTWriteKind)
    /// A client changed its CCCD of the characteristic at `valueHandle` (subscribed,
    /// unsubscribed or switched between notifications and indications).
    case configurationChanged(valueHandle: UInt16, ClientCharacteristicConfiguration)
    /// An indication went out: start its confirmation timer (``ATTServer/indicationTimeout``)
    /// and call ``ATTServer/indicationTimedOut(_:)`` when it runs out.
    case indicationSent(ATTIndicationID, handle: UInt16)
    /// The client confirmed the indication.
    case indicationConfirmed(ATTIndicationID, handle: UInt16)
    /// The indication failed (timed out, or never sent because an earlier one did).
    case indicationFailed(ATTIndicationID, handle: UInt16, ATTIndicationFailure)
    /// A PDU was ignored.
    case dropped(ATTServerDropReason)
}

/// What one input to ``ATTServer`` produced.
public struct ATTServerOutput: Hashable, Sendable {
    /// PDUs to send to the client, in order: at most one response, and indications.
    public var pdus: [[UInt8]] = []
    public var events: [ATTServerEvent] = []
    /// Non-empty: the request waits for the embedder's values of these handles (attributes
    /// with ``GATTServerValue/provided`` values); answer with ``ATTServer/supply(_:database:)``.
    public var valuesNeeded: [UInt16] = []
    /// Non-empty: the request waits for the embedder's verdict on these writes to provided
    /// values; answer with ``ATTServer/approve(_:database:)``.
    public var approvalsNeeded: [ATTServerWriteApproval] = []

    public init() {}
}

/// The ATT server's core for one connection (sans-I/O): bytes in, response bytes and events out.
///
/// ```swift
/// var server = ATTServer()
/// var database = try GATTServerDatabase(services: [...])
/// let output = server.receive([0x0A, 0x03, 0x00], database: &database)   // Read Request, handle 3
/// // output.pdus == [[0x0B, …]]: send them; output.events: report them
/// ```
///
/// Every request gets exactly one response or Error Response, except while it waits for
/// provided values (``ATTServerOutput/valuesNeeded``). A second request before the first is
/// answered breaks ATT's one transaction at a time and is dropped unanswered (the client's own
/// 30 s timeout ends its wait); commands and confirmations are taken at any time.
public struct ATTServer: Sendable {
    /// Limits that bound what a client can make the server hold.
    public struct Configuration: Hashable, Sendable {
        /// The server's receive MTU, offered in Exchange MTU (23…517).
        public var receiveMTU: UInt16 = ATTPDU.maximumMTU
        /// Prepare Write Requests queued before Prepare Queue Full.
        public var prepareQueueLimit = 128
        /// Bytes of prepared values queued before Prepare Queue Full.
        public var prepareQueueByteLimit = 8 * ATTPDU.maximumValueLength
        /// Indications waiting behind the one in flight before ``ATTIndicationRefusal/queueFull(limit:)``.
        public var indicationQueueLimit = 64
        /// The shortest encryption key, in octets (7–16), an attribute that needs encryption or
        /// authentication is read or written over: a link encrypted with a shorter key is
        /// answered Encryption Key Size Too Short (0x0C). 16 by default: a shorter key is what
        /// the KNOB attack downgrades a link to.
        public var requiredEncryptionKeySize: UInt8 = 16
        public init() {}
    }

    /// How long a client has to confirm an indication (Core Vol 3 Part F 3.3.3).
    public static let indicationTimeout: Duration = .seconds(30)

    public let configuration: Configuration
    /// This connection's ATT_MTU.
    public private(set) var mtu: UInt16 = ATTPDU.defaultMTU
    /// The link's security, which attribute access is checked against; the shell keeps it current.
    public var security: GATTLinkSecurity = .none
    /// The size, in octets, of the key the link is encrypted with, checked against
    /// ``Configuration/requiredEncryptionKeySize`` with ``security``; `nil` when unknown (a
    /// bearer that cannot tell: only the level is checked then).
    public var encryptionKeySize: UInt8?
    /// An indication timed out: the server sends and answers nothing more on this bearer.
    public private(set) var isTimedOut = false

    private var mtuExchanged = false
    /// CCCD values by characteristic value handle (absent: 0).
    private var configurations: [UInt16: ClientCharacteristicConfiguration] = [:]
    private var prepareQueue: [(handle: UInt16, offset: UInt16, value: [UInt8])] = []
    private var preparedBytes = 0
    /// The request waiting for provided values, and the values supplied so far.
    private var pending: ATTPDU?
    private var provided: [UInt16: GATTValueResult] = [:]
    private var asked: [UInt16] = []
    private var verdicts: [UInt16: GATTWriteVerdict] = [:]
    private var askedApprovals: [UInt16] = []
    private var inFlight: (id: ATTIndicationID, handle: UInt16)?
    private var indicationQueue: [(id: ATTIndicationID, handle: UInt16, value: [UInt8])] = []
    private var nextIndication: UInt64 = 1

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Whether a request waits for provided values.
    public var hasPendingRequest: Bool { pending != nil }
    /// The indication waiting for its confirmation, if any.
    public var indicationInFlight: ATTIndicationID? { inFlight?.id }

    /// This connection's CCCD value for the characteristic whose value is at `valueHandle`.
    public func configuration(ofValueAt valueHandle: UInt16) -> ClientCharacteristicConfiguration {
        configurations[valueHandle] ?? []
    }

    // MARK: Input

    /// Handles one whole PDU from the client.
    public mutating func receive(_ bytes: [UInt8], database: inout GATTServerDatabase) -> ATTServerOutput {
        var output = ATTServerOutput()
        guard let first = bytes.first else {
            output.events.append(.dropped(.empty))
            return output
        }
        let opcode = ATTOpcode(first)
        if isTimedOut {
            output.events.append(.dropped(.bearerTimedOut(opcode)))
            return output
        }
        // No PDU may exceed the ATT_MTU (Core Vol 3 Part F 3.2.8): a request that does is
        // invalid (its answer, e.g. a Prepare Write Response's echo, could not fit either).
        if bytes.count > Int(mtu) {
            if opcode.kind == .request || opcode.kind == .unknown {
                if pending != nil {
                    output.events.append(.dropped(.requestWhilePending(opcode)))
                } else {
                    output.pdus.append(Self.errorResponse(opcode, 0, .invalidPDU))
                }
            } else {
                output.events.append(.dropped(.tooLong(opcode, length: bytes.count)))
            }
            return output
        }
        switch opcode.kind {
        case .request:
            if pending != nil {
                output.events.append(.dropped(.requestWhilePending(opcode)))
                return output
            }
            guard let request = try? ATTPDU.decode(bytes) else {
                output.pdus.append(Self.errorResponse(opcode, 0, .invalidPDU))
                return output
            }
            answer(request, database: &database, into: &output)
        case .unknown:
            // Not a command (bit 6 clear): an unknown request, answered (Core Vol 3 Part F 3.4.9).
            output.pdus.append(Self.errorResponse(opcode, 0, .requestNotSupported))
        case .command:
            if opcode == .writeCommand {
                guard case .writeCommand(let handle, let value)? = try? ATTPDU.decode(bytes) else {
                    output.events.append(.dropped(.malformedCommand(opcode)))
                    return output
                }
                if let code = write(Array(value), at: handle, kind: .command, database: &database, into: &output) {
                    output.events.append(.dropped(.commandRefused(opcode, code, handle: handle)))
                }
            } else if opcode == .signedWriteCommand {
                output.events.append(.dropped(.signedWriteNotSupported))
            } else {
                output.events.append(.dropped(.unknownCommand(opcode)))
            }
        case .confirmation:
            confirm(into: &output)
        case .response, .notification, .indication:
            output.events.append(.dropped(.notForServer(opcode)))
        }
        return output
    }

    /// Answers the pending request with the embedder's values (a value, or the ATT error to
    /// answer with) for the handles ``ATTServerOutput/valuesNeeded`` named. A needed handle
    /// left out is answered with Unlikely Error. May ask for more values (another read of
    /// the same request).
    public mutating func supply(_ values: [UInt16: GATTValueResult],
                                database: inout GATTServerDatabase) -> ATTServerOutput {
        var output = ATTServerOutput()
        guard let request = pending else { return output }
        for handle in asked { provided[handle] = values[handle] ?? .error(.unlikelyError) }
        pending = nil
        answer(request, database: &database, into: &output)
        return output
    }

    /// Answers the pending write request with the embedder's verdicts on the writes
    /// ``ATTServerOutput/approvalsNeeded`` named (one left out is refused with Unlikely Error).
    /// Accepted writes are reported as ``ATTServerEvent/wrote(handle:value:kind:)``.
    public mutating func approve(_ given: [UInt16: GATTWriteVerdict],
                                 database: inout GATTServerDatabase) -> ATTServerOutput {
        var output = ATTServerOutput()
        guard let request = pending else { return output }
        for handle in askedApprovals { verdicts[handle] = given[handle] ?? .reject(.unlikelyError) }
        pending = nil
        answer(request, database: &database, into: &output)
        return output
    }

    /// The indication `id` was not confirmed in time (the shell's timer ran out). If it is
    /// still in flight it fails, every queued one fails, and the bearer takes no more ATT.
    public mutating func indicationTimedOut(_ id: ATTIndicationID) -> ATTServerOutput {
        var output = ATTServerOutput()
        guard let current = inFlight, current.id == id else { return output }
        isTimedOut = true
        inFlight = nil
        output.events.append(.indicationFailed(current.id, handle: current.handle, .timedOut))
        for queued in indicationQueue {
            output.events.append(.indicationFailed(queued.id, handle: queued.handle, .bearerTimedOut))
        }
        indicationQueue.removeAll()
        return output
    }

    /// The bearer would not take the indication `id` the core handed out: it is no longer in
    /// flight (it fails) and the next queued one goes out, instead of waiting for a
    /// confirmation that cannot come.
    public mutating func indicationNotSent(_ id: ATTIndicationID) -> ATTServerOutput {
        var output = ATTServerOutput()
        guard let current = inFlight, current.id == id else { return output }
        inFlight = nil
        output.events.append(.indicationFailed(current.id, handle: current.handle, .notSent))
        if !indicationQueue.isEmpty {
            let next = indicationQueue.removeFirst()
            send(next.id, next.handle, next.value, into: &output)
        }
        return output
    }

    /// The database changed the attributes in `handles`: this connection's CCCD values and
    /// prepared writes for them are forgotten, and indications queued for them fail.
    public mutating func databaseChanged(_ handles: ClosedRange<UInt16>) -> ATTServerOutput {
        var output = ATTServerOutput()
        configurations = configurations.filter { !handles.contains($0.key) }
        prepareQueue.removeAll { handles.contains($0.handle) }
        preparedBytes = prepareQueue.reduce(0) { $0 + $1.value.count }
        indicationQueue.removeAll { queued in
            guard handles.contains(queued.handle) else { return false }
            output.events.append(.indicationFailed(queued.id, handle: queued.handle, .databaseChanged))
            return true
        }
        return output
    }

    // MARK: Output

    /// A Handle Value Notification of `value` (cut to ATT_MTU − 3) for the characteristic at
    /// `handle`, or `nil` when this client has not enabled notifications on it.
    public func notification(_ value: [UInt8], handle: UInt16) -> [UInt8]? {
        guard !isTimedOut, configuration(ofValueAt: handle).contains(.notify) else { return nil }
        return Self.handleValuePDU(.handleValueNotification, handle, value, mtu: mtu)
    }

    /// Starts (or queues behind the one in flight) a Handle Value Indication of `value` (cut to
    /// ATT_MTU − 3) for the characteristic at `handle`. The output holds the PDU to send and
    /// ``ATTServerEvent/indicationSent(_:handle:)`` when it goes out now. `force` sends even
    /// when the client has not enabled indications (not used by GATT; for tests and tools).
    public mutating func indicate(_ value: [UInt8], handle: UInt16, force: Bool = false)
        throws(ATTIndicationRefusal) -> (id: ATTIndicationID, output: ATTServerOutput) {
        if isTimedOut { throw .bearerTimedOut }
        guard force || configuration(ofValueAt: handle).contains(.indicate) else { throw .notSubscribed }
        let id = ATTIndicationID(rawValue: nextIndication)
        var output = ATTServerOutput()
        if inFlight == nil {
            nextIndication &+= 1
            send(id, handle, value, into: &output)
        } else {
            guard indicationQueue.count < configuration.indicationQueueLimit else {
                throw .queueFull(limit: configuration.indicationQueueLimit)
            }
            nextIndication &+= 1
            indicationQueue.append((id, handle, value))
        }
        return (id, output)
    }

    private mutating func send(_ id: ATTIndicationID, _ handle: UInt16, _ value: [UInt8], into output: inout ATTServerOutput) {
        inFlight = (id, handle)
        output.pdus.append(Self.handleValuePDU(.handleValueIndication, handle, value, mtu: mtu))
        output.events.append(.indicationSent(id, handle: handle))
    }

    private mutating func confirm(into output: inout ATTServerOutput) {
        guard let current = inFlight else {
            output.events.append(.dropped(.unexpectedConfirmation))
            return
        }
        inFlight = nil
        output.events.append(.indicationConfirmed(current.id, handle: current.handle))
        if !indicationQueue.isEmpty {
            let next = indicationQueue.removeFirst()
            send(next.id, next.handle, next.value, into: &output)
        }
    }

    private static func handleValuePDU(_ opcode: ATTOpcode, _ handle: UInt16, _ value: [UInt8], mtu: UInt16) -> [UInt8] {
        var pdu: [UInt8] = [opcode.rawValue, UInt8(truncatingIfNeeded: handle), UInt8(truncatingIfNeeded: handle >> 8)]
        pdu.append(contentsOf: value.prefix(max(0, Int(mtu) - 3)))
        return pdu
    }

    private static func errorResponse(_ request: ATTOpcode, _ handle: UInt16, _ code: ATTErrorCode) -> [UInt8] {
        ATTPDU.errorResponse(requestOpcode: request, handle: handle, errorCode: code).encoded
    }

    // MARK: Requests

    /// What a request comes to.
    private enum Answer {
        case pdu(ATTPDU)
        case raw([UInt8])
        case error(ATTErrorCode, UInt16)
        /// Provided values needed first.
        case needs([UInt16])
        /// The embedder's verdict on writes to provided values needed first.
        case needsApproval([ATTServerWriteApproval])
    }

    private mutating func answer(_ request: ATTPDU, database: inout GATTServerDatabase, into output: inout ATTServerOutput) {
        let answer = process(request, database: &database, into: &output)
        switch answer {
        case .pdu(let pdu): output.pdus.append(pdu.encoded)
        case .raw(let bytes): output.pdus.append(bytes)
        case let .error(code, handle): output.pdus.append(Self.errorResponse(request.opcode, handle, code))
        case .needs(let handles):
            pending = request
            asked = handles
            output.valuesNeeded = handles
            return
        case .needsApproval(let writes):
            pending = request
            askedApprovals = writes.map(\.handle)
            output.approvalsNeeded = writes
            return
        }
        provided.removeAll()
        asked.removeAll()
        verdicts.removeAll()
        askedApprovals.removeAll()
    }

    private mutating func process(_ request: ATTPDU, database: inout GATTServerDatabase,
                                  into output: inout ATTServerOutput) -> Answer {
        switch request {
        case .exchangeMTURequest(let clientMTU):
            // Once per connection: a repeated request is answered, the ATT_MTU stays.
            let serverMTU = max(ATTPDU.defaultMTU, configuration.receiveMTU)
            if !mtuExchanged {
                mtuExchanged = true
                let agreed = max(ATTPDU.defaultMTU, min(clientMTU, serverMTU))
                if agreed != mtu {
                    mtu = agreed
                    output.events.append(.mtuChanged(agreed))
                }
            }
            return .pdu(.exchangeMTUResponse(serverMTU: serverMTU))
        case let .findInformationRequest(start, end):
            return findInformation(start, end, database)
        case let .findByTypeValueRequest(start, end, type, value):
            return findByTypeValue(start, end, BluetoothUUID(type), value, database)
        case let .readByTypeRequest(start, end, type):
            return readByType(start, end, type, database)
        case let .readByGroupTypeRequest(start, end, type):
            return readByGroupType(start, end, type, database)
        case .readRequest(let handle):
            switch readableValue(handle, database) {
            case .value(let value): return .pdu(.readResponse(value: value.prefix(Int(mtu) - 1)))
            case let .refused(code): return .error(code, handle)
            case .missing: return .needs([handle])
            }
        case let .readBlobRequest(handle, offset):
            return readBlob(handle, Int(offset), database)
        case .readMultipleRequest(let handles):
            return readMultiple(handles, variable: false, database)
        case .readMultipleVariableRequest(let handles):
            return readMultiple(handles, variable: true, database)
        case let .writeRequest(handle, value):
            switch checkWrite(Array(value), at: handle, database) {
            case .failure(let code):
                return .error(code, handle)
            case .success(let change):
                if let waiting = approval(of: [change], kind: .request) { return waiting }
                apply(change, kind: .request, database: &database, into: &output)
                return .pdu(.writeResponse)
            }
        case let .prepareWriteRequest(handle, offset, value):
            return prepareWrite(handle, offset, value, database)
        case .executeWriteRequest(let flags):
            return executeWrite(flags, database: &database, into: &output)
        default:
            return .error(.requestNotSupported, 0)
        }
    }

    /// A value as a read sees it.
    private enum Read {
        case value([UInt8])
        case refused(ATTErrorCode)
        case missing
    }

    /// The ATT error `access` gives this link for a read or a write, or `nil` when allowed.
    private func refusal(_ access: GATTAccess, write: Bool) -> ATTErrorCode? {
        switch access {
        case .notPermitted: write ? .writeNotPermitted : .readNotPermitted
        case .open: nil
        case .encryptionRequired: security >= .encrypted ? keySizeRefusal : .insufficientEncryption
        case .authenticationRequired: security >= .authenticated ? keySizeRefusal : .insufficientAuthentication
        }
    }

    /// Encryption Key Size Too Short when the link's key is known to be shorter than required.
    private var keySizeRefusal: ATTErrorCode? {
        guard let size = encryptionKeySize, size < configuration.requiredEncryptionKeySize else { return nil }
        return .encryptionKeySizeTooShort
    }

    private func value(of attribute: GATTServerAttribute) -> Read {
        switch attribute.value {
        case .fixed(let bytes): return .value(bytes)
        case .clientConfiguration:
            return .value(configuration(ofValueAt: attribute.characteristicValueHandle ?? 0).encoded)
        case .provided:
            switch provided[attribute.handle] {
            case .value(let bytes)?: return .value(Array(bytes.prefix(ATTPDU.maximumValueLength)))
            case .error(let code)?: return .refused(code)
            case nil: return .missing
            }
        }
    }

    /// The value of the attribute at `handle` if this link may read it (Invalid Handle when
    /// there is none).
    private func readableValue(_ handle: UInt16, _ database: GATTServerDatabase) -> Read {
        guard let attribute = database.attribute(at: handle) else { return .refused(.invalidHandle) }
        if let code = refusal(attribute.read, write: false) { return .refused(code) }
        return value(of: attribute)
    }

    /// The attributes in `start...end` (both checked by the caller), as indices.
    private static func indices(_ start: UInt16, _ end: UInt16, _ database: GATTServerDatabase) -> Range<Int> {
        // Handle 0 is refused by every caller first; clamped here too, so no request can index -1.
        let first = max(Int(start) - 1, 0)
        let last = min(Int(end), database.attributes.count)
        return first < last ? first..<last : 0..<0
    }

    private func findInformation(_ start: UInt16, _ end: UInt16, _ database: GATTServerDatabase) -> Answer {
        guard start != 0, start <= end else { return .error(.invalidHandle, start) }
        var entries: [ATTPDU.HandleUUID] = []
        var short = true
        var used = 2
        for index in Self.indices(start, end, database) {
            let attribute = database.attributes[index]
            let isShort = attribute.type.uuid16 != nil
            if entries.isEmpty { short = isShort } else if isShort != short { break }
            let size = 2 + (short ? 2 : 16)
            if used + size > Int(mtu) { break }
            used += size
            entries.append(ATTPDU.HandleUUID(handle: attribute.handle, uuid: attribute.type))
        }
        return entries.isEmpty ? .error(.attributeNotFound, start) : .pdu(.findInformationResponse(entries))
    }

    private func findByTypeValue(_ start: UInt16, _ end: UInt16, _ type: BluetoothUUID, _ wanted: ArraySlice<UInt8>,
                                 _ database: GATTServerDatabase) -> Answer {
        guard start != 0, start <= end else { return .error(.invalidHandle, start) }
        var ranges: [ATTPDU.HandleRange] = []
        var used = 1
        for index in Self.indices(start, end, database) {
            let attribute = database.attributes[index]
            // Only values the server holds and anyone may read are compared (provided values
            // would need the embedder for every candidate).
            guard attribute.type == type, attribute.read == .open, case .fixed(let bytes) = attribute.value,
                  bytes.elementsEqual(wanted) else { continue }
            if used + 4 > Int(mtu) { break }
            used += 4
            ranges.append(ATTPDU.HandleRange(foundHandle: attribute.handle, groupEndHandle: attribute.groupEnd ?? attribute.handle))
        }
        return ranges.isEmpty ? .error(.attributeNotFound, start) : .pdu(.findByTypeValueResponse(ranges))
    }

    private func readByType(_ start: UInt16, _ end: UInt16, _ type: BluetoothUUID, _ database: GATTServerDatabase) -> Answer {
        guard start != 0, start <= end else { return .error(.invalidHandle, start) }
        // Each value is cut to ATT_MTU − 4 or 253 bytes; all must have the same length.
        let cap = min(Int(mtu) - 4, 253)
        var entries: [ATTPDU.HandleValue] = []
        var used = 2
        for index in Self.indices(start, end, database) where database.attributes[index].type == type {
            let attribute = database.attributes[index]
            var read = value(of: attribute)
            if let code = refusal(attribute.read, write: false) { read = .refused(code) }
            switch read {
            case .refused(let code):
                // The first attribute's error is the answer; a later one ends the list.
                if entries.isEmpty { return .error(code, attribute.handle) }
                return .pdu(.readByTypeResponse(entries))
            case .missing:
                return .needs([attribute.handle])
            case .value(let bytes):
                let value = bytes.prefix(cap)
                if let first = entries.first, first.value.count != value.count { return .pdu(.readByTypeResponse(entries)) }
                if used + 2 + value.count > Int(mtu) { return .pdu(.readByTypeResponse(entries)) }
                used += 2 + value.count
                entries.append(ATTPDU.HandleValue(handle: attribute.handle, value: value))
            }
        }
        return entries.isEmpty ? .error(.attributeNotFound, start) : .pdu(.readByTypeResponse(entries))
    }

    private func readByGroupType(_ start: UInt16, _ end: UInt16, _ type: BluetoothUUID, _ database: GATTServerDatabase) -> Answer {
        guard start != 0, start <= end else { return .error(.invalidHandle, start) }
        guard type == .primaryService || type == .secondaryService else { return .error(.unsupportedGroupType, start) }
        let cap = min(Int(mtu) - 6, 251)
        var entries: [ATTPDU.GroupValue] = []
        var used = 2
        for index in Self.indices(start, end, database) where database.attributes[index].type == type {
            let attribute = database.attributes[index]
            guard case .fixed(let bytes) = attribute.value else { continue }
            let value = bytes.prefix(cap)
            if let first = entries.first, first.value.count != value.count { break }
            if used + 4 + value.count > Int(mtu) { break }
            used += 4 + value.count
            entries.append(ATTPDU.GroupValue(handle: attribute.handle, endGroupHandle: attribute.groupEnd ?? attribute.handle, value: value))
        }
        return entries.isEmpty ? .error(.attributeNotFound, start) : .pdu(.readByGroupTypeResponse(entries))
    }

    private func readBlob(_ handle: UInt16, _ offset: Int, _ database: GATTServerDatabase) -> Answer {
        switch readableValue(handle, database) {
        case .refused(let code): return .error(code, handle)
        case .missing: return .needs([handle])
        case .value(let value):
            // Values of a fixed length that fit a Read Response are not long (Core Vol 3 Part F 3.4.4.5).
            if database.attribute(at: handle)?.isFixedLength == true, value.count <= Int(mtu) - 3 {
                return .error(.attributeNotLong, handle)
            }
            guard offset <= value.count else { return .error(.invalidOffset, handle) }
            return .pdu(.readBlobResponse(value: value[offset...].prefix(Int(mtu) - 1)))
        }
    }

    private func readMultiple(_ handles: [UInt16], variable: Bool, _ database: GATTServerDatabase) -> Answer {
        var values: [[UInt8]] = []
        var missing: [UInt16] = []
        for handle in handles {
            switch readableValue(handle, database) {
            case .refused(let code): return .error(code, handle)
            case .missing: if !missing.contains(handle) { missing.append(handle) }
            case .value(let value): values.append(value)
            }
        }
        if !missing.isEmpty { return .needs(missing) }
        // The set of values is cut to ATT_MTU − 1 bytes (a length may be cut in half).
        var pdu: [UInt8] = [variable ? ATTOpcode.readMultipleVariableResponse.rawValue : ATTOpcode.readMultipleResponse.rawValue]
        for value in values {
            if variable {
                pdu.append(UInt8(truncatingIfNeeded: value.count))
                pdu.append(UInt8(truncatingIfNeeded: value.count >> 8))
            }
            pdu.append(contentsOf: value)
            if pdu.count >= Int(mtu) { break }
        }
        return .raw(Array(pdu.prefix(Int(mtu))))
    }

    /// Checks and applies one write; returns the ATT error that refuses it, or `nil`.
    private mutating func write(_ value: [UInt8], at handle: UInt16, kind: GATTWriteKind,
                                database: inout GATTServerDatabase, into output: inout ATTServerOutput) -> ATTErrorCode? {
        let change: WriteChange
        switch checkWrite(value, at: handle, database) {
        case .failure(let code): return code
        case .success(let checked): change = checked
        }
        apply(change, kind: kind, database: &database, into: &output)
        return nil
    }

    /// For writes to provided values: the embedder's refusal, or the verdicts still to ask
    /// for; `nil` once every one is accepted.
    private func approval(of changes: [WriteChange], kind: GATTWriteKind) -> Answer? {
        var needed: [ATTServerWriteApproval] = []
        for change in changes {
            guard case let .value(handle, value, stored: false) = change else { continue }
            switch verdicts[handle] {
            case .accept?: continue
            case .reject(let code)?: return .error(code, handle)
            case nil: needed.append(ATTServerWriteApproval(handle: handle, value: value, kind: kind))
            }
        }
        return needed.isEmpty ? nil : .needsApproval(needed)
    }

    /// A write checked: the change to apply, or the error that refuses it.
    private enum WriteCheck {
        case success(WriteChange)
        case failure(ATTErrorCode)
    }

    /// A write that passed its checks.
    private enum WriteChange {
        case configuration(valueHandle: UInt16, ClientCharacteristicConfiguration)
        case value(handle: UInt16, [UInt8], stored: Bool)
    }

    private func checkWrite(_ value: [UInt8], at handle: UInt16, _ database: GATTServerDatabase) -> WriteCheck {
        guard let attribute = database.attribute(at: handle) else { return .failure(.invalidHandle) }
        if let code = refusal(attribute.write, write: true) { return .failure(code) }
        switch attribute.value {
        case .clientConfiguration:
            guard (1...2).contains(value.count),
                  let decoded = try? ClientCharacteristicConfiguration.decode(value[...]) else {
                return .failure(.invalidAttributeValueLength)
            }
            // Reserved bits are ignored; a bit the characteristic does not support is an error
            // (Core Specification Supplement Part B 1.2).
            let bits = decoded.intersection([.notify, .indicate])
            if bits.contains(.notify) && !attribute.properties.contains(.notify)
                || bits.contains(.indicate) && !attribute.properties.contains(.indicate) {
                return .failure(.cccdImproperlyConfigured)
            }
            return .success(.configuration(valueHandle: attribute.characteristicValueHandle ?? 0, bits))
        case .fixed, .provided:
            if value.count > attribute.maximumLength { return .failure(.invalidAttributeValueLength) }
            if case .fixed = attribute.value { return .success(.value(handle: handle, value, stored: true)) }
            return .success(.value(handle: handle, value, stored: false))
        }
    }

    private mutating func apply(_ change: WriteChange, kind: GATTWriteKind,
                                database: inout GATTServerDatabase, into output: inout ATTServerOutput) {
        switch change {
        case let .configuration(valueHandle, bits):
            if configuration(ofValueAt: valueHandle) != bits {
                configurations[valueHandle] = bits.isEmpty ? nil : bits
                output.events.append(.configurationChanged(valueHandle: valueHandle, bits))
            }
        case let .value(handle, value, stored):
            if stored { database.setValue(value, at: handle) }
            output.events.append(.wrote(handle: handle, value: value, kind: kind))
        }
    }

    private mutating func prepareWrite(_ handle: UInt16, _ offset: UInt16, _ value: ArraySlice<UInt8>,
                                       _ database: GATTServerDatabase) -> Answer {
        guard let attribute = database.attribute(at: handle) else { return .error(.invalidHandle, handle) }
        if let code = refusal(attribute.write, write: true) { return .error(code, handle) }
        guard prepareQueue.count < configuration.prepareQueueLimit,
              preparedBytes + value.count <= configuration.prepareQueueByteLimit else {
            return .error(.prepareQueueFull, handle)
        }
        prepareQueue.append((handle, offset, Array(value)))
        preparedBytes += value.count
        return .pdu(.prepareWriteResponse(handle: handle, offset: offset, value: value))
    }

    private mutating func executeWrite(_ flags: ATTExecuteWriteFlags, database: inout GATTServerDatabase,
                                       into output: inout ATTServerOutput) -> Answer {
        guard flags == .write || flags == .cancel else { return .error(.invalidPDU, 0) }
        let queue = prepareQueue
        // The queue is gone once the request is answered (it stays while verdicts are asked for).
        let answer = executeWrite(queue, cancel: flags == .cancel, database: &database, into: &output)
        if case .needsApproval = answer { return answer }
        prepareQueue.removeAll()
        preparedBytes = 0
        return answer
    }

    private mutating func executeWrite(_ queue: [(handle: UInt16, offset: UInt16, value: [UInt8])], cancel: Bool,
                                       database: inout GATTServerDatabase, into output: inout ATTServerOutput) -> Answer {
        if cancel { return .pdu(.executeWriteResponse) }
        // Each handle's parts, in the order they were prepared, make its new value: a part
        // continues the value at its offset (the first may start inside the current value).
        var order: [UInt16] = []
        var values: [UInt16: [UInt8]] = [:]
        for part in queue {
            let offset = Int(part.offset)
            var value: [UInt8]
            if let built = values[part.handle] {
                value = built
            } else {
                order.append(part.handle)
                if case .fixed(let current)? = database.attribute(at: part.handle)?.value, offset > 0 {
                    value = current
                } else {
                    value = []
                }
            }
            guard offset <= value.count else { return .error(.invalidOffset, part.handle) }
            value.removeSubrange(offset...)
            value.append(contentsOf: part.value)
            values[part.handle] = value
        }
        // Every write is checked before any is applied: all or nothing.
        var changes: [WriteChange] = []
        for handle in order {
            switch checkWrite(values[handle] ?? [], at: handle, database) {
            case .failure(let code): return .error(code, handle)
            case .success(let change): changes.append(change)
            }
        }
        if let waiting = approval(of: changes, kind: .prepared) { return waiting }
        for change in changes { apply(change, kind: .prepared, database: &database, into: &output) }
        return .pdu(.executeWriteResponse)
    }
}
