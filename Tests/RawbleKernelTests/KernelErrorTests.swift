#if canImport(Glibc)
import Glibc
import RawbleWire
#endif
import RawbleKernel
import SystemPackage
import Testing

/// Each kernel error is one line a person can act on.
@Suite struct KernelErrorTests {
    @Test func eafnosupportMeansNoBluetoothInTheKernel() {
        let error = KernelError.classify(.addressFamilyNotSupported, operation: "opening an HCI socket")
        #expect(error == .noBluetoothInKernel)
        #expect(error.description.hasPrefix("this kernel has no Bluetooth support"))
        #expect(error.description.contains("modprobe bluetooth"))
    }

    /// Not `sudo setcap … /usr/bin/rawble`, which would give the capabilities to every account:
    /// the group an administrator adds this account to, with the exact line.
    @Test func missingCapabilityNamesTheGroupAndTheAdministratorsLine() throws {
        let user = KernelError.userName
        #expect(!user.isEmpty && user != "$USER")
        for errno in [Errno.notPermitted, .permissionDenied] {
            let error = KernelError.classify(errno, operation: "sending on hci0")
            #expect(error == .missingCapability(operation: "sending on hci0", errno: errno, user: user))
            #expect(error.description.contains("rawble has no CAP_NET_RAW and CAP_NET_ADMIN for you"))
            #expect(error.description.contains("ask an administrator to add you to the rawble group (`sudo adduser \(user) rawble`, then log in again; see SECURITY.md)"))
            #expect(!error.description.contains("setcap"))
            #expect(!error.description.contains("\n"))
        }
        let down = KernelError.adapterDownWithoutPermission(adapter: "hci1", user: "alice").description
        #expect(down.contains("`sudo adduser alice rawble`") && down.contains("hci1") && !down.contains("setcap"), "\(down)")
    }

    @Test func adapterErrnosNeedTheAdapterToBeNamed() {
        #expect(KernelError.classify(.operationNotSupportedByDevice, operation: "read", adapter: "hci0") == .adapterRemoved(adapter: "hci0"))
        #expect(KernelError.classify(.networkDown, operation: "send", adapter: "hci1") == .adapterDown(adapter: "hci1"))
        #expect(KernelError.classify(.networkDown, operation: "send") == .system(operation: "send", errno: .networkDown))
    }

    @Test func everyDescriptionIsOneActionableLine() {
        let errors: [KernelError] = [
            .noBluetoothInKernel, .noAdapter, .noSuchAdapter("hci3", available: []),
            .adapterDownWithoutPermission(adapter: "hci0", user: "alice"),
            .missingCapability(operation: "x", errno: .notPermitted, user: "alice"),
            .userChannelBusy(adapter: "hci0"), .rfkillBlocked(adapter: "hci0"), .adapterRemoved(adapter: "hci0"),
            .adapterDown(adapter: "hci0"), .connectTimeout(peer: "C0:B1:E0:00:00:01", seconds: 5),
            .connectFailed(peer: "C0:B1:E0:00:00:01", errno: .connectionRefused, reason: "connection refused"),
            .system(operation: "bind", errno: .resourceBusy),
        ]
        for error in errors {
            #expect(!error.description.isEmpty)
            #expect(!error.description.contains("\n"), "\(error)")
        }
        #expect(KernelError.userChannelBusy(adapter: "hci0").description.contains("systemctl stop bluetooth"))
        #expect(KernelError.connectTimeout(peer: "C0:B1:E0:00:00:01", seconds: 5).description
            == "connecting to C0:B1:E0:00:00:01 timed out after 5 s: check it is advertising, in range, and the address type (public/random) is right")
        #expect(KernelError.system(operation: "bind", errno: .resourceBusy).description == "bind failed: Device or resource busy (errno 16)")
    }
}
