import RawbleWire

/// A PMD control-point operation: the first byte of a request, echoed in its response.
public struct PMDOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    /// Get the settings a stream offers (`01`).
    public static let getSettings = PMDOpcode(0x01)
    /// Start a stream with settings (`02`).
    public static let start = PMDOpcode(0x02)
    /// Stop a stream (`03`).
    public static let stop = PMDOpcode(0x03)
    /// Get SDK-mode settings (`04`).
    public static let getSDKModeSettings = PMDOpcode(0x04)
    /// Which streams run (`05`).
    public static let measurementStatus = PMDOpcode(0x05)
    /// SDK-mode status (`06`).
    public static let sdkModeStatus = PMDOpcode(0x06)

    public var description: String {
        switch rawValue {
        case 0x01: "get settings"
        case 0x02: "start"
        case 0x03: "stop"
        case 0x04: "get SDK-mode settings"
        case 0x05: "measurement status"
        case 0x06: "SDK-mode status"
        default: "op 0x\(hex(rawValue))"
        }
    }
}

/// The result code of a PMD control-point response (byte 3). Codes this library does not
/// name are kept as their number.
///
/// Numbering follows Polar's Android and iOS SDKs (0–14; the meaning of 10 is the 2021 PMD
/// specification's). The 2019 specification disagrees: there 6 is "invalid state", 9 is
/// "invalid G rate" and nothing is above 10. The SDKs' numbering is the one their code acts
/// on, so it is the one used here.
public struct PMDStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = PMDStatus(0)
    public static let invalidOpcode = PMDStatus(1)
    public static let invalidMeasurementType = PMDStatus(2)
    public static let notSupported = PMDStatus(3)
    public static let invalidLength = PMDStatus(4)
    public static let invalidParameter = PMDStatus(5)
    /// The stream is already started or stopped (the 2019 specification: "invalid state").
    public static let alreadyInState = PMDStatus(6)
    public static let invalidResolution = PMDStatus(7)
    public static let invalidSampleRate = PMDStatus(8)
    /// The 2019 specification: "invalid G rate".
    public static let invalidRange = PMDStatus(9)
    /// The link's ATT MTU is not the one the device requires.
    public static let invalidMTU = PMDStatus(10)
    public static let invalidChannels = PMDStatus(11)
    public static let invalidState = PMDStatus(12)
    /// The device is in its charger.
    public static let inCharger = PMDStatus(13)
    public static let diskFull = PMDStatus(14)

    /// Whether the request succeeded.
    @inlinable public var isSuccess: Bool { rawValue == 0 }

    /// Lower-case words (`invalid sample rate`); `nil` for a code without a name.
    public var name: String? {
        switch rawValue {
        case 0: "success"
        case 1: "invalid op code"
        case 2: "invalid measurement type"
        case 3: "not supported"
        case 4: "invalid length"
        case 5: "invalid parameter"
        case 6: "already in state"
        case 7: "invalid resolution"
        case 8: "invalid sample rate"
        case 9: "invalid range"
        case 10: "invalid MTU"
        case 11: "invalid number of channels"
        case 12: "invalid state"
        case 13: "device in charger"
        case 14: "disk full"
        default: nil
        }
    }

    public var description: String { name ?? "status \(rawValue)" }
}

/// A request written to the PMD control point (with response; the reply comes as an
/// indication, so indications must be on first).
///
/// H10 examples: start ECG is `02 00 00 01 82 00 01 01 0E 00`; start acceleration at 200 Hz,
/// ±8 G is `02 02 00 01 C8 00 01 01 10 00 02 01 08 00`; stop acceleration is `03 02`.
public enum PMDControlPointRequest: Hashable, Sendable {
    /// `01 type`: which settings the stream offers.
    case getSettings(PMDStream)
    /// `02 type settings…`: start the stream.
    case start(PMDStream, PMDSettingSelection)
    /// `03 type`: stop the stream.
    case stop(PMDStream)
    /// `05`: which streams run (the opcode alone; no source shows parameters).
    case measurementStatus

    /// The request's opcode.
    public var opcode: PMDOpcode {
        switch self {
        case .getSettings: .getSettings
        case .start: .start
        case .stop: .stop
        case .measurementStatus: .measurementStatus
        }
    }
}

extension PMDControlPointRequest: WireDecodable, WireEncodable {
    public func encode(into writer: inout ByteWriter) {
        writer.write(opcode.rawValue)
        switch self {
        case let .getSettings(stream), let .stop(stream):
            writer.write(stream.typeByte)
        case let .start(stream, settings):
            writer.write(stream.typeByte)
            settings.encode(into: &writer)
        case .measurementStatus:
            break
        }
    }

    /// Decodes a request (what a simulated device receives). Opcodes other than 01, 02, 03 and
    /// 05 are `WireError.Kind.unknownValue`; bytes after a complete request are trailing.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> PMDControlPointRequest {
        var reader = ByteReader(bytes, context: "PMD control point request")
        let opcodeOffset = reader.offset
        let opcode = PMDOpcode(try reader.readUInt8())
        let request: PMDControlPointRequest
        switch opcode {
        case .getSettings: request = .getSettings(PMDStream(typeByte: try reader.readUInt8()))
        case .stop: request = .stop(PMDStream(typeByte: try reader.readUInt8()))
        case .start:
            let stream = PMDStream(typeByte: try reader.readUInt8())
            request = .start(stream, try PMDSettingSelection.decode(reader.readRemaining()))
        case .measurementStatus: request = .measurementStatus
        default: throw reader.error(.unknownValue(UInt64(opcode.rawValue)), at: opcodeOffset)
        }
        try reader.expectEnd()
        return request
    }
}

/// A response on the PMD control point: `F0`, opcode echo, type byte, status, `more`, parameters.
///
/// The parameters of a get-settings reply are ``PMDSettings`` (``settings()``); a start reply's
/// parameters may carry the factor delta-compressed frames need (an H10's carries one
/// "reserved" byte). Polar's Android SDK reads `more` only when the status is success, and so
/// does this decoder: an error response may stop after the status byte.
public struct PMDControlPointResponse: Hashable, Sendable {
    /// The first byte of every response.
    public static let marker: UInt8 = 0xF0

    /// The request's opcode, echoed.
    public var opcode: PMDOpcode
    /// The request's stream, echoed.
    public var stream: PMDStream
    public var status: PMDStatus
    /// Whether the parameters continue in a following response with the same opcode (only
    /// ever set on success); see ``appending(_:)``.
    public var more: Bool
    /// Bytes after `more` (all of them, the continuations' appended).
    public var parameters: [UInt8]

    public init(opcode: PMDOpcode, stream: PMDStream, status: PMDStatus, more: Bool = false, parameters: [UInt8] = []) {
        self.opcode = opcode
        self.stream = stream
        self.status = status
        self.more = more
        self.parameters = parameters
    }

    /// The parameters as settings.
    public func settings() throws(WireError) -> PMDSettings {
        try PMDSettings.decode(parameters)
    }

    /// This response with a continuation's parameters appended (when ``more`` was set): the
    /// continuation must be a successful response to the same opcode, and its own `more`
    /// says whether yet another follows. Anything else is `WireError.Kind.invalidValue`.
    public func appending(_ continuation: PMDControlPointResponse) throws(WireError) -> PMDControlPointResponse {
        let context = "PMD control point continuation"
        guard more else { throw WireError(.invalidValue("no continuation was announced"), at: 0, in: context) }
        guard continuation.opcode == opcode else {
            throw WireError(.invalidValue("continues \(continuation.opcode), not \(opcode)"), at: 1, in: context)
        }
        guard continuation.status.isSuccess else {
            throw WireError(.invalidValue("continuation status \(continuation.status)"), at: 3, in: context)
        }
        var joined = self
        joined.more = continuation.more
        joined.parameters += continuation.parameters
        return joined
    }
}

/// Whatever the PMD control point indicates: a response to a request, or the device's own
/// notice that it stopped streams.
public enum PMDControlPointIndication: Hashable, Sendable {
    /// `F0 …`: the response to a request.
    case response(PMDControlPointResponse)
    /// `01` + type bytes (e.g. `01 01 02`): the device stopped these streams unasked.
    case streamsStopped([PMDStream])
}

extension PMDControlPointIndication: WireDecodable, WireEncodable {
    /// The first byte of an unsolicited stop notice.
    public static let stoppedMarker: UInt8 = 0x01

    /// Decodes an indication. A first byte other than `F0` or `01` is
    /// `WireError.Kind.unknownValue` at byte 0; a response shorter than its four fixed
    /// bytes is truncated.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> PMDControlPointIndication {
        var reader = ByteReader(bytes, context: "PMD control point indication")
        let markerOffset = reader.offset
        switch try reader.readUInt8() {
        case PMDControlPointResponse.marker:
            reader.context = "PMD control point response"
            let opcode = PMDOpcode(try reader.readUInt8())
            let stream = PMDStream(typeByte: try reader.readUInt8())
            let status = PMDStatus(try reader.readUInt8())
            var more = false
            var parameters: [UInt8] = []
            if status.isSuccess, !reader.isAtEnd {
                more = try reader.readUInt8() != 0
                parameters = Array(reader.readRemaining())
            } else if !status.isSuccess {
                // The SDK ignores whatever an error response carries; keep it for inspection.
                if !reader.isAtEnd { _ = try reader.readUInt8() }
                parameters = Array(reader.readRemaining())
            }
            return .response(PMDControlPointResponse(
                opcode: opcode, stream: stream, status: status, more: more, parameters: parameters))
        case Self.stoppedMarker:
            return .streamsStopped(reader.readRemaining().map(PMDStream.init(typeByte:)))
        case let other:
            throw reader.error(.unknownValue(UInt64(other)), at: markerOffset)
        }
    }

    /// The indication's bytes (a response always with its `more` byte).
    public func encode(into writer: inout ByteWriter) {
        switch self {
        case let .response(response):
            writer.write(PMDControlPointResponse.marker)
            writer.write(response.opcode.rawValue)
            writer.write(response.stream.typeByte)
            writer.write(response.status.rawValue)
            writer.write(UInt8(response.more ? 1 : 0))
            writer.write(contentsOf: response.parameters)
        case let .streamsStopped(streams):
            writer.write(Self.stoppedMarker)
            for stream in streams { writer.write(stream.typeByte) }
        }
    }
}
