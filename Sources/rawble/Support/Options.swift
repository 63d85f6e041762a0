import ArgumentParser
import Logging
import RawbleAnalysis
import RawbleStack
import RawbleWire

/// Output options every command shares.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Machine output: one JSON object per line on stdout.")
    var json = false

    @Flag(name: [.short, .long], help: "Log to stderr as it happens; repeat for more detail (-vv). Also: RAWBLE_LOG=LEVEL.")
    var verbose: Int

    @Flag(name: .long, help: "No status line or spinner on stderr.")
    var quiet = false

    /// The log level the -v count asks for: `nil` without -v (no live logging, see ``Logs``).
    var verboseLogLevel: Logger.Level? {
        switch verbose {
        case 0: nil
        case 1: .debug
        default: .trace
        }
    }
}

/// Options of every command that opens a transport.
struct ConnectionOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "hciN (kernel), user:hciN (HCI user channel), tcp:HOST:PORT, unix:PATH, serial:PATH[:BAUD].",
        discussion: "Defaults to $RAWBLE_TRANSPORT, else the first kernel adapter that is up. Several adapters, comma-separated (hci0,hci1), go only with hr following several straps (hr A B, hr --all).",
        valueName: "transport"), transform: { try TransportList($0) })
    var transport: TransportList?

    @Option(name: .long, help: ArgumentHelp("Write every HCI packet of the session to a btsnoop file (mode 0600; keys zeroed).", valueName: "file"))
    var btsnoop: String?

    @Flag(name: .long, help: "Every HCI packet and ATT PDU decoded on stderr as it passes, one line each: seconds since the start, > sent or < received, what `decode btsnoop` shows.")
    var trace = false

    @Flag(name: .customLong("include-keys"), help: ArgumentHelp(
        "Keep the keys (LTK, IRK, CSRK, link keys, DHKey) in --btsnoop and --trace, which zero them otherwise.",
        discussion: "Whoever has such a capture or trace can decrypt the links it recorded: share it with no one."))
    var includeKeys = false

    /// Whether captures and traces keep the keys that cross HCI.
    var keys: KeyMaterial { includeKeys ? .included : .redacted }

    // `.unconditional`: `--timeout -5` is a bad timeout, not an unknown option `-5`.
    @Option(name: .long, parsing: .unconditional,
            help: ArgumentHelp("Bound on connecting and on each ATT transaction, in seconds.", valueName: "seconds"))
    var timeout: Double = 30

    /// The largest `--timeout` accepted, in seconds.
    static let maximumTimeout: Double = 86_400

    func validate() throws {
        // Bounded so that every conversion to a Duration or milliseconds stays far from overflow.
        guard timeout > 0, timeout <= Self.maximumTimeout else {
            throw ValidationError("--timeout must be a positive number of seconds, at most \(Int(Self.maximumTimeout)) (a day)")
        }
        // An option that cannot take effect is a usage error, not silently ignored.
        if includeKeys, btsnoop == nil, !trace {
            throw ValidationError("--include-keys keeps the keys in --btsnoop and --trace: give one of them, or leave it out")
        }
        // One capture and one trace would mix the adapters' packets with nothing saying whose.
        if let transport, transport.adapters.count > 1, btsnoop != nil || trace {
            throw ValidationError("--btsnoop and --trace record one adapter: with several (--transport \(transport)) leave them out")
        }
    }

    /// The transport to use: `--transport`, else `RAWBLE_TRANSPORT`, else the default adapter.
    /// A list of several is a usage error here: the commands that take several ask for
    /// ``resolvedTransports(environment:)``.
    func resolvedTransport(environment: [String: String]) throws -> TransportAddress {
        let transports = try resolvedTransports(environment: environment)
        guard transports.count == 1, let transport = transports.first else {
            throw CLIError(.usage, "--transport \(TransportList(adapters: transports)) names several adapters, and this command uses one",
                           fix: "give one; \(TransportList.severalTakenBy)")
        }
        return transport
    }

    /// The transports to use: `--transport A,B`, else `RAWBLE_TRANSPORT` (also a list), else
    /// the default adapter; one at least, never the same twice.
    func resolvedTransports(environment: [String: String]) throws -> [TransportAddress] {
        if let transport { return transport.adapters }
        if let value = environment["RAWBLE_TRANSPORT"], !value.isEmpty {
            guard let list = try? TransportList(value) else {
                throw CLIError(.usage, "RAWBLE_TRANSPORT=\(value) is not a transport", fix: "use \(TransportAddress.accepted)")
            }
            return list.adapters
        }
        return [.kernel(adapter: nil)]
    }
}

/// `--transport`: one transport, or a comma-separated list of several adapters
/// (`hci0,hci1`, `tcp:127.0.0.1:9001,tcp:127.0.0.1:9002`) for the commands that spread their
/// links over several (``severalTakenBy``). A text whose parts are not all transports is one
/// transport (a `unix:` path may hold a comma).
struct TransportList: Hashable, Sendable, CustomStringConvertible {
    var adapters: [TransportAddress]

    /// Which commands take several adapters, for help and usage lines.
    static let severalTakenBy = "several adapters (a comma-separated list, e.g. hci0,hci1) go only with hr following several straps (hr A B, hr --all)"

    init(adapters: [TransportAddress]) {
        self.adapters = adapters
    }

    init(_ text: String) throws {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard parts.count > 1, let several = try? parts.map({ try TransportAddress($0) }) else {
            adapters = [try TransportAddress(text)]
            return
        }
        var seen: Set<TransportAddress> = []
        for adapter in several where !seen.insert(adapter).inserted {
            throw ValidationError("--transport \(text) names \(adapter) twice: give each adapter once")
        }
        adapters = several
    }

    var description: String { adapters.map(\.description).joined(separator: ",") }
}

/// A peer address on the command line: `AA:BB:CC:DD:EE:FF`.
extension BluetoothAddress: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }

    /// The address in `text`, or a usage error that says what an address looks like.
    static func parse(_ text: String) throws -> BluetoothAddress {
        guard let address = BluetoothAddress(text) else {
            throw ValidationError("an address is six bytes in hex, AA:BB:CC:DD:EE:FF")
        }
        return address
    }
}

/// `--address-type public|random`.
enum AddressTypeArgument: String, ExpressibleByArgument, CaseIterable {
    case `public`, random
}

/// An attribute on the command line: `0x001D` is a handle, anything else a characteristic UUID.
enum AttributeTarget: Equatable, ExpressibleByArgument, CustomStringConvertible {
    case handle(UInt16)
    case uuid(BluetoothUUID)

    init?(argument: String) {
        if argument.hasPrefix("0x") || argument.hasPrefix("0X") {
            guard let h = UInt16(argument.dropFirst(2), radix: 16), h != 0 else { return nil }
            self = .handle(h)
        } else if let uuid = BluetoothUUID(argument) {
            self = .uuid(uuid)
        } else {
            return nil
        }
    }

    /// The target in `text`, or a usage error that says what a handle and a UUID look like.
    static func parse(_ text: String) throws -> AttributeTarget {
        if let target = AttributeTarget(argument: text) { return target }
        if text.hasPrefix("0x") || text.hasPrefix("0X") {
            throw ValidationError("a handle is 0x0001 to 0xFFFF")
        }
        throw ValidationError("neither a handle (0x001D) nor a UUID (2A37, or 128-bit as 8-4-4-4-12 hex digits)")
    }

    var description: String {
        switch self {
        case .handle(let h):
            let s = String(h, radix: 16, uppercase: true)
            return "0x" + String(repeating: "0", count: 4 - s.count) + s
        case .uuid(let u): return u.description
        }
    }
}

/// Bytes given as hex on the command line.
struct HexBytes: ExpressibleByArgument {
    var bytes: [UInt8]
    init?(argument: String) {
        guard let b = try? Hex.decode(argument) else { return nil }
        bytes = b
    }
}

extension BluetoothUUID: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }

    /// A service or characteristic UUID where nothing else is meant: `180D`, `0x180D` (as
    /// written in the Assigned Numbers) or 128-bit; otherwise a usage error saying what a UUID is.
    static func parse(_ text: String) throws -> BluetoothUUID {
        let digits = text.hasPrefix("0x") || text.hasPrefix("0X") ? String(text.dropFirst(2)) : text
        guard let uuid = BluetoothUUID(digits) else {
            throw ValidationError("a UUID is 16-bit (180D or 0x180D), 32-bit, or 128-bit as 8-4-4-4-12 hex digits")
        }
        return uuid
    }
}

/// The zones shared by `hr` and `report`: from a known maximum heart rate, or from age.
struct ZoneOptions: ParsableArguments {
    @Option(name: .customLong("max-hr"), help: ArgumentHelp(
        "Your maximum heart rate, for the five zones (50-60-70-80-90 % of it).", valueName: "bpm"))
    var maxHeartRate: Double?

    @Option(help: ArgumentHelp("Your age, for the zones when --max-hr is not given (max HR = 208 − 0.7 × age, Tanaka 2001).",
                               valueName: "years"))
    var age: Double?

    func validate() throws {
        if let maxHeartRate, !(100...250).contains(maxHeartRate) {
            throw ValidationError("--max-hr must be between 100 and 250 bpm")
        }
        if let age, !(5...110).contains(age) {
            throw ValidationError("--age must be between 5 and 110 years")
        }
    }

    /// The zones asked for, or `nil` when neither option was given.
    var zones: HeartRateZones? {
        if let maxHeartRate { return HeartRateZones(maxHeartRate: maxHeartRate) }
        return age.map { HeartRateZones(age: $0) }
    }

    /// Where the maximum came from, for a person.
    var source: String {
        if maxHeartRate != nil { return "--max-hr" }
        if let age { return "age \(Int(age)), 208 − 0.7 × age" }
        return ""
    }
}
