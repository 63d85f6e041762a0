import Foundation
import RawbleTestSupport

/// Synthetic RR series for the tests: a resting heart with respiratory sinus arrhythmia, a slow
/// drift and beat-to-beat noise, in whole ms (so NeuroKit2's 1000 Hz peaks are exact), and the
/// artifacts a strap produces injected at known places.
struct RRSeries {
    var intervals: [Double]

    /// A clean series of `count` beats around `mean` ms.
    static func clean(count: Int, seed: UInt64, mean: Double = 850) -> RRSeries {
        var random = SplitMix64(state: seed)
        var intervals: [Double] = []
        intervals.reserveCapacity(count)
        var phase = 0.0
        for k in 0..<count {
            phase += 2 * Double.pi / (4 + Double(random.next() % 3))
            let breathing = 35 * sin(phase)
            let drift = 60 * sin(2 * Double.pi * Double(k) / 700)
            let noise = Double(Int(random.next() % 41) - 20)
            intervals.append((mean + breathing + drift + noise).rounded())
        }
        return RRSeries(intervals: intervals)
    }

    /// A missed beat at `k`: the strap saw one long interval where there were two.
    mutating func missBeat(at k: Int) {
        intervals[k] += intervals[k + 1]
        intervals.remove(at: k + 1)
    }

    /// An extra beat in interval `k`: noise split it in two.
    mutating func addExtraBeat(at k: Int) {
        let first = (intervals[k] * 0.35).rounded()
        intervals.replaceSubrange(k...k, with: [first, intervals[k] - first])
    }

    /// An ectopic (premature) beat ending interval `k`: short, then a compensating long one.
    mutating func addEctopicBeat(at k: Int) {
        let shift = (intervals[k] * 0.3).rounded()
        intervals[k] -= shift
        intervals[k + 1] += shift
    }

    /// A series with one artifact every `spacing` beats, cycling missed, extra, ectopic; returns
    /// the positions (in the final series) of the intervals carrying them, by kind.
    static func withArtifacts(count: Int, seed: UInt64, spacing: Int) -> (series: RRSeries, injected: [Int: String]) {
        var series = clean(count: count, seed: seed)
        var injected: [(position: Int, kind: String)] = []
        var k = count - spacing
        var kind = 0
        // From the end backwards: every artifact already injected lies after k and moves with
        // the beat removed or added at k.
        while k > spacing {
            switch kind % 3 {
            case 0:
                series.missBeat(at: k)
                injected = injected.map { ($0.position - 1, $0.kind) } + [(k, "missed")]
            case 1:
                series.addExtraBeat(at: k)
                injected = injected.map { ($0.position + 1, $0.kind) } + [(k, "extra")]
            default:
                series.addEctopicBeat(at: k)
                injected.append((k, "ectopic"))
            }
            kind += 1
            k -= spacing
        }
        return (series, Dictionary(uniqueKeysWithValues: injected.map { ($0.position, $0.kind) }))
    }
}
