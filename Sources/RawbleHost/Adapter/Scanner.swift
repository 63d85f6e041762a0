import RawbleHostCore
import RawbleWire
import Synchronization

/// How to scan.
public struct ScanOptions: Hashable, Sendable {
    /// Active scanning asks scannable advertisers for their scan response; passive only listens.
    public var active = true
    /// Which devices to report (all by default).
    public var filter = ScanFilter()
    /// `true`: every report; `false`: a device when first seen and when what it advertises changes.
    public var reportsDuplicates = false
    /// Scan interval and window in units of 0.625 ms; equal values scan continuously.
    public var interval: UInt16 = 0x0030
    public var window: UInt16 = 0x0030
    /// Most devices remembered at once (least recently seen forgotten first).
    public var maximumDevices = 4096
    /// How long the scan runs: when it has run this long it stops by itself (its sequence
    /// finishes, as with ``Adapter/stopScanning()``). `nil`: until stopped.
    public var duration: Duration?

    public init(active: Bool = true, filter: ScanFilter = ScanFilter(), reportsDuplicates: Bool = false,
                duration: Duration? = nil) {
        self.active = active
        self.filter = filter
        self.reportsDuplicates = reportsDuplicates
        self.duration = duration
    }
}

/// One scan: its options, what it found so far, and its consumer's stream.
final class ScanSession {
    let id: UInt64
    let options: ScanOptions
    var aggregator: ScanAggregator
    let output: AsyncThrowingStream<DiscoveredDevice, any Error>.Continuation
    var usesExtendedCommands = false
    /// The controller's owner scans for this session (``ScanControl``): no scan command is ours.
    var controlled = false
    /// The owner declined to scan for this session: the adapter's own commands do.
    var declinedControl = false
    /// On a controller the kernel owns, the scan that runs is another program's (the kernel's
    /// discovery for bluetoothd, or its scan for a connection it makes): this session reads its
    /// reports and never switches it off. Cleared when the session's own enable succeeds.
    var sharesForeignScan = false
    /// Set (from any thread) when the consumer stops reading: the scan is as good as stopped.
    let consumerEnded = AtomicFlag()

    init(id: UInt64, options: ScanOptions, output: AsyncThrowingStream<DiscoveredDevice, any Error>.Continuation) {
        self.id = id
        self.options = options
        self.output = output
        aggregator = ScanAggregator(filter: options.filter, reportsDuplicates: options.reportsDuplicates,
                                    maximumDevices: options.maximumDevices, waitsForScanResponses: options.active)
    }

    func receive(_ reports: [AdvertisingReport], resolver: AddressResolver) {
        for report in reports {
            guard var device = aggregator.receive(report) else { continue }
            device.identity = resolver.identity(of: device.address)
            output.yield(device)
        }
    }

    func finish(throwing error: HostError? = nil) {
        if let error { output.finish(throwing: error) } else { output.finish() }
    }
}

/// The adapter's scanning state, used only on its executor: the one scan that runs at a time.
/// Reports go to it synchronously as they are read; the HCI commands stay with the adapter.
final class Scanner {
    /// The running scan, if any.
    private(set) var current: ScanSession?

    var isRunning: Bool { current != nil }

    /// Makes `session` the running scan (the caller checked that none runs).
    func start(_ session: ScanSession) {
        current = session
    }

    /// Ends the running scan, or only `session` when it is the running one; returns what ended.
    @discardableResult
    func end(_ session: ScanSession? = nil) -> ScanSession? {
        guard let running = current, session == nil || session === running else { return nil }
        current = nil
        return running
    }

    /// Resolves bonded peers' private addresses in what scans report.
    let resolver = AddressResolver()

    /// Advertising reports from the controller: to the running scan, if any.
    func receive(_ reports: [AdvertisingReport]) {
        current?.receive(reports, resolver: resolver)
    }

    /// The host stopped: the running scan's sequence throws `error`.
    func stop(throwing error: HostError) {
        end()?.finish(throwing: error)
    }
}

/// A flag set once from any thread and read on the adapter's executor.
final class AtomicFlag: Sendable {
    private let value = Atomic<Bool>(false)

    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
