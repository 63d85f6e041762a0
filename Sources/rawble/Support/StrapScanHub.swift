import RawbleHost
import RawbleHostCore
import RawbleWire

/// One scan shared by every strap a group run follows (`rawble hr A B C`, `hr --all`): a host
/// runs one scan at a time, so the straps do not each scan. It keeps the last advertisement of
/// each device heard, hands each follower the strap it waits for (once heard after the time it
/// asks from), pauses while a connection is being made (controllers and the kernel connect more
/// reliably with no scan running beside) and resumes after it, so a strap that comes into range
/// is found while the others stream. With `--all` it announces each new heart-rate strap once.
///
/// Bounded: it remembers at most ``rememberedLimit`` devices (the least recently heard go).
actor StrapScanHub {
    /// A device the scan heard, and when.
    private struct Heard {
        var device: DiscoveredDevice
        var at: ContinuousClock.Instant
    }

    /// A follower waiting for its strap.
    private struct Waiter {
        var target: StrapTarget
        var heardAfter: ContinuousClock.Instant?
        var owner: ObjectIdentifier
        var continuation: CheckedContinuation<DiscoveredDevice, any Error>
    }

    /// The most devices remembered at once (a crowded room advertises hundreds).
    static let rememberedLimit = 512

    private let central: any Central
    private var heard: [BluetoothAddress: Heard] = [:]
    private var waiters: [UInt64: Waiter] = [:]
    private var nextWaiter: UInt64 = 0
    /// Addresses a follower holds, and which: no other follower is handed them.
    private var claimed: [BluetoothAddress: ObjectIdentifier] = [:]
    /// Straps already announced to ``newStraps``.
    private var announced: Set<BluetoothAddress> = []
    private let announcements: AsyncStream<DiscoveredDevice>.Continuation
    /// Every strap heard advertising that ``announces`` takes, connectable, once each (`--all`
    /// follows them).
    nonisolated let newStraps: AsyncStream<DiscoveredDevice>
    /// Which devices ``newStraps`` announces: heart-rate straps for `hr`, Polar H10s for `ecg`.
    private let announces: @Sendable (DiscoveredDevice) -> Bool
    /// Called with every device heard that is not a strap a follower waits for (the waits name them).
    private let onHeard: @Sendable (DiscoveredDevice) -> Void

    /// Connections being made: the scan stays stopped while any is.
    private var pauses = 0
    private var scanning = false
    /// Scan starts and stops run one after the other, in the order asked.
    private var control: Task<Void, Never>?
    private var consumer: Task<Void, Never>?
    private var failure: CLIErrorBox?
    private var closed = false

    init(central: any Central, onHeard: @escaping @Sendable (DiscoveredDevice) -> Void = { _ in },
         announcing announces: @escaping @Sendable (DiscoveredDevice) -> Bool = StrapScanHub.isHeartRateStrap) {
        self.central = central
        self.announces = announces
        self.onHeard = onHeard
        (newStraps, announcements) = AsyncStream.makeStream(of: DiscoveredDevice.self, bufferingPolicy: .bufferingNewest(64))
    }

    /// Starts the scan; throws what the host says when it cannot.
    func start() async throws {
        try await startScan()
    }

    /// The strap `target` names, connectable, heard advertising after `heardAfter` (a strap's
    /// advertisement from before its link dropped says nothing of where it is now), not held
    /// by another follower. Waits, bounded only by the caller's cancellation, for the scan to
    /// hear it; the address is then held for `owner` (the follower) from then on.
    func next(_ target: StrapTarget, heardAfter: ContinuousClock.Instant?, owner: ObjectIdentifier) async throws -> DiscoveredDevice {
        if let failure { throw failure.error }
        if let found = heard.values.first(where: { matches(target, $0, after: heardAfter, for: owner) }) {
            claimed[found.device.address.address] = owner
            return found.device
        }
        nextWaiter += 1
        let id = nextWaiter
        // The controller reports each address once per scan (duplicates filtered): a strap
        // heard before its link dropped is not reported again until the scan starts anew.
        if heardAfter != nil { Task { await self.restartScan() } }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    waiters[id] = Waiter(target: target, heardAfter: heardAfter, owner: owner, continuation: continuation)
                }
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    /// Whether the scan heard `address` connectable after `instant`, not held by another
    /// follower; if so it is held for `owner` from now on (a strap found on another adapter of
    /// the run connects through this one, ``StrapAdapters``).
    func claimIfHeard(_ address: BluetoothAddress, after instant: ContinuousClock.Instant?, for owner: ObjectIdentifier) -> Bool {
        guard failure == nil, let entry = heard[address], matches(.address(address), entry, after: instant, for: owner) else { return false }
        claimed[address] = owner
        return true
    }

    /// Runs `connect` with the scan stopped, and starts it again after (when no other
    /// connection is being made).
    func whileConnecting<T: Sendable>(_ connect: @Sendable () async throws -> T) async throws -> T {
        pauses += 1
        if pauses == 1 { await enqueue { hub in await hub.stopScan() } }
        defer {
            pauses -= 1
            if pauses == 0 { Task { await self.resumeScan() } }
        }
        return try await connect()
    }

    /// Stops the scan and ends every wait (the run is over).
    func close() async {
        closed = true
        for (_, waiter) in waiters { waiter.continuation.resume(throwing: CancellationError()) }
        waiters.removeAll()
        announcements.finish()
        await enqueue { hub in await hub.stopScan() }
    }

    // MARK: Internals

    private func resumeScan() async {
        guard pauses == 0, !closed else { return }
        await enqueue { hub in
            guard await hub.shouldScan else { return }
            do { try await hub.startScan() } catch { await hub.fail(error) }
        }
    }

    private var shouldScan: Bool { pauses == 0 && !closed && !scanning }

    /// Stops and starts the scan (when one runs and no connection is being made), so the
    /// controller reports again the devices it heard before.
    private func restartScan() async {
        await enqueue { hub in
            guard await hub.pauses == 0, await !hub.closed, await hub.scanning else { return }
            await hub.stopScan()
            do { try await hub.startScan() } catch { await hub.fail(error) }
        }
    }

    /// Runs `operation` after every one enqueued before it.
    private func enqueue(_ operation: @escaping @Sendable (StrapScanHub) async -> Void) async {
        let previous = control
        let task = Task { [self] in
            await previous?.value
            await operation(self)
        }
        control = task
        await task.value
    }

    private func startScan() async throws {
        guard !scanning else { return }
        let devices = try await central.scan(ScanOptions(active: true, filter: ScanFilter()))
        scanning = true
        consumer = Task { [weak self] in
            do {
                for try await device in devices { await self?.heard(device) }
            } catch {
                await self?.fail(error)
            }
        }
    }

    private func stopScan() async {
        guard scanning else { return }
        scanning = false
        try? await central.stopScanning()
        consumer?.cancel()
        consumer = nil
    }

    private func fail(_ error: any Error) {
        guard !closed, failure == nil else { return }
        failure = CLIErrorBox(error: error)
        for (_, waiter) in waiters { waiter.continuation.resume(throwing: error) }
        waiters.removeAll()
    }

    private func cancelWaiter(_ id: UInt64) {
        waiters.removeValue(forKey: id)?.continuation.resume(throwing: CancellationError())
    }

    private func heard(_ device: DiscoveredDevice) {
        let now = ContinuousClock.now
        let address = device.address.address
        if heard[address] == nil, heard.count >= Self.rememberedLimit,
           let oldest = heard.min(by: { $0.value.at < $1.value.at })?.key {
            heard.removeValue(forKey: oldest)
        }
        heard[address] = Heard(device: device, at: now)
        let entry = Heard(device: device, at: now)
        if let (id, _) = waiters.first(where: { matches($0.value.target, entry, after: $0.value.heardAfter, for: $0.value.owner) }),
           let waiter = waiters.removeValue(forKey: id) {
            claimed[address] = waiter.owner
            waiter.continuation.resume(returning: device)
            return
        }
        if device.isConnectable, announces(device),
           announced.count < Self.rememberedLimit, announced.insert(address).inserted {
            announcements.yield(device)
        }
        onHeard(device)
    }

    /// A device that advertises the Heart Rate service (what `hr --all` follows).
    static func isHeartRateStrap(_ device: DiscoveredDevice) -> Bool {
        device.advertisingData.serviceUUIDs.contains(.heartRateService)
    }

    private func matches(_ target: StrapTarget, _ entry: Heard, after instant: ContinuousClock.Instant?,
                         for owner: ObjectIdentifier) -> Bool {
        (instant.map { entry.at > $0 } ?? true) && entry.device.isConnectable
            && (claimed[entry.device.address.address] ?? owner) == owner && target.filter.matches(entry.device)
    }
}

/// An error kept by the hub for the followers that ask after it failed.
private struct CLIErrorBox: Sendable {
    var error: any Error
}
