import Foundation
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

/// Legacy and extended advertising commands, their returns and events, built field by field
/// from Core Vol 4 Part E 7.8.6–7.8.10, 7.8.52–7.8.60 and 7.7.65.18.
@Suite("HCI advertising: specification vectors")
struct HCIAdvertisingVectorTests {
    @Test func readAdvertisingPhysicalChannelTxPowerAndItsReturn() throws {
        let command = HCICommand.leReadAdvertisingPhysicalChannelTxPower
        #expect(command.encoded == bytes("07 20 00"))
        #expect(try HCICommand.decode(bytes("07 20 00")) == command)
        #expect(command.name == "LE Read Advertising Physical Channel Tx Power")
        let result = try CommandReturn.decode(opcode: .leReadAdvertisingPhysicalChannelTxPower, returnParameters: bytes("00 F6"))
        #expect(result == .advertisingTxPower(-10))
        #expect(result.returnParameters == bytes("00 F6"))
        #expect(result.description == "LE Read Advertising Physical Channel Tx Power: -10 dBm")
    }

    /// Connectable and scannable undirected (ADV_IND), 100–150 ms, own random address.
    @Test func legacyAdvertisingParametersFieldOrder() throws {
        let command = HCICommand.leSetAdvertisingParameters(.init(
            intervalMin: 0x00A0, intervalMax: 0x00F0, type: .connectableUndirected, ownAddressType: .random))
        let packet = bytes("06 20 0F  A0 00  F0 00  00  01  00  00 00 00 00 00 00  07  00")
        #expect(command.encoded == packet)
        #expect(try HCICommand.decode(packet) == command)
    }

    @Test func legacyDataAndScanResponseArePaddedTo31Bytes() throws {
        let flags = bytes("02 01 06")
        let command = HCICommand.leSetAdvertisingData(try #require(HCICommand.AdvertisingPayload(flags)))
        #expect(command.encoded == bytes("08 20 20 03 02 01 06") + [UInt8](repeating: 0, count: 28))
        let response = HCICommand.leSetScanResponseData(.empty)
        #expect(response.encoded == bytes("09 20 20 00") + [UInt8](repeating: 0, count: 31))
        #expect(HCICommand.leSetAdvertisingEnable(true).encoded == bytes("0A 20 01 01"))
    }

    @Test func setAdvertisingSetRandomAddress() throws {
        let command = HCICommand.leSetAdvertisingSetRandomAddress(handle: 1, address: BluetoothAddress("C0:11:22:33:44:55")!)
        #expect(command.encoded == bytes("35 20 07 01 55 44 33 22 11 C0"))
        #expect(try HCICommand.decode(command.encoded) == command)
        #expect(try CommandReturn.decode(opcode: .leSetAdvertisingSetRandomAddress, returnParameters: bytes("00")) == .success(.leSetAdvertisingSetRandomAddress))
    }

    /// Legacy PDUs (connectable, scannable) on set 0, 100 ms, all channels, own random,
    /// no TX power preference (0x7F), LE 1M both, SID 0, no scan request notifications.
    @Test func extendedAdvertisingParametersFieldTable() throws {
        let packet = bytes("""
            36 20 19
            00  13 00  A0 00 00  A0 00 00  07  01  00  00 00 00 00 00 00  00  7F  01  00  01  00  00
            """)
        let expected = HCICommand.leSetExtendedAdvertisingParameters(.init(
            handle: 0, properties: [.connectable, .scannable, .legacy], intervalMin: 0xA0, intervalMax: 0xA0,
            ownAddressType: .random))
        #expect(expected.encoded == packet)
        let decoded = try HCICommand.decode(packet)
        #expect(decoded == expected)
        guard case .leSetExtendedAdvertisingParameters(let parameters) = decoded else {
            Issue.record("not LE Set Extended Advertising Parameters")
            return
        }
        #expect(parameters.intervalMinMilliseconds == 100)
        #expect(parameters.txPower == HCICommand.ExtendedAdvertisingParameters.noTxPowerPreference)
        #expect(parameters.properties.description == "[connectable, scannable, legacy]")
        // The controller answers with the TX power it chose.
        let result = try CommandReturn.decode(opcode: .leSetExtendedAdvertisingParameters, returnParameters: bytes("00 F9"))
        #expect(result == .selectedTxPower(-7))
        #expect(result.returnParameters == bytes("00 F9"))
        // A 24-bit interval uses all three bytes.
        let long = HCICommand.leSetExtendedAdvertisingParameters(.init(
            handle: 2, properties: [.connectable], intervalMin: 0x01_2345, intervalMax: 0xFF_FFFF, primaryPHY: .leCoded,
            secondaryPHY: .le2M, sid: 5, scanRequestNotifications: true))
        #expect(Array(long.encoded[6...11]) == bytes("45 23 01 FF FF FF"))
        #expect(try HCICommand.decode(long.encoded) == long)
        // Reserved Scan_Request_Notification_Enable values are refused, not mangled.
        #expect(throws: WireError.self) { try HCICommand.decode(Array(packet.dropLast()) + [0x02]) }
        // 24 bytes is a truncated block.
        #expect(throws: WireError.self) { try HCICommand.decode(bytes("36 20 18") + Array(packet[3..<27])) }
    }

    @Test func extendedAdvertisingDataOneCompleteFragment() throws {
        let fragment = try #require(HCICommand.AdvertisingDataFragment(handle: 0, operation: .complete, data: bytes("02 01 06")))
        let command = HCICommand.leSetExtendedAdvertisingData(fragment)
        #expect(command.encoded == bytes("37 20 07 00 03 01 03 02 01 06"))
        #expect(try HCICommand.decode(command.encoded) == command)
        let response = HCICommand.leSetExtendedScanResponseData(try #require(HCICommand.AdvertisingDataFragment(
            handle: 3, operation: .complete, fragmentPreference: .mayFragment, data: [])))
        #expect(response.encoded == bytes("38 20 04 03 03 00 00"))
        #expect(try HCICommand.decode(response.encoded) == response)
        // The length byte must match the bytes present.
        #expect(throws: WireError.self) { try HCICommand.decode(bytes("37 20 07 00 03 01 04 02 01 06")) }
        #expect(throws: WireError.self) { try HCICommand.decode(bytes("37 20 07 00 03 01 02 02 01 06")) }
    }

    @Test func dataLongerThanOneCommandIsFragmentedFirstIntermediateLast() throws {
        #expect(HCICommand.AdvertisingDataFragment(handle: 0, operation: .complete, data: [UInt8](repeating: 1, count: 252)) == nil)
        let exact = HCICommand.AdvertisingDataFragment.fragments(of: [UInt8](repeating: 1, count: 251), handle: 0)
        #expect(exact.map(\.operation) == [.complete])
        let data = (0..<600).map { UInt8(truncatingIfNeeded: $0) }
        let fragments = HCICommand.AdvertisingDataFragment.fragments(of: data, handle: 4)
        #expect(fragments.map(\.operation) == [.firstFragment, .intermediateFragment, .lastFragment])
        #expect(fragments.map(\.data.count) == [251, 251, 98])
        #expect(fragments.flatMap(\.data) == data)
        #expect(fragments.allSatisfy { $0.handle == 4 })
        let two = HCICommand.AdvertisingDataFragment.fragments(of: [UInt8](repeating: 0, count: 252), handle: 0)
        #expect(two.map(\.operation) == [.firstFragment, .lastFragment])
        // Every fragment's command fits the 255-byte parameter block.
        for fragment in fragments {
            let command = HCICommand.leSetExtendedAdvertisingData(fragment)
            #expect(try HCICommand.decode(command.encoded) == command)
        }
    }

    /// Sets are laid out one after the other: handle, duration, maximum events.
    @Test func extendedAdvertisingEnableInterleavesTheSets() throws {
        let command = HCICommand.leSetExtendedAdvertisingEnable(try #require(HCICommand.ExtendedAdvertisingEnable(
            enable: true, sets: [.init(handle: 0), .init(handle: 1, duration: 500, maximumEvents: 5)])))
        #expect(command.encoded == bytes("39 20 0A 01 02 00 00 00 00 01 F4 01 05"))
        #expect(try HCICommand.decode(command.encoded) == command)
        #expect(HCICommand.leSetExtendedAdvertisingEnable(.disableAll).encoded == bytes("39 20 02 00 00"))
        #expect(HCICommand.ExtendedAdvertisingEnable(enable: true, sets: Array(repeating: .init(handle: 0), count: 64)) == nil)
        // A set count the bytes do not hold is a truncated command.
        #expect(throws: WireError.self) { try HCICommand.decode(bytes("39 20 06 01 02 00 00 00 00")) }
    }

    @Test func readLimitsRemoveAndClear() throws {
        #expect(HCICommand.leReadMaximumAdvertisingDataLength.encoded == bytes("3A 20 00"))
        #expect(try CommandReturn.decode(opcode: .leReadMaximumAdvertisingDataLength, returnParameters: bytes("00 72 06"))
            == .maximumAdvertisingDataLength(1650))
        #expect(HCICommand.leReadNumberOfSupportedAdvertisingSets.encoded == bytes("3B 20 00"))
        #expect(try CommandReturn.decode(opcode: .leReadNumberOfSupportedAdvertisingSets, returnParameters: bytes("00 10"))
            == .supportedAdvertisingSets(16))
        #expect(HCICommand.leRemoveAdvertisingSet(handle: 2).encoded == bytes("3C 20 01 02"))
        #expect(try HCICommand.decode(bytes("3C 20 01 02")) == .leRemoveAdvertisingSet(handle: 2))
        #expect(HCICommand.leClearAdvertisingSets.encoded == bytes("3D 20 00"))
        #expect(try HCICommand.decode(bytes("3D 20 00")) == .leClearAdvertisingSets)
        // A failure keeps its status whatever follows it; a short success is malformed.
        #expect(try CommandReturn.decode(opcode: .leReadMaximumAdvertisingDataLength, returnParameters: bytes("0C"))
            == .failure(.leReadMaximumAdvertisingDataLength, status: .commandDisallowed, trailing: []))
        #expect(throws: WireError.self) {
            try CommandReturn.decode(opcode: .leReadMaximumAdvertisingDataLength, returnParameters: bytes("00 72"))
        }
    }

    @Test func advertisingSetTerminatedEvent() throws {
        let packet = bytes("3E 06 12 00 01 40 00 03")
        let event = try HCIEvent.decode(packet)
        #expect(event == .le(.advertisingSetTerminated(.init(
            status: .success, advertisingHandle: 1, connectionHandle: 0x0040, completedEvents: 3))))
        #expect(event.encoded == packet)
        #expect(event.name == "LE Advertising Set Terminated")
        let timeout = try HCIEvent.decode(bytes("3E 06 12 3C 00 00 00 10"))
        guard case .le(.advertisingSetTerminated(let ended)) = timeout else {
            Issue.record("got \(timeout)")
            return
        }
        #expect(ended.status == .advertisingTimeout)
        #expect(throws: WireError.self) { try HCIEvent.decode(bytes("3E 05 12 00 01 40 00")) }
        #expect(throws: WireError.self) { try HCIEvent.decode(bytes("3E 07 12 00 01 40 00 03 00")) }
    }

    /// The role byte of LE (Enhanced) Connection Complete: 0x01 is the peripheral role.
    @Test func connectionCompleteRolePeripheral() throws {
        let legacy = try HCIEvent.decode(bytes("3E 13 01 00 40 00 01 01 55 44 33 22 11 C0 18 00 00 00 48 00 00"))
        guard case .le(.connectionComplete(let complete)) = legacy else {
            Issue.record("got \(legacy)")
            return
        }
        #expect(complete.role == .peripheral)
        #expect(complete.peer == DeviceAddress(BluetoothAddress("C0:11:22:33:44:55")!, type: .random))
        let enhanced = try HCIEvent.decode(bytes("""
            3E 1F 0A 00 41 00 01 00 66 55 44 33 22 11
            00 00 00 00 00 00  00 00 00 00 00 00  18 00 00 00 48 00 00
            """))
        guard case .le(.connectionComplete(let second)) = enhanced else {
            Issue.record("got \(enhanced)")
            return
        }
        #expect(second.role == .peripheral)
        #expect(second.connectionHandle == 0x0041)
    }

    @Test func hostEventMaskAddsAdvertisingSetTerminated() {
        #expect(LEEventMask.leHostDefault.contains(.advertisingSetTerminated))
        #expect(LEEventMask.leHostDefault.contains(LEEventMask.leCentralDefault))
        #expect(LEEventMask.advertisingSetTerminated.rawValue == 1 << 17)
    }
}

/// The same packets written to a btsnoop file and read by Wireshark's decoder (tshark): it must
/// see the same fields. Without tshark it fails (run Scripts/bootstrap).
@Suite("HCI advertising read by tshark")
struct HCIAdvertisingTsharkTests {
    static func command(_ command: HCICommand) -> H4Packet { H4Packet(type: .command, bytes: command.encoded) }
    static func event(_ event: HCIEvent) -> H4Packet { H4Packet(type: .event, bytes: event.encoded) }

    static func records() throws -> [BtsnoopRecord] {
        let address = BluetoothAddress("C0:11:22:33:44:55")!
        let data = try #require(HCICommand.AdvertisingDataFragment(handle: 1, operation: .complete, data: bytes("02 01 06")))
        let packets: [(H4Packet, BtsnoopRecord.Direction)] = [
            (command(.leSetAdvertisingSetRandomAddress(handle: 1, address: address)), .sent),
            (command(.leSetExtendedAdvertisingParameters(.init(
                handle: 1, properties: [.connectable, .scannable, .legacy], intervalMin: 0xA0, intervalMax: 0xF0,
                ownAddressType: .random, txPower: -4, secondaryPHY: .le2M, sid: 3))), .sent),
            (event(.commandComplete(.init(numHCICommandPackets: 1, opcode: .leSetExtendedAdvertisingParameters,
                                                    returnParameters: CommandReturn.selectedTxPower(-7).returnParameters[...]))), .received),
            (command(.leSetExtendedAdvertisingData(data)), .sent),
            (command(.leSetExtendedAdvertisingEnable(try #require(HCICommand.ExtendedAdvertisingEnable(
                enable: true, sets: [.init(handle: 1), .init(handle: 2, duration: 500, maximumEvents: 5)])))), .sent),
            (event(.commandComplete(.init(numHCICommandPackets: 1, opcode: .leReadMaximumAdvertisingDataLength,
                                                    returnParameters: CommandReturn.maximumAdvertisingDataLength(1650).returnParameters[...]))), .received),
            (event(.commandComplete(.init(numHCICommandPackets: 1, opcode: .leReadNumberOfSupportedAdvertisingSets,
                                                    returnParameters: CommandReturn.supportedAdvertisingSets(16).returnParameters[...]))), .received),
            (event(.le(.advertisingSetTerminated(.init(status: .success, advertisingHandle: 1,
                                                                 connectionHandle: 0x0040, completedEvents: 3)))), .received),
        ]
        return packets.enumerated().map { i, entry in
            BtsnoopRecord(packet: entry.0, direction: entry.1, unixMicroseconds: 1_700_000_000_000_000 + Int64(i) * 1_000)
        }
    }

    @Test func tsharkReadsTheAdvertisingCommandsAndEvents() async throws {
        let tshark = try TestRequirements.tshark()
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-adv-\(UUID().uuidString).btsnoop")
        try Data(BtsnoopWriter.file(datalink: .hciUART, records: try Self.records())).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }

        let fields = [
            "bthci_cmd.opcode", "bthci_cmd.advertising_handle", "bthci_cmd.bd_addr", "bthci_cmd.advertising_properties",
            "bthci_cmd.le_advts_interval_min", "bthci_cmd.le_advts_interval_max", "bthci_cmd.le_own_address_type",
            "bthci_cmd.power_level", "bthci_cmd.secondary_advertising_phy", "bthci_cmd.advertising_sid",
            "bthci_cmd.adv_data_operation", "bthci_cmd.le_data_length", "bthci_cmd.adv_num_sets", "bthci_cmd.adv_duration",
            "bthci_cmd.max_extended_advertising_events", "bthci_evt.le_meta_subevent", "bthci_evt.opcode",
            "bthci_evt.max_adv_data_length", "bthci_evt.num_supported_adv_sets", "bthci_evt.num_compl_ext_adv_events",
            "bthci_evt.connection_handle", "bthci_evt.adv_handle",
        ]
        let arguments = ["-r", url.path, "-T", "fields", "-E", "separator=|"] + fields.flatMap { ["-e", $0] }
        let (output, status) = try await within(seconds: 120) { try await runToEnd(tshark, arguments) }
        #expect(status == 0)
        let rows = String(decoding: output, as: UTF8.self).split(separator: "\n").map {
            $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        }
        try #require(rows.count == 8, "tshark rows: \(rows)")
        try #require(rows.allSatisfy { $0.count == fields.count })
        func field(_ frame: Int, _ name: String) -> String {
            rows[frame - 1][fields.firstIndex(of: name) ?? 0]
        }

        #expect(field(1, "bthci_cmd.opcode") == "0x2035")
        #expect(field(1, "bthci_cmd.advertising_handle") == "0x01")
        #expect(field(1, "bthci_cmd.bd_addr") == "c0:11:22:33:44:55")

        #expect(field(2, "bthci_cmd.opcode") == "0x2036")
        #expect(field(2, "bthci_cmd.advertising_properties") == "0x0013")
        #expect(field(2, "bthci_cmd.le_advts_interval_min") == "160")
        #expect(field(2, "bthci_cmd.le_advts_interval_max") == "240")
        #expect(field(2, "bthci_cmd.le_own_address_type") == "0x01")
        #expect(field(2, "bthci_cmd.power_level") == "-4")
        #expect(field(2, "bthci_cmd.secondary_advertising_phy") == "0x02")
        #expect(field(2, "bthci_cmd.advertising_sid") == "0x03")

        #expect(field(3, "bthci_evt.opcode") == "0x2036")

        #expect(field(4, "bthci_cmd.opcode") == "0x2037")
        #expect(field(4, "bthci_cmd.adv_data_operation") == "0x03")
        #expect(field(4, "bthci_cmd.le_data_length") == "3")

        #expect(field(5, "bthci_cmd.opcode") == "0x2039")
        #expect(field(5, "bthci_cmd.adv_num_sets") == "2")
        #expect(field(5, "bthci_cmd.advertising_handle") == "0x01,0x02")
        #expect(field(5, "bthci_cmd.adv_duration") == "0,500")
        #expect(field(5, "bthci_cmd.max_extended_advertising_events") == "0,5")

        #expect(field(6, "bthci_evt.max_adv_data_length") == "1650")
        #expect(field(7, "bthci_evt.num_supported_adv_sets") == "16")

        #expect(field(8, "bthci_evt.le_meta_subevent") == "0x12")
        #expect(field(8, "bthci_evt.adv_handle") == "0x01")
        #expect(field(8, "bthci_evt.connection_handle") == "0x0040")
        #expect(field(8, "bthci_evt.num_compl_ext_adv_events") == "3")
    }
}
