// CPU per measurement of the live analysis (HeartRateAnalyzer) and of a whole-file correction,
// on the simulated strap's seeded workout, for Scripts/benchmark-report and profiling (issue 13).
//   swift run -c release AnalysisRates [--values N] [--runs R] [--rate HZ] [--only NAME] [--hr-json FILE]
// Workloads:
//   live       HeartRateAnalyzer.add for each of N values (each covering one second of the
//              workout), stamped at HZ values per second of measurement time (1: a real strap;
//              1000: the benchmark fixture's pace, so the corrector's 2-second batches hold
//              2,000 values), zones configured, windowFigures read every 5 s of measurement time.
//   batch      ArtifactCorrection.kubios over the whole series of the same values' RR intervals.
// Output, one line per workload: name<TAB>µs per value (CPU of this thread, median of R runs)<TAB>beats,
// and a `#` line on stderr describing the series.
import Foundation
import RawbleAnalysis
import RawbleHeartRate
import RawbleWire

struct Options: Sendable {
    var values = 20_000
    var runs = 5
    var rate = 1000.0
    var only: String?
    /// `rawble hr --json` output to take the values from instead of the simulated workout.
    var file: String?

    static func parse() -> Options {
        var options = Options()
        var arguments = CommandLine.arguments.dropFirst()
        while let argument = arguments.popFirst() {
            switch argument {
            case "--values": options.values = Int(arguments.popFirst() ?? "") ?? options.values
            case "--runs": options.runs = max(1, Int(arguments.popFirst() ?? "") ?? options.runs)
            case "--rate": options.rate = Double(arguments.popFirst() ?? "") ?? options.rate
            case "--only": options.only = arguments.popFirst()
            case "--hr-json": options.file = arguments.popFirst()
            default:
                print("usage: AnalysisRates [--values N] [--runs R] [--rate HZ] [--only live|batch] [--hr-json FILE]")
                exit(2)
            }
        }
        return options
    }
}

let options = Options.parse()

/// This thread's CPU time in seconds.
func threadCPUTime() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

let samples: [HeartRateSample] = {
    if let file = options.file {
        // The measurement events of `rawble hr --json` (RR intervals in seconds), restamped at the rate.
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            print("AnalysisRates: cannot read \(file)")
            exit(1)
        }
        var samples: [HeartRateSample] = []
        for line in text.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object["event"] as? String == "measurement" else { continue }
            let rr = (object["rrIntervals"] as? [Double] ?? []).map { $0 * 1000 }
            samples.append(HeartRateSample(time: Double(samples.count) / options.rate,
                                           heartRate: object["bpm"] as? Double, rrIntervals: rr))
            if samples.count == options.values { break }
        }
        return samples
    }
    var workout = SimulatedWorkout(seed: 13)
    return (0..<options.values).map { index in
        HeartRateSample(workout.next(covering: 1.0, maximumLength: 512), at: Double(index) / options.rate)
    }
}()
let intervals = samples.flatMap(\.rrIntervals)

if options.only == nil {
    let whole = ArtifactCorrection.kubios(intervals)
    FileHandle.standardError.write("""
        # \(samples.count) values at \(options.rate) Hz, \(intervals.count) RR intervals; corrected as a whole: \
        \(whole.passes) passes, \(whole.counts.total) artifacts, \(whole.correctedIndices.count) intervals changed

        """.data(using: .utf8) ?? Data())
}

func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }

func measure(_ name: String, _ body: () -> Int) {
    guard options.only == nil || options.only == name else { return }
    var perValue: [Double] = []
    var beats = 0
    _ = body() // warm-up
    for _ in 0..<options.runs {
        let start = threadCPUTime()
        beats = body()
        perValue.append((threadCPUTime() - start) / Double(samples.count) * 1e6)
    }
    print("\(name)\t\(String(format: "%.3f", median(perValue)))\t\(beats)")
}

measure("live") {
    var analyzer = HeartRateAnalyzer(configuration: .init(zones: HeartRateZones(maxHeartRate: 185)))
    var beats = 0
    var nextReport = 5.0
    var sink = 0.0
    for sample in samples {
        beats += analyzer.add(sample).count
        if sample.time >= nextReport {
            sink += analyzer.windowFigures.rmssd ?? 0
            nextReport += 5
        }
    }
    beats += analyzer.finish().count
    if sink.isNaN { print("") }
    return beats
}

measure("batch") {
    ArtifactCorrection.kubios(intervals).intervals.count
}
