import RawbleHost
import RawbleHostCore
import RawbleWire

/// The steps every command that follows several straps (`hr`, `ecg`) takes alike for one of
/// them: found by the shared scan, connected with the scan paused, named in its lines and events.
extension GroupMember {
    /// Waits for the shared scan to hear `target` (after `heardAfter`: the link was lost then);
    /// the strap found labels the member from now on.
    func find(_ target: StrapTarget, waits: WaitStatus, heardAfter: ContinuousClock.Instant?) async throws -> DiscoveredDevice {
        updateRow { $0.state = .scanning }
        let looking = self.target(target)
        waits.begin(.advertising(looking.description, seenKind: "strap"))
        let device = try await hub.next(looking, heardAfter: heardAfter, owner: ObjectIdentifier(self))
        matched(device)
        return device
    }

    /// Connects to `device` with the shared scan paused (see ``StrapScanHub/whileConnecting(_:)``).
    func connect(_ device: DiscoveredDevice, host: HostSession, timeout: Duration,
                 lost: @escaping @Sendable (String) -> any Error) async throws -> any CentralLink {
        updateRow { $0.state = .connecting }
        return try await hub.whileConnecting {
            try await host.connectStrap(device, timeout: timeout, lost: lost)
        }
    }

    /// A line for a person about this strap: its name first.
    func line(_ text: String) -> String { "\(name): \(text)" }

    /// An error line about this strap: `rawble: <name>: …` (its name after the program's).
    func errorLine(_ text: String) -> String {
        text.hasPrefix("rawble: ") ? "rawble: \(name): " + text.dropFirst(8) : line(text)
    }

    /// `event` with the strap's `address` and `name` after its `time` (replacing any it had).
    func labelled(_ event: JSON) -> JSON {
        guard case .object(var fields) = event else { return event }
        let label = eventFields
        let names = Set(label.map(\.0))
        fields.removeAll { names.contains($0.0) }
        let at = (fields.firstIndex { $0.0 == "time" } ?? 0) + 1
        fields.insert(contentsOf: label, at: min(at, fields.count))
        return .object(fields)
    }
}
