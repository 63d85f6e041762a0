// Values of the GAP, GATT, Device Information and Battery characteristics, and of the GATT
// descriptors (GATT Specification Supplement; Core Vol 3 Part G 3.3.3). Each decoder takes
// the whole value and throws ``WireError`` naming the field and offset; none traps.

extension BluetoothUUID {
    /// Device Name (GAP), UTF-8.
    public static let deviceName = BluetoothUUID(0x2A00)
    /// Appearance (GAP): ``Appearance``.
    public static let appearance = BluetoothUUID(0x2A01)
    /// Battery Level (Battery Service): ``BatteryLevel``.
    public static let batteryLevel = BluetoothUUID(0x2A19)
    /// System ID (Device Information): ``SystemID``.
    public static let systemID = BluetoothUUID(0x2A23)
    /// PnP ID (Device Information): ``PnPID``.
    public static let pnpID = BluetoothUUID(0x2A50)
}

/// Battery Level (`2A19`): the charge left, one byte, 0 to 100 %.
public struct BatteryLevel: Hashable, Sendable, CustomStringConvertible, WireDecodable, WireEncodable {
    /// Percent of full charge, 0...100.
    public let percent: UInt8

    /// A level; `nil` above 100 %.
    public init?(percent: UInt8) {
        guard percent <= 100 else { return nil }
        self.percent = percent
    }

    /// Exactly one byte, at most 100 (the rest of the range is reserved).
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> BatteryLevel {
        var r = ByteReader(bytes, context: "Battery Level")
        let start = r.offset
        let value = try r.readUInt8()
        try r.expectEnd()
        guard let level = BatteryLevel(percent: value) else {
            throw WireError(.invalidValue("\(value) % is above 100 % (reserved)"), at: start, in: "Battery Level")
        }
        return level
    }

    public func encode(into writer: inout ByteWriter) { writer.write(percent) }

    /// `87 %`.
    public var description: String { "\(percent) %" }
}

extension Appearance: WireDecodable, WireEncodable {
    /// The Appearance characteristic (`2A01`): exactly a u16.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> Appearance {
        var r = ByteReader(bytes, context: "Appearance")
        let value = try r.readUInt16()
        try r.expectEnd()
        return Appearance(value)
    }

    public func encode(into writer: inout ByteWriter) { writer.write(rawValue) }
}

/// PnP ID (`2A50`): who made the device and which product and version it is, as USB and the
/// Device ID profile number them.
public struct PnPID: Hashable, Sendable, CustomStringConvertible, WireDecodable, WireEncodable {
    /// Which registry ``vendorID`` comes from.
    public struct VendorIDSource: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// A Bluetooth SIG company identifier (the names in ``AssignedNumbers/companyName(_:)``).
        public static let bluetoothSIG = VendorIDSource(rawValue: 1)
        /// A USB Implementers Forum vendor ID.
        public static let usbImplementersForum = VendorIDSource(rawValue: 2)

        /// `Bluetooth SIG`, `USB-IF`, `nil` for reserved values.
        public var name: String? {
            switch rawValue {
            case 1: "Bluetooth SIG"
            case 2: "USB-IF"
            default: nil
            }
        }

        public var description: String { name ?? "source \(rawValue) (reserved)" }
    }

    public let vendorIDSource: VendorIDSource
    public let vendorID: UInt16
    public let productID: UInt16
    /// `0xJJMN` for version JJ.M.N.
    public let productVersion: UInt16

    public init(vendorIDSource: VendorIDSource, vendorID: UInt16, productID: UInt16, productVersion: UInt16) {
        self.vendorIDSource = vendorIDSource
        self.vendorID = vendorID
        self.productID = productID
        self.productVersion = productVersion
    }

    /// The company's name when the vendor ID is a Bluetooth SIG company identifier.
    public var vendorName: String? {
        vendorIDSource == .bluetoothSIG ? AssignedNumbers.companyName(vendorID) : nil
    }

    /// `1.2.3` for `0x0123`: the major version in the high byte, then a nibble each.
    public var versionText: String {
        "\(String(productVersion >> 8, radix: 16)).\(String(productVersion >> 4 & 0xF, radix: 16)).\(String(productVersion & 0xF, radix: 16))"
    }

    /// Seven bytes: source u8, vendor u16, product u16, version u16.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> PnPID {
        var r = ByteReader(bytes, context: "PnP ID")
        let source = VendorIDSource(rawValue: try r.readUInt8())
        let vendor = try r.readUInt16()
        let product = try r.readUInt16()
        let version = try r.readUInt16()
        try r.expectEnd()
        return PnPID(vendorIDSource: source, vendorID: vendor, productID: product, productVersion: version)
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(vendorIDSource.rawValue)
        writer.write(vendorID)
        writer.write(productID)
        writer.write(productVersion)
    }

    /// `vendor 0x0059 Nordic Semiconductor ASA (Bluetooth SIG), product 0x0001, version 1.0.0`.
    public var description: String {
        let vendor = "vendor 0x\(Hex.padded(vendorID, digits: 4))" + (vendorName.map { " \($0)" } ?? "")
        return "\(vendor) (\(vendorIDSource)), product 0x\(Hex.padded(productID, digits: 4)), version \(versionText)"
    }
}

/// System ID (`2A23`): a 40-bit manufacturer-defined identifier and the 24-bit IEEE OUI of the
/// company, eight bytes (often the Bluetooth address with `FFFE` in the middle).
public struct SystemID: Hashable, Sendable, CustomStringConvertible, WireDecodable, WireEncodable {
    /// The manufacturer-defined identifier (40 bits).
    public let manufacturerIdentifier: UInt64
    /// The organizationally unique identifier (24 bits).
    public let organizationallyUniqueIdentifier: UInt32

    /// `nil` when either field has more bits than it may.
    public init?(manufacturerIdentifier: UInt64, organizationallyUniqueIdentifier: UInt32) {
        guard manufacturerIdentifier >> 40 == 0, organizationallyUniqueIdentifier >> 24 == 0 else { return nil }
        self.manufacturerIdentifier = manufacturerIdentifier
        self.organizationallyUniqueIdentifier = organizationallyUniqueIdentifier
    }

    /// Eight bytes: the identifier (5, little-endian), then the OUI (3, little-endian).
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> SystemID {
        var r = ByteReader(bytes, context: "System ID")
        let identifier = try r.readLittleEndian(byteCount: 5)
        let oui = try r.readUInt24()
        try r.expectEnd()
        // Both fit by construction (5 and 3 bytes read).
        guard let id = SystemID(manufacturerIdentifier: identifier, organizationallyUniqueIdentifier: oui) else {
            throw r.error(.invalidValue("System ID fields too wide"))
        }
        return id
    }

    public func encode(into writer: inout ByteWriter) {
        writer.writeLittleEndian(manufacturerIdentifier, byteCount: 5)
        writer.writeUInt24(organizationallyUniqueIdentifier)
    }

    /// `manufacturer 0x0000000001, OUI 00:A0:C9`.
    public var description: String {
        let oui = organizationallyUniqueIdentifier
        let parts = [oui >> 16, oui >> 8 & 0xFF, oui & 0xFF].map { Hex.padded($0, digits: 2) }
        return "manufacturer 0x\(Hex.padded(manufacturerIdentifier, digits: 10)), OUI \(parts.joined(separator: ":"))"
    }
}

extension ServiceChanged: CustomStringConvertible {
    /// `handles 0x0001–0xFFFF`.
    public var description: String {
        "handles 0x\(Hex.padded(startHandle, digits: 4))–0x\(Hex.padded(endHandle, digits: 4))"
    }
}

extension ClientCharacteristicConfiguration: CustomStringConvertible {
    /// `notifications`, `notifications, indications`, `off`; reserved bits as `reserved 0x0004`.
    public var description: String {
        var parts: [String] = []
        if contains(.notify) { parts.append("notifications") }
        if contains(.indicate) { parts.append("indications") }
        let reserved = rawValue & ~0x0003
        if reserved != 0 { parts.append("reserved 0x\(Hex.padded(reserved, digits: 4))") }
        return parts.isEmpty ? "off" : parts.joined(separator: ", ")
    }
}

extension CharacteristicExtendedProperties: CustomStringConvertible {
    /// `reliable write, writable auxiliaries`, `none`.
    public var description: String {
        var parts: [String] = []
        if contains(.reliableWrite) { parts.append("reliable write") }
        if contains(.writableAuxiliaries) { parts.append("writable auxiliaries") }
        let reserved = rawValue & ~0x0003
        if reserved != 0 { parts.append("reserved 0x\(Hex.padded(reserved, digits: 4))") }
        return parts.isEmpty ? "none" : parts.joined(separator: ", ")
    }
}

/// A GATT string value (Device Name, the Device Information strings, User Description):
/// UTF-8 with no terminator. Trailing NUL bytes, which some firmware pads with, are not part
/// of the text.
public struct GATTString: Hashable, Sendable, CustomStringConvertible, WireDecodable, WireEncodable {
    public let text: String

    public init(_ text: String) { self.text = text }

    /// Any bytes that are valid UTF-8 (after dropping trailing NULs); the error names the
    /// first byte that is not.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> GATTString {
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes[end - 1] == 0 { end -= 1 }
        let content = bytes[bytes.startIndex..<end]
        if let text = String(validating: content, as: UTF8.self) { return GATTString(text) }
        // Find the first byte that is not UTF-8, for the error.
        var iterator = content.makeIterator()
        var decoder = UTF8()
        var offset = content.startIndex
        loop: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput: break loop
            case .error: break loop
            }
        }
        throw WireError(.invalidValue("not UTF-8"), at: offset, in: "UTF-8 string")
    }

    public func encode(into writer: inout ByteWriter) { writer.write(contentsOf: text.utf8) }

    /// The text in double quotes, control characters escaped (a peer's text must not drive
    /// the terminal): `"rawble-sim"`.
    public var description: String { "\"" + Self.escaped(text, quote: true) + "\"" }

    /// `text` with control characters (C0, DEL, C1) written as `\n`, `\t`, `\u{1B}`, and, with
    /// `quote`, `"` and `\` escaped: safe to print on a terminal.
    public static func escaped(_ text: String, quote: Bool = false) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\"" where quote: out += "\\\""
            case "\\" where quote: out += "\\\\"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
                out += "\\u{" + Hex.padded(scalar.value, digits: 2) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
