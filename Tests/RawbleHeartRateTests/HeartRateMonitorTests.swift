@testable import RawbleHeartRate
import RawbleBearer
import RawbleGATT
import RawbleGATTCore
import RawbleTestSupport
import RawbleWire
import Testing

// Byte-stream tests of the Heart Rate profile against a scripted strap: the exact PDUs the
// monitor must send and what the strap answers, hostile values included.
//
// The strap's Heart Rate service (handles 0x0010–0x0017):
//   0x0011 declaration, 0x0012 Heart Rate Measurement (notify), 0x0013 its CCCD
//   0x0014 declaration, 0x0015 Body Sensor Location (read)
//   0x0016 declaration, 0x0017 Heart Rate Control Point (write)

/// The error `operation` throws, or nil when it returns.
private func failure(_ operation: () async throws(HeartRateError) -> Void) async -> HeartRateError? {
    do {
        try await operation()
        return nil
    } catch {
        return error
    }
}

/// The PDUs of the minimal discovery, in order.
enum StrapScript {
    /// Find By Type Value: «Primary Service» = 0x180D over every handle.
    static let findHeartRateService: [UInt8] = [0x06, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x0D, 0x18]
    static let heartRateServiceFound: [UInt8] = [0x07, 0x10, 0x00, 0x17, 0x00]
    /// The same after the service's end, answered Attribute Not Found.
    static let findMoreHeartRateServices: [UInt8] = [0x06, 0x18, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x0D, 0x18]
    static let noMoreServices: [UInt8] = [0x01, 0x06, 0x18, 0x00, 0x0A]
    /// Read By Type «Characteristic» over the service.
    static let readCharacteristics: [UInt8] = [0x08, 0x10, 0x00, 0x17, 0x00, 0x03, 0x28]
    static let measurementDeclaration: [UInt8] = [0x11, 0x00, 0x10, 0x12, 0x00, 0x37, 0x2A]
    static let bodySensorLocationDeclaration: [UInt8] = [0x14, 0x00, 0x02, 0x15, 0x00, 0x38, 0x2A]
    static let controlPointDeclaration: [UInt8] = [0x16, 0x00, 0x08, 0x17, 0x00, 0x39, 0x2A]
    static let threeCharacteristics: [UInt8] =
        [0x09, 0x07] + measurementDeclaration + bodySensorLocationDeclaration + controlPointDeclaration
    /// Find Information over the measurement's descriptor handle: one CCCD.
    static let findMeasurementDescriptors: [UInt8] = [0x04, 0x13, 0x00, 0x13, 0x00]
    static let measurementCCCD: [UInt8] = [0x05, 0x01, 0x13, 0x00, 0x02, 0x29]
    /// Write Request 0x0001 to the CCCD (notifications on), and 0x0000 (off).
    static let enableNotifications: [UInt8] = [0x12, 0x13, 0x00, 0x01, 0x00]
    static let disableNotifications: [UInt8] = [0x12, 0x13, 0x00, 0x00, 0x00]
    static let writeResponse: [UInt8] = [0x13]

    /// Read By Type of `uuid16` over every handle (Read Using Characteristic UUID).
    static func readByType(_ uuid16: UInt16) -> [UInt8] {
        [0x08, 0x01, 0x00, 0xFF, 0xFF, UInt8(uuid16 & 0xFF), UInt8(uuid16 >> 8)]
    }
    /// A Read By Type Response with one handle–value pair.
    static func value(_ bytes: [UInt8], at handle: UInt16) -> [UInt8] {
        [0x09, UInt8(2 + bytes.count), UInt8(handle & 0xFF), UInt8(handle >> 8)] + bytes
    }
    /// An Error Response to a Read By Type Request.
    static func readByTypeError(_ code: UInt8) -> [UInt8] { [0x01, 0x08, 0x01, 0x00, code] }
    /// A notification of the Heart Rate Measurement.
    static func notification(_ value: [UInt8]) -> [UInt8] { [0x1B, 0x12, 0x00] + value }

    /// Scripts `attach` on a strap whose Heart Rate service holds only the measurement, with
    /// `properties`: the characteristic runs to the service's end, so both walks go on to
    /// Attribute Not Found (six requests).
    static func expectAttachOfMeasurementOnly(on bearer: ScriptedATTBearer, properties: UInt8) {
        bearer.expect(findHeartRateService, reply: [heartRateServiceFound])
        bearer.expect(findMoreHeartRateServices, reply: [noMoreServices])
        bearer.expect(readCharacteristics, reply: [[0x09, 0x07, 0x11, 0x00, properties, 0x12, 0x00, 0x37, 0x2A]])
        bearer.expect([0x08, 0x12, 0x00, 0x17, 0x00, 0x03, 0x28], reply: [[0x01, 0x08, 0x12, 0x00, 0x0A]])
        bearer.expect([0x04, 0x13, 0x00, 0x17, 0x00], reply: [measurementCCCD])
        bearer.expect([0x04, 0x14, 0x00, 0x17, 0x00], reply: [[0x01, 0x04, 0x14, 0x00, 0x0A]])
    }

    /// Scripts the four requests of `attach` on the typical strap.
    static func expectAttach(on bearer: ScriptedATTBearer, characteristics: [UInt8] = threeCharacteristics) {
        bearer.expect(findHeartRateService, reply: [heartRateServiceFound])
        bearer.expect(findMoreHeartRateServices, reply: [noMoreServices])
        bearer.expect(readCharacteristics, reply: [characteristics])
        bearer.expect(findMeasurementDescriptors, reply: [measurementCCCD])
    }
}

/// A monitor attached to the typical strap through the scripted discovery.
private func attachedStrap() async throws -> (ScriptedATTBearer, HeartRateMonitor) {
    let bearer = ScriptedATTBearer()
    StrapScript.expectAttach(on: bearer)
    let monitor = try await within { try await HeartRateMonitor.attach(to: GATTClient(bearer: bearer)) }
    return (bearer, monitor)
}

/// The first `count` events of `stream` (bounded wait).
private func take(_ count: Int, from stream: HeartRateEvents) async throws -> [HeartRateEvent] {
    try await within {
        var events: [HeartRateEvent] = []
        for try await event in stream {
            events.append(event)
            if events.count == count { break }
        }
        return events
    }
}

/// How many events `stream` gives until it finishes (it throws if the stream does).
private func count(_ stream: HeartRateEvents) async throws -> Int {
    var count = 0
    for try await _ in stream { count += 1 }
    return count
}

extension HeartRateEvent {
    var measurement: HeartRateMeasurement? {
        if case .measurement(let measurement, _) = self { measurement } else { nil }
    }
    var decodeError: WireError? {
        if case .invalid(_, let error) = self { error } else { nil }
    }
    var raw: [UInt8] {
        switch self {
        case .measurement(_, let raw), .invalid(let raw, _): raw
        }
    }
}

@Suite("Heart Rate monitor: attach")
struct HeartRateAttachTests {
    @Test func attachDiscoversWithFourRequestsAndFindsTheThreeCharacteristics() async throws {
        let (bearer, monitor) = try await attachedStrap()
        #expect(bearer.sentPDUs == [
            StrapScript.findHeartRateService, StrapScript.findMoreHeartRateServices,
            StrapScript.readCharacteristics, StrapScript.findMeasurementDescriptors,
        ])
        #expect(bearer.unexpectedPDUs.isEmpty)
        #expect(monitor.service.startHandle == 0x0010 && monitor.service.endHandle == 0x0017)
        #expect(monitor.measurementCharacteristic.valueHandle == 0x0012)
        #expect(monitor.bodySensorLocationCharacteristic?.valueHandle == 0x0015)
        #expect(monitor.controlPointCharacteristic?.valueHandle == 0x0017)
    }

    @Test func aDeviceWithoutTheHeartRateServiceIsReportedAsSuch() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect(StrapScript.findHeartRateService, reply: [[0x01, 0x06, 0x01, 0x00, 0x0A]])
        let result = try await within { () async -> HeartRateError? in
            await failure { () async throws(HeartRateError) in _ = try await HeartRateMonitor.attach(to: GATTClient(bearer: bearer)) }
        }
        guard let error = result else { Issue.record("attached to a device with no 0x180D"); return }
        #expect(error == .noHeartRateService)
        #expect(error.description.contains("0x180D"))
        #expect(bearer.sentPDUs == [StrapScript.findHeartRateService])
    }

    @Test func aHeartRateServiceWithoutTheMeasurementIsReportedAsSuch() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect(StrapScript.findHeartRateService, reply: [StrapScript.heartRateServiceFound])
        bearer.expect(StrapScript.findMoreHeartRateServices, reply: [StrapScript.noMoreServices])
        // Only Body Sensor Location and Control Point.
        bearer.expect(StrapScript.readCharacteristics, reply: [
            [0x09, 0x07] + StrapScript.bodySensorLocationDeclaration + StrapScript.controlPointDeclaration,
        ])
        let result = try await within { () async -> HeartRateError? in
            await failure { () async throws(HeartRateError) in _ = try await HeartRateMonitor.attach(to: GATTClient(bearer: bearer)) }
        }
        #expect(result == .noMeasurementCharacteristic)
    }

    @Test func aLinkThatDropsDuringDiscoveryIsAGATTError() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect(StrapScript.findHeartRateService, reply: [])
        let gatt = GATTClient(bearer: bearer)
        let attaching = Task { () async -> HeartRateError? in
            await failure { () async throws(HeartRateError) in _ = try await HeartRateMonitor.attach(to: gatt) }
        }
        #expect(await eventually { bearer.sentPDUs.count == 1 })
        bearer.end(with: .disconnected(reason: "supervision timeout"))
        let error = try await within { await attaching.value }
        #expect(error == HeartRateError.gatt(.bearer(.disconnected(reason: "supervision timeout"))))
    }

    @Test func anErrorOtherThanNotFoundDuringDiscoveryIsAGATTError() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect(StrapScript.findHeartRateService, reply: [[0x01, 0x06, 0x01, 0x00, 0x05]])
        let result = try await within { () async -> HeartRateError? in
            await failure { () async throws(HeartRateError) in _ = try await HeartRateMonitor.attach(to: GATTClient(bearer: bearer)) }
        }
        #expect(result == .gatt(.att(ATTError(code: .insufficientAuthentication, requestOpcode: .findByTypeValueRequest, handle: 1))))
    }
}

@Suite("Heart Rate monitor: device information")
struct HeartRateDeviceInfoTests {
    @Test func deviceInfoReadsEachValueWithOneRequestAndMissingOrRefusedOnesAreNil() async throws {
        let (bearer, monitor) = try await attachedStrap()
        let sentBefore = bearer.sentPDUs.count
        bearer.expect(StrapScript.readByType(0x2A00), reply: [StrapScript.value(Array("Polar H10".utf8), at: 0x0003)])
        bearer.expect(StrapScript.readByType(0x2A29), reply: [StrapScript.readByTypeError(0x0A)])  // no DIS
        bearer.expect(StrapScript.readByType(0x2A24), reply: [StrapScript.readByTypeError(0x05)])  // refused
        bearer.expect(StrapScript.readByType(0x2A19), reply: [StrapScript.value([0x55], at: 0x0021)])
        bearer.expect([0x0A, 0x15, 0x00], reply: [[0x0B, 0x01]])
        let info = try await within { await monitor.deviceInfo() }
        #expect(info == HeartRateDeviceInfo(name: "Polar H10", manufacturer: nil, model: nil, batteryLevel: 85, bodySensorLocation: .chest))
        #expect(bearer.sentPDUs.count - sentBefore == 5)
        #expect(bearer.unexpectedPDUs.isEmpty)
        #expect(bearer.remainingExpectations == 0)
    }

    @Test func aBodySensorLocationOutOfRangeKeepsItsNumber() async throws {
        let (bearer, monitor) = try await attachedStrap()
        for uuid: UInt16 in [0x2A00, 0x2A29, 0x2A24, 0x2A19] {
            bearer.expect(StrapScript.readByType(uuid), reply: [StrapScript.readByTypeError(0x0A)])
        }
        bearer.expect([0x0A, 0x15, 0x00], reply: [[0x0B, 0x09]])
        let info = try await within { await monitor.deviceInfo() }
        #expect(info.bodySensorLocation?.rawValue == 9)
        #expect(info.bodySensorLocation?.isKnown == false)
        #expect(info.bodySensorLocation?.description == "9")
        #expect(info.name == nil && info.batteryLevel == nil)
    }

    @Test func malformedValuesAreNilNotErrors() async throws {
        let (bearer, monitor) = try await attachedStrap()
        bearer.expect(StrapScript.readByType(0x2A00), reply: [StrapScript.value([0x48, 0x52, 0xFF, 0x00, 0x00], at: 0x0003)])
        bearer.expect(StrapScript.readByType(0x2A29), reply: [StrapScript.value(Array("ACME".utf8), at: 0x0031)])
        bearer.expect(StrapScript.readByType(0x2A24), reply: [[0x09, 0x05, 0x40, 0x00]])  // a malformed response
        bearer.expect(StrapScript.readByType(0x2A19), reply: [StrapScript.value([101], at: 0x0021)])  // over 100 %
        bearer.expect([0x0A, 0x15, 0x00], reply: [[0x0B, 0x01, 0x02]])  // two bytes
        let info = try await within { await monitor.deviceInfo() }
        // Invalid UTF-8 replaced, trailing NUL padding dropped.
        #expect(info.name == "HR\u{FFFD}")
        #expect(info.manufacturer == "ACME")
        #expect(info.model == nil)
        #expect(info.batteryLevel == nil)
        #expect(info.bodySensorLocation == nil)
    }

    @Test func aNameTheServerCutIsReadAgainWhole() async throws {
        let (bearer, monitor) = try await attachedStrap()
        let name = Array("Heart Rate Strap With A Long Name".utf8)  // 33 bytes
        // Read By Type carries at most ATT_MTU − 4 = 19 bytes; Read 22, then Read Blob the rest.
        bearer.expect(StrapScript.readByType(0x2A00), reply: [StrapScript.value(Array(name[..<19]), at: 0x0003)])
        bearer.expect([0x0A, 0x03, 0x00], reply: [[0x0B] + Array(name[..<22])])
        bearer.expect([0x0C, 0x03, 0x00, 0x16, 0x00], reply: [[0x0D] + Array(name[22...])])
        for uuid: UInt16 in [0x2A29, 0x2A24, 0x2A19] {
            bearer.expect(StrapScript.readByType(uuid), reply: [StrapScript.readByTypeError(0x0A)])
        }
        bearer.expect([0x0A, 0x15, 0x00], reply: [[0x01, 0x0A, 0x15, 0x00, 0x02]])  // read not permitted
        let info = try await within { await monitor.deviceInfo() }
        #expect(info.name == String(decoding: name, as: UTF8.self))
        #expect(info.bodySensorLocation == nil)
        #expect(bearer.unexpectedPDUs.isEmpty)
    }

    @Test func aDeadLinkGivesAnEmptyInfoAtOnce() async throws {
        let (bearer, monitor) = try await attachedStrap()
        bearer.end(with: .disconnected(reason: "gone"))
        let info = try await within { await monitor.deviceInfo() }
        #expect(info == HeartRateDeviceInfo())
    }
}

@Suite("Heart Rate monitor: measurements")
struct HeartRateMeasurementTests {
    @Test func measurementsWritesTheCCCDOnceAndDecodesEveryNotification() async throws {
        let (bearer, monitor) = try await attachedStrap()
        bearer.expect(StrapScript.enableNotifications, reply: [StrapScript.writeResponse])
        let stream = try await within { try await monitor.measurements() }
        #expect(bearer.sentPDUs.last == StrapScript.enableNotifications)
        #expect(bearer.sentPDUs.count == 5)  // attach's four and the CCCD write
        bearer.inject(StrapScript.notification([0x06, 0x5A]))
        // u16 rate, energy 16 kJ, one RR of 1024/1024 s.
        bearer.inject(StrapScript.notification([0x19, 0x2C, 0x01, 0x10, 0x00, 0x00, 0x04]))
        let events = try await take(2, from: stream)
        #expect(events[0].measurement?.bpm == 90)
        #expect(events[0].measurement?.contact == .detected)
        #expect(events[0].raw == [0x06, 0x5A])
        #expect(events[1].measurement?.bpm == 300)
        #expect(events[1].measurement?.energyExpended == 16)
        #expect(events[1].measurement?.rrIntervals.map(\.seconds) == [1.0])
    }

    @Test func valuesThatDoNotDecodeAreInvalidAndTheStreamGoesOn() async throws {
        let (bearer, monitor) = try await attachedStrap()
        bearer.expect(StrapScript.enableNotifications, reply: [StrapScript.writeResponse])
        let stream = try await within { try await monitor.measurements() }
        let values: [[UInt8]] = [
            [],  // zero-length
            [0x01, 0x5A],  // u16 rate announced, one byte there
            [0x08, 0x5A, 0x10],  // energy announced, one byte there
            [0x10, 0x5A],  // RR announced, none there
            [0x10, 0x5A, 0x00, 0x04, 0x01],  // an odd RR byte
            [0x00, 0x5A, 0x00],  // a byte after the last field
            [0x06, 0x48],  // valid again
        ]
        for value in values { bearer.inject(StrapScript.notification(value)) }
        let events = try await take(values.count, from: stream)
        #expect(events.map(\.raw) == values)
        for event in events.dropLast() {
            #expect(event.measurement == nil)
            #expect(event.decodeError != nil)
        }
        #expect(events[0].decodeError?.kind == .truncated(needed: 1, available: 0))
        #expect(events[0].decodeError?.offset == 0)
        #expect(events[1].decodeError?.kind == .truncated(needed: 2, available: 1))
        #expect(events[1].decodeError?.offset == 1)  // counted from the value, not the PDU
        #expect(events[2].decodeError?.context.contains("Energy Expended") == true)
        #expect(events[5].decodeError?.kind == .trailingBytes(count: 1))
        #expect(events[6].measurement?.bpm == 72)
    }

    @Test func reservedFlagBitsAndFlagCombinationsDecodeFieldsInSpecOrder() async throws {
        let (bearer, monitor) = try await attachedStrap()
        bearer.expect(StrapScript.enableNotifications, reply: [StrapScript.writeResponse])
        let stream = try await within { try await monitor.measurements() }
        // Reserved bits 5–7 set: ignored. RR without energy; energy without RR.
        bearer.inject(StrapScript.notification([0xE0, 0x3C]))
        bearer.inject(StrapScript.notification([0x10, 0x3C, 0x00, 0x02, 0x00, 0x03]))
        bearer.inject(StrapScript.notification([0x08, 0x3C, 0xFF, 0xFF]))
        let events = try await take(3, from: stream)
        #expect(events[0].measurement?.bpm == 60)
        #expect(events[1].measurement?.energyExpended == nil)
        #expect(events[1].measurement?.rrIntervals.map(\.rawValue) == [0x0200, 0x0300])
        #expect(events[2].measurement?.energyExpended == 0xFFFF)
        #expect(events[2].measurement?.rrIntervals.isEmpty == true)
    }

    @Test func notificationsOfOtherHandlesAreNotMeasurements() async throws {
        let (bearer, monitor) = try await attachedStrap()
        bearer.expect(StrapScript.enableNotifications, reply: [StrapScript.writeResponse])
        let stream = try await within { try await monitor.measurements() }
        bearer.inject([0x1B, 0x15, 0x00, 0x06, 0x01])  // the Body Sensor Location's handle
        bearer.inject(StrapScript.notification([0x06, 0x50]))
        let events = try await take(1, from: stream)
        #expect(events.first?.measurement?.bpm == 80)
    }

    @Test func aRefusedCCCDWriteIsSubscriptionRefusedWithTheCode() async throws {
        let (bearer, monitor) = try await attachedStrap()
        bearer.expect(StrapScript.enableNotifications, reply: [[0x01, 0x12, 0x13, 0x00, 0xFD]])
        let result = try await within { () async -> HeartRateError? in
            await failure { () async throws(HeartRateError) in _ = try await monitor.measurements() }
        }
        let refusal = ATTError(code: .cccdImproperlyConfigured, requestOpcode: .writeRequest, handle: 0x0013)
        #expect(result == .subscriptionRefused(refusal))
        let line = result?.description ?? ""
        #expect(line.contains("0xFD"))
        #expect(line.contains("Improperly Configured"))
        #expect(!line.contains("\n"))
    }

    @Test func aMeasurementThatDoesNotNotifyCannotBeSubscribed() async throws {
        let bearer = ScriptedATTBearer()
        StrapScript.expectAttachOfMeasurementOnly(on: bearer, properties: 0x02)  // read, no notify
        let monitor = try await within { try await HeartRateMonitor.attach(to: GATTClient(bearer: bearer)) }
        #expect(bearer.sentPDUs.count == 6)
        let result = try await within { () async -> HeartRateError? in
            await failure { () async throws(HeartRateError) in _ = try await monitor.measurements() }
        }
        guard case .gatt(.notFound) = result else { Issue.record("got \(String(describing: result))"); return }
        #expect(bearer.sentPDUs.count == 6)  // no CCCD write
    }

    @Test func theLinkEndingEndsTheStreamWithTheBearersError() async throws {
        let (bearer, monitor) = try await attachedStrap()
        bearer.expect(StrapScript.enableNotifications, reply: [StrapScript.writeResponse])
        let stream = try await within { try await monitor.measurements() }
        bearer.inject(StrapScript.notification([0x06, 0x5A]))
        bearer.end(with: .disconnected(reason: "connection timeout"))
        let outcome = try await within { () async -> (Int, HeartRateError?) in
            var count = 0
            do {
                for try await _ in stream { count += 1 }
                return (count, nil)
            } catch {
                return (count, error as? HeartRateError)
            }
        }
        #expect(outcome.0 == 1)  // what arrived before the end is kept
        #expect(outcome.1 == .gatt(.bearer(.disconnected(reason: "connection timeout"))))
    }

    @Test func leavingTheLoopUnsubscribes() async throws {
        let (bearer, monitor) = try await attachedStrap()
        bearer.expect(StrapScript.enableNotifications, reply: [StrapScript.writeResponse])
        bearer.expect(StrapScript.disableNotifications, reply: [StrapScript.writeResponse])
        do {
            let stream = try await within { try await monitor.measurements() }
            bearer.inject(StrapScript.notification([0x06, 0x5A]))
            _ = try await take(1, from: stream)  // breaks out of the loop
        }  // and the stream is dropped
        #expect(await eventually { bearer.sentPDUs.last == StrapScript.disableNotifications })
        #expect(bearer.unexpectedPDUs.isEmpty)
    }

    @Test func unsubscribeWritesZeroAndFinishesTheStream() async throws {
        let (bearer, monitor) = try await attachedStrap()
        bearer.expect(StrapScript.enableNotifications, reply: [StrapScript.writeResponse])
        bearer.expect(StrapScript.disableNotifications, reply: [StrapScript.writeResponse])
        let stream = try await within { try await monitor.measurements() }
        let consumer = Task { try await count(stream) }
        await monitor.unsubscribe()
        #expect(try await within { try await consumer.value } == 0)
        #expect(bearer.sentPDUs.last == StrapScript.disableNotifications)
        #expect(bearer.remainingExpectations == 0)
        // Once only: a second call sends nothing.
        await monitor.unsubscribe()
        #expect(bearer.sentPDUs.count == 6)
    }

    @Test func aSecondSubscriptionReplacesTheFirstWithoutDuplicates() async throws {
        let (bearer, monitor) = try await attachedStrap()
        bearer.expect(StrapScript.enableNotifications, reply: [StrapScript.writeResponse])
        bearer.expect(StrapScript.enableNotifications, reply: [StrapScript.writeResponse])
        let first = try await within { try await monitor.measurements() }
        let second = try await within { try await monitor.measurements() }
        let firstCount = try await within { try await count(first) }
        #expect(firstCount == 0)  // finished, not thrown
        bearer.inject(StrapScript.notification([0x06, 0x41]))
        bearer.inject(StrapScript.notification([0x06, 0x42]))
        let events = try await take(2, from: second)
        #expect(events.map { $0.measurement?.bpm } == [0x41, 0x42])
        #expect(await eventually { await monitor.gatt.att.subscriptionCount == 1 })
        #expect(bearer.sentPDUs.count == 6)
    }

    @Test func aConsumerCancelledWhileWaitingGetsNilAndTheStrapIsUnsubscribed() async throws {
        let (bearer, monitor) = try await attachedStrap()
        bearer.expect(StrapScript.enableNotifications, reply: [StrapScript.writeResponse])
        bearer.expect(StrapScript.disableNotifications, reply: [StrapScript.writeResponse])
        let stream = try await within { try await monitor.measurements() }
        let consumer = Task { try await count(stream) }
        bearer.inject(StrapScript.notification([0x06, 0x5A]))
        #expect(await eventually { bearer.sentPDUs.count == 5 })
        consumer.cancel()
        #expect(try await within { try await consumer.value } <= 1)
        #expect(await eventually { bearer.sentPDUs.last == StrapScript.disableNotifications })
        #expect(await eventually { await monitor.gatt.att.subscriptionCount == 0 })
    }

    @Test func aConsumerThatFallsBehindKeepsTheNewestInOrderAndTheDropsAreCounted() async throws {
        let (bearer, monitor) = try await attachedStrap()
        bearer.expect(StrapScript.enableNotifications, reply: [StrapScript.writeResponse])
        bearer.expect([0x0A, 0x15, 0x00], reply: [[0x0B, 0x01]])  // Body Sensor Location
        let stream = try await within { try await monitor.measurements() }
        let extra = 10
        let total = HeartRateMonitor.bufferLimit + extra
        for i in 0..<total { bearer.inject(StrapScript.notification([0x00, UInt8(i % 200)])) }
        // The answer comes after the flood: once it is in, every notification was delivered.
        _ = try await within { try await monitor.gatt.att.transact(.readRequest(handle: 0x0015)) }
        #expect(await monitor.gatt.att.droppedUpdateCount == extra)
        let events = try await take(HeartRateMonitor.bufferLimit, from: stream)
        #expect(events.map { $0.measurement?.bpm } == (extra..<total).map { UInt16($0 % 200) })
    }

    @Test func aConsumerThatNeverReadsHoldsAtMostTwiceTheLimitAndGetsTheNewestInOrder() async throws {
        let limit = 16
        let channel = HeartRateEventChannel(limit: limit)
        var kept = 0
        var mostStored = 0
        for i in 0..<(limit * 100) {
            if channel.yield(HeartRateEvent(value: [0x00, UInt8(i % 200)])) { kept += 1 }
            mostStored = max(mostStored, channel.storedCount)
        }
        #expect(kept == limit)  // the first `limit`; every later one dropped an older one
        #expect(mostStored <= 2 * limit)
        channel.finish()
        var bpms: [UInt16] = []
        for try await event in HeartRateEvents(channel: channel) { bpms.append(event.measurement?.bpm ?? 0) }
        #expect(bpms == (limit * 99..<limit * 100).map { UInt16($0 % 200) })
    }

    @Test("waitForConsumer returns once the consumer waits in next(), not before (no consumer: still waiting after 0.2 s), and at once when it already waits")
    func waitForConsumerWaitsForTheConsumer() async throws {
        let channel = HeartRateEventChannel(limit: 16)
        await #expect(throws: TestTimeout.self) { try await within(seconds: 0.2) { await channel.waitForConsumer() } }
        let events = HeartRateEvents(channel: channel)
        let consumer = Task {
            var iterator = events.makeAsyncIterator()
            return try await iterator.next()?.measurement?.bpm
        }
        try await within { await channel.waitForConsumer() }
        #expect(channel.hasWaiter, "woken by the consumer's wait")
        try await within { await channel.waitForConsumer() }
        _ = channel.yield(HeartRateEvent(value: [0x00, 72]))
        #expect(try await within { try await consumer.value } == 72)
    }

    @Test func bufferedCountTellsWhatNextReturnsWithoutWaiting() async throws {
        let channel = HeartRateEventChannel(limit: 16)
        var iterator = HeartRateEvents(channel: channel).makeAsyncIterator()
        #expect(iterator.bufferedCount == 0)
        for bpm: UInt8 in [60, 61, 62] { _ = channel.yield(HeartRateEvent(value: [0x00, bpm])) }
        #expect(iterator.bufferedCount == 3)
        var bpms: [UInt16] = []
        while iterator.bufferedCount > 0, let event = try await iterator.next() {
            bpms.append(event.measurement?.bpm ?? 0)
        }
        #expect(bpms == [60, 61, 62])
        channel.finish()
        #expect(iterator.bufferedCount == 0)
        #expect(try await iterator.next() == nil)

        // A value handed straight to a waiting consumer is not buffered.
        let direct = HeartRateEventChannel(limit: 16)
        let events = HeartRateEvents(channel: direct)
        let waiting = Task {
            var iterator = events.makeAsyncIterator()
            let event = try await iterator.next()
            return (event?.measurement?.bpm, iterator.bufferedCount)
        }
        try await within { await direct.waitForConsumer() }
        #expect(direct.hasWaiter)
        _ = direct.yield(HeartRateEvent(value: [0x00, 70]))
        let (bpm, left) = try await within { try await waiting.value }
        #expect(bpm == 70)
        #expect(left == 0)
    }

    @Test func unsubscribeOnADeadLinkReturns() async throws {
        let (bearer, monitor) = try await attachedStrap()
        bearer.expect(StrapScript.enableNotifications, reply: [StrapScript.writeResponse])
        // Kept until the end: a sequence dropped at once is a consumer gone, whose unsubscribe
        // (a sixth PDU) could race the link's end.
        let events = try await within { try await monitor.measurements() }
        bearer.end(with: .disconnected(reason: "gone"))
        try await within { await monitor.unsubscribe() }
        #expect(bearer.sentPDUs.count == 5)
        withExtendedLifetime(events) {}
    }
}

@Suite("Heart Rate monitor: energy reset")
struct HeartRateControlPointTests {
    @Test func resetEnergyExpendedWritesOneAndReturnsOnSuccess() async throws {
        let (bearer, monitor) = try await attachedStrap()
        bearer.expect([0x12, 0x17, 0x00, 0x01], reply: [StrapScript.writeResponse])
        try await within { try await monitor.resetEnergyExpended() }
        #expect(bearer.sentPDUs.last == [0x12, 0x17, 0x00, 0x01])
        #expect(bearer.remainingExpectations == 0)
    }

    @Test func controlPointNotSupportedIsAControlPointError() async throws {
        let (bearer, monitor) = try await attachedStrap()
        bearer.expect([0x12, 0x17, 0x00, 0x01], reply: [[0x01, 0x12, 0x17, 0x00, 0x80]])
        let result = try await within { () async -> HeartRateError? in
            await failure { () async throws(HeartRateError) in try await monitor.resetEnergyExpended() }
        }
        #expect(result == .controlPoint(ATTError(code: ATTErrorCode(0x80), requestOpcode: .writeRequest, handle: 0x0017)))
        #expect(result?.description.contains("0x80") == true)
    }

    @Test func aStrapWithoutControlPointSaysSoWithoutARequest() async throws {
        let bearer = ScriptedATTBearer()
        StrapScript.expectAttachOfMeasurementOnly(on: bearer, properties: 0x10)
        let monitor = try await within { try await HeartRateMonitor.attach(to: GATTClient(bearer: bearer)) }
        let result = try await within { () async -> HeartRateError? in
            await failure { () async throws(HeartRateError) in try await monitor.resetEnergyExpended() }
        }
        #expect(result == .controlPointMissing)
        #expect(result?.description.contains("0x2A39") == true)
        #expect(bearer.sentPDUs.count == 6)
        #expect(bearer.unexpectedPDUs.isEmpty)
    }
}
