/// One advertising report, from an LE Advertising Report (`0x3E/0x02`) or an LE Extended
/// Advertising Report (`0x3E/0x0D`) event: both decode into this type so a scanner handles
/// them alike (``address``, ``addressType``, ``rssi``, ``data``, ``isConnectable``,
/// ``isScanResponse``); what only extended reports carry is in ``extended``.
///
/// ``data`` is a slice of the event's bytes (no copy): the advertising or scan response data,
/// AD structures not yet parsed.
///
/// Layout: the specification's parameter tables list the fields with `[i]` subscripts; this
/// decoder reads them one report after another (event type, address type, address, data
/// length, data, RSSI for each report in turn; extended: event type ... data), as controllers,
/// the Linux kernel (`hci_le_adv_report_evt` reads RSSI right after each report's data) and
/// tshark do. Checked against tshark on two real captures (2,570 reports, no difference).
public struct AdvertisingReport: Hashable, Sendable {
    /// Which event the report came from, with the event-specific fields.
    public enum Format: Hashable, Sendable {
        /// From LE Advertising Report: the legacy PDU type.
        case legacy(LegacyEventType)
        /// From LE Extended Advertising Report.
        case extended(ExtendedFields)
    }

    public var format: Format
    /// The advertiser's address type; `anonymous` (`0xFF`) for extended anonymous advertising.
    public var addressType: LEAddressType
    /// The advertiser's address (all-zero when anonymous).
    public var address: BluetoothAddress
    /// RSSI in dBm as sent; `127` means not available (see ``rssi``).
    public var rawRSSI: Int8
    /// Advertising or scan response data (AD structures), a slice of the event's bytes.
    public var data: ArraySlice<UInt8>

    public init(format: Format, addressType: LEAddressType, address: BluetoothAddress,
                rawRSSI: Int8, data: ArraySlice<UInt8>) {
        self.format = format
        self.addressType = addressType
        self.address = address
        self.rawRSSI = rawRSSI
        self.data = data
    }

    /// A legacy report (LE Advertising Report event).
    public init(legacy eventType: LegacyEventType, addressType: LEAddressType, address: BluetoothAddress,
                rssi: Int8?, data: ArraySlice<UInt8>) {
        self.init(format: .legacy(eventType), addressType: addressType, address: address,
                  rawRSSI: rssi ?? 127, data: data)
    }

    /// The advertiser's address with its type.
    public var deviceAddress: DeviceAddress { DeviceAddress(address, type: addressType) }

    /// RSSI in dBm (-127...+20), or `nil` when the controller could not measure it.
    public var rssi: Int8? {
        get { rawRSSI == 127 ? nil : rawRSSI }
        set { rawRSSI = newValue ?? 127 }
    }

    /// The extended-report fields, `nil` for a legacy report.
    public var extended: ExtendedFields? {
        if case .extended(let fields) = format { return fields }
        return nil
    }

    /// Advertiser's TX power in dBm (extended reports only; `nil` when not available).
    public var txPower: Int8? { extended?.txPower }

    /// The event type as the extended bit field; a legacy report's type is mapped to the bits
    /// the extended report would carry for the same PDU (legacy PDU bit set).
    public var eventType: ExtendedEventType {
        switch format {
        case .legacy(let type): ExtendedEventType(legacy: type)
        case .extended(let fields): fields.eventType
        }
    }

    /// The legacy PDU type: a legacy report's own, or for an extended report of a legacy PDU
    /// the one its bits stand for; `nil` for extended (non-legacy) PDUs.
    public var legacyEventType: LegacyEventType? {
        switch format {
        case .legacy(let type): type
        case .extended(let fields): fields.eventType.legacyEventType
        }
    }

    /// One property of the advertising PDU: a legacy report's from its PDU type (as the
    /// legacy event names it), an extended report's from its event type bit.
    private func pdu(_ legacy: (LegacyEventType) -> Bool, _ extended: ExtendedEventType) -> Bool {
        switch format {
        case .legacy(let type): legacy(type)
        case .extended(let fields): fields.eventType.contains(extended)
        }
    }

    /// Whether the advertiser accepts connections.
    public var isConnectable: Bool { pdu(\.isConnectable, .connectable) }

    /// Whether the advertiser accepts scan requests.
    public var isScannable: Bool { pdu(\.isScannable, .scannable) }

    /// Whether the advertising was directed at a particular device.
    public var isDirected: Bool { pdu(\.isDirected, .directed) }

    /// Whether ``data`` is scan response data rather than advertising data.
    public var isScanResponse: Bool { pdu(\.isScanResponse, .scanResponse) }

    /// Whether ``data`` is complete (always for legacy reports) or one fragment of a longer
    /// advertisement (extended reports).
    public var dataStatus: DataStatus {
        switch format {
        case .legacy: .complete
        case .extended(let fields): fields.eventType.dataStatus
        }
    }
}

extension AdvertisingReport {
    /// A legacy advertising PDU type (LE Advertising Report `Event_Type`).
    public enum LegacyEventType: Hashable, Sendable, CustomStringConvertible {
        /// `ADV_IND`: connectable and scannable undirected.
        case advInd
        /// `ADV_DIRECT_IND`: connectable directed.
        case advDirectInd
        /// `ADV_SCAN_IND`: scannable undirected.
        case advScanInd
        /// `ADV_NONCONN_IND`: non-connectable undirected.
        case advNonconnInd
        /// `SCAN_RSP`: a scan response.
        case scanRsp
        case other(UInt8)

        @inlinable
        public init(rawValue: UInt8) {
            switch rawValue {
            case 0: self = .advInd
            case 1: self = .advDirectInd
            case 2: self = .advScanInd
            case 3: self = .advNonconnInd
            case 4: self = .scanRsp
            default: self = .other(rawValue)
            }
        }

        @inlinable
        public var rawValue: UInt8 {
            switch self {
            case .advInd: 0
            case .advDirectInd: 1
            case .advScanInd: 2
            case .advNonconnInd: 3
            case .scanRsp: 4
            case .other(let v): v
            }
        }

        /// The PDU name as the specification writes it, e.g. `"ADV_IND"`.
        public var name: String {
            switch self {
            case .advInd: "ADV_IND"
            case .advDirectInd: "ADV_DIRECT_IND"
            case .advScanInd: "ADV_SCAN_IND"
            case .advNonconnInd: "ADV_NONCONN_IND"
            case .scanRsp: "SCAN_RSP"
            case .other(let v): "0x\(hex(v))"
            }
        }

        public var description: String { name }

        public var isConnectable: Bool { self == .advInd || self == .advDirectInd }
        public var isScannable: Bool { self == .advInd || self == .advScanInd }
        public var isDirected: Bool { self == .advDirectInd }
        public var isScanResponse: Bool { self == .scanRsp }
    }

    /// The extended report's `Event_Type` bit field (16 bits; bits 7-15 reserved and kept).
    public struct ExtendedEventType: OptionSet, Hashable, Sendable {
        public let rawValue: UInt16
        @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }

        /// Bit 0: connectable advertising.
        public static let connectable = ExtendedEventType(rawValue: 1 << 0)
        /// Bit 1: scannable advertising.
        public static let scannable = ExtendedEventType(rawValue: 1 << 1)
        /// Bit 2: directed advertising.
        public static let directed = ExtendedEventType(rawValue: 1 << 2)
        /// Bit 3: the data is a scan response.
        public static let scanResponse = ExtendedEventType(rawValue: 1 << 3)
        /// Bit 4: a legacy advertising PDU was received.
        public static let legacyPDU = ExtendedEventType(rawValue: 1 << 4)

        /// Bits 5-6: whether the data is complete.
        public var dataStatus: DataStatus {
            DataStatus(rawValue: UInt8(truncatingIfNeeded: rawValue >> 5) & 0b11) ?? .reserved
        }

        /// The bits of an extended report of the given legacy PDU (Core Vol 4 Part E
        /// 7.7.65.13 table). `SCAN_RSP` maps to a scan response to `ADV_SCAN_IND` (the legacy
        /// report does not say whether the advertiser was connectable); unknown types to the
        /// legacy bit alone.
        public init(legacy type: LegacyEventType) {
            switch type {
            case .advInd: self.init(rawValue: 0b001_0011)
            case .advDirectInd: self.init(rawValue: 0b001_0101)
            case .advScanInd: self.init(rawValue: 0b001_0010)
            case .advNonconnInd: self.init(rawValue: 0b001_0000)
            case .scanRsp: self.init(rawValue: 0b001_1010)
            case .other: self.init(rawValue: 0b001_0000)
            }
        }

        /// The legacy PDU these bits stand for, when the legacy PDU bit is set and the
        /// combination is one the specification lists; `nil` otherwise.
        public var legacyEventType: LegacyEventType? {
            switch rawValue {
            case 0b001_0011: .advInd
            case 0b001_0101: .advDirectInd
            case 0b001_0010: .advScanInd
            case 0b001_0000: .advNonconnInd
            case 0b001_1011, 0b001_1010: .scanRsp
            default: nil
            }
        }
    }

    /// Data status of an extended advertising report (event type bits 5-6).
    public enum DataStatus: UInt8, Hashable, Sendable {
        case complete = 0
        /// More fragments of this advertisement follow in later reports.
        case incompleteMoreToCome = 1
        /// The data was truncated; no more fragments will come.
        case incompleteTruncated = 2
        case reserved = 3
    }

    /// What only an LE Extended Advertising Report carries.
    public struct ExtendedFields: Hashable, Sendable {
        public var eventType: ExtendedEventType
        /// PHY of the primary advertising channel (LE 1M or LE Coded).
        public var primaryPHY: LEPHY
        /// PHY of the secondary channel, ``LEPHY/noPackets`` when none was used.
        public var secondaryPHY: LEPHY
        /// Advertising set ID `0x00...0x0F`; `0xFF` when no ADI field was present.
        public var advertisingSID: UInt8
        /// TX power in dBm as sent; `127` means not available (see ``txPower``).
        public var rawTXPower: Int8
        /// Periodic advertising interval in units of 1.25 ms; `0` when there is none.
        public var periodicAdvertisingInterval: UInt16
        /// Target of directed advertising (meaningful when ``ExtendedEventType/directed`` is set).
        public var directAddressType: LEAddressType
        public var directAddress: BluetoothAddress

        public init(eventType: ExtendedEventType, primaryPHY: LEPHY = .le1M, secondaryPHY: LEPHY = .noPackets,
                    advertisingSID: UInt8 = 0xFF, txPower: Int8? = nil, periodicAdvertisingInterval: UInt16 = 0,
                    directAddressType: LEAddressType = .public, directAddress: BluetoothAddress = .any) {
            self.eventType = eventType
            self.primaryPHY = primaryPHY
            self.secondaryPHY = secondaryPHY
            self.advertisingSID = advertisingSID
            self.rawTXPower = txPower ?? 127
            self.periodicAdvertisingInterval = periodicAdvertisingInterval
            self.directAddressType = directAddressType
            self.directAddress = directAddress
        }

        /// TX power in dBm (-127...+20), or `nil` when not available.
        public var txPower: Int8? {
            get { rawTXPower == 127 ? nil : rawTXPower }
            set { rawTXPower = newValue ?? 127 }
        }

        /// The advertising set ID, `nil` when the advertisement had none.
        public var sid: UInt8? { advertisingSID == 0xFF ? nil : advertisingSID }

        /// The device the advertising was directed at, when it was directed.
        public var directTarget: DeviceAddress? {
            eventType.contains(.directed) ? DeviceAddress(directAddress, type: directAddressType) : nil
        }
    }
}

// MARK: - Decoding and encoding report lists

extension AdvertisingReport {
    /// Decodes LE Advertising Report parameters (after the subevent code): `Num_Reports`,
    /// then per report event type, address type, address, data length, data, RSSI.
    ///
    /// Hot path (scanning delivers thousands of reports a second): the loop walks indices over
    /// the input slice with one length check per report and checked subscripts, instead of a
    /// ``ByteReader`` call per field, which costs several times more in reference counting.
    /// Errors are the ones ``ByteReader`` would throw, at the same offsets.
    static func decodeLegacyReports(_ parameters: ArraySlice<UInt8>) throws(WireError) -> [AdvertisingReport] {
        let context = "HCI LE Advertising Report event"
        let end = parameters.endIndex
        return try decodeReports(parameters, minimumLength: 10, context: context) { i throws(WireError) in
            // Event type, address type, address (6), data length.
            if end - i < 9 {
                try throwTruncated(at: i, end: end, fixed: [1, 1, 6, 1], context: context)
            }
            let eventType = LegacyEventType(rawValue: parameters[i])
            let addressType = LEAddressType(rawValue: parameters[i + 1])
            let address = readAddress(parameters, at: i + 2)
            let length = Int(parameters[i + 8])
            let dataStart = i + 9
            if end - dataStart < length {
                throw WireError(.truncated(needed: length, available: end - dataStart), at: dataStart, in: context)
            }
            let rssiIndex = dataStart + length
            if rssiIndex >= end {
                throw WireError(.truncated(needed: 1, available: 0), at: rssiIndex, in: context)
            }
            i = rssiIndex + 1
            return AdvertisingReport(
                format: .legacy(eventType), addressType: addressType, address: address,
                rawRSSI: Int8(bitPattern: parameters[rssiIndex]), data: parameters[dataStart..<rssiIndex])
        }
    }

    /// Decodes LE Extended Advertising Report parameters (after the subevent code); the same
    /// index walk as ``decodeLegacyReports(_:)``.
    static func decodeExtendedReports(_ parameters: ArraySlice<UInt8>) throws(WireError) -> [AdvertisingReport] {
        let context = "HCI LE Extended Advertising Report event"
        let end = parameters.endIndex
        return try decodeReports(parameters, minimumLength: 24, context: context) { i throws(WireError) in
            // Event type (2), address type, address (6), primary PHY, secondary PHY, SID,
            // TX power, RSSI, periodic interval (2), direct address type, direct address (6),
            // data length.
            if end - i < 24 {
                try throwTruncated(at: i, end: end, fixed: [2, 1, 6, 1, 1, 1, 1, 1, 2, 1, 6, 1], context: context)
            }
            let eventType = ExtendedEventType(rawValue: UInt16(parameters[i]) | UInt16(parameters[i + 1]) << 8)
            let addressType = LEAddressType(rawValue: parameters[i + 2])
            let address = readAddress(parameters, at: i + 3)
            var fields = ExtendedFields(
                eventType: eventType,
                primaryPHY: LEPHY(parameters[i + 9]),
                secondaryPHY: LEPHY(parameters[i + 10]),
                advertisingSID: parameters[i + 11],
                periodicAdvertisingInterval: UInt16(parameters[i + 14]) | UInt16(parameters[i + 15]) << 8,
                directAddressType: LEAddressType(rawValue: parameters[i + 16]),
                directAddress: readAddress(parameters, at: i + 17))
            fields.rawTXPower = Int8(bitPattern: parameters[i + 12])
            let rssi = Int8(bitPattern: parameters[i + 13])
            let length = Int(parameters[i + 23])
            let dataStart = i + 24
            if end - dataStart < length {
                throw WireError(.truncated(needed: length, available: end - dataStart), at: dataStart, in: context)
            }
            i = dataStart + length
            return AdvertisingReport(format: .extended(fields), addressType: addressType,
                                     address: address, rawRSSI: rssi, data: parameters[dataStart..<i])
        }
    }

    /// The list both report events share: `Num_Reports`, then that many reports, each read by
    /// `readReport` from the index it is given (which it moves past the report), and no byte
    /// after the last. Reserves no more reports than the input could hold at `minimumLength`
    /// bytes each.
    @inline(__always)
    private static func decodeReports(
        _ parameters: ArraySlice<UInt8>, minimumLength: Int, context: String,
        readReport: (inout Int) throws(WireError) -> AdvertisingReport
    ) throws(WireError) -> [AdvertisingReport] {
        var i = parameters.startIndex
        let end = parameters.endIndex
        guard i < end else { throw WireError(.truncated(needed: 1, available: 0), at: i, in: context) }
        let count = Int(parameters[i])
        i += 1
        var reports: [AdvertisingReport] = []
        reports.reserveCapacity(min(count, (end - i) / minimumLength))
        for _ in 0..<count {
            reports.append(try readReport(&i))
        }
        if i < end {
            throw WireError(.trailingBytes(count: end - i), at: i, in: context)
        }
        return reports
    }

    /// Writes LE Advertising Report parameters. An extended report is written with its
    /// legacy-equivalent type (its extended-only fields are lost).
    static func encodeLegacyReports(_ reports: [AdvertisingReport], into writer: inout ByteWriter) {
        writer.write(UInt8(truncatingIfNeeded: reports.count))
        for report in reports {
            let type: LegacyEventType
            switch report.format {
            case .legacy(let t): type = t
            case .extended(let fields): type = fields.eventType.legacyEventType ?? fields.eventType.nearestLegacyType
            }
            writer.write(type.rawValue)
            writer.write(report.addressType.rawValue)
            writer.write(report.address)
            writer.write(UInt8(truncatingIfNeeded: report.data.count))
            writer.write(contentsOf: report.data)
            writer.write(report.rawRSSI)
        }
    }

    /// Writes LE Extended Advertising Report parameters. A legacy report is written as an
    /// extended report of a legacy PDU (``ExtendedFields`` defaults: LE 1M, no SID, no TX power).
    static func encodeExtendedReports(_ reports: [AdvertisingReport], into writer: inout ByteWriter) {
        writer.write(UInt8(truncatingIfNeeded: reports.count))
        for report in reports {
            let fields: ExtendedFields
            switch report.format {
            case .legacy(let t): fields = ExtendedFields(eventType: ExtendedEventType(legacy: t))
            case .extended(let f): fields = f
            }
            writer.write(fields.eventType.rawValue)
            writer.write(report.addressType.rawValue)
            writer.write(report.address)
            writer.write(fields.primaryPHY.rawValue)
            writer.write(fields.secondaryPHY.rawValue)
            writer.write(fields.advertisingSID)
            writer.write(fields.rawTXPower)
            writer.write(report.rawRSSI)
            writer.write(fields.periodicAdvertisingInterval)
            writer.write(fields.directAddressType.rawValue)
            writer.write(fields.directAddress)
            writer.write(UInt8(truncatingIfNeeded: report.data.count))
            writer.write(contentsOf: report.data)
        }
    }
}

extension AdvertisingReport.ExtendedEventType {
    /// The legacy PDU type closest to these bits, for writing an extended report into a
    /// legacy event.
    var nearestLegacyType: AdvertisingReport.LegacyEventType {
        if contains(.scanResponse) { return .scanRsp }
        if contains(.connectable) { return contains(.directed) ? .advDirectInd : .advInd }
        if contains(.scannable) { return .advScanInd }
        return .advNonconnInd
    }
}

/// Reads a 6-byte little-endian address at `index`; the caller has checked the length.
@inline(__always)
private func readAddress(_ bytes: ArraySlice<UInt8>, at index: Int) -> BluetoothAddress {
    var value = UInt64(bytes[index])
    value |= UInt64(bytes[index + 1]) << 8
    value |= UInt64(bytes[index + 2]) << 16
    value |= UInt64(bytes[index + 3]) << 24
    value |= UInt64(bytes[index + 4]) << 32
    value |= UInt64(bytes[index + 5]) << 40
    return BluetoothAddress(value)
}

/// Throws the truncation error a field-by-field read of a report's fixed part (`fixed`:
/// field sizes in order) would give when fewer bytes than that part remain.
private func throwTruncated(at start: Int, end: Int, fixed sizes: [Int], context: String) throws(WireError) {
    var offset = start
    for size in sizes {
        if end - offset < size {
            throw WireError(.truncated(needed: size, available: end - offset), at: offset, in: context)
        }
        offset += size
    }
}
