/// Shares of a whole, rounded so that they add up to it: time in zones as percentages that
/// sum to exactly 100 (or 100.0), where rounding each share on its own gives 99 or 101.
public enum Shares {
    /// `values` (each ≥ 0; anything else counts as 0) as whole numbers of `units` that add up to
    /// `units` exactly, by the largest-remainder method: each share rounded down, then the units
    /// left over given one each to the shares that lost the most, the earlier first on a tie (a
    /// share never differs from its exact value by a whole unit or more). All zeros when the
    /// values add up to nothing.
    ///
    /// `rounded([1, 1, 1], to: 100)` is `[34, 33, 33]`; `to: 1000` gives tenths of a percent.
    public static func rounded(_ values: [Double], to units: Int) -> [Int] {
        let clean = values.map { $0.isFinite && $0 > 0 ? $0 : 0 }
        let total = clean.reduce(0, +)
        guard total > 0, total.isFinite, units > 0 else { return Array(repeating: 0, count: values.count) }
        let exact = clean.map { $0 / total * Double(units) }
        var shares = exact.map { Int($0.rounded(.down)) }
        let left = units - shares.reduce(0, +)
        let order = exact.indices.sorted { a, b in
            let (ra, rb) = (exact[a] - Double(shares[a]), exact[b] - Double(shares[b]))
            return ra != rb ? ra > rb : a < b
        }
        for index in order.prefix(max(0, left)) { shares[index] += 1 }
        return shares
    }
}
