import ArgumentParser
import FoundationEssentials
import RawbleWire

/// `rawble decode …`: decode bytes given on the command line, or a btsnoop capture, with no
/// adapter. Malformed input is one line naming what is wrong and at which byte, exit 65.
struct Decode: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode packets and values: no adapter needed.",
        discussion: """
            Examples:
              rawble decode hrm 1e6d0800310234023702
              rawble decode adv 0201060303 0d180b094865617274205261746500 (spaces allowed)
              rawble decode hci 040e0401030c00
              rawble decode att 1b0f00065a
              rawble decode btsnoop capture.log --json
            """,
        subcommands: [DecodeHRM.self, DecodeAdvertisement.self, DecodeHCI.self, DecodeATT.self, DecodeBtsnoop.self])
}

/// Hex given as one or more arguments (so `01 02 03` works without quotes).
struct HexInput: ParsableArguments {
    @Argument(help: "The bytes in hex (spaces, colons allowed).")
    var hex: [String]

    func bytes() throws -> [UInt8] {
        do {
            return try Hex.decode(hex.joined(separator: " "))
        } catch {
            throw CLIError(.malformedInput, "bad hex: \(error.kind.summary) at character \(error.offset)")
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
        let bytes = try input.bytes()
        let measurement: HeartRateMeasurement
        do { measurement = try HeartRateMeasurement.decode(bytes) } catch { throw CLIError.malformed(error) }
        if output.json {
            Output.json(measurement.json(raw: bytes))
        } else {
            Output.line("Heart Rate Measurement: \(measurement.summary)")
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
        let bytes = try input.bytes()
        let fields: [(String, JSON)]
        do {
            fields = try PacketDescription.json(try H4Packet.decode(bytes))
        } catch {
            throw CLIError.malformed(error)
        }
        if output.json {
            Output.json(.object(fields))
        } else {
            Output.line(TextRendering.render(.object(fields)))
        }
    }
}

struct DecodeATT: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "att", abstract: "One ATT PDU (opcode first).")
    @OptionGroup var input: HexInput
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let bytes = try input.bytes()
        let pdu: ATTPDU
        do { pdu = try ATTPDU.decode(bytes) } catch { throw CLIError.malformed(error) }
        if output.json {
            Output.json(pdu.json)
        } else {
            Output.line(TextRendering.render(pdu.json))
        }
    }
}

struct DecodeBtsnoop: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "btsnoop",
        abstract: "Every record of a btsnoop capture (H4 1002, HCI 1001 or Linux monitor 2001).")
    @Argument(help: "The capture file.") var file: String
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let exists = FileManager.default.fileExists(atPath: file)
        let type = (try? FileManager.default.attributesOfItem(atPath: file))?[.type] as? FileAttributeType
        if type == .typeDirectory {
            throw CLIError(.cannotOpen, "\(file) is a directory", fix: "name a btsnoop capture file")
        }
        guard let data = FileManager.default.contents(atPath: file) else {
            throw CLIError(exists ? .permission : .cannotOpen,
                           exists ? "cannot read \(file)" : "no such file: \(file)",
                           fix: exists ? "check its permissions" : nil)
        }
        let (header, records, fileError) = BtsnoopReader.read([UInt8](data))
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
                    summary = Self.summary(decoded)
                } catch {
                    fields.append(("type", .string(Self.typeName(packet.type))))
                    fields.append(("data", .hex(packet.bytes)))
                    fields.append(("error", .string(error.description)))
                    summary = "\(Self.typeName(packet.type)) (does not decode: \(error))"
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

    static func typeName(_ type: H4PacketType) -> String {
        switch type {
        case .command: "command"
        case .event: "event"
        case .acl: "acl"
        case .sco: "sco"
        case .iso: "iso"
        }
    }

    /// One line per record for a person: the packet kind and name, and the fields that matter.
    static func summary(_ fields: [(String, JSON)]) -> String {
        func field(_ key: String, in list: [(String, JSON)]) -> JSON? { list.first { $0.0 == key }?.1 }
        func text(_ value: JSON?) -> String {
            guard let value else { return "" }
            if case .string(let s) = value { return s }
            return value.serialized()
        }
        let type = text(field("type", in: fields))
        switch type {
        case "command":
            return "command \(text(field("name", in: fields)))"
        case "event":
            var line = "event \(text(field("name", in: fields)))"
            if case .array(let reports)? = field("reports", in: fields) {
                let devices = reports.compactMap { report -> String? in
                    guard case .object(let r) = report else { return nil }
                    let name = field("name", in: r).flatMap { if case .string(let s) = $0 { s } else { nil } }
                    return text(field("address", in: r)) + (name.map { " \"\($0)\"" } ?? "") + " \(text(field("rssi", in: r))) dBm"
                }
                line += ": " + devices.joined(separator: ", ")
            } else if let command = field("command", in: fields) {
                line += ": \(text(command)) \(text(field("status", in: fields)))"
            }
            return line
        case "acl":
            var line = "acl handle \(text(field("handle", in: fields))) \(text(field("channelName", in: fields)))"
            if case .object(let att)? = field("att", in: fields) {
                line += ": \(text(field("name", in: att)))"
                if let handle = field("handle", in: att) { line += " \(text(handle))" }
                if let value = field("value", in: att) { line += " \(text(value))" }
                if let name = field("characteristicName", in: att) { line += " (\(text(name)))" }
                if let summary = field("summary", in: att) { line += ": \(text(summary))" }
                if let location = field("bodySensorLocation", in: att) { line += ": \(text(location))" }
            } else if case .object(let sig)? = field("signaling", in: fields) ?? field("smp", in: fields) {
                line += ": \(text(field("name", in: sig)))"
            } else if field("fragment", in: fields) != nil {
                line += "continuation fragment"
            }
            return line
        default:
            return type
        }
    }
}
