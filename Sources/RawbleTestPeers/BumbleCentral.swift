import Foundation
import Glibc
import RawbleTestSupport
import RawbleWire
import Synchronization

/// A running `Scripts/bumble-central`: Google Bumble's own GATT client as a central on a
/// `bumble-peer` link, the independent check of a GATT server (rawble's peripheral on one of
/// the link's ports, or a Bumble peripheral such as the strap). It scans for its target,
/// connects, discovers everything, reads every readable value, subscribes to every notifying or
/// indicating characteristic, writes what it was asked to, and reports each step as an
/// ``Event``; then it disconnects and the process ends (see `Scripts/python/bumble_central.py`).
public final class BumbleCentral: Sendable {
    /// The link's fixture: its served controllers (``BumblePeer/controllers``), devices and logs.
    public let peer: BumblePeer

    private let log = ObservedLog<Event>()
    /// Lines of the output that were not events.
    private let malformed = Mutex<[String]>([])

    /// One line the central printed. Fields absent from a kind of event are nil.
    public struct Event: Hashable, Sendable, Decodable {
        /// `scanning`, `found`, `connected`, `mtu`, `discovered`, `read`, `subscribed`,
        /// `notification`, `indication`, `unsubscribed`, `write`, `error`, `disconnected` or `done`;
        /// with pairing, also `reconnecting` (its own disconnection, ``disconnectReason``) and the
        /// steps ``security`` types.
        public var event: String
        /// Which central printed it, 1 to `centrals` (nil from a script older than `--centrals`).
        public var central: Int?
        /// The attribute's UUID: 4 hex digits, or the upper-case 36-character form.
        public var uuid: String?
        /// The attribute's handle (a characteristic's value handle).
        public var handle: UInt16?
        /// A value read, received or written, hex.
        public var value: String?
        /// `read`: whether the attribute read is a descriptor.
        public var descriptor: Bool?
        /// `subscribed`: `notification` or `indication`.
        public var mode: String?
        /// `notification`/`indication`: the value's place among all values received, from 0.
        public var index: Int?
        /// `notification`/`indication`: when the central received it, seconds since 1970.
        public var time: Double?
        /// `write`: a Write Request (true) or a Write Command (false).
        public var withResponse: Bool?
        /// `discovered`: the server's database as discovered: primary services, then the secondary ones they include.
        public var services: [BumblePeer.ServiceLayout]?
        /// `found`/`connected`: the peer's address; `found`: its address type and local name.
        public var address: String?
        public var addressType: String?
        public var name: String?
        /// `connected`: the connection handle on the central's controller.
        public var connectionHandle: UInt16? { event == "connected" ? handle : nil }
        /// `mtu`: the ATT MTU after the exchange.
        public var mtu: Int?
        /// `error`: the step (`scan`, `connect`, `mtu`, `discover`, `read`, `subscribe`,
        /// `unsubscribe`, `write`, `request`), the message, and the ATT error code when the server sent one.
        public var during: String?
        public var message: String?
        public var attError: UInt8?
        /// `disconnected`: the HCI reason (an Int); `done`: why the run ended (`count`,
        /// `complete`, `timeout`, `disconnected`, `error`), carried as text in ``doneReason``.
        public var reason: Reason?
        /// `done`: values received in all.
        public var values: Int?
        /// A pairing, encryption or Security Request step (`pairing`, `pairing-failed`,
        /// `encryption`, `encryption-failed`, `passkey-displayed`, `passkey-requested`,
        /// `passkey-entered`, `comparison`, `security-request`), typed; nil for the other events.
        public var security: BumblePeer.SecurityEvent?

        /// The bytes of ``value``, nil when absent or not hex.
        public var bytes: [UInt8]? { value.flatMap { try? Hex.decode($0) } }

        /// `done`: why the run ended.
        public var doneReason: String? {
            if case .text(let text)? = reason { text } else { nil }
        }

        /// `disconnected`: the HCI reason code.
        public var disconnectReason: Int? {
            if case .code(let code)? = reason { code } else { nil }
        }

        /// `reason` is a number on `disconnected` and a word on `done`.
        public enum Reason: Hashable, Sendable, Decodable {
            case code(Int)
            case text(String)

            public init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let code = try? container.decode(Int.self) {
                    self = .code(code)
                } else {
                    self = .text(try container.decode(String.self))
                }
            }
        }
    }

    /// A write the central makes once subscribed: `target` is a UUID or a handle (`0x0015`).
    public struct Write: Hashable, Sendable {
        public var target: String
        public var value: [UInt8]
        public var withResponse: Bool

        public init(target: String, value: [UInt8], withResponse: Bool = true) {
            self.target = target
            self.value = value
            self.withResponse = withResponse
        }

        var argument: String { "\(target)=\(value.map { String(format: "%02x", $0) }.joined())" }
    }

    /// How the central pairs (`--central-pair` and the `--central-*` pairing options).
    public struct Pairing: Hashable, Sendable {
        public var options: BumblePeer.PairingOptions
        /// Pair as soon as connected (before discovery).
        public var pair: Bool
        /// Wait for the peripheral's Security Request, then pair (or encrypt, with a bond).
        public var expectSecurityRequest: Bool
        /// Once paired and bonded: disconnect, reconnect, encrypt with the bond's key (no pairing),
        /// then discover and read on that link.
        public var reconnectEncrypt: Bool

        public init(options: BumblePeer.PairingOptions = BumblePeer.PairingOptions(), pair: Bool = true,
                    expectSecurityRequest: Bool = false, reconnectEncrypt: Bool = false) {
            self.options = options
            self.pair = pair
            self.expectSecurityRequest = expectSecurityRequest
            self.reconnectEncrypt = reconnectEncrypt
        }

        /// The `--central-*` options.
        public var arguments: [String] {
            var arguments = options.arguments(prefix: "central")
            if pair { arguments.append("--central-pair") }
            if expectSecurityRequest { arguments.append("--central-expect-security-request") }
            if reconnectEncrypt { arguments.append("--central-reconnect-encrypt") }
            return arguments
        }
    }

    private init(peer: BumblePeer) {
        self.peer = peer
    }

    deinit { stop() }

    /// The launcher: `RAWBLE_BUMBLE_CENTRAL` if set, else `Scripts/bumble-central` in this package.
    public static var scriptPath: String {
        if let path = ProcessInfo.processInfo.environment["RAWBLE_BUMBLE_CENTRAL"], !path.isEmpty {
            return path
        }
        return URL(fileURLWithPath: BumblePeer.scriptPath).deletingLastPathComponent()
            .appendingPathComponent("bumble-central").path
    }

    /// Starts a link (bumble-peer's `arguments`, `ports` served controllers) with the central
    /// looking for `target` (an address or a local name). The central ends after `count` values
    /// notified or indicated (0: once everything is read, subscribed and written; `wait`: only
    /// at ``end(central:)``), when the link drops, or after `timeout` seconds. `indicate` subscribes
    /// with indications where a characteristic offers both; `unsubscribe` writes every CCCD back
    /// to 0 at the end, before disconnecting. Returns once the link is ready
    /// (its ready line read); the central is then scanning. `centrals` > 1 runs that many, each
    /// on its own controller (random static F0:CE:17:4A:00:01, :02 ...), central k+1 scanning
    /// once central k has connected (or ended); every count and timeout is per central.
    /// `pairing` makes the central pair (every central, with the same options) and log each
    /// step as an event (``Event/security``, ``pairings``).
    public static func start(
        target: String, arguments: [String] = [], ports: Int = 1, centrals: Int = 1, count: Int = 0,
        timeout: Double = 30,
        indicate: Bool = false, wait: Bool = false, unsubscribe: Bool = false, writes: [Write] = [], mtu: Int? = nil,
        pairing: Pairing? = nil,
        environment: [String: String] = [:], readyTimeout: Duration = .seconds(30)
    ) async throws -> BumbleCentral {
        var options = [target] + arguments
        if let pairing { options += pairing.arguments }
        if ports > 1 { options += ["--ports", "\(ports)"] }
        options += ["--central-count", "\(count)", "--central-timeout", "\(timeout)"]
        if centrals > 1 { options += ["--centrals", "\(centrals)"] }
        if indicate { options.append("--central-indicate") }
        if wait { options.append("--central-wait") }
        if unsubscribe { options.append("--central-unsubscribe") }
        if let mtu { options += ["--central-mtu", "\(mtu)"] }
        for write in writes {
            options += [write.withResponse ? "--central-write" : "--central-write-command", write.argument]
        }
        // The process outlives the central's run by little: keep it for the whole timeout.
        options += ["--lifetime", "\(Int(timeout) + 60)"]
        let (peer, output) = try await BumblePeer.launch(script: scriptPath, arguments: options,
                                                         environment: environment, readyTimeout: readyTimeout)
        let central = BumbleCentral(peer: peer)
        central.read(from: output)
        return central
    }

    /// The events so far, in order.
    public var events: [Event] { log.elements }

    /// Lines of the output that were not events (should stay empty).
    public var malformedLines: [String] { malformed.withLock { $0 } }

    /// The first event (already printed or to come) that `match` accepts, waiting at most
    /// `seconds`; throws RawbleTestSupport's `TestTimeout` then, or ``BumbleCentralError/ended(events:)`` when the
    /// process's output ends without one.
    public func event(within seconds: Double = 60,
                      where match: @escaping @Sendable (Event) -> Bool) async throws -> Event {
        try await log.first(within: seconds, where: match)
    }

    /// The `done` event of `central` (1 to `centrals`): its run's end (waiting at most `seconds`).
    public func finished(central: Int = 1, within seconds: Double = 60) async throws -> Event {
        try await event(within: seconds) { $0.event == "done" && ($0.central ?? 1) == central }
    }

    /// The pairing, encryption and Security Request steps so far, in order.
    public var securityEvents: [BumblePeer.SecurityEvent] { events.compactMap(\.security) }

    /// The pairings the central completed so far (role `central`), in order.
    public var pairings: [BumblePeer.PairingRecord] { securityEvents.compactMap(\.pairing) }

    /// The values received by notification and indication so far, in order.
    public var receivedValues: [Event] {
        events.filter { $0.event == "notification" || $0.event == "indication" }
    }

    /// Asks `central` to write `value` to `target` (UUID or `0x` handle) now (after discovery).
    @discardableResult
    public func write(_ target: String, value: [UInt8], withResponse: Bool = true, central: Int = 1) -> Bool {
        request(["write": .string(target), "value": .string(value.map { String(format: "%02x", $0) }.joined()),
                 "withResponse": .bool(withResponse)], central: central)
    }

    /// Asks `central` to read `target` (UUID or `0x` handle) now (after discovery).
    @discardableResult
    public func read(_ target: String, central: Int = 1) -> Bool {
        request(["read": .string(target)], central: central)
    }

    /// Asks `central` to unsubscribe from `target` (UUID or `0x` handle): its CCCD written to 0.
    @discardableResult
    public func unsubscribe(_ target: String, central: Int = 1) -> Bool {
        request(["unsubscribe": .string(target)], central: central)
    }

    /// Asks `central` to disconnect (its run then ends with reason `disconnected`).
    @discardableResult
    public func disconnect(central: Int = 1) -> Bool { request(["disconnect": .bool(true)], central: central) }

    /// Types `passkey` (0...999999) for `central`: its answer in the Passkey Entry it waits in
    /// when it must type and has no fixed passkey (a `passkey-requested` event). `nil` refuses
    /// (Pairing Failed 0x01).
    @discardableResult
    public func typePasskey(_ passkey: UInt32?, central: Int = 1) -> Bool {
        let value: RequestValue = if let passkey { .int(Int(passkey)) } else { .null }
        return request(["passkey": value], central: central)
    }

    /// Ends `central`'s run started with `wait`: reason `complete`.
    @discardableResult
    public func end(central: Int = 1) -> Bool { request(["end": .bool(true)], central: central) }

    /// Stops the process (the link and the central with it) and returns at once (see
    /// `BumblePeer.stop()`). Idempotent.
    public func stop() { peer.stop() }

    /// Stops the process and returns once it exited, with its exit code.
    @discardableResult
    public func stopAndWait() async -> Int32 { await peer.stopAndWait() }

    private enum RequestValue: Encodable {
        case string(String)
        case bool(Bool)
        case int(Int)
        case null

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let text): try container.encode(text)
            case .bool(let flag): try container.encode(flag)
            case .int(let number): try container.encode(number)
            case .null: try container.encodeNil()
            }
        }
    }

    private func request(_ fields: [String: RequestValue], central: Int) -> Bool {
        var fields = fields
        fields["central"] = .int(central)
        guard let data = try? JSONEncoder().encode(fields) else { return false }
        return peer.writeInputLine(String(decoding: data, as: UTF8.self))
    }

    /// Reads the output's lines on a thread of its own until its end (bounded: 1 MiB a line).
    private func read(from fd: Int32) {
        let thread = Thread { [weak self] in
            defer { _ = close(fd) }
            var line: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                for byte in buffer[..<count] {
                    if byte == UInt8(ascii: "\n") {
                        guard let self else { return }
                        self.received(line)
                        line.removeAll(keepingCapacity: true)
                    } else if line.count < 1 << 20 {
                        line.append(byte)
                    }
                }
            }
            self?.outputEnded()
        }
        thread.start()
    }

    private func received(_ line: [UInt8]) {
        guard !line.isEmpty else { return }
        let decoder = JSONDecoder()
        guard var event = try? decoder.decode(Event.self, from: Data(line)) else {
            malformed.withLock { $0.append(String(decoding: line.prefix(300), as: UTF8.self)) }
            return
        }
        if BumblePeer.SecurityEvent.kinds.contains(event.event) {
            guard let security = try? decoder.decode(BumblePeer.SecurityEvent.self, from: Data(line)) else {
                malformed.withLock { $0.append(String(decoding: line.prefix(300), as: UTF8.self)) }
                return
            }
            event.security = security
        }
        log.append(event)
    }

    private func outputEnded() {
        log.end(with: BumbleCentralError.ended(events: log.count))
    }
}

/// Why waiting on a ``BumbleCentral`` failed.
public enum BumbleCentralError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The central's output ended (the process exited) before the event waited for.
    case ended(events: Int)

    public var description: String {
        switch self {
        case .ended(let count):
            "bumble-central ended after \(count) events without the one waited for (its stderr has why)"
        }
    }
}
