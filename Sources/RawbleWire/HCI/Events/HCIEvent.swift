/// An HCI event packet (Core Vol 4 Part E 5.4.4 and 7.7), without the H4 packet type byte:
/// event code (u8), parameter total length (u8), then exactly that many parameter bytes.
///
/// Events this stack does not decode are kept in ``unknown(code:parameters:)`` and re-encode
/// to the same bytes.
///
/// Connection handles are carried as the raw 16-bit field. The specification allows
/// `0x0000...0x0EFF` (``HCIEvent/validConnectionHandles``); decoders do not reject or mask other
/// values (a failed LE Connection Complete may carry anything there), so the event still
/// reaches the host and re-encodes identically. Hosts match handles against the ones they know.
public enum HCIEvent: Hashable, Sendable {
    /// `0x05`: a connection ended (or a Disconnect command failed).
    case disconnectionComplete(DisconnectionComplete)
    /// `0x08` Encryption Change v1, or `0x59` v2 when ``EncryptionChange/keySize`` is present.
    case encryptionChange(EncryptionChange)
    /// `0x0E`: a command finished; carries its return parameters and new command credits.
    case commandComplete(CommandComplete)
    /// `0x0F`: a command was accepted (or refused) and will finish with another event.
    case commandStatus(CommandStatus)
    /// `0x10`: the controller hit a hardware failure (the code is vendor-specific).
    case hardwareError(code: UInt8)
    /// `0x13`: ACL credits returned per connection handle.
    case numberOfCompletedPackets([CompletedPackets])
    /// `0x30`: an encrypted link was encrypted again with a (possibly new) key: LE Enable
    /// Encryption on a link already encrypted ends with this, not with Encryption Change.
    case encryptionKeyRefreshComplete(status: HCIStatus, connectionHandle: UInt16)
    /// `0x1A`: the host sent more packets than the controller had buffers for
    /// (link type `0x00` synchronous, `0x01` ACL).
    case dataBufferOverflow(linkType: UInt8)
    /// `0x3E`: an LE subevent.
    case le(LEMetaEvent)
    /// Any other event code, kept with its raw parameters.
    case unknown(code: UInt8, parameters: ArraySlice<UInt8>)

    /// Connection handle values the specification allows in events (12 bits, top range reserved).
    public static let validConnectionHandles: ClosedRange<UInt16> = 0x0000...0x0EFF

    /// The event code this event is sent with.
    public var code: UInt8 {
        switch self {
        case .disconnectionComplete: return EventCode.disconnectionComplete
        case .encryptionChange(let e):
            return e.keySize == nil ? EventCode.encryptionChange : EventCode.encryptionChangeV2
        case .commandComplete: return EventCode.commandComplete
        case .commandStatus: return EventCode.commandStatus
        case .hardwareError: return EventCode.hardwareError
        case .numberOfCompletedPackets: return EventCode.numberOfCompletedPackets
        case .dataBufferOverflow: return EventCode.dataBufferOverflow
        case .encryptionKeyRefreshComplete: return EventCode.encryptionKeyRefreshComplete
        case .le: return EventCode.leMeta
        case .unknown(let code, _): return code
        }
    }

    /// The specification's name, e.g. `"Command Complete"` or `"LE Advertising Report"`;
    /// for undecoded events the name from the code table, else `"Unknown Event (0xNN)"`.
    public var name: String {
        switch self {
        case .le(let event): return event.name
        default: return Self.name(ofCode: code) ?? "Unknown Event (0x\(hex(code)))"
        }
    }

    /// The specification's name for an event code (Core Vol 4 Part E 7.7, e.g. `0x0E` →
    /// `"Command Complete"`); `nil` for a code the specification does not assign.
    public static func name(ofCode code: UInt8) -> String? { codeNames[code] }
}

/// Event codes used by the decoder (Core Vol 4 Part E 7.7).
private enum EventCode {
    static let disconnectionComplete: UInt8 = 0x05
    static let encryptionChange: UInt8 = 0x08
    static let commandComplete: UInt8 = 0x0E
    static let commandStatus: UInt8 = 0x0F
    static let hardwareError: UInt8 = 0x10
    static let numberOfCompletedPackets: UInt8 = 0x13
    static let dataBufferOverflow: UInt8 = 0x1A
    static let encryptionKeyRefreshComplete: UInt8 = 0x30
    static let leMeta: UInt8 = 0x3E
    static let encryptionChangeV2: UInt8 = 0x59
}

extension HCIEvent {
    /// Disconnection Complete (`0x05`): `status`, connection handle, and the `reason` the link
    /// went down (an HCI error code, e.g. `0x13` Remote User Terminated Connection).
    public struct DisconnectionComplete: Hashable, Sendable {
        public var status: HCIStatus
        public var connectionHandle: UInt16
        public var reason: HCIStatus

        public init(status: HCIStatus, connectionHandle: UInt16, reason: HCIStatus) {
            self.status = status
            self.connectionHandle = connectionHandle
            self.reason = reason
        }
    }

    /// Encryption Change v1 (`0x08`) or v2 (`0x59`, with the negotiated key size).
    public struct EncryptionChange: Hashable, Sendable {
        public var status: HCIStatus
        public var connectionHandle: UInt16
        /// `0x00` off, `0x01` on (AES-CCM on LE, E0 on BR/EDR), `0x02` on with AES-CCM (BR/EDR).
        public var encryptionEnabled: UInt8
        /// Encryption key size in octets; present only in the v2 event, `nil` means v1.
        public var keySize: UInt8?

        public init(status: HCIStatus, connectionHandle: UInt16, encryptionEnabled: UInt8, keySize: UInt8? = nil) {
            self.status = status
            self.connectionHandle = connectionHandle
            self.encryptionEnabled = encryptionEnabled
            self.keySize = keySize
        }

        /// Whether the link is now encrypted.
        public var isEncrypted: Bool { encryptionEnabled != 0 }
    }

    /// Command Complete (`0x0E`). The return parameters stay raw here; typed views live with
    /// the commands. Opcode `0x0000` (no command) only hands out command credits.
    public struct CommandComplete: Hashable, Sendable {
        /// How many commands the host may now send (command flow control credits).
        public var numHCICommandPackets: UInt8
        public var opcode: HCIOpcode
        public var returnParameters: ArraySlice<UInt8>

        public init(numHCICommandPackets: UInt8, opcode: HCIOpcode, returnParameters: ArraySlice<UInt8>) {
            self.numHCICommandPackets = numHCICommandPackets
            self.opcode = opcode
            self.returnParameters = returnParameters
        }

        /// The first return parameter read as a status, which it is for almost every command;
        /// `nil` when there are no return parameters.
        public var status: HCIStatus? { returnParameters.first.map(HCIStatus.init(rawValue:)) }
    }

    /// Command Status (`0x0F`): whether the controller accepted a command that finishes later.
    public struct CommandStatus: Hashable, Sendable {
        public var status: HCIStatus
        /// How many commands the host may now send (command flow control credits).
        public var numHCICommandPackets: UInt8
        public var opcode: HCIOpcode

        public init(status: HCIStatus, numHCICommandPackets: UInt8, opcode: HCIOpcode) {
            self.status = status
            self.numHCICommandPackets = numHCICommandPackets
            self.opcode = opcode
        }
    }

    /// One entry of Number Of Completed Packets (`0x13`): ACL credits returned for a handle.
    public struct CompletedPackets: Hashable, Sendable {
        public var connectionHandle: UInt16
        /// Packets sent (or flushed) on this handle since the previous event: credits to add back.
        public var count: UInt16

        public init(connectionHandle: UInt16, count: UInt16) {
            self.connectionHandle = connectionHandle
            self.count = count
        }
    }
}

// MARK: - Decoding and encoding

extension HCIEvent: WireDecodable, WireEncodable {
    /// Decodes an event packet (code, length, parameters) that fills `bytes` exactly.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> HCIEvent {
        // Header read by index (no reader): this runs once per received event.
        let start = bytes.startIndex
        guard bytes.count >= 2 else {
            throw WireError(.truncated(needed: 1, available: 0), at: bytes.endIndex, in: "HCI event")
        }
        let code = bytes[start]
        let length = Int(bytes[start + 1])
        let available = bytes.count - 2
        if available < length {
            throw WireError(.truncated(needed: length, available: available), at: start + 2, in: "HCI event")
        }
        if available > length {
            throw WireError(.trailingBytes(count: available - length), at: start + 2 + length, in: "HCI event")
        }
        return try decode(code: code, parameters: bytes.dropFirst(2))
    }

    /// Decodes an event from its code and its parameters (the bytes after the length byte).
    public static func decode(code: UInt8, parameters: ArraySlice<UInt8>) throws(WireError) -> HCIEvent {
        switch code {
        case EventCode.disconnectionComplete:
            var r = ByteReader(parameters, context: "HCI Disconnection Complete event")
            let event = DisconnectionComplete(
                status: HCIStatus(try r.readUInt8()),
                connectionHandle: try r.readUInt16(),
                reason: HCIStatus(try r.readUInt8()))
            try r.expectEnd()
            return .disconnectionComplete(event)

        case EventCode.encryptionChange, EventCode.encryptionChangeV2:
            let v2 = code == EventCode.encryptionChangeV2
            var r = ByteReader(parameters, context: v2 ? "HCI Encryption Change v2 event" : "HCI Encryption Change event")
            let status = HCIStatus(try r.readUInt8())
            let handle = try r.readUInt16()
            let enabled = try r.readUInt8()
            let keySize: UInt8? = v2 ? try r.readUInt8() : nil
            try r.expectEnd()
            return .encryptionChange(EncryptionChange(
                status: status, connectionHandle: handle, encryptionEnabled: enabled, keySize: keySize))

        case EventCode.encryptionKeyRefreshComplete:
            var r = ByteReader(parameters, context: "HCI Encryption Key Refresh Complete event")
            let status = HCIStatus(try r.readUInt8())
            let handle = try r.readUInt16()
            try r.expectEnd()
            return .encryptionKeyRefreshComplete(status: status, connectionHandle: handle)

        case EventCode.commandComplete:
            var r = ByteReader(parameters, context: "HCI Command Complete event")
            let credits = try r.readUInt8()
            let opcode = HCIOpcode(try r.readUInt16())
            return .commandComplete(CommandComplete(
                numHCICommandPackets: credits, opcode: opcode, returnParameters: r.readRemaining()))

        case EventCode.commandStatus:
            var r = ByteReader(parameters, context: "HCI Command Status event")
            let event = CommandStatus(
                status: HCIStatus(try r.readUInt8()),
                numHCICommandPackets: try r.readUInt8(),
                opcode: HCIOpcode(try r.readUInt16()))
            try r.expectEnd()
            return .commandStatus(event)

        case EventCode.hardwareError:
            var r = ByteReader(parameters, context: "HCI Hardware Error event")
            let hardwareCode = try r.readUInt8()
            try r.expectEnd()
            return .hardwareError(code: hardwareCode)

        case EventCode.numberOfCompletedPackets:
            var r = ByteReader(parameters, context: "HCI Number Of Completed Packets event")
            let count = Int(try r.readUInt8())
            // Each entry is 4 bytes: the count must account for every byte present.
            if r.count != count &* 4 {
                throw r.error(r.count < count &* 4
                    ? .truncated(needed: count &* 4, available: r.count)
                    : .trailingBytes(count: r.count - count &* 4))
            }
            var entries: [CompletedPackets] = []
            entries.reserveCapacity(count)
            for _ in 0..<count {
                entries.append(CompletedPackets(connectionHandle: try r.readUInt16(), count: try r.readUInt16()))
            }
            return .numberOfCompletedPackets(entries)

        case EventCode.dataBufferOverflow:
            var r = ByteReader(parameters, context: "HCI Data Buffer Overflow event")
            let linkType = try r.readUInt8()
            try r.expectEnd()
            return .dataBufferOverflow(linkType: linkType)

        case EventCode.leMeta:
            return .le(try LEMetaEvent.decode(parameters))

        default:
            return .unknown(code: code, parameters: parameters)
        }
    }

    /// Writes the event packet: code, parameter length, parameters. Parameters longer than
    /// 255 bytes cannot be represented; their length byte is truncated.
    public func encode(into writer: inout ByteWriter) {
        writer.write(code)
        let lengthIndex = writer.bytes.count
        writer.write(UInt8(0))
        encodeParameters(into: &writer)
        writer.bytes[lengthIndex] = UInt8(truncatingIfNeeded: writer.bytes.count - lengthIndex - 1)
    }

    /// Writes only the event parameters (what follows the length byte).
    public func encodeParameters(into writer: inout ByteWriter) {
        switch self {
        case .disconnectionComplete(let e):
            writer.write(e.status.rawValue)
            writer.write(e.connectionHandle)
            writer.write(e.reason.rawValue)
        case .encryptionChange(let e):
            writer.write(e.status.rawValue)
            writer.write(e.connectionHandle)
            writer.write(e.encryptionEnabled)
            if let keySize = e.keySize { writer.write(keySize) }
        case .commandComplete(let e):
            writer.write(e.numHCICommandPackets)
            writer.write(e.opcode.rawValue)
            writer.write(contentsOf: e.returnParameters)
        case .commandStatus(let e):
            writer.write(e.status.rawValue)
            writer.write(e.numHCICommandPackets)
            writer.write(e.opcode.rawValue)
        case .hardwareError(let hardwareCode):
            writer.write(hardwareCode)
        case let .encryptionKeyRefreshComplete(status, handle):
            writer.write(status.rawValue)
            writer.write(handle)
        case .numberOfCompletedPackets(let entries):
            writer.write(UInt8(truncatingIfNeeded: entries.count))
            for entry in entries {
                writer.write(entry.connectionHandle)
                writer.write(entry.count)
            }
        case .dataBufferOverflow(let linkType):
            writer.write(linkType)
        case .le(let event):
            event.encode(into: &writer)
        case .unknown(_, let parameters):
            writer.write(contentsOf: parameters)
        }
    }
}

extension HCIEvent: CustomStringConvertible {
    /// The event's name and code, e.g. `Command Complete (0x0E)` or
    /// `LE Advertising Report (0x3E/0x02)`.
    public var description: String {
        if case .le(let event) = self { return "\(name) (0x3E/0x\(hex(event.subeventCode)))" }
        return "\(name) (0x\(hex(code)))"
    }
}
