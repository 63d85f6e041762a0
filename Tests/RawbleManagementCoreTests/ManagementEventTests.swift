import PropertyBased
import RawbleManagementCore
import RawbleTestSupport
import RawbleWire
import Testing

private func decodeError(_ packet: [UInt8]) -> WireError? { ManagementSamples.decodeError(ManagementEvent.self, packet) }

private let strap = ManagementSamples.strap
private let strapBytes = ManagementSamples.strapBytes

/// Events of a fixed size, written out by hand from BlueZ `doc/mgmt-api.txt` ("Packet
/// Structures": event code, controller index, parameter length, all u16 LE; each event's
/// section for its parameters), with the value each decodes to.
private let fixedSizeVectors: [(String, ManagementEvent)] = [
    // Command Status 0x0002: Command_Opcode (2), Status (1): Set Powered, Busy.
    ("02 00 00 00 03 00 05 00 0A", .commandStatus(index: 0, opcode: 0x0005, status: .busy)),
    // Controller Error 0x0003: Error_Code (1).
    ("03 00 00 00 01 00 2A", .controllerError(index: 0, code: 0x2A)),
    // Index Added 0x0004 and Index Removed 0x0005: no parameters.
    ("04 00 01 00 00 00", .indexAdded(index: 1)),
    ("05 00 01 00 00 00", .indexRemoved(index: 1)),
    // New Settings 0x0006: Current_Settings (4): Powered (bit 0), BR/EDR (7), Low Energy (9).
    ("06 00 00 00 04 00 81 02 00 00", .newSettings(index: 0, settings: [.powered, .basicRateEDR, .lowEnergy])),
    // Class Of Device Changed 0x0007: Class_Of_Device (3).
    ("07 00 00 00 03 00 0C 01 1C", .classOfDeviceChanged(index: 0, classOfDevice: ClassOfDevice(rawValue: 0x1C010C))),
    // Device Disconnected 0x000C: Address (6), Address_Type (1), Reason (1): by the remote host.
    ("0C 00 00 00 08 00 \(strapBytes) 02 03",
     .deviceDisconnected(index: 0, address: strap, addressType: .leRandom, reason: ManagementDisconnectionReason.remoteHost)),
    // Connect Failed 0x000D: Address, Address_Type, Status (1): Connect Failed.
    ("0D 00 00 00 08 00 \(strapBytes) 02 04", .connectFailed(index: 0, address: strap, addressType: .leRandom, status: .connectFailed)),
    // User Confirmation Request 0x000F: Address, Address_Type, Confirm_Hint (1), Value (4).
    ("0F 00 00 00 0C 00 \(strapBytes) 02 01 00 00 00 00",
     .userConfirmationRequest(index: 0, address: strap, addressType: .leRandom, confirmHint: 1, value: 0)),
    ("0F 00 00 00 0C 00 \(strapBytes) 01 00 40 E2 01 00",
     .userConfirmationRequest(index: 0, address: strap, addressType: .lePublic, confirmHint: 0, value: 123_456)),
    // User Passkey Request 0x0010: Address, Address_Type.
    ("10 00 00 00 07 00 \(strapBytes) 01", .userPasskeyRequest(index: 0, address: strap, addressType: .lePublic)),
    // Authentication Failed 0x0011: Address, Address_Type, Status (1): Authentication Failed.
    ("11 00 00 00 08 00 \(strapBytes) 02 05",
     .authenticationFailed(index: 0, address: strap, addressType: .leRandom, status: .authenticationFailed)),
    // Discovering 0x0013: Address_Type (1), Discovering (1).
    ("13 00 00 00 02 00 06 01", .discovering(index: 0, addressTypes: .le, discovering: true)),
    ("13 00 00 00 02 00 06 00", .discovering(index: 0, addressTypes: .le, discovering: false)),
    // Device Unpaired 0x0016: Address, Address_Type.
    ("16 00 00 00 07 00 \(strapBytes) 02", .deviceUnpaired(index: 0, address: strap, addressType: .leRandom)),
    // Passkey Notify 0x0017: Address, Address_Type, Passkey (4), Entered (1).
    ("17 00 00 00 0C 00 \(strapBytes) 02 40 E2 01 00 03",
     .passkeyNotify(index: 0, address: strap, addressType: .leRandom, passkey: 123_456, entered: 3)),
]

/// Device Found 0x0012 (`doc/mgmt-api.txt`): Address (6), Address_Type (1), RSSI (1), Flags (4),
/// EIR_Data_Length (2), EIR_Data: flags 06, service 180D, name "HR" (11 bytes; 25 in all).
private let deviceFoundVector = "12 00 00 00 19 00 \(strapBytes) 02 C4 00 00 00 00 0B 00 02 01 06 03 03 0D 18 03 09 48 52"

/// Device Connected 0x000B: Address, Address_Type, Flags (4: Initiated Connection, bit 3),
/// EIR_Data_Length (2), EIR_Data (flags 06).
private let deviceConnectedVector = "0B 00 00 00 10 00 \(strapBytes) 02 08 00 00 00 03 00 02 01 06"

@Suite("Management events: documentation vectors")
struct ManagementEventVectorTests {
    @Test func fixedSizeEventsDecodeAndReencode() throws {
        for (hex, expected) in fixedSizeVectors {
            let packet = bytes(hex)
            let event = try ManagementEvent.decode(packet)
            #expect(event == expected, "\(hex)")
            #expect(event.encoded == packet, "\(event)")
            #expect(event.code == UInt16(packet[0]) | UInt16(packet[1]) << 8)
        }
    }

    @Test func commandCompleteKeepsReturnParametersRaw() throws {
        // Command Complete 0x0001, <non-controller>: Command_Opcode 0x0001 (Read Version),
        // Status 0, Return_Parameters: Version 1, Revision 22.
        let packet = bytes("01 00 FF FF 06 00 01 00 00 01 16 00")
        let event = try ManagementEvent.decode(packet)
        #expect(event == .commandComplete(index: ManagementIndex.none, opcode: ManagementOpcode.readVersion,
                                          status: .success, returnParameters: [0x01, 0x16, 0x00]))
        #expect(event.encoded == packet)
        guard case let .commandComplete(_, _, _, returned) = event else { return }
        #expect(try ManagementVersion.decode(returnParameters: returned) == ManagementVersion(version: 1, revision: 22))
        #expect(event.description
            == "Command Complete (0x0001) non-controller: Read Management Version Information (0x0001), Success (0x00)")
        // A failed command's Command Complete may carry its return parameters too.
        let failed = try ManagementEvent.decode(bytes("01 00 00 00 04 00 23 00 0A 06"))
        #expect(failed == .commandComplete(index: 0, opcode: ManagementOpcode.startDiscovery, status: .busy, returnParameters: [0x06]))
    }

    @Test func deviceFoundCarriesAdvertisingData() throws {
        let packet = bytes(deviceFoundVector)
        let event = try ManagementEvent.decode(packet)
        #expect(event.encoded == packet)
        guard case let .deviceFound(index, found) = event else { Issue.record("got \(event)"); return }
        #expect(index == 0)
        #expect(found.address == strap)
        #expect(found.addressType == .leRandom)
        #expect(found.deviceAddress == DeviceAddress(strap, type: .random))
        #expect(found.rssi == -60)
        #expect(found.measuredRSSI == -60)
        #expect(found.flags == [])
        #expect(found.isConnectable)
        #expect(found.data.count == 11)
        #expect(found.advertisingData.localName == "HR")
        #expect(found.advertisingData.serviceUUIDs == [BluetoothUUID(0x180D)])
        #expect(found.advertisingData.flags == .generalDiscoverableLEOnly)
    }

    @Test func deviceFoundFlagsAndMissingRSSI() throws {
        // RSSI 127 (not available); Flags Not Connectable (bit 2) and Scan Response (bit 5); no EIR.
        let event = try ManagementEvent.decode(bytes("12 00 00 00 0E 00 \(strapBytes) 01 7F 24 00 00 00 00 00"))
        guard case let .deviceFound(_, found) = event else { Issue.record("got \(event)"); return }
        #expect(found.measuredRSSI == nil)
        #expect(found.flags == [.notConnectable, .scanResponse])
        #expect(!found.isConnectable)
        #expect(found.deviceAddress == DeviceAddress(strap, type: .public))
        #expect(found.flags.description == "[Not Connectable, Scan Response]")
        // A BR/EDR device has no LE address.
        let classic = ManagementDeviceFound(address: strap, addressType: .bredr, rssi: -40)
        #expect(classic.deviceAddress == nil)
    }

    @Test func deviceConnectedCarriesFlagsAndData() throws {
        let packet = bytes(deviceConnectedVector)
        let event = try ManagementEvent.decode(packet)
        #expect(event == .deviceConnected(index: 0, ManagementDeviceConnected(
            address: strap, addressType: .leRandom, flags: .initiatedConnection, data: [0x02, 0x01, 0x06])))
        #expect(event.encoded == packet)
    }

    @Test func otherEventsAreKeptRaw() throws {
        // Extended Controller Information Changed 0x0025 is not modelled.
        let packet = bytes("25 00 00 00 02 00 AB CD")
        let event = try ManagementEvent.decode(packet)
        #expect(event == .other(code: 0x0025, index: 0, parameters: [0xAB, 0xCD]))
        #expect(event.name == "Extended Controller Information Changed")
        #expect(event.encoded == packet)
        #expect(try ManagementEvent.decode(bytes("99 00 00 00 00 00")).name == "0x0099")
    }

    @Test func namesAndDescriptions() {
        #expect(ManagementEvent.indexAdded(index: 0).description == "Index Added (0x0004) hci0")
        #expect(ManagementEvent.controllerError(index: 1, code: 0x2A).description == "Controller Error (0x0003) hci1: 2A")
        #expect(ManagementEventCode.name(of: 0x0033) == "Connection Subrate")
        #expect(ManagementEventCode.name(of: 0x0034) == nil)
        #expect(ManagementEventCode.name(of: 0) == nil)
        #expect(ManagementStatus.permissionDenied.description == "Permission Denied (0x14)")
        #expect(ManagementStatus(0x15).name == "Unknown Status")
        #expect(ManagementSettings([.powered, .lowEnergy]).description == "[Powered, Low Energy]")
        #expect(ManagementSettings(rawValue: 1 << 30).names == ["bit 30"])
        #expect(ManagementAddressType.leRandom.description == "LE Random (0x02)")
        #expect(ManagementDisconnectionReason.name(of: 3) == "Connection terminated by remote host")
        #expect(ManagementDisconnectionReason.name(of: 9) == "Unknown reason 0x09")
    }

    @Test func settingsBitsFollowTheDocumentation() {
        // Read Controller Information: Current_Settings and Supported_Settings bits 0-25.
        let bits: [(ManagementSettings, Int)] = [
            (.powered, 0), (.connectable, 1), (.fastConnectable, 2), (.discoverable, 3), (.bondable, 4),
            (.linkLevelSecurity, 5), (.secureSimplePairing, 6), (.basicRateEDR, 7), (.highSpeed, 8),
            (.lowEnergy, 9), (.advertising, 10), (.secureConnections, 11), (.debugKeys, 12), (.privacy, 13),
            (.controllerConfiguration, 14), (.staticAddress, 15), (.phyConfiguration, 16), (.widebandSpeech, 17),
            (.cisCentral, 18), (.cisPeripheral, 19), (.isoBroadcaster, 20), (.syncReceiver, 21), (.llPrivacy, 22),
            (.pastSender, 23), (.pastReceiver, 24), (.shorterConnectionInterval, 25),
        ]
        for (setting, bit) in bits { #expect(setting.rawValue == 1 << bit, "bit \(bit)") }
        #expect(ManagementSettings(rawValue: 0x03FF_FFFF).names.count == 26)
        #expect(!ManagementSettings(rawValue: 0x03FF_FFFF).names.contains { $0.hasPrefix("bit ") })
    }

    @Test func statusCodesFollowTheDocumentation() {
        let statuses: [ManagementStatus] = [
            .success, .unknownCommand, .notConnected, .failed, .connectFailed, .authenticationFailed, .notPaired,
            .noResources, .timeout, .alreadyConnected, .busy, .rejected, .notSupported, .invalidParameters,
            .disconnected, .notPowered, .cancelled, .invalidIndex, .rfKilled, .alreadyPaired, .permissionDenied,
        ]
        #expect(statuses.map(\.rawValue) == Array(0x00...0x14))
        #expect(statuses.allSatisfy { $0.name != "Unknown Status" })
        #expect(ManagementStatus.success.isSuccess && !ManagementStatus.busy.isSuccess)
    }

    @Test func addressTypesConvertToAndFromHCI() {
        #expect(ManagementAddressType.lePublic.leAddressType == .public)
        #expect(ManagementAddressType.leRandom.leAddressType == .random)
        #expect(ManagementAddressType.bredr.leAddressType == nil)
        #expect(ManagementAddressType(7).leAddressType == nil)
        #expect(ManagementAddressType(LEAddressType.public) == .lePublic)
        #expect(ManagementAddressType(LEAddressType.randomIdentity) == .leRandom)
        #expect(ManagementAddressType(LEAddressType.anonymous) == nil)
        #expect(ManagementAddressType.leRandom.isLE && !ManagementAddressType.bredr.isLE)
    }
}

@Suite("Management events: malformed packets")
struct ManagementEventMalformedTests {
    @Test func lengthFieldMustMatchTheBytesPresent() {
        let short = decodeError(bytes("06 00 00 00 04 00 81 02"))
        #expect(short?.kind == .truncated(needed: 4, available: 2))
        #expect(short?.offset == 6)
        #expect(short?.context == "Management event parameters (length field 4)")
        let long = decodeError(bytes("04 00 00 00 00 00 00"))
        #expect(long?.kind == .trailingBytes(count: 1))
        #expect(long?.offset == 6)
        #expect(decodeError(bytes("04 00 00"))?.kind == .truncated(needed: 2, available: 1))
        #expect(decodeError(bytes("04 00 00 00 00"))?.context == "Management event header")
    }

    /// Every cut of every fixed-size event is rejected: by the header when the length field is
    /// kept, by the event's own size check when the length field follows the cut.
    @Test func everyTruncationOfEveryFixedSizeEventIsRejected() {
        for (hex, event) in fixedSizeVectors {
            let packet = bytes(hex)
            for count in 0..<packet.count {
                #expect(decodeError(Array(packet.prefix(count))) != nil, "\(event.name) cut to \(count) bytes")
            }
            let parameters = Array(packet.dropFirst(ManagementPacket.headerCount))
            for count in 0..<parameters.count {
                let cut = ManagementSamples.header(code: event.code, index: event.index, length: count) + parameters.prefix(count)
                let error = decodeError(cut)
                if case .truncated? = error?.kind {} else {
                    Issue.record("\(event.name) with \(count) of \(parameters.count) parameter bytes: \(String(describing: error))")
                }
                #expect(error?.context == "Management \(event.name) event")
            }
            let longer = ManagementSamples.header(code: event.code, index: event.index, length: parameters.count + 1) + parameters + [0]
            let error = decodeError(longer)
            #expect(error?.kind == .trailingBytes(count: 1), "\(event.name) with an extra byte")
            #expect(error?.offset == packet.count)
        }
    }

    @Test func variableEventsNeedTheirFixedPart() {
        // Command Complete needs opcode and status; Device Found 14 bytes before its EIR data;
        // Device Connected 13.
        for (hex, fixed) in [("01 00 00 00 03 00 05 00 00", 3), (deviceFoundVector, 14), (deviceConnectedVector, 13)] {
            let packet = bytes(hex)
            let parameters = Array(packet.dropFirst(ManagementPacket.headerCount))
            let code = UInt16(packet[0])
            for count in 0..<fixed {
                let cut = ManagementSamples.header(code: code, index: 0, length: count) + parameters.prefix(count)
                #expect(decodeError(cut) != nil, "0x\(code) with \(count) bytes")
            }
        }
    }

    @Test func eirLengthMustMatchTheRest() {
        // Device Found with EIR_Data_Length 12 but 11 bytes of data, and 10 with 11.
        let short = decodeError(bytes("12 00 00 00 19 00 \(strapBytes) 02 C4 00 00 00 00 0C 00 02 01 06 03 03 0D 18 03 09 48 52"))
        #expect(short?.kind == .truncated(needed: 12, available: 11))
        #expect(short?.offset == 20)
        #expect(short?.context == "Management Device Found event")
        let long = decodeError(bytes("12 00 00 00 19 00 \(strapBytes) 02 C4 00 00 00 00 0A 00 02 01 06 03 03 0D 18 03 09 48 52"))
        #expect(long?.kind == .trailingBytes(count: 1))
        #expect(long?.offset == 30)
        // Device Connected, EIR length 4 with 3 bytes.
        let connected = decodeError(bytes("0B 00 00 00 10 00 \(strapBytes) 02 08 00 00 00 04 00 02 01 06"))
        #expect(connected?.kind == .truncated(needed: 4, available: 3))
    }

    @Test func reservedDiscoveringValuesAreRejected() {
        let error = decodeError(bytes("13 00 00 00 02 00 06 02"))
        #expect(error?.kind == .invalidValue("reserved Discovering value 0x02"))
        #expect(error?.offset == 7)
    }
}

@Suite("Management events: round trips")
struct ManagementEventRoundTripTests {
    @Test func everyEventRoundTrips() async {
        await propertyCheck(count: 2000, input: ManagementSamples.events) { event throws in
            let packet = event.encoded
            let parameters = event.parameters
            #expect(packet.count == ManagementPacket.headerCount + parameters.count)
            #expect(Int(packet[4]) | Int(packet[5]) << 8 == parameters.count)
            #expect(UInt16(packet[0]) | UInt16(packet[1]) << 8 == event.code)
            #expect(UInt16(packet[2]) | UInt16(packet[3]) << 8 == event.index)
            let decoded = try ManagementEvent.decode(packet)
            #expect(decoded == event)
            #expect(decoded.encoded == packet)
            #expect(try ManagementEvent.decode(code: event.code, index: event.index, parameters: parameters[...]) == event)
            _ = event.description
        }
    }

    @Test func everyTypedCaseIsCovered() throws {
        let seed = TestSeed.make()
        var rng = SplitMix64(state: seed)
        var codes: Set<UInt16> = []
        for index in 0..<ManagementSamples.eventCaseCount - 1 {
            let event = ManagementSamples.event(index: index, &rng)
            if case .other = event { Issue.record("index \(index) gave other; \(TestSeed.replayHint(seed))") }
            codes.insert(event.code)
            #expect(try ManagementEvent.decode(event.encoded) == event, "\(TestSeed.replayHint(seed))")
            #expect(ManagementEventCode.name(of: event.code) == event.name)
        }
        #expect(codes == ManagementSamples.modelledEventCodes)
    }

    @Test func longestEventsEncodeWithinTheLengthField() throws {
        let data = [UInt8](repeating: 0x55, count: 70_000)
        let found = ManagementEvent.deviceFound(index: 0, ManagementDeviceFound(address: strap, addressType: .leRandom, rssi: -1, data: data))
        let packet = found.encoded
        #expect(packet.count == ManagementPacket.maximumCount)
        guard case let .deviceFound(_, decoded) = try ManagementEvent.decode(packet) else { Issue.record("not Device Found"); return }
        #expect(decoded.data.count == ManagementDeviceFound.maximumDataCount)
        let connected = ManagementEvent.deviceConnected(index: 0, ManagementDeviceConnected(address: strap, addressType: .leRandom, data: data))
        #expect(connected.encoded.count == ManagementPacket.maximumCount)
        #expect(throws: Never.self) { try ManagementEvent.decode(connected.encoded) }
        let complete = ManagementEvent.commandComplete(index: 0, opcode: 1, status: .success, returnParameters: data)
        #expect(complete.encoded.count == ManagementPacket.maximumCount)
        #expect(throws: Never.self) { try ManagementEvent.decode(complete.encoded) }
        let other = ManagementEvent.other(code: 0x0100, index: 0, parameters: data)
        #expect(other.encoded.count == ManagementPacket.maximumCount)
        #expect(throws: WireError.self) {
            try ManagementEvent.decode(code: 0x0100, index: 0, parameters: data[...])
        }
    }

    @Test func decodingRandomBytesNeverTraps() async {
        await propertyCheck(count: 3000, input: ManagementSamples.randomBytes(maxCount: 60)) { input in
            if let event = try? ManagementEvent.decode(input) {
                #expect(event.encoded == input)
            }
        }
    }

    /// Random parameters behind every modelled code, with a correct length field.
    @Test func decodingRandomParametersOfModelledCodesNeverTraps() async {
        let packets = ManagementSamples.packets(codes: ManagementSamples.modelledEventCodes.sorted(), maxParameters: 40)
        await propertyCheck(count: 4000, input: packets) { packet throws in
            if let event = try? ManagementEvent.decode(packet) {
                #expect(event.encoded == packet)
                #expect(try ManagementEvent.decode(event.encoded) == event)
            }
        }
    }

    /// Device Found bodies whose EIR length is often right, so decoding reaches the data.
    @Test func randomDeviceFoundBodiesNeverTrap() async {
        let input = Generator(run: { rng in
            let data = ManagementSamples.bytes(&rng, count: 0...40)
            let declared = data.count + Int.random(in: -2...2, using: &rng)
            let fixed = ManagementSamples.bytes(&rng, count: 12...12)
            return fixed + [UInt8(truncatingIfNeeded: declared), UInt8(truncatingIfNeeded: declared >> 8)] + data
        })
        await propertyCheck(count: 2000, input: input) { parameters in
            let packet = ManagementSamples.header(code: ManagementEventCode.deviceFound, index: 0, length: parameters.count) + parameters
            if let event = try? ManagementEvent.decode(packet) {
                #expect(event.encoded == packet)
                guard case let .deviceFound(_, found) = event else { Issue.record("got \(event)"); return }
                _ = found.advertisingData.structures
            }
        }
    }
}
