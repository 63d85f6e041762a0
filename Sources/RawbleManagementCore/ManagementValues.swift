import RawbleWire

/// The controller index of a management packet: the `N` of `hciN` for a command or event about
/// one controller, or ``none`` (`0xFFFF`, `<non-controller>` in `doc/mgmt-api.txt`) for the
/// ones about the whole management interface (Read Version, Read Index List, ...).
///
/// Indexes are plain `UInt16` values throughout the management types: this namespace only
/// names the special value and prints an index.
public enum ManagementIndex {
    /// `<non-controller>`: the packet is about no controller (`MGMT_INDEX_NONE`).
    public static let none: UInt16 = 0xFFFF

    /// `hci0` for a controller index, `non-controller` for ``none``.
    public static func description(of index: UInt16) -> String {
        index == none ? "non-controller" : "hci\(index)"
    }
}

/// The status of a management command, carried by Command Complete and Command Status (and by
/// Connect Failed and Authentication Failed): `doc/mgmt-api.txt`, "Error Codes". Codes a later
/// kernel may add keep their value.
public struct ManagementStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible, Error {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    @inlinable public var isSuccess: Bool { rawValue == 0 }

    public static let success = Self(0x00)
    public static let unknownCommand = Self(0x01)
    public static let notConnected = Self(0x02)
    public static let failed = Self(0x03)
    public static let connectFailed = Self(0x04)
    public static let authenticationFailed = Self(0x05)
    public static let notPaired = Self(0x06)
    public static let noResources = Self(0x07)
    public static let timeout = Self(0x08)
    public static let alreadyConnected = Self(0x09)
    public static let busy = Self(0x0A)
    public static let rejected = Self(0x0B)
    public static let notSupported = Self(0x0C)
    public static let invalidParameters = Self(0x0D)
    public static let disconnected = Self(0x0E)
    public static let notPowered = Self(0x0F)
    public static let cancelled = Self(0x10)
    /// The command named a controller index the kernel does not have (or named one where
    /// only ``ManagementIndex/none`` is allowed).
    public static let invalidIndex = Self(0x11)
    /// The controller is blocked by rfkill.
    public static let rfKilled = Self(0x12)
    public static let alreadyPaired = Self(0x13)
    /// The socket lacks the privilege the command needs (CAP_NET_ADMIN for every command that
    /// changes something).
    public static let permissionDenied = Self(0x14)

    /// The documentation's name, e.g. `"Not Powered"`; `"Unknown Status"` for a code it does
    /// not define.
    public var name: String {
        let index = Int(rawValue)
        return index < Self.names.count ? Self.names[index] : "Unknown Status"
    }

    /// `Not Powered (0x0F)`.
    public var description: String { "\(name) (0x\(hex(rawValue)))" }

    static let names: [String] = [
        "Success", "Unknown Command", "Not Connected", "Failed", "Connect Failed",
        "Authentication Failed", "Not Paired", "No Resources", "Timeout", "Already Connected",
        "Busy", "Rejected", "Not Supported", "Invalid Parameters", "Disconnected", "Not Powered",
        "Cancelled", "Invalid Index", "RFKilled", "Already Paired", "Permission Denied",
    ]
}

/// A controller's settings, as Read Controller Information's `Supported_Settings` and
/// `Current_Settings`, the New Settings event and the answer to every Set command give them
/// (`doc/mgmt-api.txt`, Read Controller Information). Bits a later kernel defines are kept.
public struct ManagementSettings: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let powered = Self(rawValue: 1 << 0)
    public static let connectable = Self(rawValue: 1 << 1)
    public static let fastConnectable = Self(rawValue: 1 << 2)
    public static let discoverable = Self(rawValue: 1 << 3)
    public static let bondable = Self(rawValue: 1 << 4)
    /// Link Level Security (BR/EDR security mode 3).
    public static let linkLevelSecurity = Self(rawValue: 1 << 5)
    public static let secureSimplePairing = Self(rawValue: 1 << 6)
    /// Basic Rate / Enhanced Data Rate (classic Bluetooth).
    public static let basicRateEDR = Self(rawValue: 1 << 7)
    public static let highSpeed = Self(rawValue: 1 << 8)
    public static let lowEnergy = Self(rawValue: 1 << 9)
    public static let advertising = Self(rawValue: 1 << 10)
    public static let secureConnections = Self(rawValue: 1 << 11)
    public static let debugKeys = Self(rawValue: 1 << 12)
    public static let privacy = Self(rawValue: 1 << 13)
    public static let controllerConfiguration = Self(rawValue: 1 << 14)
    public static let staticAddress = Self(rawValue: 1 << 15)
    public static let phyConfiguration = Self(rawValue: 1 << 16)
    public static let widebandSpeech = Self(rawValue: 1 << 17)
    /// Connected Isochronous Stream, central.
    public static let cisCentral = Self(rawValue: 1 << 18)
    /// Connected Isochronous Stream, peripheral.
    public static let cisPeripheral = Self(rawValue: 1 << 19)
    public static let isoBroadcaster = Self(rawValue: 1 << 20)
    /// Synchronized Receiver (broadcast isochronous streams).
    public static let syncReceiver = Self(rawValue: 1 << 21)
    /// Address resolution in the controller (LL Privacy).
    public static let llPrivacy = Self(rawValue: 1 << 22)
    /// Periodic Advertising Sync Transfer, sender.
    public static let pastSender = Self(rawValue: 1 << 23)
    /// Periodic Advertising Sync Transfer, receiver.
    public static let pastReceiver = Self(rawValue: 1 << 24)
    public static let shorterConnectionInterval = Self(rawValue: 1 << 25)

    /// Names of the set bits in bit order, undefined bits as `bit N`.
    public var names: [String] { managementBitNames(UInt64(rawValue), Self.names) }

    /// `[Powered, Bondable, Low Energy]`.
    public var description: String { "[" + names.joined(separator: ", ") + "]" }

    static let names: [String] = [
        "Powered", "Connectable", "Fast Connectable", "Discoverable", "Bondable",
        "Link Level Security", "Secure Simple Pairing", "BR/EDR", "High Speed", "Low Energy",
        "Advertising", "Secure Connections", "Debug Keys", "Privacy", "Controller Configuration",
        "Static Address", "PHY Configuration", "Wideband Speech", "CIS Central", "CIS Peripheral",
        "ISO Broadcaster", "Synchronized Receiver", "LL Privacy", "PAST Sender", "PAST Receiver",
        "Shorter Connection Interval",
    ]
}

/// Which transports discovery covers: the `Address_Type` bit field of Start Discovery, Stop
/// Discovery, Start Service Discovery, Start Limited Discovery and the Discovering event.
/// Not to be confused with ``ManagementAddressType``, the type of one address.
public struct ManagementAddressTypes: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let bredr = Self(rawValue: 1 << 0)
    public static let lePublic = Self(rawValue: 1 << 1)
    public static let leRandom = Self(rawValue: 1 << 2)
    /// LE devices of both address types (`0x06`): what an LE central discovers.
    public static let le: Self = [.lePublic, .leRandom]

    /// Names of the set bits in bit order, undefined bits as `bit N`.
    public var names: [String] { managementBitNames(UInt64(rawValue), ["BR/EDR", "LE Public", "LE Random"]) }

    /// `[LE Public, LE Random]`.
    public var description: String { "[" + names.joined(separator: ", ") + "]" }
}

/// The type of one device address in management commands and events (`Address_Type`):
/// BR/EDR, LE public or LE random. Values a later kernel may add keep their value.
///
/// The numbering differs from HCI's `LEAddressType` (there `0` is LE public):
/// ``leAddressType`` and ``init(_:)-(LEAddressType)`` convert between the two.
public struct ManagementAddressType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let bredr = Self(0x00)
    public static let lePublic = Self(0x01)
    public static let leRandom = Self(0x02)

    /// The management type of an HCI LE address type: ``lePublic`` for the public kinds,
    /// ``leRandom`` for the random ones, `nil` for anonymous and unknown types.
    public init?(_ type: LEAddressType) {
        switch type.isPublic {
        case true?: self = .lePublic
        case false?: self = .leRandom
        case nil: return nil
        }
    }

    /// The HCI LE address type: `.public` or `.random`; `nil` for BR/EDR and unknown values.
    public var leAddressType: LEAddressType? {
        switch self {
        case .lePublic: .public
        case .leRandom: .random
        default: nil
        }
    }

    /// Whether this is one of the LE types.
    public var isLE: Bool { self == .lePublic || self == .leRandom }

    /// `"LE Random"`; `"Unknown"` for a value the documentation does not define.
    public var name: String {
        switch rawValue {
        case 0x00: "BR/EDR"
        case 0x01: "LE Public"
        case 0x02: "LE Random"
        default: "Unknown"
        }
    }

    /// `LE Random (0x02)`.
    public var description: String { "\(name) (0x\(hex(rawValue)))" }
}

/// A BR/EDR Class of Device (Assigned Numbers, "Class of Device"): 24 bits, carried as 3
/// little-endian bytes by Read Controller Information and Class Of Device Changed. Bits above
/// the 24th are dropped at initialization, so every value encodes to exactly what it holds.
public struct ClassOfDevice: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue & 0xFF_FFFF }

    /// Major Service Classes (bits 13–23), shifted down.
    public var majorServiceClasses: UInt16 { UInt16(truncatingIfNeeded: rawValue >> 13) }
    /// Major Device Class (bits 8–12), e.g. `0x01` Computer, `0x02` Phone.
    public var majorDeviceClass: UInt8 { UInt8(truncatingIfNeeded: rawValue >> 8) & 0x1F }
    /// Minor Device Class (bits 2–7), shifted down; its meaning depends on the major class.
    public var minorDeviceClass: UInt8 { UInt8(truncatingIfNeeded: rawValue >> 2) & 0x3F }

    /// `0x1C010C`.
    public var description: String { "0x" + Hex.padded(rawValue, digits: 6) }
}

/// The `Flags` of a Device Found event (`doc/mgmt-api.txt`, Device Found). Undefined bits are kept.
public struct ManagementDeviceFoundFlags: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The kernel asks whether user space knows the device's name (answer with Confirm Name).
    public static let confirmName = Self(rawValue: 1 << 0)
    /// Pairing with this device will likely use legacy (PIN) pairing.
    public static let legacyPairing = Self(rawValue: 1 << 1)
    /// The device accepts no connection (e.g. an LE broadcaster).
    public static let notConnectable = Self(rawValue: 1 << 2)
    /// Name resolution for this device failed.
    public static let nameRequestFailed = Self(rawValue: 1 << 4)
    /// The event's data comes from a scan response.
    public static let scanResponse = Self(rawValue: 1 << 5)

    /// Names of the set bits in bit order, undefined bits as `bit N`.
    public var names: [String] {
        managementBitNames(UInt64(rawValue), ["Confirm Name", "Legacy Pairing", "Not Connectable", "bit 3",
                                              "Name Request Failed", "Scan Response"])
    }

    /// `[Not Connectable, Scan Response]`.
    public var description: String { "[" + names.joined(separator: ", ") + "]" }
}

/// The `Flags` of a Device Connected event (`doc/mgmt-api.txt`, Device Connected). Undefined
/// bits are kept.
public struct ManagementConnectionFlags: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Pairing with this device will likely use legacy (PIN) pairing.
    public static let legacyPairing = Self(rawValue: 1 << 1)
    /// This side initiated the connection (it is the central of an LE link).
    public static let initiatedConnection = Self(rawValue: 1 << 3)

    /// Names of the set bits in bit order, undefined bits as `bit N`.
    public var names: [String] {
        managementBitNames(UInt64(rawValue), ["bit 0", "Legacy Pairing", "bit 2", "Initiated Connection"])
    }

    /// `[Initiated Connection]`.
    public var description: String { "[" + names.joined(separator: ", ") + "]" }
}

/// The `Reason` of a Device Disconnected event (`doc/mgmt-api.txt`, Device Disconnected): the
/// kernel's summary, not the HCI reason code.
public enum ManagementDisconnectionReason {
    public static let unspecified: UInt8 = 0x00
    public static let connectionTimeout: UInt8 = 0x01
    public static let localHost: UInt8 = 0x02
    public static let remoteHost: UInt8 = 0x03
    public static let authenticationFailure: UInt8 = 0x04
    public static let localHostSuspend: UInt8 = 0x05

    /// The documentation's words for a reason, e.g. `"Connection terminated by remote host"`;
    /// `"Unknown reason 0xNN"` for a value it does not define.
    public static func name(of reason: UInt8) -> String {
        let names = [
            "Unspecified", "Connection timeout", "Connection terminated by local host",
            "Connection terminated by remote host", "Connection terminated due to authentication failure",
            "Connection terminated by local host for suspend",
        ]
        return Int(reason) < names.count ? names[Int(reason)] : "Unknown reason 0x\(hex(reason))"
    }
}

/// Names of the set bits of `value` in bit order: `names[n]` for bit `n`, `bit N` beyond them.
func managementBitNames(_ value: UInt64, _ names: [String]) -> [String] {
    var result: [String] = []
    var rest = value
    while rest != 0 {
        let bit = rest.trailingZeroBitCount
        result.append(bit < names.count ? names[bit] : "bit \(bit)")
        rest &= rest &- 1
    }
    return result
}
