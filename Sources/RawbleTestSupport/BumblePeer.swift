import Foundation
import Glibc
import Synchronization

/// A running `Scripts/bumble-peer`: Google Bumble's virtual controller served as H4 on TCP or a
/// unix socket, with LE peripherals (heart-rate strap, beacon, thermometer, broken advertiser,
/// and with `--lab` the GATT test device `rawble-lab`) on its virtual link. Each test starts its
/// own peer and stops it (also on deinit).
public final class BumblePeer: Sendable {
    /// Where the controller is served, as the ready line says: `tcp:HOST:PORT` or `unix:PATH`.
    public let transport: String
    /// The TCP host, for a `tcp:` transport.
    public let host: String?
    /// The TCP port, for a `tcp:` transport.
    public let port: UInt16?
    /// The unix socket path, for a `unix:` transport.
    public let socketPath: String?
    /// Every controller served on the peer's one link, in port order (`ports:` of ``start(arguments:ports:environment:readyTimeout:)``):
    /// the first is ``transport``. Each is driven by its own host, and all see the same link.
    public let controllers: [ServedController]
    /// Every served controller's transport string (`tcp:127.0.0.1:PORT` or `unix:PATH`), in order.
    public var transports: [String] { controllers.map(\.transport) }
    /// What each peripheral advertises, from the ready line.
    public let devices: [Device]
    /// The peer process.
    public let pid: Int32
    /// The JSON-lines file where the strap logs each Heart Rate Measurement it sends.
    public let logPath: String
    /// The file holding the peer's stderr (its logs).
    public let stderrPath: String
    /// The JSON-lines file where `rawble-lab` logs each completed write and Service Changed.
    public let writeLogPath: String
    /// The JSON-lines file where `rawble-lab` logs each stream value it sends and a summary per run.
    public let streamLogPath: String

    private let state: Mutex<State>

    private struct State {
        var stdinFD: Int32
        var stopped = false
    }
    /// The process's end, once reaped (by the thread `stop()` starts).
    private let processExit = ProcessExit()

    /// One controller the peer serves as H4 to an outside host, and its public address.
    public struct ServedController: Hashable, Sendable, Decodable {
        /// `tcp:HOST:PORT` or `unix:PATH`.
        public var transport: String
        /// The controller's public address (Read BD_ADDR), `AA:BB:CC:DD:EE:FF`.
        public var publicAddress: String

        public init(transport: String, publicAddress: String) {
            self.transport = transport
            self.publicAddress = publicAddress
        }

        /// The TCP host, for a `tcp:` transport.
        public var host: String? {
            guard transport.hasPrefix("tcp:"), let colon = transport.lastIndex(of: ":") else { return nil }
            return String(transport[transport.index(transport.startIndex, offsetBy: 4)..<colon])
        }

        /// The TCP port, for a `tcp:` transport.
        public var port: UInt16? {
            guard transport.hasPrefix("tcp:"), let colon = transport.lastIndex(of: ":") else { return nil }
            return UInt16(transport[transport.index(after: colon)...])
        }

        /// The unix socket path, for a `unix:` transport.
        public var socketPath: String? {
            transport.hasPrefix("unix:") ? String(transport.dropFirst(5)) : nil
        }
    }

    /// One advertiser on the peer's link, as the ready line describes it.
    public struct Device: Hashable, Sendable, Decodable {
        /// The device's own name (e.g. `rawble-strap`).
        public var name: String
        /// The local name it advertises (complete or shortened; may sit in the scan response).
        public var advertisedName: String?
        /// Whether the advertised name is the complete local name.
        public var completeName: Bool?
        /// Whether the name is only in the scan response.
        public var nameInScanResponse: Bool?
        /// `AA:BB:CC:DD:EE:FF`, most significant byte first.
        public var address: String
        /// Always `random` (random static addresses).
        public var addressType: String
        /// Whether its advertising is connectable.
        public var connectable: Bool
        /// Whether it answers an active scan with a scan response.
        public var scanResponse: Bool
        /// Advertised service UUIDs: 4 hex digits for 16-bit, the 36-character form for 128-bit.
        public var services: [String]
        /// Advertised manufacturer specific data.
        public var manufacturerData: [ManufacturerData]
        /// Advertised service data.
        public var serviceData: [ServiceData]?
        /// Advertised flags byte, if any.
        public var flags: UInt8?
        /// Advertised TX power level, if any.
        public var txPower: Int8?
        /// Advertised appearance, if any.
        public var appearance: UInt16?
        /// True when the advertising data is deliberately malformed.
        public var malformed: Bool?
        /// The raw advertising data, hex.
        public var advertisingData: String
        /// The raw scan response data, hex.
        public var scanResponseData: String
        /// The GATT database with the handles Bumble assigned, in handle order (`rawble-lab` only).
        public var gatt: [ServiceLayout]?
        /// The handles tests use most, also found in ``gatt`` (`rawble-lab` only).
        public var handles: LabHandles?
        /// What the stream characteristic sends on subscription (`rawble-lab` only).
        public var stream: StreamSettings?
        /// The strap's heart-rate options (`rawble-strap` only).
        public var heartRate: HeartRateSettings?
        /// The strap's pairing options and identity (`rawble-strap` only).
        public var pairing: StrapPairingSettings?

        /// The first service with `uuid` (4 hex digits or the upper-case 36-character form).
        public func service(_ uuid: String) -> ServiceLayout? {
            gatt?.first { $0.uuid == uuid }
        }
    }

    /// One service of a peer's database as Bumble laid it out; handles are inclusive.
    public struct ServiceLayout: Hashable, Sendable, Decodable {
        /// 4 hex digits for a 16-bit UUID, else the upper-case 36-character form.
        public var uuid: String
        /// Primary (true) or secondary service.
        public var primary: Bool
        /// The service declaration's handle.
        public var start: UInt16
        /// The last handle of the service's group.
        public var end: UInt16
        /// Include declarations, in handle order.
        public var includes: [IncludeLayout]
        /// Characteristics, in handle order.
        public var characteristics: [CharacteristicLayout]

        /// The first characteristic with `uuid`.
        public func characteristic(_ uuid: String) -> CharacteristicLayout? {
            characteristics.first { $0.uuid == uuid }
        }
    }

    /// An include declaration: its own handle and the included service's range and UUID.
    public struct IncludeLayout: Hashable, Sendable, Decodable {
        public var handle: UInt16
        public var start: UInt16
        public var end: UInt16
        public var uuid: String
    }

    /// A characteristic: declaration handle, value handle, last handle of its group, properties.
    public struct CharacteristicLayout: Hashable, Sendable, Decodable {
        public var uuid: String
        public var declaration: UInt16
        public var value: UInt16
        public var end: UInt16
        /// The properties byte of the declaration (0x02 read, 0x04 write without response,
        /// 0x08 write, 0x10 notify, 0x20 indicate).
        public var properties: UInt8
        /// Descriptors, in handle order (Bumble puts a CCCD last).
        public var descriptors: [DescriptorLayout]
        /// The static value, hex; nil when the value is computed on read (or changes).
        public var data: String?
        /// The static value's bytes, nil when computed on read.
        public var bytes: [UInt8]? { data.flatMap(BumblePeer.bytes(fromHex:)) }

        /// The handle of the first descriptor with `uuid` (e.g. `2902`).
        public func descriptor(_ uuid: String) -> UInt16? {
            descriptors.first { $0.uuid == uuid }?.handle
        }
    }

    /// A descriptor: its type and handle, and its value (hex) when static.
    public struct DescriptorLayout: Hashable, Sendable, Decodable {
        public var uuid: String
        public var handle: UInt16
        public var data: String?
    }

    /// The value handles (and CCCD handles) of `rawble-lab`'s most used characteristics.
    public struct LabHandles: Hashable, Sendable, Decodable {
        public var serviceChanged: UInt16
        public var serviceChangedCCCD: UInt16
        public var batteryLevel: UInt16
        public var batteryLevelCCCD: UInt16
        public var heartRateMeasurement: UInt16
        public var heartRateMeasurementCCCD: UInt16
        /// The 300-byte read-only value (byte i = i % 256).
        public var longRead: UInt16
        /// The writable value (write, write without response, ≤ 512 bytes, readable back).
        public var write: UInt16
        /// The stream value (notify + indicate) and its CCCD.
        public var stream: UInt16
        public var streamCCCD: UInt16
    }

    /// How many stream values the lab sends per subscription, how fast, and how long each is.
    public struct StreamSettings: Hashable, Sendable, Decodable {
        public var count: Int
        /// Values per second; 0 = as fast as the event loop goes.
        public var rate: Double
        /// Bytes per value: a 4-byte little-endian counter, then byte k = (counter + k) % 256.
        public var size: Int
    }

    /// How `rawble-strap` notifies Heart Rate Measurements, as its options set it (ready line).
    public struct HeartRateSettings: Hashable, Sendable, Decodable {
        /// `test` (the built-in 12-value script, repeated with bpm + 1 per round) or `realistic`.
        public var script: String
        /// Valid values per session (invalid ones come on top); 0 with `realistic` = endless.
        public var count: Int
        /// Seconds between notifications.
        public var interval: Double
        /// Seed of the realistic script.
        public var seed: Int
        /// The realistic script's artifacts (missed, extra, ectopic beats) per hour; 0 = none.
        public var artifacts: Double
        /// Notifications per connection before the strap disconnects (nil: never).
        public var disconnectAfter: Int?
        /// How many times it disconnects (0 = every `disconnectAfter`).
        public var disconnects: Int
        /// Whether invalid values are interleaved.
        public var invalid: Bool
        /// Whether writing the measurement's CCCD is answered with ATT error 0xFD.
        public var refuseCCCD: Bool
        /// Whether the strap accepts the subscription and never notifies.
        public var silent: Bool
        /// Where the strap's Heart Rate attributes are (value handles).
        public var handles: StrapHandles
    }

    /// The strap's Heart Rate value handles, as Bumble assigned them.
    public struct StrapHandles: Hashable, Sendable, Decodable {
        public var measurement: UInt16
        public var measurementCCCD: UInt16
        public var bodySensorLocation: UInt16
        public var controlPoint: UInt16
        /// `--strap-encrypted-read`'s characteristic value (readable once encrypted).
        public var encryptedRead: UInt16?
        /// `--strap-authenticated-read`'s characteristic value (readable once encrypted with an authenticated key).
        public var authenticatedRead: UInt16?
    }

    /// One Heart Rate Measurement value the strap sent (valid or not), in sending order.
    public struct SentHeartRateValue: Hashable, Sendable {
        /// Seconds since 1970, when it was handed to the strap's controller.
        public var time: Double
        /// The value as sent.
        public var bytes: [UInt8]
        /// Its place in the whole sequence, counted across connections (nil in old-format lines).
        public var position: Int?
        /// For a valid value, its index in the script (0, 1, ...); nil for an invalid one.
        public var index: Int?
        /// Why the value is invalid (`empty`, `rr-missing`, `rr-odd`, `rate-u16-short`,
        /// `energy-short`); nil for a valid value.
        public var invalidReason: String?
        /// True unless the strap sent it as an invalid value.
        public var isValid: Bool { invalidReason == nil }
    }

    /// The strap dropping the link on purpose (`--hr-disconnect-after`): HCI Disconnect with `reason`.
    public struct StrapDisconnect: Hashable, Sendable, Decodable {
        public var time: Double
        /// Values sent in all before the disconnect (the next connection resumes there).
        public var after: Int
        /// Values sent on the connection it dropped.
        public var onConnection: Int
        /// The HCI reason (0x13, remote user terminated connection).
        public var reason: UInt8

        public init(time: Double, after: Int, onConnection: Int, reason: UInt8) {
            self.time = time
            self.after = after
            self.onConnection = onConnection
            self.reason = reason
        }
    }

    /// One line of the strap's log, typed.
    public enum HeartRateLogEntry: Hashable, Sendable {
        /// A Heart Rate Measurement value notified (valid or invalid).
        case sent(SentHeartRateValue)
        /// The strap disconnected on purpose.
        case disconnect(StrapDisconnect)
        /// The client wrote the measurement's CCCD (accepted).
        case subscription(time: Double, notify: Bool, indicate: Bool)
        /// `--hr-refuse-cccd`: a CCCD write answered with ATT error 0xFD; the value written.
        case cccdRefused(time: Double, value: [UInt8])
        /// Control Point 0x01: energy expended reset, before the value at `position`.
        case energyReset(time: Double, position: Int)
        /// Control Point write other than 0x01, answered with ATT error 0x80; the value written.
        case controlPointRefused(time: Double, value: [UInt8])
        /// A pairing, encryption or address step of the strap (``securityLog()`` has them alone).
        case security(SecurityEvent)
        /// A line of a kind this reader does not know (a newer script).
        case other(kind: String)
    }

    /// A write the lab completed (after the whole prepared queue for a long write).
    public struct CompletedWrite: Hashable, Sendable, Decodable, HexLoggedValue {
        /// Seconds since 1970, when the peer accepted it.
        public var time: Double
        public var handle: UInt16
        /// The value, hex.
        public var value: String
    }

    /// One stream value the lab sent (in order).
    public struct StreamValue: Hashable, Sendable, Decodable, HexLoggedValue {
        public var time: Double
        public var counter: UInt32
        /// The value, hex.
        public var value: String
    }

    /// One stream run (one subscription) as the lab summed it up when it ended.
    public struct StreamSummary: Hashable, Sendable, Decodable {
        /// `notification` or `indication`.
        public var mode: String
        /// Values sent; counters 0 ..< count.
        public var count: Int
        public var first: UInt32?
        public var last: UInt32?
        public var size: Int
        public var rate: Double
        /// Wall time of the run, seconds.
        public var elapsed: Double
        /// The peer process's CPU time during the run, seconds.
        public var cpu: Double
        /// How far behind schedule the peer fell at worst, seconds.
        public var maxLate: Double
    }

    /// A Service Changed the lab made (`--service-changed-after`): the appended range and
    /// whether it was indicated (and confirmed) or not (client never enabled indications).
    public struct ServiceChange: Hashable, Sendable, Decodable {
        public var time: Double
        public var start: UInt16?
        public var end: UInt16?
        public var indicated: Bool
        /// The appended service, as laid out.
        public var service: ServiceLayout?
    }

    /// Manufacturer specific data: company identifier and payload (hex).
    public struct ManufacturerData: Hashable, Sendable, Decodable {
        public var company: UInt16
        /// The payload after the company identifier, hex.
        public var data: String
        /// The payload bytes.
        public var bytes: [UInt8] { BumblePeer.bytes(fromHex: data) ?? [] }
    }

    /// Service data: a 16-bit service UUID (4 hex digits) and payload (hex).
    public struct ServiceData: Hashable, Sendable, Decodable {
        public var uuid: String
        public var data: String
        /// The payload bytes.
        public var bytes: [UInt8] { BumblePeer.bytes(fromHex: data) ?? [] }
    }

    /// The ready line; `controllers` is absent in a script older than `--ports`.
    struct ReadyLine: Decodable {
        var ready: Bool
        var transport: String
        var controllers: [ServedController]?
        var devices: [Device]
    }

    private struct LogLine: Decodable {
        var value: String
    }

    /// Lab log lines carry a `kind`; the strap's heart-rate lines do not.
    private struct LogKind: Decodable {
        var kind: String?
    }

    private init(ready: ReadyLine, pid: Int32, stdinFD: Int32, logPath: String, stderrPath: String,
                 writeLogPath: String, streamLogPath: String) {
        transport = ready.transport
        controllers = ready.controllers ?? [ServedController(transport: ready.transport, publicAddress: "00:00:00:00:00:00")]
        devices = ready.devices
        self.pid = pid
        self.logPath = logPath
        self.stderrPath = stderrPath
        self.writeLogPath = writeLogPath
        self.streamLogPath = streamLogPath
        state = Mutex(State(stdinFD: stdinFD))
        if ready.transport.hasPrefix("tcp:") {
            let rest = ready.transport.dropFirst(4)
            let colon = rest.lastIndex(of: ":")
            host = colon.map { String(rest[..<$0]) }
            port = colon.flatMap { UInt16(rest[rest.index(after: $0)...]) }
            socketPath = nil
        } else if ready.transport.hasPrefix("unix:") {
            socketPath = String(ready.transport.dropFirst(5))
            host = nil
            port = nil
        } else {
            socketPath = nil
            host = nil
            port = nil
        }
    }

    deinit { stop() }

    /// The executable that is run: `RAWBLE_BUMBLE_PEER` if set, else `Scripts/bumble-peer` in
    /// this package (a launcher that runs the peer with the project's own Python environment,
    /// the one `Scripts/bootstrap` makes: `RAWBLE_VENV`, default `.build/venv`).
    public static var scriptPath: String {
        if let path = ProcessInfo.processInfo.environment["RAWBLE_BUMBLE_PEER"], !path.isEmpty {
            return path
        }
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent("Scripts/bumble-peer").path
    }

    /// Starts `Scripts/bumble-peer` with `arguments` (e.g. `["--unix", path]`,
    /// `["--hr-count", "5"]`) and waits at most `readyTimeout` for its ready line. Throws
    /// ``BumblePeerError/bumbleNotInstalled`` when the project's Python environment or Bumble in
    /// it is missing (fix: `Scripts/bootstrap`). `environment` is added to this process's
    /// environment for the peer (e.g. `RAWBLE_VENV`, `BUMBLE_SNOOPER`). `ports` > 1 serves that
    /// many controllers on the one link (``controllers``), each for its own host: e.g. rawble's
    /// peripheral on one and rawble's central on another.
    public static func start(
        arguments: [String] = [], ports: Int = 1, environment: [String: String] = [:],
        readyTimeout: Duration = .seconds(30)
    ) async throws -> BumblePeer {
        let arguments = ports > 1 ? arguments + ["--ports", "\(ports)"] : arguments
        let (peer, output) = try await launch(script: scriptPath, arguments: arguments, environment: environment,
                                              readyTimeout: readyTimeout)
        _ = close(output)
        return peer
    }

    /// Starts `script` as ``start(arguments:ports:environment:readyTimeout:)`` does and returns
    /// the peer with its stdout, still open after the ready line (the caller reads or closes it).
    static func launch(
        script: String, arguments: [String], environment: [String: String], readyTimeout: Duration
    ) async throws -> (BumblePeer, output: Int32) {
        guard FileManager.default.isExecutableFile(atPath: script) else {
            throw BumblePeerError.scriptNotFound(path: script)
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("rawble-bumble-peer-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let stderrPath = directory.appendingPathComponent("stderr.log").path
        var logPath = directory.appendingPathComponent("heart-rate.jsonl").path
        var arguments = arguments
        if let index = arguments.firstIndex(of: "--log"), index + 1 < arguments.count {
            logPath = arguments[index + 1]
        } else {
            arguments += ["--log", logPath]
        }
        var writeLogPath = directory.appendingPathComponent("lab-writes.jsonl").path
        if let index = arguments.firstIndex(of: "--write-log"), index + 1 < arguments.count {
            writeLogPath = arguments[index + 1]
        } else {
            arguments += ["--write-log", writeLogPath]
        }
        var streamLogPath = directory.appendingPathComponent("lab-stream.jsonl").path
        if let index = arguments.firstIndex(of: "--stream-log"), index + 1 < arguments.count {
            streamLogPath = arguments[index + 1]
        } else {
            arguments += ["--stream-log", streamLogPath]
        }

        let child = try spawn([script] + arguments, environment: environment, stderrPath: stderrPath)
        let line: String?
        do {
            line = try await readLine(fd: child.stdoutFD, pid: child.pid, timeout: readyTimeout)
        } catch {
            _ = close(child.stdoutFD)
            await terminated(child)
            throw error
        }
        guard let line else {
            _ = close(child.stdoutFD)
            let status = await terminated(child)
            let last = lastLine(ofFile: stderrPath)
            // Scripts/venv-python's one line (no environment, or no Bumble in it), or Python's
            // own when the environment lost Bumble.
            if last.contains("run Scripts/bootstrap") || last.contains("No module named 'bumble'") {
                throw BumblePeerError.bumbleNotInstalled
            }
            throw BumblePeerError.exitedBeforeReady(status: status, lastStderrLine: last)
        }
        guard let ready = try? JSONDecoder().decode(ReadyLine.self, from: Data(line.utf8)), ready.ready else {
            _ = close(child.stdoutFD)
            await terminated(child)
            throw BumblePeerError.malformedReadyLine(String(line.prefix(200)))
        }
        let peer = BumblePeer(ready: ready, pid: child.pid, stdinFD: child.stdinFD, logPath: logPath,
                              stderrPath: stderrPath, writeLogPath: writeLogPath, streamLogPath: streamLogPath)
        return (peer, child.stdoutFD)
    }

    /// Writes `line` and a newline to the peer's stdin (requests to `--central`); false once
    /// the peer is stopped or its stdin is closed.
    func writeInputLine(_ line: String) -> Bool {
        state.withLock { state in
            guard !state.stopped else { return false }
            // A peer that has exited makes the write fail with EPIPE and raise SIGPIPE, which
            // would end the test process: blocked on this thread for the write, a pending one
            // taken back before the mask is restored.
            var pipeSignal = sigset_t()
            var previous = sigset_t()
            sigemptyset(&pipeSignal)
            sigaddset(&pipeSignal, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
            defer {
                var pending = sigset_t()
                sigpending(&pending)
                if sigismember(&pending, SIGPIPE) == 1 && sigismember(&previous, SIGPIPE) == 0 {
                    var zero = timespec(tv_sec: 0, tv_nsec: 0)
                    _ = sigtimedwait(&pipeSignal, nil, &zero)
                }
                pthread_sigmask(SIG_SETMASK, &previous, nil)
            }
            let bytes = Array((line + "\n").utf8)
            var written = 0
            while written < bytes.count {
                let count = bytes[written...].withUnsafeBytes { write(state.stdinFD, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                written += count
            }
            return true
        }
    }

    /// Stops the peer and returns at once: closes its stdin and sends SIGTERM, then waits at
    /// most 3 s for it to exit (then SIGKILL) and reaps it on a thread of its own. Tests call
    /// it in `defer`, on one of Swift's cooperative threads (two on a 2-core machine): waiting
    /// there for Python to shut down held a thread every other test of the run needs, up to
    /// 3 s per peer. ``stopAndWait()`` also waits for the process to be gone. Idempotent.
    public func stop() {
        let stdinFD: Int32? = state.withLock { state in
            if state.stopped { return nil }
            state.stopped = true
            return state.stdinFD
        }
        guard let stdinFD else { return }
        let (pid, processExit) = (self.pid, self.processExit)
        Thread.detachNewThread { processExit.finish(Self.terminate(pid: pid, stdinFD: stdinFD)) }
    }

    /// Stops the peer as ``stop()`` does and returns once it exited and was reaped, with its
    /// exit code (or 128 + the signal that ended it).
    @discardableResult
    public func stopAndWait() async -> Int32 {
        stop()
        return await processExit.status()
    }

    /// The strap's log as written so far; `nil` before the strap wrote its first line.
    private func logText() throws -> String? {
        guard FileManager.default.fileExists(atPath: logPath) else { return nil }
        do {
            return try String(contentsOfFile: logPath, encoding: .utf8)
        } catch {
            throw BumblePeerError.unreadableLog(path: logPath, reason: "\(error)")
        }
    }

    /// The Heart Rate Measurement values the strap has sent so far, in order, from its log
    /// (invalid ones included: ``sentHeartRateMeasurements()`` says which).
    public func sentHeartRateValues() throws -> [[UInt8]] {
        guard let text = try logText() else { return [] }
        var values: [[UInt8]] = []
        for line in text.split(separator: "\n") where !line.isEmpty {
            if (try? JSONDecoder().decode(LogKind.self, from: Data(line.utf8)))?.kind != nil { continue }
            guard let entry = try? JSONDecoder().decode(LogLine.self, from: Data(line.utf8)),
                  let bytes = Self.bytes(fromHex: entry.value)
            else {
                throw BumblePeerError.unreadableLog(path: logPath, reason: "bad line: \(line.prefix(100))")
            }
            values.append(bytes)
        }
        return values
    }

    /// Every line of the strap's log so far, typed, in order (an unfinished last line is ignored).
    public func heartRateLog() throws -> [HeartRateLogEntry] {
        guard let text = try logText() else { return [] }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()
        let decoder = JSONDecoder()
        var entries: [HeartRateLogEntry] = []
        for line in lines where !line.isEmpty {
            let data = Data(line.utf8)
            do {
                let raw = try decoder.decode(StrapLogLine.self, from: data)
                entries.append(try raw.entry(decoder: decoder, data: data))
            } catch {
                throw BumblePeerError.unreadableLog(path: logPath, reason: "bad line: \(line.prefix(100))")
            }
        }
        return entries
    }

    /// The strap's values so far with their validity, in order (``sentHeartRateValues()`` has the same bytes).
    public func sentHeartRateMeasurements() throws -> [SentHeartRateValue] {
        try heartRateLog().compactMap { if case .sent(let value) = $0 { value } else { nil } }
    }

    /// The strap's deliberate disconnects so far, in order.
    public func strapDisconnects() throws -> [StrapDisconnect] {
        try heartRateLog().compactMap { if case .disconnect(let event) = $0 { event } else { nil } }
    }

    /// The strap's pairing, encryption and address steps so far, in order.
    public func securityLog() throws -> [SecurityEvent] {
        try heartRateLog().compactMap { if case .security(let event) = $0 { event } else { nil } }
    }

    /// The pairings the strap completed so far, in order (its side: role `peripheral`).
    public func pairings() throws -> [PairingRecord] {
        try securityLog().compactMap(\.pairing)
    }

    /// A strap log line with every field optional; `entry` types it by `kind`.
    private struct StrapLogLine: Decodable {
        var kind: String?
        var time: Double?
        var value: String?
        var position: Int?
        var index: Int?
        var invalid: String?
        var notify: Bool?
        var indicate: Bool?

        struct Malformed: Error {}

        func entry(decoder: JSONDecoder, data: Data) throws -> HeartRateLogEntry {
            let time = self.time ?? 0
            func bytes() throws -> [UInt8] {
                guard let value, let bytes = BumblePeer.bytes(fromHex: value) else { throw Malformed() }
                return bytes
            }
            switch kind {
            case nil:
                return .sent(SentHeartRateValue(time: time, bytes: try bytes(), position: position,
                                                index: invalid == nil ? index : nil, invalidReason: invalid))
            case "disconnect":
                return .disconnect(try decoder.decode(StrapDisconnect.self, from: data))
            case "subscription":
                return .subscription(time: time, notify: notify ?? false, indicate: indicate ?? false)
            case "cccd-refused":
                return .cccdRefused(time: time, value: try bytes())
            case "energy-reset":
                guard let position else { throw Malformed() }
                return .energyReset(time: time, position: position)
            case "control-point-refused":
                return .controlPointRefused(time: time, value: try bytes())
            case let other? where SecurityEvent.kinds.contains(other):
                return .security(try decoder.decode(SecurityEvent.self, from: data))
            case let other?:
                return .other(kind: other)
            }
        }
    }

    /// The writes `rawble-lab` completed so far, in order.
    public func completedWrites() throws -> [CompletedWrite] {
        try Self.entries(ofKind: "write", inLog: writeLogPath)
    }

    /// The Service Changed events `rawble-lab` made so far.
    public func serviceChanges() throws -> [ServiceChange] {
        try Self.entries(ofKind: "service-changed", inLog: writeLogPath)
    }

    /// The stream values `rawble-lab` sent so far, in order (empty with `--no-stream-log-values`);
    /// complete for a run once ``streamSummaries()`` lists it (values are flushed in batches).
    public func sentStreamValues() throws -> [StreamValue] {
        try Self.entries(ofKind: "stream", inLog: streamLogPath)
    }

    /// One summary per finished (or cancelled) stream run, in order.
    public func streamSummaries() throws -> [StreamSummary] {
        try Self.entries(ofKind: "stream-summary", inLog: streamLogPath)
    }

    /// The Heart Rate Measurement values `rawble-lab` (not the strap) notified so far, in order.
    public func sentLabHeartRateValues() throws -> [[UInt8]] {
        let lines: [LogLine] = try Self.entries(ofKind: "heart-rate", inLog: streamLogPath)
        return try lines.map { line in
            guard let bytes = Self.bytes(fromHex: line.value) else {
                throw BumblePeerError.unreadableLog(path: streamLogPath, reason: "bad hex: \(line.value.prefix(100))")
            }
            return bytes
        }
    }

    /// Every line of the JSON-lines file at `path` whose `kind` is `kind`, decoded as `T`.
    private static func entries<T: Decodable>(ofKind kind: String, inLog path: String) throws -> [T] {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw BumblePeerError.unreadableLog(path: path, reason: "\(error)")
        }
        let decoder = JSONDecoder()
        var entries: [T] = []
        // A line the peer is still writing has no newline yet: only whole lines count.
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()
        for line in lines where !line.isEmpty {
            let data = Data(line.utf8)
            guard let tag = try? decoder.decode(LogKind.self, from: data) else {
                throw BumblePeerError.unreadableLog(path: path, reason: "bad line: \(line.prefix(100))")
            }
            guard tag.kind == kind else { continue }
            do {
                entries.append(try decoder.decode(T.self, from: data))
            } catch {
                throw BumblePeerError.unreadableLog(path: path, reason: "bad \(kind) line: \(line.prefix(100))")
            }
        }
        return entries
    }

    // MARK: Process plumbing

    private struct Child {
        var pid: pid_t
        var stdinFD: Int32
        var stdoutFD: Int32
    }

    /// posix_spawn (via PATH) with stdin and stdout on pipes and stderr to a file.
    private static func spawn(_ argv: [String], environment: [String: String], stderrPath: String) throws -> Child {
        var stdinPipe: [Int32] = [-1, -1]
        var stdoutPipe: [Int32] = [-1, -1]
        guard makePipe(&stdinPipe) else { throw BumblePeerError.launchFailed(errno: errno) }
        guard makePipe(&stdoutPipe) else {
            let saved = errno
            _ = close(stdinPipe[0]); _ = close(stdinPipe[1])
            throw BumblePeerError.launchFailed(errno: saved)
        }
        let stderrFD = open(stderrPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer {
            _ = close(stdinPipe[0])
            _ = close(stdoutPipe[1])
            if stderrFD >= 0 { _ = close(stderrFD) }
        }
        guard stderrFD >= 0 else {
            let saved = errno
            _ = close(stdinPipe[1]); _ = close(stdoutPipe[0])
            throw BumblePeerError.launchFailed(errno: saved)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrFD, 2)
        // Nothing else of this process reaches the peer: a descriptor without FD_CLOEXEC (SwiftNIO
        // opens its sockets without it) would otherwise stay open in the peer for its whole life,
        // and the other end of such a socket would not see it close.
        // (glibc 2.34's posix_spawn_file_actions_addclosefrom_np, which the Glibc module does not
        // import: looked up by name.)
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        }

        var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        var cEnvironment: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { cEnvironment.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, argv[0], &actions, nil, &cArguments, &cEnvironment)
        guard status == 0 else {
            _ = close(stdinPipe[1]); _ = close(stdoutPipe[0])
            throw BumblePeerError.launchFailed(errno: status)
        }
        return Child(pid: pid, stdinFD: stdinPipe[1], stdoutFD: stdoutPipe[0])
    }

    /// A pipe whose both ends close on exec (the spawn's dup2 clears it on the child's copies).
    private static func makePipe(_ fds: inout [Int32]) -> Bool {
        guard pipe(&fds) == 0 else { return false }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        return true
    }

    /// Reads one line from `fd` on its own thread, giving up after `timeout` (then the caller
    /// kills the child, which ends the read). `nil` at end of file.
    private static func readLine(fd: Int32, pid: pid_t, timeout: Duration) async throws -> String? {
        let (stream, continuation) = AsyncStream.makeStream(of: String?.self)
        let thread = Thread {
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while true {
                let count = read(fd, &byte, 1)
                if count == 1 {
                    if byte == UInt8(ascii: "\n") { break }
                    if line.count < 16 << 20 { line.append(byte) }
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    continuation.yield(nil)
                    continuation.finish()
                    return
                }
            }
            continuation.yield(String(decoding: line, as: UTF8.self))
            continuation.finish()
        }
        thread.start()
        return try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                for await line in stream { return line }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw BumblePeerError.notReady(within: timeout)
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { return nil }
            return first
        }
    }

    /// `child` terminated as `terminate(pid:stdinFD:)` does, on a thread of its own (it waits
    /// up to 3 s: not on the cooperative pool). Returns its exit code (-1 if no thread ran it).
    @discardableResult
    private static func terminated(_ child: Child) async -> Int32 {
        (try? await onOwnThread { terminate(pid: child.pid, stdinFD: child.stdinFD) }) ?? -1
    }

    /// SIGTERM, wait ≤ 3 s, SIGKILL, reap: blocks its thread. Returns the wait status's exit
    /// code (or 128+signal).
    @discardableResult
    private static func terminate(pid: pid_t, stdinFD: Int32) -> Int32 {
        _ = close(stdinFD)
        var status: Int32 = 0
        if let code = reap(pid, &status) { return code }
        _ = kill(pid, SIGTERM)
        for _ in 0..<150 {
            if let code = reap(pid, &status) { return code }
            usleep(20_000)
        }
        _ = kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return exitCode(status)
    }

    private static func reap(_ pid: pid_t, _ status: inout Int32) -> Int32? {
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid { return exitCode(status) }
        if result < 0 && errno == ECHILD { return -1 }
        return nil
    }

    private static func exitCode(_ status: Int32) -> Int32 {
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    private static func lastLine(ofFile path: String) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { return "" }
        let text = String(decoding: data.suffix(4096), as: UTF8.self)
        return text.split(separator: "\n").last.map(String.init) ?? ""
    }

    public static func bytes(fromHex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index + 1 < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Why a ``BumblePeer`` could not start or be read; each description is one actionable line.
public enum BumblePeerError: Error, Hashable, Sendable, CustomStringConvertible {
    case scriptNotFound(path: String)
    case bumbleNotInstalled
    case launchFailed(errno: Int32)
    case exitedBeforeReady(status: Int32, lastStderrLine: String)
    case notReady(within: Duration)
    case malformedReadyLine(String)
    case unreadableLog(path: String, reason: String)

    public var description: String {
        switch self {
        case .scriptNotFound(let path):
            "bumble-peer launcher not found (or not executable) at \(path): set RAWBLE_BUMBLE_PEER (RAWBLE_BUMBLE_CENTRAL for bumble-central) or run from the rawble checkout"
        case .bumbleNotInstalled:
            "bumble 0.0.236 is not installed in the project's Python environment (RAWBLE_VENV, default .build/venv): run Scripts/bootstrap, or set \(TestRequirements.withoutBumbleVariable)=1 to deselect the Bumble-backed tests"
        case .launchFailed(let code):
            "could not launch Scripts/bumble-peer: \(String(cString: strerror(code)))"
        case .exitedBeforeReady(let status, let line):
            "bumble-peer exited with status \(status) before it was ready: \(line)"
        case .notReady(let timeout):
            "bumble-peer was not ready within \(timeout.components.seconds) s"
        case .malformedReadyLine(let line):
            "bumble-peer printed an unreadable ready line (script and support out of step?): \(line)"
        case .unreadableLog(let path, let reason):
            "bumble-peer's log \(path) is unreadable: \(reason)"
        }
    }
}

/// A value the lab logged as hex (a completed write, a stream value): its bytes.
public protocol HexLoggedValue {
    /// The value, hex.
    var value: String { get }
}

extension HexLoggedValue {
    /// The value's bytes (empty should the lab ever log a malformed value).
    public var bytes: [UInt8] { BumblePeer.bytes(fromHex: value) ?? [] }
}

/// A child process's end, once reaped: any number of tasks wait for it.
private final class ProcessExit: Sendable {
    private struct State {
        var code: Int32?
        var waiters: [CheckedContinuation<Int32, Never>] = []
    }
    private let state = Mutex(State())

    /// Records the exit code and resumes every waiter.
    func finish(_ code: Int32) {
        let waiters = state.withLock { state in
            state.code = code
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: code) }
    }

    /// The exit code, once `finish(_:)` recorded it.
    func status() async -> Int32 {
        await withCheckedContinuation { continuation in
            let code = state.withLock { state -> Int32? in
                if state.code == nil { state.waiters.append(continuation) }
                return state.code
            }
            if let code { continuation.resume(returning: code) }
        }
    }
}
