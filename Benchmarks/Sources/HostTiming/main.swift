// HostTiming: rawble's host (Adapter) timed against a Bumble peer over TCP, for
// Scripts/benchmark-host (issue 3). Benchmarks/Reference/bumble_host.py does the same with
// Bumble's own host. One JSON object per line on stdout; times are CLOCK_MONOTONIC
// nanoseconds, so the script that started the process subtracts its own exec-time reading.
//
//   HostTiming first-report --transport tcp:127.0.0.1:PORT --name rawble-strap [--timeout S]
//   HostTiming connect      --transport tcp:127.0.0.1:PORT --address AA:BB:CC:DD:EE:FF [--timeout S]
//   HostTiming cpu          --transport tcp:127.0.0.1:PORT --seconds S [--timeout S]
//   HostTiming memory       --transport tcp:127.0.0.1:PORT --seconds S --every S [--timeout S]
//
// No Foundation: the process's start-up cost is part of what is measured.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RawbleHost
import RawbleHostCore
import TimingSupport
import RawbleTransport
import RawbleWire

// MARK: Arguments

struct Arguments {
    var mode = ""
    var host = "127.0.0.1"
    var port: UInt16 = 0
    var name = "rawble-strap"
    var address: BluetoothAddress?
    var seconds = 10.0
    var every = 5.0
    var timeout = 30.0

    init(_ argv: [String]) {
        var rest = argv.dropFirst()
        guard let mode = rest.popFirst() else { fail("usage: HostTiming first-report|connect|cpu|memory --transport tcp:HOST:PORT ...") }
        self.mode = mode
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { fail("\(flag) needs a value") }
            switch flag {
            case "--transport":
                guard let (host, port) = tcpTransport(value) else { fail("--transport tcp:HOST:PORT") }
                (self.host, self.port) = (host, port)
            case "--name": name = value
            case "--address":
                guard let address = BluetoothAddress(value) else { fail("bad address \(value)") }
                self.address = address
            case "--seconds": seconds = Double(value) ?? seconds
            case "--every": every = Double(value) ?? every
            case "--timeout": timeout = Double(value) ?? timeout
            default: fail("unknown option \(flag)")
            }
        }
        guard port != 0 else { fail("--transport tcp:HOST:PORT is required") }
    }
}

// MARK: Measurements

/// Opens the adapter on the TCP transport, recording when the socket connected and when
/// start-up (Reset ... Set Random Address) finished.
func openAdapter(_ arguments: Arguments) async -> Adapter {
    let transport: H4StreamTransport
    do {
        transport = try await H4StreamTransport.connect(tcp: arguments.host, port: arguments.port, timeout: .seconds(5))
    } catch {
        fail("transport: \(error)")
    }
    emit(["phase": quoted("transport"), "t": "\(monotonicNanoseconds())"])
    var configuration = Adapter.Configuration()
    configuration.logger.logLevel = .critical
    do {
        let adapter = try await Adapter.open(transport, configuration: configuration)
        emit(["phase": quoted("opened"), "t": "\(monotonicNanoseconds())"])
        return adapter
    } catch {
        fail("open: \(error)")
    }
}

func firstReport(_ arguments: Arguments) async {
    let adapter = await openAdapter(arguments)
    do {
        let devices = try await adapter.scan(ScanOptions(active: true, filter: ScanFilter(nameSubstring: arguments.name)))
        emit(["phase": quoted("scanning"), "t": "\(monotonicNanoseconds())"])
        for try await device in devices where device.name == arguments.name {
            emit(["event": quoted("first-report"), "t": "\(monotonicNanoseconds())"])
            break
        }
    } catch {
        fail("scan: \(error)")
    }
    await adapter.close()
}

func connect(_ arguments: Arguments) async {
    guard let address = arguments.address else { fail("--address is required") }
    let adapter = await openAdapter(arguments)
    do {
        let connection = try await adapter.connect(to: DeviceAddress(address, type: .random), timeout: .seconds(10))
        emit(["event": quoted("connected"), "t": "\(monotonicNanoseconds())"])
        try? await connection.disconnect()
    } catch {
        fail("connect: \(error)")
    }
    await adapter.close()
}

/// Counts reports delivered with duplicates on (passive scan: one HCI report per
/// advertisement) for `seconds` of wall time after the first, and the process CPU time spent.
func cpu(_ arguments: Arguments) async {
    let adapter = await openAdapter(arguments)
    var options = ScanOptions(active: false, reportsDuplicates: true)
    options.maximumDevices = 4096
    var count = 0
    var startWall: UInt64 = 0
    var startCPU: UInt64 = 0
    let window = UInt64(arguments.seconds * 1e9)
    do {
        let devices = try await adapter.scan(options)
        for try await _ in devices {
            if startWall == 0 {
                startWall = monotonicNanoseconds()
                startCPU = processCPUNanoseconds()
                continue
            }
            count += 1
            if count & 63 == 0, monotonicNanoseconds() - startWall >= window { break }
        }
    } catch {
        fail("scan: \(error)")
    }
    let wall = monotonicNanoseconds() - startWall
    let cpuTime = processCPUNanoseconds() - startCPU
    emit(["event": quoted("cpu"), "reports": "\(count)", "wall_ns": "\(wall)", "cpu_ns": "\(cpuTime)"])
    await adapter.close()
}

/// Scans (active, duplicates on, every report consumed) and samples RSS every `every` seconds.
func memory(_ arguments: Arguments) async {
    let adapter = await openAdapter(arguments)
    let counter = Counter()
    let scanning = Task {
        do {
            let devices = try await adapter.scan(ScanOptions(active: true, reportsDuplicates: true))
            for try await device in devices { await counter.add(device.address) }
        } catch {
            fail("scan: \(error)")
        }
    }
    let start = monotonicNanoseconds()
    emit(["sample": "0", "rss": "\(residentBytes())", "reports": "0", "devices": "0"])
    var elapsed = 0.0
    while elapsed < arguments.seconds {
        try? await Task.sleep(for: .seconds(arguments.every))
        elapsed = Double(monotonicNanoseconds() - start) / 1e9
        let (reports, devices) = await counter.snapshot()
        emit(["sample": "\(elapsed)", "rss": "\(residentBytes())", "reports": "\(reports)", "devices": "\(devices)"])
    }
    scanning.cancel()
    await adapter.close()
}

actor Counter {
    private var reports = 0
    private var seen: Set<DeviceAddress> = []
    func add(_ address: DeviceAddress) {
        reports += 1
        seen.insert(address)
    }
    func snapshot() -> (Int, Int) { (reports, seen.count) }
}

// MARK: Main

let arguments = Arguments(CommandLine.arguments)
let watchdog = Task {
    try? await Task.sleep(for: .seconds(arguments.timeout))
    fail("timed out after \(arguments.timeout) s")
}
switch arguments.mode {
case "first-report": await firstReport(arguments)
case "connect": await connect(arguments)
case "cpu": await cpu(arguments)
case "memory": await memory(arguments)
default: fail("unknown mode \(arguments.mode)")
}
watchdog.cancel()
