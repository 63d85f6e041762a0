import PropertyBased
import RawbleTestSupport
import RawbleWire
import Testing

private func decodeError(_ packet: [UInt8]) -> WireError? {
    do {
        _ = try HCICommand.decode(packet)
        return nil
    } catch {
        return error
    }
}

@Suite("HCI commands: specification vectors")
struct HCICommandVectorTests {
    @Test func resetIsOpcode0C03WithNoParameters() throws {
        #expect(HCICommand.reset.encoded == bytes("03 0C 00"))
        #expect(try HCICommand.decode(bytes("03 0C 00")) == .reset)
        #expect(HCICommand.reset.name == "Reset")
    }

    @Test func leSetScanEnableWithDuplicateFilter() throws {
        let command = HCICommand.leSetScanEnable(enable: true, filterDuplicates: true)
        #expect(command.encoded == bytes("0C 20 02 01 01"))
        #expect(try HCICommand.decode(bytes("0C 20 02 01 01")) == command)
        #expect(try HCICommand.decode(bytes("0C 20 02 00 00")) == .leSetScanEnable(enable: false, filterDuplicates: false))
    }

    /// Built field by field from Core Vol 4 Part E 7.8.12: scan interval 0x0060 (60 ms),
    /// window 0x0030 (30 ms), filter policy 0, peer random C0:11:22:33:44:55, own public,
    /// interval 0x0018–0x0028 (30–50 ms), latency 0, timeout 0x01F4 (5 s), CE 0–0.
    @Test func leCreateConnectionFieldTable() throws {
        let packet = bytes("""
            0D 20 19
            60 00  30 00  00  01  55 44 33 22 11 C0  00
            18 00  28 00  00 00  F4 01  00 00  00 00
            """)
        let expected = HCICommand.leCreateConnection(.init(
            scanInterval: 0x0060, scanWindow: 0x0030, filterPolicy: .peerAddress,
            peerAddressType: .random, peerAddress: BluetoothAddress("C0:11:22:33:44:55")!,
            ownAddressType: .public,
            connection: .init(intervalMin: 0x0018, intervalMax: 0x0028, maxLatency: 0, supervisionTimeout: 0x01F4)))
        #expect(expected.encoded == packet)
        let decoded = try HCICommand.decode(packet)
        #expect(decoded == expected)
        guard case .leCreateConnection(let create) = decoded else {
            Issue.record("not LE Create Connection")
            return
        }
        #expect(create.scanIntervalMilliseconds == 60)
        #expect(create.scanWindowMilliseconds == 30)
        #expect(create.connection.intervalMinMilliseconds == 30)
        #expect(create.connection.intervalMaxMilliseconds == 50)
        #expect(create.connection.supervisionTimeoutMilliseconds == 5000)
        #expect(create.peer == DeviceAddress(BluetoothAddress("C0:11:22:33:44:55")!, type: .random))
    }

    @Test func disconnectCarriesHandleAndReason() throws {
        let command = HCICommand.disconnect(handle: 0x0040, reason: .remoteUserTerminatedConnection)
        #expect(command.encoded == bytes("06 04 03 40 00 13"))
        #expect(try HCICommand.decode(bytes("06 04 03 40 00 13")) == command)
    }

    /// Active scan, 11.25 ms interval and window, own random address, accept all: the
    /// parameters BlueZ uses for active discovery.
    @Test func leSetScanParametersFieldOrder() throws {
        let command = HCICommand.leSetScanParameters(.init(type: .active, interval: 0x0012, window: 0x0012, ownAddressType: .random))
        #expect(command.encoded == bytes("0B 20 07 01 12 00 12 00 01 00"))
        #expect(try HCICommand.decode(command.encoded) == command)
        guard case .leSetScanParameters(let p) = command else { return }
        #expect(p.intervalMilliseconds == 11.25)
    }

    @Test func leSetExtendedScanParametersHasOneBlockPerPHYBit() throws {
        let command = HCICommand.leSetExtendedScanParameters(.init(
            le1M: .init(type: .active, interval: 0x0060, window: 0x0030),
            leCoded: .init(type: .passive, interval: 0x0120, window: 0x0090)))
        let packet = bytes("41 20 0D 00 00 05  01 60 00 30 00  00 20 01 90 00")
        #expect(command.encoded == packet)
        #expect(try HCICommand.decode(packet) == command)

        let only1M = bytes("41 20 08 01 00 01  01 10 00 10 00")
        let decoded = try HCICommand.decode(only1M)
        #expect(decoded == .leSetExtendedScanParameters(.init(
            ownAddressType: .random, le1M: .init(type: .active, interval: 0x10, window: 0x10))))
    }

    @Test func leSetExtendedScanEnableFields() throws {
        let command = HCICommand.leSetExtendedScanEnable(.init(enable: true, filterDuplicates: .enabled, duration: 500, period: 0))
        #expect(command.encoded == bytes("42 20 06 01 01 F4 01 00 00"))
        #expect(try HCICommand.decode(command.encoded) == command)
        guard case .leSetExtendedScanEnable(let e) = command else { return }
        #expect(e.durationMilliseconds == 5000)
    }

    /// Core Vol 4 Part E 7.8.66: filter policy, own type, peer type, peer address,
    /// Initiating_PHYs, then 16 bytes per PHY.
    @Test func leExtendedCreateConnectionWith1MAndCoded() throws {
        let connection = HCICommand.ConnectionParameters(intervalMin: 0x18, intervalMax: 0x28, maxLatency: 0, supervisionTimeout: 0x1F4)
        let command = HCICommand.leExtendedCreateConnection(.init(
            peerAddressType: .public, peerAddress: BluetoothAddress(0x00_1B_DC_06_07_08),
            le1M: .init(scanInterval: 0x60, scanWindow: 0x60, connection: connection),
            leCoded: .init(scanInterval: 0x180, scanWindow: 0x180, connection: connection)))
        let packet = bytes("""
            43 20 2A  00 00 00  08 07 06 DC 1B 00  05
            60 00 60 00  18 00 28 00 00 00 F4 01 00 00 00 00
            80 01 80 01  18 00 28 00 00 00 F4 01 00 00 00 00
            """)
        #expect(command.encoded == packet)
        #expect(try HCICommand.decode(packet) == command)
    }

    @Test func leSetDataLengthAndRemoteParameterReplies() throws {
        #expect(HCICommand.leSetDataLength(handle: 0x40, txOctets: 251, txTime: 2120).encoded == bytes("22 20 06 40 00 FB 00 48 08"))
        let parameters = HCICommand.ConnectionParameters(intervalMin: 6, intervalMax: 12, maxLatency: 4, supervisionTimeout: 200)
        #expect(HCICommand.leRemoteConnectionParameterRequestReply(handle: 1, parameters: parameters).encoded
            == bytes("20 20 0E 01 00 06 00 0C 00 04 00 C8 00 00 00 00 00"))
        #expect(HCICommand.leRemoteConnectionParameterRequestNegativeReply(handle: 1, reason: .unacceptableConnectionParameters).encoded
            == bytes("21 20 03 01 00 3B"))
        #expect(HCICommand.leConnectionUpdate(handle: 0x0EFF, parameters: parameters).encoded
            == bytes("13 20 0E FF 0E 06 00 0C 00 04 00 C8 00 00 00 00 00"))
    }

    @Test func masksAndAddressesAreLittleEndian() throws {
        #expect(HCICommand.setEventMask(EventMask(rawValue: 0x2000_8000_0200_8090)).encoded
            == bytes("01 0C 08 90 80 00 02 00 80 00 20"))
        #expect(HCICommand.leSetEventMask(.specificationDefault).encoded == bytes("01 20 08 1F 00 00 00 00 00 00 00"))
        #expect(HCICommand.leSetRandomAddress(BluetoothAddress("C0:01:02:03:04:05")!).encoded
            == bytes("05 20 06 05 04 03 02 01 C0"))
        #expect(HCICommand.writeLEHostSupport(leSupportedHost: true).encoded == bytes("6D 0C 02 01 00"))
        #expect(HCICommand.readRSSI(handle: 0x0040).encoded == bytes("05 14 02 40 00"))
        #expect(HCICommand.leReadRemoteFeatures(handle: 0x0040).encoded == bytes("16 20 02 40 00"))
    }

    @Test("encryption: LE Enable Encryption and the Long Term Key Request replies, keys least significant octet first")
    func encryptionCommands() throws {
        let key: UInt128 = 0x00112233_44556677_8899AABB_CCDDEEFF
        let enable = HCICommand.leEnableEncryption(handle: 0x0040, random: 0x0807_0605_0403_0201, encryptedDiversifier: 0x1234,
                                                   longTermKey: key)
        let enableBytes = bytes("19 20 1C 40 00 01 02 03 04 05 06 07 08 34 12 FF EE DD CC BB AA 99 88 77 66 55 44 33 22 11 00")
        #expect(enable.encoded == enableBytes)
        #expect(try HCICommand.decode(enableBytes) == enable)
        let reply = HCICommand.leLongTermKeyRequestReply(handle: 0x0040, longTermKey: key)
        let replyBytes = bytes("1A 20 12 40 00 FF EE DD CC BB AA 99 88 77 66 55 44 33 22 11 00")
        #expect(reply.encoded == replyBytes)
        #expect(try HCICommand.decode(replyBytes) == reply)
        #expect(HCICommand.leLongTermKeyRequestNegativeReply(handle: 0x0040).encoded == bytes("1B 20 02 40 00"))
        #expect(throws: WireError.self) { try HCICommand.decode(bytes("1A 20 11 40 00 FF EE DD CC BB AA 99 88 77 66 55 44 33 22 11")) }
        #expect(try CommandReturn.decode(opcode: .leLongTermKeyRequestReply, returnParameters: bytes("00 40 00")[...])
            == .connectionHandle(.leLongTermKeyRequestReply, handle: 0x40))
    }

    @Test func parameterlessReadCommands() throws {
        let vectors: [(HCICommand, String)] = [
            (.readLocalVersionInformation, "01 10 00"), (.readLocalSupportedCommands, "02 10 00"),
            (.readLocalSupportedFeatures, "03 10 00"), (.readBufferSize, "05 10 00"), (.readBDADDR, "09 10 00"),
            (.leReadBufferSize, "02 20 00"), (.leReadBufferSizeV2, "60 20 00"),
            (.leReadLocalSupportedFeatures, "03 20 00"), (.leCreateConnectionCancel, "0E 20 00"),
            (.leReadMaximumDataLength, "2F 20 00"),
        ]
        for (command, hex) in vectors {
            #expect(command.encoded == bytes(hex), "\(command.name)")
            #expect(try HCICommand.decode(bytes(hex)) == command)
        }
    }

    @Test func advertisingDataIsPaddedTo31Bytes() throws {
        let flags = HCICommand.AdvertisingPayload([0x02, 0x01, 0x06])!
        let packet = bytes("08 20 20 03 02 01 06") + [UInt8](repeating: 0, count: 28)
        #expect(HCICommand.leSetAdvertisingData(flags).encoded == packet)
        #expect(try HCICommand.decode(packet) == .leSetAdvertisingData(flags))
        #expect(HCICommand.AdvertisingPayload([UInt8](repeating: 0, count: 32)) == nil)
        // A length over 31 is rejected at the length byte.
        var bad = packet
        bad[3] = 32
        #expect(decodeError(bad)?.kind == .invalidLength(32))
        #expect(decodeError(bad)?.offset == 3)
    }

    @Test func advertisingParametersFieldOrder() throws {
        let command = HCICommand.leSetAdvertisingParameters(.init(
            intervalMin: 0x00A0, intervalMax: 0x00F0, type: .connectableUndirected, ownAddressType: .random))
        #expect(command.encoded == bytes("06 20 0F A0 00 F0 00 00 01 00 00 00 00 00 00 00 07 00"))
        #expect(HCICommand.leSetAdvertisingEnable(true).encoded == bytes("0A 20 01 01"))
    }

    @Test func namesComeFromTheOpcode() {
        #expect(HCICommand.leSetExtendedScanParameters(.init(le1M: nil)).name == "LE Set Extended Scan Parameters")
        #expect(HCICommand.other(opcode: HCIOpcode(0xFC01))!.name == "Vendor Specific")
        #expect(HCICommand.other(opcode: HCIOpcode(0x0C33))!.name == "Host Buffer Size")
        // An opcode the specification does not assign has no name: its hex stands in.
        #expect(HCICommand.other(opcode: HCIOpcode(0x20FF))!.name == "0x20FF")
        #expect(HCICommand.leSetScanEnable(enable: true, filterDuplicates: false).description == "LE Set Scan Enable (0x200C) 01 00")
    }
}

@Suite("HCI commands: malformed packets")
struct HCICommandMalformedTests {
    @Test func lengthByteMustMatchTheBytesPresent() {
        #expect(decodeError(bytes("0C 20 02 01"))?.kind == .truncated(needed: 2, available: 1))
        #expect(decodeError(bytes("0C 20 02 01 01 00"))?.kind == .trailingBytes(count: 1))
        #expect(decodeError(bytes("0C 20 02 01 01 00"))?.offset == 5)
        #expect(decodeError(bytes("0C 20"))?.kind == .truncated(needed: 1, available: 0))
        #expect(decodeError(bytes("0C"))?.kind == .truncated(needed: 2, available: 1))
        #expect(decodeError([])?.kind == .truncated(needed: 2, available: 0))
    }

    @Test func knownOpcodeWithShortParametersIsAnError() {
        let error = decodeError(bytes("0C 20 01 01"))
        #expect(error?.kind == .truncated(needed: 1, available: 0))
        #expect(error?.offset == 4)
        #expect(error?.context == "HCI LE Set Scan Enable")
    }

    @Test func knownOpcodeWithExtraParametersIsAnError() {
        #expect(decodeError(bytes("03 0C 01 00"))?.kind == .trailingBytes(count: 1))
        #expect(decodeError(bytes("06 04 04 40 00 13 00"))?.kind == .trailingBytes(count: 1))
    }

    @Test func reservedPHYBitsAreRejected() {
        // Scanning_PHYs bit 1 (2M) is reserved for scanning.
        let error = decodeError(bytes("41 20 08 00 00 02 01 10 00 10 00"))
        #expect(error?.kind == .invalidValue("reserved Scanning_PHYs bits 0x02"))
        #expect(error?.offset == 5)
        #expect(decodeError(bytes("43 20 0A 00 00 00 00 00 00 00 00 00 08"))?.offset == 12)
    }

    @Test func reservedBooleanValuesAreRejected() {
        #expect(decodeError(bytes("0C 20 02 02 00"))?.kind == .invalidValue("reserved LE_Scan_Enable value 0x02"))
        #expect(decodeError(bytes("0A 20 01 FF"))?.offset == 3)
    }

    /// Every proper prefix and every one-byte extension of a valid parameter block, with
    /// the length byte adjusted, is rejected for a modelled opcode.
    @Test func truncatedAndOverlongParameterBlocksAreRejected() async {
        await propertyCheck(count: 300, input: HCICommandSamples.commands) { command throws in
            expectTruncationsAndExtensionRejected(command)
        }
    }

    /// The edge the generator reaches only now and then: a full 255-byte block (4 bytes of
    /// header and 251 of data), whose one-byte extension has no length byte to say so.
    @Test func aFullParameterBlockAndItsExtensionAreHandled() throws {
        let fragment = try #require(HCICommand.AdvertisingDataFragment(
            handle: 1, operation: .complete, fragmentPreference: .init(rawValue: 0),
            data: (0..<251).map { UInt8(truncatingIfNeeded: $0) }))
        let command = HCICommand.leSetExtendedAdvertisingData(fragment)
        #expect(command.parameters.count == 255)
        #expect(try HCICommand.decode(command.encoded) == command)
        expectTruncationsAndExtensionRejected(command)
    }

    private func expectTruncationsAndExtensionRejected(_ command: HCICommand, sourceLocation: SourceLocation = #_sourceLocation) {
        if case .other = command { return } // no parameter layout to violate
        let parameters = command.parameters
        let header = command.encoded.prefix(2)
        for count in 0..<parameters.count {
            let packet = Array(header) + [UInt8(count)] + parameters.prefix(count)
            #expect(decodeError(packet) != nil, "\(command.name) with \(count) of \(parameters.count) bytes", sourceLocation: sourceLocation)
        }
        // One byte more than the block. A 255-byte block's length byte cannot count it (256
        // does not fit in a byte), so there it stays 255 and the extra byte trails the block.
        let longer = Array(header) + [UInt8(clamping: parameters.count + 1)] + parameters + [0]
        #expect(decodeError(longer) != nil, "\(command.name) with an extra byte (\(parameters.count) + 1)", sourceLocation: sourceLocation)
    }
}

@Suite("HCI commands: round trips")
struct HCICommandRoundTripTests {
    @Test func everyCommandRoundTrips() async throws {
        await propertyCheck(count: 2000, input: HCICommandSamples.commands) { command throws in
            let packet = command.encoded
            #expect(packet.count == 3 + command.parameters.count)
            #expect(Int(packet[2]) == command.parameters.count)
            #expect(packet[0] == UInt8(command.opcode.rawValue & 0xFF) && packet[1] == UInt8(command.opcode.rawValue >> 8))
            #expect(try HCICommand.decode(packet) == command)
            #expect(try HCICommand.decode(opcode: command.opcode, parameters: command.parameters[...]) == command)
        }
    }

    @Test func everyTypedCaseIsCovered() throws {
        let seed = TestSeed.make()
        var rng = SplitMix64(state: seed)
        var opcodes: Set<HCIOpcode> = []
        for index in 0..<HCICommandSamples.caseCount - 1 {
            let command = HCICommandSamples.command(index: index, &rng)
            if case .other = command { Issue.record("index \(index) gave other; \(TestSeed.replayHint(seed))") }
            opcodes.insert(command.opcode)
            #expect(try HCICommand.decode(command.encoded) == command, "\(TestSeed.replayHint(seed))")
        }
        #expect(opcodes.map(\.rawValue).sorted() == HCICommandSamples.modelledOpcodes.sorted())
    }

    @Test func unknownOpcodeIsPreservedByteForByte() throws {
        let packet = bytes("01 FC 05 01 02 03 04 05")
        let command = try HCICommand.decode(packet)
        #expect(command == HCICommand.other(opcode: HCIOpcode(0xFC01), parameters: [1, 2, 3, 4, 5]))
        #expect(command.opcode == HCIOpcode(0xFC01))
        #expect(command.parameters == [1, 2, 3, 4, 5])
        #expect(command.encoded == packet)
    }

    @Test func otherCannotExceed255ParameterBytes() throws {
        #expect(HCICommand.other(opcode: HCIOpcode(0xFC01), parameters: [UInt8](repeating: 0, count: 256)) == nil)
        let full = try #require(HCICommand.other(opcode: HCIOpcode(0xFC01), parameters: [UInt8](repeating: 7, count: 255)))
        #expect(full.encoded.count == 258)
        #expect(full.encoded[2] == 255)
        #expect(try HCICommand.decode(full.encoded) == full)
        // The parameter-only decoder cannot be handed more than a packet can carry either.
        #expect(throws: WireError.self) {
            try HCICommand.decode(opcode: HCIOpcode(0xFC01), parameters: [UInt8](repeating: 0, count: 256)[...])
        }
    }

    @Test func decodingRandomBytesNeverTraps() async {
        await propertyCheck(count: 3000, input: HCICommandSamples.randomBytes(maxCount: 80)) { input in
            if let command = try? HCICommand.decode(input) {
                #expect(command.encoded == input || command.opcode.rawValue == 0x2008 || command.opcode.rawValue == 0x2009)
            }
        }
    }

    /// Random parameter blocks behind every modelled opcode, with a correct length byte.
    @Test func decodingRandomParametersOfKnownOpcodesNeverTraps() async {
        let opcodes = HCICommandSamples.modelledOpcodes.sorted()
        let input = Generator(run: { rng in
            let opcode = opcodes.randomElement(using: &rng)!
            let parameters = HCICommandSamples.bytes(&rng, count: 0...60)
            return [UInt8(opcode & 0xFF), UInt8(opcode >> 8), UInt8(parameters.count)] + parameters
        })
        await propertyCheck(count: 3000, input: input) { packet throws in
            if let command = try? HCICommand.decode(packet) {
                #expect(try HCICommand.decode(command.encoded) == command)
            }
        }
    }
}
