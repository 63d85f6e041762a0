import RawbleWire

/// An ECG session (``ECGRecording``) as an EDF+ file (``EDFPlusWriter``), sans I/O: the H10's
/// ECG (130 Hz, µV) and, when the session has any, its acceleration (X, Y, Z at 200 Hz, mG),
/// with annotations for the R-peaks found (`R`) and the gaps (`gap`, with their duration).
///
/// The file is `EDF+C`, one timeline from the first ECG sample (its host time is the header's
/// start and the first record's onset), in data records of 1 s: 130 ECG and 200 acceleration
/// samples each. Each run of ECG (between gaps) starts at the sample its first sample's host
/// time falls on, and its samples follow at the nominal rate (the H10's own clock runs up to
/// ±2 % from it, so a long run's EDF time drifts from the host's by as much; a run that would
/// overlap the one before starts where it ends; a gap over ``longestGap`` is shortened to it).
/// The acceleration is placed the same way, each run of it (vectors less than 1 s apart) from
/// its first vector's host time within the run of ECG it falls in (vectors before the first
/// ECG sample are left out). Where a signal
/// has no sample (a gap, before its first, after its last) it is 0, and a `gap` annotation
/// spans each gap. Not `EDF+D`, which would leave the gaps out: EDFlib (pyedflib and the tools
/// built on it) refuses to read discontinuous files.
///
/// Digital values are physical ones (1 µV, 1 mG a step) over ±32767: far beyond the H10's ECG
/// (some ±20 mV) and its accelerometer's widest range (±8 G); a value beyond is clipped, and
/// counted.
public struct ECGEDFExport: Sendable {
    /// The ECG's nominal rate and samples per record.
    public static let ecgRate = 130
    /// The acceleration's nominal rate and samples per record.
    public static let accelerationRate = 200
    /// The physical (and digital) range of every signal: ±32767 µV or mG.
    public static let range = 32767
    /// The longest gap filled, seconds: a longer one (a file of days apart) is shortened to it,
    /// its annotation saying how long it was (the file's size stays the signal's).
    public static let longestGap = 3600
    /// Acceleration vectors further apart than this (µs) start a new run of them.
    public static let accelerationBreak: Int64 = 1_000_000

    /// The file's bytes.
    public private(set) var bytes: [UInt8] = []
    /// Data records written (seconds of signal).
    public private(set) var recordCount = 0
    /// Whether the acceleration signals are in it.
    public private(set) var hasAcceleration = false
    /// R-peak annotations written.
    public private(set) var peakCount = 0
    /// Gap annotations written.
    public private(set) var gapCount = 0
    /// Samples beyond ±``range``, clipped (ECG and acceleration).
    public private(set) var clippedCount = 0
    /// Where each run of ECG starts in the file, samples from its first (at 130 Hz).
    public private(set) var runPositions: [Int] = []

    /// The session as EDF+, or `nil` when it holds no ECG sample.
    /// - Parameters:
    ///   - session: an ECG session (one strap's).
    ///   - peaks: each run's R-peaks, sample indices in the run (as `report` finds them).
    ///   - utcOffset: the local time's offset from UTC, seconds (the header's start is local time).
    ///   - equipment: the recording field's equipment (the strap's name).
    public init?(session: ECGRecording, peaks: [[Int]], utcOffset: Int, equipment: String?) {
        guard let first = session.runs.first, !first.microvolts.isEmpty else { return nil }
        hasAcceleration = !session.acceleration.isEmpty
        // The header's start: the first sample's whole second; the first record's onset the rest.
        let startSecond = Self.floorDivide(first.startTime, 1_000_000)
        let firstOnset = (first.startTime - startSecond * 1_000_000) * 1000

        // The ECG on one timeline, each run at its host time's sample (after the run before).
        var ecg: [Int16] = []
        var annotations: [EDFAnnotation] = []
        for (index, run) in session.runs.enumerated() {
            let wanted = max(Self.samples(from: first.startTime, to: run.startTime, rate: Self.ecgRate), ecg.count)
            let position = min(wanted, ecg.count + Self.longestGap * Self.ecgRate)
            if index > 0 {
                let shortened = wanted > position ? " (shortened from \(EDFPlusWriter.seconds(Self.nanoseconds(wanted - ecg.count, rate: Self.ecgRate), signed: false)) s)" : ""
                annotations.append(EDFAnnotation(onset: firstOnset + Self.nanoseconds(ecg.count, rate: Self.ecgRate),
                                                 duration: Self.nanoseconds(position - ecg.count, rate: Self.ecgRate), text: "gap" + shortened))
                gapCount += 1
            }
            ecg += repeatElement(0, count: position - ecg.count)
            runPositions.append(position)
            for value in run.microvolts { ecg.append(clip(value)) }
            for peak in (index < peaks.count ? peaks[index] : []) where peak >= 0 && peak < run.microvolts.count {
                annotations.append(EDFAnnotation(onset: firstOnset + Self.nanoseconds(position + peak, rate: Self.ecgRate), text: "R"))
                peakCount += 1
            }
        }
        recordCount = (ecg.count + Self.ecgRate - 1) / Self.ecgRate
        ecg += repeatElement(0, count: recordCount * Self.ecgRate - ecg.count)

        // The acceleration on the same timeline, cut at its end.
        var axes: [[Int16]] = []
        if hasAcceleration {
            let length = recordCount * Self.accelerationRate
            axes = [[Int16]](repeating: [], count: 3)
            var previous: Int64?
            for vector in session.acceleration where vector.time >= first.startTime {
                let filled = axes[0].count
                if let time = previous, vector.time > time, vector.time - time <= Self.accelerationBreak {
                    // The next vector of a run.
                } else {
                    // From the ECG run it falls in: where that run starts in the file, plus its time since.
                    let run = session.runs.lastIndex { $0.startTime <= vector.time } ?? 0
                    let start = runPositions[run] * Self.accelerationRate / Self.ecgRate
                    let since = Self.samples(from: session.runs[run].startTime, to: vector.time, rate: Self.accelerationRate)
                    let position = min(max(start + since, filled), length)
                    for axis in 0..<3 { axes[axis] += repeatElement(0, count: position - filled) }
                }
                previous = vector.time
                guard axes[0].count < length else { continue }
                axes[0].append(clip(vector.x))
                axes[1].append(clip(vector.y))
                axes[2].append(clip(vector.z))
            }
            for axis in 0..<3 { axes[axis] += repeatElement(0, count: length - axes[axis].count) }
        }

        var signals = [EDFSignal(label: "ECG", transducer: "Polar H10 chest strap electrodes", physicalDimension: "uV",
                                 physicalMinimum: -Self.range, physicalMaximum: Self.range,
                                 digitalMinimum: -32767, digitalMaximum: 32767, samplesPerRecord: Self.ecgRate)]
        if hasAcceleration {
            for axis in ["X", "Y", "Z"] {
                signals.append(EDFSignal(label: "Accelerometer \(axis)", transducer: "Polar H10 accelerometer",
                                         physicalDimension: "mG", physicalMinimum: -Self.range, physicalMaximum: Self.range,
                                         digitalMinimum: -32767, digitalMaximum: 32767, samplesPerRecord: Self.accelerationRate))
            }
        }
        let records = (0..<recordCount).map { record in
            EDFDataRecord(onset: firstOnset + Int64(record) * 1_000_000_000,
                          samples: [Array(ecg[(record * Self.ecgRate)..<((record + 1) * Self.ecgRate)])] + axes.map { axis in
                              Array(axis[(record * Self.accelerationRate)..<((record + 1) * Self.accelerationRate)])
                          })
        }
        bytes = EDFPlusWriter.file(start: EDFStart(unixSeconds: startSecond, utcOffset: utcOffset),
                                   recordingEquipment: equipment ?? "Polar H10", continuous: true,
                                   signals: signals, records: records, annotations: annotations)
    }

    /// Sample `index`'s time from the file's first sample at `rate` Hz, ns (rounded).
    public static func nanoseconds(_ index: Int, rate: Int) -> Int64 {
        (Int64(index) * 1_000_000_000 + Int64(rate) / 2) / Int64(rate)
    }

    /// The sample at `rate` Hz that host time `time` falls on, counted from `origin` (µs; rounded, 0 before it).
    package static func samples(from origin: Int64, to time: Int64, rate: Int) -> Int {
        let elapsed = time &- origin
        guard elapsed > 0 else { return 0 }
        // Host times come from a file: a product (or its rounding) beyond Int64 is the bound.
        let (product, overflow) = elapsed.multipliedReportingOverflow(by: Int64(rate))
        let (rounded, past) = product.addingReportingOverflow(500_000)
        guard !overflow, !past else { return Int(Int32.max) }
        return Int(min(rounded / 1_000_000, Int64(Int32.max)))
    }

    /// `value` as a digital sample: itself within ±``range``, clipped (and counted) beyond.
    private mutating func clip(_ value: Int32) -> Int16 {
        if abs(Int64(value)) > Int64(Self.range) { clippedCount += 1 }
        return Int16(min(max(value, -Int32(Self.range)), Int32(Self.range)))
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }
}
