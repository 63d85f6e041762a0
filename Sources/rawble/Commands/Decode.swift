import ArgumentParser
import RawbleWire

/// `rawble decode …`: decode bytes given on the command line or a btsnoop file, with no adapter.
struct Decode: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decode packets and values: no adapter needed.",
        subcommands: [])
}
