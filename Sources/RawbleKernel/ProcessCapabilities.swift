#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The Linux capabilities this process has in effect (`CapEff` in `/proc/self/status`), for
/// the two that Bluetooth sockets check: to say in one line which is missing before a raw
/// socket fails in a less telling way.
public struct ProcessCapabilities: Hashable, Sendable {
    /// CAP_NET_RAW (13): commands on the HCI raw channel.
    public var netRaw: Bool
    /// CAP_NET_ADMIN (12): the management interface's commands, powering adapters on.
    public var netAdmin: Bool

    /// The capabilities of this process now; both `true` when they cannot be read (a kernel
    /// without `/proc`: the socket calls will tell then).
    public static var current: ProcessCapabilities {
        guard let status = readStatus(), let mask = effectiveMask(inStatus: status) else {
            return ProcessCapabilities(netRaw: true, netAdmin: true)
        }
        return ProcessCapabilities(effective: mask)
    }

    /// From a `CapEff` bit mask.
    public init(effective mask: UInt64) {
        netRaw = mask & (1 << 13) != 0
        netAdmin = mask & (1 << 12) != 0
    }

    public init(netRaw: Bool, netAdmin: Bool) {
        self.netRaw = netRaw
        self.netAdmin = netAdmin
    }

    /// The `CapEff:` line's mask in the text of a `/proc/PID/status` file.
    public static func effectiveMask(inStatus text: String) -> UInt64? {
        mask("CapEff", inStatus: text)
    }

    /// The mask of the `field:` line (`CapEff`, `CapPrm`, `CapInh`, `CapAmb`, `CapBnd`) in the
    /// text of a `/proc/PID/status` file (or of a thread's, `/proc/PID/task/TID/status`).
    public static func mask(_ field: String, inStatus text: String) -> UInt64? {
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return UInt64(line.dropFirst(field.count + 1).trimmingPrefix(while: { $0 == " " || $0 == "\t" }), radix: 16)
        }
        return nil
    }

    private static func readStatus() -> String? {
        let fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 16 {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer.prefix(count)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
