import RawbleGATT
import RawbleGATTCore
import RawbleHost
import RawbleHostCore

// What `rawble hr` and `rawble ecg` do alike with a strap's link: connect to the strap a scan
// found, open GATT on the link, close both when leaving it, and after a lost link say so and
// pause before scanning again.

extension HostSession {
    /// Connects to `device`: an attempt that timed out is a lost link (`lost` makes the error
    /// that has the command scan again), a controller out of room for one more link `refused`'s
    /// error when given (another adapter may have room), any other failure the CLI error for it.
    func connectStrap(_ device: DiscoveredDevice, timeout: Duration, lost: (String) -> any Error,
                      refused: ((String) -> any Error)? = nil) async throws -> any CentralLink {
        do {
            return try await central.connect(to: device.address, timeout: timeout)
        } catch {
            if case .connectionTimedOut = error { throw lost(error.description) }
            if case .connectionRefused(_, let reason) = error, let refused { throw refused(reason) }
            throw cliError(error)
        }
    }
}

extension GATTClient {
    /// A GATT client on `connection`'s ATT bearer, each transaction bounded by `timeout`.
    static func onStrapLink(_ connection: any CentralLink, timeout: Duration) -> GATTClient {
        var configuration = ATTClient.Configuration()
        configuration.transactionTimeout = timeout
        return GATTClient(att: ATTClient(bearer: connection.att, configuration: configuration))
    }

    /// Closes this client, then disconnects `connection` (within 3 s), in a task of its own:
    /// what a strap command does when it leaves a link.
    nonisolated func closeInBackground(disconnecting connection: any CentralLink) {
        Task {
            await self.close()
            try? await connection.disconnect(timeout: .seconds(3))
        }
    }
}

/// The pause before a strap command scans again after a lost link: 1 s, doubled after each
/// pause up to 16 s.
struct ReconnectPause {
    private(set) var duration = Duration.seconds(1)

    /// Waits out the pause, then doubles the next one.
    mutating func wait() async throws {
        try await Task.sleep(for: duration)
        duration = min(duration * 2, .seconds(16))
    }
}

extension StrapTarget {
    /// The stderr line for a lost link the command reconnects after `pause`.
    func reconnectingLine(disconnected reason: String, pause: Duration) -> String {
        "rawble: disconnected: \(reason) (reconnecting: scanning for \(self) again in \(pause.components.seconds) s)"
    }

    /// The error that ends a command whose link to `device` was lost when it does not reconnect.
    static func notReconnecting(_ device: DiscoveredDevice, disconnected reason: String) -> CLIError {
        CLIError(.peerError, "\(device.address.address) disconnected: \(reason)",
                 fix: "run again, or leave out --no-reconnect to reconnect automatically")
    }
}
