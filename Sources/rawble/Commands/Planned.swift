import ArgumentParser
import RawbleWire

// The commands below have their whole command-line surface (../shared notes cli.md) so that
// scripts and help text are stable; each runs once the layer it needs lands (host: issue 3,
// GATT client: issue 4, heart-rate monitor: issue 5). Until then they validate their
// arguments and stop with a one-line error and exit status 69.

extension BluetoothUUID: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}

/// A command that opens a transport but whose layer has not landed yet.
protocol PlannedCommand {
    var connection: ConnectionOptions { get }
    var output: OutputOptions { get }
}

extension PlannedCommand {
    /// Validates the transport (flag or `RAWBLE_TRANSPORT`), then stops with status 69 and a
    /// line naming the missing layer.
    func stopUntilAvailable(_ command: String, needs layer: String) throws -> Never {
        Logs.setUp(output)
        _ = try connection.resolvedTransport(environment: environment())
        throw CLIError.notYetAvailable(command, needs: layer)
    }
}

struct HeartRate: AsyncParsableCommand, PlannedCommand {
    static let configuration = CommandConfiguration(
        commandName: "hr",
        abstract: "Find a heart-rate strap, connect, and show and log every beat.")

    @Argument(help: "A device address or name (default: the first strap advertising Heart Rate).")
    var device: String?
    @Option(help: "Stop after this many valid measurements.") var count: Int?
    @Option(help: ArgumentHelp("Append every measurement to a CSV file.", valueName: "file")) var csv: String?
    @Option(help: ArgumentHelp("Append every measurement to a JSON lines file.", valueName: "file")) var jsonl: String?
    @Flag(name: .customLong("reset-energy"), help: "Reset Energy Expended through the Heart Rate Control Point.")
    var resetEnergy = false
    @Flag(inversion: .prefixedNo, help: "Scan again and reconnect when the link drops.")
    var reconnect = true
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    func run() async throws {
        try stopUntilAvailable("hr", needs: "the heart-rate monitor")
    }
}
