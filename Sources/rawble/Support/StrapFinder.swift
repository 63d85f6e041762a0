import RawbleHost
import RawbleHostCore
import RawbleWire

/// Finds the strap a command (`hr`, `ecg`) follows: scans until it advertises, connectable.
struct StrapFinder: Sendable {
    let host: HostSession
    let waits: WaitStatus
    let target: StrapTarget

    /// Scans until the target advertises (connectable), bounded only by Ctrl-C: a strap that
    /// is off now may be switched on in a minute. The wait is told as every wait is
    /// (``WaitStatus``), naming what was heard meanwhile: for a strap looked for by name or
    /// address the straps that did not match (a typo, or another strap than the one
    /// expected), for any strap the devices heard (none of them a strap).
    func find() async throws -> DiscoveredDevice {
        let devices: AsyncThrowingStream<DiscoveredDevice, any Error>
        // Every advertiser is heard, so those that do not match can be named; the target
        // itself is matched here.
        let filter = target.filter
        do {
            devices = try await host.central.scan(ScanOptions(active: true, filter: ScanFilter()))
        } catch {
            throw host.cliError(error)
        }
        defer { Task { [central = host.central] in try? await central.stopScanning() } }
        let anyStrap = if case .anyStrap = target { true } else { false }
        waits.forgetSeen()
        waits.begin(.advertising(target.description, seenKind: anyStrap ? "device" : "strap"))
        do {
            for try await device in devices {
                if filter.matches(device), device.isConnectable {
                    try await host.central.stopScanning()
                    return device
                }
                if anyStrap || device.advertisingData.serviceUUIDs.contains(.heartRateService) { waits.saw(device) }
            }
        } catch let error as HostError {
            throw host.cliError(error)
        }
        try Task.checkCancellation()
        throw CLIError(.transport, "scanning stopped before \(target) was found")
    }
}
