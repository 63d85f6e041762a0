#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CBluetooth
import SystemPackage

/// The kernel's Bluetooth adapters: list them, pick one, bring one up. Each call opens its own
/// HCI control socket (unbound `BTPROTO_HCI`), asks, and closes it.
public enum KernelAdapters {
    /// Every adapter, by index (HCIGETDEVLIST, then HCIGETDEVINFO for each). An adapter that
    /// disappears between the two calls is left out. Throws ``KernelError/noBluetoothInKernel``
    /// on a kernel without Bluetooth; an empty list is not an error here (see ``select(_:from:)``).
    public static func list() throws(KernelError) -> [KernelAdapterInfo] {
        let control = try controlSocket()
        defer { BluetoothSocket.closeQuietly(control) }
        let indexes = try deviceIndexes(control)
        var adapters: [KernelAdapterInfo] = []
        for index in indexes {
            var info = hci_dev_info()
            info.dev_id = index
            do {
                try withUnsafeMutableBytes(of: &info) { (raw) throws(Errno) in
                    guard let base = raw.baseAddress else { return }
                    try BluetoothSocket.ioctl(control, rawble_ioctl_hcigetdevinfo(), pointer: base)
                }
            } catch .operationNotSupportedByDevice {
                continue
            } catch {
                throw KernelError.classify(error, operation: "reading hci\(index)'s information (HCIGETDEVINFO)")
            }
            adapters.append(KernelAdapterInfo(info))
        }
        return adapters.sorted { $0.index < $1.index }
    }

    /// The adapter to use: the one named `name` (`hciN`), or with no name the first that is up,
    /// else the first. Throws ``KernelError/noAdapter`` or ``KernelError/noSuchAdapter(_:available:)``.
    public static func select(_ name: String?, from adapters: [KernelAdapterInfo]) throws(KernelError) -> KernelAdapterInfo {
        guard let name else {
            guard let chosen = adapters.first(where: \.isUp) ?? adapters.first else { throw .noAdapter }
            return chosen
        }
        guard let chosen = adapters.first(where: { $0.name == name }) else {
            if adapters.isEmpty, KernelAdapterInfo.index(fromName: name) == nil {
                throw .noSuchAdapter(name, available: [])
            }
            throw .noSuchAdapter(name, available: adapters.map(\.name))
        }
        return chosen
    }

    /// ``list()`` then ``select(_:from:)``.
    public static func find(_ name: String?) throws(KernelError) -> KernelAdapterInfo {
        try select(name, from: list())
    }

    /// Brings adapter `index` up (HCIDEVUP; it blocks until the controller answered the
    /// kernel's initialisation). Already up (EALREADY) is success. Throws
    /// ``KernelError/adapterDownWithoutPermission(adapter:user:)`` without CAP_NET_ADMIN,
    /// ``KernelError/noSuchAdapter(_:available:)`` for an index that does not exist, and
    /// ``KernelError/rfkillBlocked(adapter:)`` when rfkill blocks it.
    public static func up(index: UInt16) throws(KernelError) {
        let control = try controlSocket()
        defer { BluetoothSocket.closeQuietly(control) }
        do {
            try Privileges.perform(.netAdmin) { () throws(Errno) in
                try BluetoothSocket.ioctl(control, rawble_ioctl_hcidevup(), integer: Int32(index))
            }
        } catch {
            if let failure = upFailure(error, index: index) { throw failure }
        }
    }

    /// The typed error for HCIDEVUP's errno on `hci<index>`, or `nil` when it means success
    /// (EALREADY: already up).
    public static func upFailure(_ errno: Errno, index: UInt16) -> KernelError? {
        let name = "hci\(index)"
        switch errno {
        case .alreadyInProcess: return nil  // EALREADY (114): already up
        case .notPermitted, .permissionDenied:
            return .adapterDownWithoutPermission(adapter: name, user: KernelError.userName)
        case .operationNotSupportedByDevice: return .noSuchAdapter(name, available: (try? list().map(\.name)) ?? [])
        case Errno(rawValue: KernelError.erfkill): return .rfkillBlocked(adapter: name)
        default: return KernelError.classify(errno, operation: "bringing \(name) up (HCIDEVUP)", adapter: name)
        }
    }

    // MARK: Internals

    /// An unbound HCI socket for the adapter ioctls.
    static func controlSocket() throws(KernelError) -> FileDescriptor {
        do {
            return try BluetoothSocket.open(type: Int32(SOCK_RAW.rawValue), protocol: BTPROTO_HCI, nonBlocking: false)
        } catch {
            throw KernelError.classify(error, operation: "opening an HCI socket")
        }
    }

    /// The adapters' indexes (HCIGETDEVLIST over a buffer for HCI_MAX_DEV entries).
    static func deviceIndexes(_ control: FileDescriptor) throws(KernelError) -> [UInt16] {
        let offset = rawble_dev_list_req_offset()
        let stride = rawble_dev_req_size()
        let capacity = Int(HCI_MAX_DEV)
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: offset + capacity * stride, alignment: 8)
        defer { raw.deallocate() }
        raw.initializeMemory(as: UInt8.self, repeating: 0)
        raw.storeBytes(of: UInt16(capacity), toByteOffset: 0, as: UInt16.self)
        do {
            guard let base = raw.baseAddress else { return [] }
            try BluetoothSocket.ioctl(control, rawble_ioctl_hcigetdevlist(), pointer: base)
        } catch {
            throw KernelError.classify(error, operation: "listing adapters (HCIGETDEVLIST)")
        }
        return decodeDeviceList(UnsafeRawBufferPointer(raw), capacity: capacity)
    }

    /// The indexes in a filled `struct hci_dev_list_req`: at most `capacity` and never past
    /// the buffer, whatever count it claims.
    static func decodeDeviceList(_ raw: UnsafeRawBufferPointer, capacity: Int) -> [UInt16] {
        guard raw.count >= 2 else { return [] }
        let offset = rawble_dev_list_req_offset()
        let stride = rawble_dev_req_size()
        let claimed = Int(raw.loadUnaligned(fromByteOffset: 0, as: UInt16.self))
        let fitting = raw.count >= offset ? (raw.count - offset) / stride : 0
        let count = min(claimed, capacity, fitting)
        return (0..<count).map { raw.loadUnaligned(fromByteOffset: offset + $0 * stride, as: UInt16.self) }
    }
}
