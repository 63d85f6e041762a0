/// The flags of an Execute Write Request: write or cancel the prepared queue. Reserved values
/// are kept (a server answers them with Invalid PDU).
public struct ATTExecuteWriteFlags: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x00: discard all prepared writes.
    public static let cancel = Self(0x00)
    /// 0x01: write all prepared values.
    public static let write = Self(0x01)

    public var description: String {
        switch rawValue {
        case 0x00: "cancel"
        case 0x01: "write"
        default: "reserved (0x\(hex(rawValue)))"
        }
    }
}

/// One Attribute Protocol PDU, in either direction (Core Vol 3 Part F 3.4).
///
/// Decoding is strict on structure: truncated parameters, trailing bytes, list lengths that
/// do not divide into entries and unknown UUID formats are ``WireError``s naming the byte.
/// It does not check semantic ranges the GATT client checks: handle 0 (invalid in requests)
/// decodes in every PDU, responses are not matched against requests, and values longer than
/// ATT_MTU or 512 bytes are accepted. Values are slices of the input (no copy). Opcodes not
/// known here decode to ``unknown(opcode:parameters:)`` and re-encode unchanged.
///
/// Encoding writes what the case holds; for list PDUs the entry length (Read By Type / Read By
/// Group Type) comes from the first entry and the Find Information format from the UUIDs, so
/// only well-formed values (equal value lengths, lengths that fit their length fields) encode
/// to bytes that decode back to the same value.
public enum ATTPDU: Hashable, Sendable, WireEncodable, WireDecodable {
    /// 0x01: a request failed.
    case errorResponse(requestOpcode: ATTOpcode, handle: UInt16, errorCode: ATTErrorCode)
    /// 0x02: the client's receive MTU.
    case exchangeMTURequest(clientMTU: UInt16)
    /// 0x03: the server's receive MTU.
    case exchangeMTUResponse(serverMTU: UInt16)
    /// 0x04: list handles and types in a range (descriptor discovery).
    case findInformationRequest(startHandle: UInt16, endHandle: UInt16)
    /// 0x05: handle/type pairs; encodes as format 1 (16-bit UUIDs) when every UUID has a
    /// 16-bit form, else format 2 (128-bit).
    case findInformationResponse([HandleUUID])
    /// 0x06: find attributes of a 16-bit type with a given value (service discovery by UUID).
    case findByTypeValueRequest(startHandle: UInt16, endHandle: UInt16, attributeType: UInt16, value: ArraySlice<UInt8>)
    /// 0x07: found handles with their group end handles.
    case findByTypeValueResponse([HandleRange])
    /// 0x08: read attributes of a type (2- or 16-byte UUID on the wire) in a range.
    case readByTypeRequest(startHandle: UInt16, endHandle: UInt16, attributeType: BluetoothUUID)
    /// 0x09: handle/value pairs, all values of the same length.
    case readByTypeResponse([HandleValue])
    /// 0x0A
    case readRequest(handle: UInt16)
    /// 0x0B
    case readResponse(value: ArraySlice<UInt8>)
    /// 0x0C: read part of a long value from `offset`.
    case readBlobRequest(handle: UInt16, offset: UInt16)
    /// 0x0D
    case readBlobResponse(value: ArraySlice<UInt8>)
    /// 0x0E: at least two handles.
    case readMultipleRequest(handles: [UInt16])
    /// 0x0F: the values concatenated (their boundaries are known only to the client).
    case readMultipleResponse(values: ArraySlice<UInt8>)
    /// 0x10: read grouping attributes (services) in a range.
    case readByGroupTypeRequest(startHandle: UInt16, endHandle: UInt16, groupType: BluetoothUUID)
    /// 0x11: handle, end group handle and value per group, all values of the same length.
    case readByGroupTypeResponse([GroupValue])
    /// 0x12
    case writeRequest(handle: UInt16, value: ArraySlice<UInt8>)
    /// 0x13
    case writeResponse
    /// 0x52: write without response.
    case writeCommand(handle: UInt16, value: ArraySlice<UInt8>)
    /// 0xD2: write without response, followed by a 12-byte authentication signature.
    case signedWriteCommand(handle: UInt16, value: ArraySlice<UInt8>, signature: ArraySlice<UInt8>)
    /// 0x16: queue part of a value at `offset`.
    case prepareWriteRequest(handle: UInt16, offset: UInt16, value: ArraySlice<UInt8>)
    /// 0x17: echoes the queued part.
    case prepareWriteResponse(handle: UInt16, offset: UInt16, value: ArraySlice<UInt8>)
    /// 0x18
    case executeWriteRequest(flags: ATTExecuteWriteFlags)
    /// 0x19
    case executeWriteResponse
    /// 0x1B: a value the server pushes; no confirmation.
    case handleValueNotification(handle: UInt16, value: ArraySlice<UInt8>)
    /// 0x1D: a value the server pushes; the client confirms.
    case handleValueIndication(handle: UInt16, value: ArraySlice<UInt8>)
    /// 0x1E
    case handleValueConfirmation
    /// 0x20: at least two handles.
    case readMultipleVariableRequest(handles: [UInt16])
    /// 0x21: a length-prefixed value per handle; the last may be cut short by the ATT_MTU (a
    /// lone final byte, half a length field, is dropped).
    case readMultipleVariableResponse([LengthValue])
    /// 0x23: several handle/length/value tuples in one notification.
    case multipleHandleValueNotification([HandleValue])
    /// An opcode this layer does not know, with its raw parameters. `opcode` must not be one
    /// of the known opcodes (that would decode as the typed case).
    case unknown(opcode: ATTOpcode, parameters: ArraySlice<UInt8>)

    /// One handle/type pair of a Find Information Response.
    public struct HandleUUID: Hashable, Sendable {
        public var handle: UInt16
        public var uuid: BluetoothUUID
        @inlinable public init(handle: UInt16, uuid: BluetoothUUID) {
            self.handle = handle
            self.uuid = uuid
        }
    }

    /// One entry of a Find By Type Value Response.
    public struct HandleRange: Hashable, Sendable {
        public var foundHandle: UInt16
        public var groupEndHandle: UInt16
        @inlinable public init(foundHandle: UInt16, groupEndHandle: UInt16) {
            self.foundHandle = foundHandle
            self.groupEndHandle = groupEndHandle
        }
    }

    /// A handle and a value: Read By Type Response entries, Multiple Handle Value Notification
    /// tuples.
    public struct HandleValue: Hashable, Sendable {
        public var handle: UInt16
        public var value: ArraySlice<UInt8>
        @inlinable public init(handle: UInt16, value: ArraySlice<UInt8>) {
            self.handle = handle
            self.value = value
        }
    }

    /// One entry of a Read By Group Type Response.
    public struct GroupValue: Hashable, Sendable {
        public var handle: UInt16
        public var endGroupHandle: UInt16
        public var value: ArraySlice<UInt8>
        @inlinable public init(handle: UInt16, endGroupHandle: UInt16, value: ArraySlice<UInt8>) {
            self.handle = handle
            self.endGroupHandle = endGroupHandle
            self.value = value
        }
    }

    /// One tuple of a Read Multiple Variable Response: the attribute's full length and its
    /// value. Only the last tuple may hold fewer bytes than `length` (the server cut the list
    /// at the ATT_MTU).
    public struct LengthValue: Hashable, Sendable {
        /// The value length the server announced.
        public var length: UInt16
        public var value: ArraySlice<UInt8>
        @inlinable public init(length: UInt16, value: ArraySlice<UInt8>) {
            self.length = length
            self.value = value
        }
        /// A complete value: `length` is the value's size.
        @inlinable public init(value: ArraySlice<UInt8>) {
            self.init(length: UInt16(truncatingIfNeeded: value.count), value: value)
        }
        /// Whether the value was cut short of its announced length.
        @inlinable public var isTruncated: Bool { value.count < Int(length) }
    }

    /// The opcode of this PDU.
    public var opcode: ATTOpcode {
        switch self {
        case .errorResponse: .errorResponse
        case .exchangeMTURequest: .exchangeMTURequest
        case .exchangeMTUResponse: .exchangeMTUResponse
        case .findInformationRequest: .findInformationRequest
        case .findInformationResponse: .findInformationResponse
        case .findByTypeValueRequest: .findByTypeValueRequest
        case .findByTypeValueResponse: .findByTypeValueResponse
        case .readByTypeRequest: .readByTypeRequest
        case .readByTypeResponse: .readByTypeResponse
        case .readRequest: .readRequest
        case .readResponse: .readResponse
        case .readBlobRequest: .readBlobRequest
        case .readBlobResponse: .readBlobResponse
        case .readMultipleRequest: .readMultipleRequest
        case .readMultipleResponse: .readMultipleResponse
        case .readByGroupTypeRequest: .readByGroupTypeRequest
        case .readByGroupTypeResponse: .readByGroupTypeResponse
        case .writeRequest: .writeRequest
        case .writeResponse: .writeResponse
        case .writeCommand: .writeCommand
        case .signedWriteCommand: .signedWriteCommand
        case .prepareWriteRequest: .prepareWriteRequest
        case .prepareWriteResponse: .prepareWriteResponse
        case .executeWriteRequest: .executeWriteRequest
        case .executeWriteResponse: .executeWriteResponse
        case .handleValueNotification: .handleValueNotification
        case .handleValueIndication: .handleValueIndication
        case .handleValueConfirmation: .handleValueConfirmation
        case .readMultipleVariableRequest: .readMultipleVariableRequest
        case .readMultipleVariableResponse: .readMultipleVariableResponse
        case .multipleHandleValueNotification: .multipleHandleValueNotification
        case .unknown(let opcode, _): opcode
        }
    }
}

// MARK: - Decoding

extension ATTPDU {
    /// Size of the authentication signature that ends a signed PDU.
    public static let signatureSize = 12
    /// ATT_MTU before an Exchange MTU (LE).
    public static let defaultMTU: UInt16 = 23
    /// The largest ATT_MTU a stack needs to accept: 512-byte value + 5 bytes of header.
    public static let maximumMTU: UInt16 = 517
    /// The longest attribute value the specification allows.
    public static let maximumValueLength = 512

    @inlinable
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> ATTPDU {
        // Notifications are the hot path (a heart-rate band sends one per beat): decode them
        // without the general decoder's large frame.
        let i = bytes.startIndex
        if bytes.count >= 3, bytes[i] == 0x1B {
            return .handleValueNotification(handle: UInt16(bytes[i + 1]) | UInt16(bytes[i + 2]) << 8, value: bytes[(i + 3)...])
        }
        return try decodeAny(bytes)
    }

    /// Decodes one PDU that fills `bytes` (a concrete overload, so the hot path is not a
    /// generic call).
    @inlinable
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> ATTPDU {
        try decode(bytes[...])
    }

    @usableFromInline
    static func decodeAny(_ bytes: ArraySlice<UInt8>) throws(WireError) -> ATTPDU {
        var r = ByteReader(bytes, context: "ATT PDU")
        let opcode = try r.readUInt8()
        let pdu: ATTPDU
        switch opcode {
        case 0x1B:
            r.context = "ATT Handle Value Notification"
            pdu = .handleValueNotification(handle: try r.readUInt16(), value: r.readRemaining())
        case 0x01:
            r.context = "ATT Error Response"
            pdu = .errorResponse(
                requestOpcode: ATTOpcode(try r.readUInt8()), handle: try r.readUInt16(),
                errorCode: ATTErrorCode(try r.readUInt8()))
        case 0x02:
            r.context = "ATT Exchange MTU Request"
            pdu = .exchangeMTURequest(clientMTU: try r.readUInt16())
        case 0x03:
            r.context = "ATT Exchange MTU Response"
            pdu = .exchangeMTUResponse(serverMTU: try r.readUInt16())
        case 0x04:
            r.context = "ATT Find Information Request"
            pdu = .findInformationRequest(startHandle: try r.readUInt16(), endHandle: try r.readUInt16())
        case 0x05:
            r.context = "ATT Find Information Response"
            pdu = .findInformationResponse(try decodeInformationData(&r))
        case 0x06:
            r.context = "ATT Find By Type Value Request"
            pdu = .findByTypeValueRequest(
                startHandle: try r.readUInt16(), endHandle: try r.readUInt16(),
                attributeType: try r.readUInt16(), value: r.readRemaining())
        case 0x07:
            r.context = "ATT Find By Type Value Response"
            try requireMultiple(of: 4, &r, what: "handles information list")
            var ranges: [HandleRange] = []
            ranges.reserveCapacity(r.count / 4)
            while !r.isAtEnd {
                ranges.append(HandleRange(foundHandle: try r.readUInt16(), groupEndHandle: try r.readUInt16()))
            }
            pdu = .findByTypeValueResponse(ranges)
        case 0x08:
            r.context = "ATT Read By Type Request"
            pdu = .readByTypeRequest(
                startHandle: try r.readUInt16(), endHandle: try r.readUInt16(), attributeType: try readATTUUID(&r))
        case 0x09:
            r.context = "ATT Read By Type Response"
            pdu = .readByTypeResponse(try decodeHandleValueList(&r))
        case 0x0A:
            r.context = "ATT Read Request"
            pdu = .readRequest(handle: try r.readUInt16())
        case 0x0B:
            pdu = .readResponse(value: r.readRemaining())
        case 0x0C:
            r.context = "ATT Read Blob Request"
            pdu = .readBlobRequest(handle: try r.readUInt16(), offset: try r.readUInt16())
        case 0x0D:
            pdu = .readBlobResponse(value: r.readRemaining())
        case 0x0E:
            r.context = "ATT Read Multiple Request"
            pdu = .readMultipleRequest(handles: try decodeHandleSet(&r))
        case 0x0F:
            pdu = .readMultipleResponse(values: r.readRemaining())
        case 0x10:
            r.context = "ATT Read By Group Type Request"
            pdu = .readByGroupTypeRequest(
                startHandle: try r.readUInt16(), endHandle: try r.readUInt16(), groupType: try readATTUUID(&r))
        case 0x11:
            r.context = "ATT Read By Group Type Response"
            pdu = .readByGroupTypeResponse(try decodeGroupValueList(&r))
        case 0x12:
            r.context = "ATT Write Request"
            pdu = .writeRequest(handle: try r.readUInt16(), value: r.readRemaining())
        case 0x13:
            r.context = "ATT Write Response"
            pdu = .writeResponse
        case 0x52:
            r.context = "ATT Write Command"
            pdu = .writeCommand(handle: try r.readUInt16(), value: r.readRemaining())
        case 0xD2:
            r.context = "ATT Signed Write Command"
            let handle = try r.readUInt16()
            if r.count < signatureSize {
                throw r.error(.truncated(needed: signatureSize, available: r.count))
            }
            let value = try r.readBytes(r.count - signatureSize)
            pdu = .signedWriteCommand(handle: handle, value: value, signature: r.readRemaining())
        case 0x16:
            r.context = "ATT Prepare Write Request"
            pdu = .prepareWriteRequest(handle: try r.readUInt16(), offset: try r.readUInt16(), value: r.readRemaining())
        case 0x17:
            r.context = "ATT Prepare Write Response"
            pdu = .prepareWriteResponse(handle: try r.readUInt16(), offset: try r.readUInt16(), value: r.readRemaining())
        case 0x18:
            r.context = "ATT Execute Write Request"
            pdu = .executeWriteRequest(flags: ATTExecuteWriteFlags(try r.readUInt8()))
        case 0x19:
            r.context = "ATT Execute Write Response"
            pdu = .executeWriteResponse
        case 0x1D:
            r.context = "ATT Handle Value Indication"
            pdu = .handleValueIndication(handle: try r.readUInt16(), value: r.readRemaining())
        case 0x1E:
            r.context = "ATT Handle Value Confirmation"
            pdu = .handleValueConfirmation
        case 0x20:
            r.context = "ATT Read Multiple Variable Request"
            pdu = .readMultipleVariableRequest(handles: try decodeHandleSet(&r))
        case 0x21:
            r.context = "ATT Read Multiple Variable Response"
            // The server cuts the list at the ATT_MTU (Core Vol 3 Part F 3.4.4.12): the last value
            // may be shorter than its length, and a lone final byte is a length cut in half,
            // which carries nothing and is dropped (as Zephyr's client does).
            var tuples: [LengthValue] = []
            while r.count >= 2 {
                let length = try r.readUInt16()
                let value = try r.readBytes(min(Int(length), r.count))
                tuples.append(LengthValue(length: length, value: value))
            }
            _ = r.readRemaining()
            pdu = .readMultipleVariableResponse(tuples)
        case 0x23:
            r.context = "ATT Multiple Handle Value Notification"
            var tuples: [HandleValue] = []
            while !r.isAtEnd {
                let handle = try r.readUInt16()
                let length = Int(try r.readUInt16())
                tuples.append(HandleValue(handle: handle, value: try r.readBytes(length)))
            }
            pdu = .multipleHandleValueNotification(tuples)
        default:
            pdu = .unknown(opcode: ATTOpcode(opcode), parameters: r.readRemaining())
        }
        try r.expectEnd()
        return pdu
    }

    /// Throws unless the bytes left divide into entries of `size` bytes.
    private static func requireMultiple(of size: Int, _ r: inout ByteReader, what: String) throws(WireError) {
        if r.count % size != 0 {
            throw r.error(.invalidValue("\(what) of \(r.count) bytes is not a multiple of the entry length \(size)"))
        }
    }

    /// A UUID that fills the rest of the PDU: 2 or 16 bytes.
    private static func readATTUUID(_ r: inout ByteReader) throws(WireError) -> BluetoothUUID {
        guard r.count == 2 || r.count == 16 else {
            throw r.error(.invalidValue("attribute type of \(r.count) bytes; must be 2 or 16"))
        }
        return try r.readUUID(width: r.count)
    }

    /// The Set Of Handles of Read Multiple (Variable) Request: two or more handles.
    private static func decodeHandleSet(_ r: inout ByteReader) throws(WireError) -> [UInt16] {
        try requireMultiple(of: 2, &r, what: "set of handles")
        if r.count < 4 {
            throw r.error(.invalidValue("set of handles needs at least 2 handles, has \(r.count / 2)"))
        }
        var handles: [UInt16] = []
        handles.reserveCapacity(r.count / 2)
        while !r.isAtEnd { handles.append(try r.readUInt16()) }
        return handles
    }

    private static func decodeInformationData(_ r: inout ByteReader) throws(WireError) -> [HandleUUID] {
        let formatOffset = r.offset
        let format = try r.readUInt8()
        let width: Int
        switch format {
        case 0x01: width = 2
        case 0x02: width = 16
        default: throw r.error(.unknownValue(UInt64(format)), at: formatOffset)
        }
        try requireMultiple(of: 2 + width, &r, what: "information data")
        var entries: [HandleUUID] = []
        entries.reserveCapacity(r.count / (2 + width))
        while !r.isAtEnd {
            entries.append(HandleUUID(handle: try r.readUInt16(), uuid: try r.readUUID(width: width)))
        }
        return entries
    }

    /// Reads the length byte and checks it is at least `minimum` and divides the rest.
    private static func readEntryLength(_ r: inout ByteReader, minimum: Int, what: String) throws(WireError) -> Int {
        let lengthOffset = r.offset
        let length = Int(try r.readUInt8())
        if length < minimum {
            throw r.error(.invalidValue("entry length \(length) is less than \(minimum)"), at: lengthOffset)
        }
        try requireMultiple(of: length, &r, what: what)
        return length
    }

    private static func decodeHandleValueList(_ r: inout ByteReader) throws(WireError) -> [HandleValue] {
        let length = try readEntryLength(&r, minimum: 2, what: "attribute data list")
        var entries: [HandleValue] = []
        entries.reserveCapacity(r.count / length)
        while !r.isAtEnd {
            entries.append(HandleValue(handle: try r.readUInt16(), value: try r.readBytes(length - 2)))
        }
        return entries
    }

    private static func decodeGroupValueList(_ r: inout ByteReader) throws(WireError) -> [GroupValue] {
        let length = try readEntryLength(&r, minimum: 4, what: "attribute data list")
        var entries: [GroupValue] = []
        entries.reserveCapacity(r.count / length)
        while !r.isAtEnd {
            entries.append(GroupValue(
                handle: try r.readUInt16(), endGroupHandle: try r.readUInt16(), value: try r.readBytes(length - 4)))
        }
        return entries
    }
}

// MARK: - Encoding

extension ATTPDU {
    public func encode(into writer: inout ByteWriter) {
        writer.write(opcode.rawValue)
        switch self {
        case .errorResponse(let request, let handle, let code):
            writer.write(request.rawValue)
            writer.write(handle)
            writer.write(code.rawValue)
        case .exchangeMTURequest(let mtu), .exchangeMTUResponse(let mtu):
            writer.write(mtu)
        case .findInformationRequest(let start, let end):
            writer.write(start)
            writer.write(end)
        case .findInformationResponse(let entries):
            let short = entries.allSatisfy { $0.uuid.uuid16 != nil }
            writer.write(short ? UInt8(0x01) : UInt8(0x02))
            for entry in entries {
                writer.write(entry.handle)
                writer.write(entry.uuid, width: short ? 2 : 16)
            }
        case .findByTypeValueRequest(let start, let end, let type, let value):
            writer.write(start)
            writer.write(end)
            writer.write(type)
            writer.write(contentsOf: value)
        case .findByTypeValueResponse(let ranges):
            for range in ranges {
                writer.write(range.foundHandle)
                writer.write(range.groupEndHandle)
            }
        case .readByTypeRequest(let start, let end, let uuid), .readByGroupTypeRequest(let start, let end, let uuid):
            writer.write(start)
            writer.write(end)
            writer.write(uuid, width: uuid.uuid16 != nil ? 2 : 16)
        case .readByTypeResponse(let entries):
            writer.write(UInt8(truncatingIfNeeded: 2 + (entries.first?.value.count ?? 0)))
            for entry in entries {
                writer.write(entry.handle)
                writer.write(contentsOf: entry.value)
            }
        case .readRequest(let handle):
            writer.write(handle)
        case .readResponse(let value), .readBlobResponse(let value), .readMultipleResponse(let value):
            writer.write(contentsOf: value)
        case .readBlobRequest(let handle, let offset):
            writer.write(handle)
            writer.write(offset)
        case .readMultipleRequest(let handles), .readMultipleVariableRequest(let handles):
            for handle in handles { writer.write(handle) }
        case .readByGroupTypeResponse(let entries):
            writer.write(UInt8(truncatingIfNeeded: 4 + (entries.first?.value.count ?? 0)))
            for entry in entries {
                writer.write(entry.handle)
                writer.write(entry.endGroupHandle)
                writer.write(contentsOf: entry.value)
            }
        case .writeRequest(let handle, let value), .writeCommand(let handle, let value),
             .handleValueNotification(let handle, let value), .handleValueIndication(let handle, let value):
            writer.write(handle)
            writer.write(contentsOf: value)
        case .signedWriteCommand(let handle, let value, let signature):
            writer.write(handle)
            writer.write(contentsOf: value)
            writer.write(contentsOf: signature)
        case .prepareWriteRequest(let handle, let offset, let value),
             .prepareWriteResponse(let handle, let offset, let value):
            writer.write(handle)
            writer.write(offset)
            writer.write(contentsOf: value)
        case .executeWriteRequest(let flags):
            writer.write(flags.rawValue)
        case .writeResponse, .executeWriteResponse, .handleValueConfirmation:
            break
        case .readMultipleVariableResponse(let tuples):
            for tuple in tuples {
                writer.write(tuple.length)
                writer.write(contentsOf: tuple.value)
            }
        case .multipleHandleValueNotification(let tuples):
            for tuple in tuples {
                writer.write(tuple.handle)
                writer.write(UInt16(truncatingIfNeeded: tuple.value.count))
                writer.write(contentsOf: tuple.value)
            }
        case .unknown(_, let parameters):
            writer.write(contentsOf: parameters)
        }
    }
}
