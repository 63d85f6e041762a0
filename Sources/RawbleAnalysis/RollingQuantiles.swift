/// Centred rolling quantiles with pandas' conventions (`rolling(width, center=True,
/// min_periods=1).quantile(q)`, linear interpolation): the window of element `i` is
/// `[i - h, i + h]` for `h = (width - 1) / 2`, cut at both ends of the series.
///
/// One sorted copy of the window is kept and updated by binary search as it slides (one insert
/// and one removal per step), so a series of `n` values costs O(n · width) moves of a small
/// buffer instead of a sort per element.
enum RollingQuantiles {
    /// For each element, the `quantiles` of its centred window of odd `width` (≥ 1): one array per
    /// quantile, each as long as `values`. `values` must hold no NaN (callers guarantee it).
    static func centred(_ values: [Double], width: Int, quantiles: [Double]) -> [[Double]] {
        let n = values.count
        var out = quantiles.map { _ in [Double](repeating: 0, count: n) }
        guard n > 0 else { return out }
        let half = max(0, (width - 1) / 2)
        var window: [Double] = []
        window.reserveCapacity(2 * half + 1)
        for k in 0...min(half, n - 1) { insert(values[k], into: &window) }
        for i in 0..<n {
            if i > 0 {
                let entering = i + half
                if entering < n { insert(values[entering], into: &window) }
                let leaving = i - half - 1
                if leaving >= 0 { remove(values[leaving], from: &window) }
            }
            for (q, quantile) in quantiles.enumerated() {
                out[q][i] = interpolated(window, quantile)
            }
        }
        return out
    }

    /// The `q` quantile of a sorted, non-empty buffer by linear interpolation between the two
    /// nearest ranks (pandas' and NumPy's default).
    static func interpolated(_ sorted: [Double], _ q: Double) -> Double {
        guard let first = sorted.first else { return 0 }
        let position = q * Double(sorted.count - 1)
        let low = Int(position)
        guard low >= 0, low < sorted.count else { return first }
        let fraction = position - Double(low)
        guard fraction > 0, low + 1 < sorted.count else { return sorted[low] }
        return sorted[low] + (sorted[low + 1] - sorted[low]) * fraction
    }

    /// The first position in `sorted` whose value is not below `value`.
    private static func lowerBound(_ value: Double, in sorted: [Double]) -> Int {
        var low = 0, high = sorted.count
        while low < high {
            let mid = low + (high - low) / 2
            if sorted[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private static func insert(_ value: Double, into sorted: inout [Double]) {
        sorted.insert(value, at: lowerBound(value, in: sorted))
    }

    private static func remove(_ value: Double, from sorted: inout [Double]) {
        let index = lowerBound(value, in: sorted)
        if index < sorted.count, sorted[index] == value { sorted.remove(at: index) }
    }
}
