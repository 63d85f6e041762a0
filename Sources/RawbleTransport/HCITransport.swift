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

    public var description: String {
        switch self {
        case .closedByPeer: "transport closed by peer"
        case .closed: "transport closed"
        case let .connectionRefused(host, port): "connection refused by \(host) port \(port)"
        case let .addressResolution(host, message): "cannot resolve \(host): \(message)"
        case .invalidAddress(let message): "invalid address: \(message)"
        case let .ioError(code, operation): "\(operation) failed: errno \(code)"
        }
    }
}

/// A connection to a controller that carries H4 packets: the one interface the host sits on.
///
/// `packets` yields every packet received, in order, and finishes by throwing a
/// ``TransportError`` (``TransportError/closedByPeer``, ``TransportError/closed``,
/// ``TransportError/ioError(errno:operation:)``) when the connection ends; after that,
/// ``send(_:)`` throws. `packets` supports a single consumer.
public protocol HCITransport: Sendable {
    /// Packets received from the controller, in order; finishes by throwing a `TransportError`.
    var packets: AsyncThrowingStream<H4Packet, any Error> { get }
    /// Sends one packet (type byte + bytes), whole; concurrent sends do not interleave.
    func send(_ packet: H4Packet) async throws(TransportError)
    /// Closes the connection: `packets` finishes with ``TransportError/closed`` and later
    /// sends throw. Returns once the receive side has stopped. Safe to call more than once.
    func close() async
}
