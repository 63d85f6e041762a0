import RawbleGATT
import RawbleGATTCore
import RawbleWire

/// Why the Heart Rate profile could not do what was asked. One line each, for a person.
public enum HeartRateError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Discovery found no Heart Rate service (0x180D) on the device.
    case noHeartRateService
    /// The Heart Rate service has no Heart Rate Measurement characteristic (0x2A37).
    case noMeasurementCharacteristic
    /// The device refused the write that turns measurement notifications on (the Heart Rate
    /// Measurement's CCCD), e.g. 0xFD "CCCD Improperly Configured".
    case subscriptionRefused(ATTError)
    /// The Heart Rate service has no Heart Rate Control Point (0x2A39): energy cannot be reset.
    case controlPointMissing
    /// The device refused a Heart Rate Control Point write, e.g. 0x80 "Control Point Not
    /// Supported" (the device does not measure energy expended).
    case controlPoint(ATTError)
    /// Anything else from the GATT client: the link ended, a timeout, an invalid response …
    case gatt(GATTError)

    public var description: String {
        switch self {
        case .noHeartRateService:
            "the device has no Heart Rate service (0x180D)"
        case .noMeasurementCharacteristic:
            "the device's Heart Rate service has no Heart Rate Measurement characteristic (0x2A37)"
        case .subscriptionRefused(let error) where error.code == .cccdImproperlyConfigured:
            "the device refused to send measurements: ATT error 0xFD (Client Characteristic Configuration Descriptor Improperly Configured) on handle 0x\(Hex.padded(error.handle, digits: 4)); reconnect, or pair/bond if the strap requires it, and try again"
        case .subscriptionRefused(let error):
            "the device refused to send measurements: \(error); \(Self.advice(for: error.code))"
        case .controlPointMissing:
            "the device has no Heart Rate Control Point (0x2A39): it cannot reset energy expended"
        case .controlPoint(let error) where error.code.rawValue == HeartRateControlPoint.valueNotSupportedError:
            "the device refused the Heart Rate Control Point write: ATT error 0x80 (Heart Rate Control Point Not Supported): it does not support resetting energy expended"
        case .controlPoint(let error):
            "the device refused the Heart Rate Control Point write: \(error)"
        case .gatt(let error):
            "\(error)"
        }
    }

    /// What a person can do about a refused subscription.
    private static func advice(for code: ATTErrorCode) -> String {
        switch code {
        case .insufficientAuthentication, .insufficientEncryption, .insufficientAuthorization, .encryptionKeySizeTooShort:
            "the strap wants a paired (encrypted) link"
        case .writeNotPermitted:
            "the strap does not let a client turn notifications on"
        default:
            "reconnect and try again"
        }
    }

    /// `error` as a HeartRateError: itself when it is one, `.gatt` for a GATTError, else the
    /// ATT bearer's end.
    init(_ error: any Error) {
        switch error {
        case let error as HeartRateError: self = error
        case let error as GATTError: self = .gatt(error)
        default: self = .gatt(.bearer(.disconnected(reason: "\(error)")))
        }
    }
}
