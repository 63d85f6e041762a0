// scanner TRANSPORT [SECONDS]: scans for a few seconds (default 5), then prints each device
// heard: address, signal strength, name and the services it advertises.
//
//   swift run --package-path Examples scanner tcp:127.0.0.1:9000
//   swift run --package-path Examples scanner hci0 10
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Rawble

/// Prints `line` on stderr (`write(2)`: the C `stderr` is a global Swift 6 may not share).
func printError(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

let arguments = CommandLine.arguments.dropFirst()
guard let transport = arguments.first, let seconds = Int(arguments.dropFirst().first ?? "5"), seconds > 0 else {
    printError("usage: scanner TRANSPORT [SECONDS]   TRANSPORT: \(TransportAddress.accepted)")
    exit(64)
}

do {
    // The one call: the string parsed, the controller opened, rawble's host (or the kernel's) on it.
    let central = try await TransportAddress(transport).openCentral()
    let devices = try await central.scan(ScanOptions(active: true))
    // Each device as last heard (a scan response adds a name or services to its advertisement).
    let listening = Task {
        var heard: [DeviceAddress: DiscoveredDevice] = [:]
        do {
            for try await device in devices { heard[device.address] = device }
        } catch {
            printError("scanner: the scan ended: \(error)")
        }
        return heard
    }
    try await Task.sleep(for: .seconds(seconds))
    listening.cancel()  // ends the loop, which stops the scan
    let heard = await listening.value
    await central.close()

    print("\(heard.count) device(s) in \(seconds) s on \(transport)")
    for device in heard.values.sorted(by: { ($0.rssi ?? -128) > ($1.rssi ?? -128) }) {
        let rssi = device.rssi.map { "\($0) dBm" } ?? "?"
        let services = device.advertisingData.serviceUUIDs.map(\.description).joined(separator: " ")
        print("\(device.address)  \(rssi)  \(device.name ?? "(no name)")  \(services)")
    }
} catch {
    // Every error is one line that says what to do (a missing capability: the group to join).
    printError("scanner: \(error)")
    exit(1)
}
