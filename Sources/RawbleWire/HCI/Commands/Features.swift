/// The LE features a link layer supports (Core Vol 6 Part B 4.6): 8 bytes, bit *n* of the
/// little-endian u64 is feature bit *n*. Returned by LE Read Local Supported Features and
/// carried in LE Read Remote Features Complete.
public struct LEFeatures: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    @inlinable public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let encryption = LEFeatures(rawValue: 1 << 0)
    public static let connectionParametersRequest = LEFeatures(rawValue: 1 << 1)
    public static let extendedRejectIndication = LEFeatures(rawValue: 1 << 2)
    public static let peripheralInitiatedFeaturesExchange = LEFeatures(rawValue: 1 << 3)
    public static let ping = LEFeatures(rawValue: 1 << 4)
    public static let dataPacketLengthExtension = LEFeatures(rawValue: 1 << 5)
    public static let llPrivacy = LEFeatures(rawValue: 1 << 6)
    public static let extendedScannerFilterPolicies = LEFeatures(rawValue: 1 << 7)
    public static let le2MPHY = LEFeatures(rawValue: 1 << 8)
    public static let stableModulationIndexTransmitter = LEFeatures(rawValue: 1 << 9)
    public static let stableModulationIndexReceiver = LEFeatures(rawValue: 1 << 10)
    public static let leCodedPHY = LEFeatures(rawValue: 1 << 11)
    /// LE Extended Advertising: the controller has the extended scan/initiate commands.
    public static let extendedAdvertising = LEFeatures(rawValue: 1 << 12)
    public static let periodicAdvertising = LEFeatures(rawValue: 1 << 13)
    public static let channelSelectionAlgorithm2 = LEFeatures(rawValue: 1 << 14)
    public static let powerClass1 = LEFeatures(rawValue: 1 << 15)
    public static let minimumNumberOfUsedChannelsProcedure = LEFeatures(rawValue: 1 << 16)
    public static let connectionCTERequest = LEFeatures(rawValue: 1 << 17)
    public static let connectionCTEResponse = LEFeatures(rawValue: 1 << 18)
    public static let connectionlessCTETransmitter = LEFeatures(rawValue: 1 << 19)
    public static let connectionlessCTEReceiver = LEFeatures(rawValue: 1 << 20)
    public static let antennaSwitchingDuringCTETransmission = LEFeatures(rawValue: 1 << 21)
    public static let antennaSwitchingDuringCTEReception = LEFeatures(rawValue: 1 << 22)
    public static let receivingConstantToneExtensions = LEFeatures(rawValue: 1 << 23)
    public static let periodicAdvertisingSyncTransferSender = LEFeatures(rawValue: 1 << 24)
    public static let periodicAdvertisingSyncTransferRecipient = LEFeatures(rawValue: 1 << 25)
    public static let sleepClockAccuracyUpdates = LEFeatures(rawValue: 1 << 26)
    public static let remotePublicKeyValidation = LEFeatures(rawValue: 1 << 27)
    public static let connectedIsochronousStreamCentral = LEFeatures(rawValue: 1 << 28)
    public static let connectedIsochronousStreamPeripheral = LEFeatures(rawValue: 1 << 29)
    public static let isochronousBroadcaster = LEFeatures(rawValue: 1 << 30)
    public static let synchronizedReceiver = LEFeatures(rawValue: 1 << 31)
    public static let connectedIsochronousStreamHostSupport = LEFeatures(rawValue: 1 << 32)
    public static let powerControlRequest = LEFeatures(rawValue: 1 << 33)
    public static let powerControlRequest2 = LEFeatures(rawValue: 1 << 34)
    public static let pathLossMonitoring = LEFeatures(rawValue: 1 << 35)
    public static let periodicAdvertisingADISupport = LEFeatures(rawValue: 1 << 36)
    public static let connectionSubrating = LEFeatures(rawValue: 1 << 37)
    public static let connectionSubratingHostSupport = LEFeatures(rawValue: 1 << 38)
    public static let channelClassification = LEFeatures(rawValue: 1 << 39)

    /// Specification names, indexed by bit number.
    static let names: [String] = [
        "LE Encryption", "Connection Parameters Request Procedure", "Extended Reject Indication",
        "Peripheral-initiated Features Exchange", "LE Ping", "LE Data Packet Length Extension",
        "LL Privacy", "Extended Scanner Filter Policies", "LE 2M PHY",
        "Stable Modulation Index - Transmitter", "Stable Modulation Index - Receiver", "LE Coded PHY",
        "LE Extended Advertising", "LE Periodic Advertising", "Channel Selection Algorithm #2",
        "LE Power Class 1", "Minimum Number of Used Channels Procedure", "Connection CTE Request",
        "Connection CTE Response", "Connectionless CTE Transmitter", "Connectionless CTE Receiver",
        "Antenna Switching During CTE Transmission (AoD)", "Antenna Switching During CTE Reception (AoA)",
        "Receiving Constant Tone Extensions", "Periodic Advertising Sync Transfer - Sender",
        "Periodic Advertising Sync Transfer - Recipient", "Sleep Clock Accuracy Updates",
        "Remote Public Key Validation", "Connected Isochronous Stream - Central",
        "Connected Isochronous Stream - Peripheral", "Isochronous Broadcaster", "Synchronized Receiver",
        "Connected Isochronous Stream (Host Support)", "LE Power Control Request",
        "LE Power Control Request (bit 34)", "LE Path Loss Monitoring", "Periodic Advertising ADI support",
        "Connection Subrating", "Connection Subrating (Host Support)", "Channel Classification",
    ]

    /// Names of the supported features, in bit order; unnamed bits as `bit N`.
    public var names: [String] {
        var result: [String] = []
        var rest = rawValue
        while rest != 0 {
            let index = rest.trailingZeroBitCount
            result.append(index < Self.names.count ? Self.names[index] : "bit \(index)")
            rest &= rest &- 1
        }
        return result
    }

    /// `[LE Encryption, LE Extended Advertising, ...]`.
    public var description: String { "[" + names.joined(separator: ", ") + "]" }
}

/// LMP features page 0 (Core Vol 2 Part C 3.3), returned by Read Local Supported Features:
/// 8 bytes, bit *n* of the little-endian u64 is feature bit *n*. Only the bits an LE host
/// looks at are named.
public struct LMPFeatures: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    @inlinable public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let encryption = LMPFeatures(rawValue: 1 << 2)
    /// The controller does not support BR/EDR (an LE-only controller).
    public static let brEDRNotSupported = LMPFeatures(rawValue: 1 << 37)
    /// LE Supported (Controller): the controller can do Bluetooth Low Energy.
    public static let leSupported = LMPFeatures(rawValue: 1 << 38)
    public static let extendedInquiryResponse = LMPFeatures(rawValue: 1 << 48)
    public static let simultaneousLEAndBREDR = LMPFeatures(rawValue: 1 << 49)
    public static let secureSimplePairing = LMPFeatures(rawValue: 1 << 51)
    /// Extended features pages exist (Read Local Extended Features).
    public static let extendedFeatures = LMPFeatures(rawValue: 1 << 63)

    static let names: [(UInt64, String)] = [
        (1 << 2, "Encryption"), (1 << 37, "BR/EDR Not Supported"), (1 << 38, "LE Supported (Controller)"),
        (1 << 48, "Extended Inquiry Response"),
        (1 << 49, "Simultaneous LE and BR/EDR to Same Device Capable (Controller)"),
        (1 << 51, "Secure Simple Pairing (Controller)"), (1 << 63, "Extended features"),
    ]

    public var description: String { describeHCIMaskBits(rawValue, names: Self.names) }
}
