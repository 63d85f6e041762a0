import PropertyBased
import RawbleManagementCore
import RawbleTestSupport
import RawbleWire
import Testing

/// The error decoding `parameters` as `T` throws, or `nil` when it decodes.
private func decodeError<T: ManagementReturnParameters>(_ type: T.Type, _ parameters: [UInt8]) -> WireError? {
    do {
        _ = try T.decode(returnParameters: parameters)
        return nil
    } catch {
        return error
    }
}

/// Read Controller Information's return parameters (`doc/mgmt-api.txt`): Address
/// 00:1A:7D:DA:71:13, Bluetooth_Version 0x0C (5.3), Manufacturer 0x0002 (Intel),
/// Supported_Settings 0x0001FEFF, Current_Settings 0x00000A81 (Powered, BR/EDR, Low Energy,
/// Secure Connections), Class_Of_Device 0x000000, then the name and short name fields.
private let controllerInformationHead =
    "13 71 DA 7D 1A 00 0C 02 00 FF FE 01 00 81 0A 00 00 00 00 00"

private func controllerInformation(name: [UInt8], shortName: [UInt8]) -> [UInt8] {
    bytes(controllerInformationHead)
        + name + [UInt8](repeating: 0, count: 249 - name.count)
        + shortName + [UInt8](repeating: 0, count: 11 - shortName.count)
}

@Suite("Management return parameters")
struct ManagementReturnTests {
    @Test func readVersion() throws {
        // Version (1), Revision (2): 1.22.
        let version = try ManagementVersion.decode(returnParameters: bytes("01 16 00"))
        #expect(version == ManagementVersion(version: 1, revision: 22))
        #expect(version.description == "1.22")
        #expect(version.returnParameters == bytes("01 16 00"))
        #expect(decodeError(ManagementVersion.self, bytes("01 16"))?.kind == .truncated(needed: 2, available: 1))
        #expect(decodeError(ManagementVersion.self, bytes("01 16 00 00"))?.kind == .trailingBytes(count: 1))
    }

    @Test func readIndexList() throws {
        // Num_Controllers (2), Controller_Index[] (2 each): hci0 and hci1.
        let list = try ManagementIndexList.decode(returnParameters: bytes("02 00 00 00 01 00"))
        #expect(list.indexes == [0, 1])
        #expect(list.description == "[hci0, hci1]")
        #expect(list.returnParameters == bytes("02 00 00 00 01 00"))
        #expect(try ManagementIndexList.decode(returnParameters: bytes("00 00")).indexes == [])
        // The count is checked against the bytes present, both ways.
        let short = decodeError(ManagementIndexList.self, bytes("02 00 00 00"))
        #expect(short?.kind == .truncated(needed: 4, available: 2))
        #expect(short?.offset == 2)
        let long = decodeError(ManagementIndexList.self, bytes("01 00 00 00 01 00"))
        #expect(long?.kind == .trailingBytes(count: 2))
        #expect(long?.offset == 4)
        #expect(decodeError(ManagementIndexList.self, bytes("FF FF 00 00"))?.kind == .truncated(needed: 0x1FFFE, available: 2))
    }

    @Test func readSupportedCommands() throws {
        // Num_Of_Commands 2, Num_Of_Events 1, Commands 0x0004 0x0005, Event 0x0012.
        let supported = try ManagementSupportedCommands.decode(returnParameters: bytes("02 00 01 00 04 00 05 00 12 00"))
        #expect(supported.commands == [0x0004, 0x0005])
        #expect(supported.events == [0x0012])
        #expect(supported.supports(opcode: ManagementOpcode.setPowered))
        #expect(supported.supports(opcode: ManagementOpcode.readVersion))
        #expect(!supported.supports(opcode: ManagementOpcode.startDiscovery))
        #expect(supported.returnParameters == bytes("02 00 01 00 04 00 05 00 12 00"))
        #expect(decodeError(ManagementSupportedCommands.self, bytes("02 00 01 00 04 00 05 00"))?.kind
            == .truncated(needed: 6, available: 4))
    }

    @Test func readControllerInformation() throws {
        let parameters = controllerInformation(name: Array("rawble-sim".utf8), shortName: Array("rawble".utf8))
        #expect(parameters.count == 280)
        #expect(ManagementControllerInformation.returnParameterCount == 280)
        let information = try ManagementControllerInformation.decode(returnParameters: parameters)
        #expect(information.address == BluetoothAddress("00:1A:7D:DA:71:13"))
        #expect(information.bluetoothVersion == 0x0C)
        #expect(information.manufacturer == 0x0002)
        #expect(information.supportedSettings.rawValue == 0x0001_FEFF)
        #expect(information.currentSettings == [.powered, .basicRateEDR, .lowEnergy, .secureConnections])
        #expect(information.classOfDevice.rawValue == 0)
        #expect(information.name == "rawble-sim")
        #expect(information.shortName == "rawble")
        #expect(information.returnParameters == parameters)
        #expect(information.description.hasPrefix("00:1A:7D:DA:71:13 \"rawble-sim\", Bluetooth 5.3, "))
        // Built from strings, it encodes to the same bytes.
        let built = ManagementControllerInformation(
            address: information.address, bluetoothVersion: 0x0C, manufacturer: 2,
            supportedSettings: ManagementSettings(rawValue: 0x0001_FEFF),
            currentSettings: [.powered, .basicRateEDR, .lowEnergy, .secureConnections],
            name: "rawble-sim", shortName: "rawble")
        #expect(built == information)
        #expect(built.returnParameters == parameters)
    }

    @Test func controllerInformationSizeIsExact() {
        let parameters = controllerInformation(name: [], shortName: [])
        for count in 0..<parameters.count {
            #expect(decodeError(ManagementControllerInformation.self, Array(parameters.prefix(count))) != nil, "\(count) bytes")
        }
        #expect(decodeError(ManagementControllerInformation.self, parameters + [0])?.kind == .trailingBytes(count: 1))
    }

    @Test func controllerNamesSurviveInvalidUTF8AndMissingTerminators() throws {
        // Invalid UTF-8 reads as replacement characters, and the bytes are kept.
        let odd = controllerInformation(name: [0xFF, 0xFE, 0x41], shortName: [0xC3])
        let information = try ManagementControllerInformation.decode(returnParameters: odd)
        #expect(information.name == "\u{FFFD}\u{FFFD}A")
        #expect(information.shortName == "\u{FFFD}")
        #expect(information.nameBytes == [0xFF, 0xFE, 0x41])
        #expect(information.returnParameters == odd)
        // Fields with no NUL at all are kept whole.
        let full = bytes(controllerInformationHead) + [UInt8](repeating: 0x61, count: 249) + [UInt8](repeating: 0x62, count: 11)
        let unterminated = try ManagementControllerInformation.decode(returnParameters: full)
        #expect(unterminated.name.count == 249)
        #expect(unterminated.shortName == String(repeating: "b", count: 11))
        #expect(unterminated.returnParameters == full)
        // Bytes after the NUL are padding: they read as nothing and encode as zeros.
        var padded = controllerInformation(name: [0x41], shortName: [])
        padded[20 + 5] = 0x7A
        let trimmed = try ManagementControllerInformation.decode(returnParameters: padded)
        #expect(trimmed.name == "A")
        #expect(trimmed.returnParameters == controllerInformation(name: [0x41], shortName: []))
    }

    @Test func namesFromStringsAreCutToTheirFields() {
        var information = ManagementControllerInformation(
            address: .any, bluetoothVersion: 0, manufacturer: 0, supportedSettings: [], currentSettings: [],
            name: String(repeating: "é", count: 200), shortName: "abcdefghijkl")
        #expect(information.nameBytes.count == 248)  // 124 two-byte characters, room for the NUL
        #expect(information.shortName == "abcdefghij")
        information.name = String(repeating: "€", count: 100)  // three bytes each: 82 fit in 248
        #expect(information.nameBytes.count == 246)
        #expect(information.name == String(repeating: "€", count: 82))
        information.name = "ab\u{0}cd"
        #expect(information.name == "ab")
        #expect(information.returnParameters.count == 280)
    }

    @Test func randomControllerInformationNeverTrapsAndRoundTrips() async {
        let input = Generator(run: { rng in ManagementSamples.bytes(&rng, count: 270...290) })
        await propertyCheck(count: 500, input: input) { parameters throws in
            guard let information = try? ManagementControllerInformation.decode(returnParameters: parameters) else {
                #expect(parameters.count != 280)
                return
            }
            _ = information.description
            #expect(try ManagementControllerInformation.decode(returnParameters: information.returnParameters) == information)
        }
    }

    @Test func settingsAddressTypesAndAddressReplies() throws {
        // Set Powered and the other Set commands: Current_Settings (4).
        #expect(try ManagementSettings.decode(returnParameters: bytes("81 02 00 00")) == [.powered, .basicRateEDR, .lowEnergy])
        #expect(ManagementSettings.powered.returnParameters == bytes("01 00 00 00"))
        #expect(decodeError(ManagementSettings.self, bytes("81 02 00"))?.kind == .truncated(needed: 4, available: 3))
        // Start and Stop Discovery: Address_Type (1).
        #expect(try ManagementAddressTypes.decode(returnParameters: bytes("06")) == .le)
        #expect(ManagementAddressTypes.le.returnParameters == [0x06])
        #expect(decodeError(ManagementAddressTypes.self, bytes("06 00"))?.kind == .trailingBytes(count: 1))
        #expect(decodeError(ManagementAddressTypes.self, [])?.kind == .truncated(needed: 1, available: 0))
        // Pair Device, Disconnect, the replies: Address (6), Address_Type (1).
        let address = try ManagementAddress.decode(returnParameters: bytes("01 00 00 E0 B1 C0 02"))
        #expect(address == ManagementAddress(BluetoothAddress(0xC0B1_E000_0001), type: .leRandom))
        #expect(address.description == "C0:B1:E0:00:00:01 (LE Random)")
        #expect(address.returnParameters == bytes("01 00 00 E0 B1 C0 02"))
    }

    @Test func listsLongerThanAPacketAreCut() throws {
        let list = ManagementIndexList([UInt16](repeating: 1, count: ManagementIndexList.maximumCount + 5))
        let parameters = list.returnParameters
        #expect(3 + parameters.count <= ManagementPacket.maximumParameterCount)
        #expect(try ManagementIndexList.decode(returnParameters: parameters).indexes.count == ManagementIndexList.maximumCount)
        let supported = ManagementSupportedCommands(commands: [UInt16](repeating: 4, count: 40_000), events: [0x12])
        let supportedParameters = supported.returnParameters
        #expect(3 + supportedParameters.count <= ManagementPacket.maximumParameterCount)
        let decoded = try ManagementSupportedCommands.decode(returnParameters: supportedParameters)
        #expect(decoded.commands.count + decoded.events.count == ManagementSupportedCommands.maximumEntries)
    }

    @Test func randomReturnParametersNeverTrap() async {
        await propertyCheck(count: 2000, input: ManagementSamples.randomBytes(maxCount: 24)) { parameters throws in
            if let value = try? ManagementVersion.decode(returnParameters: parameters) { #expect(value.returnParameters == parameters) }
            if let value = try? ManagementIndexList.decode(returnParameters: parameters) { #expect(value.returnParameters == parameters) }
            if let value = try? ManagementSupportedCommands.decode(returnParameters: parameters) {
                #expect(value.returnParameters == parameters)
            }
            if let value = try? ManagementAddress.decode(returnParameters: parameters) { #expect(value.returnParameters == parameters) }
            if let value = try? ManagementSettings.decode(returnParameters: parameters) { #expect(value.returnParameters == parameters) }
        }
    }
}
