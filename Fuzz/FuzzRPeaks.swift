// Fuzz target: arbitrary ECG through R-peak detection, batch and streaming (RawbleAnalysis/ECG).
// The first byte picks the sampling rate (out of range included: 0, tiny, absurd); the rest is
// read as 3-byte little-endian signed samples (µV, as a Polar H10 sends them), with a few
// values replaced by NaN and infinities, and fed to the streaming detector in chunks whose
// sizes the input also picks. Nothing may trap; every peak is a sample index of the input, in
// order, none twice; the streaming detector's memory stays within its bound and each peak it
// reports comes with the call that delivered sample peak + `maximumLatency` at the latest; RR intervals are finite and positive.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRPeaks(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard let first = bytes.first else { return 0 }
    let rates: [Double] = [130, 250, 500, 1000, 20, 19.99, 0, -130, 10_001, .nan, .infinity, 1e-300]
    let rate = rates[Int(first) % rates.count]
    var samples: [Double] = []
    var offset = 1
    while offset + 3 <= bytes.count, samples.count < 20_000 {
        let raw = Int32(bitPattern: UInt32(bytes[offset]) << 8 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 24) >> 8
        switch raw {
        case 0x7F_FFFF: samples.append(.nan)
        case 0x7F_FFFE: samples.append(.infinity)
        case -0x80_0000: samples.append(-.infinity)
        case 0x7F_FFFD: samples.append(.greatestFiniteMagnitude)
        default: samples.append(Double(raw))
        }
        offset += 3
    }
    let batch = RPeakDetection.peaks(in: samples, samplingRate: rate)
    precondition(zip(batch, batch.dropFirst()).allSatisfy { $0 < $1 })
    precondition(batch.allSatisfy { samples.indices.contains($0) })
    let intervals = RPeakDetection.rrIntervals(peaks: batch, samplingRate: rate)
    precondition(intervals.allSatisfy { $0.isFinite && $0 > 0 })
    var streaming = StreamingRPeakDetector(samplingRate: rate)
    var found: [Int] = []
    var start = 0
    var chunk = 1 + Int(first >> 4)
    while start < samples.count {
        let end = min(samples.count, start + chunk)
        let peaks = streaming.append(samples[start..<end])
        // On time: reported no later than the call that delivered sample peak + maximumLatency
        // (this chunk may hold that sample and more after it).
        precondition(peaks.allSatisfy { $0 < end && $0 + streaming.maximumLatency >= start })
        found += peaks
        precondition(streaming.bufferedSampleCount <= max(1, 4 * streaming.maximumLatency + 64))
        start = end
        chunk = chunk * 3 % 257 + 1
    }
    precondition(streaming.sampleCount == samples.count || streaming.maximumLatency == 0)
    precondition(zip(found, found.dropFirst()).allSatisfy { $0 < $1 })
    return 0
}
