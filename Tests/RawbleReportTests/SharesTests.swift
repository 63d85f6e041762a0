import RawbleReport
import RawbleTestSupport
import Testing

@Suite("Shares: percentages that add up to 100")
struct SharesTests {
    @Test("three equal shares: 34, 33, 33 (each rounded alone: 33 × 3 = 99)")
    func thirds() {
        #expect(Shares.rounded([1, 1, 1], to: 100) == [34, 33, 33])
        #expect(Shares.rounded([20, 20, 20], to: 1000) == [334, 333, 333])
    }

    @Test("shares each rounded alone to 101 are given 100, the largest remainders first")
    func halves() {
        // 12.5 + 37.5 + 50: rounded alone 13 + 38 + 50 = 101.
        let seconds = [12.5, 37.5, 50]
        #expect(seconds.map { Int($0.rounded()) }.reduce(0, +) == 101)
        #expect(Shares.rounded(seconds, to: 100) == [13, 37, 50])
    }

    @Test("any split of time adds up to exactly the whole; no share moves a whole unit from its value")
    func randomSplits() {
        var generator = SplitMix64(state: 39)  // seeded: the same 500 splits every run
        for _ in 0..<500 {
            let count = Int.random(in: 1...6, using: &generator)
            let seconds = (0..<count).map { _ in Bool.random(using: &generator) ? 0 : Double.random(in: 0...5000, using: &generator) }
            let total = seconds.reduce(0, +)
            for units in [100, 1000] {
                let shares = Shares.rounded(seconds, to: units)
                guard total > 0 else {
                    #expect(shares == Array(repeating: 0, count: count))
                    continue
                }
                #expect(shares.reduce(0, +) == units, "\(seconds)")
                for (share, value) in zip(shares, seconds) {
                    #expect(abs(Double(share) - value / total * Double(units)) < 1, "\(seconds) → \(shares)")
                }
            }
        }
    }

    @Test("no time, negative and non-finite values count as nothing")
    func degenerate() {
        #expect(Shares.rounded([0, 0], to: 100) == [0, 0])
        #expect(Shares.rounded([], to: 100) == [])
        #expect(Shares.rounded([-5, .nan, 10, .infinity], to: 100) == [0, 0, 100, 0])
    }
}
