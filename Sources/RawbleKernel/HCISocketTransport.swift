#if canImport(Glibc)
import Glibc
import RawbleHCITransport
#elseif canImport(Musl)
import Musl
#endif
import CBluetooth
import RawbleTransport
import RawbleWire
import SystemPackage

/// An adapter's HCI socket as an `HCITransport`: the raw channel (`hciN`, shared with the
/// kernel, which keeps the controller) or the user channel (`user:hciN`, exclusive: the stack's
/// own host drives the controller). Each read is one packet behind its H4 type byte and each
/// write must be one, so the socket runs on the same NIO core as the H4 stream transports
/// (`H4StreamTransport.adoptPacketSocket(_:maximumPacketLength:name:writeStallTimeout:onFramingError:)`:
/// fixed receive buffer, one write in flight).
public enum HCISocketTransport {
    /// Opens adapter `index`'s HCI socket on `channel` and binds it. On the raw channel,
    /// `filter` (default: what a central needs, ``HCIFilter/central``) is set before the bind so
    /// no other packet ever reaches the socket; the user channel has no filter (the kernel
    /// refuses one there) and gets everything.
    ///
    /// Throws ``KernelError/noBluetoothInKernel``, ``KernelError/noSuchAdapter(_:available:)``,
    /// ``KernelError/missingCapability(operation:errno:user:)`` (user channel without
    /// CAP_NET_ADMIN), ``KernelError/userChannelBusy(adapter:)`` (adapter up or held) or
    /// ``KernelError/rfkillBlocked(adapter:)``.
    ///
    /// The raw channel comes back as a ``KernelRawChannel`` (its sends need CAP_NET_RAW at
    /// each one), the user channel as the packet-socket `H4StreamTransport` (the kernel checks
    /// CAP_NET_ADMIN at the bind only). The filter and the user channel's bind run through
    /// ``Privileges`` with the capability the kernel checks there.
    public static func open(
        adapter index: UInt16, channel: HCIChannel, filter: HCIFilter = .central,
        writeStallTimeout: Duration = .seconds(10)
    ) throws(KernelError) -> any HCITransport {
        let name = "hci\(index)"
        let fd: FileDescriptor
        do {
            fd = try BluetoothSocket.open(type: Int32(SOCK_RAW.rawValue), protocol: BTPROTO_HCI, nonBlocking: true)
        } catch {
            throw KernelError.classify(error, operation: "opening an HCI socket for \(name)")
        }
        do throws(KernelError) {
            if channel == .raw {
                do {
                    // Without CAP_NET_RAW the kernel silently narrows the filter to its security
                    // filter's events (no LE Meta event): checked here, once, not at each read.
                    try Privileges.perform(.netRaw) { () throws(Errno) in
                        try BluetoothSocket.setOption(fd, level: SOL_HCI, name: HCI_FILTER, filter.cValue)
                    }
                } catch {
                    throw KernelError.classify(error, operation: "setting \(name)'s HCI filter")
                }
            }
            do {
                try Privileges.perform(channel == .user ? .netAdmin : []) { () throws(Errno) in
                    try BluetoothSocket.bind(fd, BluetoothSocketAddress.hci(adapter: index, channel: channel))
                }
            } catch {
                throw bindFailure(error, channel: channel, index: index)
            }
        } catch {
            BluetoothSocket.closeQuietly(fd)
            throw error
        }
        // The raw channel carries every event of the adapter (every advertising report) beside
        // the answers to rawble's own commands; the user channel, a scan's reports.
        BluetoothSocket.enlargeReceiveBuffer(fd)
        let label = channel == .user ? "user:\(name)" : name
        var sendDescriptor: Int32 = -1
        if channel == .raw {
            sendDescriptor = fcntl(fd.rawValue, F_DUPFD_CLOEXEC, 0)
            guard sendDescriptor >= 0 else {
                let failure = BluetoothSocket.lastErrno
                BluetoothSocket.closeQuietly(fd)
                throw .system(operation: "duplicating \(name)'s raw channel", errno: failure)
            }
        }
        let transport = H4StreamTransport.adoptPacketSocket(
            fd.rawValue, maximumPacketLength: maximumPacketLength(channel: channel, filter: filter), name: label,
            writeStallTimeout: writeStallTimeout)
        guard channel == .raw else { return transport }
        return KernelRawChannel(reading: transport, sendDescriptor: sendDescriptor, name: label, writeStallTimeout: writeStallTimeout)
    }

    /// The receive buffer a packet on this socket needs: the largest command (type byte,
    /// 3-byte header, 255 bytes; an event is one byte shorter) when the raw channel's filter
    /// lets only events and commands through; else the largest ACL packet (type byte, 4-byte
    /// header, 65 535 bytes), since a packet socket drops what does not fit.
    public static func maximumPacketLength(channel: HCIChannel, filter: HCIFilter) -> Int {
        let small: [H4PacketType] = [.event, .command]
        if channel == .raw, H4PacketType.allCases.allSatisfy({ small.contains($0) || !filter.passes($0) }) {
            return 1 + max(H4PacketType.command.headerLength + H4PacketType.command.maximumPayloadLength,
                           H4PacketType.event.headerLength + H4PacketType.event.maximumPayloadLength)
        }
        return 1 + H4PacketType.acl.headerLength + H4PacketType.acl.maximumPayloadLength
    }

    /// The typed error for a failed bind of `hci<index>` on `channel`.
    public static func bindFailure(_ errno: Errno, channel: HCIChannel, index: UInt16) -> KernelError {
        let name = "hci\(index)"
        switch errno {
        case .operationNotSupportedByDevice:
            return .noSuchAdapter(name, available: (try? KernelAdapters.list().map(\.name)) ?? [])
        case .resourceBusy, .tooManyUsers, .alreadyInProcess:
            // EBUSY: the adapter is up; EUSERS: another user channel holds it.
            return channel == .user ? .userChannelBusy(adapter: name) : .system(operation: "binding \(name)", errno: errno)
        case Errno(rawValue: KernelError.erfkill): return .rfkillBlocked(adapter: name)
        default:
            return KernelError.classify(errno, operation: "binding \(name)'s \(channel) channel", adapter: name)
        }
    }
}

/// A kernel transport named on a command line: `hciN` (raw channel) or `user:hciN`.
public struct KernelTransportName: Hashable, Sendable, CustomStringConvertible {
    /// The adapter's name, `hciN`.
    public var adapter: String
    public var channel: HCIChannel

    /// Parses `hciN` or `user:hciN`; `nil` for anything else.
    public init?(_ text: String) {
        var rest = Substring(text)
        channel = .raw
        if rest.hasPrefix("user:") {
            channel = .user
            rest = rest.dropFirst(5)
        }
        guard KernelAdapterInfo.index(fromName: String(rest)) != nil else { return nil }
        adapter = String(rest)
    }

    public var description: String { channel == .user ? "user:\(adapter)" : adapter }
}
