import NIOCore
import RawbleWire

/// Why a transport failed or ended. Every end of a transport's packet sequence is one of these.
public enum TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The peer closed the connection (end of stream, connection reset, broken pipe).
    case closedByPeer
    /// ``HCITransport/close()`` was called on this side.
    case closed
    /// Nothing listens at `host:port`.
    case connectionRefused(host: String, port: UInt16)
    /// `host` could not be resolved (getaddrinfo's message).
    case addressResolution(host: String, message: String)
    /// An address that cannot be used, e.g. a unix socket path that is too long.
    case invalidAddress(String)
    /// A system call failed: its errno and what was being done.
    case ioError(errno: Int32, operation: String)
    /// Nothing exists at `path` (a serial device not plugged in, a capture file's directory missing).
    case notFound(path: String)
    /// The user may not open `path` (for a serial device: not in the `dialout` group).
    case permissionDenied(path: String)
    /// `path` is held exclusively by another program (a serial device already in use).
    case busy(path: String)
    /// `path` exists but is not a terminal, so it cannot be a serial line.
    case notATerminal(path: String)
    /// The serial line cannot run at this many bits per second (not a standard termios rate).
    case unsupportedBaudRate(Int)
    /// A bounded wait ran out: what was being done.
    case timedOut(operation: String)

    public var description: String {
        switch self {
        case .closedByPeer: "transport closed by peer"
        case .closed: "transport closed"
        case let .connectionRefused(host, port): "connection refused by \(host) port \(port)"
        case let .addressResolution(host, message): "cannot resolve \(host): \(message)"
        case .invalidAddress(let message): "invalid address: \(message)"
        case let .ioError(code, operation): "\(operation) failed: errno \(code)"
        case .notFound(let path): "\(path) does not exist: check the path (for a serial device, that it is plugged in)"
        case .permissionDenied(let path):
            "permission denied opening \(path): for a serial device, add yourself to the dialout group (sudo usermod -aG dialout $USER) and log in again"
        case .busy(let path): "\(path) is in use by another program: close it (e.g. a running bluetoothd, btattach or screen) and retry"
        case .notATerminal(let path): "\(path) is not a terminal: give a serial device such as /dev/ttyUSB0 or /dev/ttyACM0"
        case .unsupportedBaudRate(let rate):
            "unsupported baud rate \(rate): use a standard rate from 1200 to 4000000, e.g. 115200 or 1000000"
        case .timedOut(let operation): "\(operation) timed out: check the controller is powered and the line (and its flow control) is right"
        }
    }
}

/// A connection to a controller that carries H4 packets: the one interface the host sits on.
///
/// `packets` yields every packet received, in order, and finishes by throwing a
/// ``TransportError`` (``TransportError/closedByPeer``, ``TransportError/closed``,
/// ``TransportError/ioError(errno:operation:)``) when the connection ends; after that,
/// ``send(_:)`` throws. `packets` supports a single consumer.
///
/// Every transport names an event loop (``eventLoop``): the host on it runs there. One that
/// reads on that loop can instead hand the packets, where they are read, to an
/// ``HCIPacketReceiver`` (``deliverPackets(to:)``): no stream and no thread hop between the
/// socket and a host whose state lives on that loop. A transport without sockets of its own (a
/// test's in-memory controller) names any loop, e.g. one of NIO's shared ones.
public protocol HCITransport: Sendable {
    /// Packets received from the controller, in order; finishes by throwing a `TransportError`.
    var packets: AsyncThrowingStream<H4Packet, any Error> { get }
    /// Sends one packet (type byte + bytes), whole; concurrent sends do not interleave.
    func send(_ packet: H4Packet) async throws(TransportError)
    /// Closes the connection: `packets` finishes with ``TransportError/closed`` and later
    /// sends throw. Returns once the receive side has stopped. Safe to call more than once.
    func close() async
    /// The event loop a host on this transport runs on: the one the transport reads on, when it
    /// has one, so received packets reach the host with no thread hop.
    var eventLoop: any EventLoop { get }
    /// Makes `receiver` the reader of every packet, those already received first, called on
    /// ``eventLoop``; `packets` then finishes at once. `false` (nothing changes) when the
    /// transport does not read on that loop or `packets` is already being read: read `packets` then.
    func deliverPackets(to receiver: any HCIPacketReceiver) -> Bool
}

extension HCITransport {
    public func deliverPackets(to receiver: any HCIPacketReceiver) -> Bool { false }
}

/// The reader of a transport's packets on its event loop (``HCITransport/deliverPackets(to:)``).
/// Calls never overlap and come in order; after ``transportEnded(_:)`` none come.
public protocol HCIPacketReceiver: AnyObject, Sendable {
    /// The packets of one read, in order (a batch: one wake-up, however many packets).
    func receive(_ packets: [H4Packet])
    /// The transport ended, after the last packet: why (as `packets` would have thrown it).
    func transportEnded(_ error: TransportError)
}
