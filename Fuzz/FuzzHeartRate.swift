// Fuzz target: Heart Rate Measurement, Body Sensor Location and Control Point values.
// Decode; when it succeeds, re-encode, decode again, and require equality (and, since the
// flags are kept, the very same bytes).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHeartRate(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let m = try? HeartRateMeasurement.decode(bytes) {
        let encoded = m.encoded
        precondition(encoded == bytes)
        precondition((try? HeartRateMeasurement.decode(encoded)) == m)
        precondition(m.rrIntervals.bytes.count == 2 * m.rrIntervals.count)
        var total = 0
        for interval in m.rrIntervals { total &+= Int(interval.rawValue) }
        // Rebuilding from the decoded fields gives an equal measurement when the flags are canonical.
        let rebuilt = HeartRateMeasurement(
            bpm: m.bpm, contact: m.contact, energyExpended: m.energyExpended, rrIntervals: m.rrIntervals)
        precondition((try? HeartRateMeasurement.decode(rebuilt.encoded)) == rebuilt)
        precondition(rebuilt.bpm == m.bpm && rebuilt.energyExpended == m.energyExpended)
        precondition(rebuilt.rrIntervals == m.rrIntervals && rebuilt.contact == m.contact)
        _ = total
    }
    if let location = try? BodySensorLocation.decode(bytes) {
        precondition(location.encoded == bytes)
    }
    if let command = try? HeartRateControlPoint.decode(bytes) {
        precondition(command.encoded == bytes)
    }
    return 0
}
