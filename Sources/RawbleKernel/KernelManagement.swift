#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@preconcurrency import Dispatch
import CBluetooth
import RawbleWire
import Synchronization
import SystemPackage

/// The kernel's Bluetooth management interface (the HCI control channel bluetoothd speaks):
/// powering an adapter on the way bluetoothd does, so the kernel's Security Manager (SMP) is
/// there without bluetoothd, and answering the kernel's Just Works questions.
///
/// The kernel registers SMP on an adapter only when a *managed* adapter (its HCI_MGMT flag, set
/// by any management command naming it) is powered on outside its setup: `hci_powered_update_sync`
/// calls `smp_register`. Two ways to end up without it, both seen:
/// - an adapter raised by HCIDEVUP while nobody managed it;
/// - the kernel's own power-on at registration (the adapter is then up, HCI_UP, for ~2 s and
///   switches itself off unless someone claims it). An HCIDEVUP in that window keeps the
///   adapter up (EALREADY) as that setup power-on left it: no SMP, and raising BT_SECURITY on
///   an L2CAP socket fails ("security requested but not available" in the kernel log).
/// Set Powered on the control channel covers both: on a down adapter it powers on managed; in
/// the registration window the kernel finishes the power-on as a managed one (`hci_power_on_sync`:
/// up, managed and auto-off → `hci_powered_update_sync`). HCIGETDEVINFO reports the adapter
/// down in that window (the kernel masks HCI_UP while auto-off is pending), so "down" is the
/// one test for both.
public enum KernelManagement {
    /// Read Controller Information (management opcode 0x0004): allowed without privileges.
    static let readControllerInformation: UInt16 = 0x0004
    /// Set Powered (0x0005): needs CAP_NET_ADMIN (a trusted socket).
    static let setPowered: UInt16 = 0x0005
    /// Management events answering a command: Command Complete (0x0001), Command Status (0x0002).
    static let commandComplete: UInt16 = 0x0001
    static let commandStatus: UInt16 = 0x0002
    /// Management statuses this file acts on.
    static let statusRFKilled: UInt8 = 0x12
    static let statusInvalidIndex: UInt8 = 0x11
    static let statusPermissionDenied: UInt8 = 0x14

    /// Powers adapter `index` on as bluetoothd does (Set Powered, on), so the kernel registers
    /// its Security Manager; returns when the kernel answered (the power-on is done then).
    /// - Throws: ``KernelError/adapterDownWithoutPermission(adapter:executable:)`` without
    ///   CAP_NET_ADMIN, ``KernelError/rfkillBlocked(adapter:)``, or ``KernelError/system(operation:errno:)``
    ///   for any other status or no answer within `timeout`.
    public static func powerOn(index: UInt16, timeout: Duration = .seconds(10)) throws(KernelError) {
        let name = "hci\(index)"
        let answer = try request(setPowered, index: index, parameters: [0x01], timeout: timeout)
        switch answer.status {
        case 0: return
        case statusPermissionDenied: throw .adapterDownWithoutPermission(adapter: name, executable: KernelError.executablePath)
        case statusRFKilled: throw .rfkillBlocked(adapter: name)
        default: throw .system(operation: "powering \(name) on (management status 0x\(hex(answer.status)))", errno: .ioError)
        }
    }

    /// Marks adapter `index` managed by reading its information on the control channel, so
    /// its next power-up registers the Security Manager; waits at most `timeout` for the
    /// answer. Returns the management status (0: success). Bring the adapter up afterwards:
    /// an adapter already up keeps what it has until it is powered off and on again.
    @discardableResult
    public static func markManaged(index: UInt16, timeout: Duration = .seconds(2)) throws(KernelError) -> UInt8 {
        try request(readControllerInformation, index: index, timeout: timeout).status
    }

    /// Sends one command for adapter `index` on a control-channel socket of its own and waits
    /// for its answer (Command Complete or Status for that opcode and index; every other event
    /// on the channel is skipped). Invalid Index is asked again every 50 ms while `timeout`
    /// lasts: the kernel answers so while the adapter is still in its setup.
    static func request(_ opcode: UInt16, index: UInt16, parameters: [UInt8] = [],
                        timeout: Duration) throws(KernelError) -> (status: UInt8, returnParameters: [UInt8]) {
        let fd = try openControlChannel()
        defer { BluetoothSocket.closeQuietly(fd) }
        let name = "hci\(index)"
        let command = header(opcode: opcode, index: index, length: UInt16(truncatingIfNeeded: parameters.count)) + parameters
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let written = command.withUnsafeBytes { write(fd.rawValue, $0.baseAddress, $0.count) }
            guard written == command.count else {
                throw KernelError.classify(BluetoothSocket.lastErrno, operation: "sending management command 0x\(hex(opcode)) for \(name)")
            }
            var answer: (status: UInt8, returnParameters: [UInt8])?
            while answer == nil {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { throw .system(operation: "waiting for \(name)'s management answer", errno: .timedOut) }
                let milliseconds = Int32(min(60_000, max(1, (left / .milliseconds(1)).rounded(.up))))
                do throws(Errno) {
                    _ = try BluetoothSocket.poll(fd, events: Int16(POLLIN), milliseconds: milliseconds)
                } catch {
                    throw KernelError.classify(error, operation: "waiting for \(name)'s management answer")
                }
                let count = buffer.withUnsafeMutableBytes { read(fd.rawValue, $0.baseAddress, $0.count) }
                if count < 0 {
                    let failure = BluetoothSocket.lastErrno
                    if failure == .wouldBlock || failure == .interrupted { continue }
                    throw KernelError.classify(failure, operation: "reading \(name)'s management answer")
                }
                answer = reply(to: opcode, index: index, in: buffer[..<count])
            }
            guard let answer else { continue }
            if answer.status == statusInvalidIndex, ContinuousClock.now + .milliseconds(50) < deadline {
                usleep(50_000)
                continue
            }
            return answer
        }
    }

    /// A non-blocking socket on the management control channel (any user may open one; only
    /// a CAP_NET_ADMIN one is trusted: sent the pairing questions and allowed to answer).
    static func openControlChannel() throws(KernelError) -> FileDescriptor {
        let fd: FileDescriptor
        do {
            fd = try BluetoothSocket.open(type: Int32(SOCK_RAW.rawValue), protocol: BTPROTO_HCI, nonBlocking: true)
        } catch {
            throw KernelError.classify(error, operation: "opening the management channel")
        }
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = UInt16(HCI_DEV_NONE)
        address.hci_channel = UInt16(HCI_CHANNEL_CONTROL)
        do {
            try BluetoothSocket.bind(fd, address)
        } catch {
            BluetoothSocket.closeQuietly(fd)
            throw KernelError.classify(error, operation: "binding the management channel")
        }
        return fd
    }

    /// A management packet header: opcode or event, adapter index, parameter length (all LE).
    static func header(opcode: UInt16, index: UInt16, length: UInt16) -> [UInt8] {
        [UInt8(opcode & 0xFF), UInt8(opcode >> 8), UInt8(index & 0xFF), UInt8(index >> 8),
         UInt8(length & 0xFF), UInt8(length >> 8)]
    }

    /// The status of `packet` when it is Command Complete or Command Status for `opcode` on
    /// adapter `index`; `nil` for any other (or a truncated) packet.
    /// The status and return parameters in `packet` when it answers `opcode` for `index`.
    static func reply(to opcode: UInt16, index: UInt16, in packet: ArraySlice<UInt8>) -> (status: UInt8, returnParameters: [UInt8])? {
        let bytes = Array(packet)
        guard bytes.count >= 9 else { return nil }
        func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8 }
        let event = u16(0)
        guard event == commandComplete || event == commandStatus, u16(2) == index, u16(6) == opcode else { return nil }
        let end = min(bytes.count, 6 + Int(u16(4)))
        return (bytes[8], end > 9 ? Array(bytes[9..<end]) : [])
    }

    /// The management status in `packet` when it answers `opcode` for `index`.
    static func answer(to opcode: UInt16, index: UInt16, in packet: ArraySlice<UInt8>) -> UInt8? {
        reply(to: opcode, index: index, in: packet)?.status
    }

    static func hex<T: BinaryInteger>(_ value: T) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, MemoryLayout<T>.size * 2 - digits.count)) + digits
    }
}

// MARK: Just Works confirmation

extension KernelManagement {
    /// User Confirmation Request (event 0x000F): the kernel asks whether to go on with pairing.
    static let userConfirmationRequest: UInt16 = 0x000F
    /// User Passkey Request (event 0x0010): the kernel asks for a passkey to type.
    static let userPasskeyRequest: UInt16 = 0x0010
    /// User Confirmation Reply / Negative Reply, User Passkey Negative Reply (commands).
    static let userConfirmationReply: UInt16 = 0x001C
    static let userConfirmationNegativeReply: UInt16 = 0x001D
    static let userPasskeyNegativeReply: UInt16 = 0x001F

    /// What to answer to one management event while pairing with `peer`: the reply command to
    /// send, or `nil` for an event that is not a question about `peer`. A Just Works
    /// confirmation (confirm hint 1: nothing for a person to compare) is accepted; a numeric
    /// comparison or a passkey, which need a person, are refused at once so pairing fails
    /// instead of waiting out the kernel's 30 s SMP timeout.
    static func reply(to packet: ArraySlice<UInt8>, pairingWith peer: BluetoothAddress) -> [UInt8]? {
        let bytes = Array(packet)
        guard bytes.count >= 13 else { return nil }
        let event = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
        let index = UInt16(bytes[2]) | UInt16(bytes[3]) << 8
        let address = Array(bytes[6..<13])  // bdaddr (least significant byte first) and its type
        guard Array(address.prefix(6)) == peer.littleEndianBytes else { return nil }
        switch event {
        case userConfirmationRequest:
            guard bytes.count >= 14 else { return nil }
            let justWorks = bytes[13] == 1
            return header(opcode: justWorks ? userConfirmationReply : userConfirmationNegativeReply, index: index, length: 7) + address
        case userPasskeyRequest:
            return header(opcode: userPasskeyNegativeReply, index: index, length: 7) + address
        default:
            return nil
        }
    }
}

/// Answers the kernel's pairing questions about one peer while the link's security is raised
/// without bluetoothd: the kernel asks user space to confirm even a Just Works pairing (a
/// management User Confirmation Request) and waits up to 30 s for an answer. Listens on the
/// management control channel from ``start(pairingWith:)`` until ``stop()``. The kernel sends
/// these questions only to privileged (CAP_NET_ADMIN) listeners.
final class PairingConfirmer: Sendable {
    private let queue: DispatchQueue
    // Only touched on `queue` (its handlers) and in stop(), which hops there.
    nonisolated(unsafe) private let source: any DispatchSourceRead
    private let answered = Mutex<[UInt8]?>(nil)

    private init(source: any DispatchSourceRead, queue: DispatchQueue) {
        self.source = source
        self.queue = queue
    }

    /// Starts listening for questions about `peer`; `nil` when the control channel cannot be
    /// opened (the reason is returned for the log).
    static func start(pairingWith peer: BluetoothAddress) -> Result<PairingConfirmer, KernelError> {
        let fd: FileDescriptor
        do {
            fd = try KernelManagement.openControlChannel()
        } catch {
            return .failure(error)
        }
        let queue = DispatchQueue(label: "rawble.kernel.pairing")
        let source = DispatchSource.makeReadSource(fileDescriptor: fd.rawValue, queue: queue)
        let confirmer = PairingConfirmer(source: source, queue: queue)
        source.setEventHandler { [weak confirmer] in
            var buffer = [UInt8](repeating: 0, count: 1024)
            let count = buffer.withUnsafeMutableBytes { read(fd.rawValue, $0.baseAddress, $0.count) }
            guard count > 0, let reply = KernelManagement.reply(to: buffer[..<count], pairingWith: peer) else { return }
            _ = reply.withUnsafeBytes { write(fd.rawValue, $0.baseAddress, $0.count) }
            confirmer?.answered.withLock { $0 = Array(reply.prefix(2)) }
        }
        source.setCancelHandler { try? fd.close() }
        source.activate()
        return .success(confirmer)
    }

    /// What was answered: the opcode of the reply sent (User Confirmation Reply when a Just
    /// Works pairing was confirmed), or `nil` when the kernel asked nothing.
    var answer: UInt16? {
        answered.withLock { $0.map { UInt16($0[0]) | UInt16($0[1]) << 8 } }
    }

    /// Stops listening and closes the control channel.
    func stop() {
        queue.async { [source] in source.cancel() }
    }
}
