// ecg-logger TRANSPORT [SECONDS]: finds the first Polar H10 in range, connects, streams its raw
// ECG (130 Hz, µV) for SECONDS (default 10) and prints each sample with its time, then stops the
// stream on the strap and disconnects: Polar's Measurement Data service through PMDClient.
//
//   swift run --package-path Examples ecg-logger tcp:127.0.0.1:9000 5
//   swift run --package-path Examples ecg-logger hci0
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

guard (2...3).contains(CommandLine.arguments.count) else {
    printError("usage: ecg-logger TRANSPORT [SECONDS]   TRANSPORT: \(TransportAddress.accepted)")
    exit(64)
}
let seconds = CommandLine.arguments.count == 3 ? Double(CommandLine.arguments[2]) ?? 10 : 10

/// The first connectable device whose name says it is a Polar H10.
func firstH10(on central: any Central) async throws -> DiscoveredDevice? {
    for try await device in try await central.scan(ScanOptions(active: true, filter: ScanFilter(nameSubstring: "Polar H10")))
    where device.isConnectable {
        try await central.stopScanning()
        return device
    }
    return nil
}

do {
    let central = try await TransportAddress(CommandLine.arguments[1]).openCentral()
    print("scanning for a Polar H10")
    guard let strap = try await firstH10(on: central) else {
        printError("ecg-logger: the scan ended before a Polar H10 was found")
        exit(1)
    }
    let link = try await central.connect(to: strap.address, timeout: .seconds(10))
    let gatt = GATTClient(bearer: link.att)
    try await gatt.exchangeMTU()  // Polar needs an ATT MTU of 232 or more
    let pmd = try await PMDClient.attach(to: gatt)  // the service; control-point indications, then data notifications
    let events = await pmd.events()
    try await pmd.start(.ecg, settings: .h10ECG)
    print("streaming ECG from \(strap.name ?? strap.address.description)")
    let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    for try await event in events {  // ends, throwing a PMDError, when the link ends or the strap stops
        guard case .ecg(let frame) = event else { continue }
        for (time, microvolts) in zip(frame.times, frame.microvolts) {
            print("\(time) ns  \(microvolts) µV")  // PMD time: nanoseconds since 2000-01-01
        }
        if ContinuousClock.now >= end { break }
    }
    await pmd.close()  // stops the stream on the strap (else an H10 streams until its battery is flat)
    await central.close()
} catch {
    printError("ecg-logger: \(error)")
    exit(1)
}
