// The filters of NeuroKit2's `ecg_clean(method="neurokit")` (Makowski et al. 2021, NeuroKit2: A
// Python toolbox for neurophysiological signal processing, Behavior Research Methods 53,
// 1689–1696): `signal_filter(lowcut=0.5, method="butterworth", order=5)` then
// `signal_filter(method="powerline")`, written from the published method (SciPy's
// `butter`, `sosfiltfilt`, `filtfilt` semantics), not translated from its code.

/// One second-order section of an IIR filter, direct form II transposed, `a0` = 1. A first-order
/// section has `b2` = `a2` = 0.
struct FilterSection: Sendable, Hashable {
    var b0: Double
    var b1: Double
    var b2: Double
    var a1: Double
    var a2: Double

    /// The gain at DC (z = 1): what a constant input comes out as.
    var dcGain: Double { (b0 + b1 + b2) / (1 + a1 + a2) }

    /// The two delay states of a section at rest under a unit constant input (SciPy's `lfilter_zi`).
    var unitSteadyState: (Double, Double) {
        let gain = dcGain
        let z1 = b2 - a2 * gain
        return (b1 - a1 * gain + z1, z1)
    }

    /// One sample through the section, updating its two states.
    @inline(__always)
    func step(_ x: Double, _ z0: inout Double, _ z1: inout Double) -> Double {
        let y = b0 * x + z0
        z0 = b1 * x - a1 * y + z1
        z1 = b2 * x - a2 * y
        return y
    }
}

/// A cascade of sections with its running state: the causal filter of the streaming detector and
/// the building block of the zero-phase one.
struct SectionCascade: Sendable, Hashable {
    let sections: [FilterSection]
    private var states: [Double]

    init(sections: [FilterSection]) {
        self.sections = sections
        states = [Double](repeating: 0, count: 2 * sections.count)
    }

    /// Puts every section at rest for a constant input `value` (SciPy's `sosfilt_zi` × value):
    /// no start-up transient when the signal starts away from zero.
    mutating func settle(at value: Double) {
        var scale = value
        for (index, section) in sections.enumerated() {
            let (z0, z1) = section.unitSteadyState
            states[2 * index] = z0 * scale
            states[2 * index + 1] = z1 * scale
            scale *= section.dcGain
        }
    }

    /// One sample through every section in order.
    mutating func step(_ x: Double) -> Double {
        var value = x
        for index in sections.indices {
            var z0 = states[2 * index], z1 = states[2 * index + 1]
            value = sections[index].step(value, &z0, &z1)
            states[2 * index] = z0
            states[2 * index + 1] = z1
        }
        return value
    }

    /// The edge padding SciPy's `sosfiltfilt` uses by default: 3 × the taps of the cascade, less
    /// one tap per section whose numerator and denominator both end in zero.
    var defaultPadding: Int {
        let zeroB = sections.filter { $0.b2 == 0 }.count
        let zeroA = sections.filter { $0.a2 == 0 }.count
        return 3 * (2 * sections.count + 1 - min(zeroB, zeroA))
    }

    /// Zero-phase filtering the way SciPy's `sosfiltfilt(padtype="odd")` does it: the signal
    /// extended at both ends by its odd reflection, run forward from rest at its first value,
    /// reversed, run again from rest at the last output, reversed and trimmed. `nil` when the
    /// signal is not longer than the padding (where SciPy raises).
    func zeroPhase(_ signal: [Double]) -> [Double]? {
        let padding = defaultPadding
        guard signal.count > padding else { return nil }
        var filter = self
        var values = oddExtension(signal, padding: padding)
        filter.settle(at: values[0])
        for index in values.indices { values[index] = filter.step(values[index]) }
        values.reverse()
        filter.settle(at: values[0])
        for index in values.indices { values[index] = filter.step(values[index]) }
        values.reverse()
        return Array(values[padding..<(values.count - padding)])
    }
}

/// `signal` with `padding` samples added at each end, each the odd reflection about the end
/// sample (2·x[0] − x[k] on the left, 2·x[n−1] − x[n−1−k] on the right). Needs `padding` < count.
func oddExtension(_ signal: [Double], padding: Int) -> [Double] {
    guard padding > 0, signal.count > padding, let first = signal.first, let last = signal.last else { return signal }
    let n = signal.count
    var extended: [Double] = []
    extended.reserveCapacity(n + 2 * padding)
    for k in stride(from: padding, through: 1, by: -1) { extended.append(2 * first - signal[k]) }
    extended.append(contentsOf: signal)
    for k in 1...padding { extended.append(2 * last - signal[n - 1 - k]) }
    return extended
}

enum Butterworth {
    /// The sections of a digital Butterworth high-pass of `order` with its −3 dB point at
    /// `cutoff` Hz: the analog prototype's poles, moved to a high-pass at the prewarped corner,
    /// mapped by the bilinear transform (as SciPy's `butter(btype="highpass", output="sos")`).
    /// Each section is scaled to unit gain at Nyquist; a first-order section leads when the
    /// order is odd, then the pole pairs from the farthest from the unit circle to the nearest.
    static func highPass(order: Int, cutoff: Double, samplingRate: Double) -> [FilterSection] {
        guard order > 0, cutoff > 0, samplingRate > 2 * cutoff else { return [] }
        let twiceRate = 2 * samplingRate
        let warped = twiceRate * Trigonometry.tangent(Double.pi * cutoff / samplingRate)
        var sections: [FilterSection] = []
        if order % 2 == 1 {
            // The prototype's real pole −1 becomes −warped in the high-pass, then z = p below.
            let pole = (twiceRate - warped) / (twiceRate + warped)
            let gain = (1 + pole) / 2
            sections.append(FilterSection(b0: gain, b1: -gain, b2: 0, a1: -pole, a2: 0))
        }
        var pairs: [FilterSection] = []
        // Prototype poles −exp(iπm / 2n) for m = n−1, n−3, … > 0 (each with its conjugate).
        var m = order - 1
        while m > 0 {
            let angle = Double.pi * Double(m) / Double(2 * order)
            // High-pass pole warped / p with |p| = 1: warped · conj(p) = warped · (−cos, +sin).
            let sReal = -warped * Trigonometry.cosine(angle)
            let sImaginary = warped * Trigonometry.sine(angle)
            // Bilinear: z = (2fs + s) / (2fs − s).
            let numeratorReal = twiceRate + sReal, denominatorReal = twiceRate - sReal
            let denominatorNorm = denominatorReal * denominatorReal + sImaginary * sImaginary
            let zReal = (numeratorReal * denominatorReal - sImaginary * sImaginary) / denominatorNorm
            let zImaginary = (sImaginary * denominatorReal + numeratorReal * sImaginary) / denominatorNorm
            let a1 = -2 * zReal
            let a2 = zReal * zReal + zImaginary * zImaginary
            // Double zero at z = 1; unit gain at z = −1: g · 4 / (1 − a1 + a2) = 1.
            let gain = (1 - a1 + a2) / 4
            pairs.append(FilterSection(b0: gain, b1: -2 * gain, b2: gain, a1: a1, a2: a2))
            m -= 2
        }
        pairs.sort { $0.a2 < $1.a2 }
        return sections + pairs
    }
}

/// NeuroKit2's powerline filter (`signal_filter(method="powerline", powerline=50)`): a moving
/// average of `taps` samples (`int(fs / 50)` at 100 Hz and above, else 2) run forward and
/// backward (SciPy's `filtfilt`, odd padding of 3 × taps). Forward and backward together are one
/// symmetric triangular kernel of 2 × taps − 1 samples, which the streaming detector uses.
enum PowerlineFilter {
    /// The moving average's length for `samplingRate`, as NeuroKit2 chooses it.
    static func taps(samplingRate: Double) -> Int {
        guard samplingRate >= 100, samplingRate.isFinite else { return 2 }
        return max(Int(samplingRate / 50), 1)
    }

    /// The zero-phase filtering, `nil` when the signal is not longer than its padding.
    static func zeroPhase(_ signal: [Double], taps: Int) -> [Double]? {
        let padding = 3 * taps
        guard taps > 0, signal.count > padding else { return nil }
        let extended = oddExtension(signal, padding: padding)
        let n = extended.count
        let scale = 1 / Double(taps)
        // Forward from rest at the first value (what lies before it counts as that value).
        var forward = [Double](repeating: 0, count: n)
        for index in 0..<n {
            var sum = 0.0
            for k in 0..<taps { sum += extended[max(index - k, 0)] }
            forward[index] = sum * scale
        }
        // Backward from rest at the last forward output.
        var backward = [Double](repeating: 0, count: n)
        for index in 0..<n {
            var sum = 0.0
            for k in 0..<taps { sum += forward[min(index + k, n - 1)] }
            backward[index] = sum * scale
        }
        return Array(backward[padding..<(n - padding)])
    }

    /// The weights of the equivalent centred kernel, offsets −(taps − 1) … taps − 1:
    /// (taps − |k|) / taps².
    static func kernel(taps: Int) -> [Double] {
        guard taps > 0 else { return [1] }
        let denominator = Double(taps * taps)
        return (-(taps - 1)...(taps - 1)).map { Double(taps - abs($0)) / denominator }
    }
}

/// Sine, cosine and tangent for the filter design, without Foundation: Taylor series, used only
/// on |x| ≤ π/2 where 30 terms are exact to the last bit of a Double.
enum Trigonometry {
    static func sine(_ x: Double) -> Double {
        var term = x, sum = x
        let square = x * x
        for n in stride(from: 2, through: 60, by: 2) {
            term *= -square / Double(n * (n + 1))
            sum += term
        }
        return sum
    }

    static func cosine(_ x: Double) -> Double {
        var term = 1.0, sum = 1.0
        let square = x * x
        for n in stride(from: 1, through: 59, by: 2) {
            term *= -square / Double(n * (n + 1))
            sum += term
        }
        return sum
    }

    static func tangent(_ x: Double) -> Double { sine(x) / cosine(x) }
}
