import ArgumentParser
import FoundationEssentials
import RawbleWire
import SystemPackage
import RawbleReport

/// `rawble decode …`: decode bytes given on the command line, or a btsnoop capture, with no
/// adapter. Malformed input is one line naming what is wrong and at which byte, exit 65.
struct Decode: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode packets and values: no adapter needed.",
        discussion: """
            Examples:
              rawble decode hrm 1e6d0800310234023702
              rawble decode hrm 10480004 16480004 (one value per argument)
              rawble decode hrm 10 48 00 04 (single bytes: one value)
              rawble decode adv 020106 03030d18 (several arguments: one advertisement)
              rawble decode hci 040e0401030c00
              rawble decode att 1b0f00065a
              rawble decode value 2A19 57 (a value by its UUID: Battery Level)
              rawble decode value 2A50 01590001000100 (PnP ID)
              rawble decode value --as s16 feff
              rawble decode btsnoop capture.log --json
            """,
        subcommands: [DecodeHRM.self, DecodeAdvertisement.self, DecodeHCI.self, DecodeATT.self, DecodeValue.self, DecodeBtsnoop.self])

    /// `rawble decode KIND …` with a kind that is not one: argument-parser would only say
    /// "unexpected arguments", so the command line is checked before it parses.
    static func checkKind(_ arguments: [String]) throws {
        guard arguments.first == configuration.commandName, arguments.count > 1 else { return }
        let kind = arguments[1]
        let kinds = configuration.subcommands.map { $0._commandName }
        guard !kind.hasPrefix("-"), !kinds.contains(kind) else { return }
        if let meant = Suggestion.closest(to: kind, among: kinds) {
            throw CLIError(.usage, "decode has no kind '\(kind)'", fix: "did you mean '\(meant)'? (kinds: \(kinds.joined(separator: ", ")))")
        }
        throw CLIError(.usage, "decode has no kind '\(kind)'",
                       fix: "name one of \(kinds.joined(separator: ", ")), e.g. `rawble decode hrm 1e6d0800`")
    }
}

/// Hex given as one or more arguments.
struct HexInput: ParsableArguments {
    @Argument(help: "The bytes in hex (colons allowed): one value per argument, or single bytes forming one.")
    var hex: [String]

    /// All arguments as one run of bytes (an advertisement's AD structures may be split anywhere).
    func bytes() throws -> [UInt8] {
        do {
            return try Hex.decode(hex.joined(separator: " "))
        } catch {
            throw CLIError(.malformedInput, "bad hex: \(error.kind.summary) at character \(error.offset)")
        }
    }

    /// The values given: one per argument (`10480004 16480004`), except that arguments of one byte
    /// each (`10 48 00 04`, as a hex dump is copied) are one value.
    var values: [String] { Self.values(hex) }

    /// The values in `hex`, the arguments (see ``values``).
    static func values(_ hex: [String]) -> [String] {
        hex.count > 1 && !hex.allSatisfy({ $0.count == 2 }) ? hex : [hex.joined(separator: " ")]
    }

    /// Decodes each value in turn with `body`, which prints it; a value that does not decode ends
    /// the run with an error naming it (by position, when there are several).
    func forEachValue(_ body: (_ index: Int, _ bytes: [UInt8]) throws(WireError) -> Void) throws {
        try Self.forEachValue(in: hex, body)
    }

    /// ``forEachValue(_:)`` for the arguments `hex`.
    static func forEachValue(in hex: [String], _ body: (_ index: Int, _ bytes: [UInt8]) throws(WireError) -> Void) throws {
        let values = values(hex)
        for (index, text) in values.enumerated() {
            let which = values.count > 1 ? "value \(index + 1) (\(text)): " : ""
            let bytes: [UInt8]
            do { bytes = try Hex.decode(text) } catch {
                throw CLIError(.malformedInput, "\(which)bad hex: \(error.kind.summary) at character \(error.offset)")
            }
            do { try body(index, bytes) } catch { throw CLIError(.malformedInput, which + error.description) }
        }
    }
}

extension WireError.Kind {
    var summary: String {
        switch self {
        case .invalidValue(let detail): detail
        default: "\(self)"
        }
    }
}

extension CLIError {
    /// A decoder's error, with the byte offset it names.
    static func malformed(_ error: WireError) -> CLIError {
        CLIError(.malformedInput, error.description)
    }
}

struct DecodeHRM: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hrm", abstract: "A Heart Rate Measurement value (characteristic 2A37).")
    @OptionGroup var input: HexInput
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try input.forEachValue { _, bytes throws(WireError) in
            let measurement = try HeartRateMeasurement.decode(bytes)
            if output.json {
                Output.json(measurement.json(raw: bytes))
            } else {
                Output.line("Heart Rate Measurement: \(measurement.summary)")
            }
        }
    }
}

struct DecodeAdvertisement: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "adv", abstract: "Advertising data (the AD structures of an advertisement or scan response).")
    @OptionGroup var input: HexInput
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let bytes = try input.bytes()
        let data = AdvertisingData(decoding: bytes)
        // Structures before a broken one still decode and are printed; the error follows.
        let json = JSON.object(data.deviceFields + [("structures", data.structuresJSON)]
            + (data.error.map { [("error", JSON.string($0.description))] } ?? []))
        if output.json {
            Output.json(json)
        } else {
            Output.line(TextRendering.render(json, title: "Advertising data (\(bytes.count) bytes)"))
        }
        if let error = data.error { throw CLIError.malformed(error) }
    }
}

struct DecodeHCI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hci",
        abstract: "One H4 packet: type byte (01 command, 02 ACL, 04 event, …) then the packet.")
    @OptionGroup var input: HexInput
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try input.forEachValue { index, bytes throws(WireError) in
            let fields = try PacketDescription.json(try H4Packet.decode(bytes))
            if output.json {
                Output.json(.object(fields))
            } else {
                if index > 0 { Output.line("") }  // a blank line between packets of several lines
                Output.line(TextRendering.render(.object(fields)))
            }
        }
    }
}

struct DecodeATT: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "att", abstract: "One ATT PDU (opcode first).")
    @OptionGroup var input: HexInput
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try input.forEachValue { index, bytes throws(WireError) in
            let pdu = try ATTPDU.decode(bytes)
            if output.json {
                Output.json(pdu.json)
            } else {
                if index > 0 { Output.line("") }  // a blank line between PDUs of several lines
                Output.line(TextRendering.render(pdu.json))
            }
        }
    }
}

struct DecodeValue: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "value",
        abstract: "A characteristic or descriptor value, by its UUID (2A19, 2A37, 2904, …) or as a type (--as).",
        discussion: """
            Formats known by UUID: Device Name 2A00, Appearance 2A01, Service Changed 2A05, Date Time 2A08, Battery Level 2A19, \
            Temperature Measurement 2A1C, System ID 2A23, the Device Information strings 2A24-2A29, \
            Heart Rate Measurement 2A37, Body Sensor Location 2A38, PnP ID 2A50, RSC Measurement 2A53, \
            CSC Measurement 2A5B; descriptors 2900, 2901, 2902, 2904.

            Examples:
              rawble decode value 2A19 57              (Battery Level: 87 %)
              rawble decode value 2A38 01 --json       (Body Sensor Location: chest)
              rawble decode value 2904 0400ad27010601  (a Presentation Format)
              rawble decode value --as s16 feff        (-2)
            """)

    @Argument(help: ArgumentHelp("The UUID (unless --as), then the bytes in hex: one value per argument, or single bytes forming one.",
                                 valueName: "uuid> <hex"))
    var arguments: [String] = []
    @Option(name: .customLong("as"), help: ArgumentHelp("Decode as this type (little-endian) instead: \(ValueFormat.names).",
                                                         valueName: "type"), transform: ValueFormat.parse)
    var format: ValueFormat?
    @OptionGroup var output: OutputOptions

    func validate() throws {
        let needed = format == nil ? 2 : 1
        guard arguments.count >= needed else {
            throw ValidationError(format == nil ? "give a UUID and the value in hex, e.g. `rawble decode value 2A19 57`"
                                                : "give the value in hex, e.g. `rawble decode value --as u16 3412`")
        }
        if format == nil, BluetoothUUID(arguments[0]) == nil {
            throw ValidationError("'\(arguments[0])' is not a UUID (2A19, or 128-bit as 8-4-4-4-12 hex digits)")
        }
    }

    func run() async throws {
        var hex = arguments[...]
        var uuid: BluetoothUUID? = nil
        if format == nil, let first = hex.first {
            uuid = BluetoothUUID(first)
            hex = hex.dropFirst()
        }
        if let uuid, !ReadableValues.knows(uuid) {
            throw CLIError(.usage, "rawble knows no format for \(uuid)\(uuid.name.map { " (\($0))" } ?? "")",
                           fix: "name a type with --as, e.g. `rawble decode value --as u16 \(hex.first ?? "3412")`")
        }
        try HexInput.forEachValue(in: Array(hex)) { _, bytes throws(WireError) in
            let value = ValueOutput.readable(bytes, uuid: uuid, as: format)
            if let error = value.error { throw error }
            if output.json {
                var fields: [(String, JSON)] = []
                if let uuid { fields += [("uuid", .uuid(uuid)), ("name", JSON(uuid.name))] }
                fields.append(("value", .hex(bytes)))
                Output.json(.object(fields + value.jsonFields))
            } else {
                Output.line("\(value.format ?? "value"): \(value.line)")
            }
        }
    }
}

struct DecodeBtsnoop: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "btsnoop",
        abstract: "Every record of a btsnoop capture (H4 1002, HCI 1001 or Linux monitor 2001).")
    @Argument(help: "The capture file (`-`: standard input).") var file: String
    @OptionGroup var output: OutputOptions

    /// The largest capture read: the reader holds it whole, and a pipe or a device could go on
    /// for ever.
    static let sizeLimit = 512 << 20

    func run() async throws {
        let data = try readCapture()
        let (header, records, fileError) = BtsnoopReader.read(data)
        guard let header else {
            throw CLIError(.malformedInput, "\(file) is not a btsnoop file: \(fileError?.description ?? "empty")")
        }
        var failed = 0
        var session = PacketDescription.Session()
        for (index, record) in records.enumerated() {
            let line = describe(record, index: index + 1, datalink: header.datalink, session: &session)
            if line.failed { failed += 1 }
            if output.json {
                Output.json(line.json)
            } else {
                Output.line(line.text)
            }
        }
        if let fileError {
            throw CLIError(.malformedInput, "\(file): \(fileError) (the \(records.count) records before it are shown)")
        }
        if failed > 0 {
            Output.error("rawble: \(failed) of \(records.count) records did not decode (see their \"error\")")
        }
    }

    private func describe(
        _ record: BtsnoopRecord, index: Int, datalink: BtsnoopDatalink, session: inout PacketDescription.Session
    ) -> (json: JSON, text: String, failed: Bool)
    {
        let time = iso8601(unixMicroseconds: record.unixMicroseconds)
        let direction = record.direction(datalink: datalink).map { $0 == .received ? "received" : "sent" }
        var fields: [(String, JSON)] = [("index", JSON(index)), ("time", .string(time)), ("direction", JSON(direction))]
        var summary = ""
        var failed = false
        do {
            if let packet = try record.h4Packet(datalink: datalink) {
                do {
                    let decoded = try PacketDescription.json(packet, session: &session)
                    fields += decoded
                    summary = PacketDescription.summary(decoded)
                } catch {
                    fields.append(("type", .string(PacketDescription.typeName(packet.type))))
                    fields.append(("data", .hex(packet.bytes)))
                    fields.append(("error", .string(error.description)))
                    summary = "\(PacketDescription.typeName(packet.type)) (does not decode: \(error))"
                    failed = true
                }
            } else {
                let note = record.monitorOpcode.description
                fields.append(("type", "monitor"))
                fields.append(("note", .string(note)))
                summary = "monitor: \(note)"
            }
        } catch {
            fields.append(("error", .string(error.description)))
            summary = "does not decode: \(error)"
            failed = true
        }
        if record.isTruncated { fields.append(("truncated", true)) }
        let arrow = direction == "received" ? "<" : (direction == "sent" ? ">" : " ")
        let text = "\(String(repeating: " ", count: max(0, 6 - String(index).count)))\(index) \(time) \(arrow) \(summary)"
        return (.object(fields), text, failed)
    }

    /// The whole capture: a file, a FIFO or standard input, read until its end (no size known
    /// beforehand), at most ``sizeLimit`` bytes; every failure one line naming the cause.
    private func readCapture() throws -> [UInt8] {
        let input = InputFile(path: file)
        let descriptor = try input.open(missingFix: "name a btsnoop capture file")
        defer { input.close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0, retryOnInterrupt: true) }
            } catch Errno.isDirectory {
                throw CLIError(.cannotOpen, "\(file) is a directory", fix: "name a btsnoop capture file")
            } catch {
                throw CLIError(.cannotOpen, "cannot read \(input.name): \(error)")
            }
            if count == 0 { return bytes }
            guard bytes.count + count <= Self.sizeLimit else {
                throw CLIError(.malformedInput, "\(input.name) is larger than \(Self.sizeLimit >> 20) MiB",
                               fix: "cut the capture into parts (e.g. `editcap -c 1000000`) and decode each")
            }
            bytes += chunk[..<count]
        }
    }
}
