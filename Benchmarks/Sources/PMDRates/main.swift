// Polar PMD decode rates for Scripts/benchmark-pmd (issue 26): the frames of an input file
// (one `FACTOR HEX` line per frame, as Scripts/python/pmd_reference.py reads them) decoded over
// and over for S seconds of this thread's CPU time, N runs, the median printed.
//   swift run -c release PMDRates FILE [--seconds S] [--runs N]
// A pass decodes every frame of a kind: the header (PMDDataFrame.decode), its samples (ECG:
// ecgSamples(); acceleration: accelerationSamples(factor:), delta-compressed frames expanded)
// and reads each value, and computes each sample's time (PMDSampleClock), what `rawble ecg`
// does per frame. Output, one line per kind (the names Scripts/python/benchmark_pmd.py's
// reference side prints too):
//   name<TAB>samples_per_cpu_second<TAB>ns_per_sample<TAB>frames<TAB>samples_per_pass
import Foundation
import RawblePolarCore
import RawbleWire

struct Input {
    var name: String
    var frames: [(factor: Float, bytes: [UInt8])]
}

func load(_ path: String) -> [Input] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
        FileHandle.standardError.write("PMDRates: cannot read \(path)\n".data(using: .utf8)!)
        exit(66)
    }
    var kinds: [String: [(Float, [UInt8])]] = [:]
    for line in text.split(separator: "\n") {
        let fields = line.split(separator: " ")
        guard fields.count == 2, let factor = Float(fields[0]), let bytes = try? Hex.decode(String(fields[1])),
              bytes.count > 10 else { continue }
        let name = switch (bytes[0] & 0x3F, bytes[9]) {
        case (0, _): "ecg"
        case (2, let type) where type & 0x80 != 0: "acc_delta"
        default: "acc_raw"
        }
        kinds[name, default: []].append((factor, bytes))
    }
    return ["ecg", "acc_raw", "acc_delta"].compactMap { name in kinds[name].map { Input(name: name, frames: $0) } }
}

/// Decodes every frame once; the samples decoded (and a checksum, so nothing is optimized away).
@inline(never)
func pass(_ input: Input, clock: inout PMDSampleClock, sink: inout Int64) -> Int {
    var samples = 0
    for (factor, bytes) in input.frames {
        guard let frame = try? PMDDataFrame.decode(bytes[...]) else { continue }
        if frame.type == .ecg {
            guard let values = try? frame.ecgSamples() else { continue }
            let times = clock.sampleTimes(of: frame, sampleCount: values.count, sampleRate: 130)
            for index in values.indices { sink &+= Int64(values[index]) &+ Int64(bitPattern: times[index]) }
            samples += values.count
        } else {
            guard let vectors = try? frame.accelerationSamples(factor: factor) else { continue }
            let times = clock.sampleTimes(of: frame, sampleCount: vectors.count, sampleRate: 200)
            for index in vectors.indices {
                let vector = vectors[index]
                sink &+= Int64(vector.x) &+ Int64(vector.y) &+ Int64(vector.z) &+ Int64(bitPattern: times[index])
            }
            samples += vectors.count
        }
    }
    return samples
}

func threadCPUTime() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

var arguments = CommandLine.arguments.dropFirst()
guard let path = arguments.popFirst() else {
    print("usage: PMDRates FILE [--seconds S] [--runs N]")
    exit(64)
}
var seconds = 2.0
var runs = 5
while let argument = arguments.popFirst() {
    switch argument {
    case "--seconds": seconds = Double(arguments.popFirst() ?? "") ?? seconds
    case "--runs": runs = max(1, Int(arguments.popFirst() ?? "") ?? runs)
    default:
        print("usage: PMDRates FILE [--seconds S] [--runs N]")
        exit(64)
    }
}
var sink: Int64 = 0
for input in load(path) {
    var clock = PMDSampleClock()
    let perPass = pass(input, clock: &clock, sink: &sink)  // warm-up
    var rates: [Double] = []
    for _ in 0..<runs {
        var done = 0
        let start = threadCPUTime()
        var elapsed = 0.0
        while elapsed < seconds {
            clock.resetAll()
            done += pass(input, clock: &clock, sink: &sink)
            elapsed = threadCPUTime() - start
        }
        rates.append(Double(done) / elapsed)
    }
    let median = rates.sorted()[rates.count / 2]
    print("\(input.name)\t\(median)\t\(1e9 / median)\t\(input.frames.count)\t\(perPass)")
}
if sink == 42 { print("#") }
