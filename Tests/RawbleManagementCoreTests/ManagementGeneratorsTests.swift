import PropertyBased
import RawbleManagementCore
import RawbleTestSupport
import RawbleWire

/// Random, valid management commands and events, for property-based round trips. Field values
/// are `RandomFields`' draws; lengths stay inside what a packet carries.
enum ManagementSamples: RandomFields {
    typealias S = ManagementSamples

    static func u32(_ rng: inout some RandomNumberGenerator) -> UInt32 { UInt32.random(in: 0...UInt32.max, using: &rng) }
    static func i8(_ rng: inout some RandomNumberGenerator) -> Int8 { Int8(bitPattern: S.byte(&rng)) }
    /// A controller index, now and then the non-controller one.
    static func index(_ rng: inout some RandomNumberGenerator) -> UInt16 {
        Int.random(in: 0..<8, using: &rng) == 0 ? ManagementIndex.none : S.u16(&rng)
    }
    static func addressType(_ rng: inout some RandomNumberGenerator) -> ManagementAddressType {
        ManagementAddressType(S.byte(&rng))
    }
    static func types(_ rng: inout some RandomNumberGenerator) -> ManagementAddressTypes {
        ManagementAddressTypes(rawValue: S.byte(&rng))
    }
    static func uuid(_ rng: inout some RandomNumberGenerator) -> BluetoothUUID {
        S.bool(&rng) ? BluetoothUUID(S.u16(&rng)) : BluetoothUUID(high: S.u64(&rng), low: S.u64(&rng))
    }

    /// A random code that is not in `modelled`.
    static func code(outside modelled: Set<UInt16>, _ rng: inout some RandomNumberGenerator) -> UInt16 {
        var code = S.u16(&rng)
        while modelled.contains(code) { code = S.u16(&rng) }
        return code
    }

    // MARK: Commands

    /// Opcodes ManagementCommand models; an `other` sample never uses one of these.
    static let modelledOpcodes: Set<UInt16> = [
        0x0001, 0x0002, 0x0003, 0x0004, 0x0005, 0x0007, 0x0009, 0x000D, 0x0014, 0x0018, 0x0019,
        0x001A, 0x001B, 0x001C, 0x001D, 0x001E, 0x001F, 0x0023, 0x0024, 0x003A, 0x0041,
    ]
    /// Number of shapes ``command(index:_:)`` builds: one per modelled opcode, then `other`.
    static let commandCaseCount = 22

    static func command(index: Int, _ rng: inout some RandomNumberGenerator) -> ManagementCommand {
        let controller = Self.index(&rng)
        let address = S.address(&rng)
        let type = addressType(&rng)
        switch index {
        case 0: return .readVersion
        case 1: return .readCommands
        case 2: return .readIndexList
        case 3: return .readControllerInformation(index: controller)
        case 4: return .setPowered(index: controller, on: S.bool(&rng))
        case 5: return .setConnectable(index: controller, on: S.bool(&rng))
        case 6: return .setBondable(index: controller, on: S.bool(&rng))
        case 7: return .setLowEnergy(index: controller, on: S.bool(&rng))
        case 8: return .disconnect(index: controller, address: address, addressType: type)
        case 9: return .setIOCapability(index: controller, ioCapability: SMPIOCapability(S.byte(&rng)))
        case 10:
            return .pairDevice(index: controller, address: address, addressType: type, ioCapability: SMPIOCapability(S.byte(&rng)))
        case 11: return .cancelPairDevice(index: controller, address: address, addressType: type)
        case 12: return .unpairDevice(index: controller, address: address, addressType: type, disconnect: S.bool(&rng))
        case 13: return .userConfirmationReply(index: controller, address: address, addressType: type)
        case 14: return .userConfirmationNegativeReply(index: controller, address: address, addressType: type)
        case 15: return .userPasskeyReply(index: controller, address: address, addressType: type, passkey: u32(&rng))
        case 16: return .userPasskeyNegativeReply(index: controller, address: address, addressType: type)
        case 17: return .startDiscovery(index: controller, addressTypes: types(&rng))
        case 18: return .stopDiscovery(index: controller, addressTypes: types(&rng))
        case 19:
            let uuids = (0..<Int.random(in: 0...6, using: &rng)).map { _ in uuid(&rng) }
            return .startServiceDiscovery(index: controller, addressTypes: types(&rng), rssiThreshold: i8(&rng), uuids: uuids)
        case 20: return .startLimitedDiscovery(index: controller, addressTypes: types(&rng))
        default:
            return .other(opcode: code(outside: modelledOpcodes, &rng), index: controller, parameters: S.bytes(&rng, count: 0...40))
        }
    }

    static var commands: Generator<ManagementCommand, Shrink.None<ManagementCommand>> {
        Generator(run: { rng in command(index: Int.random(in: 0..<commandCaseCount, using: &rng), &rng) })
    }

    // MARK: Events

    /// Event codes ManagementEvent models; an `other` sample never uses one of these.
    static let modelledEventCodes: Set<UInt16> = [
        0x0001, 0x0002, 0x0003, 0x0004, 0x0005, 0x0006, 0x0007, 0x000B, 0x000C, 0x000D, 0x000F,
        0x0010, 0x0011, 0x0012, 0x0013, 0x0016, 0x0017,
    ]
    /// Number of shapes ``event(index:_:)`` builds: one per modelled code, then `other`.
    static let eventCaseCount = 18

    static func event(index: Int, _ rng: inout some RandomNumberGenerator) -> ManagementEvent {
        let controller = Self.index(&rng)
        let address = S.address(&rng)
        let type = addressType(&rng)
        switch index {
        case 0:
            return .commandComplete(index: controller, opcode: S.u16(&rng), status: ManagementStatus(S.byte(&rng)),
                                    returnParameters: S.bytes(&rng, count: 0...60))
        case 1: return .commandStatus(index: controller, opcode: S.u16(&rng), status: ManagementStatus(S.byte(&rng)))
        case 2: return .controllerError(index: controller, code: S.byte(&rng))
        case 3: return .indexAdded(index: controller)
        case 4: return .indexRemoved(index: controller)
        case 5: return .newSettings(index: controller, settings: ManagementSettings(rawValue: u32(&rng)))
        case 6: return .classOfDeviceChanged(index: controller, classOfDevice: ClassOfDevice(rawValue: u32(&rng)))
        case 7:
            return .deviceConnected(index: controller, ManagementDeviceConnected(
                address: address, addressType: type, flags: ManagementConnectionFlags(rawValue: u32(&rng)),
                data: S.bytes(&rng, count: 0...40)))
        case 8: return .deviceDisconnected(index: controller, address: address, addressType: type, reason: S.byte(&rng))
        case 9: return .connectFailed(index: controller, address: address, addressType: type, status: ManagementStatus(S.byte(&rng)))
        case 10:
            return .userConfirmationRequest(index: controller, address: address, addressType: type,
                                            confirmHint: S.byte(&rng), value: u32(&rng))
        case 11: return .userPasskeyRequest(index: controller, address: address, addressType: type)
        case 12:
            return .authenticationFailed(index: controller, address: address, addressType: type, status: ManagementStatus(S.byte(&rng)))
        case 13:
            return .deviceFound(index: controller, ManagementDeviceFound(
                address: address, addressType: type, rssi: i8(&rng), flags: ManagementDeviceFoundFlags(rawValue: u32(&rng)),
                data: S.bytes(&rng, count: 0...62)))
        case 14: return .discovering(index: controller, addressTypes: types(&rng), discovering: S.bool(&rng))
        case 15: return .deviceUnpaired(index: controller, address: address, addressType: type)
        case 16:
            return .passkeyNotify(index: controller, address: address, addressType: type, passkey: u32(&rng), entered: S.byte(&rng))
        default:
            return .other(code: code(outside: modelledEventCodes, &rng), index: controller, parameters: S.bytes(&rng, count: 0...40))
        }
    }

    static var events: Generator<ManagementEvent, Shrink.None<ManagementEvent>> {
        Generator(run: { rng in event(index: Int.random(in: 0..<eventCaseCount, using: &rng), &rng) })
    }

    /// A packet with a correct header (code from `codes`, random index, length field counting
    /// the random parameters that follow): the input that reaches each parameter decoder.
    static func packets(codes: [UInt16], maxParameters: Int) -> Generator<[UInt8], Shrink.None<[UInt8]>> {
        Generator(run: { rng in
            let code = codes.randomElement(using: &rng) ?? 0
            let parameters = S.bytes(&rng, count: 0...maxParameters)
            return header(code: code, index: S.u16(&rng), length: parameters.count) + parameters
        })
    }

    /// The simulated strap's address, C0:B1:E0:00:00:01, and its bytes in wire order.
    static let strap = BluetoothAddress(0xC0B1_E000_0001)
    static let strapBytes = "01 00 00 E0 B1 C0"

    /// The error decoding `packet` as `T` throws, or `nil` when it decodes.
    static func decodeError<T: WireDecodable>(_ type: T.Type, _ packet: [UInt8]) -> WireError? {
        do {
            _ = try T.decode(packet)
            return nil
        } catch {
            return error
        }
    }

    /// A management header: code, index, length (u16 LE each); the length cut to 16 bits.
    static func header(code: UInt16, index: UInt16, length: Int) -> [UInt8] {
        let length = UInt16(truncatingIfNeeded: length)
        return [UInt8(truncatingIfNeeded: code), UInt8(truncatingIfNeeded: code >> 8),
                UInt8(truncatingIfNeeded: index), UInt8(truncatingIfNeeded: index >> 8),
                UInt8(truncatingIfNeeded: length), UInt8(truncatingIfNeeded: length >> 8)]
    }

    /// Random bytes of random length, for "never traps" properties.
    static func randomBytes(maxCount: Int) -> Generator<[UInt8], Shrink.None<[UInt8]>> {
        Generator(run: { rng in bytes(&rng, count: 0...maxCount) })
    }
}
