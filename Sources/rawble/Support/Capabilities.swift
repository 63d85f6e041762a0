import ArgumentParser
import RawbleKernel
import RawbleStack

/// A command that opens a transport, and what it does with it (``CapabilityPolicy/Use``):
/// with its connection options, the run's capability policy. Every other command opens no
/// Bluetooth socket that needs a capability and keeps none.
protocol TransportCommand {
    static var capabilityUse: CapabilityPolicy.Use { get }
    var connection: ConnectionOptions { get }
}

extension Scan: TransportCommand { static var capabilityUse: CapabilityPolicy.Use { .scan } }
extension GATT: TransportCommand { static var capabilityUse: CapabilityPolicy.Use { .connect } }
extension Read: TransportCommand { static var capabilityUse: CapabilityPolicy.Use { .connect } }
extension Write: TransportCommand { static var capabilityUse: CapabilityPolicy.Use { .connect } }
extension Notify: TransportCommand { static var capabilityUse: CapabilityPolicy.Use { .connect } }
extension Shell: TransportCommand { static var capabilityUse: CapabilityPolicy.Use { .connect } }
extension HeartRate: TransportCommand { static var capabilityUse: CapabilityPolicy.Use { .connect } }
extension ECG: TransportCommand { static var capabilityUse: CapabilityPolicy.Use { .connect } }
extension Pair: TransportCommand { static var capabilityUse: CapabilityPolicy.Use { .connect } }
extension PeripheralHeartRate: TransportCommand { static var capabilityUse: CapabilityPolicy.Use { .serve } }
extension PeripheralEcho: TransportCommand { static var capabilityUse: CapabilityPolicy.Use { .serve } }

extension CapabilityPolicy {
    /// The policy of a parsed command: what its transport is (`--transport`, else
    /// `RAWBLE_TRANSPORT`, else the default adapter) and whether `--btsnoop`/`--trace` add the
    /// monitor channel on `hciN`. A transport that does not resolve keeps nothing: the command
    /// fails on it before opening anything.
    init(command: any ParsableCommand, environment: [String: String]) {
        guard let command = command as? any TransportCommand else {
            self.init(use: .offline, channel: .h4)
            return
        }
        // Several adapters (`hr --transport hci0,user:hci1`): what the most demanding needs,
        // all of them opened before the capabilities drop.
        let transports = (try? command.connection.resolvedTransports(environment: environment)) ?? []
        let channel: Channel
        if transports.contains(where: { if case .kernel = $0 { true } else { false } }) {
            let monitored = command.connection.btsnoop != nil || command.connection.trace
            channel = monitored ? .rawWithMonitor : .raw
        } else if transports.contains(where: { if case .userChannel = $0 { true } else { false } }) {
            channel = .user
        } else {
            channel = .h4
        }
        self.init(use: type(of: command).capabilityUse, channel: channel)
    }
}

extension Privileges {
    /// Starts the run under `command`'s policy, on the main thread before any other thread:
    /// one line and status 77 when the kernel refuses to drop a capability (the run stops
    /// rather than go on holding it).
    static func start(for command: any ParsableCommand, environment: [String: String]) throws(CLIError) {
        do {
            try start(CapabilityPolicy(command: command, environment: environment))
        } catch {
            throw CLIError(.permission, "could not drop the capabilities this command does not need (capset: \(error))",
                           fix: "run it without file capabilities, or report this")
        }
    }
}
