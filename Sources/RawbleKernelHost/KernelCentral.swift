import NIOCore
import RawbleHCITransport
import RawbleHost
import RawbleHostCore
import RawbleWire
import Synchronization

/// Opens ATT links through the Linux kernel: an L2CAP socket on the LE ATT channel per link.
/// A protocol so that ``KernelCentral`` needs no kernel headers and is tested on byte streams;
/// RawbleKernel provides the sockets.
public protocol KernelLinkOpener: Sendable {
    /// The link the kernel's socket carries.
    associatedtype Link: CentralLink

    /// Connects to `peer` through the kernel, giving up after `timeout`; the socket is served
    /// by `eventLoop` (the central's, so values arrive where the central's consumers run).
    /// `holding`: how many links of this central are up, for the line when the controller has
    /// no room for one more.
    func openLink(to peer: DeviceAddress, timeout: Duration, holding: Int, on eventLoop: any EventLoop) async throws(HostError) -> Link
}

/// The central the Linux kernel plays, as rawble uses it on `hciN`: scanning by rawble's host
/// on the kernel's raw HCI channel (an `Adapter` whose controller the kernel owns: nothing
/// reset or configured), links made by the kernel through L2CAP sockets.
public final class KernelCentral<Opener: KernelLinkOpener>: Central {
    public typealias Link = Opener.Link

    /// The host on the raw channel: scanning and reads only.
    public let scanner: Adapter
    /// What makes this central's links (and, for the kernel's sockets, knows the adapter).
    public let opener: Opener
    /// Links made and not yet seen ended, for ``close()``.
    private let links = Mutex<[Link]>([])

    /// - Parameters:
    ///   - scanner: an adapter opened with `ControllerOwner.kernel` on the raw channel.
    ///   - opener: opens the links, through the kernel's L2CAP sockets.
    public init(scanner: Adapter, opener: Opener) {
        self.scanner = scanner
        self.opener = opener
    }

    /// Opens rawble's host on `rawChannel` (the kernel's raw HCI socket of one adapter) as a
    /// kernel-owned controller, and the central on top.
    public static func open(rawChannel: some HCITransport, opener: Opener,
                            configuration: Adapter.Configuration = Adapter.Configuration()) async throws(HostError) -> KernelCentral {
        var configuration = configuration
        configuration.owner = .kernel
        let scanner = try await Adapter.open(rawChannel, configuration: configuration)
        return KernelCentral(scanner: scanner, opener: opener)
    }

    public var taskExecutor: EventLoopTaskExecutor { scanner.taskExecutor }

    public func scan(_ options: ScanOptions) async throws(HostError) -> AsyncThrowingStream<DiscoveredDevice, any Error> {
        try await scanner.scan(options)
    }

    /// Asks the controller on the raw channel (the kernel keeps it; a silence here means it is
    /// gone or wedged, not taken).
    public func checkController(timeout: Duration) async throws(HostError) {
        try await scanner.checkController(timeout: timeout)
    }

    public func stopScanning() async throws(HostError) {
        try await scanner.stopScanning()
    }

    public func connect(to peer: DeviceAddress, timeout: Duration) async throws(HostError) -> Link {
        let held = links.withLock { links in links.filter { $0.ending == nil }.count }
        let link = try await opener.openLink(to: peer, timeout: timeout, holding: held, on: scanner.eventLoop)
        links.withLock { links in
            links.removeAll { $0.ending != nil }
            links.append(link)
        }
        return link
    }

    /// Disconnects every link still up (bounded), then stops scanning and closes the raw channel.
    public func close() async {
        let open = links.withLock { links in
            defer { links.removeAll() }
            return links
        }
        for link in open where link.ending == nil {
            try? await link.disconnect(timeout: .seconds(2))
        }
        await scanner.close()
    }
}
