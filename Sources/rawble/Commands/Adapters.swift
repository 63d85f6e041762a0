import ArgumentParser
import RawbleKernel

/// `rawble adapters`: the kernel's Bluetooth adapters and which transport each can take.
struct Adapters: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "adapters",
        abstract: "List the kernel's Bluetooth adapters (hciN): address, up or down, LE, and the transports each can take.",
        discussion: """
            Examples:
              rawble adapters
              rawble adapters --json
            """)

    @OptionGroup var output: OutputOptions

    func run() async throws {
        Logs.setUp(output)
        let adapters: [KernelAdapterInfo]
        do {
            adapters = try KernelAdapters.list()
        } catch {
            throw CLIError(kernel: error)
        }
        if output.json {
            for adapter in adapters { Output.json(adapter.json) }
            return
        }
        guard !adapters.isEmpty else {
            Output.error("no Bluetooth adapter: plug one in, or check `rfkill list` (nothing to list)")
            return
        }
        Output.line("NAME    ADDRESS            STATE  LE   BUS      TRANSPORTS")
        for adapter in adapters {
            Output.line([
                pad(adapter.name, 7), pad(adapter.address.description, 18), pad(adapter.isUp ? "up" : "down", 6),
                pad(adapter.supportsLE ? "yes" : "no", 4), pad(adapter.bus.description, 8),
                adapter.transports.joined(separator: ", "),
            ].joined(separator: " "))
        }
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}

extension KernelAdapterInfo {
    /// The `--transport` values this adapter takes now: the raw channel always (it is brought
    /// up when down), the user channel only while it is down.
    var transports: [String] {
        isUp ? [name] : [name, "user:\(name)"]
    }

    var json: JSON {
        .object([
            ("name", .string(name)),
            ("index", JSON(Int(index))),
            ("address", .string(address.description)),
            ("up", .bool(isUp)),
            ("le", .bool(supportsLE)),
            ("bus", .string(bus.description)),
            ("transports", .array(transports.map { .string($0) })),
        ])
    }
}
