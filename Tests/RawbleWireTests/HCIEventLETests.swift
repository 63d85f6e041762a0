import Testing
import RawbleTestSupport
import RawbleWire

/// Decodes an LE Meta event, checks that re-encoding gives the same bytes, returns the subevent.
private func decodeLE(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> LEMetaEvent {
    let event = try HCIEventSamples.decodeRoundTrip(text, sourceLocation: sourceLocation)
    guard case .le(let le) = event else {
        Issue.record("not an LE Meta event: \(event)", sourceLocation: sourceLocation)
        return .unknown(subevent: 0, parameters: [])
    }
    return le
}

private func decodeError(_ text: String) throws -> WireError? { try HCIEventSamples.decodeError(text) }

@Suite("HCI LE Meta events")
struct HCIEventLEConnectionTests {
    @Test func leConnectionComplete() throws {
        let le = try decodeLE("3E 13 01 00 40 00 00 01 FF EE DD CC BB AA 18 00 00 00 C8 00 05")
        guard case .connectionComplete(let c) = le else { Issue.record("got \(le)"); return }
        #expect(c.kind == .legacy)
        #expect(c.status == .success)
        #expect(c.connectionHandle == 0x0040)
        #expect(c.role == .central)
        #expect(c.peer == DeviceAddress(BluetoothAddress(0xAABB_CCDD_EEFF), type: .random))
        #expect(c.connectionInterval == 0x18)
        #expect(c.connectionIntervalMilliseconds == 30)
        #expect(c.peripheralLatency == 0)
        #expect(c.supervisionTimeout == 200)
        #expect(c.supervisionTimeoutMilliseconds == 2000)
        #expect(c.centralClockAccuracy == 5)
        #expect(c.centralClockAccuracyPPM == 50)
        #expect(c.localResolvablePrivateAddress == nil)
        #expect(c.advertisingHandle == nil)
        #expect(le.name == "LE Connection Complete")
        #expect(HCIEvent.le(le).description == "LE Connection Complete (0x3E/0x01)")
    }

    @Test func leConnectionCompleteFailureKeepsItsStatus() throws {
        // Connection creation cancelled: status 0x02 Unknown Connection Identifier.
        let le = try decodeLE("3E 13 01 02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00")
        guard case .connectionComplete(let c) = le else { Issue.record("got \(le)"); return }
        #expect(c.status == .unknownConnectionIdentifier)
    }

    @Test func enhancedConnectionCompleteV1AddsResolvablePrivateAddresses() throws {
        let le = try decodeLE("""
            3E 1F 0A 00 41 00 01 02 66 55 44 33 22 11 00 00 00 00 00 00 01 02 03 04 05 46
            28 00 04 00 90 01 01
            """)
        guard case .connectionComplete(let c) = le else { Issue.record("got \(le)"); return }
        #expect(c.kind == .enhanced(localResolvablePrivateAddress: .any,
                                    peerResolvablePrivateAddress: BluetoothAddress(0x4605_0403_0201)))
        #expect(c.role == .peripheral)
        #expect(c.peerAddressType == .publicIdentity)
        #expect(c.peerAddress == BluetoothAddress(0x1122_3344_5566))
        #expect(c.peerResolvablePrivateAddress?.randomKind == .resolvablePrivate)
        #expect(c.connectionIntervalMilliseconds == 50)
        #expect(c.peripheralLatency == 4)
        #expect(c.supervisionTimeoutMilliseconds == 4000)
        #expect(c.centralClockAccuracyPPM == 250)
        #expect(c.syncHandle == nil)
        #expect(le.subeventCode == 0x0A)
        #expect(le.name == "LE Enhanced Connection Complete")
    }

    @Test func enhancedConnectionCompleteV2AddsAdvertisingAndSyncHandles() throws {
        let le = try decodeLE("""
            3E 22 29 00 42 00 00 00 FF EE DD CC BB AA 11 11 11 11 11 51 00 00 00 00 00 00
            06 00 00 00 F4 01 07 FF FF FF
            """)
        guard case .connectionComplete(let c) = le else { Issue.record("got \(le)"); return }
        #expect(c.advertisingHandle == 0xFF)
        #expect(c.syncHandle == 0xFFFF)
        #expect(c.localResolvablePrivateAddress == BluetoothAddress(0x5111_1111_1111))
        #expect(c.peerResolvablePrivateAddress == .any)
        #expect(c.connectionIntervalMilliseconds == 7.5)
        #expect(c.centralClockAccuracyPPM == 20)
        #expect(le.subeventCode == 0x29)
        #expect(le.name == "LE Enhanced Connection Complete v2")
    }

    @Test func connectionCompleteVariantsRejectEachOthersLayouts() throws {
        // A v1 body under the enhanced subevent code, and an enhanced body under 0x01.
        #expect(try decodeError("3E 13 0A 00 40 00 00 01 FF EE DD CC BB AA 18 00 00 00 C8 00 05") != nil)
        let long = try #require(try decodeError("""
            3E 1F 01 00 41 00 01 02 66 55 44 33 22 11 00 00 00 00 00 00 01 02 03 04 05 46
            28 00 04 00 90 01 01
            """))
        #expect(long.context == "HCI LE Connection Complete event")
        #expect(long.kind == .trailingBytes(count: 12))
        // v2 missing its sync handle.
        #expect(try decodeError("""
            3E 20 29 00 42 00 00 00 FF EE DD CC BB AA 11 11 11 11 11 51 00 00 00 00 00 00
            06 00 00 00 F4 01 07 FF
            """)?.kind == .truncated(needed: 2, available: 0))
    }

    @Test func unknownRoleAndReservedClockAccuracyAreKept() throws {
        let le = try decodeLE("3E 13 01 00 40 00 07 01 FF EE DD CC BB AA 18 00 00 00 C8 00 09")
        guard case .connectionComplete(let c) = le else { Issue.record("got \(le)"); return }
        #expect(c.role == .other(7))
        #expect(c.role.rawValue == 7)
        #expect(c.centralClockAccuracy == 9)
        #expect(c.centralClockAccuracyPPM == nil)
    }

    @Test func connectionUpdateComplete() throws {
        let le = try decodeLE("3E 0A 03 00 40 00 06 00 00 00 F4 01")
        #expect(le == .connectionUpdateComplete(.init(
            status: .success, connectionHandle: 0x40, connectionInterval: 6, peripheralLatency: 0,
            supervisionTimeout: 500)))
        guard case .connectionUpdateComplete(let u) = le else { return }
        #expect(u.connectionIntervalMilliseconds == 7.5)
        #expect(u.supervisionTimeoutMilliseconds == 5000)
        #expect(try decodeError("3E 09 03 00 40 00 06 00 00 00 F4") != nil)
    }

    @Test func readRemoteFeaturesComplete() throws {
        let le = try decodeLE("3E 0C 04 00 40 00 FD 01 00 00 00 00 00 80")
        #expect(le == .readRemoteFeaturesComplete(.init(status: .success, connectionHandle: 0x40,
                                                        features: 0x8000_0000_0000_01FD)))
        #expect(le.name == "LE Read Remote Features Complete")
    }

    @Test func longTermKeyRequest() throws {
        let le = try decodeLE("3E 0D 05 40 00 01 02 03 04 05 06 07 08 34 12")
        #expect(le == .longTermKeyRequest(.init(connectionHandle: 0x40, random: 0x0807_0605_0403_0201, encryptedDiversifier: 0x1234)))
        #expect(throws: WireError.self) { try HCIEvent.decode(bytes("3E 0C 05 40 00 01 02 03 04 05 06 07 08 34")) }
    }

    @Test func remoteConnectionParameterRequest() throws {
        let le = try decodeLE("3E 0B 06 40 00 06 00 0C 00 00 00 F4 01")
        #expect(le == .remoteConnectionParameterRequest(.init(
            connectionHandle: 0x40, intervalMin: 6, intervalMax: 12, maxLatency: 0, timeout: 500)))
    }

    @Test func dataLengthChange() throws {
        let le = try decodeLE("3E 0B 07 40 00 FB 00 48 08 1B 00 48 01")
        #expect(le == .dataLengthChange(.init(connectionHandle: 0x40, maxTXOctets: 251, maxTXTime: 2120,
                                              maxRXOctets: 27, maxRXTime: 328)))
    }

    @Test func phyUpdateComplete() throws {
        let le = try decodeLE("3E 06 0C 00 40 00 02 03")
        #expect(le == .phyUpdateComplete(.init(status: .success, connectionHandle: 0x40, txPHY: .le2M, rxPHY: .leCoded)))
        #expect(LEPHY.le2M.name == "LE 2M")
        #expect(LEPHY(9).name == "0x09")
        #expect(try decodeError("3E 05 0C 00 40 00 02") != nil)
    }

    @Test func unknownSubeventsKeepTheirParameters() throws {
        // LE Generate DHKey Complete (0x09): status, then the DHKey; not decoded here.
        let le = try decodeLE("3E 0D 09 00 01 02 03 04 05 06 07 08 09 0A 0B")
        #expect(le == .unknown(subevent: 0x09, parameters: [0x00, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0x0A, 0x0B]))
        #expect(le.name == "LE Generate DHKey Complete")
        let unnamed = try decodeLE("3E 02 7F AA")
        #expect(unnamed == .unknown(subevent: 0x7F, parameters: [0xAA]))
        #expect(unnamed.name == "LE Unknown Subevent (0x7F)")
    }

    @Test func leMetaEventNeedsASubeventCode() throws {
        let error = try #require(try decodeError("3E 00"))
        #expect(error.context == "HCI LE Meta event")
        #expect(error.kind == .truncated(needed: 1, available: 0))
    }

    @Test func subeventNamesComeFromTheTable() {
        #expect(LEMetaEvent.name(ofSubevent: 0x01) == "LE Connection Complete")
        #expect(LEMetaEvent.name(ofSubevent: 0x0D) == "LE Extended Advertising Report")
        #expect(LEMetaEvent.name(ofSubevent: 0x29) == "LE Enhanced Connection Complete v2")
        #expect(LEMetaEvent.name(ofSubevent: 0x2A) == "LE CIS Established v2")
        #expect(LEMetaEvent.name(ofSubevent: 0x35) == "LE Frame Space Update Complete")
        #expect(LEMetaEvent.name(ofSubevent: 0x00) == nil)
        #expect(LEMetaEvent.name(ofSubevent: 0xFF) == nil)
    }
}

@Suite("HCI LE advertising reports")
struct HCIEventAdvertisingReportTests {
    static let threeReports = """
        3E 28 02 03
        00 01 FF EE DD CC BB AA 03 02 01 06 C5
        04 00 66 55 44 33 22 11 05 04 09 41 42 43 B0
        03 01 01 00 00 00 00 C0 00 7F
        """

    @Test func advertisingReportWithThreeReportsLaidOutOneAfterAnother() throws {
        let le = try decodeLE(Self.threeReports)
        guard case .advertisingReport(let reports) = le else { Issue.record("got \(le)"); return }
        try #require(reports.count == 3)

        #expect(reports[0].legacyEventType == .advInd)
        #expect(reports[0].deviceAddress == DeviceAddress(BluetoothAddress(0xAABB_CCDD_EEFF), type: .random))
        #expect(Array(reports[0].data) == [0x02, 0x01, 0x06])
        #expect(reports[0].rssi == -59)
        #expect(reports[0].isConnectable && reports[0].isScannable && !reports[0].isScanResponse)

        #expect(reports[1].format == .legacy(.scanRsp))
        #expect(reports[1].addressType == .public)
        #expect(reports[1].address == BluetoothAddress(0x1122_3344_5566))
        #expect(Array(reports[1].data) == [0x04, 0x09, 0x41, 0x42, 0x43])
        #expect(reports[1].rssi == -80)
        #expect(reports[1].isScanResponse && !reports[1].isConnectable)

        #expect(reports[2].legacyEventType == .advNonconnInd)
        #expect(reports[2].address == BluetoothAddress(0xC000_0000_0001))
        #expect(reports[2].data.isEmpty)
        #expect(reports[2].rssi == nil)
        #expect(reports[2].rawRSSI == 127)
        #expect(!reports[2].isConnectable && !reports[2].isScannable)

        for report in reports {
            #expect(report.extended == nil)
            #expect(report.txPower == nil)
            #expect(report.dataStatus == .complete)
            #expect(report.eventType.contains(.legacyPDU))
        }
        #expect(le.name == "LE Advertising Report")
    }

    @Test func rssiAndTXPowerUse127ForNotAvailable() {
        var report = AdvertisingReport(legacy: .advInd, addressType: .public, address: .any, rssi: nil, data: [])
        #expect(report.rawRSSI == 127)
        report.rssi = -20
        #expect(report.rawRSSI == -20)
        var fields = AdvertisingReport.ExtendedFields(eventType: [], txPower: 4)
        #expect(fields.rawTXPower == 4)
        fields.txPower = nil
        #expect(fields.rawTXPower == 127)
        #expect(fields.sid == nil)
    }

    @Test func reportDataIsASliceOfTheInput() throws {
        let event = bytes(Self.threeReports)
        guard case .le(.advertisingReport(let reports)) = try HCIEvent.decode(event) else {
            Issue.record("not an advertising report"); return
        }
        // Report 2's data starts after header (2), subevent, count, report 1 (13), and 9 bytes.
        #expect(reports[1].data.startIndex == 2 + 2 + 13 + 9)
        #expect(reports[1].data.elementsEqual(event[26..<31]))
    }

    @Test func legacyEventTypesAndTheirProperties() {
        typealias T = AdvertisingReport.LegacyEventType
        #expect((0...5).map { T(rawValue: $0) } == [.advInd, .advDirectInd, .advScanInd, .advNonconnInd, .scanRsp, .other(5)])
        #expect([T.advInd, .advDirectInd, .advScanInd, .advNonconnInd, .scanRsp, .other(9)].map(\.name)
            == ["ADV_IND", "ADV_DIRECT_IND", "ADV_SCAN_IND", "ADV_NONCONN_IND", "SCAN_RSP", "0x09"])
        #expect([T.advInd, .advDirectInd, .advScanInd, .advNonconnInd, .scanRsp].map(\.isConnectable)
            == [true, true, false, false, false])
        #expect(T.advDirectInd.isDirected && !T.advInd.isDirected)
        #expect(T.other(7).rawValue == 7)
    }

    @Test func unknownLegacyEventTypeIsKept() throws {
        let le = try decodeLE("3E 0C 02 01 07 01 FF EE DD CC BB AA 00 C5")
        guard case .advertisingReport(let reports) = le else { Issue.record("got \(le)"); return }
        #expect(reports.first?.legacyEventType == .other(7))
    }

    @Test func reportCountPromisingMoreReportsThanPresentIsTruncated() throws {
        let error = try #require(try decodeError("3E 0C 02 02 00 01 FF EE DD CC BB AA 00 C5"))
        #expect(error.context == "HCI LE Advertising Report event")
        #expect(error.kind == .truncated(needed: 1, available: 0))
        #expect(error.offset == 14)
    }

    @Test func dataLengthPastTheEndIsTruncated() throws {
        let error = try #require(try decodeError("3E 0C 02 01 00 01 FF EE DD CC BB AA 05 C5"))
        #expect(error.kind == .truncated(needed: 5, available: 1))
        #expect(error.offset == 13)
    }

    @Test func bytesAfterTheLastReportAreRejected() throws {
        let error = try #require(try decodeError("3E 0D 02 01 00 01 FF EE DD CC BB AA 00 C5 00"))
        #expect(error.kind == .trailingBytes(count: 1))
        #expect(error.offset == 14)
    }

    @Test func reportCutInsideItsAddress() throws {
        #expect(try decodeError("3E 05 02 01 00 01 FF")
            == WireError(.truncated(needed: 6, available: 1), at: 6, in: "HCI LE Advertising Report event"))
        #expect(try decodeError("3E 01 02")
            == WireError(.truncated(needed: 1, available: 0), at: 3, in: "HCI LE Advertising Report event"))
    }

    @Test func zeroReportsIsAnEmptyList() throws {
        #expect(try decodeLE("3E 02 02 00") == .advertisingReport([]))
    }

    static let twoExtendedReports = """
        3E 39 0D 02
        13 00 00 66 55 44 33 22 11 01 00 FF 7F C8 00 00 00 00 00 00 00 00 00 03 02 01 06
        22 00 01 01 02 03 04 05 C6 03 02 05 F6 A6 50 00 01 AA BB CC DD EE 4F 04 03 03 0D 18
        """

    @Test func extendedAdvertisingReportWithTwoReports() throws {
        let le = try decodeLE(Self.twoExtendedReports)
        guard case .extendedAdvertisingReport(let reports) = le else { Issue.record("got \(le)"); return }
        try #require(reports.count == 2)

        let legacy = reports[0]
        let legacyFields = try #require(legacy.extended)
        #expect(legacyFields.eventType == [.connectable, .scannable, .legacyPDU])
        #expect(legacy.legacyEventType == .advInd)
        #expect(legacy.isConnectable && legacy.isScannable && !legacy.isDirected)
        #expect(legacy.deviceAddress == DeviceAddress(BluetoothAddress(0x1122_3344_5566), type: .public))
        #expect(legacyFields.primaryPHY == .le1M)
        #expect(legacyFields.secondaryPHY == .noPackets)
        #expect(legacyFields.sid == nil)
        #expect(legacy.txPower == nil)
        #expect(legacy.rssi == -56)
        #expect(legacyFields.periodicAdvertisingInterval == 0)
        #expect(legacyFields.directTarget == nil)
        #expect(Array(legacy.data) == [0x02, 0x01, 0x06])
        #expect(legacy.dataStatus == .complete)

        let fragment = reports[1]
        let fields = try #require(fragment.extended)
        #expect(fields.eventType.rawValue == 0x0022)
        #expect(fields.eventType.intersection([.connectable, .scannable, .directed, .scanResponse, .legacyPDU]) == .scannable)
        #expect(fields.eventType.dataStatus == .incompleteMoreToCome)
        #expect(fragment.dataStatus == .incompleteMoreToCome)
        #expect(fragment.legacyEventType == nil)
        #expect(!fragment.isConnectable && fragment.isScannable && !fragment.isScanResponse)
        #expect(fragment.deviceAddress == DeviceAddress(BluetoothAddress(0xC605_0403_0201), type: .random))
        #expect(fields.primaryPHY == .leCoded)
        #expect(fields.secondaryPHY == .le2M)
        #expect(fields.sid == 5)
        #expect(fragment.txPower == -10)
        #expect(fragment.rssi == -90)
        #expect(fields.periodicAdvertisingInterval == 0x50)
        #expect(fields.directAddressType == .random)
        #expect(fields.directAddress == BluetoothAddress(0x4FEE_DDCC_BBAA))
        #expect(fields.directTarget == nil, "the directed bit is clear")
        #expect(Array(fragment.data) == [0x03, 0x03, 0x0D, 0x18])
        #expect(le.name == "LE Extended Advertising Report")
    }

    @Test func extendedReportEventTypeBits() {
        typealias E = AdvertisingReport.ExtendedEventType
        #expect(E.connectable.rawValue == 1 && E.scannable.rawValue == 2 && E.directed.rawValue == 4)
        #expect(E.scanResponse.rawValue == 8 && E.legacyPDU.rawValue == 16)
        #expect(E(rawValue: 0x00).dataStatus == .complete)
        #expect(E(rawValue: 0x20).dataStatus == .incompleteMoreToCome)
        #expect(E(rawValue: 0x40).dataStatus == .incompleteTruncated)
        #expect(E(rawValue: 0x60).dataStatus == .reserved)
        // The specification's table of legacy PDUs in extended reports.
        #expect(E(rawValue: 0x13).legacyEventType == .advInd)
        #expect(E(rawValue: 0x15).legacyEventType == .advDirectInd)
        #expect(E(rawValue: 0x12).legacyEventType == .advScanInd)
        #expect(E(rawValue: 0x10).legacyEventType == .advNonconnInd)
        #expect(E(rawValue: 0x1B).legacyEventType == .scanRsp)
        #expect(E(rawValue: 0x1A).legacyEventType == .scanRsp)
        #expect(E(rawValue: 0x03).legacyEventType == nil, "legacy bit clear")
        #expect(E(rawValue: 0x17).legacyEventType == nil, "not a combination the spec lists")
        for type in [AdvertisingReport.LegacyEventType.advInd, .advDirectInd, .advScanInd, .advNonconnInd, .scanRsp] {
            #expect(E(legacy: type).legacyEventType == type)
        }
    }

    @Test func directedAnonymousExtendedReport() throws {
        // Connectable directed, anonymous advertiser (address type 0xFF), direct address type random.
        let le = try decodeLE("""
            3E 1A 0D 01 05 00 FF 00 00 00 00 00 00 01 01 02 7F D8 00 00 01 66 55 44 33 22 D1 00
            """)
        guard case .extendedAdvertisingReport(let reports) = le, let report = reports.first else {
            Issue.record("got \(le)"); return
        }
        #expect(report.addressType == .anonymous)
        #expect(report.isDirected && report.isConnectable)
        #expect(report.extended?.directTarget == DeviceAddress(BluetoothAddress(0xD122_3344_5566), type: .random))
        #expect(report.data.isEmpty)
    }

    @Test func truncatedAndInconsistentExtendedReports() throws {
        // Count 2, one report present.
        let count = try #require(try decodeError("""
            3E 1D 0D 02 13 00 00 66 55 44 33 22 11 01 00 FF 7F C8 00 00 00 00 00 00 00 00 00 03 02 01 06
            """))
        #expect(count.context == "HCI LE Extended Advertising Report event")
        #expect(count.kind == .truncated(needed: 2, available: 0))
        // Data length 4, 3 bytes present.
        let data = try #require(try decodeError("""
            3E 1D 0D 01 13 00 00 66 55 44 33 22 11 01 00 FF 7F C8 00 00 00 00 00 00 00 00 00 04 02 01 06
            """))
        #expect(data.kind == .truncated(needed: 4, available: 3))
        #expect(data.offset == 28)
        // Cut inside the fixed part: the address needs 6 bytes, 3 are left.
        #expect(try decodeError("3E 08 0D 01 13 00 00 66 55 44")
            == WireError(.truncated(needed: 6, available: 3), at: 7, in: "HCI LE Extended Advertising Report event"))
    }

    @Test func reportsReencodeIntoTheOtherEventKind() throws {
        // A legacy report written into an extended event comes back as a legacy-PDU extended report.
        let report = AdvertisingReport(legacy: .advInd, addressType: .random,
                                       address: BluetoothAddress(0xC1C2_C3C4_C5C6), rssi: -40, data: [0x02, 0x01, 0x06])
        let event = HCIEvent.le(.extendedAdvertisingReport([report]))
        guard case .le(.extendedAdvertisingReport(let back)) = try HCIEvent.decode(event.encoded) else {
            Issue.record("not an extended report"); return
        }
        #expect(back.first?.legacyEventType == .advInd)
        #expect(back.first?.extended?.primaryPHY == .le1M)
        #expect(back.first?.address == report.address)
        #expect(back.first?.data == report.data)
        #expect(back.first?.rssi == -40)

        // And an extended one written into a legacy event keeps its nearest legacy type.
        let fields = AdvertisingReport.ExtendedFields(eventType: [.connectable, .directed], primaryPHY: .leCoded)
        let extended = AdvertisingReport(format: .extended(fields), addressType: .public,
                                         address: BluetoothAddress(1), rawRSSI: -70, data: [])
        guard case .le(.advertisingReport(let legacy)) = try HCIEvent.decode(HCIEvent.le(.advertisingReport([extended])).encoded) else {
            Issue.record("not a legacy report"); return
        }
        #expect(legacy.first?.legacyEventType == .advDirectInd)
    }
}
