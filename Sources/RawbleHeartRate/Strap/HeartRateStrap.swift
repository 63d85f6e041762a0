import RawbleGATT
import RawbleGATTCore
import RawbleWire
import Synchronization

/// A simulated Heart Rate strap on rawble's GATT server: the Heart Rate service (measurement
/// notifications from a ``SimulatedWorkout``, Body Sensor Location, the Control Point's Reset
/// Energy Expended), Device Information and Battery. Serve each central's bearer on ``server``
/// and call ``run(rate:clock:sent:)``; what centrals do arrives on the server's `events`.
public actor HeartRateStrap {
    /// What the strap says about itself.
    public struct Identity: Sendable {
        /// The GAP device name (and the name a peripheral would advertise).
        public var name: String
        public var manufacturer: String
        public var model: String
        public var bodySensorLocation: BodySensorLocation
        /// Battery level, percent.
        public var batteryLevel: UInt8

        public init(name: String = "rawble-hr", manufacturer: String = "rawble", model: String = "peripheral hr",
                    bodySensorLocation: BodySensorLocation = .chest, batteryLevel: UInt8 = 100) {
            self.name = name
            self.manufacturer = manufacturer
            self.model = model
            self.bodySensorLocation = bodySensorLocation
            self.batteryLevel = batteryLevel
        }
    }

    /// The GATT server centrals talk to.
    public nonisolated let server: GATTServer
    /// The Heart Rate Measurement's value handle.
    public nonisolated let measurementHandle: UInt16
    private var workout: SimulatedWorkout
    private let resets: ResetRequests

    /// A strap with `identity`, whose workout is seeded with `seed` and makes `artifactsPerHour`
    /// artifacts (missed, extra, ectopic beats) an hour on average; 0 for a clean RR series.
    public init(identity: Identity = Identity(), seed: UInt64 = 1,
                artifactsPerHour: Double = SimulatedWorkout.defaultArtifactsPerHour) throws(GATTDefinitionError) {
        let database = try Self.database(identity)
        let resets = ResetRequests()
        let controlPoint = database.valueHandle(of: .heartRateControlPoint)
        server = GATTServer(database: database, writeHandler: { write in
            guard write.handle == controlPoint else { return .accept }
            // Reset Energy Expended is the only command; anything else is the profile's
            // Control Point Not Supported (0x80).
            guard write.value == [HeartRateControlPoint.resetEnergyExpended.rawValue] else {
                return .reject(ATTErrorCode(HeartRateControlPoint.valueNotSupportedError))
            }
            resets.request()
            return .accept
        })
        measurementHandle = database.valueHandle(of: .heartRateMeasurement) ?? 0
        workout = SimulatedWorkout(seed: seed, artifactsPerHour: artifactsPerHour)
        self.resets = resets
    }

    /// The strap's database: Heart Rate, Device Information and Battery, after GAP and GATT.
    public static func database(_ identity: Identity) throws(GATTDefinitionError) -> GATTServerDatabase {
        try GATTServerDatabase(deviceName: identity.name, appearance: .heartRateBelt, services: [
            .primary(.heartRateService, characteristics: [
                GATTCharacteristicDefinition(.heartRateMeasurement, properties: [.notify]),
                GATTCharacteristicDefinition(.bodySensorLocation, properties: [.read],
                                             value: .fixed([identity.bodySensorLocation.rawValue])),
                GATTCharacteristicDefinition(.heartRateControlPoint, properties: [.write], value: .provided),
            ]),
            .primary(.deviceInformationService, characteristics: [
                GATTCharacteristicDefinition(.manufacturerNameString, properties: [.read],
                                             value: .fixed(Array(identity.manufacturer.utf8))),
                GATTCharacteristicDefinition(.modelNumberString, properties: [.read],
                                             value: .fixed(Array(identity.model.utf8))),
            ]),
            .primary(.batteryService, characteristics: [
                GATTCharacteristicDefinition(.batteryLevel, properties: [.read, .notify],
                                             value: .fixed([min(identity.batteryLevel, 100)]),
                                             presentationFormat: GATTPresentationFormat(format: 0x04, unit: 0x27AD)),
            ]),
        ])
    }

    /// Energy expended so far, kilojoules (what the next value with energy will say).
    public var energyExpended: UInt16 { workout.energyExpended }

    /// Makes the next value, covering `seconds` of the session, and notifies it to every
    /// central that subscribed, sized to the smallest of their MTUs. Returns the value, or
    /// `nil` when nobody subscribed (the session still moves on), and the connections it could
    /// not be sent to.
    @discardableResult
    public func beat(covering seconds: Double) async -> (value: HeartRateMeasurement?, failed: [GATTConnectionID: GATTServerError]) {
        if resets.take() { workout.resetEnergyExpended() }
        var room = Int.max
        let subscribers = await server.subscribers(of: measurementHandle, for: .notify)
        for id in subscribers {
            if let mtu = await server.mtu(of: id) { room = min(room, Int(mtu) - 3) }
        }
        guard !subscribers.isEmpty else {
            _ = workout.next(covering: seconds)
            return (nil, [:])
        }
        let value = workout.next(covering: seconds, maximumLength: room)
        var writer = ByteWriter()
        value.encode(into: &writer)
        let failed = await server.notify(writer.bytes, for: measurementHandle)
        return (value, failed)
    }

    /// Sends `rate` values a second until the task is cancelled, each covering the time since
    /// the previous one; `sent` is called with each value sent. Ticks are timed on `clock`: a
    /// clock of the link's event loop (RawbleHCITransport's `EventLoopClock`) wakes the sender on
    /// the thread that sends, the cheapest way to pace a fast strap.
    public func run<C: Clock<Duration>>(rate: Double, clock: C = ContinuousClock(),
                                        sent: @Sendable (HeartRateMeasurement) async -> Void = { _ in }) async {
        let interval = Duration.seconds(1 / max(rate, 0.001))
        var previous = clock.now
        var next = previous.advanced(by: interval)
        while !Task.isCancelled {
            do {
                try await clock.sleep(until: next, tolerance: nil)
            } catch {
                return
            }
            let now = clock.now
            let covered = previous.duration(to: now)
            previous = now
            next = next.advanced(by: interval)
            if next < now { next = now.advanced(by: interval) } // fell behind (a stalled machine): no burst
            let seconds = Double(covered.components.seconds) + Double(covered.components.attoseconds) / 1e18
            if let value = await beat(covering: seconds).value { await sent(value) }
        }
    }
}

/// Reset Energy Expended requests from the write handler, taken by the next beat.
private final class ResetRequests: Sendable {
    private let pending = Atomic<Bool>(false)

    func request() { pending.store(true, ordering: .relaxed) }

    func take() -> Bool { pending.exchange(false, ordering: .relaxed) }
}
