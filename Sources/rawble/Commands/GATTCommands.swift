#if canImport(Glibc)
import Glibc
import RawbleGATTCore
import RawbleHostCore
import RawbleWire
#elseif canImport(Musl)
import Musl
#endif
import ArgumentParser
import FoundationEssentials
import RawbleGATT
import RawbleHost
import RawbleReport

// `rawble gatt`, `read`, `write`, `notify`: connect over the stack's own host, exchange the
// MTU, do one GATT job, disconnect. Ctrl-C stops the job, unsubscribes and disconnects.

struct GATT: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatt",
        abstract: "Connect, discover the whole GATT database and read every readable value.",
        discussion: """
            Examples:
              rawble gatt C0:B1:E0:00:00:01
              rawble gatt C0:B1:E0:00:00:01 --json
            """)

    @Argument(help: "The device address, AA:BB:CC:DD:EE:FF.", transform: BluetoothAddress.parse) var address: BluetoothAddress
    @Option(name: .customLong("address-type"), help: "public or random (default: as seen while scanning, else random).")
    var addressType: AddressTypeArgument?
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var security: SecurityOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let session = try await PeerSession.open(address, addressType: addressType, connection: connection, output: output,
                                               pairing: security.settings)
        let json = output.json
        try await session.run { session in
            for line in try await session.describeDatabase(json: json) { Output.line(line) }
        }
    }
}

struct Read: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read", abstract: "Read one attribute value (long values whole).",
        discussion: """
            Examples:
              rawble read C0:B1:E0:00:00:01 2A19          (Battery Level: 87 %)
              rawble read C0:B1:E0:00:00:01 0x001D --json (by handle)
              rawble read C0:B1:E0:00:00:01 2A29 --as hex (the bytes, not the text)
              rawble read AA:BB:CC:DD:EE:FF 0x0022 --as u16
            """)

    @Argument(help: "The device address.", transform: BluetoothAddress.parse) var address: BluetoothAddress
    @Argument(help: "0x001D (a handle) or a characteristic UUID.", transform: AttributeTarget.parse) var target: AttributeTarget
    @Option(name: .customLong("as"), help: ArgumentHelp(
        "Read the value as this type (little-endian): \(ValueFormat.names) (default: by its UUID, else hex).",
        valueName: "type"), transform: ValueFormat.parse)
    var format: ValueFormat?
    @Option(name: .customLong("address-type"), help: "public or random.") var addressType: AddressTypeArgument?
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var security: SecurityOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let session = try await PeerSession.open(address, addressType: addressType, connection: connection, output: output,
                                               pairing: security.settings)
        let (target, format, json) = (self.target, self.format, output.json)
        try await session.run { session in
            Output.line(try await session.readValue(of: target, as: format, json: json))
        }
    }
}

struct Write: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write", abstract: "Write one attribute value.",
        discussion: """
            Examples:
              rawble write C0:B1:E0:00:00:01 2A39 01   (the Control Point: reset energy)
              rawble write C0:B1:E0:00:00:01 2A39 --as u8 1
              rawble write AA:BB:CC:DD:EE:FF 0x0021 beef --without-response
              rawble write AA:BB:CC:DD:EE:FF 0x0022 --as utf8 "hello"
              rawble write AA:BB:CC:DD:EE:FF 0x0022 --as s16 -5
            """)

    @Argument(help: "The device address.", transform: BluetoothAddress.parse) var address: BluetoothAddress
    @Argument(help: "0x001D (a handle) or a characteristic UUID.", transform: AttributeTarget.parse) var target: AttributeTarget
    @Argument(help: "The value: hex, or as --as says.") var value: String
    @Option(name: .customLong("as"), help: ArgumentHelp(
        "Give the value as this type (written little-endian): \(ValueFormat.names) (default: hex).",
        valueName: "type"), transform: ValueFormat.parse)
    var format: ValueFormat?
    @Flag(name: .customLong("without-response"), help: "Write Command: no response from the peer.")
    var withoutResponse = false
    @Option(name: .customLong("address-type"), help: "public or random.") var addressType: AddressTypeArgument?
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var security: SecurityOptions
    @OptionGroup var output: OutputOptions

    /// The bytes to write: the value in hex, or in the `--as` type.
    func bytes() throws -> [UInt8] {
        let bytes: [UInt8]
        if let format {
            bytes = try format.bytes(of: value)
        } else {
            do {
                bytes = try Hex.decode(value)
            } catch {
                throw ValidationError("'\(value)' is not hex (\(error.kind.summary) at character \(error.offset)): give bytes such as 01ff, or a type with --as")
            }
        }
        if bytes.count > 512 { throw ValidationError("a value is at most 512 bytes") }
        return bytes
    }

    func validate() throws { _ = try bytes() }

    /// `write ADDR TARGET --as s16 -5`: the parser would take `-5` for an option, so a negative
    /// number given with `--as` (not as another option's value) is moved after a `--`.
    static func negativeValueLast(_ arguments: [String]) -> [String] {
        guard arguments.first == configuration.commandName, arguments.contains("--as"), !arguments.contains("--") else {
            return arguments
        }
        let takesValue: Set<String> = ["--as", "--transport", "--btsnoop", "--timeout", "--address-type", "--io", "--passkey", "--security"]
        for index in arguments.indices.dropFirst() {
            let argument = arguments[index]
            guard argument.count > 1, argument.hasPrefix("-"), !takesValue.contains(arguments[index - 1]) else { continue }
            let rest = argument.dropFirst()
            guard rest.first.map({ $0.isNumber || $0 == "." }) == true || rest.lowercased() == "inf" else { continue }
            var moved = arguments
            moved.remove(at: index)
            return moved + ["--", argument]
        }
        return arguments
    }

    func run() async throws {
        let bytes = try bytes()
        let session = try await PeerSession.open(address, addressType: addressType, connection: connection, output: output,
                                               pairing: security.settings)
        let (target, withoutResponse, json) = (self.target, self.withoutResponse, output.json)
        try await session.run { session in
            if let line = try await session.writeValue(bytes, to: target, withoutResponse: withoutResponse, json: json) {
                Output.line(line)
            }
        }
    }
}

struct Notify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notify",
        abstract: "Subscribe to a characteristic and print each value; unsubscribe at the end.",
        discussion: """
            Examples:
              rawble notify C0:B1:E0:00:00:01 2A37 --count 5
              rawble notify C0:B1:E0:00:00:01 2A37 --duration 60 --json
              rawble notify AA:BB:CC:DD:EE:FF 0x0023 --indicate --json
              rawble notify AA:BB:CC:DD:EE:FF 0x0023 --as u32
            """)

    @Argument(help: "The device address.", transform: BluetoothAddress.parse) var address: BluetoothAddress
    @Argument(help: "0x001D (a value handle) or a characteristic UUID.", transform: AttributeTarget.parse) var target: AttributeTarget
    @Option(parsing: .unconditional, help: "Stop after this many values.") var count: Int?
    @Option(parsing: .unconditional, help: ArgumentHelp("Stop after this many seconds (default: until --count or Ctrl-C).", valueName: "seconds"))
    var duration: Double?
    @Flag(help: "Subscribe to indications instead of notifications.") var indicate = false
    @Option(name: .customLong("as"), help: ArgumentHelp(
        "Show each value as this type (little-endian): \(ValueFormat.names) (default: by its UUID, else hex).",
        valueName: "type"), transform: ValueFormat.parse)
    var format: ValueFormat?
    @Option(name: .customLong("address-type"), help: "public or random.") var addressType: AddressTypeArgument?
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var security: SecurityOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let duration, !(duration > 0 && duration <= ConnectionOptions.maximumTimeout) {
            throw ValidationError("--duration must be a positive number of seconds, at most \(Int(ConnectionOptions.maximumTimeout)) (a day)")
        }
    }

    func run() async throws {
        let session = try await PeerSession.open(address, addressType: addressType, connection: connection, output: output,
                                               pairing: security.settings)
        let (target, count, indicate, format, json) = (self.target, self.count, self.indicate, self.format, output.json)
        let deadline = duration.map { Duration.milliseconds(Int($0 * 1000)) }
        try await session.run(untilInterrupted: count == nil && duration == nil, deadline: deadline) { session in
            let characteristic = try await session.subscribableCharacteristic(for: target, indications: indicate)
            let subscription = try await session.subscribe(to: characteristic, indications: indicate)
            let kind = indicate ? "indication" : "notification"
            session.waits.begin(.firstValue("\(kind) of \(characteristic.uuid)", from: "\(session.connection.peer.address)"))
            var received = 0
            var printer = NotificationPrinter(characteristic: characteristic, json: json, format: format)
            do {
                for try await update in subscription {
                    if received == 0 { session.waits.end() }
                    Output.lineBytes(printer.line(for: update))
                    received += 1
                    if let count, received >= count { break }
                }
            } catch is CancellationError {
            }
            // Unsubscribe even after Ctrl-C: a detached task is not cancelled with this one.
            _ = await Task.detached { try? await subscription.cancel() }.value
        }
    }
}

/// The GATT jobs of `gatt`, `read`, `write` and `notify`, shared with `rawble shell`: each
/// resolves its target, checks the properties and returns the lines to print, so both print
/// the same values and JSON shapes.
extension PeerSession {
    /// `gatt`: the whole database with every readable value read, as the tree's lines or one
    /// JSON document.
    func describeDatabase(json: Bool) async throws(GATTError) -> [String] {
        waits.begin(.response(connection.peer.address, "discovering the services and reading their values"))
        defer { waits.end() }
        let database = try await gatt.discoverAll()
        var values: [UInt16: Result<[UInt8], GATTError>] = [:]
        for entry in database.characteristics {
            if entry.characteristic.properties.contains(.read) {
                do throws(GATTError) {
                    values[entry.characteristic.valueHandle] = .success(try await gatt.read(entry.characteristic))
                } catch {
                    values[entry.characteristic.valueHandle] = .failure(error)
                }
            }
            // The descriptors that say what the value is (User Description, Presentation
            // Format, Extended Properties); the CCCD's state is this client's own.
            for descriptor in entry.descriptors where GATTDatabase.readsDescriptor(descriptor.uuid) {
                do throws(GATTError) {
                    values[descriptor.handle] = .success(try await gatt.read(handle: descriptor.handle))
                } catch {
                    values[descriptor.handle] = .failure(error)
                }
            }
        }
        let mtu = await gatt.mtu
        if json { return [database.json(address: connection.peer, mtu: mtu, values: values).serialized()] }
        return database.tree(address: connection.peer, mtu: mtu, values: values)
    }

    /// `read`: the target's value (long values whole) as ``ValueText/read(_:handle:characteristic:json:)`` prints it.
    func readValue(of target: AttributeTarget, as format: ValueFormat? = nil, json: Bool) async throws -> String {
        waits.begin(.response(connection.peer.address, "reading \(target)"))
        defer { waits.end() }
        let (handle, characteristic) = try await self.characteristic(for: target)
        try characteristic.map { try CharacteristicUse.read.check($0) }
        let value = try await gatt.read(handle: handle)
        return ValueText.read(value, handle: handle, characteristic: characteristic, as: format, json: json)
    }

    /// `write`: writes `bytes` to the target; the line to print (with `json`, what was written,
    /// as `read --json` shows what was read; a person's output stays empty).
    func writeValue(_ bytes: [UInt8], to target: AttributeTarget, withoutResponse: Bool, json: Bool) async throws -> String? {
        waits.begin(.response(connection.peer.address, "writing \(target)"))
        defer { waits.end() }
        let (handle, characteristic) = try await self.characteristic(for: target)
        try characteristic.map { try CharacteristicUse.write(withoutResponse: withoutResponse).check($0) }
        try await gatt.write(bytes, to: handle, withoutResponse: withoutResponse)
        guard json else { return nil }
        return JSON.object([
            ("handle", .handle(handle)),
            ("uuid", characteristic.map { .uuid($0.uuid) } ?? .null),
            ("value", .hex(bytes)),
            ("withoutResponse", .bool(withoutResponse)),
        ]).serialized()
    }

    /// `notify`: the characteristic the target names, checked to notify (or indicate).
    func subscribableCharacteristic(for target: AttributeTarget, indications: Bool) async throws -> GATTCharacteristic {
        waits.begin(.response(connection.peer.address, "finding \(target)"))
        defer { waits.end() }
        let (_, found) = try await self.characteristic(for: target)
        guard let characteristic = found else {
            throw GATTError.notFound("no characteristic at \(target)")
        }
        try CharacteristicUse.subscribe(indications: indications).check(characteristic)
        return characteristic
    }

    /// Subscribes (writes the CCCD), the wait for the peer's answer told.
    func subscribe(to characteristic: GATTCharacteristic, indications: Bool) async throws -> GATTSubscription {
        waits.begin(.response(connection.peer.address, "subscribing to \(characteristic.uuid)"))
        defer { waits.end() }
        return try await gatt.subscribe(to: characteristic, indications: indications)
    }
}

/// How a value read or received is printed: the one place `read`, `notify` and `rawble shell`
/// share, so a readable rendering added here shows in all of them.
enum ValueText {
    /// A value read: its readable form (``ValueOutput``) for a person; `{handle, uuid, value,
    /// decoded…}` with `json`.
    static func read(_ value: [UInt8], handle: UInt16, characteristic: GATTCharacteristic?, as format: ValueFormat? = nil,
                     json: Bool) -> String {
        guard json else { return person(value, characteristic: characteristic, as: format) }
        let readable = ValueOutput.readable(value, uuid: characteristic?.uuid, as: format)
        return JSON.object([
            ("handle", .handle(handle)),
            ("uuid", characteristic.map { .uuid($0.uuid) } ?? .null),
            ("value", .hex(value)),
        ] + readable.jsonFields).serialized()
    }

    /// A value as a person reads it: `87 %`, `chest`, `"rawble-sim"`; hex for unknown formats.
    static func person(_ value: some Collection<UInt8>, characteristic: GATTCharacteristic?, as format: ValueFormat? = nil) -> String {
        ValueOutput.readable(Array(value), uuid: characteristic?.uuid, as: format).line
    }
}

/// Lines for the values of one subscription: the readable form for a person, else `{time,
/// handle, uuid, value, decoded…}`, in one reused buffer (the hot path of `notify --json`, one
/// line per notification; values of no known format skip the decoding).
struct NotificationPrinter {
    let characteristic: GATTCharacteristic
    let json: Bool
    let format: ValueFormat?
    private let decodes: Bool
    private let uuid: [UInt8]
    private var line: [UInt8] = []
    private var timestamps = TimestampCache()

    init(characteristic: GATTCharacteristic, json: Bool, format: ValueFormat? = nil) {
        self.characteristic = characteristic
        self.json = json
        self.format = format
        decodes = format != nil || ReadableValues.knows(characteristic.uuid)
        uuid = Array(characteristic.uuid.description.utf8)
        line.reserveCapacity(128)
    }

    /// The whole line for `update`, newline included.
    mutating func line(for update: ATTValueUpdate) -> [UInt8] {
        guard json else { return Array((ValueText.person(update.value, characteristic: characteristic, as: format) + "\n").utf8) }
        line.removeAll(keepingCapacity: true)
        let decoded = decodes ? ValueOutput.readable(Array(update.value), uuid: characteristic.uuid, as: format).jsonSuffix : ""
        appendNotificationJSONLine(time: Clock.unixMicroseconds(), handle: update.handle, uuid: uuid, value: update.value,
                                   decoded: decoded, to: &line, timestamps: &timestamps)
        return line
    }
}

/// What a command is about to do with a characteristic, checked against the properties its
/// declaration lists before any request: a peer may leave a forbidden request unanswered (the
/// whole --timeout) or accept a write it ignores, and "not found" would hide that it exists.
enum CharacteristicUse {
    case read
    case write(withoutResponse: Bool)
    case subscribe(indications: Bool)

    /// Throws a one-line error (76) naming the characteristic, what it allows and, where another
    /// flag would do, which one.
    func check(_ characteristic: GATTCharacteristic) throws {
        let properties = characteristic.properties
        let name = "characteristic \(characteristic.uuid)\(characteristic.uuid.name.map { " (\($0))" } ?? "")"
        let allows = properties.names.isEmpty ? "its properties list nothing" : "its properties are \(properties)"
        switch self {
        case .read:
            guard !properties.contains(.read) else { return }
            throw CLIError(.peerError, "\(name) cannot be read: \(allows)")
        case .write(let withoutResponse):
            let wanted: CharacteristicProperties = withoutResponse ? .writeWithoutResponse : .write
            guard !properties.contains(wanted) else { return }
            if properties.contains(.write) {
                throw CLIError(.peerError, "\(name) takes no Write Command: \(allows)", fix: "leave out --without-response")
            }
            if properties.contains(.writeWithoutResponse) {
                throw CLIError(.peerError, "\(name) takes only Write Commands: \(allows)", fix: "add --without-response")
            }
            throw CLIError(.peerError, "\(name) cannot be written: \(allows)")
        case .subscribe(let indications):
            guard !properties.contains(indications ? .indicate : .notify) else { return }
            if properties.contains(.indicate) {
                throw CLIError(.peerError, "\(name) indicates and does not notify: \(allows)", fix: "add --indicate")
            }
            if properties.contains(.notify) {
                throw CLIError(.peerError, "\(name) notifies and does not indicate: \(allows)", fix: "leave out --indicate")
            }
            throw CLIError(.peerError, "\(name) can neither notify nor indicate: \(allows)")
        }
    }
}

/// The wall clock in microseconds since 1970, for timestamps people read.
enum Clock {
    static func unixMicroseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }
}
