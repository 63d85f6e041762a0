import RawbleBearer
import RawbleHCITransport
import RawbleHostCore
import RawbleWire

/// The central role, whichever host plays it: rawble's own (``Adapter``, over an H4 transport or
/// the kernel's HCI user channel) or the Linux kernel's (the raw HCI channel for scanning, an
/// L2CAP socket per link for ATT). Commands and embedders written against `Central` run on
/// both: scan, connect, use the link's ATT bearer, disconnect.
public protocol Central: Sendable {
    /// A link this central makes.
    associatedtype Link: CentralLink

    /// Where this central's values arrive: a consumer that prefers it (`Task(executorPreference:)`)
    /// takes each one on the thread that received it, with no hop.
    var taskExecutor: EventLoopTaskExecutor { get }

    /// Starts scanning and returns the devices found, as `options` says; the scan stops when
    /// the sequence's consumer stops or on ``stopScanning()``.
    func scan(_ options: ScanOptions) async throws(HostError) -> AsyncThrowingStream<DiscoveredDevice, any Error>

    /// Stops the running scan, if any, and waits until the controller stopped.
    func stopScanning() async throws(HostError)

    /// Connects to `peer` as the central, giving up after `timeout`.
    func connect(to peer: DeviceAddress, timeout: Duration) async throws(HostError) -> Link

    /// Asks the controller something harmless (its version) and waits for the answer, bounded
    /// by `timeout`. A host whose values stopped learns here whether the controller itself
    /// stopped answering (unplugged, or taken by another host: a controller serves one host).
    /// - Throws: ``HostError/commandTimedOut(_:seconds:)`` when it does not answer in time, or
    ///   the error that ended the host.
    func checkController(timeout: Duration) async throws(HostError)

    /// Ends everything: stops scanning, disconnects every link (bounded) and closes the
    /// transport or sockets. Safe to call more than once.
    func close() async
}

/// One LE link made by a ``Central``: its peer, its ATT bearer and its end.
public protocol CentralLink: AnyObject, Sendable {
    /// The bearer carrying ATT on this link.
    associatedtype Bearer: ATTBearer

    /// The peer as the controller (or kernel) reported it.
    var peer: DeviceAddress { get }
    /// ATT on this link (the LE fixed channel 0x0004).
    var att: Bearer { get }
    /// Why the link ended, or `nil` while it is up.
    var ending: HostError? { get }

    /// Disconnects and waits, bounded by `timeout`, until the link is down. Returns at once
    /// when it already is.
    func disconnect(timeout: Duration) async throws(HostError)

    /// Waits until the link ends and returns why; ``HostError/cancelled`` at once when the
    /// waiting task is cancelled (the link stays up).
    func waitUntilDisconnected() async -> HostError
}

extension Adapter: Central {
    public typealias Link = Connection

    public func checkController(timeout: Duration) async throws(HostError) {
        _ = try await execute(.readLocalVersionInformation, timeout: timeout)
    }
}

extension Connection: CentralLink {
    /// Disconnects with Remote User Terminated Connection (0x13), as a person ending the link.
    public func disconnect(timeout: Duration) async throws(HostError) {
        try await disconnect(reason: .remoteUserTerminatedConnection, timeout: timeout)
    }
}
