import RawbleHostCore
import RawbleWire

/// What the host learned about its controller during start-up, and the choices it made from it.
public struct ControllerInfo: Hashable, Sendable {
    /// Read Local Version Information, when the controller answered it.
    public var version: CommandReturn.LocalVersion?
    /// The commands the controller says it supports (`nil` if it did not answer).
    public var supportedCommands: SupportedCommands?
    /// LE Read Local Supported Features, when answered.
    public var leFeatures: LEFeatures?
    /// The controller's public address (Read BD_ADDR); `nil` or `.any` when it has none.
    public var publicAddress: BluetoothAddress?
    /// The address the host uses on air: the random static address it set, or the public one.
    public var ownAddress: DeviceAddress
    /// Bytes of L2CAP data per outgoing ACL packet (LE Read Buffer Size, or the shared buffers).
    public var aclDataLength: Int
    /// ACL packets the controller buffers at once.
    public var aclPacketCount: Int
    /// Whether the host scans with the extended scanning commands (else the legacy ones).
    public var usesExtendedScanning: Bool
    /// Whether the host connects with LE Extended Create Connection (else LE Create Connection).
    public var usesExtendedCreateConnection: Bool

    /// Whether the controller supports `opcode`; when it did not say, `assumed`.
    public func supports(_ opcode: HCIOpcode, assumed: Bool) -> Bool {
        supportedCommands?.supports(opcode) ?? assumed
    }
}

/// Who owns the controller an ``Adapter`` drives.
public enum ControllerOwner: Hashable, Sendable {
    /// rawble's host: it resets the controller and runs everything (H4 transports, the HCI
    /// user channel).
    case host
    /// The Linux kernel (the raw HCI channel): the adapter never resets or configures the
    /// controller, sends only what scanning needs, and makes no connections of its own (they
    /// go through the kernel's L2CAP sockets). Its own address is the controller's public one.
    case kernel
}

/// The own address a host uses on air.
public enum OwnAddressChoice: Hashable, Sendable {
    /// A random static address (Core Vol 6 Part B 1.3.2.1) set with LE Set Random Address:
    /// the given one, or one generated for this adapter when `nil`. The default: some
    /// controllers (Bumble's among them) drop a central's data when it uses its public address.
    case randomStatic(BluetoothAddress?)
    /// The controller's public address.
    case `public`
    /// A resolvable private address (Core Vol 6 Part B 1.3.2.2), made by the host with the IRK
    /// of ``Adapter/Configuration/pairing``'s identity and changed every `rotatingEvery` (15
    /// minutes is what BlueZ and phones use). Only bonded peers, which received that IRK and
    /// the identity address with it, recognise the host across changes; to anyone else each
    /// address is a new device. A change waits for scanning and connection attempts to end
    /// (the controller refuses a new random address during them) and moves advertising to
    /// the new address (switched off, then on again).
    case resolvablePrivate(rotatingEvery: Duration)

    /// A fresh random static address: the two top bits set, the other 46 neither all 0 nor all 1.
    public static func generateRandomStatic() -> BluetoothAddress {
        var generator = SystemRandomNumberGenerator()
        while true {
            let random = generator.next() & 0x3FFF_FFFF_FFFF
            if random != 0, random != 0x3FFF_FFFF_FFFF {
                return BluetoothAddress(0xC000_0000_0000 | random)
            }
        }
    }
}
