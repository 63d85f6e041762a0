import PropertyBased
import RawbleTestSupport
import RawbleWire
import Testing

private func returnError(_ opcode: HCIOpcode, _ parameters: [UInt8]) -> WireError? {
    do {
        _ = try CommandReturn.decode(opcode: opcode, returnParameters: parameters)
        return nil
    } catch {
        return error
    }
}

@Suite("Command Complete return parameters")
struct HCICommandReturnTests {
    @Test func localVersionFieldOrder() throws {
        // Status, HCI_Version 0x09 (5.0), HCI_Subversion 0x0100, LMP_Version 0x09,
        // Company 0x000F, LMP_Subversion 0x2209 (Core Vol 4 Part E 7.4.1).
        let result = try CommandReturn.decode(opcode: .readLocalVersionInformation, returnParameters: bytes("00 09 00 01 09 0F 00 09 22"))
        let expected = CommandReturn.LocalVersion(hciVersion: 9, hciSubversion: 0x0100, lmpVersion: 9, companyIdentifier: 0x000F, lmpSubversion: 0x2209)
        #expect(result == .localVersion(expected))
        #expect(result.opcode == .readLocalVersionInformation)
        #expect(result.status == .success)
        #expect(CommandReturn.LocalVersion.coreVersionName(9) == "5.0")
        #expect(CommandReturn.LocalVersion.coreVersionName(0x0D) == "5.4")
        #expect(expected.description.hasPrefix("Bluetooth 5.0"))
    }

    @Test func deviceAddressIsLittleEndian() throws {
        let result = try CommandReturn.decode(opcode: .readBDADDR, returnParameters: bytes("00 66 55 44 33 22 11"))
        #expect(result == .deviceAddress(BluetoothAddress("11:22:33:44:55:66")!))
    }

    @Test func bufferSizes() throws {
        #expect(try CommandReturn.decode(opcode: .readBufferSize, returnParameters: bytes("00 FD 03 40 08 00 00 00"))
            == .bufferSize(.init(aclDataPacketLength: 1021, synchronousDataPacketLength: 64, totalACLDataPackets: 8, totalSynchronousDataPackets: 0)))
        let v1 = try CommandReturn.decode(opcode: .leReadBufferSize, returnParameters: bytes("00 FB 00 0F"))
        #expect(v1 == .leBufferSize(.init(aclDataPacketLength: 251, totalACLDataPackets: 15)))
        #expect(v1.opcode == .leReadBufferSize)
        let v2 = try CommandReturn.decode(opcode: .leReadBufferSizeV2, returnParameters: bytes("00 FB 00 0F 64 00 04"))
        #expect(v2 == .leBufferSize(.init(aclDataPacketLength: 251, totalACLDataPackets: 15, iso: .init(dataPacketLength: 100, totalDataPackets: 4))))
        #expect(v2.opcode == .leReadBufferSizeV2)
        // Zero means "use Read Buffer Size".
        let shared = try CommandReturn.decode(opcode: .leReadBufferSize, returnParameters: bytes("00 00 00 00"))
        guard case .leBufferSize(let size) = shared else { Issue.record("not a buffer size"); return }
        #expect(!size.hasDedicatedBuffers)
    }

    @Test func leLocalFeaturesBit12IsExtendedAdvertising() throws {
        // 3F 19: bits 0-5, 8, 11, 12.
        let result = try CommandReturn.decode(opcode: .leReadLocalSupportedFeatures, returnParameters: bytes("00 3F 19 00 00 00 00 00 00"))
        guard case .leLocalFeatures(let features) = result else { Issue.record("not LE features"); return }
        #expect(features.contains(.extendedAdvertising))
        #expect(features.contains(.le2MPHY))
        #expect(features.contains(.leCodedPHY))
        #expect(features.contains([.encryption, .connectionParametersRequest, .extendedRejectIndication,
                                   .peripheralInitiatedFeaturesExchange, .ping, .dataPacketLengthExtension]))
        #expect(!features.contains(.llPrivacy))
        #expect(!features.contains(.periodicAdvertising))
        #expect(features.rawValue == 0x193F)
        #expect(features.names.count == 9)
        #expect(features.description.contains("LE Extended Advertising"))
    }

    @Test func lmpFeaturesLESupportedIsBit38() throws {
        // Octet 4 = 0x60: bit 37 BR/EDR Not Supported, bit 38 LE Supported (Controller).
        let result = try CommandReturn.decode(opcode: .readLocalSupportedFeatures, returnParameters: bytes("00 00 00 00 00 60 00 00 00"))
        guard case .localFeatures(let features) = result else { Issue.record("not LMP features"); return }
        #expect(features == [.leSupported, .brEDRNotSupported])
        #expect(features.description == "[BR/EDR Not Supported, LE Supported (Controller)]")
    }

    @Test func rssiIsSigned() throws {
        let rssi = try CommandReturn.decode(opcode: .readRSSI, returnParameters: bytes("00 40 00 C4"))
        #expect(rssi == .rssi(handle: 0x40, rssi: -60))
        #expect(rssi.description == "Read RSSI: handle 0x40, -60 dBm")
        #expect(CommandReturn.failure(.reset, status: .commandDisallowed, trailing: []).description
            == "Reset: Command Disallowed (0x0C)")
    }

    @Test func handleAndDataLengthReturns() throws {
        #expect(try CommandReturn.decode(opcode: .leSetDataLength, returnParameters: bytes("00 40 00"))
            == .connectionHandle(.leSetDataLength, handle: 0x40))
        #expect(try CommandReturn.decode(opcode: .leRemoteConnectionParameterRequestNegativeReply, returnParameters: bytes("00 01 00"))
            == .connectionHandle(.leRemoteConnectionParameterRequestNegativeReply, handle: 1))
        #expect(try CommandReturn.decode(opcode: .leReadMaximumDataLength, returnParameters: bytes("00 FB 00 48 08 FB 00 48 08"))
            == .maximumDataLength(.init(maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 251, maxRxTime: 2120)))
    }

    @Test func setCommandsReturnStatusOnly() throws {
        for opcode in HCICommandSamples.statusOnlyOpcodes {
            let result = try CommandReturn.decode(opcode: opcode, returnParameters: [0])
            #expect(result == .success(opcode))
            #expect(result.isSuccess)
            #expect(result.returnParameters == [0])
        }
    }

    @Test func statusOnlyFailureIsNotAnError() throws {
        // Controllers may send only the status byte when a command fails.
        let disallowed = try CommandReturn.decode(opcode: .leSetExtendedScanParameters, returnParameters: [0x0C])
        #expect(disallowed == .failure(.leSetExtendedScanParameters, status: .commandDisallowed, trailing: []))
        #expect(disallowed.status == .commandDisallowed)
        #expect(!disallowed.isSuccess)
        for opcode in HCICommandSamples.typedOpcodes + HCICommandSamples.handleOpcodes {
            let result = try CommandReturn.decode(opcode: opcode, returnParameters: [0x01])
            #expect(result == .failure(opcode, status: .unknownCommand, trailing: []))
            #expect(result.opcode == opcode)
        }
    }

    @Test func failureWithFullBlockKeepsTheBytes() throws {
        let result = try CommandReturn.decode(opcode: .readRSSI, returnParameters: bytes("02 40 00 00"))
        #expect(result == .failure(.readRSSI, status: .unknownConnectionIdentifier, trailing: [0x40, 0x00, 0x00]))
        #expect(result.returnParameters == bytes("02 40 00 00"))
    }

    @Test func malformedSuccessfulReturnsAreErrors() {
        #expect(returnError(.reset, [])?.kind == .truncated(needed: 1, available: 0))
        #expect(returnError(.reset, [0, 0])?.kind == .trailingBytes(count: 1))
        #expect(returnError(.readBDADDR, bytes("00 66 55 44 33 22"))?.kind == .truncated(needed: 6, available: 5))
        #expect(returnError(.readRSSI, bytes("00 40 00 C4 00"))?.offset == 4)
        #expect(returnError(.leReadBufferSizeV2, bytes("00 FB 00 0F"))?.context == "Command Complete (LE Read Buffer Size v2)")
        #expect(returnError(.readLocalSupportedCommands, [UInt8](repeating: 0, count: 64)) != nil)
        #expect(returnError(.readLocalSupportedCommands, [UInt8](repeating: 0, count: 66)) != nil)
    }

    @Test func unknownOpcodeKeepsEveryByte() throws {
        let vendor = try CommandReturn.decode(opcode: HCIOpcode(0xFC01), returnParameters: [0x00, 0xAA, 0xBB])
        #expect(vendor == .other(HCIOpcode(0xFC01), returnParameters: [0x00, 0xAA, 0xBB]))
        #expect(vendor.status == .success)
        #expect(vendor.returnParameters == [0x00, 0xAA, 0xBB])
        let failed = try CommandReturn.decode(opcode: HCIOpcode(0xFC01), returnParameters: [0x12])
        #expect(failed.status == .invalidParameters)
        // The "no operation" Command Complete (opcode 0) has no status at all.
        let nop = try CommandReturn.decode(opcode: HCIOpcode(0x0000), returnParameters: [])
        #expect(nop.status == nil)
        #expect(nop.returnParameters == [])
    }

    @Test func commandsAnsweredByCommandStatusDecodeAsOther() throws {
        let result = try CommandReturn.decode(opcode: .disconnect, returnParameters: [0x00])
        #expect(result == .other(.disconnect, returnParameters: [0x00]))
    }

    @Test func everyReturnRoundTrips() async throws {
        await propertyCheck(count: 2000, input: HCICommandSamples.commandReturns) { value throws in
            let decoded = try CommandReturn.decode(opcode: value.opcode, returnParameters: value.returnParameters)
            #expect(decoded == value)
            #expect(!value.description.isEmpty)
        }
    }

    @Test func decodingRandomReturnsNeverTraps() async {
        let opcodes = HCICommandSamples.returnOpcodes + [.disconnect, HCIOpcode(0xFC01)]
        let input = Generator(run: { rng in
            (opcodes.randomElement(using: &rng)!, HCICommandSamples.bytes(&rng, count: 0...70))
        })
        await propertyCheck(count: 3000, input: input) { opcode, parameters in
            if let value = try? CommandReturn.decode(opcode: opcode, returnParameters: parameters) {
                #expect(value.returnParameters == parameters)
                #expect(value.opcode == opcode)
            }
        }
    }
}

@Suite("Supported commands mask")
struct HCICommandSupportedCommandsTests {
    private func mask(octet: Int, bit: Int) -> SupportedCommands {
        var octets = [UInt8](repeating: 0, count: 64)
        octets[octet] = 1 << bit
        return SupportedCommands(octets: octets)!
    }

    /// Positions from the table in Core Vol 4 Part E 6.27.
    @Test(arguments: [
        (HCIOpcode.leSetExtendedScanParameters, 37, 5), (.leSetExtendedScanEnable, 37, 6),
        (.leExtendedCreateConnection, 37, 7), (.reset, 5, 7), (.setEventMask, 5, 6), (.disconnect, 0, 5),
        (.leCreateConnection, 26, 4), (.leSetScanParameters, 26, 2), (.leSetScanEnable, 26, 3),
        (.leReadBufferSizeV2, 41, 5), (.leReadBufferSize, 25, 1), (.readLocalVersionInformation, 14, 3),
        (.readBDADDR, 15, 1), (.readRSSI, 15, 5), (.setEventMaskPage2, 22, 2), (.writeLEHostSupport, 24, 6),
        (.leSetDataLength, 33, 6), (.leReadMaximumDataLength, 35, 3), (.leConnectionUpdate, 27, 2),
    ])
    func bitPositionMatchesTheSpecificationTable(opcode: HCIOpcode, octet: Int, bit: Int) throws {
        let position = try #require(SupportedCommands.position(of: opcode))
        #expect(position.octet == octet && position.bit == bit)
        let single = mask(octet: octet, bit: bit)
        #expect(single.supports(opcode))
        #expect(single.supportedOpcodes == [opcode])
    }

    @Test func onlyTheSetBitIsSupported() {
        let extendedScan = mask(octet: 37, bit: 5)
        #expect(extendedScan.supports(.leSetExtendedScanParameters))
        #expect(!extendedScan.supports(.leSetExtendedScanEnable))
        #expect(!extendedScan.supports(.leSetScanParameters))
        #expect(extendedScan.isSet(octet: 37, bit: 5))
        #expect(!extendedScan.isSet(octet: 64, bit: 0))
        #expect(!extendedScan.isSet(octet: 37, bit: 8))
    }

    @Test func everyKnownCommandHasADistinctBit() {
        let opcodes = HCICommandSamples.modelledOpcodes.map(HCIOpcode.init(rawValue:))
        var seen: Set<Int> = []
        for opcode in opcodes where opcode != .readLocalSupportedCommands {
            guard let position = SupportedCommands.position(of: opcode) else {
                Issue.record("no bit for \(opcode)")
                continue
            }
            #expect(seen.insert(position.octet * 8 + position.bit).inserted, "\(opcode)")
        }
        let all = SupportedCommands(supporting: opcodes)
        for opcode in opcodes { #expect(all.supports(opcode), "\(opcode)") }
        #expect(!all.supports(HCIOpcode(0xFC01)))
    }

    @Test func readLocalSupportedCommandsHasNoBitButIsImplied() {
        #expect(SupportedCommands.position(of: .readLocalSupportedCommands) == nil)
        #expect(SupportedCommands(octets: [UInt8](repeating: 0, count: 64))!.supports(.readLocalSupportedCommands))
    }

    @Test func maskMustBe64Octets() throws {
        #expect(SupportedCommands(octets: [UInt8](repeating: 0, count: 63)) == nil)
        var block = [UInt8](repeating: 0, count: 65)
        block[1 + 26] = 0x10
        let result = try CommandReturn.decode(opcode: .readLocalSupportedCommands, returnParameters: block)
        guard case .supportedCommands(let commands) = result else { Issue.record("not a mask"); return }
        #expect(commands.supports(.leCreateConnection))
        #expect(result.returnParameters == block)
    }
}

@Suite("Event masks")
struct HCICommandEventMaskTests {
    @Test func eventMaskBitsMatchTheSpecification() {
        // Core Vol 4 Part E 7.3.1: Disconnection Complete bit 4, Encryption Change bit 7,
        // LE Meta bit 61.
        #expect(EventMask.disconnectionComplete.rawValue == 0x10)
        #expect(EventMask.encryptionChange.rawValue == 0x80)
        #expect(EventMask.leMeta.rawValue == 0x2000_0000_0000_0000)
        #expect(EventMask.leCentralDefault.contains([.disconnectionComplete, .encryptionChange, .leMeta]))
        #expect(EventMask.leCentralDefault.isDisjoint(with: [.inquiryComplete, .connectionComplete, .roleChange]))
    }

    @Test func leEventMaskBitIsSubeventMinusOne() {
        #expect(LEEventMask.connectionComplete.rawValue == 1 << 0)
        #expect(LEEventMask.advertisingReport.rawValue == 1 << 1)
        #expect(LEEventMask.enhancedConnectionComplete.rawValue == 1 << 9)
        #expect(LEEventMask.extendedAdvertisingReport.rawValue == 1 << 12)
        #expect(LEEventMask.enhancedConnectionCompleteV2.rawValue == 1 << 0x28)
        #expect(LEEventMask(subevent: 0) == [])
        #expect(LEEventMask(subevent: 65) == [])
        #expect(LEEventMask(subevent: 64).rawValue == 1 << 63)
        let central = LEEventMask.leCentralDefault
        for event: LEEventMask in [.connectionComplete, .advertisingReport, .connectionUpdateComplete,
                                   .readRemoteFeaturesComplete, .remoteConnectionParameterRequest, .dataLengthChange,
                                   .enhancedConnectionComplete, .phyUpdateComplete, .extendedAdvertisingReport] {
            #expect(central.contains(event), "\(event)")
        }
    }

    @Test func descriptionsNameBitsAndNumberTheRest() {
        #expect(LEEventMask([.connectionComplete, .enhancedConnectionCompleteV2]).description
            == "[Connection Complete, Enhanced Connection Complete v2]")
        #expect(EventMask(rawValue: 1 << 4 | 1 << 62).description == "[Disconnection Complete, bit 62]")
        #expect(LEFeatures(rawValue: 1 << 12 | 1 << 50).description == "[LE Extended Advertising, bit 50]")
        #expect(EventMaskPage2.leCentralDefault.description == "[Authenticated Payload Timeout Expired]")
    }
}
