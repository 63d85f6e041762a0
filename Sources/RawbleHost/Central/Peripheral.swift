import RawbleHostCore
import RawbleWire

/// The peripheral role, whichever host plays it: advertise, accept the centrals that connect
/// (each link with its ATT bearer, as a ``CentralLink``), stop advertising. ``Adapter`` is rawble's
/// own host; `KernelPeripheral` (RawbleKernelHost) the kernel's: advertising on its raw channel,
/// centrals accepted on a listening L2CAP socket.
public protocol Peripheral: Sendable {
    /// A link a central made to this peripheral.
    associatedtype AcceptedLink: CentralLink

    /// Every link a central makes while this peripheral advertises, in order; finishes when
    /// the peripheral closes.
    var incomingConnections: AsyncStream<AcceptedLink> { get }

    /// Starts advertising `advertisement` (replacing nothing: one advertisement at a time).
    func advertise(_ advertisement: Advertisement) async throws(HostError) -> AdvertisingSet

    /// Stops advertising, if it runs; links already made stay up.
    func stopAdvertising() async throws(HostError)

    /// Ends everything: stops advertising, disconnects every link, closes the transport.
    func close() async
}

extension Adapter: Peripheral {
    public typealias AcceptedLink = Connection
}
