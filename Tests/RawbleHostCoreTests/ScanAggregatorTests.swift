import RawbleHostCore
import RawbleTestSupport
import RawbleWire
import Testing

private let heartRate = BluetoothUUID(0x180D)
private let battery = BluetoothUUID(0x180F)

private func address(_ value: UInt64) -> BluetoothAddress { BluetoothAddress(value) }

/// A legacy report from a public address.
private func legacy(_ type: AdvertisingReport.LegacyEventType, _ addr: UInt64, rssi: Int8? = -60,
                    addressType: LEAddressType = .public, _ data: [UInt8]) -> AdvertisingReport {
    AdvertisingReport(legacy: type, addressType: addressType, address: address(addr), rssi: rssi, data: data[...])
}

/// An extended (non-legacy) report with the given bits, data status, SID and TX power.
private func extended(_ addr: UInt64, connectable: Bool = true, scanResponse: Bool = false,
                      status: AdvertisingReport.DataStatus = .complete, sid: UInt8 = 1, txPower: Int8? = nil,
                      rssi: Int8 = -50, _ data: [UInt8]) -> AdvertisingReport {
    var bits: UInt16 = UInt16(status.rawValue) << 5
    if connectable { bits |= 0b0001 }
    if scanResponse { bits |= 0b1010 }
    let fields = AdvertisingReport.ExtendedFields(
        eventType: .init(rawValue: bits), secondaryPHY: .le1M, advertisingSID: sid, txPower: txPower)
    return AdvertisingReport(format: .extended(fields), addressType: .random, address: address(addr),
                             rawRSSI: rssi, data: data[...])
}

/// AD bytes of one structure.
private func ad(_ type: UInt8, _ data: [UInt8]) -> [UInt8] { [UInt8(data.count + 1), type] + data }
private func name(_ text: String, complete: Bool = true) -> [UInt8] { ad(complete ? 0x09 : 0x08, Array(text.utf8)) }
private let flags = ad(0x01, [0x06])
private let heartRateList = ad(0x03, [0x0D, 0x18])

/// The emitted device, or a recorded failure at the caller's line.
private func emitted(_ device: DiscoveredDevice?, sourceLocation: SourceLocation = #_sourceLocation) throws -> DiscoveredDevice {
    try #require(device, sourceLocation: sourceLocation)
}

@Suite("Scan aggregation")
struct ScanAggregatorTests {
    // MARK: Emission

    @Test func firstAdvertisementEmitsTheDecodedDevice() throws {
        var scan = ScanAggregator()
        let device = try emitted(scan.receive(legacy(.advInd, 0xC0FFEE, rssi: -42,
                                                      flags + heartRateList + name("Polar H10") + ad(0x0A, [0xF8]))))
        #expect(device.address == DeviceAddress(address(0xC0FFEE), type: .public))
        #expect(device.rssi == -42)
        #expect(device.isConnectable)
        #expect(device.name == "Polar H10")
        #expect(device.serviceUUIDs == [heartRate])
        #expect(device.txPower == -8)
        #expect(device.reportCount == 1)
        #expect(device.scanResponse == nil)
        #expect(device.dataError == nil)
        #expect(scan.deviceCount == 1)
    }

    @Test func repeatedAndRSSIOnlyReportsDoNotReEmitButUpdateTheDevice() {
        var scan = ScanAggregator()
        let data = flags + name("Band")
        #expect(scan.receive(legacy(.advInd, 1, rssi: -70, data)) != nil)
        #expect(scan.receive(legacy(.advInd, 1, rssi: -70, data)) == nil)
        #expect(scan.receive(legacy(.advInd, 1, rssi: -40, data)) == nil)
        #expect(scan.receive(legacy(.advInd, 1, rssi: nil, data)) == nil)
        let known = scan.device(at: DeviceAddress(address(1), type: .public))
        #expect(known?.rssi == nil)
        #expect(known?.reportCount == 4)
    }

    @Test func changedAdvertisingDataReEmits() {
        var scan = ScanAggregator()
        #expect(scan.receive(legacy(.advInd, 1, flags + ad(0xFF, [0x59, 0x00, 0x01]))) != nil)
        let changed = scan.receive(legacy(.advInd, 1, flags + ad(0xFF, [0x59, 0x00, 0x02])))
        #expect(changed?.manufacturerData == [ManufacturerData(companyID: 0x0059, data: [0x02])])
    }

    @Test func connectabilityChangeReEmits() {
        var scan = ScanAggregator()
        #expect(scan.receive(legacy(.advInd, 1, flags)) != nil)
        #expect(scan.receive(legacy(.advNonconnInd, 1, flags))?.isConnectable == false)
        #expect(scan.receive(legacy(.advNonconnInd, 1, flags)) == nil)
    }

    @Test func bumblesDoubleLegacyAndExtendedReportsEmitOnce() {
        var scan = ScanAggregator()
        let data = flags + name("bumble")
        #expect(scan.receive(legacy(.advInd, 1, addressType: .random, data)) != nil)
        // The same advertisement as an extended report: connectable + scannable, no legacy bit.
        let fields = AdvertisingReport.ExtendedFields(eventType: .init(rawValue: 0b011))
        let twin = AdvertisingReport(format: .extended(fields), addressType: .random, address: address(1),
                                     rawRSSI: -60, data: data[...])
        #expect(scan.receive(twin) == nil)
        #expect(scan.receive(twin) == nil)
        #expect(scan.device(at: DeviceAddress(address(1), type: .random))?.reportCount == 3)
    }

    @Test func reportsDuplicatesEmitsEveryPassingReport() {
        var scan = ScanAggregator(filter: ScanFilter(nameSubstring: "keep"), reportsDuplicates: true)
        let data = flags + name("keep me")
        #expect(scan.receive(legacy(.advInd, 1, data))?.reportCount == 1)
        #expect(scan.receive(legacy(.advInd, 1, data))?.reportCount == 2)
        #expect(scan.receive(legacy(.advInd, 2, flags + name("drop"))) == nil)
    }

    // MARK: Scan responses

    @Test func scanResponseMergesAfterTheAdvertisement() throws {
        var scan = ScanAggregator()
        #expect(scan.receive(legacy(.advInd, 1, flags + heartRateList)) != nil)
        let merged = try emitted(scan.receive(legacy(.scanRsp, 1, name("HRM"))))
        #expect(merged.name == "HRM")
        #expect(merged.serviceUUIDs == [heartRate])
        #expect(merged.advertisement?.bytes.elementsEqual(flags + heartRateList) == true)
        #expect(merged.scanResponse?.bytes.elementsEqual(name("HRM")) == true)
        #expect(merged.advertisingData.bytes.elementsEqual(flags + heartRateList + name("HRM")))
        // A legacy scan response does not say whether the advertiser is connectable.
        #expect(merged.isConnectable)
        #expect(scan.receive(legacy(.scanRsp, 1, name("HRM"))) == nil)
    }

    @Test func scanResponseFirstCreatesTheDeviceAndTheAdvertisementJoinsIt() throws {
        var scan = ScanAggregator()
        let first = try emitted(scan.receive(legacy(.scanRsp, 1, name("early"))))
        #expect(first.advertisement == nil)
        #expect(first.name == "early")
        #expect(!first.isConnectable)
        let joined = try emitted(scan.receive(legacy(.advInd, 1, flags)))
        #expect(joined.isConnectable)
        #expect(joined.advertisingData.bytes.elementsEqual(flags + name("early")))
        #expect(scan.deviceCount == 1)
    }

    @Test func nameOnlyInTheScanResponsePassesTheNameFilter() throws {
        var scan = ScanAggregator(filter: ScanFilter(nameSubstring: "polar"))
        #expect(scan.receive(legacy(.advInd, 1, flags + heartRateList)) == nil)
        let device = try emitted(scan.receive(legacy(.scanRsp, 1, name("Polar H10 ABC"))))
        #expect(device.serviceUUIDs == [heartRate])
        // Already emitted, nothing changed since.
        #expect(scan.receive(legacy(.advInd, 1, flags + heartRateList)) == nil)
    }

    // MARK: Filter

    @Test func serviceFilterMatchesUUIDListsAndServiceDataAnyOf() {
        let filter = ScanFilter(services: [battery, heartRate])
        let listed = DiscoveredDevice(address: DeviceAddress(address(1), type: .public),
                                      advertisement: AdvertisingData(decoding: flags + heartRateList))
        // Service data for 0x180F (battery level 0x64).
        let viaServiceData = DiscoveredDevice(address: DeviceAddress(address(2), type: .public),
                                              advertisement: AdvertisingData(decoding: ad(0x16, [0x0F, 0x18, 0x64])))
        let neither = DiscoveredDevice(address: DeviceAddress(address(3), type: .public),
                                       advertisement: AdvertisingData(decoding: ad(0x03, [0x0A, 0x18])))
        #expect(filter.matches(listed))
        #expect(filter.matches(viaServiceData))
        #expect(!filter.matches(neither))
        // A 128-bit filter UUID matches the 16-bit advertised form.
        let long = BluetoothUUID("0000180D-0000-1000-8000-00805F9B34FB")
        #expect(long != nil)
        #expect(ScanFilter(services: long.map { [$0] } ?? []).matches(listed))
    }

    @Test func nameFilterIsCaseInsensitiveOnCompleteAndShortenedNames() {
        let filter = ScanFilter(nameSubstring: "H10")
        func device(_ bytes: [UInt8]) -> DiscoveredDevice {
            DiscoveredDevice(address: DeviceAddress(address(1), type: .public), advertisement: AdvertisingData(decoding: bytes))
        }
        #expect(filter.matches(device(name("polar h10 1234"))))
        #expect(filter.matches(device(name("Polar H1", complete: true) + name("pol h10", complete: false))))
        #expect(!filter.matches(device(name("Polar OH1"))))
        #expect(!filter.matches(device(flags)))
        #expect(ScanFilter(nameSubstring: "").matches(device(flags)))
    }

    @Test func addressFilterIgnoresAddressTypeAndAllCriteriaMustHold() {
        let hrm = DiscoveredDevice(address: DeviceAddress(address(0xAA), type: .random),
                                   advertisement: AdvertisingData(decoding: heartRateList + name("HRM")))
        #expect(ScanFilter(addresses: [address(0xBB), address(0xAA)]).matches(hrm))
        #expect(!ScanFilter(addresses: [address(0xBB)]).matches(hrm))
        #expect(ScanFilter(services: [heartRate], nameSubstring: "hrm", addresses: [address(0xAA)]).matches(hrm))
        #expect(!ScanFilter(services: [battery], nameSubstring: "hrm", addresses: [address(0xAA)]).matches(hrm))
        #expect(!ScanFilter(services: [heartRate], nameSubstring: "other").matches(hrm))
        #expect(ScanFilter().matches(hrm))
    }

    @Test func settingAdvertisementOrScanResponseRebuildsTheMergedData() {
        var device = DiscoveredDevice(address: DeviceAddress(address(1), type: .public))
        #expect(device.advertisingData.bytes.isEmpty)
        device.scanResponse = AdvertisingData(decoding: name("late"))
        device.advertisement = AdvertisingData(decoding: flags)
        #expect(device.advertisingData.bytes.elementsEqual(flags + name("late")))
        device.scanResponse = nil
        #expect(device.name == nil)
    }

    // MARK: Broken data

    @Test func brokenADKeepsTheStructuresBeforeTheDamage() throws {
        var scan = ScanAggregator()
        // Name, then a structure claiming 9 bytes with 2 present.
        let device = try emitted(scan.receive(legacy(.advInd, 1, name("ok") + [0x09, 0xFF, 0x59])))
        #expect(device.name == "ok")
        #expect(device.dataError != nil)
        #expect(device.advertisingData.bytes.elementsEqual(name("ok")))
        // A broken scan response does not hide the advertisement's structures or error-free state.
        let withResponse = try emitted(scan.receive(legacy(.scanRsp, 1, [0x00, 0x01])))
        #expect(withResponse.name == "ok")
        #expect(withResponse.scanResponse?.error != nil)
    }

    @Test func wrongSizedKnownStructureIsKeptRawWithAnError() throws {
        var scan = ScanAggregator()
        // A 16-bit UUID list of 3 bytes, then a name.
        let device = try emitted(scan.receive(legacy(.advInd, 1, ad(0x03, [0x0D, 0x18, 0x00]) + name("x"))))
        #expect(device.serviceUUIDs.isEmpty)
        #expect(device.name == "x")
        #expect(device.dataError != nil)
    }

    // MARK: Extended reports

    @Test func extendedTXPowerWinsOverTheAdvertisedLevel() throws {
        var scan = ScanAggregator()
        let device = try emitted(scan.receive(extended(1, txPower: 4, ad(0x0A, [0xF8]))))
        #expect(device.txPower == 4)
        #expect(device.reportedTXPower == 4)
        let withoutReported = try emitted(scan.receive(extended(2, txPower: nil, ad(0x0A, [0xF8]))))
        #expect(withoutReported.txPower == -8)
    }

    @Test func fragmentedExtendedAdvertisementIsEmittedWhenComplete() throws {
        var scan = ScanAggregator()
        let whole = flags + ad(0xFF, [0x59, 0x00] + [UInt8](repeating: 0x11, count: 240))
            + ad(0xFF, [0x59, 0x00] + [UInt8](repeating: 0x22, count: 200)) + name("long one")
        let cuts = [100, 300]
        #expect(scan.receive(extended(7, status: .incompleteMoreToCome, Array(whole[..<cuts[0]]))) == nil)
        #expect(scan.receive(extended(7, status: .incompleteMoreToCome, Array(whole[cuts[0]..<cuts[1]]))) == nil)
        #expect(scan.device(at: DeviceAddress(address(7), type: .random)) == nil)
        let device = try emitted(scan.receive(extended(7, status: .complete, Array(whole[cuts[1]...]))))
        #expect(device.advertisement?.bytes.elementsEqual(whole) == true)
        #expect(device.dataError == nil)
        #expect(device.name == "long one")
        #expect(device.manufacturerData.count == 2)
        #expect(device.reportCount == 1)
        #expect(scan.pendingAdvertisementCount == 0)
    }

    @Test func truncatedExtendedAdvertisementEmitsWhatWasReceived() throws {
        var scan = ScanAggregator()
        let whole = name("first") + ad(0xFF, [0x59, 0x00] + [UInt8](repeating: 0x33, count: 100))
        #expect(scan.receive(extended(7, status: .incompleteMoreToCome, Array(whole[..<40]))) == nil)
        let device = try emitted(scan.receive(extended(7, status: .incompleteTruncated, Array(whole[40..<60]))))
        #expect(device.name == "first")
        #expect(device.manufacturerData.isEmpty)
        #expect(device.dataError != nil)
        #expect(scan.pendingAdvertisementCount == 0)
    }

    @Test func fragmentsOfDifferentSetsAndScanResponsesAreKeptApart() throws {
        var scan = ScanAggregator()
        let setA = name("set A"), setB = name("set B"), response = name("response")
        #expect(scan.receive(extended(7, status: .incompleteMoreToCome, sid: 1, Array(setA[..<3]))) == nil)
        #expect(scan.receive(extended(7, status: .incompleteMoreToCome, sid: 2, Array(setB[..<4]))) == nil)
        #expect(scan.receive(extended(7, scanResponse: true, status: .incompleteMoreToCome, sid: 1,
                                      Array(response[..<2]))) == nil)
        #expect(scan.pendingAdvertisementCount == 3)
        #expect(scan.receive(extended(7, status: .complete, sid: 1, Array(setA[3...])))?.name == "set A")
        #expect(scan.receive(extended(7, status: .complete, sid: 2, Array(setB[4...])))?.name == "set B")
        let merged = try emitted(scan.receive(extended(7, scanResponse: true, status: .complete, sid: 1,
                                                        Array(response[2...]))))
        #expect(merged.scanResponse?.bytes.elementsEqual(response) == true)
        #expect(merged.dataError == nil)
    }

    @Test func reassemblyKeepsAtMost1650Bytes() throws {
        var scan = ScanAggregator()
        // Eight 251-byte structures (2008 bytes) in 251-byte fragments.
        let structure = ad(0xFF, [0x59, 0x00] + [UInt8](repeating: 0x44, count: 247))
        #expect(structure.count == 251)
        for _ in 0..<7 {
            #expect(scan.receive(extended(7, status: .incompleteMoreToCome, structure)) == nil)
        }
        let device = try emitted(scan.receive(extended(7, status: .complete, structure)))
        // 1650 bytes: six whole structures (1506), then a structure cut short.
        #expect(device.advertisement.map { Array($0).count } == 6)
        #expect(device.manufacturerData.count == 1, "six identical structures, listed once")
        #expect(device.advertisement?.bytes.count == 1506)
        #expect(device.dataError?.kind == .truncated(needed: 250, available: 143))
    }

    @Test func pendingFragmentedAdvertisementsAreBounded() {
        var scan = ScanAggregator()
        for i in 0..<200 {
            _ = scan.receive(extended(UInt64(i), status: .incompleteMoreToCome, [0x04, 0x09, 0x61]))
            #expect(scan.pendingAdvertisementCount <= ScanAggregator.maximumPendingAdvertisements)
        }
        #expect(scan.pendingAdvertisementCount == ScanAggregator.maximumPendingAdvertisements)
        // The newest is still collected, the oldest was dropped.
        #expect(scan.receive(extended(199, status: .complete, [0x62, 0x63]))?.name == "abc")
        #expect(scan.receive(extended(0, status: .complete, [0x62, 0x63]))?.dataError != nil)
    }

    // MARK: Device table

    @Test func addressTypeIsPartOfTheDevicesIdentity() {
        var scan = ScanAggregator()
        #expect(scan.receive(legacy(.advInd, 1, addressType: .public, name("pub"))) != nil)
        #expect(scan.receive(legacy(.advInd, 1, addressType: .random, name("rnd"))) != nil)
        #expect(scan.deviceCount == 2)
        #expect(scan.device(at: DeviceAddress(address(1), type: .public))?.name == "pub")
        #expect(scan.device(at: DeviceAddress(address(1), type: .random))?.name == "rnd")
        #expect(scan.device(at: DeviceAddress(address(2), type: .public)) == nil)
    }

    @Test func fullTableEvictsTheLeastRecentlySeenDevice() {
        var scan = ScanAggregator(maximumDevices: 3)
        for a in UInt64(1)...3 { #expect(scan.receive(legacy(.advInd, a, flags)) != nil) }
        // Device 1 is heard again (no emission), so 2 is now the least recently seen.
        #expect(scan.receive(legacy(.advInd, 1, flags)) == nil)
        #expect(scan.receive(legacy(.advInd, 4, flags)) != nil)
        #expect(scan.deviceCount == 3)
        #expect(scan.evictedDeviceCount == 1)
        #expect(scan.device(at: DeviceAddress(address(2), type: .public)) == nil)
        #expect(scan.devices.map(\.address.address) == [address(3), address(1), address(4)])
        // An evicted device heard again is new: emitted, count restarted.
        #expect(scan.receive(legacy(.advInd, 2, flags))?.reportCount == 1)
        #expect(scan.device(at: DeviceAddress(address(3), type: .public)) == nil)
    }

    @Test func thousandsOfDistinctAdvertisersKeepTheTableBounded() {
        var scan = ScanAggregator(maximumDevices: 256)
        var emitted = 0
        // A minute of a crowded place: 60,000 reports from 20,000 advertisers, each heard three times.
        for round in 0..<3 {
            for a in UInt64(0)..<20_000 {
                if scan.receive(legacy(.advInd, a, rssi: Int8(-30 - round), flags + name("d\(a)"))) != nil { emitted += 1 }
                #expect(scan.deviceCount <= 256)
            }
        }
        #expect(scan.deviceCount == 256)
        #expect(scan.devices.count == 256)
        // Every report came from an evicted advertiser, so each one was new again.
        #expect(emitted == 60_000)
        #expect(scan.evictedDeviceCount == 60_000 - 256)
    }

    @Test func removeAllForgetsDevicesAndFragments() {
        var scan = ScanAggregator()
        _ = scan.receive(legacy(.advInd, 1, flags))
        _ = scan.receive(extended(2, status: .incompleteMoreToCome, [0x02]))
        scan.removeAll()
        #expect(scan.deviceCount == 0)
        #expect(scan.pendingAdvertisementCount == 0)
        #expect(scan.devices.isEmpty)
        #expect(scan.receive(legacy(.advInd, 1, flags)) != nil)
    }

    @Test func maximumDevicesBelowOneIsRaisedToOne() {
        var scan = ScanAggregator(maximumDevices: 0)
        #expect(scan.maximumDevices == 1)
        _ = scan.receive(legacy(.advInd, 1, flags))
        _ = scan.receive(legacy(.advInd, 2, flags))
        #expect(scan.deviceCount == 1)
        #expect(scan.device(at: DeviceAddress(address(2), type: .public)) != nil)
    }

    // MARK: Random reports

    @Test func randomReportsNeverTrapAndStayBounded() {
        var rng = SplitMix64(state: 0x5343_414E)
        let statuses: [AdvertisingReport.DataStatus] = [.complete, .incompleteMoreToCome, .incompleteTruncated, .reserved]
        for (maximum, duplicates, filter) in [(1, false, ScanFilter()), (7, false, ScanFilter(nameSubstring: "a")),
                                              (50, true, ScanFilter(services: [heartRate]))] {
            var scan = ScanAggregator(filter: filter, reportsDuplicates: duplicates, maximumDevices: maximum)
            var lastEmitted: [DeviceAddress: DiscoveredDevice] = [:]
            for _ in 0..<5_000 {
                let count = Int.random(in: 0...40, using: &rng)
                var data = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
                if count > 3, Bool.random(using: &rng) {
                    data = Array((name("a") + heartRateList + data).prefix(40))
                }
                let addr = UInt64.random(in: 0..<20, using: &rng)
                let report: AdvertisingReport
                if Bool.random(using: &rng) {
                    report = legacy(.init(rawValue: UInt8.random(in: 0...5, using: &rng)), addr, data)
                } else {
                    report = extended(addr, connectable: Bool.random(using: &rng), scanResponse: Bool.random(using: &rng),
                                      status: statuses.randomElement(using: &rng) ?? .complete,
                                      sid: UInt8.random(in: 0...2, using: &rng), data)
                }
                if let device = scan.receive(report) {
                    #expect(filter.matches(device))
                    #expect(device.address == report.deviceAddress)
                    if !duplicates, let previous = lastEmitted[device.address] {
                        let same = previous.advertisement == device.advertisement
                            && previous.scanResponse == device.scanResponse && previous.isConnectable == device.isConnectable
                        #expect(!same, "re-emitted an unchanged device")
                    }
                    lastEmitted[device.address] = device
                }
                // An evicted device is new when heard again: forget what was emitted for it.
                for key in lastEmitted.keys where scan.device(at: key) == nil { lastEmitted[key] = nil }
                #expect(scan.deviceCount <= maximum)
                #expect(scan.pendingAdvertisementCount <= ScanAggregator.maximumPendingAdvertisements)
            }
            #expect(scan.devices.count == scan.deviceCount)
        }
    }
}

@Suite("ScanAggregator: waiting for scan responses in an active scan")
struct ScanAggregatorScanResponseWaitTests {
    static let address = BluetoothAddress(0xC0_00_00_00_00_07)
    static let advertisement: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0x0D, 0x18]
    static let response: [UInt8] = [0x06, 0x09, 0x73, 0x74, 0x72, 0x61, 0x70]

    static func report(_ type: AdvertisingReport.LegacyEventType, _ data: [UInt8]) -> AdvertisingReport {
        AdvertisingReport(legacy: type, addressType: .random, address: address, rssi: -40, data: data[...])
    }

    @Test("a scannable device is shown once, with its scan response, not twice")
    func heldUntilScanResponse() {
        var aggregator = ScanAggregator(waitsForScanResponses: true)
        #expect(aggregator.receive(Self.report(.advInd, Self.advertisement)) == nil)
        let shown = aggregator.receive(Self.report(.scanRsp, Self.response))
        #expect(shown?.name == "strap")
        #expect(shown?.serviceUUIDs == [.heartRateService])
        #expect(aggregator.receive(Self.report(.advInd, Self.advertisement)) == nil, "nothing changed")
    }

    @Test("without a scan response the device is shown at its next advertisement")
    func releasedByNextAdvertisement() {
        var aggregator = ScanAggregator(waitsForScanResponses: true)
        #expect(aggregator.receive(Self.report(.advInd, Self.advertisement)) == nil)
        #expect(aggregator.receive(Self.report(.advInd, Self.advertisement))?.serviceUUIDs == [.heartRateService])
    }

    @Test("a scan response heard before the advertisement waits for it: the device is shown once, connectable, with both")
    func scanResponseFirstWaitsForAdvertisement() throws {
        var aggregator = ScanAggregator(waitsForScanResponses: true)
        #expect(aggregator.receive(Self.report(.scanRsp, Self.response)) == nil)
        let received = aggregator.receive(Self.report(.advInd, Self.advertisement))
        let shown = try #require(received)
        #expect(shown.isConnectable)
        #expect(shown.name == "strap")
        #expect(shown.serviceUUIDs == [.heartRateService])
        #expect(aggregator.receive(Self.report(.scanRsp, Self.response)) == nil, "nothing changed")
        // Reporting every report, the scan response alone is shown as it comes.
        var duplicates = ScanAggregator(reportsDuplicates: true, waitsForScanResponses: true)
        #expect(duplicates.receive(Self.report(.scanRsp, Self.response))?.name == "strap")
    }

    @Test("non-scannable advertisers and passive scans are shown at once")
    func notHeld() {
        var active = ScanAggregator(waitsForScanResponses: true)
        #expect(active.receive(Self.report(.advNonconnInd, Self.advertisement)) != nil)
        var passive = ScanAggregator(waitsForScanResponses: false)
        #expect(passive.receive(Self.report(.advInd, Self.advertisement)) != nil)
        var duplicates = ScanAggregator(reportsDuplicates: true, waitsForScanResponses: true)
        #expect(duplicates.receive(Self.report(.advInd, Self.advertisement)) != nil)
    }
}
