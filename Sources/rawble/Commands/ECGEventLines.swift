import RawbleHeartRate
import RawblePolar
import RawblePolarCore
import RawbleReport
import RawbleWire

/// The `--json` events of `rawble ecg` that come with every frame (`ecg`, `acc`, `beat`),
/// written straight into a byte batch: the same lines ``JSON`` serializes, without building a
/// ``JSON`` value per sample. A frame's lines then leave with one write(2). Measured in the
/// VM beside bluetoothd: building them as ``JSON`` values was a fifth of `ecg`'s CPU.
/// With several H10s each line names its strap (`address`, `name` after `time`).
struct ECGEventLines {
    /// The strap every line names (a run of several H10s).
    let strap: StrapLabel?
    private var timestamps = TimestampCache()
    /// The last sample interval written, with its text: a stream's interval rarely changes.
    private var interval: (seconds: Double, text: [UInt8])?

    /// Lines that name `strap` after their time, when given.
    init(strap: StrapLabel? = nil) {
        self.strap = strap
    }

    /// `{"event":"ecg","time":…,"deviceTime":…,"interval":…,"uV":[…]}` for the first `count`
    /// samples of `frame`.
    mutating func appendECG(_ frame: PMDECGFrame, count: Int, time: Int64, to bytes: inout [UInt8]) {
        let text = intervalText(frame.times.interval / 1e9)
        LineWriter.append(to: &bytes, bound: 160 + labelBytes + text.count + 12 * count) { line in
            start(&line, "ecg", time: time, deviceTime: frame.times.first ?? 0)
            line.write(",\"interval\":")
            line.write(contentsOf: text)
            line.write(",\"uV\":[")
            for index in 0..<count {
                if index > 0 { line.write(UInt8(ascii: ",")) }
                line.writeDecimal(Int64(frame.microvolts[index]))
            }
            line.write("]}\n")
        }
    }

    /// `{"event":"acc","time":…,"deviceTime":…,"interval":…,"mG":[[x,y,z],…]}`.
    mutating func appendAcceleration(_ frame: PMDAccelerationFrame, time: Int64, to bytes: inout [UInt8]) {
        let text = intervalText(frame.times.interval / 1e9)
        LineWriter.append(to: &bytes, bound: 160 + labelBytes + text.count + 40 * frame.vectors.count) { line in
            start(&line, "acc", time: time, deviceTime: frame.times.first ?? 0)
            line.write(",\"interval\":")
            line.write(contentsOf: text)
            line.write(",\"mG\":[")
            for index in frame.vectors.indices {
                let vector = frame.vectors[index]
                line.write(index == frame.vectors.startIndex ? "[" : ",[")
                line.writeDecimal(Int64(vector.x))
                line.write(UInt8(ascii: ","))
                line.writeDecimal(Int64(vector.y))
                line.write(UInt8(ascii: ","))
                line.writeDecimal(Int64(vector.z))
                line.write(UInt8(ascii: "]"))
            }
            line.write("]}\n")
        }
    }

    /// `{"event":"beat","time":…,"deviceTime":…,"rr":…}` (`rr` in seconds, null for a stream's
    /// first beat).
    mutating func appendBeat(deviceTime: UInt64, rrSeconds: Double?, time: Int64, to bytes: inout [UInt8]) {
        let rr = Array((rrSeconds.map { JSON.double($0) } ?? .null).serialized().utf8)
        LineWriter.append(to: &bytes, bound: 128 + labelBytes + rr.count) { line in
            start(&line, "beat", time: time, deviceTime: deviceTime)
            line.write(",\"rr\":")
            line.write(contentsOf: rr)
            line.write("}\n")
        }
    }

    /// `{"event":…,"time":…,"deviceTime":…`: what every line starts with.
    private mutating func start(_ line: inout LineWriter, _ event: StaticString, time: Int64, deviceTime: UInt64) {
        line.write("{\"event\":\"")
        line.write(event)
        line.write("\",\"time\":\"")
        timestamps.write(unixMicroseconds: time, to: &line)
        line.write("\",")
        if let strap { line.write(contentsOf: strap.jsonFields) }
        line.write("\"deviceTime\":")
        line.writeDecimal(Int64(clamping: deviceTime))
    }

    private var labelBytes: Int { strap?.jsonFields.count ?? 0 }

    /// `seconds` as ``JSON`` prints a double, kept while the interval stays the same.
    private mutating func intervalText(_ seconds: Double) -> [UInt8] {
        if let interval, interval.seconds == seconds { return interval.text }
        let text = Array(JSON.double(seconds).serialized().utf8)
        interval = (seconds, text)
        return text
    }
}
