import PropertyBased
import RawbleTestSupport
import RawbleWire

/// Random, valid values of the HCI command types, for property-based round trips.
enum HCICommandSamples: RandomFields {
    static func connection(_ rng: inout some RandomNumberGenerator) -> HCICommand.ConnectionParameters {
        HCICommand.ConnectionParameters(
            intervalMin: u16(&rng), intervalMax: u16(&rng), maxLatency: u16(&rng),
            supervisionTimeout: u16(&rng), minCELength: u16(&rng), maxCELength: u16(&rng))
    }

    static func phyScan(_ rng: inout some RandomNumberGenerator) -> HCICommand.PHYScanParameters? {
        bool(&rng) ? nil : HCICommand.PHYScanParameters(type: .init(rawValue: byte(&rng)), interval: u16(&rng), window: u16(&rng))
    }

    static func phyConnection(_ rng: inout some RandomNumberGenerator) -> HCICommand.PHYConnectionParameters? {
        bool(&rng) ? nil : HCICommand.PHYConnectionParameters(scanInterval: u16(&rng), scanWindow: u16(&rng), connection: connection(&rng))
    }

    /// Number of typed cases ``command(_:)`` can produce (plus one for `other`).
    static let caseCount = 47

    /// Opcodes HCICommand models; an `other` sample never uses one of these.
    static let modelledOpcodes: Set<UInt16> = [
        0x0C03, 0x0C01, 0x0C63, 0x0C6D, 0x1001, 0x1002, 0x1003, 0x1005, 0x1009, 0x1405, 0x0406,
        0x2001, 0x2002, 0x2060, 0x2003, 0x2005, 0x2006, 0x2008, 0x2009, 0x200A, 0x200B, 0x200C,
        0x200D, 0x200E, 0x2013, 0x2016, 0x2020, 0x2021, 0x2022, 0x202F, 0x2041, 0x2042, 0x2043,
        0x2007, 0x2035, 0x2036, 0x2037, 0x2038, 0x2039, 0x203A, 0x203B, 0x203C, 0x203D,
        0x2019, 0x201A, 0x201B,
    ]

    static func command(_ rng: inout some RandomNumberGenerator) -> HCICommand {
        command(index: Int.random(in: 0..<caseCount, using: &rng), &rng)
    }

    static func command(index: Int, _ rng: inout some RandomNumberGenerator) -> HCICommand {
        switch index {
        case 0: return .reset
        case 1: return .setEventMask(EventMask(rawValue: u64(&rng)))
        case 2: return .setEventMaskPage2(EventMaskPage2(rawValue: u64(&rng)))
        case 3: return .writeLEHostSupport(leSupportedHost: bool(&rng), simultaneousLEHost: bool(&rng))
        case 4: return .readLocalVersionInformation
        case 5: return .readLocalSupportedCommands
        case 6: return .readLocalSupportedFeatures
        case 7: return .readBufferSize
        case 8: return .readBDADDR
        case 9: return .readRSSI(handle: u16(&rng))
        case 10: return .disconnect(handle: u16(&rng), reason: HCIStatus(byte(&rng)))
        case 11: return .leSetEventMask(LEEventMask(rawValue: u64(&rng)))
        case 12: return .leReadBufferSize
        case 13: return .leReadBufferSizeV2
        case 14: return .leReadLocalSupportedFeatures
        case 15: return .leSetRandomAddress(address(&rng))
        case 16:
            return .leSetAdvertisingParameters(HCICommand.AdvertisingParameters(
                intervalMin: u16(&rng), intervalMax: u16(&rng), type: .init(rawValue: byte(&rng)),
                ownAddressType: .init(rawValue: byte(&rng)), peerAddressType: LEAddressType(rawValue: byte(&rng)),
                peerAddress: address(&rng), channels: .init(rawValue: byte(&rng)),
                filterPolicy: .init(rawValue: byte(&rng))))
        case 17: return .leSetAdvertisingData(HCICommand.AdvertisingPayload(bytes(&rng, count: 0...31))!)
        case 18: return .leSetScanResponseData(HCICommand.AdvertisingPayload(bytes(&rng, count: 0...31))!)
        case 19: return .leSetAdvertisingEnable(bool(&rng))
        case 20:
            return .leSetScanParameters(HCICommand.ScanParameters(
                type: .init(rawValue: byte(&rng)), interval: u16(&rng), window: u16(&rng),
                ownAddressType: .init(rawValue: byte(&rng)), filterPolicy: .init(rawValue: byte(&rng))))
        case 21: return .leSetScanEnable(enable: bool(&rng), filterDuplicates: bool(&rng))
        case 22:
            return .leCreateConnection(HCICommand.CreateConnection(
                scanInterval: u16(&rng), scanWindow: u16(&rng), filterPolicy: .init(rawValue: byte(&rng)),
                peerAddressType: LEAddressType(rawValue: byte(&rng)), peerAddress: address(&rng),
                ownAddressType: .init(rawValue: byte(&rng)), connection: connection(&rng)))
        case 23: return .leCreateConnectionCancel
        case 24: return .leConnectionUpdate(handle: u16(&rng), parameters: connection(&rng))
        case 25: return .leReadRemoteFeatures(handle: u16(&rng))
        case 26: return .leRemoteConnectionParameterRequestReply(handle: u16(&rng), parameters: connection(&rng))
        case 27: return .leRemoteConnectionParameterRequestNegativeReply(handle: u16(&rng), reason: HCIStatus(byte(&rng)))
        case 28: return .leSetDataLength(handle: u16(&rng), txOctets: u16(&rng), txTime: u16(&rng))
        case 29: return .leReadMaximumDataLength
        case 30:
            return .leSetExtendedScanParameters(HCICommand.ExtendedScanParameters(
                ownAddressType: .init(rawValue: byte(&rng)), filterPolicy: .init(rawValue: byte(&rng)),
                le1M: phyScan(&rng), leCoded: phyScan(&rng)))
        case 31:
            return .leSetExtendedScanEnable(HCICommand.ExtendedScanEnable(
                enable: bool(&rng), filterDuplicates: .init(rawValue: byte(&rng)), duration: u16(&rng), period: u16(&rng)))
        case 32:
            return .leExtendedCreateConnection(HCICommand.ExtendedCreateConnection(
                filterPolicy: .init(rawValue: byte(&rng)), ownAddressType: .init(rawValue: byte(&rng)),
                peerAddressType: LEAddressType(rawValue: byte(&rng)), peerAddress: address(&rng),
                le1M: phyConnection(&rng), le2M: phyConnection(&rng), leCoded: phyConnection(&rng)))
        case 33: return .leReadAdvertisingPhysicalChannelTxPower
        case 34: return .leSetAdvertisingSetRandomAddress(handle: byte(&rng), address: address(&rng))
        case 35:
            return .leSetExtendedAdvertisingParameters(HCICommand.ExtendedAdvertisingParameters(
                handle: byte(&rng), properties: .init(rawValue: u16(&rng)),
                intervalMin: UInt32(u16(&rng)) << 8 | UInt32(byte(&rng)), intervalMax: UInt32(u16(&rng)) << 8 | UInt32(byte(&rng)),
                channels: .init(rawValue: byte(&rng)), ownAddressType: .init(rawValue: byte(&rng)),
                peerAddressType: LEAddressType(rawValue: byte(&rng)), peerAddress: address(&rng),
                filterPolicy: .init(rawValue: byte(&rng)), txPower: Int8(bitPattern: byte(&rng)),
                primaryPHY: LEPHY(byte(&rng)), secondaryMaxSkip: byte(&rng), secondaryPHY: LEPHY(byte(&rng)),
                sid: byte(&rng), scanRequestNotifications: bool(&rng)))
        case 36, 37:
            let fragment = HCICommand.AdvertisingDataFragment(
                handle: byte(&rng), operation: .init(rawValue: byte(&rng)), fragmentPreference: .init(rawValue: byte(&rng)),
                data: bytes(&rng, count: 0...251))!
            return index == 36 ? .leSetExtendedAdvertisingData(fragment) : .leSetExtendedScanResponseData(fragment)
        case 38:
            let sets = (0..<Int.random(in: 0...63, using: &rng)).map { _ in
                HCICommand.AdvertisingSetActivation(handle: byte(&rng), duration: u16(&rng), maximumEvents: byte(&rng))
            }
            return .leSetExtendedAdvertisingEnable(HCICommand.ExtendedAdvertisingEnable(enable: bool(&rng), sets: sets)!)
        case 39: return .leReadMaximumAdvertisingDataLength
        case 40: return .leReadNumberOfSupportedAdvertisingSets
        case 41: return .leRemoveAdvertisingSet(handle: byte(&rng))
        case 42: return .leClearAdvertisingSets
        case 43:
            return .leEnableEncryption(handle: u16(&rng), random: u64(&rng), encryptedDiversifier: u16(&rng),
                                       longTermKey: UInt128(u64(&rng)) << 64 | UInt128(u64(&rng)))
        case 44: return .leLongTermKeyRequestReply(handle: u16(&rng), longTermKey: UInt128(u64(&rng)) << 64 | UInt128(u64(&rng)))
        case 45: return .leLongTermKeyRequestNegativeReply(handle: u16(&rng))
        default:
            var opcode = u16(&rng)
            while modelledOpcodes.contains(opcode) { opcode = u16(&rng) }
            return HCICommand.other(opcode: HCIOpcode(opcode), parameters: bytes(&rng, count: 0...255))!
        }
    }

    static var commands: Generator<HCICommand, Shrink.None<HCICommand>> {
        Generator(run: { rng in command(&rng) })
    }

    // MARK: Command Complete returns

    /// Opcodes whose Command Complete carries nothing but the status.
    static let statusOnlyOpcodes: [HCIOpcode] = [
        .reset, .setEventMask, .setEventMaskPage2, .leSetEventMask, .writeLEHostSupport, .leSetRandomAddress,
        .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData, .leSetAdvertisingEnable,
        .leSetScanParameters, .leSetScanEnable, .leCreateConnectionCancel, .leSetExtendedScanParameters,
        .leSetExtendedScanEnable, .leSetAdvertisingSetRandomAddress, .leSetExtendedAdvertisingData,
        .leSetExtendedScanResponseData, .leSetExtendedAdvertisingEnable, .leRemoveAdvertisingSet, .leClearAdvertisingSets,
    ]
    static let handleOpcodes: [HCIOpcode] = [
        .leSetDataLength, .leRemoteConnectionParameterRequestReply, .leRemoteConnectionParameterRequestNegativeReply,
        .leLongTermKeyRequestReply, .leLongTermKeyRequestNegativeReply,
    ]
    static let typedOpcodes: [HCIOpcode] = [
        .readLocalVersionInformation, .readLocalSupportedCommands, .readLocalSupportedFeatures, .readBDADDR,
        .readBufferSize, .leReadBufferSize, .leReadBufferSizeV2, .leReadLocalSupportedFeatures, .readRSSI,
        .leReadMaximumDataLength, .leReadAdvertisingPhysicalChannelTxPower, .leSetExtendedAdvertisingParameters,
        .leReadMaximumAdvertisingDataLength, .leReadNumberOfSupportedAdvertisingSets,
    ]
    static var returnOpcodes: [HCIOpcode] { statusOnlyOpcodes + handleOpcodes + typedOpcodes }

    static func commandReturn(_ rng: inout some RandomNumberGenerator) -> CommandReturn {
        switch Int.random(in: 0..<18, using: &rng) {
        case 0: return .success(statusOnlyOpcodes.randomElement(using: &rng)!)
        case 1:
            return .failure(returnOpcodes.randomElement(using: &rng)!, status: HCIStatus(UInt8.random(in: 1...255, using: &rng)),
                            trailing: bytes(&rng, count: 0...20))
        case 2:
            return .localVersion(.init(hciVersion: byte(&rng), hciSubversion: u16(&rng), lmpVersion: byte(&rng),
                                       companyIdentifier: u16(&rng), lmpSubversion: u16(&rng)))
        case 3: return .supportedCommands(SupportedCommands(octets: bytes(&rng, count: 64...64))!)
        case 4: return .localFeatures(LMPFeatures(rawValue: u64(&rng)))
        case 5: return .deviceAddress(address(&rng))
        case 6:
            return .bufferSize(.init(aclDataPacketLength: u16(&rng), synchronousDataPacketLength: byte(&rng),
                                     totalACLDataPackets: u16(&rng), totalSynchronousDataPackets: u16(&rng)))
        case 7: return .leBufferSize(.init(aclDataPacketLength: u16(&rng), totalACLDataPackets: byte(&rng)))
        case 8:
            return .leBufferSize(.init(aclDataPacketLength: u16(&rng), totalACLDataPackets: byte(&rng),
                                       iso: .init(dataPacketLength: u16(&rng), totalDataPackets: byte(&rng))))
        case 9: return .leLocalFeatures(LEFeatures(rawValue: u64(&rng)))
        case 10: return .rssi(handle: u16(&rng), rssi: Int8(bitPattern: byte(&rng)))
        case 11: return .connectionHandle(handleOpcodes.randomElement(using: &rng)!, handle: u16(&rng))
        case 12:
            return .maximumDataLength(.init(maxTxOctets: u16(&rng), maxTxTime: u16(&rng), maxRxOctets: u16(&rng), maxRxTime: u16(&rng)))
        case 13: return .advertisingTxPower(Int8(bitPattern: byte(&rng)))
        case 14: return .selectedTxPower(Int8(bitPattern: byte(&rng)))
        case 15: return .maximumAdvertisingDataLength(u16(&rng))
        case 16: return .supportedAdvertisingSets(byte(&rng))
        default:
            var opcode = u16(&rng)
            while returnOpcodes.contains(HCIOpcode(opcode)) { opcode = u16(&rng) }
            return .other(HCIOpcode(opcode), returnParameters: bytes(&rng, count: 0...40))
        }
    }

    static var commandReturns: Generator<CommandReturn, Shrink.None<CommandReturn>> {
        Generator(run: { rng in commandReturn(&rng) })
    }

    /// Random bytes of random length, for "never traps" properties.
    static func randomBytes(maxCount: Int) -> Generator<[UInt8], Shrink.None<[UInt8]>> {
        Generator(run: { rng in bytes(&rng, count: 0...maxCount) })
    }
}
