// TEMPORARY, not committed
public struct HeartRateDeviceInfo: Hashable, Sendable { public var name: String?; public var manufacturer: String?; public var model: String?; public var batteryLevel: Int?; public var bodySensorLocation: BodySensorLocation? }
public enum HeartRateEvent: Sendable { case measurement(HeartRateMeasurement, raw: [UInt8]); case invalid(raw: [UInt8], error: WireError) }
public actor HeartRateMonitor {
    public static func attach(to gatt: GATTClient) async throws(HeartRateError) -> HeartRateMonitor { fatalError() }
    public func deviceInfo() async -> HeartRateDeviceInfo { fatalError() }
    public func measurements() async throws(HeartRateError) -> AsyncThrowingStream<HeartRateEvent, any Error> { fatalError() }
    public func resetEnergyExpended() async throws(HeartRateError) {}
    public func unsubscribe() async {}
}
public enum HeartRateError: Error, Hashable, Sendable, CustomStringConvertible {
    case noHeartRateService, noMeasurementCharacteristic, subscriptionRefused(ATTError), controlPointMissing, controlPoint(ATTError), gatt(GATTError)
    public var description: String { "" }
}
public struct ArrivalRate: Sendable { public init(window: Duration = .seconds(5)) {}; public mutating func record(at instant: ContinuousClock.Instant) {}; public var perSecond: Double? { nil } }
