/// Names from the Bluetooth SIG Assigned Numbers that this stack prints: UUIDs, company
/// identifiers, appearance values and URI schemes.
///
/// Every table is a `switch` (or a constant array), so there is no start-up cost and no
/// dictionary to build. Values the tables do not know give `nil`, never a guess.
public enum AssignedNumbers {}

extension AssignedNumbers {
    /// The name of any UUID this stack knows: an assigned 16-bit UUID (in any of its three
    /// widths, since `180D` equals `0000180D-0000-1000-8000-00805F9B34FB`) or a well-known
    /// vendor 128-bit UUID such as the Nordic UART Service.
    public static func name(of uuid: BluetoothUUID) -> String? {
        if let short = uuid.uuid16 { return name(uuid16: short) }
        if uuid.isBased { return nil }
        return wellKnown128Name(high: uuid.high, low: uuid.low)
    }

    /// Vendor-defined 128-bit UUIDs that people meet in the field (nRF Connect shows the same).
    private static func wellKnown128Name(high: UInt64, low: UInt64) -> String? {
        switch (high, low) {
        // Nordic UART Service (NUS) and its characteristics.
        case (0x6E40_0001_B5A3_F393, 0xE0A9_E50E_24DC_CA9E): return "Nordic UART Service"
        case (0x6E40_0002_B5A3_F393, 0xE0A9_E50E_24DC_CA9E): return "Nordic UART RX"
        case (0x6E40_0003_B5A3_F393, 0xE0A9_E50E_24DC_CA9E): return "Nordic UART TX"
        // Nordic Secure DFU characteristics (the service itself is the 16-bit member UUID FE59).
        case (0x8EC9_0001_F315_4F60, 0x9FB8_8388_30DA_EA50): return "Nordic DFU Control Point"
        case (0x8EC9_0002_F315_4F60, 0x9FB8_8388_30DA_EA50): return "Nordic DFU Packet"
        case (0x8EC9_0003_F315_4F60, 0x9FB8_8388_30DA_EA50): return "Nordic Buttonless DFU"
        // Nordic legacy DFU service.
        case (0x0000_1530_1212_EFDE, 0x1523_785F_EABC_D123): return "Nordic Legacy DFU Service"
        // Apple Notification Center Service and its characteristics.
        case (0x7905_F431_B5CE_4E99, 0xA40F_4B1E_122D_00D0): return "Apple Notification Center Service"
        case (0x9FBF_120D_6301_42D9, 0x8C58_25E6_99A2_1DBD): return "ANCS Notification Source"
        case (0x69D1_D8F3_45E1_49A8, 0x9821_9BBD_FDAA_D9D9): return "ANCS Control Point"
        case (0x22EA_C6E9_24D6_4BB5, 0xBE44_B36A_CE7C_7BFB): return "ANCS Data Source"
        // Apple Media Service.
        case (0x89D3_502B_0F36_433A, 0x8EF4_C502_AD55_F8DC): return "Apple Media Service"
        default: return nil
        }
    }
}

extension BluetoothUUID {
    /// The assigned or well-known name of this UUID (`"Heart Rate"` for `180D`), or `nil`.
    public var name: String? { AssignedNumbers.name(of: self) }
}

// MARK: - URI schemes

extension AssignedNumbers {
    /// The scheme a URI advertising structure's first code point stands for (Assigned Numbers,
    /// "URI Schemes"): `0x01` is the empty scheme (the rest is the whole URI), `0x16` is
    /// `"http:"`, `0x17` `"https:"`; `nil` for unassigned code points.
    public static func uriScheme(_ codePoint: UInt32) -> String? {
        if codePoint == 0x01 { return "" }
        guard codePoint >= 0x02 else { return nil }
        let index = Int(codePoint) - 2
        return index < uriSchemes.count ? uriSchemes[index] : nil
    }

    /// The code point for a scheme (`"https:"` → `0x17`), the inverse of ``uriScheme(_:)``.
    public static func uriSchemeCode(_ scheme: String) -> UInt32? {
        if scheme.isEmpty { return 0x01 }
        guard let index = uriSchemes.firstIndex(of: scheme) else { return nil }
        return UInt32(index + 2)
    }

    /// Schemes for code points 0x02, 0x03, … in order.
    private static let uriSchemes: [String] = [
        "aaa:", "aaas:", "about:", "acap:", "acct:", "cap:", "cid:", "coap:", "coaps:", "crid:",
        "data:", "dav:", "dict:", "dns:", "file:", "ftp:", "geo:", "go:", "gopher:", "h323:",
        "http:", "https:", "iax:", "icap:", "im:", "imap:", "info:", "ipp:", "ipps:", "iris:",
        "iris.beep:", "iris.xpc:", "iris.xpcs:", "iris.lwz:", "jabber:", "ldap:", "mailto:",
        "mid:", "msrp:", "msrps:", "mtqp:", "mupdate:", "news:", "nfs:", "ni:", "nih:", "nntp:",
        "opaquelocktoken:", "pop:", "pres:", "reload:", "rtsp:", "rtsps:", "rtspu:", "service:",
        "session:", "shttp:", "sieve:", "sip:", "sips:", "sms:", "snmp:", "soap.beep:",
        "soap.beeps:", "stun:", "stuns:", "tag:", "tel:", "telnet:", "tftp:", "thismessage:",
        "tn3270:", "tip:", "turn:", "turns:", "tv:", "urn:", "vemmi:", "ws:", "wss:", "xcon:",
        "xcon-userid:", "xmlrpc.beep:", "xmlrpc.beeps:", "xmpp:", "z39.50r:", "z39.50s:", "acr:",
        "adiumxtra:", "afp:", "afs:", "aim:", "apt:", "attachment:", "aw:", "barion:",
        "beshare:", "bitcoin:", "bolo:", "callto:", "chrome:", "chrome-extension:",
        "com-eventbrite-attendee:", "content:", "cvs:", "dlna-playsingle:",
        "dlna-playcontainer:", "dtn:", "dvb:", "ed2k:", "facetime:", "feed:", "feedready:",
        "finger:", "fish:", "gg:", "git:", "gizmoproject:", "gtalk:", "ham:", "hcp:", "icon:",
        "ipn:", "irc:", "irc6:", "ircs:", "itms:", "jar:", "jms:", "keyparc:", "lastfm:",
        "ldaps:", "magnet:", "maps:", "market:", "message:", "mms:", "ms-help:",
        "ms-settings-power:", "msnim:", "mumble:", "mvn:", "notes:", "oid:", "palm:",
        "paparazzi:", "pkcs11:", "platform:", "proxy:", "psyc:", "query:", "res:", "resource:",
        "rmi:", "rsync:", "rtmfp:", "rtmp:", "secondlife:", "sftp:", "sgn:", "skype:", "smb:",
        "smtp:", "soldat:", "spotify:", "ssh:", "steam:", "submit:", "svn:", "teamspeak:",
        "teliaeid:", "things:", "udp:", "unreal:", "ut2004:", "ventrilo:", "view-source:",
        "webcal:", "wtai:", "wyciwyg:", "xfire:", "xri:", "ymsgr:", "example:",
        "ms-settings-cloudstorage:", "bluetooth:", "bl:",
    ]
}

// MARK: - Appearance

/// A GAP Appearance value (AD type 0x19, characteristic 0x2A01): a 10-bit category and a
/// 6-bit sub-category, e.g. `0x0341` = Heart Rate Sensor: Heart Rate Belt.
public struct Appearance: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    /// The upper 10 bits.
    @inlinable public var category: UInt16 { rawValue >> 6 }
    /// The lower 6 bits (0 = generic member of the category).
    @inlinable public var subcategory: UInt8 { UInt8(truncatingIfNeeded: rawValue & 0x3F) }

    /// `"Heart Rate Sensor"`, or `nil` when the category is not in the table.
    public var categoryName: String? { AssignedNumbers.appearanceCategoryName(category) }
    /// `"Heart Rate Belt"`, or `nil` for a generic or unknown sub-category.
    public var subcategoryName: String? { AssignedNumbers.appearanceSubcategoryName(rawValue) }

    /// The most specific name known: the sub-category's, else the category's.
    public var name: String? { subcategoryName ?? categoryName }

    /// `Heart Rate Sensor: Heart Rate Belt (0x0341)`, `Heart Rate Sensor (0x0340)`,
    /// `Appearance 0x1234` when unknown.
    public var description: String {
        let code = "0x" + Hex.padded(rawValue, digits: 4)
        guard let category = categoryName else { return "Appearance \(code)" }
        if let sub = subcategoryName { return "\(category): \(sub) (\(code))" }
        return "\(category) (\(code))"
    }

    public static let unknown = Appearance(0x0000)
    public static let genericHeartRateSensor = Appearance(0x0340)
    public static let heartRateBelt = Appearance(0x0341)
}
