// Fuzz target: arbitrary RR series through the analysis, batch and streaming. The input is read
// as 3-byte records: a 16-bit RR value in ms (0...65535: zero, absurd and plausible values), and
// one byte for the time step (its top bit steps back in time: measurements out of order) and the
// heart rate. Nothing may trap, and no figure may be NaN or infinite; the live path holds no more
// than its window.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHRV(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    var measurements: [HeartRateSample] = []
    var time = 0.0
    var offset = 0
    // At most 512 measurements: the live path corrects at every beat, and short inputs fuzz faster.
    while offset + 3 <= bytes.count, measurements.count < 512 {
        let rr = Double(UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1]))
        let control = bytes[offset + 2]
        time += control & 0x80 != 0 ? -1 : Double(control & 0x0F) / 2
        let special: Double? = control & 0x70 == 0x70 ? .nan : control & 0x70 == 0x60 ? .infinity : nil
        measurements.append(HeartRateSample(time: time, heartRate: Double(control) * 1.5, rrIntervals: [special ?? rr]))
        offset += 3
    }
    let zones = HeartRateZones(age: Double(size % 90))
    let session = SessionAnalysis(measurements: measurements, configuration: .init(zones: zones, segmentDuration: 30))
    var live = HeartRateAnalyzer(configuration: .init(zones: zones, windowDuration: 20, lookahead: 3 + size % 8))
    var beats = 0
    for measurement in measurements {
        beats += live.add(measurement).count
    }
    beats += live.finish().count
    precondition(beats == live.sessionFigures.beatCount)
    let intervals = measurements.flatMap(\.rrIntervals)
    let correction = ArtifactCorrection.kubios(intervals)
    precondition(correction.correctedIndices.allSatisfy { correction.intervals.indices.contains($0) })
    precondition(correction.artifacts.allSatisfy { intervals.indices.contains($0.index) || intervals.isEmpty })
    var all = [session.figures, session.uncorrectedFigures, live.sessionFigures, live.windowFigures,
               TimeDomainHRV(intervals: correction.intervals)]
    all += session.segments.map(\.figures)
    for figures in all {
        for value in [figures.meanRR, figures.meanHeartRate, figures.sdnn, figures.rmssd, figures.pnn50,
                      figures.pnn20, figures.minHeartRate, figures.maxHeartRate] {
            if let value { precondition(value.isFinite) }
        }
    }
    precondition(session.beats.allSatisfy { $0.interval.isFinite && $0.interval > 0 })
    if let zoneTime = session.zoneTime {
        precondition(zoneTime.seconds.allSatisfy { $0.isFinite && $0 >= 0 } && zoneTime.gapSeconds.isFinite)
    }
    return 0
}
