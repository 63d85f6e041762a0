#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@preconcurrency import Dispatch
import CBluetooth
import RawbleManagementCore
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
    /// Powers adapter `index` on as bluetoothd does (Set Powered, on), so the kernel registers
    /// its Security Manager; returns when the kernel answered (the power-on is done then).
    /// - Throws: ``KernelError/adapterDownWithoutPermission(adapter:user:)`` without
    ///   CAP_NET_ADMIN, ``KernelError/rfkillBlocked(adapter:)``, or ``KernelError/system(operation:errno:)``
    ///   for any other status or no answer within `timeout`.
    public static func powerOn(index: UInt16, timeout: Duration = .seconds(10)) throws(KernelError) {
        let name = "hci\(index)"
        let answer = try request(.setPowered(index: index, on: true), timeout: timeout)
        switch answer.status {
        case .success: return
        case .permissionDenied: throw .adapterDownWithoutPermission(adapter: name, user: KernelError.userName)
        case .rfKilled: throw .rfkillBlocked(adapter: name)
        default: throw .system(operation: "powering \(name) on (management status \(answer.status))", errno: .ioError)
        }
    }

    /// Marks adapter `index` managed by reading its information on the control channel, so
    /// its next power-up registers the Security Manager; waits at most `timeout` for the
    /// answer. Returns the management status (0: success). Bring the adapter up afterwards:
    /// an adapter already up keeps what it has until it is powered off and on again.
    @discardableResult
    public static func markManaged(index: UInt16, timeout: Duration = .seconds(2)) throws(KernelError) -> ManagementStatus {
        try request(.readControllerInformation(index: index), timeout: timeout).status
    }

    /// Sends `command` on a control-channel socket of its own and waits for its answer
    /// (Command Complete or Status for its opcode and adapter; every other event on the channel
    /// is skipped, and so is a packet the wire layer cannot decode). Invalid Index is asked
    /// again every 50 ms while `timeout` lasts: the kernel answers so while the adapter is still
    /// in its setup. Blocking: for the moment an adapter is opened, before any event loop runs.
    static func request(_ command: ManagementCommand, timeout: Duration) throws(KernelError) -> ManagementSocket.Reply {
        let fd = try openControlChannel()
        defer { BluetoothSocket.closeQuietly(fd) }
        let what = "\(command.name) for hci\(command.index)"
        let bytes = command.encoded
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 6 + ManagementPacket.maximumParameterCount)
        while true {
            let written = bytes.withUnsafeBytes { write(fd.rawValue, $0.baseAddress, $0.count) }
            guard written == bytes.count else {
                throw KernelError.classify(BluetoothSocket.lastErrno, operation: "sending \(what)")
            }
            var answer: ManagementSocket.Reply?
            while answer == nil {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { throw .system(operation: "waiting for the answer to \(what)", errno: .timedOut) }
                let milliseconds = Int32(min(60_000, max(1, (left / .milliseconds(1)).rounded(.up))))
                do throws(Errno) {
                    _ = try BluetoothSocket.poll(fd, events: Int16(POLLIN), milliseconds: milliseconds)
                } catch {
                    throw KernelError.classify(error, operation: "waiting for the answer to \(what)")
                }
                let count = buffer.withUnsafeMutableBytes { read(fd.rawValue, $0.baseAddress, $0.count) }
                if count < 0 {
                    let failure = BluetoothSocket.lastErrno
                    if failure == .wouldBlock || failure == .interrupted { continue }
                    throw KernelError.classify(failure, operation: "reading the answer to \(what)")
                }
                answer = reply(to: command, in: buffer[..<count])
            }
            guard let answer else { continue }
            if answer.status == .invalidIndex, ContinuousClock.now + .milliseconds(50) < deadline {
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
            // The kernel decides at this bind, once, whether the socket is trusted (every
            // command, the pairing questions); no later call on it is checked.
            try Privileges.perform(.netAdmin) { () throws(Errno) in try BluetoothSocket.bind(fd, address) }
        } catch {
            BluetoothSocket.closeQuietly(fd)
            throw KernelError.classify(error, operation: "binding the management channel")
        }
        // Every control socket gets every Device Found of anyone's discovery: a full queue
        // would drop the answer to this socket's own command with them.
        BluetoothSocket.enlargeReceiveBuffer(fd)
        return fd
    }

    /// The answer in `packet` when it is Command Complete or Command Status for `command`'s
    /// opcode and adapter; `nil` for any other event and for bytes that do not decode.
    static func reply(to command: ManagementCommand, in packet: ArraySlice<UInt8>) -> ManagementSocket.Reply? {
        switch try? ManagementEvent.decode(packet) {
        case let .commandComplete(index, opcode, status, returnParameters) where index == command.index && opcode == command.opcode:
            ManagementSocket.Reply(status: status, returnParameters: returnParameters)
        case let .commandStatus(index, opcode, status) where index == command.index && opcode == command.opcode:
            ManagementSocket.Reply(status: status, returnParameters: [])
        default:
            nil
        }
    }
}

// MARK: Just Works confirmation

extension KernelManagement {
    /// What to answer to one management event while pairing with `peer`: the reply command to
    /// send, or `nil` for an event that is not a question about `peer` (or does not decode). A
    /// Just Works confirmation (confirm hint 1: nothing for a person to compare) is accepted; a
    /// numeric comparison or a passkey, which need a person, are refused at once so pairing
    /// fails instead of waiting out the kernel's 30 s SMP timeout.
    static func reply(to packet: ArraySlice<UInt8>, pairingWith peer: BluetoothAddress) -> ManagementCommand? {
        switch try? ManagementEvent.decode(packet) {
        case let .userConfirmationRequest(index, address, addressType, confirmHint, _) where address == peer:
            confirmHint == 1
                ? .userConfirmationReply(index: index, address: address, addressType: addressType)
                : .userConfirmationNegativeReply(index: index, address: address, addressType: addressType)
        case let .userPasskeyRequest(index, address, addressType) where address == peer:
            .userPasskeyNegativeReply(index: index, address: address, addressType: addressType)
        default:
            nil
        }
    }
}

extension KernelManagement {
    /// The status of an Authentication Failed event about `peer` in `packet`; `nil` for any
    /// other event, another peer, or bytes that do not decode.
    static func authenticationFailure(in packet: ArraySlice<UInt8>, pairingWith peer: BluetoothAddress) -> ManagementStatus? {
        guard case let .authenticationFailed(_, address, _, status) = try? ManagementEvent.decode(packet), address == peer else {
            return nil
        }
        return status
    }
}

/// Answers the kernel's pairing questions about one peer while the link's security is raised
/// without bluetoothd: the kernel asks user space to confirm even a Just Works pairing (a
/// management User Confirmation Request) and waits up to 30 s for an answer. Listens on the
/// management control channel from ``start(pairingWith:)`` until ``stop()``. The kernel sends
/// these questions only to privileged (CAP_NET_ADMIN) listeners.
///
/// It also hears the kernel give up: when its Security Manager fails the pairing (Pairing
/// Failed from either side, e.g. Authentication Requirements when BT_SECURITY high meets a
/// Just Works pairing), the kernel reports Authentication Failed on the control channel but
/// never wakes the L2CAP socket it suspended for the pairing (`l2cap_security_cfm` resumes a
/// channel only on success): without this event, a wait for the socket ends only at its own
/// bound, after the request it guards has timed out.
final class PairingConfirmer: Sendable {
    private let queue: DispatchQueue
    // Only touched on `queue` (its handlers) and in stop(), which hops there.
    nonisolated(unsafe) private let source: any DispatchSourceRead
    private let answered = Mutex<ManagementCommand?>(nil)
    /// The kernel's Authentication Failed status for the peer, once heard, and who is told.
    private let failure = Mutex<(status: ManagementStatus?, handler: (@Sendable (ManagementStatus) -> Void)?)>((nil, nil))

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
            var buffer = [UInt8](repeating: 0, count: 6 + ManagementPacket.maximumParameterCount)
            let count = buffer.withUnsafeMutableBytes { read(fd.rawValue, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            if let status = KernelManagement.authenticationFailure(in: buffer[..<count], pairingWith: peer) {
                confirmer?.failed(status)
                return
            }
            guard let reply = KernelManagement.reply(to: buffer[..<count], pairingWith: peer) else { return }
            _ = reply.encoded.withUnsafeBytes { write(fd.rawValue, $0.baseAddress, $0.count) }
            confirmer?.answered.withLock { $0 = reply }
        }
        source.setCancelHandler { try? fd.close() }
        source.activate()
        return .success(confirmer)
    }

    /// What was answered: the reply sent (User Confirmation Reply when a Just Works pairing
    /// was confirmed), or `nil` when the kernel asked nothing.
    var answer: ManagementCommand? {
        answered.withLock { $0 }
    }

    /// The kernel's Authentication Failed status for the peer, or `nil` while none was heard.
    var failureStatus: ManagementStatus? {
        failure.withLock { $0.status }
    }

    /// Calls `handler` (on the confirmer's queue) when the kernel reports that pairing with
    /// the peer failed, or at once when it already has. One handler; a later one replaces it.
    func onFailure(_ handler: @escaping @Sendable (ManagementStatus) -> Void) {
        let heard: ManagementStatus? = failure.withLock { state in
            state.handler = handler
            return state.status
        }
        if let heard { handler(heard) }
    }

    private func failed(_ status: ManagementStatus) {
        let handler: (@Sendable (ManagementStatus) -> Void)? = failure.withLock { state in
            guard state.status == nil else { return nil }
            state.status = status
            return state.handler
        }
        handler?(status)
    }

    /// Stops listening and closes the control channel.
    func stop() {
        queue.async { [source] in source.cancel() }
    }
}
