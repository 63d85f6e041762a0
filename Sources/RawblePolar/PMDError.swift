import RawbleGATT
import RawbleGATTCore
import RawblePolarCore
import RawbleWire

/// Why the Polar Measurement Data client could not do what was asked, or why its stream ended.
/// One line each, for a person, naming what to do where something can be done.
public enum PMDError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Discovery found no Polar Measurement Data service (`FB005C80-…`): not a Polar device, or
    /// an H10 with firmware older than 3.0.35 (which has no PMD service).
    case noMeasurementService
    /// The PMD service lacks its control point (`FB005C81-…`) or data (`FB005C82-…`)
    /// characteristic, or one of them cannot indicate/notify.
    case missingCharacteristic(String)
    /// The device refused a CCCD write that turns on control-point indications or data
    /// notifications.
    case subscriptionRefused(ATTError)
    /// The device does not offer this measurement (its feature bits, read from the control
    /// point, lack it).
    case notOffered(PMDMeasurementType, offered: PMDFeatures)
    /// The device answered a request with an error status. `mtu` is the link's ATT MTU when
    /// the request was made (status 10, Invalid MTU, means it is below what the device needs).
    case refused(PMDOpcode, PMDStream, PMDStatus, mtu: UInt16)
    /// No response indication to a request within `seconds`.
    case noResponse(PMDOpcode, seconds: Double)
    /// A response indication for another request than the one waiting (a device or client out
    /// of step).
    case unexpectedResponse(expected: PMDOpcode, received: PMDOpcode)
    /// A control-point indication that does not decode, or a response whose continuation does
    /// not fit it.
    case malformedResponse(WireError)
    /// The device stopped these streams itself (the control point's unsolicited `01` notice),
    /// and no stream is left running.
    case stoppedByDevice([PMDStream])
    /// A started stream sent no frame for `seconds`.
    case silent([PMDMeasurementType], seconds: Double)
    /// The client was closed (``PMDClient/close()``) or the request was cancelled.
    case closed
    /// Anything else from the GATT client: the link ended, a timeout, an invalid response …
    case gatt(GATTError)

    /// The ATT MTU Polar asks for (its specification: "ATT MTU ≥ 232"); an H10 answers a start
    /// on a smaller one with status 10 (Invalid MTU).
    public static let minimumMTU: UInt16 = 232

    public var description: String {
        switch self {
        case .noMeasurementService:
            "the device has no Polar Measurement Data service (FB005C80-…): it is not a Polar sensor with raw data, or its firmware is older than 3.0.35 (update it with Polar Flow)"
        case .missingCharacteristic(let what):
            "the device's Polar Measurement Data service is incomplete: \(what)"
        case .subscriptionRefused(let error):
            "the device refused to turn on Polar Measurement Data indications or notifications: \(error)"
        case let .notOffered(type, offered):
            "the device does not offer \(type) (it offers: \(offered.types.isEmpty ? "nothing" : offered.description))"
        case let .refused(opcode, stream, status, mtu) where status == .invalidMTU:
            "the device refused \(opcode) \(stream): status 10 (invalid MTU): the link's ATT MTU is \(mtu), Polar needs at least \(Self.minimumMTU); reconnect (the MTU is exchanged again) or use a controller that allows a larger MTU"
        case let .refused(opcode, stream, status, _) where status == .inCharger:
            "the device refused \(opcode) \(stream): it is in its charger"
        case let .refused(opcode, stream, status, _):
            "the device refused \(opcode) \(stream): \(status)"
        case let .noResponse(opcode, seconds):
            "the device did not answer \(opcode) on the PMD control point within \(Self.format(seconds)) s; reconnect and try again"
        case let .unexpectedResponse(expected, received):
            "the device answered \(received) on the PMD control point while \(expected) was waiting"
        case .malformedResponse(let error):
            "a PMD control point indication that does not decode: \(error)"
        case .stoppedByDevice(let streams):
            "the device stopped \(streams.map(\.description).joined(separator: " and ")) itself"
        case let .silent(types, seconds):
            "no \(types.map(\.description).joined(separator: " or ")) data for \(Self.format(seconds)) s after it started: is the strap worn and its contact moist?"
        case .closed:
            "the PMD client was closed"
        case .gatt(let error):
            "\(error)"
        }
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? "\(Int(seconds))" : "\(seconds)"
    }

    /// `error` as a PMDError: itself when it is one, `.gatt` for a GATTError, else the ATT
    /// bearer's end (what the PMD client's calls and its event sequence throw is one of these).
    public init(_ error: any Error) {
        switch error {
        case let error as PMDError: self = error
        case let error as GATTError: self = .gatt(error)
        default: self = .gatt(.bearer(.disconnected(reason: "\(error)")))
        }
    }
}
