/// The `Event_Mask` of Set Event Mask (Core Vol 4 Part E 7.3.1): bit *n* enables one event.
/// Command Complete, Command Status and Number Of Completed Packets cannot be masked.
public struct EventMask: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    @inlinable public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let inquiryComplete = EventMask(rawValue: 1 << 0)
    public static let connectionComplete = EventMask(rawValue: 1 << 2)
    /// Disconnection Complete (`0x05`).
    public static let disconnectionComplete = EventMask(rawValue: 1 << 4)
    public static let authenticationComplete = EventMask(rawValue: 1 << 5)
    /// Encryption Change v1 (`0x08`).
    public static let encryptionChange = EventMask(rawValue: 1 << 7)
    public static let readRemoteSupportedFeaturesComplete = EventMask(rawValue: 1 << 10)
    /// Read Remote Version Information Complete (`0x0C`).
    public static let readRemoteVersionInformationComplete = EventMask(rawValue: 1 << 11)
    /// Hardware Error (`0x10`).
    public static let hardwareError = EventMask(rawValue: 1 << 15)
    public static let roleChange = EventMask(rawValue: 1 << 17)
    /// Data Buffer Overflow (`0x1A`).
    public static let dataBufferOverflow = EventMask(rawValue: 1 << 25)
    /// Encryption Key Refresh Complete (`0x30`).
    public static let encryptionKeyRefreshComplete = EventMask(rawValue: 1 << 47)
    /// LE Meta (`0x3E`): gates every LE subevent (see ``LEEventMask``).
    public static let leMeta = EventMask(rawValue: 1 << 61)

    /// The controller's value after Reset (`0x00001FFFFFFFFFFF`).
    public static let specificationDefault = EventMask(rawValue: 0x0000_1FFF_FFFF_FFFF)

    /// What an LE central handles: disconnections, encryption, remote version, hardware
    /// errors, buffer overflow and LE Meta.
    public static let leCentralDefault: EventMask = [
        .disconnectionComplete, .encryptionChange, .readRemoteVersionInformationComplete,
        .hardwareError, .dataBufferOverflow, .encryptionKeyRefreshComplete, .leMeta,
    ]

    static let names: [(UInt64, String)] = [
        (1 << 0, "Inquiry Complete"), (1 << 2, "Connection Complete"),
        (1 << 4, "Disconnection Complete"), (1 << 5, "Authentication Complete"),
        (1 << 7, "Encryption Change"), (1 << 10, "Read Remote Supported Features Complete"),
        (1 << 11, "Read Remote Version Information Complete"), (1 << 15, "Hardware Error"),
        (1 << 17, "Role Change"), (1 << 25, "Data Buffer Overflow"),
        (1 << 47, "Encryption Key Refresh Complete"), (1 << 61, "LE Meta"),
    ]

    /// Names of the set bits, unnamed ones as `bit N`.
    public var description: String { describeHCIMaskBits(rawValue, names: Self.names) }
}

/// The `Event_Mask_Page_2` of Set Event Mask Page 2 (Core Vol 4 Part E 7.3.69).
public struct EventMaskPage2: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    @inlinable public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Authenticated Payload Timeout Expired (`0x57`): an encrypted link saw no
    /// authenticated packet in time (LE Ping).
    public static let authenticatedPayloadTimeoutExpired = EventMaskPage2(rawValue: 1 << 23)
    /// Encryption Change v2 (`0x59`), which adds the encryption key size.
    public static let encryptionChangeV2 = EventMaskPage2(rawValue: 1 << 25)

    /// For an LE central: the authenticated payload timeout.
    public static let leCentralDefault: EventMaskPage2 = [.authenticatedPayloadTimeoutExpired]

    static let names: [(UInt64, String)] = [
        (1 << 23, "Authenticated Payload Timeout Expired"), (1 << 25, "Encryption Change v2"),
    ]

    public var description: String { describeHCIMaskBits(rawValue, names: Self.names) }
}

/// The `LE_Event_Mask` of LE Set Event Mask (Core Vol 4 Part E 7.8.1): bit *n* enables the LE
/// Meta subevent with code *n* + 1. Only effective while ``EventMask/leMeta`` is set.
public struct LEEventMask: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    @inlinable public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// The bit for the LE Meta subevent `code` (1–64).
    @inlinable
    public init(subevent code: UInt8) {
        self.init(rawValue: code >= 1 && code <= 64 ? 1 << UInt64(code - 1) : 0)
    }

    /// LE Connection Complete (`0x01`).
    public static let connectionComplete = LEEventMask(subevent: 0x01)
    /// LE Advertising Report (`0x02`).
    public static let advertisingReport = LEEventMask(subevent: 0x02)
    /// LE Connection Update Complete (`0x03`).
    public static let connectionUpdateComplete = LEEventMask(subevent: 0x03)
    /// LE Read Remote Features Complete (`0x04`).
    public static let readRemoteFeaturesComplete = LEEventMask(subevent: 0x04)
    /// LE Long Term Key Request (`0x05`), peripheral role only.
    public static let longTermKeyRequest = LEEventMask(subevent: 0x05)
    /// LE Remote Connection Parameter Request (`0x06`).
    public static let remoteConnectionParameterRequest = LEEventMask(subevent: 0x06)
    /// LE Data Length Change (`0x07`).
    public static let dataLengthChange = LEEventMask(subevent: 0x07)
    /// LE Enhanced Connection Complete v1 (`0x0A`); replaces Connection Complete when set.
    public static let enhancedConnectionComplete = LEEventMask(subevent: 0x0A)
    /// LE Directed Advertising Report (`0x0B`).
    public static let directedAdvertisingReport = LEEventMask(subevent: 0x0B)
    /// LE PHY Update Complete (`0x0C`).
    public static let phyUpdateComplete = LEEventMask(subevent: 0x0C)
    /// LE Extended Advertising Report (`0x0D`).
    public static let extendedAdvertisingReport = LEEventMask(subevent: 0x0D)
    /// LE Scan Timeout (`0x11`): an extended scan with a duration ended.
    public static let scanTimeout = LEEventMask(subevent: 0x11)
    /// LE Advertising Set Terminated (`0x12`).
    public static let advertisingSetTerminated = LEEventMask(subevent: 0x12)
    /// LE Channel Selection Algorithm (`0x14`).
    public static let channelSelectionAlgorithm = LEEventMask(subevent: 0x14)
    /// LE Enhanced Connection Complete v2 (`0x29`, bit 40); replaces v1 when set.
    public static let enhancedConnectionCompleteV2 = LEEventMask(subevent: 0x29)

    /// The controller's value after Reset (`0x1F`: subevents 0x01–0x05).
    public static let specificationDefault = LEEventMask(rawValue: 0x1F)

    /// What an LE central handles: connections (enhanced v1, which the controller sends
    /// instead of Connection Complete), legacy and extended advertising reports, updates,
    /// remote features, parameter requests, data length, PHY updates and scan timeouts.
    /// Enhanced Connection Complete v2 is left out so v1-only hosts see the form they parse.
    public static let leCentralDefault: LEEventMask = [
        .connectionComplete, .advertisingReport, .connectionUpdateComplete, .readRemoteFeaturesComplete,
        .remoteConnectionParameterRequest, .dataLengthChange, .enhancedConnectionComplete,
        .phyUpdateComplete, .extendedAdvertisingReport, .scanTimeout,
    ]

    /// What a host in both roles handles: ``leCentralDefault`` and, for the peripheral role,
    /// LE Advertising Set Terminated (an extended advertising set stopped, e.g. on a connection)
    /// and LE Long Term Key Request (a central encrypts the link: the host gives the key).
    public static let leHostDefault: LEEventMask = leCentralDefault.union([.advertisingSetTerminated, .longTermKeyRequest])

    static let names: [(UInt64, String)] = [
        (1 << 0, "Connection Complete"), (1 << 1, "Advertising Report"),
        (1 << 2, "Connection Update Complete"), (1 << 3, "Read Remote Features Complete"),
        (1 << 4, "Long Term Key Request"), (1 << 5, "Remote Connection Parameter Request"),
        (1 << 6, "Data Length Change"), (1 << 9, "Enhanced Connection Complete"),
        (1 << 10, "Directed Advertising Report"), (1 << 11, "PHY Update Complete"),
        (1 << 12, "Extended Advertising Report"), (1 << 16, "Scan Timeout"),
        (1 << 17, "Advertising Set Terminated"), (1 << 19, "Channel Selection Algorithm"),
        (1 << 40, "Enhanced Connection Complete v2"),
    ]

    public var description: String { describeHCIMaskBits(rawValue, names: Self.names) }
}

/// `[A, B, bit 9]` for a bit set with names for some bits.
func describeHCIMaskBits(_ value: UInt64, names: [(UInt64, String)]) -> String {
    var parts: [String] = []
    var rest = value
    for (bit, name) in names where value & bit != 0 {
        parts.append(name)
        rest &= ~bit
    }
    while rest != 0 {
        let index = rest.trailingZeroBitCount
        parts.append("bit \(index)")
        rest &= rest &- 1
    }
    return "[" + parts.joined(separator: ", ") + "]"
}
