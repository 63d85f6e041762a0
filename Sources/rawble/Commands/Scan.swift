import ArgumentParser
import RawbleHost
import RawbleHostCore
import RawbleWire
import Synchronization

/// `rawble scan`: advertising devices as a table or JSON lines, until --duration or Ctrl-C.
struct Scan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "List advertising devices: a live table, or one JSON line per device.",
        discussion: """
            Examples:
              rawble scan --duration 10
              rawble scan --service 180D --json
              rawble scan --name strap --transport tcp:127.0.0.1:9000
            """)

    @Option(parsing: .unconditional, help: ArgumentHelp("Stop after this many seconds (default: until Ctrl-C).", valueName: "seconds"))
    var duration: Double?
    @Option(help: ArgumentHelp("Only devices advertising this service UUID (180D or 0x180D).", valueName: "uuid"),
            transform: BluetoothUUID.parse)
    var service: BluetoothUUID?
    @Option(help: ArgumentHelp("Only devices whose name contains this text (case-insensitive).", valueName: "text"))
    var name: String?
    @Option(help: ArgumentHelp("Only this device.", valueName: "address"), transform: BluetoothAddress.parse)
    var address: BluetoothAddress?
    @Flag(help: "Print every report, not only new or changed devices. (On hciN an active scan is the kernel's, whose controller drops repeats: a device reports again each time the kernel restarts its scan, about every 10 s; --passive gets every report.)")
    var duplicates = false
    @Flag(help: "Passive scan: no scan requests, so no scan responses.")
    var passive = false
    @Flag(help: "Stop at the first device that matches the filters (exit 0); with --duration, 75 when none did in time.")
    var first = false
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if let duration, !(duration > 0 && duration <= ConnectionOptions.maximumTimeout) {
            throw ValidationError("--duration must be a positive number of seconds, at most \(Int(ConnectionOptions.maximumTimeout)) (a day)")
        }
    }

    func run() async throws {
        // Made first: a Ctrl-C while the controller opens is kept for the printing task.
        let interrupt = InterruptWatcher()
        let session = try await HostSession.open(connection, output: output)
        var filter = ScanFilter()
        if let service { filter.services = [service] }
        filter.nameSubstring = name
        if let address { filter.addresses = [address] }
        // On a terminal the table is live: every report updates its row's RSSI and age.
        let live = !output.json && Output.stdoutIsTerminal
        var options = ScanOptions(active: !passive, filter: filter, reportsDuplicates: duplicates || (live && !first))
        options.maximumDevices = 4096
        let devices: AsyncThrowingStream<DiscoveredDevice, any Error>
        do {
            devices = try await session.central.scan(options)
        } catch {
            await session.close()
            throw session.cliError(error)
        }
        let (json, first) = (output.json, self.first)
        let table: ScanTable? = json || live ? nil : ScanTable()
        let liveTable = live ? LiveScanTable() : nil
        let found = Atomic<Bool>(false)
        let printing = Task {
            do {
                for try await device in devices {
                    if json {
                        Output.json(device.json)
                    } else if let liveTable {
                        liveTable.update(device)
                    } else {
                        table?.print(device)
                    }
                    if first {
                        found.store(true, ordering: .relaxed)
                        break
                    }
                }
                return nil as HostError?
            } catch let error as HostError {
                return error
            } catch {
                return nil
            }
        }
        interrupt.onInterrupt { printing.cancel() }
        let timer = duration.map { duration in
            Task {
                try? await Task.sleep(for: .milliseconds(Int(duration * 1000)))
                printing.cancel()
            }
        }
        let failure = await printing.value
        timer?.cancel()
        liveTable?.finish()
        await session.close()
        withExtendedLifetime(interrupt) {}
        if let failure { throw session.cliError(failure) }
        // Ctrl-C is how a scan without --duration ends; before its --duration, it cut it short.
        if duration != nil || first, interrupt.fired, !found.load(ordering: .relaxed) {
            throw CLIError.interrupted
        }
        if first, !found.load(ordering: .relaxed), let duration {
            let seconds = duration == duration.rounded() ? String(Int(duration)) : String(duration)
            throw CLIError(.timeout, "no device matched within \(seconds) s",
                           fix: "check the filters (--service, --name, --address) and that the device advertises")
        }
    }
}


/// The scan as lines for a pipe or a file: one aligned row per new or changed device (on a
/// terminal, ``LiveScanTable`` instead).
final class ScanTable: Sendable {
    private let header = "ADDRESS            TYPE    RSSI  NAME                  SERVICES                  MANUFACTURER"

    init() {
        Output.line(header)
    }

    func print(_ device: DiscoveredDevice) {
        let rssi = device.rssi.map { "\($0)" } ?? "?"
        Output.line([
            pad(device.address.address.description, 18),
            pad(device.address.type.description, 7),
            pad(rssi, 5),
            pad(ScanRow.name(device), 21),
            pad(ScanRow.services(device), 25),
            ScanRow.manufacturer(device),
        ].joined(separator: " "))
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
