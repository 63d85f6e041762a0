import RawbleWire

/// An ECG session (``ECGRecording``) as an EDF+ file (``EDFPlusWriter``), sans I/O: the H10's
/// ECG (130 Hz, µV) and, when the session has any, its acceleration (X, Y, Z at 200 Hz, mG),
/// with annotations for the R-peaks found (`R`) and the gaps (`gap`, with their duration).
///
/// Data records last 1 s: 130 ECG and 200 acceleration samples each. Each run of ECG (between
/// gaps) starts a record at its first sample's host time; its samples follow at the nominal
/// rate (sample i at the run's start + i/130 s: the H10's own clock runs up to ±2 % from it, so
/// a long run's EDF time drifts from the host's by as much), its last record held at its last
/// value to the record's end. One run is `EDF+C`; several are `EDF+D`, each run's records at
/// their own onset (a run that would overlap the one before starts where it ends). The
/// acceleration of a run's time is placed from its first vector's time at 200 Hz, held at its
/// first and last value where it has none. Digital values are physical ones (1 µV, 1 mG a
/// step) over ±32767: far beyond the H10's ECG (some ±20 mV) and its accelerometer's widest
/// range (±8 G); a value beyond is clipped, and counted.
public struct ECGEDFExport: Sendable {
    /// The ECG's nominal rate and samples per record.
    public static let ecgRate = 130
    /// The acceleration's nominal rate and samples per record.
    public static let accelerationRate = 200
    /// The physical (and digital) range of every signal: ±32767 µV or mG.
    public static let range = 32767

    /// The file's bytes.
    public private(set) var bytes: [UInt8] = []
    /// Data records written (seconds of signal).
    public private(set) var recordCount = 0
    /// Whether it is `EDF+C` (one run).
    public private(set) var continuous = true
    /// Whether the acceleration signals are in it.
    public private(set) var hasAcceleration = false
    /// R-peak and gap annotations written.
    public private(set) var peakCount = 0
    public private(set) var gapCount = 0
    /// Samples beyond ±``range``, clipped (ECG and acceleration).
    public private(set) var clippedCount = 0
    /// The file's start, µs since 1970 (the first sample's host time).
    public private(set) var startTime: Int64 = 0

    /// The session as EDF+, or `nil` when it holds no ECG sample.
    /// - Parameters:
    ///   - session: an ECG session (one strap's).
    ///   - peaks: each run's R-peaks, sample indices (as `report` finds them).
    ///   - utcOffset: the local time's offset from UTC, seconds (the header's start is local time).
    ///   - equipment: the recording field's equipment (the strap's name).
    public init?(session: ECGRecording, peaks: [[Int]], utcOffset: Int, equipment: String?) {
        let runs = session.runs
        guard let first = runs.first, !first.microvolts.isEmpty else { return nil }
        hasAcceleration = !session.acceleration.isEmpty
        continuous = runs.count == 1
        // The header's start: the first sample's whole second; the first record's onset the rest.
        let startSecond = Self.floorDivide(first.startTime, 1_000_000)
        startTime = first.startTime
        let origin = startSecond * 1_000_000

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

        var records: [EDFDataRecord] = []
        var annotations: [EDFAnnotation] = []
        var previousEnd: Int64 = .min
        var previousSamplesEnd: Int64?
        var accelerationIndex = 0
        let acceleration = session.acceleration
        for (runIndex, run) in runs.enumerated() {
            let count = run.microvolts.count
            let recordsInRun = (count + Self.ecgRate - 1) / Self.ecgRate
            // µs from the file's start; never before the previous run's last record ends.
            let onset = max(run.startTime &- origin, previousEnd)
            if let samplesEnd = previousSamplesEnd {
                annotations.append(EDFAnnotation(onset: samplesEnd * 1000, duration: max(onset - samplesEnd, 0) * 1000, text: "gap"))
                gapCount += 1
            }
            previousEnd = onset + Int64(recordsInRun) * 1_000_000
            previousSamplesEnd = onset + (Int64(count) * 1_000_000 + Int64(Self.ecgRate) / 2) / Int64(Self.ecgRate)

            // This run's acceleration: the vectors whose host time falls in its records' span.
            var axes: [[Int16]] = []
            if hasAcceleration {
                let span = Int64(recordsInRun) * 1_000_000
                while accelerationIndex < acceleration.count, acceleration[accelerationIndex].time < run.startTime {
                    accelerationIndex += 1
                }
                var within: [ECGAccelerationSample] = []
                while accelerationIndex < acceleration.count, acceleration[accelerationIndex].time < run.startTime &+ span {
                    within.append(acceleration[accelerationIndex])
                    accelerationIndex += 1
                }
                axes = placeAcceleration(within, runStart: run.startTime, length: recordsInRun * Self.accelerationRate)
            }

            for record in 0..<recordsInRun {
                let lower = record * Self.ecgRate, upper = min(lower + Self.ecgRate, count)
                var samples = [run.microvolts[lower..<upper].map { clip($0) }]
                for axis in axes {
                    let start = record * Self.accelerationRate
                    samples.append(Array(axis[start..<(start + Self.accelerationRate)]))
                }
                records.append(EDFDataRecord(onset: (onset + Int64(record) * 1_000_000) * 1000, samples: samples))
            }
            for peak in (runIndex < peaks.count ? peaks[runIndex] : []) where peak >= 0 && peak < count {
                annotations.append(EDFAnnotation(onset: onset * 1000 + Self.nanoseconds(sample: peak), text: "R"))
                peakCount += 1
            }
        }
        recordCount = records.count
        bytes = EDFPlusWriter.file(start: EDFStart(unixSeconds: startSecond, utcOffset: utcOffset),
                                   recordingEquipment: equipment ?? "Polar H10", continuous: continuous,
                                   signals: signals, records: records, annotations: annotations)
    }

    /// Sample `index`'s time from its run's start at the nominal 130 Hz, ns (rounded).
    public static func nanoseconds(sample index: Int) -> Int64 {
        (Int64(index) * 1_000_000_000 + Int64(ecgRate) / 2) / Int64(ecgRate)
    }

    /// The vectors as three axes of `length` samples at 200 Hz from `runStart`: the first at
    /// its time's place, the rest after it one by one, held at the first and last value.
    private mutating func placeAcceleration(_ vectors: [ECGAccelerationSample], runStart: Int64, length: Int) -> [[Int16]] {
        guard let first = vectors.first else {
            return [[Int16]](repeating: [Int16](repeating: 0, count: length), count: 3)
        }
        let place = Int(min(max((first.time &- runStart) * Int64(Self.accelerationRate) / 1_000_000, 0), Int64(length)))
        let placed = vectors.prefix(length - place)
        let last = placed.last ?? first
        return [\.x, \.y, \.z].map { (axis: KeyPath<ECGAccelerationSample, Int32>) in
            var samples = [Int16](repeating: Self.clamp(first[keyPath: axis]), count: place)
            for vector in placed { samples.append(clip(vector[keyPath: axis])) }
            samples += repeatElement(Self.clamp(last[keyPath: axis]), count: length - samples.count)
            return samples
        }
    }

    /// `value` as a digital sample: itself within ±``range``, clipped (and counted) beyond.
    private mutating func clip(_ value: Int32) -> Int16 {
        if abs(Int64(value)) > Int64(Self.range) { clippedCount += 1 }
        return Self.clamp(value)
    }

    /// `value` within ±``range``.
    private static func clamp(_ value: Int32) -> Int16 {
        Int16(min(max(value, -Int32(range)), Int32(range)))
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }
}
