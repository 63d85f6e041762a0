#if canImport(Glibc)
import Glibc
import RawbleHCITransport
#elseif canImport(Musl)
import Musl
#endif
import NIOCore
import RawbleWire
import Synchronization

/// A btsnoop (HCI UART, datalink 1002) capture file written as packets pass: the header at
/// once, then one `write(2)` per record with no user-space buffering, so the file is complete
/// up to the last packet even if the process is killed. Readable by Wireshark and `btmon -r`.
///
/// The file is the user's alone (``PrivateFile/replace(_:owner:)``): created mode 0600, never
/// through a symbolic link; an existing regular file of the user's is replaced by a new one,
/// anything else at the path (a link, another user's file, a FIFO, a device) refused. Key
/// material is zeroed in every record unless `KeyMaterial.included` is asked for (RawbleWire's
/// `HCIKeyRedactor`): a capture holds every packet in clear, keys included, because the
/// controller, not the host, encrypts.
///
/// Thread-safe. Recording never throws into the data path: the first write failure is kept
/// (``failure``), later records are dropped, and ``close()`` reports it.
public final class BtsnoopCaptureFile: Sendable {
    /// The file's path, as given.
    public let path: String
    /// Whether the records keep the keys that cross HCI.
    public let keys: KeyMaterial

    private struct State {
        /// -1 once closed.
        var fd: Int32
        var failure: TransportError?
        /// Latest timestamp written, so wall-clock stamps never go backwards in the file.
        var lastUnixMicroseconds = Int64.min
        var recordCount = 0
        /// Follows ACL fragments across records (`KeyMaterial.redacted` only).
        var redactor = HCIKeyRedactor()
    }

    private let state: Mutex<State>

    /// Creates the file at `path` (replacing a regular file of the user's there) and writes the
    /// btsnoop header. Throws ``PrivateFileError`` when the path is refused or cannot be
    /// created, and when the header cannot be written (the file is then left, empty or short).
    public init(path: String, keys: KeyMaterial = .redacted) throws(PrivateFileError) {
        let fd = try PrivateFile.replace(path)
        if case .ioError(let code, _)? = Self.writeAll(fd: fd, bytes: BtsnoopWriter.header(datalink: .hciUART), path: path) {
            _ = Glibc.close(fd)
            throw .system(path, operation: "write", errno: code)
        }
        self.path = path
        self.keys = keys
        state = Mutex(State(fd: fd))
    }

    /// A capture into `descriptor`, already open (and owned by it from now on), whose header
    /// is written by the caller: for tests of write failures on a pipe.
    init(descriptor: Int32, path: String, keys: KeyMaterial = .redacted) {
        self.path = path
        self.keys = keys
        state = Mutex(State(fd: descriptor))
    }

    deinit {
        state.withLock { state in
            if state.fd >= 0 { _ = Glibc.close(state.fd) }
            state.fd = -1
        }
    }

    /// Appends one record for `packet` stamped `unixMicroseconds` (microseconds since 1970).
    public func record(_ packet: H4Packet, direction: BtsnoopRecord.Direction, at unixMicroseconds: Int64) {
        state.withLock { state in
            let kept = keys == .included ? packet : state.redactor.redact(packet, direction: direction)
            let bytes = BtsnoopWriter.record(BtsnoopRecord(packet: kept, direction: direction, unixMicroseconds: unixMicroseconds))
            append(bytes, stamped: unixMicroseconds, to: &state)
        }
    }

    /// Appends one record for `packet` stamped with the wall clock, read under the file's lock
    /// and never earlier than the previous record, so records from several threads stay in order.
    public func record(_ packet: H4Packet, direction: BtsnoopRecord.Direction) {
        state.withLock { state in
            let now = max(Self.wallClockMicroseconds(), state.lastUnixMicroseconds)
            let kept = keys == .included ? packet : state.redactor.redact(packet, direction: direction)
            let bytes = BtsnoopWriter.record(BtsnoopRecord(packet: kept, direction: direction, unixMicroseconds: now))
            append(bytes, stamped: now, to: &state)
        }
    }

    /// Records written so far.
    public var recordCount: Int { state.withLock { $0.recordCount } }

    /// The first write failure, if any (records after it were dropped).
    public var failure: TransportError? { state.withLock { $0.failure } }

    /// Closes the file (later records are dropped) and returns the first write failure, if any.
    /// Safe to call more than once.
    @discardableResult
    public func close() -> TransportError? {
        state.withLock { state in
            if state.fd >= 0, Glibc.close(state.fd) != 0, state.failure == nil {
                state.failure = .ioError(errno: errno, operation: "close \(path)")
            }
            state.fd = -1
            return state.failure
        }
    }

    /// The current wall-clock time in microseconds since the Unix epoch.
    public static func wallClockMicroseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000
    }

    private func append(_ bytes: [UInt8], stamped unixMicroseconds: Int64, to state: inout State) {
        guard state.fd >= 0, state.failure == nil else { return }
        if let failure = Self.writeAll(fd: state.fd, bytes: bytes, path: path) {
            state.failure = failure
            return
        }
        state.lastUnixMicroseconds = max(state.lastUnixMicroseconds, unixMicroseconds)
        state.recordCount += 1
    }

    /// `write(2)` of all of `bytes` (one call unless interrupted or short); `nil` on success.
    private static func writeAll(fd: Int32, bytes: [UInt8], path: String) -> TransportError? {
        bytes.withUnsafeBytes { raw -> TransportError? in
            guard let base = raw.baseAddress else { return nil }
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, base + offset, raw.count - offset)
                if n > 0 {
                    offset += n
                    continue
                }
                if n < 0 && errno == EINTR { continue }
                return .ioError(errno: n < 0 ? errno : ENOSPC, operation: "write \(path)")
            }
            return nil
        }
    }
}

/// Something that sees every HCI packet a transport carries, both ways, as it passes: a btsnoop
/// file, the CLI's live `--trace`. Called where packets are sent and received (on an event loop
/// among others), so it must be quick and must never throw or trap into the data path.
public protocol HCIPacketTap: Sendable {
    /// `packet` is about to be sent (`BtsnoopRecord.Direction.sent`) or was just received.
    func observe(_ packet: H4Packet, direction: BtsnoopRecord.Direction)
}

extension BtsnoopCaptureFile: HCIPacketTap {
    /// Records the packet, stamped with the wall clock.
    public func observe(_ packet: H4Packet, direction: BtsnoopRecord.Direction) {
        record(packet, direction: direction)
    }
}

/// A transport that hands every packet it carries to its taps (a ``BtsnoopCaptureFile``, a
/// live trace): received packets as they pass through ``packets`` or to the receiver, sent
/// packets just before they are sent, each tap in order. Everything else is the wrapped
/// transport's behaviour.
public struct CapturingTransport: HCITransport {
    /// The transport being captured.
    public let base: any HCITransport
    /// Where the packets go, in order; closing the transport does not close them.
    public let taps: [any HCIPacketTap]
    public let packets: AsyncThrowingStream<H4Packet, any Error>

    /// Wraps `base`; from now on read packets from this transport's ``packets``, not `base`'s.
    public init(_ base: any HCITransport, taps: [any HCIPacketTap]) {
        self.base = base
        self.taps = taps
        let source = PacketSource(base.packets.makeAsyncIterator())
        packets = AsyncThrowingStream {
            guard let packet = try await source.next() else { return nil }
            for tap in taps { tap.observe(packet, direction: .received) }
            return packet
        }
    }

    /// Wraps `base` with one tap, a btsnoop file.
    public init(_ base: any HCITransport, capture: BtsnoopCaptureFile) {
        self.init(base, taps: [capture])
    }

    public func send(_ packet: H4Packet) async throws(TransportError) {
        for tap in taps { tap.observe(packet, direction: .sent) }
        try await base.send(packet)
    }

    public func close() async {
        await base.close()
    }

    public var eventLoop: any EventLoop { base.eventLoop }

    public func deliverPackets(to receiver: any HCIPacketReceiver) -> Bool {
        base.deliverPackets(to: CapturingReceiver(receiver, taps: taps))
    }
}

/// Hands each packet to the taps before handing it on to the receiver the capture wraps.
private final class CapturingReceiver: HCIPacketReceiver {
    let receiver: any HCIPacketReceiver
    let taps: [any HCIPacketTap]

    init(_ receiver: any HCIPacketReceiver, taps: [any HCIPacketTap]) {
        self.receiver = receiver
        self.taps = taps
    }

    func receive(_ packets: [H4Packet]) {
        for packet in packets {
            for tap in taps { tap.observe(packet, direction: .received) }
        }
        receiver.receive(packets)
    }

    func transportEnded(_ error: TransportError) {
        receiver.transportEnded(error)
    }
}

/// The wrapped transport's packet iterator. `packets` has a single consumer and the unfolding
/// stream calls `next()` once at a time, so the iterator is never used concurrently.
private final class PacketSource: @unchecked Sendable {
    private var iterator: AsyncThrowingStream<H4Packet, any Error>.Iterator
    init(_ iterator: AsyncThrowingStream<H4Packet, any Error>.Iterator) { self.iterator = iterator }
    func next() async throws -> H4Packet? { try await iterator.next() }
}
