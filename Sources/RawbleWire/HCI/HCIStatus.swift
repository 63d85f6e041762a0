/// An HCI status / error code (Core Vol 1 Part F), as carried in Command Complete, Command
/// Status, Disconnection Complete reasons and connection events. Unknown codes keep their value.
public struct HCIStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible, Error {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    @inlinable public var isSuccess: Bool { rawValue == 0 }

    /// The specification's name, e.g. `"Command Disallowed"`.
    public var name: String {
        let index = Int(rawValue)
        return index < Self.names.count ? Self.names[index] : "Unknown Error"
    }

    /// `Command Disallowed (0x0C)`.
    public var description: String { "\(name) (0x\(hex(rawValue)))" }

    public static let success = HCIStatus(0x00)
    public static let unknownCommand = HCIStatus(0x01)
    public static let unknownConnectionIdentifier = HCIStatus(0x02)
    public static let hardwareFailure = HCIStatus(0x03)
    public static let pageTimeout = HCIStatus(0x04)
    public static let authenticationFailure = HCIStatus(0x05)
    /// The peer has no key for the link (LE: it rejected the LTK a central encrypted with).
    public static let pinOrKeyMissing = HCIStatus(0x06)
    /// The controller has no memory left for what was asked (e.g. one more link).
    public static let memoryCapacityExceeded = HCIStatus(0x07)
    public static let connectionTimeout = HCIStatus(0x08)
    /// The controller already holds as many links as it can.
    public static let connectionLimitExceeded = HCIStatus(0x09)
    public static let commandDisallowed = HCIStatus(0x0C)
    /// The controller refused a connection for lack of resources (the Marvell 88W8897 answers
    /// it to a third LE Create Connection).
    public static let connectionRejectedDueToLimitedResources = HCIStatus(0x0D)
    public static let invalidParameters = HCIStatus(0x12)
    public static let remoteUserTerminatedConnection = HCIStatus(0x13)
    public static let remoteDeviceTerminatedLowResources = HCIStatus(0x14)
    public static let remoteDeviceTerminatedPowerOff = HCIStatus(0x15)
    public static let connectionTerminatedByLocalHost = HCIStatus(0x16)
    public static let unsupportedRemoteFeature = HCIStatus(0x1A)
    public static let unspecifiedError = HCIStatus(0x1F)
    public static let lmpResponseTimeout = HCIStatus(0x22)
    public static let instantPassed = HCIStatus(0x28)
    public static let unacceptableConnectionParameters = HCIStatus(0x3B)
    /// An advertising set's duration ran out, or directed advertising ended unanswered.
    public static let advertisingTimeout = HCIStatus(0x3C)
    /// The peers' keys differ: a packet failed its integrity check, and the link ended.
    public static let connectionTerminatedDueToMICFailure = HCIStatus(0x3D)
    public static let connectionFailedToBeEstablished = HCIStatus(0x3E)
    public static let unknownAdvertisingIdentifier = HCIStatus(0x42)
    /// An advertising set sent its maximum number of events.
    public static let limitReached = HCIStatus(0x43)

    static let names: [String] = [
        "Success", "Unknown HCI Command", "Unknown Connection Identifier", "Hardware Failure",
        "Page Timeout", "Authentication Failure", "PIN or Key Missing", "Memory Capacity Exceeded",
        "Connection Timeout", "Connection Limit Exceeded",
        "Synchronous Connection Limit To A Device Exceeded", "Connection Already Exists",
        "Command Disallowed", "Connection Rejected due to Limited Resources",
        "Connection Rejected Due To Security Reasons",
        "Connection Rejected due to Unacceptable BD_ADDR", "Connection Accept Timeout Exceeded",
        "Unsupported Feature or Parameter Value", "Invalid HCI Command Parameters",
        "Remote User Terminated Connection",
        "Remote Device Terminated Connection due to Low Resources",
        "Remote Device Terminated Connection due to Power Off",
        "Connection Terminated By Local Host", "Repeated Attempts", "Pairing Not Allowed",
        "Unknown LMP PDU", "Unsupported Remote Feature", "SCO Offset Rejected",
        "SCO Interval Rejected", "SCO Air Mode Rejected", "Invalid LMP Parameters / Invalid LL Parameters",
        "Unspecified Error", "Unsupported LMP Parameter Value / Unsupported LL Parameter Value",
        "Role Change Not Allowed", "LMP Response Timeout / LL Response Timeout",
        "LMP Error Transaction Collision / LL Procedure Collision", "LMP PDU Not Allowed",
        "Encryption Mode Not Acceptable", "Link Key cannot be Changed", "Requested QoS Not Supported",
        "Instant Passed", "Pairing With Unit Key Not Supported", "Different Transaction Collision",
        "Reserved for future use (0x2B)", "QoS Unacceptable Parameter", "QoS Rejected",
        "Channel Classification Not Supported", "Insufficient Security", "Parameter Out Of Mandatory Range",
        "Reserved for future use (0x31)", "Role Switch Pending", "Reserved for future use (0x33)",
        "Reserved Slot Violation", "Role Switch Failed", "Extended Inquiry Response Too Large",
        "Secure Simple Pairing Not Supported By Host", "Host Busy - Pairing",
        "Connection Rejected due to No Suitable Channel Found", "Controller Busy",
        "Unacceptable Connection Parameters", "Advertising Timeout", "Connection Terminated due to MIC Failure",
        "Connection Failed to be Established / Synchronization Timeout", "Previously Used",
        "Coarse Clock Adjustment Rejected but Will Try to Adjust Using Clock Dragging",
        "Type0 Submap Not Defined", "Unknown Advertising Identifier", "Limit Reached",
        "Operation Cancelled by Host", "Packet Too Long", "Too Late", "Too Early",
        "Insufficient Channels",
    ]
}
