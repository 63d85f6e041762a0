import RawbleWire

/// Turns the stream of advertising reports of a scan into device snapshots worth showing,
/// sans I/O: merges each advertiser's advertisement and scan response, reassembles fragmented
/// extended advertising data, applies a ``ScanFilter`` and drops repeats.
///
/// - Devices are keyed by `DeviceAddress` (address and type as reported). A scan response
///   arriving first creates the device too. A device's advertisement (and scan response) is
///   replaced by each new one; an advertiser with several extended advertising sets shows the
///   last set heard. Anonymous extended advertisers (no address) all share one entry.
/// - Extended reports with data status "incomplete, more to come" are collected per
///   (address, SID, scan response or not) and the device updated when the last fragment
///   arrives; "incomplete, truncated" (and the reserved status) ends the collection with what
///   was received. At most `AdvertisingData.maximumExtendedCount` (1650) bytes are kept per
///   advertisement, and at most ``maximumPendingAdvertisements`` are collected at once (the
///   oldest is dropped for a new one).
/// - The filter sees the merged view: a name carried only by the scan response matches.
/// - Without ``reportsDuplicates``, a device is emitted when it first passes the filter, then
///   only when what it advertises changes (advertisement or scan response bytes, or
///   connectability); RSSI-only changes and repeated identical reports (Bumble reports every
///   advertisement twice) emit nothing. With it, every report that passes is emitted.
/// - With ``waitsForScanResponses`` (an active scan, without duplicates), the first
///   advertisement of a scannable device is held until its scan response or its next
///   advertisement arrives, so the device is shown once with everything it advertises instead
///   of twice (an advertiser heard only once is never shown). A scan response heard before
///   any advertisement of its device (the scan began between the two, e.g. another program's
///   scan already running on the adapter) is held until the advertisement arrives: a scan
///   response alone says nothing of whether the device is connectable, and shown alone it
///   would list a connectable device as not connectable, without its advertised services.
/// - Memory is bounded: at most ``maximumDevices`` are tracked. When full, a new advertiser
///   evicts the least recently seen device (it is reported again as new if heard later).
///   Every step is O(1) apart from decoding the report's own data.
public struct ScanAggregator: Sendable {
    /// Fragmented advertisements collected at the same time, at most.
    public static let maximumPendingAdvertisements = 64

    /// Which devices are emitted.
    public let filter: ScanFilter
    /// Whether every report that passes the filter is emitted, not only changes.
    public let reportsDuplicates: Bool
    /// Most devices tracked at once.
    public let maximumDevices: Int
    /// Whether a scannable device's first advertisement waits for its scan response.
    public let waitsForScanResponses: Bool
    /// How many devices were evicted to make room so far.
    public private(set) var evictedDeviceCount = 0

    /// One tracked device in the recency list (a doubly linked list threaded through `slots`,
    /// least recently seen at `oldest`).
    private struct Slot: Sendable {
        var device: DiscoveredDevice
        /// What was last emitted for the device; `nil` before its first emission.
        var emitted: Emitted?
        /// Whether the first advertisement was held back for the scan response.
        var held = false
        var older: Int
        var newer: Int
    }

    private struct Emitted: Hashable, Sendable {
        var advertisement: AdvertisingData?
        var scanResponse: AdvertisingData?
        var isConnectable: Bool
    }

    private struct FragmentKey: Hashable, Sendable {
        var address: DeviceAddress
        var sid: UInt8
        var isScanResponse: Bool
    }

    private struct Pending: Sendable {
        var bytes: [UInt8]
        var started: UInt64
    }

    private var slotIndex: [DeviceAddress: Int] = [:]
    private var slots: [Slot] = []
    private var oldest = -1
    private var newest = -1
    private var pending: [FragmentKey: Pending] = [:]
    private var pendingClock: UInt64 = 0

    /// - Parameters:
    ///   - filter: which devices to emit; the default lets all through.
    ///   - reportsDuplicates: emit every passing report, not only changes.
    ///   - maximumDevices: most devices tracked (at least 1).
    ///   - waitsForScanResponses: hold a scannable device's first advertisement for its scan
    ///     response (for active scans; ignored with `reportsDuplicates`).
    public init(filter: ScanFilter = .init(), reportsDuplicates: Bool = false, maximumDevices: Int = 4096,
                waitsForScanResponses: Bool = false) {
        self.filter = filter
        self.reportsDuplicates = reportsDuplicates
        self.maximumDevices = max(1, maximumDevices)
        self.waitsForScanResponses = waitsForScanResponses && !reportsDuplicates
    }

    /// Number of devices tracked now (never above ``maximumDevices``).
    public var deviceCount: Int { slotIndex.count }

    /// Number of fragmented advertisements being collected now.
    public var pendingAdvertisementCount: Int { pending.count }

    /// The tracked devices, least recently seen first.
    public var devices: [DiscoveredDevice] {
        var out: [DiscoveredDevice] = []
        out.reserveCapacity(slotIndex.count)
        var i = oldest
        while i >= 0, out.count < slots.count {
            out.append(slots[i].device)
            i = slots[i].newer
        }
        return out
    }

    /// The device last seen with exactly this address and address type, if still tracked.
    public func device(at address: DeviceAddress) -> DiscoveredDevice? {
        slotIndex[address].map { slots[$0].device }
    }

    /// Forgets every device and fragment (a new scan starts from nothing).
    public mutating func removeAll() {
        slotIndex.removeAll()
        slots.removeAll()
        pending.removeAll()
        oldest = -1
        newest = -1
    }

    /// Takes one advertising report; returns the device's snapshot when it should be shown,
    /// else `nil` (a fragment, a repeat, or a device the filter rejects).
    public mutating func receive(_ report: AdvertisingReport) -> DiscoveredDevice? {
        guard let data = reassemble(report) else { return nil }
        return update(with: report, data: AdvertisingData(decoding: data))
    }

    // MARK: Fragments

    /// The complete data of the advertisement `report` ends, or `nil` while more is to come.
    private mutating func reassemble(_ report: AdvertisingReport) -> [UInt8]? {
        guard let fields = report.extended else { return Array(report.data) }
        let key = FragmentKey(address: report.deviceAddress, sid: fields.advertisingSID,
                              isScanResponse: report.isScanResponse)
        let limit = AdvertisingData.maximumExtendedCount
        switch report.dataStatus {
        case .incompleteMoreToCome:
            if var collected = pending.removeValue(forKey: key) {
                collected.bytes.append(contentsOf: report.data.prefix(max(0, limit - collected.bytes.count)))
                pending[key] = collected
            } else {
                if pending.count >= Self.maximumPendingAdvertisements { dropOldestPending() }
                pendingClock &+= 1
                pending[key] = Pending(bytes: Array(report.data.prefix(limit)), started: pendingClock)
            }
            return nil
        case .complete, .incompleteTruncated, .reserved:
            guard var collected = pending.removeValue(forKey: key) else {
                return Array(report.data.prefix(limit))
            }
            collected.bytes.append(contentsOf: report.data.prefix(max(0, limit - collected.bytes.count)))
            return collected.bytes
        }
    }

    private mutating func dropOldestPending() {
        guard let oldestKey = pending.min(by: { $0.value.started < $1.value.started })?.key else { return }
        pending.removeValue(forKey: oldestKey)
    }

    // MARK: Devices

    private mutating func update(with report: AdvertisingReport, data: AdvertisingData) -> DiscoveredDevice? {
        let address = report.deviceAddress
        let i: Int
        if let existing = slotIndex[address] {
            i = existing
            touch(i)
        } else {
            i = insert(DiscoveredDevice(address: address, isConnectable: report.isConnectable))
        }
        var device = slots[i].device
        device.rssi = report.rssi
        device.reportedTXPower = report.txPower
        device.reportCount = device.reportCount == Int.max ? Int.max : device.reportCount + 1
        if report.isScanResponse {
            if device.scanResponse != data { device.scanResponse = data }
        } else {
            device.isConnectable = report.isConnectable
            if device.advertisement != data { device.advertisement = data }
        }
        slots[i].device = device
        guard filter.matchesAll || filter.matches(device) else { return nil }
        let now = Emitted(advertisement: device.advertisement, scanResponse: device.scanResponse,
                          isConnectable: device.isConnectable)
        if !reportsDuplicates, slots[i].emitted == now { return nil }
        if waitsForScanResponses, slots[i].emitted == nil, !slots[i].held,
           !report.isScanResponse, report.isScannable, device.scanResponse == nil {
            slots[i].held = true
            return nil
        }
        if waitsForScanResponses, slots[i].emitted == nil, report.isScanResponse, device.advertisement == nil {
            return nil
        }
        slots[i].emitted = now
        return device
    }

    /// Adds a device as the newest, evicting the oldest when full; returns its slot.
    private mutating func insert(_ device: DiscoveredDevice) -> Int {
        let i: Int
        if slotIndex.count >= maximumDevices, oldest >= 0 {
            i = oldest
            unlink(i)
            slotIndex.removeValue(forKey: slots[i].device.address)
            slots[i] = Slot(device: device, emitted: nil, older: -1, newer: -1)
            evictedDeviceCount += 1
        } else {
            i = slots.count
            slots.append(Slot(device: device, emitted: nil, older: -1, newer: -1))
        }
        slotIndex[device.address] = i
        linkAsNewest(i)
        return i
    }

    /// Marks slot `i` as the most recently seen.
    private mutating func touch(_ i: Int) {
        guard i != newest else { return }
        unlink(i)
        linkAsNewest(i)
    }

    private mutating func unlink(_ i: Int) {
        let older = slots[i].older, newer = slots[i].newer
        if older >= 0 { slots[older].newer = newer } else { oldest = newer }
        if newer >= 0 { slots[newer].older = older } else { newest = older }
        slots[i].older = -1
        slots[i].newer = -1
    }

    private mutating func linkAsNewest(_ i: Int) {
        slots[i].older = newest
        slots[i].newer = -1
        if newest >= 0 { slots[newest].newer = i } else { oldest = i }
        newest = i
    }
}
