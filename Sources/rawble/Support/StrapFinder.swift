import RawbleHost
import RawbleHostCore
import RawbleWire
import Synchronization

/// Finds the strap a command (`hr`, `ecg`) follows: scans until it advertises, connectable.
struct StrapFinder: Sendable {
    let host: HostSession
    let status: StatusLine
    let target: StrapTarget

    /// How long a strap looked for by name or address may not show before the straps that did
    /// are named (once): time for a strap being switched on, not for a typo.
    static let hintDelay = Duration.seconds(3)

    /// Scans until the target advertises (connectable), bounded only by Ctrl-C: a strap that
    /// is off now may be switched on in a minute. The status line says for how long. A strap
    /// looked for by name or address that has not shown up after ``hintDelay`` gets one line
    /// naming the straps that did (a typo, or another strap than the one expected).
    func find() async throws -> DiscoveredDevice {
        let devices: AsyncThrowingStream<DiscoveredDevice, any Error>
        // For a name or an address, every advertiser is heard, so the straps that do not match
        // can be named; the target itself is matched here.
        let filter = target.filter
        let scanFilter = if case .anyStrap = target { filter } else { ScanFilter() }
        do {
            devices = try await host.central.scan(ScanOptions(active: true, filter: scanFilter))
        } catch {
            throw host.cliError(error)
        }
        defer { Task { [central = host.central] in try? await central.stopScanning() } }
        let others = Mutex(StrapsSeen())
        let hint: Task<Void, Never>? = if case .anyStrap = target { nil } else {
            Task { [status, target] in
                // Once, as soon as there is a strap to name after the delay.
                guard (try? await Task.sleep(for: Self.hintDelay)) != nil else { return }
                while !Task.isCancelled {
                    let seen = others.withLock { $0 }
                    if !seen.isEmpty {
                        status.printError("rawble: no strap matches \(target) yet (still scanning); straps seen: \(seen)")
                        return
                    }
                    guard (try? await Task.sleep(for: .seconds(1))) != nil else { return }
                }
            }
        }
        defer { hint?.cancel() }
        do {
            for try await device in devices {
                if filter.matches(device), device.isConnectable {
                    try await host.central.stopScanning()
                    return device
                }
                if hint != nil { others.withLock { $0.add(device) } }
            }
        } catch let error as HostError {
            throw host.cliError(error)
        }
        try Task.checkCancellation()
        throw CLIError(.transport, "scanning stopped before \(target) was found")
    }
}
