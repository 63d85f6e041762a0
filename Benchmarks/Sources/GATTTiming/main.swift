// GATTTiming: rawble's GATT client (GATTClient over Adapter's ATT bearer) timed against the
// rawble-lab device of a Bumble peer over TCP, for Scripts/benchmark-gatt (issue 4).
// Benchmarks/Reference/bumble_gatt.py does the same with Bumble's own GATT client. One JSON
// object per line on stdout; times are CLOCK_MONOTONIC nanoseconds, so the script that started
// the process subtracts its own exec-time reading.
//
//   GATTTiming discover           --transport tcp:HOST:PORT --address ADDR [--btsnoop PATH] [--timeout S]
//   GATTTiming first-notification --transport tcp:HOST:PORT --address ADDR [--btsnoop PATH] [--timeout S]
//   GATTTiming stream             --transport tcp:HOST:PORT --address ADDR --count N [--timeout S]
//
// discover: MTU exchange, every primary service, its included services, characteristics and
// descriptors (GATTClient.discoverAll, which also subscribes to Service Changed), then a read
// of every readable characteristic: what `rawble gatt` does.
// first-notification: MTU exchange, Heart Rate (0x180D) found by UUID, its Heart Rate
// Measurement characteristic, the CCCD, the write; until the first notification.
// stream: subscribes to the lab's stream characteristic and receives N notifications,
// checking their counters arrive in order; CPU clock from the first to the last.
// --btsnoop records the HCI traffic (CapturingTransport) so the script counts ATT requests
// from the same file format as Bumble's own snooper writes.
//
// No Foundation: the process's start-up cost is part of what is measured.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RawbleGATT
import RawbleHost
import TimingSupport
import RawbleTransport

// MARK: Output

func mark(_ phase: String) {
    emit(["phase": quoted(phase), "t": "\(monotonicNanoseconds())"])
}

// MARK: Arguments

struct Arguments {
    var mode = ""
    var host = "127.0.0.1"
    var port: UInt16 = 0
    var address: BluetoothAddress?
    var btsnoop: String?
    var count = 5000
    var timeout = 30.0

    init(_ argv: [String]) {
        var rest = argv.dropFirst()
        guard let mode = rest.popFirst() else { fail("usage: GATTTiming discover|first-notification|stream --transport tcp:HOST:PORT --address ADDR ...") }
        self.mode = mode
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { fail("\(flag) needs a value") }
            switch flag {
            case "--transport":
                guard let (host, port) = tcpTransport(value) else { fail("--transport tcp:HOST:PORT") }
                (self.host, self.port) = (host, port)
            case "--address":
                guard let address = BluetoothAddress(value) else { fail("bad address \(value)") }
                self.address = address
            case "--btsnoop": btsnoop = value
            case "--count": count = Int(value) ?? count
            case "--timeout": timeout = Double(value) ?? timeout
            default: fail("unknown option \(flag)")
            }
        }
        guard port != 0 else { fail("--transport tcp:HOST:PORT is required") }
        guard address != nil else { fail("--address is required") }
    }
}

// MARK: Session

/// The adapter, the connection to the lab and a GATT client on its ATT bearer.
struct Session {
    let adapter: Adapter
    let connection: Connection
    let gatt: GATTClient
    let capture: BtsnoopCaptureFile?

    static func open(_ arguments: Arguments) async -> Session {
        var transport: any HCITransport
        do {
            transport = try await H4StreamTransport.connect(tcp: arguments.host, port: arguments.port, timeout: .seconds(5))
        } catch {
            fail("transport: \(error)")
        }
        var capture: BtsnoopCaptureFile?
        if let path = arguments.btsnoop {
            do {
                let file = try BtsnoopCaptureFile(path: path)
                capture = file
                transport = CapturingTransport(transport, capture: file)
            } catch {
                fail("btsnoop: \(error)")
            }
        }
        mark("transport")
        var configuration = Adapter.Configuration()
        configuration.logger.logLevel = .critical
        let adapter: Adapter
        do {
            adapter = try await Adapter.open(transport, configuration: configuration)
        } catch {
            fail("open: \(error)")
        }
        mark("opened")
        guard let address = arguments.address else { fail("--address is required") }
        let connection: Connection
        do {
            connection = try await adapter.connect(to: DeviceAddress(address, type: .random), timeout: .seconds(10))
        } catch {
            fail("connect: \(error)")
        }
        mark("connected")
        var attConfiguration = ATTClient.Configuration()
        attConfiguration.logger.logLevel = .critical
        let gatt = GATTClient(att: ATTClient(bearer: connection.att, configuration: attConfiguration))
        return Session(adapter: adapter, connection: connection, gatt: gatt, capture: capture)
    }

    func close() async {
        await gatt.close()
        try? await connection.disconnect()
        await adapter.close()
        if let failure = capture?.close() { fail("btsnoop: \(failure)") }
    }
}

// MARK: Measurements

func discover(_ arguments: Arguments) async {
    let session = await Session.open(arguments)
    do throws(GATTError) {
        let mtu = try await session.gatt.exchangeMTU()
        mark("mtu")
        let database = try await session.gatt.discoverAll()
        mark("discovered")
        var reads = 0
        var bytes = 0
        var failures = 0
        for entry in database.characteristics where entry.characteristic.properties.contains(.read) {
            do throws(GATTError) {
                bytes += try await session.gatt.read(entry.characteristic).count
                reads += 1
            } catch {
                failures += 1
            }
        }
        let t = monotonicNanoseconds()
        let descriptors = database.characteristics.reduce(0) { $0 + $1.descriptors.count }
        let includes = database.services.reduce(0) { $0 + $1.includedServices.count }
        emit(["event": quoted("done"), "t": "\(t)", "mtu": "\(mtu)", "services": "\(database.services.count)",
              "includes": "\(includes)", "characteristics": "\(database.characteristics.count)",
              "descriptors": "\(descriptors)", "reads": "\(reads)", "read_failures": "\(failures)", "bytes": "\(bytes)"])
    } catch {
        fail("gatt: \(error)")
    }
    await session.close()
}

func firstNotification(_ arguments: Arguments) async {
    let session = await Session.open(arguments)
    do {
        try await session.gatt.exchangeMTU()
        guard let service = try await session.gatt.services(withUUID: BluetoothUUID(0x180D)).first else { fail("no Heart Rate service") }
        guard let measurement = try await session.gatt.characteristics(of: service, uuid: BluetoothUUID(0x2A37)).first else {
            fail("no Heart Rate Measurement")
        }
        let subscription = try await session.gatt.subscribe(to: measurement)
        mark("subscribed")
        for try await update in subscription {
            emit(["event": quoted("done"), "t": "\(monotonicNanoseconds())", "bytes": "\(update.value.count)"])
            break
        }
    } catch {
        fail("gatt: \(error)")
    }
    await session.close()
}

/// Receives `count` stream notifications; counters must arrive 0, 1, 2 ... in order.
func stream(_ arguments: Arguments) async {
    let session = await Session.open(arguments)
    let labService = BluetoothUUID("72617762-6c65-4c61-6200-000000000001")
    let labStream = BluetoothUUID("72617762-6c65-4c61-6200-000000000004")
    guard let labService, let labStream else { fail("bad lab UUIDs") }
    var received = 0
    var outOfOrder = 0
    var startWall: UInt64 = 0
    var startCPU: UInt64 = 0
    do {
        try await session.gatt.exchangeMTU()
        guard let service = try await session.gatt.services(withUUID: labService).first else { fail("no lab service") }
        guard let characteristic = try await session.gatt.characteristics(of: service, uuid: labStream).first else { fail("no stream") }
        let subscription = try await session.gatt.subscribe(to: characteristic)
        for try await update in subscription {
            let value = update.value
            guard value.count >= 4 else { fail("short stream value") }
            let base = value.startIndex
            let counter = Int(value[base]) | Int(value[base + 1]) << 8 | Int(value[base + 2]) << 16 | Int(value[base + 3]) << 24
            if counter != received { outOfOrder += 1 }
            if received == 0 {
                startWall = monotonicNanoseconds()
                startCPU = processCPUNanoseconds()
            }
            received += 1
            if received == arguments.count { break }
        }
    } catch {
        fail("gatt: \(error)")
    }
    let cpu = processCPUNanoseconds() - startCPU
    let wall = monotonicNanoseconds() - startWall
    let dropped = await session.gatt.att.droppedUpdateCount
    emit(["event": quoted("stream"), "received": "\(received)", "out_of_order": "\(outOfOrder)", "dropped": "\(dropped)",
          "wall_ns": "\(wall)", "cpu_ns": "\(cpu)"])
    await session.close()
}

// MARK: Main

let arguments = Arguments(CommandLine.arguments)
let watchdog = Task {
    try? await Task.sleep(for: .seconds(arguments.timeout))
    fail("timed out after \(arguments.timeout) s")
}
switch arguments.mode {
case "discover": await discover(arguments)
case "first-notification": await firstNotification(arguments)
case "stream": await stream(arguments)
default: fail("unknown mode \(arguments.mode)")
}
watchdog.cancel()
