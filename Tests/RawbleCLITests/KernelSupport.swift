#if canImport(Glibc)
import Glibc
#endif

/// Whether this machine's kernel has Bluetooth sockets (AF_BLUETOOTH = 31): these build
/// machines have none, so the kernel path is tested in the VM (Scripts/vm-test).
enum KernelSupport {
    static let hasBluetooth: Bool = {
        let fd = socket(31, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 1)
        if fd >= 0 { close(fd) }
        return fd >= 0 || errno != EAFNOSUPPORT
    }()
}
