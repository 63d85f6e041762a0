/// R-peak detection in a single-lead ECG, matched to NeuroKit2 0.2.13's default pipeline
/// (Makowski et al. 2021, NeuroKit2: A Python toolbox for neurophysiological signal processing,
/// Behavior Research Methods 53, 1689–1696): `ecg_clean(method="neurokit")` then
/// `ecg_peaks(method="neurokit")`, whose detector is `_ecg_findpeaks_neurokit`.
///
/// Why this method: it is the reference most HRV work in Python uses, it needs no training and no
/// adaptive thresholds, and each step is simple enough to stream (``StreamingRPeakDetector``).
///
/// The steps, as NeuroKit2 publishes them:
/// 1. Cleaning: a 5th-order Butterworth high-pass at 0.5 Hz run forward and backward (zero
///    phase), then the powerline filter: a moving average of `int(fs / 50)` samples (2 below
///    100 Hz; so 2 at the Polar H10's 130 Hz), also forward and backward.
/// 2. The absolute gradient of the cleaned signal, smoothed by a centred boxcar of 0.1 s; its
///    local average by a second boxcar of 0.75 s over the smoothed gradient.
/// 3. QRS regions: where the smoothed gradient exceeds 1.5 × the average. Regions shorter than
///    0.4 × the mean region length are dropped.
/// 4. In each region, the local maximum of the cleaned signal with the greatest topographic
///    prominence (SciPy's `find_peaks` and `peak_prominences` within the region) is the R peak,
///    kept only when it lies more than 0.3 s after the previous kept peak (the first must lie
///    more than 0.3 s after sample 0, as in NeuroKit2).
///
/// On ECGs NeuroKit2 simulates at 130 Hz (50–170 bpm, with noise), the peaks are NeuroKit2's own,
/// sample for sample, and the cleaned signal agrees to rounding (`RPeakDetectionTests`).
///
/// Bad input is normal input: samples that are NaN or infinite are replaced by the last finite
/// sample before them (the first finite sample for those at the start: NeuroKit2's
/// `signal_fillmissing(method="both")`); a signal too short for the filters and windows, with
/// no finite sample, or a sampling rate outside ``samplingRateRange`` gives no peaks.
public enum RPeakDetection {
    /// The sampling rates (Hz) the detector accepts: from 20 Hz, where the 0.1 s smoothing
    /// window still spans two samples, to 10 kHz. Outside it (or not finite) every function
    /// returns an empty result.
    public static let samplingRateRange: ClosedRange<Double> = 20...10_000

    /// The R peaks of a whole recording, as sample indices in increasing order (NeuroKit2's
    /// `ecg_peaks(ecg_clean(ecg))["ECG_R_Peaks"]`).
    ///
    /// - Parameters:
    ///   - ecg: The ECG samples in any unit (a Polar H10 sends µV), oldest first. Non-finite
    ///     samples are filled from their neighbours (see ``RPeakDetection``).
    ///   - samplingRate: Samples per second, Hz (130 for a Polar H10). Outside
    ///     ``samplingRateRange`` the result is empty.
    /// - Returns: Indices into `ecg`; empty when the signal is shorter than the 0.75 s window,
    ///   holds no finite sample, or the rate is out of range.
    public static func peaks(in ecg: [Double], samplingRate: Double) -> [Int] {
        guard let parameters = RPeakParameters(samplingRate: samplingRate),
              let clean = cleaned(ecg, parameters: parameters) else { return [] }
        return NeuroKitQRS.peaks(in: clean, parameters: parameters)
    }

    /// The cleaned ECG the peaks are searched in (NeuroKit2's `ecg_clean(method="neurokit")`):
    /// baseline wander removed by the zero-phase 0.5 Hz high-pass, mains hum by the powerline
    /// filter. For plotting the signal the detector saw, or for one's own delineation.
    ///
    /// - Parameters:
    ///   - ecg: The ECG samples, oldest first; non-finite samples filled as in
    ///     ``peaks(in:samplingRate:)``.
    ///   - samplingRate: Samples per second, Hz, within ``samplingRateRange``.
    /// - Returns: One cleaned sample per input sample, or an empty array when the signal is too
    ///   short for the filters' edge padding, holds no finite sample, the rate is out of range,
    ///   or the filtering overflows (samples near the largest Double).
    public static func cleaned(_ ecg: [Double], samplingRate: Double) -> [Double] {
        guard let parameters = RPeakParameters(samplingRate: samplingRate) else { return [] }
        return cleaned(ecg, parameters: parameters) ?? []
    }

    /// RR intervals in milliseconds between consecutive peaks, ready for
    /// ``TimeDomainHRV/init(intervals:)`` or ``ArtifactCorrection/kubios(_:iterative:)``.
    ///
    /// - Parameters:
    ///   - peaks: Peak sample indices in increasing order, as ``peaks(in:samplingRate:)`` or
    ///     ``StreamingRPeakDetector/append(_:)-(Collection<Double>)`` return them. A pair that
    ///     does not increase gives no interval (it is skipped, not a negative or zero interval).
    ///   - samplingRate: The rate the indices count in, Hz, within ``samplingRateRange``.
    /// - Returns: (peaks[k] − peaks[k − 1]) × 1000 / `samplingRate` for each increasing pair,
    ///   in order; empty for fewer than two peaks or a rate out of range.
    public static func rrIntervals(peaks: [Int], samplingRate: Double) -> [Double] {
        guard RPeakParameters(samplingRate: samplingRate) != nil, peaks.count > 1 else { return [] }
        var intervals: [Double] = []
        intervals.reserveCapacity(peaks.count - 1)
        for index in 1..<peaks.count {
            let (difference, overflow) = peaks[index].subtractingReportingOverflow(peaks[index - 1])
            guard !overflow, difference > 0 else { continue }
            intervals.append(Double(difference) * 1000 / samplingRate)
        }
        return intervals
    }

    /// `ecg_clean(method="neurokit")` with missing values filled, `nil` when it cannot run.
    static func cleaned(_ ecg: [Double], parameters: RPeakParameters) -> [Double]? {
        guard let filled = filledMissing(ecg) else { return nil }
        guard let highPassed = SectionCascade(sections: parameters.highPass).zeroPhase(filled),
              let clean = PowerlineFilter.zeroPhase(highPassed, taps: parameters.powerlineTaps),
              clean.allSatisfy(\.isFinite) else { return nil }
        return clean
    }

    /// Non-finite samples replaced by the last finite one before them, leading ones by the first
    /// finite one; `nil` when there is none.
    static func filledMissing(_ ecg: [Double]) -> [Double]? {
        guard let first = ecg.first(where: \.isFinite) else { return nil }
        var filled = ecg
        var last = first
        for index in filled.indices {
            if filled[index].isFinite { last = filled[index] } else { filled[index] = last }
        }
        return filled
    }
}

/// The constants of the method at one sampling rate: window lengths in samples rounded as NumPy's
/// `rint` does (half to even), the high-pass sections and the powerline taps.
struct RPeakParameters: Sendable, Hashable {
    /// NeuroKit2's `smoothwindow`: 0.1 s.
    static let smoothWindow = 0.1
    /// NeuroKit2's `avgwindow`: 0.75 s.
    static let averageWindow = 0.75
    /// NeuroKit2's `gradthreshweight`.
    static let thresholdWeight = 1.5
    /// NeuroKit2's `minlenweight`.
    static let minimumLengthWeight = 0.4
    /// NeuroKit2's `mindelay`: 0.3 s.
    static let minimumDelay = 0.3

    let samplingRate: Double
    let smoothSize: Int
    let averageSize: Int
    let minimumDelaySamples: Int
    let powerlineTaps: Int
    let highPass: [FilterSection]

    init?(samplingRate: Double) {
        guard samplingRate.isFinite, RPeakDetection.samplingRateRange.contains(samplingRate) else { return nil }
        self.samplingRate = samplingRate
        smoothSize = max(Int((Self.smoothWindow * samplingRate).rounded(.toNearestOrEven)), 1)
        averageSize = max(Int((Self.averageWindow * samplingRate).rounded(.toNearestOrEven)), 1)
        minimumDelaySamples = Int((Self.minimumDelay * samplingRate).rounded(.toNearestOrEven))
        powerlineTaps = PowerlineFilter.taps(samplingRate: samplingRate)
        highPass = Butterworth.highPass(order: 5, cutoff: 0.5, samplingRate: samplingRate)
    }

    /// How far a centred boxcar of `size` reaches ahead of its centre (SciPy's
    /// `uniform_filter1d`: size / 2 samples behind, the rest ahead).
    static func reachAhead(size: Int) -> Int { size - 1 - size / 2 }
}

/// `_ecg_findpeaks_neurokit` on a cleaned signal, and the pieces the streaming detector shares.
enum NeuroKitQRS {
    /// The R peaks of a cleaned signal.
    static func peaks(in signal: [Double], parameters: RPeakParameters) -> [Int] {
        let n = signal.count
        guard n >= 2, parameters.averageSize <= n, parameters.smoothSize <= n else { return [] }
        var gradient = [Double](repeating: 0, count: n)
        gradient[0] = abs(signal[1] - signal[0])
        gradient[n - 1] = abs(signal[n - 1] - signal[n - 2])
        if n > 2 {
            for index in 1..<(n - 1) { gradient[index] = abs(signal[index + 1] - signal[index - 1]) / 2 }
        }
        let smooth = boxcar(gradient, size: parameters.smoothSize)
        let average = boxcar(smooth, size: parameters.averageSize)
        var begins: [Int] = [], ends: [Int] = []
        var previous = smooth[0] > RPeakParameters.thresholdWeight * average[0]
        for index in 1..<n {
            let current = smooth[index] > RPeakParameters.thresholdWeight * average[index]
            if !previous && current { begins.append(index - 1) }
            if previous && !current { ends.append(index - 1) }
            previous = current
        }
        guard let firstBegin = begins.first else { return [] }
        ends.removeAll { $0 <= firstBegin }
        let count = min(begins.count, ends.count)
        guard count > 0 else { return [] }
        var total = 0.0
        for index in 0..<count { total += Double(ends[index] - begins[index]) }
        let minimumLength = total / Double(count) * RPeakParameters.minimumLengthWeight
        var peaks: [Int] = []
        var last = 0
        for index in 0..<count {
            let begin = begins[index], end = ends[index]
            guard Double(end - begin) >= minimumLength,
                  let offset = mostProminentMaximum(signal[begin..<end]) else { continue }
            let peak = begin + offset
            if peak - last > parameters.minimumDelaySamples {
                peaks.append(peak)
                last = peak
            }
        }
        return peaks
    }

    /// A centred moving average of `size` samples, the signal's end values repeated beyond its
    /// ends (SciPy's `uniform_filter1d(mode="nearest")`, NeuroKit2's boxcar `signal_smooth`).
    static func boxcar(_ values: [Double], size: Int) -> [Double] {
        guard let last = values.last, size > 1 else { return values }
        var stream = BoxcarStream(size: size)
        var result: [Double] = []
        result.reserveCapacity(values.count)
        for value in values {
            if let mean = stream.push(value)?.mean { result.append(mean) }
        }
        // Past the end, the last value repeated: one more output for each sample pushed.
        for _ in 0..<stream.ahead {
            if let mean = stream.push(last)?.mean { result.append(mean) }
        }
        return result
    }

    /// The offset in `data` of its local maximum with the greatest topographic prominence, the
    /// first of equals; `nil` when it has none. A local maximum is a sample (or the middle of a
    /// flat run, rounded down) with a lower neighbour on each side; its prominence is its height
    /// above the higher of the lowest points between it and the nearest higher sample (or the
    /// end of `data`) on either side (SciPy's `find_peaks(prominence=...)` within the region).
    static func mostProminentMaximum(_ data: ArraySlice<Double>) -> Int? {
        let base = data.startIndex
        let n = data.count
        guard n >= 3 else { return nil }
        var best: Int?
        var bestProminence = -Double.infinity
        var index = 1
        while index < n - 1 {
            if data[base + index - 1] < data[base + index] {
                var ahead = index + 1
                while ahead < n - 1 && data[base + ahead] == data[base + index] { ahead += 1 }
                if data[base + ahead] < data[base + index] {
                    let peak = (index + ahead - 1) / 2
                    let value = prominence(data, peak: peak)
                    if value > bestProminence {
                        best = peak
                        bestProminence = value
                    }
                    index = ahead
                }
            }
            index += 1
        }
        return best
    }

    /// The topographic prominence of the sample at offset `peak` of `data`.
    static func prominence(_ data: ArraySlice<Double>, peak: Int) -> Double {
        let base = data.startIndex
        let height = data[base + peak]
        var leftLowest = height
        var index = peak
        while index >= 0 && data[base + index] <= height {
            leftLowest = min(leftLowest, data[base + index])
            index -= 1
        }
        var rightLowest = height
        index = peak
        while index < data.count && data[base + index] <= height {
            rightLowest = min(rightLowest, data[base + index])
            index += 1
        }
        return height - max(leftLowest, rightLowest)
    }
}
