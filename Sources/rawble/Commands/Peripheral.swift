import ArgumentParser
import RawbleGATT
import RawbleGATTCore
import RawbleHCITransport
import RawbleHeartRate
import RawbleHost
import RawbleHostCore
import RawbleKernelHost
import RawbleTransport
import RawbleWire
import Synchronization

/// `rawble peripheral hr|echo`: rawble as the peripheral — advertise, accept centrals, serve GATT.
struct PeripheralCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peripheral",
        abstract: "Be a peripheral: advertise and serve GATT (a simulated heart-rate strap, or an echo service).",
        discussion: """
            On rawble's own host (user:hciN, serial:, tcp:, unix:) centrals may pair
            with rawble's Security Manager (--io, --passkey, --confirm, --legacy say
            how); the bond is kept, and a central bonded once encrypts with it later
            without pairing again. --require encrypted|authenticated protects the
            service's characteristics: a central reading, writing or subscribing on a
            link less secure is answered Insufficient Encryption (or Insufficient
            Authentication) until it pairs (an authenticated key needs a method with a
            passkey or a comparison: --io other than none).

            Examples:
              rawble peripheral hr --rate 1
              rawble peripheral echo --name rawble-echo
              rawble peripheral hr --require encrypted --transport tcp:127.0.0.1:9000
            """,
        subcommands: [PeripheralHeartRate.self, PeripheralEcho.self])
}

/// What both peripherals take.
struct PeripheralOptions: ParsableArguments {
    @Option(help: "The name to advertise (and the GAP device name).") var name: String?
    @Option(help: ArgumentHelp("Stop after this many seconds (default: until Ctrl-C).", valueName: "seconds"))
    var duration: Double?
    @Option(name: .long, help: ArgumentHelp(
        "Serve the characteristics' values, and subscriptions to them, only on an encrypted or authenticated link: a central gets Insufficient Encryption or Insufficient Authentication until it pairs.",
        valueName: "level"))
    var require: SecurityArgument?
    @OptionGroup var pairing: PairingOptions

    func validate() throws {
        if let name, name.utf8.count > 248 { throw ValidationError("--name is longer than 248 bytes (the GAP limit)") }
        if let duration, !(duration > 0 && duration <= ConnectionOptions.maximumTimeout) {
            throw ValidationError("--duration must be a positive number of seconds, at most a day")
        }
    }
}

/// `rawble peripheral hr`: a Heart Rate strap for phones, watches, gym apps and `rawble hr`.
struct PeripheralHeartRate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hr",
        abstract: "A simulated heart-rate strap: Heart Rate (measurements, body sensor location, energy reset), Device Information, Battery.",
        discussion: """
            Examples:
              rawble peripheral hr --transport hci1
              rawble peripheral hr --rate 4 --seed 7 --json
            """)

    @Option(help: ArgumentHelp("Measurements per second.", valueName: "hz")) var rate: Double = 1
    @Option(help: "Seed of the simulated workout (the same seed, the same session).") var seed: UInt64 = 1
    @OptionGroup var peripheral: PeripheralOptions
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard rate > 0, rate <= 1000 else { throw ValidationError("--rate must be more than 0 and at most 1000 per second") }
    }

    func run() async throws {
        let name = peripheral.name ?? "rawble-hr"
        let strap: HeartRateStrap
        do {
            strap = try HeartRateStrap(identity: HeartRateStrap.Identity(name: name), seed: seed)
        } catch {
            throw CLIError(.usage, "cannot build the strap's database: \(error)")
        }
        let rate = rate
        let advertised = AdvertisingData(serviceUUIDs: [.heartRateService], localName: name)
        try await PeripheralSession.run(
            server: strap.server, advertising: advertised, name: name, options: peripheral,
            connection: connection, output: output
        ) { _, clock in
            await strap.run(rate: rate, clock: clock)
        }
    }
}

/// `rawble peripheral echo`: the tutorial's custom service. What a central writes to the
/// writable characteristic is notified back to every subscriber of the notifying one.
struct PeripheralEcho: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "echo",
        abstract: "A custom 128-bit service: what a central writes is notified (or indicated) back to every subscriber.",
        discussion: """
            Examples:
              rawble peripheral echo --transport hci1
            """)

    /// The service and its two characteristics ("rawble" and "ECHO" in the UUIDs).
    static let service = BluetoothUUID("72617762-6C65-4543-484F-000000000000")!
    static let notifying = BluetoothUUID("72617762-6C65-4543-484F-000000000001")!
    static let writable = BluetoothUUID("72617762-6C65-4543-484F-000000000002")!

    @OptionGroup var peripheral: PeripheralOptions
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let name = peripheral.name ?? "rawble-echo"
        let database: GATTServerDatabase
        do {
            database = try GATTServerDatabase(deviceName: name, services: [
                .primary(Self.service, characteristics: [
                    GATTCharacteristicDefinition(Self.notifying, properties: [.read, .notify, .indicate], value: .fixed([]),
                                                 userDescription: "Echo: what was written last"),
                    GATTCharacteristicDefinition(Self.writable, properties: [.write, .writeWithoutResponse], value: .fixed([]),
                                                 userDescription: "Write here"),
                ]),
            ])
        } catch {
            throw CLIError(.usage, "cannot build the echo database: \(error)")
        }
        let server = GATTServer(database: database)
        let notifyHandle = database.valueHandle(of: Self.notifying) ?? 0
        let writeHandle = database.valueHandle(of: Self.writable) ?? 0
        // The 128-bit UUID and the flags fill the advertisement; the name goes in the scan response.
        let advertised = AdvertisingData(serviceUUIDs: [Self.service])
        try await PeripheralSession.run(
            server: server, advertising: advertised, scanResponse: AdvertisingData(flags: nil, localName: name),
            name: name, options: peripheral, connection: connection, output: output
        ) { writes, _ in
            for await write in writes where write.handle == writeHandle {
                // Read back, notified, and indicated to those who asked for indications
                // (each central confirms its own; nobody waits for the slowest here).
                _ = await server.setValue(write.value, at: notifyHandle)
                _ = await server.notify(write.value, for: notifyHandle)
                Task { _ = await server.indicate(write.value, for: notifyHandle) }
            }
        }
    }
}

/// The part both peripherals share: open the host, advertise, accept each central and serve
/// it, report what centrals do (a line each, or `--json` lines), stop on Ctrl-C or `--duration`.
enum PeripheralSession {
    /// `work` runs beside the serving (the strap's beats, the echo) and gets every write and a
    /// clock of the host's loop to pace itself with.
    static func run(
        server: GATTServer, advertising: AdvertisingData, scanResponse: AdvertisingData? = nil, name: String,
        options: PeripheralOptions, connection: ConnectionOptions, output: OutputOptions,
        work: @escaping @Sendable (AsyncStream<GATTServerWrite>, EventLoopClock) async -> Void
    ) async throws {
        let host = try await HostSession.open(connection, output: output, pairing: options.pairing.settings)
        if let required = options.require {
            let database = await server.database
            do {
                await server.updateDatabase(try database.requiring(required.access))
            } catch {
                await host.close()
                throw CLIError(.internalError, "cannot protect the database: \(error)")
            }
        }
        // rawble's own host advertises and accepts itself; on hciN the raw channel's adapter
        // advertises and the kernel's listening ATT socket accepts.
        let peripheral: any Peripheral
        let advertiser: Adapter
        if let adapter = host.central as? Adapter {
            (peripheral, advertiser) = (adapter, adapter)
        } else if let kernel = host.central as? KernelCentral<KernelL2CAPOpener>, let adapter = host.kernelAdapter {
            (peripheral, advertiser) = (kernel.peripheral(local: adapter.address), kernel.scanner)
        } else {
            await host.close()
            throw CLIError(.unavailable, "\(host.transport) cannot be a peripheral in this version")
        }
        let status = StatusLine(quiet: output.quiet)
        let report = Reporter(json: output.json)
        // On the host's loop: the server, the strap and the link's sends share its thread, so a
        // notification leaves with no thread hop.
        let interrupt = InterruptWatcher()
        let serving = Task(executorPreference: host.central.taskExecutor) {
            let set: AdvertisingSet
            do throws(HostError) {
                set = try await peripheral.advertise(Advertisement(data: advertising, scanResponse: scanResponse))
            } catch {
                throw host.cliError(error)
            }
            report.advertising(name: name, address: await advertiser.controller.ownAddress, extended: set.isExtended)
            status.show("advertising as “\(name)”")
            let clock = EventLoopClock(host.central.taskExecutor.eventLoop)
            try await serve(server, on: peripheral, report: report) { writes in await work(writes, clock) }
        }
        let stopper = options.duration.map { seconds in
            Task {
                try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                serving.cancel()
            }
        }
        interrupt.onInterrupt { serving.cancel() }
        let result = await serving.result
        withExtendedLifetime(interrupt) {}
        stopper?.cancel()
        status.stop()
        await peripheral.close()
        await host.close()
        do {
            try result.get()
        } catch is CancellationError {
            // --duration, or Ctrl-C without one: the normal end of a peripheral; Ctrl-C before
            // its --duration cut it short.
            if options.duration != nil, interrupt.fired { throw CLIError.interrupted }
        }
    }

    /// Serves every central that connects until cancelled; reports the server's events.
    private static func serve(
        _ server: GATTServer, on peripheral: some Peripheral, report: Reporter,
        work: @escaping @Sendable (AsyncStream<GATTServerWrite>) async -> Void
    ) async throws {
        let (writes, writeSink) = AsyncStream.makeStream(of: GATTServerWrite.self, bufferingPolicy: .bufferingNewest(256))
        let peers = PeerTable()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await work(writes) }
            group.addTask {
                for await event in server.events {
                    switch event {
                    case .wrote(let id, let write):
                        report.wrote(peers[id], write)
                        writeSink.yield(write)
                    case let .subscribed(id, handle, bits):
                        report.subscribed(peers[id], uuid: await server.database.attribute(at: handle)?.type,
                                          indications: bits.contains(.indicate))
                    case let .unsubscribed(id, handle):
                        report.unsubscribed(peers[id], uuid: await server.database.attribute(at: handle)?.type)
                    case .connected, .disconnected, .mtuChanged, .dropped:
                        break
                    }
                }
            }
            for await link in peripheral.incomingConnections {
                let id = await server.connect(link.att)
                peers[id] = link.peer
                report.connected(link.peer)
                group.addTask {
                    let end = await server.serve(id)
                    let reason = if case .disconnected(let reason)? = link.ending { reason.description } else {
                        link.ending?.description ?? end.description
                    }
                    report.disconnected(link.peer, reason: reason)
                    peers[id] = nil
                }
                if Task.isCancelled { break }
            }
            writeSink.finish()
            group.cancelAll()
        }
        try Task.checkCancellation()
    }
}

/// Which central each server connection is, for the report.
private final class PeerTable: Sendable {
    private let peers = Mutex<[GATTConnectionID: DeviceAddress]>([:])

    subscript(id: GATTConnectionID) -> DeviceAddress? {
        get { peers.withLock { $0[id] } }
        set { peers.withLock { $0[id] = newValue } }
    }
}

/// What the peripheral reports on stdout: a line for a person per event, or JSON lines.
private struct Reporter: Sendable {
    let json: Bool

    func advertising(name: String, address: DeviceAddress, extended: Bool) {
        if json {
            Output.json(.object([("event", .string("advertising")), ("name", .string(name))] + Self.fields(address, key: "address")
                + [("extended", .bool(extended))]))
        } else {
            Output.line("advertising as “\(name)” from \(address.address) (\(address.type))")
        }
    }

    func connected(_ peer: DeviceAddress) {
        if json {
            Output.json(.object([("event", .string("connected"))] + Self.fields(peer)))
        } else {
            Output.line("\(peer.address) connected")
        }
    }

    func disconnected(_ peer: DeviceAddress, reason: String) {
        if json {
            Output.json(.object([("event", .string("disconnected"))] + Self.fields(peer) + [("reason", .string(reason))]))
        } else {
            Output.line("\(peer.address) disconnected: \(reason)")
        }
    }

    func subscribed(_ peer: DeviceAddress?, uuid: BluetoothUUID?, indications: Bool) {
        if json {
            Output.json(.object([("event", .string("subscribed"))] + Self.fields(peer)
                + [("uuid", uuid.map { .string($0.description) } ?? .null), ("indications", .bool(indications))]))
        } else {
            Output.line("\(peer.map { "\($0.address)" } ?? "a central") subscribed to \(uuid.map(\.description) ?? "?")")
        }
    }

    func unsubscribed(_ peer: DeviceAddress?, uuid: BluetoothUUID?) {
        if json {
            Output.json(.object([("event", .string("unsubscribed"))] + Self.fields(peer)
                + [("uuid", uuid.map { .string($0.description) } ?? .null)]))
        } else {
            Output.line("\(peer.map { "\($0.address)" } ?? "a central") unsubscribed from \(uuid.map(\.description) ?? "?")")
        }
    }

    func wrote(_ peer: DeviceAddress?, _ write: GATTServerWrite) {
        if json {
            Output.json(.object([("event", .string("written"))] + Self.fields(peer)
                + [("uuid", .string(write.uuid.description)), ("value", .string(Hex.encode(write.value)))]))
        } else {
            Output.line("\(peer.map { "\($0.address)" } ?? "a central") wrote \(Hex.encode(write.value)) to \(write.uuid)")
        }
    }

    private static func fields(_ peer: DeviceAddress?, key: String = "central") -> [(String, JSON)] {
        guard let peer else { return [(key, .null)] }
        return [(key, .string(peer.address.description)), ("addressType", .string(peer.type.description))]
    }
}

extension SecurityArgument {
    /// What `--require` asks of an attribute's reads and writes.
    var access: GATTAccess { self == .authenticated ? .authenticationRequired : .encryptionRequired }
}

extension GATTServerDatabase {
    /// The same database (the same handles) with every characteristic value of the embedder's
    /// services that anyone could read or write, and every subscription to them, open only to
    /// links with `access`. The GAP and
    /// GATT services stay open (centrals read the name before pairing).
    func requiring(_ access: GATTAccess) throws(GATTDefinitionError) -> GATTServerDatabase {
        let protected = services.map { service in
            var service = service
            service.characteristics = service.characteristics.map { characteristic in
                var characteristic = characteristic
                if characteristic.read == .open { characteristic.read = access }
                if characteristic.write == .open { characteristic.write = access }
                // Notify-only values (the strap's measurement) are protected by their CCCD.
                if characteristic.hasConfiguration { characteristic.subscribe = access }
                return characteristic
            }
            return service
        }
        return try GATTServerDatabase(deviceName: deviceName, appearance: appearance, services: protected)
    }
}
