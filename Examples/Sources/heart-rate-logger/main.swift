// heart-rate-logger TRANSPORT: finds the first heart-rate strap in range, connects and prints
// each beat (heart rate, RR intervals) until the strap goes or Ctrl-C.
//
//   swift run --package-path Examples heart-rate-logger tcp:127.0.0.1:9000
//   swift run --package-path Examples heart-rate-logger hci0
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

guard CommandLine.arguments.count == 2 else {
    printError("usage: heart-rate-logger TRANSPORT   TRANSPORT: \(TransportAddress.accepted)")
    exit(64)
}

/// The first connectable device that advertises the Heart Rate service.
func firstStrap(on central: any Central) async throws -> DiscoveredDevice? {
    let filter = ScanFilter(services: [.heartRateService])
    for try await device in try await central.scan(ScanOptions(active: true, filter: filter)) where device.isConnectable {
        try await central.stopScanning()
        return device
    }
    return nil
}

do {
    let central = try await TransportAddress(CommandLine.arguments[1]).openCentral()
    print("scanning for a heart-rate strap")
    guard let strap = try await firstStrap(on: central) else {
        printError("heart-rate-logger: the scan ended before a strap was found")
        exit(1)
    }
    let link = try await central.connect(to: strap.address, timeout: .seconds(10))
    let gatt = GATTClient(bearer: link.att)
    let monitor = try await HeartRateMonitor.attach(to: gatt)  // the service, the measurement, its CCCD
    print("connected to \(strap.name ?? strap.address.description)")
    for try await event in try await monitor.measurements() {  // ends, throwing, when the link ends
        switch event {
        case .measurement(let measurement, _): print("♥ \(measurement)")  // 72 bpm, contact detected, RR 0.813 s
        case .invalid(let raw, let error): print("a value that does not decode (\(raw)): \(error)")
        }
    }
    await central.close()
} catch {
    printError("heart-rate-logger: \(error)")
    exit(1)
}
