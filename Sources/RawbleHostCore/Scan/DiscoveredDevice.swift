import RawbleWire

/// One advertiser as a scan currently knows it: its last advertisement and scan response,
/// merged, with the signal strength of the last report.
///
/// The AD data is copied out of the HCI event (a device never keeps an event buffer alive).
/// Broken AD data keeps the structures decoded before the damage (see `AdvertisingData`);
/// ``dataError`` says what was wrong.
public struct DiscoveredDevice: Hashable, Sendable {
    /// The advertiser's address with its type, as reported (use it to connect).
    public var address: DeviceAddress
    /// RSSI of the last report in dBm, `nil` when the controller could not measure it.
    public var rssi: Int8?
    /// Whether the advertiser accepts connections (from its last advertising PDU; a legacy scan
    /// response alone does not say, and leaves it `false`).
    public var isConnectable: Bool
    /// The data of the last advertising PDU, `nil` until one was received.
    public var advertisement: AdvertisingData? { didSet { mergeData() } }
    /// The data of the last scan response, `nil` until one was received.
    public var scanResponse: AdvertisingData? { didSet { mergeData() } }
    /// The advertisement's structures followed by the scan response's: what the accessors
    /// below read.
    public private(set) var advertisingData: AdvertisingData
    /// TX power from the last extended report, `nil` when it carried none (or was legacy).
    public var reportedTXPower: Int8?
    /// How many reports (reassembled advertisements) were merged into this device.
    public var reportCount: Int
    /// The identity of a bonded peer whose resolvable private address ``address`` is (resolved
    /// with the IRK it distributed when bonding); `nil` for every other advertiser.
    public var identity: DeviceAddress?

    /// A device with no data yet.
    public init(address: DeviceAddress, rssi: Int8? = nil, isConnectable: Bool = false,
                advertisement: AdvertisingData? = nil, scanResponse: AdvertisingData? = nil,
                reportedTXPower: Int8? = nil, reportCount: Int = 0) {
        self.address = address
        self.rssi = rssi
        self.isConnectable = isConnectable
        self.advertisement = advertisement
        self.scanResponse = scanResponse
        self.advertisingData = AdvertisingData(decoding: [])
        self.reportedTXPower = reportedTXPower
        self.reportCount = reportCount
        mergeData()
    }

    /// Rebuilds ``advertisingData`` from ``advertisement`` and ``scanResponse``.
    private mutating func mergeData() {
        var bytes: [UInt8] = []
        bytes.reserveCapacity((advertisement?.bytes.count ?? 0) + (scanResponse?.bytes.count ?? 0))
        if let advertisement { bytes.append(contentsOf: advertisement.bytes) }
        if let scanResponse { bytes.append(contentsOf: scanResponse.bytes) }
        // Both parts hold only well-framed structures, so their concatenation is well framed.
        advertisingData = AdvertisingData(decoding: bytes)
    }

    /// The first problem in the advertisement, else in the scan response; `nil` when all of
    /// both was understood.
    public var dataError: WireError? { advertisement?.error ?? scanResponse?.error }

    /// The local name (complete preferred over shortened), lossy UTF-8.
    public var name: String? { advertisingData.localName }

    /// Every advertised service UUID (advertisement, then scan response).
    public var serviceUUIDs: [BluetoothUUID] { advertisingData.serviceUUIDs }

    /// Every Manufacturer Specific Data structure.
    public var manufacturerData: [ManufacturerData] { advertisingData.manufacturerData }

    /// Every Service Data structure.
    public var serviceData: [ServiceData] { advertisingData.serviceData }

    /// TX power in dBm: the extended report's, else the advertised Tx Power Level.
    public var txPower: Int8? { reportedTXPower ?? advertisingData.txPowerLevel }

    /// The advertised appearance.
    public var appearance: Appearance? { advertisingData.appearance }
}
