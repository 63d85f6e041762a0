import Logging
import RawbleGATT
import RawbleGATTCore
import RawbleWire

/// What a strap says about itself (each field nil when absent or unreadable).
public struct HeartRateDeviceInfo: Hashable, Sendable {
    /// GAP Device Name (0x2A00).
    public var name: String?
    /// Device Information Manufacturer Name String (0x2A29).
    public var manufacturer: String?
    /// Device Information Model Number String (0x2A24).
    public var model: String?
    /// Battery Level (0x2A19), 0–100 %; nil for a value over 100 or not one byte.
    public var batteryLevel: Int?
    /// Body Sensor Location (0x2A38); a value the specification does not define keeps its
    /// number (`BodySensorLocation.isKnown` is false).
    public var bodySensorLocation: BodySensorLocation?

    public init(name: String? = nil, manufacturer: String? = nil, model: String? = nil,
                batteryLevel: Int? = nil, bodySensorLocation: BodySensorLocation? = nil) {
        self.name = name
        self.manufacturer = manufacturer
        self.model = model
        self.batteryLevel = batteryLevel
        self.bodySensorLocation = bodySensorLocation
    }
}

/// One notification of the Heart Rate Measurement characteristic: decoded, or why not.
public enum HeartRateEvent: Sendable {
    /// A value the shared decoder accepted, with the bytes as received.
    case measurement(HeartRateMeasurement, raw: [UInt8])
    /// A value that does not decode (empty, fields the flags announce but the value lacks,
    /// trailing bytes …): the bytes and the decoder's error. The stream goes on after it.
    case invalid(raw: [UInt8], error: WireError)

    /// Decodes one notified value with the wire layer's decoder (error offsets count from the
    /// value's first byte).
    public init(value: some Collection<UInt8>) {
        let raw = Array(value)
        do {
            self = .measurement(try HeartRateMeasurement.decode(raw), raw: raw)
        } catch {
            self = .invalid(raw: raw, error: error)
        }
    }
}

/// The Heart Rate profile's client on one device: measurements as an async stream, device
/// information, energy reset. Built only on `GATTClient`, so it works over any ATT bearer.
///
/// ```swift
/// let monitor = try await HeartRateMonitor.attach(to: gatt)
/// print(await monitor.deviceInfo())
/// for try await event in try await monitor.measurements() { … }
/// ```
public actor HeartRateMonitor {
    /// The GATT client underneath.
    public nonisolated let gatt: GATTClient
    /// The Heart Rate service found by ``attach(to:logger:)``.
    public nonisolated let service: GATTService
    /// The Heart Rate Measurement characteristic (notify).
    public nonisolated let measurementCharacteristic: GATTCharacteristic
    /// The Body Sensor Location characteristic, when the service has one.
    public nonisolated let bodySensorLocationCharacteristic: GATTCharacteristic?
    /// The Heart Rate Control Point characteristic, when the service has one.
    public nonisolated let controlPointCharacteristic: GATTCharacteristic?
    private let logger: Logger

    /// The live measurement stream, if any, and the subscription that feeds it.
    private struct Live {
        let id: UInt64
        let subscription: GATTUpdateHandler
        let channel: HeartRateEventChannel
    }
    private var live: Live?
    private var nextID: UInt64 = 0

    /// Notified values buffered for a slow consumer before the oldest are dropped.
    public static let bufferLimit = 4096

    private init(gatt: GATTClient, service: GATTService, measurement: GATTCharacteristic,
                 bodySensorLocation: GATTCharacteristic?, controlPoint: GATTCharacteristic?, logger: Logger) {
        self.gatt = gatt
        self.service = service
        self.measurementCharacteristic = measurement
        self.bodySensorLocationCharacteristic = bodySensorLocation
        self.controlPointCharacteristic = controlPoint
        self.logger = logger
    }

    /// Finds the Heart Rate service and its characteristics on `gatt` with minimal discovery:
    /// Find By Type Value for 0x180D, its characteristics (Read By Type), the Heart Rate
    /// Measurement's descriptors (Find Information). The MTU is the caller's business (the
    /// profile's values fit the default 23 bytes; call `gatt.exchangeMTU()` first for more).
    public static func attach(to gatt: GATTClient, logger: Logger = Logger(label: "rawble.hr"))
        async throws(HeartRateError) -> HeartRateMonitor
    {
        do {
            guard let service = try await gatt.services(withUUID: .heartRateService).first else {
                throw HeartRateError.noHeartRateService
            }
            let characteristics = try await gatt.characteristics(of: service)
            guard let measurement = characteristics.first(where: { $0.uuid == .heartRateMeasurement }) else {
                throw HeartRateError.noMeasurementCharacteristic
            }
            // Cached by the client: measurements() then costs only the CCCD write.
            _ = try await gatt.descriptors(of: measurement)
            return HeartRateMonitor(
                gatt: gatt, service: service, measurement: measurement,
                bodySensorLocation: characteristics.first { $0.uuid == .bodySensorLocation },
                controlPoint: characteristics.first { $0.uuid == .heartRateControlPoint },
                logger: logger)
        } catch {
            throw HeartRateError(error)
        }
    }

    // MARK: Device information

    /// Reads GAP Device Name, DIS Manufacturer and Model, Battery Level (each one Read By
    /// Type over every handle, no discovery) and Body Sensor Location (a Read); a missing or
    /// refused one is nil, never an error.
    public func deviceInfo() async -> HeartRateDeviceInfo {
        var info = HeartRateDeviceInfo()
        info.name = await readValue(StandardCharacteristic.deviceName).map(Self.text)
        info.manufacturer = await readValue(StandardCharacteristic.manufacturerName).map(Self.text)
        info.model = await readValue(StandardCharacteristic.modelNumber).map(Self.text)
        if let battery = await readValue(StandardCharacteristic.batteryLevel), battery.count == 1,
           let level = battery.first, level <= 100 {
            info.batteryLevel = Int(level)
        }
        if let characteristic = bodySensorLocationCharacteristic {
            do {
                info.bodySensorLocation = try BodySensorLocation.decode(try await gatt.read(characteristic)[...])
            } catch {
                logger.debug("Body Sensor Location unreadable: \(error)")
            }
        }
        return info
    }

    /// The first value of the characteristic with `uuid` anywhere on the device (Read Using
    /// Characteristic UUID, one request; a value that may have been cut is read again whole),
    /// or nil when there is none or the device refuses.
    private func readValue(_ uuid: BluetoothUUID) async -> [UInt8]? {
        do {
            let response = try await gatt.att.transact(.readByTypeRequest(startHandle: 0x0001, endHandle: 0xFFFF, attributeType: uuid))
            switch response {
            case .readByTypeResponse(let entries):
                guard let first = entries.first, first.handle != 0 else { return nil }
                let mtu = await gatt.mtu
                // The server cuts a value at ATT_MTU − 4 bytes: read a full-length one whole.
                if first.value.count >= Int(mtu) - 4 {
                    return try await gatt.read(handle: first.handle)
                }
                return Array(first.value)
            case .errorResponse(_, _, let code):
                logger.debug("\(uuid.name ?? uuid.description): \(code)")
                return nil
            default:
                logger.debug("\(uuid.name ?? uuid.description): unexpected \(response.opcode)")
                return nil
            }
        } catch {
            logger.debug("\(uuid.name ?? uuid.description) unreadable: \(error)")
            return nil
        }
    }

    /// A UTF-8 string characteristic as text: invalid sequences replaced, trailing NULs (which
    /// some devices pad with) dropped.
    private static func text(_ bytes: [UInt8]) -> String {
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes[end - 1] == 0 { end -= 1 }
        return String(decoding: bytes[..<end], as: UTF8.self)
    }

    // MARK: Measurements

    /// Subscribes to Heart Rate Measurement notifications (handler registered before the CCCD
    /// write) and yields every value decoded with the shared decoder; a value that does not
    /// decode is `.invalid` and the stream goes on. The stream ends throwing a
    /// ``HeartRateError`` when the link ends; terminating it unsubscribes (best effort).
    /// A second call replaces the first stream (which finishes).
    ///
    /// Each value is decoded where the bearer delivers it (for rawble's own host, on the
    /// thread that read it) and goes straight into the stream: no task in between, so a
    /// consumer wakes once per value, or not at all when it runs on the host's loop.
    public func measurements() async throws(HeartRateError) -> HeartRateEvents {
        let channel = HeartRateEventChannel(limit: Self.bufferLimit)
        let subscription: GATTUpdateHandler
        do {
            subscription = try await gatt.subscribe(
                to: measurementCharacteristic,
                onUpdate: { update in channel.yield(HeartRateEvent(value: update.value)) },
                onEnd: { error in channel.finish(throwing: HeartRateError.gatt(error)) })
        } catch {
            channel.finish()
            if case .att(let refusal) = error { throw .subscriptionRefused(refusal) }
            throw .gatt(error)
        }
        nextID &+= 1
        let id = nextID
        let previous = live
        live = Live(id: id, subscription: subscription, channel: channel)
        channel.onCancel { [weak self] in
            Task { await self?.streamCancelled(id) }
        }
        if let previous {
            await previous.subscription.stop()
            previous.channel.finish()
        }
        return HeartRateEvents(channel: channel)
    }

    /// The consumer stopped listening: stop the server sending (best effort).
    private func streamCancelled(_ id: UInt64) async {
        guard let current = live, current.id == id else { return }
        live = nil
        do {
            try await current.subscription.cancel()
        } catch {
            logger.debug("unsubscribing from Heart Rate Measurement failed: \(error)")
        }
    }

    /// Ends the measurement stream (it finishes normally) and writes 0 to the CCCD so the
    /// device stops sending (best effort: a refusal or a dead link is only logged).
    public func unsubscribe() async {
        guard let current = live else { return }
        live = nil
        current.channel.finish()
        do {
            try await current.subscription.cancel()
        } catch {
            logger.debug("unsubscribing from Heart Rate Measurement failed: \(error)")
        }
    }

    // MARK: Control point

    /// Writes 0x01 (Reset Energy Expended) to the Heart Rate Control Point with a Write
    /// Request; returns when the device accepted it.
    /// - Throws: ``HeartRateError/controlPointMissing``, ``HeartRateError/controlPoint(_:)``
    ///   when the device refuses (e.g. 0x80 Control Point Not Supported), else `.gatt`.
    public func resetEnergyExpended() async throws(HeartRateError) {
        guard let controlPoint = controlPointCharacteristic else { throw .controlPointMissing }
        do {
            try await gatt.write([HeartRateControlPoint.resetEnergyExpended.rawValue], to: controlPoint)
        } catch {
            if case .att(let refusal) = error { throw .controlPoint(refusal) }
            throw .gatt(error)
        }
    }
}

/// Characteristics outside the Heart Rate service that the profile reads.
enum StandardCharacteristic {
    static let deviceName = BluetoothUUID(0x2A00)
    static let manufacturerName = BluetoothUUID(0x2A29)
    static let modelNumber = BluetoothUUID(0x2A24)
    static let batteryLevel = BluetoothUUID(0x2A19)
}
