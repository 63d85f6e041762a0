/// An AD type code (Assigned Numbers, "Common Data Types"; formats in Core Specification
/// Supplement Part A). Any byte is a valid `ADType`; unassigned ones simply have no name.
public struct ADType: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let flags = ADType(0x01)
    public static let incompleteServiceUUIDs16 = ADType(0x02)
    public static let completeServiceUUIDs16 = ADType(0x03)
    public static let incompleteServiceUUIDs32 = ADType(0x04)
    public static let completeServiceUUIDs32 = ADType(0x05)
    public static let incompleteServiceUUIDs128 = ADType(0x06)
    public static let completeServiceUUIDs128 = ADType(0x07)
    public static let shortenedLocalName = ADType(0x08)
    public static let completeLocalName = ADType(0x09)
    public static let txPowerLevel = ADType(0x0A)
    public static let classOfDevice = ADType(0x0D)
    public static let simplePairingHashC192 = ADType(0x0E)
    public static let simplePairingRandomizerR192 = ADType(0x0F)
    /// Device ID (EIR) or Security Manager TK Value (OOB): the same code.
    public static let deviceID = ADType(0x10)
    public static let securityManagerOOBFlags = ADType(0x11)
    public static let peripheralConnectionIntervalRange = ADType(0x12)
    public static let solicitedServiceUUIDs16 = ADType(0x14)
    public static let solicitedServiceUUIDs128 = ADType(0x15)
    public static let serviceData16 = ADType(0x16)
    public static let publicTargetAddress = ADType(0x17)
    public static let randomTargetAddress = ADType(0x18)
    public static let appearance = ADType(0x19)
    public static let advertisingInterval = ADType(0x1A)
    public static let leDeviceAddress = ADType(0x1B)
    public static let leRole = ADType(0x1C)
    public static let simplePairingHashC256 = ADType(0x1D)
    public static let simplePairingRandomizerR256 = ADType(0x1E)
    public static let solicitedServiceUUIDs32 = ADType(0x1F)
    public static let serviceData32 = ADType(0x20)
    public static let serviceData128 = ADType(0x21)
    public static let leSecureConnectionsConfirmationValue = ADType(0x22)
    public static let leSecureConnectionsRandomValue = ADType(0x23)
    public static let uri = ADType(0x24)
    public static let indoorPositioning = ADType(0x25)
    public static let transportDiscoveryData = ADType(0x26)
    public static let leSupportedFeatures = ADType(0x27)
    public static let channelMapUpdateIndication = ADType(0x28)
    public static let pbADV = ADType(0x29)
    public static let meshMessage = ADType(0x2A)
    public static let meshBeacon = ADType(0x2B)
    public static let bigInfo = ADType(0x2C)
    public static let broadcastCode = ADType(0x2D)
    public static let resolvableSetIdentifier = ADType(0x2E)
    public static let advertisingIntervalLong = ADType(0x2F)
    public static let broadcastName = ADType(0x30)
    public static let encryptedData = ADType(0x31)
    public static let periodicAdvertisingResponseTimingInformation = ADType(0x32)
    public static let electronicShelfLabel = ADType(0x34)
    public static let threeDInformationData = ADType(0x3D)
    public static let manufacturerSpecificData = ADType(0xFF)

    /// The Assigned Numbers name, e.g. `"Complete Local Name"`; `nil` when unassigned.
    public var name: String? {
        switch rawValue {
        case 0x01: "Flags"
        case 0x02: "Incomplete List of 16-bit Service UUIDs"
        case 0x03: "Complete List of 16-bit Service UUIDs"
        case 0x04: "Incomplete List of 32-bit Service UUIDs"
        case 0x05: "Complete List of 32-bit Service UUIDs"
        case 0x06: "Incomplete List of 128-bit Service UUIDs"
        case 0x07: "Complete List of 128-bit Service UUIDs"
        case 0x08: "Shortened Local Name"
        case 0x09: "Complete Local Name"
        case 0x0A: "Tx Power Level"
        case 0x0D: "Class of Device"
        case 0x0E: "Simple Pairing Hash C-192"
        case 0x0F: "Simple Pairing Randomizer R-192"
        case 0x10: "Device ID / Security Manager TK Value"
        case 0x11: "Security Manager Out of Band Flags"
        case 0x12: "Peripheral Connection Interval Range"
        case 0x14: "List of 16-bit Service Solicitation UUIDs"
        case 0x15: "List of 128-bit Service Solicitation UUIDs"
        case 0x16: "Service Data - 16-bit UUID"
        case 0x17: "Public Target Address"
        case 0x18: "Random Target Address"
        case 0x19: "Appearance"
        case 0x1A: "Advertising Interval"
        case 0x1B: "LE Bluetooth Device Address"
        case 0x1C: "LE Role"
        case 0x1D: "Simple Pairing Hash C-256"
        case 0x1E: "Simple Pairing Randomizer R-256"
        case 0x1F: "List of 32-bit Service Solicitation UUIDs"
        case 0x20: "Service Data - 32-bit UUID"
        case 0x21: "Service Data - 128-bit UUID"
        case 0x22: "LE Secure Connections Confirmation Value"
        case 0x23: "LE Secure Connections Random Value"
        case 0x24: "URI"
        case 0x25: "Indoor Positioning"
        case 0x26: "Transport Discovery Data"
        case 0x27: "LE Supported Features"
        case 0x28: "Channel Map Update Indication"
        case 0x29: "PB-ADV"
        case 0x2A: "Mesh Message"
        case 0x2B: "Mesh Beacon"
        case 0x2C: "BIGInfo"
        case 0x2D: "Broadcast_Code"
        case 0x2E: "Resolvable Set Identifier"
        case 0x2F: "Advertising Interval - long"
        case 0x30: "Broadcast_Name"
        case 0x31: "Encrypted Advertising Data"
        case 0x32: "Periodic Advertising Response Timing Information"
        case 0x34: "Electronic Shelf Label"
        case 0x3D: "3D Information Data"
        case 0xFF: "Manufacturer Specific Data"
        default: nil
        }
    }

    /// `Complete Local Name (0x09)`, or `AD type 0x42` when unassigned.
    public var description: String {
        let code = "0x" + Hex.padded(rawValue, digits: 2)
        return name.map { "\($0) (\(code))" } ?? "AD type \(code)"
    }

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}
