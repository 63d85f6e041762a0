#if canImport(Glibc)
import Glibc
#endif
import CBluetooth
import RawbleKernel
import RawbleWire
import SystemPackage
import Testing

/// Whether this kernel has Bluetooth sockets: `nil` when it has, else the errno that says why not.
func bluetoothSocketsMissing() -> Errno? {
    let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
    guard fd < 0 else {
        close(fd)
        return nil
    }
    return Errno(rawValue: errno)
}

/// Adapter listing and choosing: `hci_dev_info` values decoded as the kernel fills them in, the
/// choice rules, and — on this machine's kernel — what listing does.
@Suite struct KernelAdaptersTests {
    /// An `hci_dev_info` as HCIGETDEVINFO fills it for a USB LE controller.
    static func info(index: UInt16, name: String, up: Bool, le: Bool = true, bus: Int32 = HCI_USB) -> hci_dev_info {
        var info = hci_dev_info()
        info.dev_id = index
        withUnsafeMutableBytes(of: &info.name) { raw in
            for (i, byte) in name.utf8.prefix(raw.count).enumerated() { raw[i] = byte }
        }
        info.bdaddr = bdaddr_t(b: (0x06, 0x05, 0x04, 0x03, 0x02, UInt8(0xA0) | UInt8(index)))
        info.flags = up ? (1 << UInt32(HCI_UP) | 1 << UInt32(HCI_RUNNING)) : 0
        info.type = UInt8(bus) | UInt8(HCI_PRIMARY << 4)
        info.features.4 = le ? UInt8(LMP_LE) : 0
        return info
    }

    @Test func decodesTheDeviceInfo() throws {
        let adapter = KernelAdapterInfo(Self.info(index: 1, name: "hci1", up: true))
        #expect(adapter.index == 1)
        #expect(adapter.name == "hci1")
        #expect(adapter.address == BluetoothAddress("A1:02:03:04:05:06"))
        #expect(adapter.isUp)
        #expect(adapter.supportsLE)
        #expect(adapter.bus == .usb)
        #expect(adapter.bus.description == "USB")

        let down = KernelAdapterInfo(Self.info(index: 0, name: "hci0", up: false, le: false, bus: HCI_VIRTUAL))
        #expect(!down.isUp)
        #expect(!down.supportsLE)
        #expect(down.bus == .virtual)
    }

    @Test func aNameFillingAllEightBytesIsReadNoFurther() {
        let adapter = KernelAdapterInfo(Self.info(index: 7, name: "hci12345678", up: false))
        #expect(adapter.name == "hci12345")
        let unnamed = KernelAdapterInfo(Self.info(index: 3, name: "", up: false))
        #expect(unnamed.name == "hci3")
    }

    @Test func adapterNamesParse() {
        #expect(KernelAdapterInfo.index(fromName: "hci0") == 0)
        #expect(KernelAdapterInfo.index(fromName: "hci12") == 12)
        #expect(KernelAdapterInfo.index(fromName: "hci") == nil)
        #expect(KernelAdapterInfo.index(fromName: "hci-1") == nil)
        #expect(KernelAdapterInfo.index(fromName: "hci65535") == nil)
        #expect(KernelAdapterInfo.index(fromName: "hci99999999") == nil)
        #expect(KernelAdapterInfo.index(fromName: "usb0") == nil)
    }

    @Test func selectionPrefersTheNamedThenTheFirstUpThenTheFirst() throws {
        let down0 = KernelAdapterInfo(Self.info(index: 0, name: "hci0", up: false))
        let up1 = KernelAdapterInfo(Self.info(index: 1, name: "hci1", up: true))
        let down2 = KernelAdapterInfo(Self.info(index: 2, name: "hci2", up: false))
        #expect(try KernelAdapters.select(nil, from: [down0, up1, down2]) == up1)
        #expect(try KernelAdapters.select(nil, from: [down0, down2]) == down0)
        #expect(try KernelAdapters.select("hci2", from: [down0, up1, down2]) == down2)
        #expect(throws: KernelError.noAdapter) { try KernelAdapters.select(nil, from: []) }
        #expect(throws: KernelError.noSuchAdapter("hci5", available: ["hci0", "hci1"])) {
            try KernelAdapters.select("hci5", from: [down0, up1])
        }
        #expect(
            KernelError.noSuchAdapter("hci5", available: ["hci0", "hci1"]).description
                == "no adapter hci5: the adapters are hci0, hci1")
    }

    @Test func upTreatsAlreadyUpAsSuccessAndNamesEachFailure() throws {
        #expect(KernelAdapters.upFailure(.alreadyInProcess, index: 0) == nil)
        let denied = try #require(KernelAdapters.upFailure(.notPermitted, index: 0))
        #expect(denied == .adapterDownWithoutPermission(adapter: "hci0", user: KernelError.userName))
        #expect(denied.description.contains("`sudo adduser \(KernelError.userName) rawble`"))
        #expect(!denied.description.contains("setcap"))
        #expect(KernelAdapters.upFailure(Errno(rawValue: 132), index: 1) == .rfkillBlocked(adapter: "hci1"))
    }

    /// On a kernel without Bluetooth (this build machine), listing fails with the typed error;
    /// on one with Bluetooth (the VM), it lists.
    @Test func listingOnThisKernel() throws {
        if let missing = bluetoothSocketsMissing() {
            #expect(missing == .addressFamilyNotSupported, "socket(AF_BLUETOOTH) failed with \(missing)")
            #expect(throws: KernelError.noBluetoothInKernel) { try KernelAdapters.list() }
            #expect(throws: KernelError.noBluetoothInKernel) { try KernelAdapters.up(index: 0) }
            print("KernelAdaptersTests: no AF_BLUETOOTH in this kernel: checked the typed error only; listing real adapters runs in the VM")
        } else {
            let adapters = try KernelAdapters.list()
            print("KernelAdaptersTests: this kernel has Bluetooth; adapters: \(adapters.map(\.name))")
            #expect(adapters.map(\.index) == adapters.map(\.index).sorted())
        }
    }
}
