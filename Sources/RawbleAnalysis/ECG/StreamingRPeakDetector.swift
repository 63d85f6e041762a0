/// R-peak detection on a live ECG stream (a Polar H10's PMD frames as they arrive), with
/// NeuroKit2's `_ecg_findpeaks_neurokit` method (Makowski et al. 2021; see ``RPeakDetection``)
/// run sample by sample in bounded memory.
///
/// Why a separate type: the batch function needs the whole recording (its high-pass runs
/// backward from the end, its QRS length threshold averages every region); a strap streams for
/// hours. This detector keeps only a window of a few seconds and reports each peak a bounded
/// time after it happened.
///
/// What differs from the batch method, and why:
/// - The 0.5 Hz high-pass runs once, forward (causal), from rest at the first sample, instead of
///   forward and backward: a backward pass needs the future. Its phase lead moves a peak a few
///   milliseconds early: at 130 Hz about four peaks in five land on the batch method's sample
///   and the rest one sample (7.7 ms) before it; at 1 kHz, two or three samples.
/// - The minimum QRS length (0.4 × the mean region length) uses the mean of the regions seen so
///   far, not of the whole recording.
/// - A QRS region still open after 1 s is abandoned (a lead-off step or saturation, never a
///   QRS complex); that bounds the memory and the latency.
/// - The powerline filter and both boxcar windows are the batch ones exactly (centred, delayed
///   by their reach ahead); at the start the first sample stands for those before it.
///
/// Feeding the samples in chunks of any size gives the same peaks: every sample goes through the
/// same per-sample pipeline.
public struct StreamingRPeakDetector: Sendable, Hashable {
    /// The sampling rate, Hz, as given.
    public let samplingRate: Double
    /// The longest a peak can take to be reported, in samples: the peak at sample p is returned
    /// by the ``append(_:)-(Collection<Double>)`` call that delivers sample p + `maximumLatency`
    /// at the latest (often much sooner: about 0.45 s plus the rest of its QRS region). 187
    /// samples (1.44 s) at 130 Hz; 0 when the sampling rate is out of
    /// ``RPeakDetection/samplingRateRange`` (no peak is ever reported then).
    public let maximumLatency: Int
    /// The samples received so far, counting the non-finite ones: the global index the next
    /// sample will have.
    public private(set) var sampleCount = 0

    private let parameters: RPeakParameters?
    private let maximumRegion: Int
    private var highPass: SectionCascade
    private var leadingMissing = 0
    private var lastFinite: Double?
    private var pipelineCount = 0
    private var highPassed: SampleRing
    private var clean: SampleRing
    private let powerlineKernel: [Double]
    private var smoothing: BoxcarStream
    private var averaging: BoxcarStream
    private var previousInQRS: Bool?
    private var regionBegin: Int?
    private var regionCount = 0
    private var regionLengthTotal = 0.0
    private var lastPeak = 0

    /// A detector for a stream sampled at `samplingRate`.
    ///
    /// - Parameter samplingRate: Samples per second, Hz (130 for a Polar H10). Outside
    ///   ``RPeakDetection/samplingRateRange`` or not finite, the detector accepts samples and
    ///   reports no peak.
    public init(samplingRate: Double) {
        self.samplingRate = samplingRate
        let parameters = RPeakParameters(samplingRate: samplingRate)
        self.parameters = parameters
        let taps = parameters?.powerlineTaps ?? 1
        let smoothSize = parameters?.smoothSize ?? 1
        let averageSize = parameters?.averageSize ?? 1
        let region = parameters.map { Int($0.samplingRate.rounded(.toNearestOrEven)) } ?? 0
        maximumRegion = region
        let smoothAhead = RPeakParameters.reachAhead(size: smoothSize)
        let averageAhead = RPeakParameters.reachAhead(size: averageSize)
        maximumLatency = parameters == nil ? 0 : region + averageAhead + smoothAhead + taps + 1
        highPass = SectionCascade(sections: parameters?.highPass ?? [])
        powerlineKernel = PowerlineFilter.kernel(taps: taps)
        let live = parameters != nil
        highPassed = SampleRing(capacity: live ? 2 * taps : 0)
        clean = SampleRing(capacity: live ? region + averageAhead + smoothAhead + 8 : 0)
        smoothing = BoxcarStream(size: live ? smoothSize : 0)
        averaging = BoxcarStream(size: live ? averageSize : 0)
    }

    /// Feeds the next samples and returns the peaks they confirmed.
    ///
    /// - Parameter samples: The next ECG samples, oldest first, in any unit (µV from a Polar
    ///   H10). A non-finite sample stands for the last finite one (leading ones for the first
    ///   finite one, once it comes); it still takes its place in the index count.
    /// - Returns: The newly confirmed peaks as global sample indices (counting from the first
    ///   sample ever appended), increasing, each at most ``maximumLatency`` samples older than
    ///   the newest sample; empty when none was confirmed.
    public mutating func append(_ samples: some Collection<Double>) -> [Int] {
        var peaks: [Int] = []
        for sample in samples { feed(sample, into: &peaks) }
        return peaks
    }

    /// Feeds the next samples and returns the peaks they confirmed, as
    /// ``append(_:)-(Collection<Double>)`` does, for an array: no generic dispatch per sample
    /// (a live stream's path, one frame at a time, from another module).
    public mutating func append(_ samples: [Double]) -> [Int] {
        var peaks: [Int] = []
        for sample in samples { feed(sample, into: &peaks) }
        return peaks
    }

    private mutating func feed(_ sample: Double, into peaks: inout [Int]) {
        sampleCount += 1
        guard parameters != nil else { return }
        if sample.isFinite {
            if lastFinite == nil {
                // The samples before the first finite one take its value (a backward fill).
                for _ in 0..<leadingMissing { if let peak = process(sample) { peaks.append(peak) } }
                leadingMissing = 0
            }
            lastFinite = sample
            if let peak = process(sample) { peaks.append(peak) }
        } else if let lastFinite {
            if let peak = process(lastFinite) { peaks.append(peak) }
        } else {
            leadingMissing += 1
        }
    }

    /// The samples held in the detector's windows, a constant fixed by the sampling rate
    /// (about 2.3 s of signal at 130 Hz), however long the stream: for tests of the memory bound.
    package var bufferedSampleCount: Int {
        highPassed.capacity + clean.capacity + smoothing.capacity + averaging.capacity
    }

    /// One finite sample through the pipeline; the peak it confirmed, if any.
    private mutating func process(_ sample: Double) -> Int? {
        guard let parameters else { return nil }
        let index = pipelineCount
        pipelineCount += 1
        if index == 0 { highPass.settle(at: sample) }
        var filtered = highPass.step(sample)
        if !filtered.isFinite {
            // Overflow (samples near the largest Double): start again from rest at this sample.
            highPass.settle(at: sample)
            filtered = 0
        }
        highPassed.append(filtered)
        // The powerline kernel is centred: the clean sample it completes is taps − 1 behind.
        let reach = parameters.powerlineTaps - 1
        let cleanIndex = index - reach
        guard cleanIndex >= 0 else { return nil }
        var value = 0.0
        for (offset, weight) in powerlineKernel.enumerated() {
            let position = cleanIndex - reach + offset
            value += weight * (position < 0 ? highPassed.first : highPassed[position])
        }
        if !value.isFinite { value = 0 }
        clean.append(value)
        // The gradient at cleanIndex − 1 is now known (at 0: the forward difference).
        guard cleanIndex >= 1 else { return nil }
        let gradientIndex = cleanIndex - 1
        let gradient = gradientIndex == 0
            ? abs(clean[1] - clean[0])
            : abs(clean[cleanIndex] - clean[cleanIndex - 2]) / 2
        guard let smooth = smoothing.push(gradient) else { return nil }
        guard let average = averaging.push(smooth.mean) else { return nil }
        let inQRS = average.centre > RPeakParameters.thresholdWeight * average.mean
        let decisionIndex = averaging.outputCount - 1
        return decide(at: decisionIndex, inQRS: inQRS, parameters: parameters)
    }

    /// The QRS region bookkeeping at `index` (where the smoothed gradient is `inQRS` above the
    /// threshold): a region opens on the sample before the rise, closes on its last sample in.
    private mutating func decide(at index: Int, inQRS: Bool, parameters: RPeakParameters) -> Int? {
        defer {
            previousInQRS = inQRS
            if let begin = regionBegin, index - begin > maximumRegion { regionBegin = nil }
        }
        guard let previous = previousInQRS else { return nil }
        if !previous && inQRS { regionBegin = index - 1 }
        guard previous && !inQRS, let begin = regionBegin else { return nil }
        regionBegin = nil
        let end = index - 1
        regionCount += 1
        regionLengthTotal += Double(end - begin)
        let minimumLength = regionLengthTotal / Double(regionCount) * RPeakParameters.minimumLengthWeight
        guard Double(end - begin) >= minimumLength, begin >= clean.oldestIndex, end <= clean.count else { return nil }
        let data = (begin..<end).map { clean[$0] }
        guard let offset = NeuroKitQRS.mostProminentMaximum(data[...]) else { return nil }
        let peak = begin + offset
        guard peak - lastPeak > parameters.minimumDelaySamples else { return nil }
        lastPeak = peak
        return peak
    }
}

/// The last `capacity` values of a stream, addressed by their index in the stream.
struct SampleRing: Sendable, Hashable {
    private var storage: [Double]
    /// How many values were ever appended.
    private(set) var count = 0
    /// The first value ever appended (0 before any).
    private(set) var first = 0.0

    init(capacity: Int) { storage = [Double](repeating: 0, count: max(capacity, 0)) }

    var capacity: Int { storage.count }

    /// The index of the oldest value still held.
    var oldestIndex: Int { max(count - storage.count, 0) }

    mutating func append(_ value: Double) {
        guard !storage.isEmpty else { return }
        if count == 0 { first = value }
        storage[count % storage.count] = value
        count += 1
    }

    /// The value at stream index `index`, which must lie in `oldestIndex..<count`.
    subscript(index: Int) -> Double {
        storage.isEmpty ? 0 : storage[index % storage.count]
    }
}

/// A centred moving average over a stream (SciPy's `uniform_filter1d`, `mode="nearest"` at the
/// start): push x₀, x₁, …; once x_{k + ahead} is in, the push returns the mean over
/// x_{k − behind} … x_{k + ahead} and x_k itself. The first value stands for those before it.
/// The running sum is recomputed from the window every 4096 pushes, so rounding cannot drift.
struct BoxcarStream: Sendable, Hashable {
    let size: Int
    /// Samples the window reaches behind its centre: size / 2.
    let behind: Int
    /// Samples the window reaches ahead of its centre.
    let ahead: Int
    private var window: SampleRing
    private var sum = 0.0
    private var sinceRecompute = 0
    /// How many means were returned.
    private(set) var outputCount = 0

    init(size: Int) {
        self.size = max(size, 0)
        behind = max(size, 0) / 2
        ahead = RPeakParameters.reachAhead(size: max(size, 1))
        window = SampleRing(capacity: max(size, 0))
    }

    var capacity: Int { window.capacity }

    /// Adds the next value; the mean and centre value of the window now complete, if one is.
    mutating func push(_ value: Double) -> (mean: Double, centre: Double)? {
        guard size > 0 else { return nil }
        if window.count == 0 { for _ in 0..<behind { add(value) } }
        add(value)
        guard window.count >= size else { return nil }
        outputCount += 1
        return (sum / Double(size), window[window.count - 1 - ahead])
    }

    private mutating func add(_ value: Double) {
        if window.count >= size { sum -= window[window.count - size] }
        window.append(value)
        sum += value
        sinceRecompute += 1
        if sinceRecompute >= 4096 || !sum.isFinite {
            sinceRecompute = 0
            sum = 0
            for index in window.oldestIndex..<window.count { sum += window[index] }
        }
    }
}
