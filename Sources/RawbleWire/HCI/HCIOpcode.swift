/// An HCI command opcode: OGF (6 bits) and OCF (10 bits), carried as a little-endian u16.
public struct HCIOpcode: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt16

    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    @inlinable
    public init(ogf: UInt8, ocf: UInt16) {
        rawValue = UInt16(ogf & 0x3F) << 10 | (ocf & 0x3FF)
    }

    /// Opcode group field.
    @inlinable public var ogf: UInt8 { UInt8(truncatingIfNeeded: rawValue >> 10) }
    /// Opcode command field.
    @inlinable public var ocf: UInt16 { rawValue & 0x3FF }

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    /// `0x200B` style, with the command's name when known.
    public var description: String {
        let code = "0x" + Hex.padded(rawValue, digits: 4)
        if let name { return "\(name) (\(code))" }
        return code
    }

    /// The specification's name for this command (Core Vol 4 Part E 7.1-7.8, e.g. `"Host Buffer
    /// Size"`), `"Vendor Specific"` for any opcode of OGF 0x3F, which the specification leaves to
    /// controller vendors; `nil` for an opcode the specification does not assign.
    public var name: String? {
        if let name = Self.names[rawValue] { return name }
        return ogf == Self.vendorSpecificOGF ? "Vendor Specific" : nil
    }

    // Link control (OGF 0x01)
    public static let disconnect = HCIOpcode(0x0406)
    public static let readRemoteVersionInformation = HCIOpcode(0x041D)
    // Controller & baseband (OGF 0x03)
    public static let setEventMask = HCIOpcode(0x0C01)
    public static let reset = HCIOpcode(0x0C03)
    public static let setEventMaskPage2 = HCIOpcode(0x0C63)
    public static let writeLEHostSupport = HCIOpcode(0x0C6D)
    // Informational (OGF 0x04)
    public static let readLocalVersionInformation = HCIOpcode(0x1001)
    public static let readLocalSupportedCommands = HCIOpcode(0x1002)
    public static let readLocalSupportedFeatures = HCIOpcode(0x1003)
    public static let readBufferSize = HCIOpcode(0x1005)
    public static let readBDADDR = HCIOpcode(0x1009)
    // Status (OGF 0x05)
    public static let readRSSI = HCIOpcode(0x1405)
    // LE (OGF 0x08)
    public static let leSetEventMask = HCIOpcode(0x2001)
    public static let leReadBufferSize = HCIOpcode(0x2002)
    public static let leReadLocalSupportedFeatures = HCIOpcode(0x2003)
    public static let leSetRandomAddress = HCIOpcode(0x2005)
    public static let leSetAdvertisingParameters = HCIOpcode(0x2006)
    public static let leReadAdvertisingPhysicalChannelTxPower = HCIOpcode(0x2007)
    public static let leSetAdvertisingData = HCIOpcode(0x2008)
    public static let leSetScanResponseData = HCIOpcode(0x2009)
    public static let leSetAdvertisingEnable = HCIOpcode(0x200A)
    public static let leSetScanParameters = HCIOpcode(0x200B)
    public static let leSetScanEnable = HCIOpcode(0x200C)
    public static let leCreateConnection = HCIOpcode(0x200D)
    public static let leCreateConnectionCancel = HCIOpcode(0x200E)
    public static let leReadFilterAcceptListSize = HCIOpcode(0x200F)
    public static let leClearFilterAcceptList = HCIOpcode(0x2010)
    public static let leConnectionUpdate = HCIOpcode(0x2013)
    public static let leReadRemoteFeatures = HCIOpcode(0x2016)
    public static let leEncrypt = HCIOpcode(0x2017)
    public static let leRand = HCIOpcode(0x2018)
    public static let leEnableEncryption = HCIOpcode(0x2019)
    public static let leLongTermKeyRequestReply = HCIOpcode(0x201A)
    public static let leLongTermKeyRequestNegativeReply = HCIOpcode(0x201B)
    public static let leReadSupportedStates = HCIOpcode(0x201C)
    public static let leRemoteConnectionParameterRequestReply = HCIOpcode(0x2020)
    public static let leRemoteConnectionParameterRequestNegativeReply = HCIOpcode(0x2021)
    public static let leSetDataLength = HCIOpcode(0x2022)
    public static let leReadSuggestedDefaultDataLength = HCIOpcode(0x2023)
    public static let leWriteSuggestedDefaultDataLength = HCIOpcode(0x2024)
    public static let leReadMaximumDataLength = HCIOpcode(0x202F)
    public static let leReadPHY = HCIOpcode(0x2030)
    public static let leSetDefaultPHY = HCIOpcode(0x2031)
    public static let leSetPHY = HCIOpcode(0x2032)
    public static let leSetAdvertisingSetRandomAddress = HCIOpcode(0x2035)
    public static let leSetExtendedAdvertisingParameters = HCIOpcode(0x2036)
    public static let leSetExtendedAdvertisingData = HCIOpcode(0x2037)
    public static let leSetExtendedScanResponseData = HCIOpcode(0x2038)
    public static let leSetExtendedAdvertisingEnable = HCIOpcode(0x2039)
    public static let leReadMaximumAdvertisingDataLength = HCIOpcode(0x203A)
    public static let leReadNumberOfSupportedAdvertisingSets = HCIOpcode(0x203B)
    public static let leRemoveAdvertisingSet = HCIOpcode(0x203C)
    public static let leClearAdvertisingSets = HCIOpcode(0x203D)
    public static let leSetExtendedScanParameters = HCIOpcode(0x2041)
    public static let leSetExtendedScanEnable = HCIOpcode(0x2042)
    public static let leExtendedCreateConnection = HCIOpcode(0x2043)
    public static let leReadBufferSizeV2 = HCIOpcode(0x2060)
    public static let leExtendedCreateConnectionV2 = HCIOpcode(0x2085)
}
