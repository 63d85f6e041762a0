import CBluetooth
import RawbleWire

/// One adapter the kernel knows (`hciN`), decoded from its `struct hci_dev_info`.
public struct KernelAdapterInfo: Hashable, Sendable {
    /// The kernel's index: the N of `hciN`.
    public var index: UInt16
    /// The kernel's name, `hciN`.
    public var name: String
    /// The controller's public address (all zero until it was first brought up).
    public var address: BluetoothAddress
    /// Whether the adapter is up (HCI_UP in its flags): the raw channel can send.
    public var isUp: Bool
    /// Whether the controller supports LE (the LE Supported (Controller) bit of its LMP features).
    public var supportsLE: Bool
    /// How the controller is attached.
    public var bus: Bus

    /// How a controller is attached (`hci_dev_info.type`'s low four bits: HCI_USB, HCI_UART, …).
    public enum Bus: Hashable, Sendable, CustomStringConvertible {
        case virtual, usb, pcCard, uart, rs232, pci, sdio, spi, i2c, smd, virtio
        case other(UInt8)

        public init(rawValue: UInt8) {
            switch Int32(rawValue) {
            case HCI_VIRTUAL: self = .virtual
            case HCI_USB: self = .usb
            case HCI_PCCARD: self = .pcCard
            case HCI_UART: self = .uart
            case HCI_RS232: self = .rs232
            case HCI_PCI: self = .pci
            case HCI_SDIO: self = .sdio
            case HCI_SPI: self = .spi
            case HCI_I2C: self = .i2c
            case HCI_SMD: self = .smd
            case HCI_VIRTIO: self = .virtio
            default: self = .other(rawValue)
            }
        }

        /// The name hciconfig prints (`USB`, `UART`, `Virtual`, …).
        public var description: String {
            switch self {
            case .virtual: "Virtual"
            case .usb: "USB"
            case .pcCard: "PCCARD"
            case .uart: "UART"
            case .rs232: "RS232"
            case .pci: "PCI"
            case .sdio: "SDIO"
            case .spi: "SPI"
            case .i2c: "I2C"
            case .smd: "SMD"
            case .virtio: "VIRTIO"
            case .other(let value): "bus \(value)"
            }
        }
    }

    public init(index: UInt16, name: String, address: BluetoothAddress, isUp: Bool, supportsLE: Bool, bus: Bus) {
        self.index = index
        self.name = name
        self.address = address
        self.isUp = isUp
        self.supportsLE = supportsLE
        self.bus = bus
    }

    /// Decodes what HCIGETDEVINFO filled in. The name is read up to its first NUL within its
    /// 8 bytes (never past them); an empty name becomes `hci<index>`.
    public init(_ info: hci_dev_info) {
        index = info.dev_id
        let nameBytes = withUnsafeBytes(of: info.name) { Array($0.prefix { $0 != 0 }) }
        let decoded = String(decoding: nameBytes, as: UTF8.self)
        name = decoded.isEmpty ? "hci\(info.dev_id)" : decoded
        address = BluetoothSocketAddress.address(info.bdaddr)
        isUp = info.flags & (1 << UInt32(HCI_UP)) != 0
        supportsLE = info.features.4 & UInt8(LMP_LE) != 0
        bus = Bus(rawValue: info.type & 0x0F)
    }

    /// The index in an adapter name `hciN` (N a decimal below 65535), or `nil`.
    public static func index(fromName name: String) -> UInt16? {
        guard name.hasPrefix("hci") else { return nil }
        let digits = name.dropFirst(3)
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
            digits.count <= 5, let value = UInt16(digits), value != 0xFFFF
        else { return nil }
        return value
    }
}
