import PropertyBased
import RawbleManagementCore
import RawbleTestSupport
import RawbleWire
import Testing

private func decodeError(_ packet: [UInt8]) -> WireError? { ManagementSamples.decodeError(ManagementCommand.self, packet) }

private let strap = ManagementSamples.strap
private let strapBytes = ManagementSamples.strapBytes

/// Byte vectors written out by hand from BlueZ `doc/mgmt-api.txt` ("Packet Structures": opcode,
/// controller index, parameter length, all u16 LE; each command's section for its parameters).
@Suite("Management commands: documentation vectors")
struct ManagementCommandVectorTests {
    /// Checks `command` encodes to `hex` and `hex` decodes to `command`.
    private func expectVector(_ command: ManagementCommand, _ hex: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let packet = bytes(hex)
        #expect(!packet.isEmpty, sourceLocation: sourceLocation)
        #expect(command.encoded == packet, "\(command)", sourceLocation: sourceLocation)
        #expect((try? ManagementCommand.decode(packet)) == command, "\(hex)", sourceLocation: sourceLocation)
    }

    @Test func nonControllerCommandsGoToIndexFFFF() {
        // Read Management Version Information, Read Management Supported Commands, Read
        // Controller Index List: <non-controller>, no parameters.
        expectVector(.readVersion, "01 00 FF FF 00 00")
        expectVector(.readCommands, "02 00 FF FF 00 00")
        expectVector(.readIndexList, "03 00 FF FF 00 00")
        #expect(ManagementCommand.readVersion.index == ManagementIndex.none)
        #expect(ManagementIndex.none == 0xFFFF)
    }

    @Test func readControllerInformationNamesTheController() {
        // Read Controller Information: Command Code 0x0004, <controller id>, no parameters.
        expectVector(.readControllerInformation(index: 0), "04 00 00 00 00 00")
        expectVector(.readControllerInformation(index: 0x0102), "04 00 02 01 00 00")
    }

    @Test func settingCommandsCarryOneBooleanOctet() {
        // Set Powered 0x0005 (Powered), Set Connectable 0x0007 (Connectable), Set Bondable
        // 0x0009 (Bondable), Set Low Energy 0x000D (Low_Energy): 1 octet, 0x00 or 0x01.
        expectVector(.setPowered(index: 0, on: true), "05 00 00 00 01 00 01")
        expectVector(.setPowered(index: 0, on: false), "05 00 00 00 01 00 00")
        expectVector(.setConnectable(index: 1, on: false), "07 00 01 00 01 00 00")
        expectVector(.setBondable(index: 0, on: true), "09 00 00 00 01 00 01")
        expectVector(.setLowEnergy(index: 0, on: true), "0D 00 00 00 01 00 01")
    }

    @Test func deviceCommandsCarryAddressAndAddressType() {
        // Disconnect 0x0014, Cancel Pair Device 0x001A, User Confirmation Reply 0x001C and
        // Negative Reply 0x001D, User Passkey Negative Reply 0x001F: Address (6 octets),
        // Address_Type (1 octet: 0 BR/EDR, 1 LE Public, 2 LE Random).
        expectVector(.disconnect(index: 0, address: strap, addressType: .leRandom), "14 00 00 00 07 00 \(strapBytes) 02")
        expectVector(.cancelPairDevice(index: 0, address: strap, addressType: .leRandom), "1A 00 00 00 07 00 \(strapBytes) 02")
        expectVector(.userConfirmationReply(index: 0, address: strap, addressType: .lePublic), "1C 00 00 00 07 00 \(strapBytes) 01")
        expectVector(.userConfirmationNegativeReply(index: 1, address: strap, addressType: .bredr), "1D 00 01 00 07 00 \(strapBytes) 00")
        expectVector(.userPasskeyNegativeReply(index: 0, address: strap, addressType: .leRandom), "1F 00 00 00 07 00 \(strapBytes) 02")
    }

    @Test func pairingCommands() {
        // Set IO Capability 0x0018: IO_Capability (1 octet, 0x03 NoInputNoOutput).
        expectVector(.setIOCapability(index: 0, ioCapability: .noInputNoOutput), "18 00 00 00 01 00 03")
        // Pair Device 0x0019: Address, Address_Type, IO_Capability (0x04 KeyboardDisplay).
        expectVector(.pairDevice(index: 0, address: strap, addressType: .leRandom, ioCapability: .keyboardDisplay),
                     "19 00 00 00 08 00 \(strapBytes) 02 04")
        // Unpair Device 0x001B: Address, Address_Type, Disconnect (1 octet).
        expectVector(.unpairDevice(index: 0, address: strap, addressType: .leRandom, disconnect: true),
                     "1B 00 00 00 08 00 \(strapBytes) 02 01")
        // User Passkey Reply 0x001E: Address, Address_Type, Passkey (4 octets): 123456 = 0x0001E240.
        expectVector(.userPasskeyReply(index: 0, address: strap, addressType: .leRandom, passkey: 123_456),
                     "1E 00 00 00 0B 00 \(strapBytes) 02 40 E2 01 00")
    }

    @Test func discoveryCommandsCarryTheAddressTypeBits() {
        // Start Discovery 0x0023, Stop Discovery 0x0024, Start Limited Discovery 0x0041:
        // Address_Type (1 octet bit field: 0x06 LE public & random, 0x01 BR/EDR, 0x07 both).
        expectVector(.startDiscovery(index: 0, addressTypes: .le), "23 00 00 00 01 00 06")
        expectVector(.stopDiscovery(index: 0, addressTypes: .le), "24 00 00 00 01 00 06")
        expectVector(.startDiscovery(index: 0, addressTypes: [.bredr, .le]), "23 00 00 00 01 00 07")
        expectVector(.startLimitedDiscovery(index: 2, addressTypes: .bredr), "41 00 02 00 01 00 01")
        #expect(ManagementAddressTypes.le.rawValue == 0x06)
    }

    @Test func startServiceDiscoveryCarries128BitUUIDs() {
        // Start Service Discovery 0x003A: Address_Type (1), RSSI_Threshold (1), UUID_Count (2),
        // UUID[i] (16 octets each, little-endian). -60 dBm = 0xC4; 180D as
        // 0000180D-0000-1000-8000-00805F9B34FB, least significant byte first.
        expectVector(.startServiceDiscovery(index: 0, addressTypes: .le, rssiThreshold: -60, uuids: [BluetoothUUID(0x180D)]),
                     "3A 00 00 00 14 00 06 C4 01 00 FB 34 9B 5F 80 00 00 80 00 10 00 00 0D 18 00 00")
        // RSSI_Threshold 127 and no UUIDs: the same as Start Discovery.
        expectVector(.startServiceDiscovery(index: 0, addressTypes: .le, rssiThreshold: 127, uuids: []),
                     "3A 00 00 00 04 00 06 7F 00 00")
    }

    @Test func otherOpcodesKeepTheirParameters() {
        // Get Connections 0x0015 (not modelled): no parameters.
        expectVector(.other(opcode: 0x0015, index: 0, parameters: []), "15 00 00 00 00 00")
        // Set Local Name 0x000F, cut short on purpose: kept as it is.
        expectVector(.other(opcode: 0x000F, index: 3, parameters: [0x41, 0x00]), "0F 00 03 00 02 00 41 00")
    }

    @Test func namesAndDescriptions() {
        #expect(ManagementCommand.setPowered(index: 0, on: true).name == "Set Powered")
        #expect(ManagementCommand.setPowered(index: 0, on: true).description == "Set Powered (0x0005) hci0: 01")
        #expect(ManagementCommand.readVersion.description == "Read Management Version Information (0x0001) non-controller")
        #expect(ManagementCommand.other(opcode: 0x0100, index: 1, parameters: []).name == "0x0100")
        #expect(ManagementOpcode.name(of: 0x005C) == "Load Connection Subrate")
        #expect(ManagementOpcode.name(of: 0x0000) == nil)
        #expect(ManagementOpcode.name(of: 0x005D) == nil)
    }

    @Test func theKernelPathsHandBuiltRepliesMatch() {
        // RawbleKernel's Just Works answer: header(0x001C, index, 7) + address + type.
        let handBuilt: [UInt8] = [0x1C, 0x00, 0x00, 0x00, 0x07, 0x00] + strap.littleEndianBytes + [0x02]
        #expect(ManagementCommand.userConfirmationReply(index: 0, address: strap, addressType: .leRandom).encoded == handBuilt)
    }
}

@Suite("Management commands: malformed packets")
struct ManagementCommandMalformedTests {
    @Test func lengthFieldMustMatchTheBytesPresent() {
        let short = decodeError(bytes("05 00 00 00 01 00"))
        #expect(short?.kind == .truncated(needed: 1, available: 0))
        #expect(short?.offset == 6)
        #expect(short?.context == "Management command parameters (length field 1)")
        let long = decodeError(bytes("05 00 00 00 01 00 01 00"))
        #expect(long?.kind == .trailingBytes(count: 1))
        #expect(long?.offset == 7)
        #expect(decodeError(bytes("05 00 00 00"))?.kind == .truncated(needed: 2, available: 0))
        #expect(decodeError(bytes("05"))?.kind == .truncated(needed: 2, available: 1))
        #expect(decodeError([])?.kind == .truncated(needed: 2, available: 0))
    }

    @Test func modelledOpcodeWithShortOrExtraParametersIsAnError() {
        let short = decodeError(bytes("05 00 00 00 00 00"))
        #expect(short?.kind == .truncated(needed: 1, available: 0))
        #expect(short?.context == "Management Set Powered command")
        #expect(decodeError(bytes("04 00 00 00 01 00 00"))?.kind == .trailingBytes(count: 1))
        #expect(decodeError(bytes("14 00 00 00 06 00 \(strapBytes)"))?.kind == .truncated(needed: 1, available: 0))
    }

    @Test func reservedBooleanValuesAreRejected() {
        let error = decodeError(bytes("05 00 00 00 01 00 02"))
        #expect(error?.kind == .invalidValue("reserved Powered value 0x02"))
        #expect(error?.offset == 6)
        #expect(decodeError(bytes("1B 00 00 00 08 00 \(strapBytes) 02 FF"))?.kind == .invalidValue("reserved Disconnect value 0xFF"))
    }

    @Test func uuidCountMustMatchTheUUIDsPresent() {
        // Two UUIDs announced, one present.
        let one = "FB 34 9B 5F 80 00 00 80 00 10 00 00 0D 18 00 00"
        let short = decodeError(bytes("3A 00 00 00 14 00 06 C4 02 00 \(one)"))
        #expect(short?.kind == .truncated(needed: 32, available: 16))
        #expect(short?.offset == 10)
        // None announced, one present.
        let long = decodeError(bytes("3A 00 00 00 14 00 06 C4 00 00 \(one)"))
        #expect(long?.kind == .trailingBytes(count: 16))
        #expect(long?.offset == 10)
    }

    @Test func nonControllerCommandToAControllerStaysAsSent() throws {
        // The kernel answers Invalid Index; the decoder keeps the packet as it is.
        let packet = bytes("01 00 00 00 00 00")
        let command = try ManagementCommand.decode(packet)
        #expect(command == .other(opcode: 0x0001, index: 0, parameters: []))
        #expect(command.encoded == packet)
    }

    /// Every proper prefix and every one-byte extension of a modelled command's parameters,
    /// with the length field adjusted, is rejected; and every cut of the packet itself.
    @Test func truncatedAndOverlongParameterBlocksAreRejected() async {
        await propertyCheck(count: 400, input: ManagementSamples.commands) { command in
            let packet = command.encoded
            for count in 0..<packet.count {
                #expect(decodeError(Array(packet.prefix(count))) != nil, "\(command) cut to \(count) bytes")
            }
            if case .other = command { return }  // no parameter layout to violate
            let parameters = command.parameters
            for count in 0..<parameters.count {
                let shorter = ManagementSamples.header(code: command.opcode, index: command.index, length: count) + parameters.prefix(count)
                #expect(decodeError(shorter) != nil, "\(command.name) with \(count) of \(parameters.count) bytes")
            }
            let longer = ManagementSamples.header(code: command.opcode, index: command.index, length: parameters.count + 1) + parameters + [0]
            #expect(decodeError(longer)?.kind == .trailingBytes(count: 1), "\(command.name) with an extra byte")
        }
    }
}

@Suite("Management commands: round trips")
struct ManagementCommandRoundTripTests {
    @Test func everyCommandRoundTrips() async {
        await propertyCheck(count: 2000, input: ManagementSamples.commands) { command throws in
            let packet = command.encoded
            let parameters = command.parameters
            #expect(packet.count == ManagementPacket.headerCount + parameters.count)
            #expect(Int(packet[4]) | Int(packet[5]) << 8 == parameters.count)
            #expect(UInt16(packet[0]) | UInt16(packet[1]) << 8 == command.opcode)
            #expect(UInt16(packet[2]) | UInt16(packet[3]) << 8 == command.index)
            let decoded = try ManagementCommand.decode(packet)
            #expect(decoded == command)
            #expect(decoded.encoded == packet)
            #expect(try ManagementCommand.decode(opcode: command.opcode, index: command.index, parameters: parameters[...]) == command)
        }
    }

    @Test func everyTypedCaseIsCovered() throws {
        let seed = TestSeed.make()
        var rng = SplitMix64(state: seed)
        var opcodes: Set<UInt16> = []
        for index in 0..<ManagementSamples.commandCaseCount - 1 {
            let command = ManagementSamples.command(index: index, &rng)
            if case .other = command { Issue.record("index \(index) gave other; \(TestSeed.replayHint(seed))") }
            opcodes.insert(command.opcode)
            #expect(try ManagementCommand.decode(command.encoded) == command, "\(TestSeed.replayHint(seed))")
            #expect(ManagementOpcode.name(of: command.opcode) == command.name)
        }
        #expect(opcodes == ManagementSamples.modelledOpcodes)
    }

    @Test func decodingFromASliceKeepsOffsetsOfTheWholeBuffer() throws {
        let buffer = [0xEE] + bytes("05 00 00 00 01 00 02")
        do {
            _ = try ManagementCommand.decode(buffer[1...])
            Issue.record("decoded a reserved Powered value")
        } catch {
            #expect(error.offset == 7)
        }
        #expect(try ManagementCommand.decode(buffer.dropFirst().dropLast() + [1]) == .setPowered(index: 0, on: true))
    }

    @Test func longestPacketsEncodeWithinTheLengthField() throws {
        // Parameters beyond what the u16 length field counts are cut, so the packet stays true.
        let huge = ManagementCommand.other(opcode: 0x0100, index: 0, parameters: [UInt8](repeating: 7, count: 70_000))
        let packet = huge.encoded
        #expect(packet.count == ManagementPacket.maximumCount)
        #expect(packet[4] == 0xFF && packet[5] == 0xFF)
        #expect(try ManagementCommand.decode(packet) == .other(opcode: 0x0100, index: 0, parameters: [UInt8](repeating: 7, count: 0xFFFF)))
        let uuids = [BluetoothUUID](repeating: BluetoothUUID(0x180D), count: ManagementCommand.maximumServiceDiscoveryUUIDs + 3)
        let discovery = ManagementCommand.startServiceDiscovery(index: 0, addressTypes: .le, rssiThreshold: 127, uuids: uuids)
        let discoveryPacket = discovery.encoded
        #expect(discoveryPacket.count <= ManagementPacket.maximumCount)
        guard case let .startServiceDiscovery(_, _, _, decoded) = try ManagementCommand.decode(discoveryPacket) else {
            Issue.record("not a Start Service Discovery")
            return
        }
        #expect(decoded.count == ManagementCommand.maximumServiceDiscoveryUUIDs)
        // The parameter-only decoder cannot be handed more than a packet carries either.
        #expect(throws: WireError.self) {
            try ManagementCommand.decode(opcode: 0x0100, index: 0, parameters: [UInt8](repeating: 0, count: 0x10000)[...])
        }
    }

    @Test func decodingRandomBytesNeverTraps() async {
        await propertyCheck(count: 3000, input: ManagementSamples.randomBytes(maxCount: 60)) { input in
            if let command = try? ManagementCommand.decode(input) {
                #expect(command.encoded == input)
            }
        }
    }

    /// Random parameters behind every modelled opcode, with a correct length field.
    @Test func decodingRandomParametersOfModelledOpcodesNeverTraps() async {
        let packets = ManagementSamples.packets(codes: ManagementSamples.modelledOpcodes.sorted(), maxParameters: 40)
        await propertyCheck(count: 4000, input: packets) { packet throws in
            if let command = try? ManagementCommand.decode(packet) {
                #expect(command.encoded == packet)
                #expect(try ManagementCommand.decode(command.encoded) == command)
            }
        }
    }
}
