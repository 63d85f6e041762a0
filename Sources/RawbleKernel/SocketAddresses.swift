#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CBluetooth
import RawbleWire

/// Which HCI socket channel to bind (`sockaddr_hci.hci_channel`).
public enum HCIChannel: UInt16, Hashable, Sendable, CustomStringConvertible {
    /// Shared with the kernel, which keeps the controller: the adapter must be up; sending
    /// commands needs CAP_NET_RAW.
    case raw = 0
    /// Exclusive: the adapter must be down, CAP_NET_ADMIN; the host then owns everything.
    case user = 1
    /// A read-only copy of every adapter's traffic (what btmon reads), CAP_NET_RAW.
    case monitor = 2

    public var description: String {
        switch self {
        case .raw: "raw"
        case .user: "user"
        case .monitor: "monitor"
        }
    }
}

/// The address type in `sockaddr_l2.l2_bdaddr_type`: which kind of link the kernel makes.
public enum L2CAPAddressType: UInt8, Hashable, Sendable {
    case bredr = 0
    case lePublic = 1
    case leRandom = 2

    /// The kernel's type for an LE address of HCI type `type` (public and public identity →
    /// LE public; everything else → LE random).
    public init(_ type: LEAddressType) {
        self = type.isPublic == true ? .lePublic : .leRandom
    }
}

/// Builders of the kernel's Bluetooth socket addresses from typed values.
public enum BluetoothSocketAddress {
    /// `sockaddr_hci` for adapter `index` on `channel` (`index` 0xFFFF = HCI_DEV_NONE, for the
    /// monitor channel and control sockets).
    public static func hci(adapter index: UInt16, channel: HCIChannel) -> sockaddr_hci {
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = index
        address.hci_channel = channel.rawValue
        return address
    }

    /// `sockaddr_l2` for `address` of `type` on fixed channel `cid` (ATT is 4) or `psm`, with
    /// the 16-bit fields little-endian and the address bytes least-significant first, as the
    /// kernel reads them.
    public static func l2cap(
        address: BluetoothAddress, type: L2CAPAddressType, cid: UInt16 = 4, psm: UInt16 = 0
    ) -> sockaddr_l2 {
        var l2 = sockaddr_l2()
        l2.l2_family = sa_family_t(AF_BLUETOOTH)
        l2.l2_psm = psm.littleEndian
        l2.l2_cid = cid.littleEndian
        l2.l2_bdaddr_type = type.rawValue
        l2.l2_bdaddr = bdaddr(address)
        return l2
    }

    /// `bdaddr_t` holding `address` least-significant byte first.
    public static func bdaddr(_ address: BluetoothAddress) -> bdaddr_t {
        let b = address.littleEndianBytes
        return bdaddr_t(b: (b[0], b[1], b[2], b[3], b[4], b[5]))
    }

    /// The address in `value` (least-significant byte first).
    public static func address(_ value: bdaddr_t) -> BluetoothAddress {
        let b = value.b
        return BluetoothAddress(littleEndianBytes: [b.0, b.1, b.2, b.3, b.4, b.5]) ?? .any
    }

    /// The raw bytes of `value`, as the kernel sees them (for tests and logs).
    public static func bytes<T>(of value: T) -> [UInt8] {
        withUnsafeBytes(of: value) { Array($0) }
    }
}
