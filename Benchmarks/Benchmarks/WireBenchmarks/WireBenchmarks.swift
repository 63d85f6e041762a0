// package-benchmark suite for the wire layer: percentiles, CPU time and malloc counts.
//   cd Benchmarks && swift package benchmark
// Every benchmark processes exactly 1,000 items per outer iteration and uses
// `scalingFactor: .kilo`, so the figures marked `*` in the output are per item (per decode,
// per report, per PDU). The same loops are timed by WireRates for Scripts/benchmark.
import Benchmark
import WireWorkloads

let benchmarks: @Sendable () -> Void = {
    let inputs = WireInputs.load()
    let hrm = inputs.hrm
    precondition(hrm.count == 1_000)
    // 1,000 reports: package-benchmark scales by powers of 1000 only (WireRates uses all 6,933).
    let advertising = inputs.advertisingEvents(holdingExactly: 1_000)
    let att = inputs.att
    precondition(att.count == 1_000)

    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal, .throughput, .mallocCountTotal],
        timeUnits: .nanoseconds,
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 1_000_000)

    Benchmark("HRM decode", configuration: configuration) { benchmark in
        benchmark.startMeasurement()
        blackHole(decodeHeartRateMeasurements(hrm))
    }

    Benchmark("Advertising reports (event parse)", configuration: configuration) { benchmark in
        benchmark.startMeasurement()
        blackHole(parseAdvertisingReports(advertising))
    }

    Benchmark("Advertising reports (event + AD)", configuration: configuration) { benchmark in
        benchmark.startMeasurement()
        blackHole(parseAdvertisingReportsAndData(advertising))
    }

    Benchmark("ATT PDU decode", configuration: configuration) { benchmark in
        benchmark.startMeasurement()
        blackHole(decodeATTPDUs(att))
    }
}
