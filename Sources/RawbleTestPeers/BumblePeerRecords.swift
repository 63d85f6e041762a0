import Foundation
import RawbleWire

// What Scripts/bumble-peer says, typed: its ready line (the controllers it serves, each device's
// advertising and, for `rawble-lab` and the strap, the GATT handles Bumble assigned) and the JSON
// lines of its logs (the strap's values and events, the lab's writes and stream). Each mirrors a
// structure of Scripts/python/bumble_fixture; the hex in them is read with `Hex.decode(_:)`.
// (``BumblePeer`` starts the peer and reads the logs; BumblePeerSecurity.swift has the pairing
// records.)

extension BumblePeer {
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
        public var bytes: [UInt8]? { data.flatMap { try? Hex.decode($0) } }

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
        /// Which strap: 0 for `rawble-strap`, NN for `rawble-strap-NN` of `--straps` (nil in a
        /// script older than `--straps`).
        public var strap: Int?
        /// What the test script adds to every bpm (the strap's number; 0 with `realistic`).
        public var bpmOffset: Int?
        /// `test` (the built-in 12-value script, repeated with bpm + 1 per round) or `realistic`.
        public var script: String
        /// Valid values per session (invalid ones come on top); 0 with `realistic` = endless.
        public var count: Int
        /// Seconds between notifications.
        public var interval: Double
        /// Seed of the realistic script (`--hr-seed` plus the strap's number).
        public var seed: Int
        /// The realistic script's artifacts (missed, extra, ectopic beats) per hour; 0 = none.
        public var artifacts: Double
        /// Notifications per connection before the strap disconnects (nil: never, e.g. a strap
        /// not in `--strap-drops`).
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
        /// The identity address of the strap that sent it (`C0:B1:E0:00:01:02`; nil in a
        /// script older than `--straps`).
        public var strap: String?
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
        /// The identity address of the strap that dropped the link.
        public var strap: String?
        /// Values sent in all before the disconnect (the next connection resumes there).
        public var after: Int
        /// Values sent on the connection it dropped.
        public var onConnection: Int
        /// The HCI reason (0x13, remote user terminated connection).
        public var reason: UInt8

        public init(time: Double, after: Int, onConnection: Int, reason: UInt8, strap: String? = nil) {
            self.time = time
            self.strap = strap
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
        public var bytes: [UInt8] { (try? Hex.decode(data)) ?? [] }
    }

    /// Service data: a 16-bit service UUID (4 hex digits) and payload (hex).
    public struct ServiceData: Hashable, Sendable, Decodable {
        public var uuid: String
        public var data: String
        /// The payload bytes.
        public var bytes: [UInt8] { (try? Hex.decode(data)) ?? [] }
    }

    /// The ready line; `controllers` is absent in a script older than `--ports`.
    struct ReadyLine: Decodable {
        var ready: Bool
        var transport: String
        var controllers: [ServedController]?
        var devices: [Device]
    }

    struct LogLine: Decodable {
        var value: String
    }

    /// Lab log lines carry a `kind`; the strap's heart-rate lines do not.
    struct LogKind: Decodable {
        var kind: String?
    }

    /// A strap log line with every field optional; `entry` types it by `kind`.
    struct StrapLogLine: Decodable {
        var kind: String?
        var strap: String?
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
                guard let value, let bytes = try? Hex.decode(value) else { throw Malformed() }
                return bytes
            }
            switch kind {
            case nil:
                return .sent(SentHeartRateValue(time: time, strap: strap, bytes: try bytes(), position: position,
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
}

/// A value the lab logged as hex (a completed write, a stream value): its bytes.
public protocol HexLoggedValue {
    /// The value, hex.
    var value: String { get }
}

extension HexLoggedValue {
    /// The value's bytes (empty should the lab ever log a malformed value).
    public var bytes: [UInt8] { (try? Hex.decode(value)) ?? [] }
}
