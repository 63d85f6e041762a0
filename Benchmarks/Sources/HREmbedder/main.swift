// HREmbedder: the smallest app that embeds rawble's Heart Rate profile, for Scripts/benchmark-hr
// (issue 10): the CPU an embedder pays per notification when it consumes
// HeartRateMonitor.measurements() and does nothing with the values (no per-value output).
//
//   HREmbedder --transport tcp:HOST:PORT --count N [--timeout S]
//
// Opens the controller over H4/TCP, scans for the first connectable device advertising Heart
// Rate (0x180D), connects, attaches a HeartRateMonitor and counts N decoded measurements, then
// prints ONE JSON line on stdout and exits 0:
//   {"count": N, "invalid": 0, "firstBpm": 72, "lastBpm": 81, "digest": "…", "cpuFirstToLastNs": …}
// digest: FNV-1a 64 over every raw value (its length, then its bytes), so the caller can check
// the values were the strap's, in order, without them being printed. cpuFirstToLastNs: the
// process CPU clock (all threads) from the first measurement to the last.
// On failure, or when the whole run exceeds --timeout (default 60 s): one line on stderr, exit 1.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RawbleHeartRate
import RawbleHost
import RawbleTransport
import TimingSupport

func fail(_ message: String) -> Never {
    let line = Array("HREmbedder: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    exit(1)
}

struct Options {
    var host = ""
    var port: UInt16 = 0
    var count = 0
    var timeout = 60.0

    init(_ argv: [String]) {
        var rest = argv.dropFirst()
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { fail("\(flag) needs a value") }
            switch flag {
            case "--transport":
                guard let (host, port) = tcpTransport(value) else { fail("--transport tcp:HOST:PORT") }
                (self.host, self.port) = (host, port)
            case "--count":
                guard let count = Int(value), count > 0 else { fail("--count must be a positive integer") }
                self.count = count
            case "--timeout":
                guard let timeout = Double(value), timeout > 0 else { fail("--timeout must be positive seconds") }
                self.timeout = timeout
            default: fail("unknown option \(flag)")
            }
        }
        guard port != 0, count > 0 else { fail("usage: HREmbedder --transport tcp:HOST:PORT --count N [--timeout S]") }
    }
}

/// What the consumer keeps of the stream: counts, the first and last rate, a digest of the bytes.
struct Tally {
    var count = 0
    var invalid = 0
    var firstBPM: UInt16?
    var lastBPM: UInt16?
    var digest: UInt64 = 0xcbf2_9ce4_8422_2325
    var cpuAtFirst: UInt64 = 0
    var cpuAtLast: UInt64 = 0

    mutating func add(_ measurement: HeartRateMeasurement, raw: [UInt8]) {
        if count == 0 { cpuAtFirst = processCPUNanoseconds() }
        count += 1
        firstBPM = firstBPM ?? measurement.bpm
        lastBPM = measurement.bpm
        mix(UInt8(truncatingIfNeeded: raw.count))
        for byte in raw { mix(byte) }
    }

    private mutating func mix(_ byte: UInt8) {
        digest = (digest ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    var json: String {
        let hex = String(digest, radix: 16)
        return "{\"count\": \(count), \"invalid\": \(invalid), \"firstBpm\": \(firstBPM.map(String.init) ?? "null"), "
            + "\"lastBpm\": \(lastBPM.map(String.init) ?? "null"), "
            + "\"digest\": \"\(String(repeating: "0", count: 16 - hex.count) + hex)\", "
            + "\"cpuFirstToLastNs\": \(cpuAtLast &- cpuAtFirst)}"
    }
}

/// The whole embedding: transport, adapter, scan, connect, GATT client, monitor, stream.
func run(_ options: Options) async throws -> Tally {
    let transport = try await H4StreamTransport.connect(tcp: options.host, port: options.port)
    var configuration = Adapter.Configuration()
    configuration.logger.logLevel = .warning  // no "connected" info lines: stderr is for trouble
    let adapter = try await Adapter.open(transport, configuration: configuration)
    let devices = try await adapter.scan(ScanOptions(active: true, filter: ScanFilter(services: [.heartRateService])))
    var found: DiscoveredDevice?
    for try await device in devices where device.isConnectable {
        found = device
        break
    }
    try await adapter.stopScanning()
    guard let strap = found else { fail("scanning ended before a heart-rate strap was seen") }

    let connection = try await adapter.connect(to: strap.address)
    let gatt = GATTClient(att: ATTClient(bearer: connection.att))
    let monitor = try await HeartRateMonitor.attach(to: gatt)
    let events = try await monitor.measurements()
    // Consume on the adapter's event loop, where the values are decoded: no thread hop each.
    var tally = try await withTaskExecutorPreference(adapter.taskExecutor) {
        var tally = Tally()
        for try await event in events {
            switch event {
            case let .measurement(measurement, raw): tally.add(measurement, raw: raw)
            case .invalid: tally.invalid += 1
            }
            if tally.count == options.count { break }
        }
        return tally
    }
    tally.cpuAtLast = processCPUNanoseconds()
    guard tally.count == options.count else { fail("the stream ended after \(tally.count) measurements") }
    await monitor.unsubscribe()
    try? await connection.disconnect(timeout: .seconds(3))
    await adapter.close()
    return tally
}

let options = Options(CommandLine.arguments)
let watchdog = Task {
    do { try await Task.sleep(for: .seconds(options.timeout)) } catch { return }
    fail("timed out after \(options.timeout) s")
}
do {
    let tally = try await run(options)
    watchdog.cancel()
    print(tally.json)
} catch {
    fail("\(error)")
}
