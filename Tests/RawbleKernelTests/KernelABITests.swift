#if canImport(Glibc)
import Glibc
#endif
import CBluetooth
import RawbleKernel
import RawbleWire
import Testing

/// The kernel ABI as Swift imports it from libbluetooth-dev's headers: sizes checked against the
/// C compiler's own, addresses in the kernel's byte order, the filter against hci_lib.h's helpers.
@Suite struct KernelABITests {
    @Test func structSizesMatchTheHeaders() {
        #expect(MemoryLayout<sockaddr_hci>.size == rawble_sizeof_sockaddr_hci())
        #expect(MemoryLayout<sockaddr_hci>.size == 6)
        #expect(MemoryLayout<sockaddr_l2>.size == rawble_sizeof_sockaddr_l2())
        #expect(MemoryLayout<sockaddr_l2>.size == 14)
        #expect(MemoryLayout<hci_filter>.size == rawble_sizeof_hci_filter())
        #expect(MemoryLayout<hci_filter>.size == 16)
        #expect(MemoryLayout<hci_dev_info>.size == rawble_sizeof_hci_dev_info())
        #expect(MemoryLayout<bt_security>.size == rawble_sizeof_bt_security())
        #expect(MemoryLayout<sockaddr_l2>.offset(of: \.l2_cid) == rawble_offsetof_sockaddr_l2_cid())
        #expect(MemoryLayout<sockaddr_l2>.offset(of: \.l2_bdaddr_type) == rawble_offsetof_sockaddr_l2_bdaddr_type())
    }

    @Test func ioctlNumbersAreTheKernels() {
        // _IOW('H', 201, int) as kernel-vm.md saw it work; the others from the same macros.
        #expect(rawble_ioctl_hcidevup() == 0x4004_48C9)
        #expect(rawble_ioctl_hcigetdevlist() == 0x8004_48D2)
        #expect(rawble_ioctl_hcigetdevinfo() == 0x8004_48D3)
    }

    @Test func l2capAddressIsLittleEndianWithTheAddressReversed() throws {
        let peer = try #require(BluetoothAddress("C0:B1:E0:00:00:01"))
        let address = BluetoothSocketAddress.l2cap(address: peer, type: .leRandom, cid: 4)
        let bytes = BluetoothSocketAddress.bytes(of: address)
        #expect(bytes.count == 14)
        // family 31 (LE u16), psm 0, bdaddr least-significant byte first, cid 4 (LE), type 2.
        #expect(Array(bytes.prefix(13)) == [31, 0, 0, 0, 0x01, 0x00, 0x00, 0xE0, 0xB1, 0xC0, 4, 0, 2])
        #expect(BluetoothSocketAddress.address(address.l2_bdaddr) == peer)
    }

    @Test func l2capAddressTypeFollowsTheLEAddressType() {
        #expect(L2CAPAddressType(.public) == .lePublic)
        #expect(L2CAPAddressType(.publicIdentity) == .lePublic)
        #expect(L2CAPAddressType(.random) == .leRandom)
        #expect(L2CAPAddressType(.randomIdentity) == .leRandom)
        #expect(L2CAPAddressType.lePublic.rawValue == UInt8(BDADDR_LE_PUBLIC))
        #expect(L2CAPAddressType.leRandom.rawValue == UInt8(BDADDR_LE_RANDOM))
    }

    @Test func hciAddressNamesAdapterAndChannel() {
        let address = BluetoothSocketAddress.hci(adapter: 2, channel: .user)
        #expect(BluetoothSocketAddress.bytes(of: address) == [31, 0, 2, 0, 1, 0])
        #expect(HCIChannel.raw.rawValue == UInt16(HCI_CHANNEL_RAW))
        #expect(HCIChannel.user.rawValue == UInt16(HCI_CHANNEL_USER))
        #expect(HCIChannel.monitor.rawValue == UInt16(HCI_CHANNEL_MONITOR))
    }

    @Test func centralFilterIsWhatHCILibBuilds() {
        var expected = hci_filter()
        hci_filter_clear(&expected)
        hci_filter_set_ptype(HCI_EVENT_PKT, &expected)
        hci_filter_set_ptype(HCI_COMMAND_PKT, &expected)
        for event in [EVT_CMD_COMPLETE, EVT_CMD_STATUS, EVT_LE_META_EVENT, EVT_DISCONN_COMPLETE] {
            hci_filter_set_event(event, &expected)
        }
        let built = HCIFilter.central.cValue
        #expect(built.type_mask == expected.type_mask)
        #expect(built.event_mask.0 == expected.event_mask.0)
        #expect(built.event_mask.1 == expected.event_mask.1)
        #expect(built.opcode == expected.opcode)
        // And the bits themselves: events and commands; 0x05, 0x0E, 0x0F low, 0x3E high.
        #expect(built.type_mask == 1 << 4 | 1 << 1)
        #expect(built.event_mask.0 == (1 << 0x05 | 1 << 0x0E | 1 << 0x0F))
        #expect(built.event_mask.1 == 1 << (0x3E - 32))
    }

    @Test func filterPassesExactlyWhatItNames() {
        let filter = HCIFilter.central
        #expect(filter.passes(.event))
        #expect(!filter.passes(.acl))
        #expect(filter.passes(.command))
        for code in 0...255 {
            let expected = [0x05, 0x0E, 0x0F, 0x3E].contains(code & 63)
            #expect(filter.passes(event: UInt8(code)) == expected, "event 0x\(String(code, radix: 16))")
        }
    }
}
