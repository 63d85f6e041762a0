import RawbleWire

/// Centred rolling quantiles with pandas' conventions (`rolling(width, center=True,
/// min_periods=1).quantile(q)`, linear interpolation): the window of element `i` is
/// `[i - h, i + h]` for `h = (width - 1) / 2`, cut at both ends of the series.
///
/// One sorted copy of the window is kept (on the stack: at most `width` values) and updated by
/// binary search as it slides, one insert and one removal per step, so a series of `n` values
/// costs O(n · width) moves of a small buffer instead of a sort per element. The artifact
/// correction runs it three times per pass over every beat: it is the analysis' inner loop.
enum RollingQuantiles {
    /// For each element, the `quantiles` of its centred window of odd `width` (≥ 1): one array per
    /// quantile, each as long as `values`. `values` must be finite (callers guarantee it).
    static func centred(_ values: [Double], width: Int, quantiles: [Double]) -> [[Double]] {
        var out = quantiles.map { _ in [Double](repeating: 0, count: values.count) }
        slide(values, width: width) { i, window in
            for q in quantiles.indices { out[q][i] = interpolated(window, quantiles[q]) }
        }
        return out
    }

    /// The median of each element's centred window of odd `width`.
    static func centredMedian(_ values: [Double], width: Int) -> [Double] {
        [Double](unsafeUninitializedCapacity: values.count) { out, initialized in
            guard let out = out.baseAddress else { return }
            slide(values, width: width) { i, window in
                (out + i).initialize(to: interpolated(window, 0.5))
            }
            initialized = values.count
        }
    }

    /// Half the interquartile range (the quartile deviation) of each element's centred window of
    /// odd `width`, times `scale`.
    static func centredQuartileDeviation(_ values: [Double], width: Int, scale: Double) -> [Double] {
        [Double](unsafeUninitializedCapacity: values.count) { out, initialized in
            guard let out = out.baseAddress else { return }
            slide(values, width: width) { i, window in
                let deviation = (interpolated(window, 0.75) - interpolated(window, 0.25)) / 2
                (out + i).initialize(to: scale * deviation)
            }
            initialized = values.count
        }
    }

    /// Calls `body` with each element's index and its centred window, sorted, in order.
    @inline(__always)
    private static func slide(_ values: [Double], width: Int, _ body: (Int, UnsafeBufferPointer<Double>) -> Void) {
        let n = values.count
        guard n > 0 else { return }
        let half = max(0, (width - 1) / 2)
        let capacity = min(2 * half + 1, n)
        values.withUnsafeBufferPointer { values in
            withUnsafeTemporaryAllocation(of: Double.self, capacity: capacity) { storage in
                guard let base = storage.baseAddress, let input = values.baseAddress else { return }
                var count = 0
                for k in 0...min(half, n - 1) { insert(input[k], into: base, count: &count) }
                body(0, UnsafeBufferPointer(start: base, count: count))
                var i = 1
                while i < n {
                    let entering = i &+ half
                    let leaving = i &- half &- 1
                    if entering < n, leaving >= 0 {
                        replace(input[leaving], with: input[entering], in: base, count: count)
                    } else if entering < n {
                        insert(input[entering], into: base, count: &count)
                    } else if leaving >= 0 {
                        remove(input[leaving], from: base, count: &count)
                    }
                    body(i, UnsafeBufferPointer(start: base, count: count))
                    i &+= 1
                }
            }
        }
    }

    /// The `q` quantile of a sorted, non-empty buffer by linear interpolation between the two
    /// nearest ranks (pandas' and NumPy's default).
    @inline(__always)
    static func interpolated(_ sorted: UnsafeBufferPointer<Double>, _ q: Double) -> Double {
        guard let first = sorted.first else { return 0 }
        let position = q * Double(sorted.count - 1)
        let low = Int(position)
        guard low >= 0, low < sorted.count else { return first }
        let fraction = position - Double(low)
        guard fraction > 0, low + 1 < sorted.count else { return sorted[low] }
        return sorted[low] + (sorted[low + 1] - sorted[low]) * fraction
    }

    /// The same for an array (the tests' naive reference sorts each window into one).
    static func interpolated(_ sorted: [Double], _ q: Double) -> Double {
        sorted.withUnsafeBufferPointer { interpolated($0, q) }
    }

    /// How many of the `count` sorted values at `base` are below `value`: its first position.
    /// A binary search without branches: each step adds half the range or nothing by the sign
    /// of a difference (`+ 0.0` makes the difference of equal values +0, so they count as not
    /// below). The values are noise, so a branching search mispredicts about every other step.
    @inline(__always)
    private static func rank(_ value: Double, in base: UnsafeMutablePointer<Double>, count: Int) -> Int {
        var first = 0
        var length = count
        while length > 1 {
            let half = length &>> 1
            first &+= half & signMask(base[first &+ half &- 1], value)
            length &-= half
        }
        if length == 1 { first &+= 1 & signMask(base[first], value) }
        return first
    }

    /// All ones when `a < b`, else zero (both finite).
    @inline(__always)
    private static func signMask(_ a: Double, _ b: Double) -> Int {
        Int(bitPattern: UInt(((a - b) + 0.0).bitPattern)) &>> 63
    }

    @inline(__always)
    private static func insert(_ value: Double, into base: UnsafeMutablePointer<Double>, count: inout Int) {
        let index = rank(value, in: base, count: count)
        (base + index + 1).update(from: base + index, count: count - index)
        base[index] = value
        count += 1
    }

    @inline(__always)
    private static func remove(_ value: Double, from base: UnsafeMutablePointer<Double>, count: inout Int) {
        let index = rank(value, in: base, count: count)
        guard index < count, base[index] == value else { return }
        (base + index).update(from: base + index + 1, count: count - index - 1)
        count -= 1
    }

    /// Removes `leaving` and inserts `entering` in one move of the values between their places
    /// (the window's size is unchanged).
    @inline(__always)
    private static func replace(_ leaving: Double, with entering: Double, in base: UnsafeMutablePointer<Double>, count: Int) {
        let belowLeaving = rank(leaving, in: base, count: count)
        let belowEntering = rank(entering, in: base, count: count)
        // `leaving` is always held (the window holds the series' values); were it not, the value
        // at its place goes instead, so the window stays sorted and its size unchanged.
        let from = min(belowLeaving, count - 1)
        if belowEntering > from {
            // The values between move down one place; `entering` goes after them.
            let to = belowEntering - 1
            (base + from).update(from: base + from + 1, count: to - from)
            base[to] = entering
        } else {
            let to = belowEntering
            (base + to + 1).update(from: base + to, count: from - to)
            base[to] = entering
        }
    }
}
