// Fuzz target: Polar PMD. The same bytes go to every decoder: control-point indications,
// requests, settings and features (decode, re-encode, decode again, require equality), and data
// frames with every sample view, delta-compressed decoding with fuzzed settings (channels,
// resolution and factor taken from the frame's timestamp bytes) and the sample clock (frame
// times taken from the payload, backwards ones included).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPMD(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))

    if let indication = try? PMDControlPointIndication.decode(bytes) {
        precondition((try? PMDControlPointIndication.decode(indication.encoded)) == indication)
        if case let .response(response) = indication {
            if let settings = try? response.settings() {
                precondition((try? PMDSettings.decode(settings.encoded)) == settings)
            }
            if response.more, let joined = try? response.appending(response) {
                precondition(joined.parameters.count == 2 * response.parameters.count)
            }
        }
    }
    if let request = try? PMDControlPointRequest.decode(bytes) {
        precondition((try? PMDControlPointRequest.decode(request.encoded)) == request)
        precondition(request.encoded.count == bytes.count)
    }
    if let settings = try? PMDSettings.decode(bytes) {
        precondition((try? PMDSettings.decode(settings.encoded)) == settings)
    }
    if let features = try? PMDFeatures.decode(bytes) {
        precondition((try? PMDFeatures.decode(features.encoded)) == features)
        for type in features.types { precondition(features.contains(type)) }
    }

    guard let frame = try? PMDDataFrame.decode(bytes) else { return 0 }
    // Everything re-encodes but the two bits of byte 0 the type mask drops.
    precondition(frame.encoded == [bytes[0] & 0x3F] + bytes.dropFirst())
    if let ecg = try? frame.ecgSamples() {
        precondition(ecg.count == frame.payload.count / 3)
        var sum: Int64 = 0
        for sample in ecg {
            precondition(sample >= -(1 << 23) && sample < 1 << 23)
            sum += Int64(sample)
        }
        _ = sum
    }
    let factor = Float(bitPattern: UInt32(truncatingIfNeeded: frame.timestamp >> 32))
    if let acc = try? frame.accelerationSamples(factor: factor) {
        var sum: Int64 = 0
        for sample in acc { sum &+= Int64(sample.x) &+ Int64(sample.y) &+ Int64(sample.z) }
        _ = sum
        if frame.frameType.isDeltaCompressed {
            precondition(acc.count == (try? frame.deltaSamples(channels: 3, resolution: 16))?.count)
        }
    }
    if let ppi = try? frame.ppiSamples() {
        precondition(ppi.count == frame.payload.count / 6)
        for sample in ppi { _ = sample.isInvalid }
    }
    // Fuzzed settings: 0...7 channels, 0...33 bits (out-of-range ones must be refused).
    let channels = Int(frame.timestamp & 7)
    let resolution = Int(frame.timestamp >> 3 & 63) % 34
    var sampleCount = frame.payload.count
    if let delta = try? PMDDeltaSamples(frame.payload, channels: channels, resolution: resolution) {
        precondition((1...255).contains(channels) && (1...32).contains(resolution))
        let values = delta.values()
        precondition(values.count == delta.count * channels)
        precondition(delta.count <= 1 + 255 * frame.payload.count / 2)
        sampleCount = delta.count
    }

    // The sample clock over a series of frame times: the frame's, then each 8 payload bytes.
    var clock = PMDSampleClock()
    let rate = Double(UInt16(truncatingIfNeeded: frame.timestamp >> 16)) / Double(1 + (frame.timestamp >> 48 & 0xFF))
    var time = frame.timestamp
    var rest = frame.payload
    while true {
        let times = clock.sampleTimes(frameTime: time, sampleCount: sampleCount % 300, sampleRate: rate,
            type: frame.type, frameType: frame.frameType)
        precondition(times.count == sampleCount % 300)
        if let last = times.last { precondition(last == time) }
        var previous: UInt64 = 0
        for t in times {
            precondition(t >= previous && t <= time)
            previous = t
        }
        if rest.count < 9 { break }
        time = 0
        for (k, byte) in rest.prefix(8).enumerated() { time |= UInt64(byte) << UInt64(8 * k) }
        sampleCount = Int(rest[rest.startIndex + 8])
        if sampleCount & 0x80 != 0 { clock.reset(frame.type) }
        rest = rest.dropFirst(9)
    }
    _ = PMDTime.unixNanoseconds(frame.timestamp)
    return 0
}
