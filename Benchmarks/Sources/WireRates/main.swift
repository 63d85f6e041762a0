// Plain-clock rates of the same loops as the package-benchmark suite, for Scripts/benchmark.
//   swift run -c release WireRates [--seconds S] [--runs N] [--only NAME] [--passes P]
// (--passes P: no timing, run each workload exactly P passes, for valgrind/callgrind
// instruction counts.)
// Each loop runs over its whole input file repeatedly for S seconds of this thread's CPU time
// (after one warm-up pass); N runs, the median is printed. Rates are items per CPU second of
// one thread (CLOCK_THREAD_CPUTIME_ID), so time the scheduler gives to other processes on a
// loaded machine is not counted; the wall-clock rate of the same runs is printed too.
// Output, one line per workload, names shared with Reference/bumble_decode.py --tsv:
//   name<TAB>items_per_cpu_second<TAB>ns_per_item<TAB>unit<TAB>items_per_wall_second
// plus a `#` line on stderr describing the inputs.
import Foundation
import WireWorkloads

struct Options: Sendable {
    var seconds = 3.0
    var runs = 3
    var only: String? = nil
    var fixedPasses: Int? = nil
}

func parseOptions() -> Options {
    var options = Options()
    var arguments = CommandLine.arguments.dropFirst()
    while let argument = arguments.popFirst() {
        switch argument {
        case "--seconds": options.seconds = Double(arguments.popFirst() ?? "") ?? options.seconds
        case "--runs": options.runs = max(1, Int(arguments.popFirst() ?? "") ?? options.runs)
        case "--only": options.only = arguments.popFirst()
        case "--passes": options.fixedPasses = Int(arguments.popFirst() ?? "")
        default:
            print("usage: WireRates [--seconds S] [--runs N] [--only NAME] [--passes P]")
            exit(2)
        }
    }
    return options
}

let options = parseOptions()
let inputs = WireInputs.load()
FileHandle.standardError.write("""
    # inputs: \(inputs.hrm.count) HRM values, \(inputs.advertisingEvents.count) H4 events with \
    \(inputs.advertisingReportCount) advertising reports (\(inputs.advertisingDataErrorCount) with a truncated \
    last AD structure), \(inputs.att.count) ATT PDUs; \(options.runs) runs of \(options.seconds) CPU-s each, median

    """.data(using: .utf8)!)

/// This thread's CPU time in seconds.
func threadCPUTime() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// Wall-clock time in seconds (monotonic).
func wallTime() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

func rate(_ name: String, unit: String, itemsPerPass: Int, onlyOnRequest: Bool = false, _ pass: () -> UInt64) {
    let (seconds, runs, only, fixedPasses) = (options.seconds, options.runs, options.only, options.fixedPasses)
    if let only, only != name { return }
    if onlyOnRequest, only == nil { return }
    if let fixedPasses {
        var checksum: UInt64 = 0
        for _ in 0..<fixedPasses { checksum &+= pass() }
        print("\(name)\t\(fixedPasses) passes of \(itemsPerPass) \(unit)s\tchecksum \(checksum)")
        return
    }
    consume(pass())  // warm-up
    var cpuRates: [Double] = []
    var wallRates: [Double] = []
    for _ in 0..<runs {
        var passes = 0
        let cpuStart = threadCPUTime()
        let wallStart = wallTime()
        var cpuElapsed = 0.0
        repeat {
            consume(pass())
            passes += 1
            cpuElapsed = threadCPUTime() - cpuStart
        } while cpuElapsed < seconds
        let wallElapsed = wallTime() - wallStart
        cpuRates.append(Double(passes * itemsPerPass) / cpuElapsed)
        wallRates.append(Double(passes * itemsPerPass) / wallElapsed)
    }
    let cpu = median(cpuRates)
    print("\(name)\t\(Int(cpu.rounded()))\t\(String(format: "%.1f", 1e9 / cpu))\t\(unit)\t\(Int(median(wallRates).rounded()))")
}

rate("hrm_decode", unit: "decode", itemsPerPass: inputs.hrm.count) {
    decodeHeartRateMeasurements(inputs.hrm)
}
rate("adv_event_parse", unit: "report", itemsPerPass: inputs.advertisingReportCount) {
    parseAdvertisingReports(inputs.advertisingEvents)
}
rate("adv_event_ad", unit: "report", itemsPerPass: inputs.advertisingReportCount) {
    parseAdvertisingReportsAndData(inputs.advertisingEvents)
}
rate("att_decode", unit: "pdu", itemsPerPass: inputs.att.count) {
    decodeATTPDUs(inputs.att)
}

// The 1,000-report slice the package-benchmark suite uses (only with --only NAME).
let slice = inputs.advertisingEvents(holdingExactly: 1_000)
rate("adv_event_parse_1k", unit: "report", itemsPerPass: 1_000, onlyOnRequest: true) {
    parseAdvertisingReports(slice)
}
rate("adv_event_ad_1k", unit: "report", itemsPerPass: 1_000, onlyOnRequest: true) {
    parseAdvertisingReportsAndData(slice)
}
