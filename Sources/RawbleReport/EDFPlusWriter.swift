import RawbleWire

/// One ordinary signal of an EDF+ file: what its header says of it. Its samples are 16-bit
/// digital values; a reader turns them into physical ones by the line through
/// (``digitalMinimum``, ``physicalMinimum``) and (``digitalMaximum``, ``physicalMaximum``).
public struct EDFSignal: Hashable, Sendable {
    /// The label (16 characters at most; EDF+ asks for "type specification", e.g. `ECG`).
    public var label: String
    /// The transducer (80 characters at most).
    public var transducer: String
    /// The physical dimension (8 at most), e.g. `uV`.
    public var physicalDimension: String
    /// The physical value of ``digitalMinimum``.
    public var physicalMinimum: Int
    /// The physical value of ``digitalMaximum``.
    public var physicalMaximum: Int
    /// The smallest digital value.
    public var digitalMinimum: Int16
    /// The largest digital value.
    public var digitalMaximum: Int16
    /// The filters the signal went through (80 at most).
    public var prefiltering: String
    /// Samples in each data record.
    public var samplesPerRecord: Int

    /// A signal.
    /// - Parameters:
    ///   - label: its label.
    ///   - transducer: the transducer.
    ///   - physicalDimension: the unit.
    ///   - physicalMinimum: the physical value of `digitalMinimum`.
    ///   - physicalMaximum: the physical value of `digitalMaximum`.
    ///   - digitalMinimum: the smallest digital value.
    ///   - digitalMaximum: the largest digital value.
    ///   - prefiltering: its filters.
    ///   - samplesPerRecord: samples in each data record.
    public init(label: String, transducer: String, physicalDimension: String, physicalMinimum: Int, physicalMaximum: Int,
                digitalMinimum: Int16, digitalMaximum: Int16, prefiltering: String = "", samplesPerRecord: Int) {
        self.label = label
        self.transducer = transducer
        self.physicalDimension = physicalDimension
        self.physicalMinimum = physicalMinimum
        self.physicalMaximum = physicalMaximum
        self.digitalMinimum = digitalMinimum
        self.digitalMaximum = digitalMaximum
        self.prefiltering = prefiltering
        self.samplesPerRecord = samplesPerRecord
    }
}

/// One annotation of an EDF+ file: a Time-stamped Annotation List entry.
public struct EDFAnnotation: Hashable, Sendable {
    /// Its onset from the file's start time, ns.
    public var onset: Int64
    /// How long it lasts, ns (`nil`: no duration).
    public var duration: Int64?
    /// Its text (UTF-8; no byte below 0x20 ends up in the file).
    public var text: String

    /// An annotation.
    /// - Parameters:
    ///   - onset: ns from the file's start.
    ///   - duration: its length in ns, if it has one.
    ///   - text: what it says.
    public init(onset: Int64, duration: Int64? = nil, text: String) {
        self.onset = onset
        self.duration = duration
        self.text = text
    }
}

/// One data record: its onset from the file's start (ns) and each ordinary signal's samples.
public struct EDFDataRecord: Hashable, Sendable {
    /// The record's start, ns from the file's start time (its time-keeping TAL).
    public var onset: Int64
    /// The samples of each ordinary signal, in the order of the signals, as many as each
    /// signal's ``EDFSignal/samplesPerRecord`` (a shorter array is padded with its last value,
    /// a longer one cut).
    public var samples: [[Int16]]

    /// A record.
    /// - Parameters:
    ///   - onset: ns from the file's start.
    ///   - samples: each signal's digital samples.
    public init(onset: Int64, samples: [[Int16]]) {
        self.onset = onset
        self.samples = samples
    }
}

/// The local date and time an EDF+ file starts at (its header's `startdate` and `starttime`;
/// EDF+ asks for the local time where the recording was made).
public struct EDFStart: Hashable, Sendable {
    /// The civil date.
    public var date: CivilDate
    /// Seconds since midnight, 0..<86400.
    public var secondOfDay: Int64

    /// The start from Unix seconds and the local time's offset from UTC.
    /// - Parameters:
    ///   - unixSeconds: the start, seconds since 1970 (UTC).
    ///   - utcOffset: the local time's offset from UTC, seconds.
    public init(unixSeconds: Int64, utcOffset: Int) {
        let (days, second) = CivilDate.split(unixSeconds: unixSeconds &+ Int64(utcOffset))
        date = CivilDate(daysSince1970: days)
        secondOfDay = second
    }
}

/// Writes an EDF+ file (edfplus.info: EDF's 256-byte header and a 256-byte header per signal,
/// then the data records, each holding every signal's 16-bit little-endian samples and an
/// `EDF Annotations` signal of Time-stamped Annotation Lists), sans I/O: values in, bytes out.
///
/// Each record's annotation signal starts with its time-keeping TAL (`+onset` and an empty
/// annotation); the annotations follow in the record that holds their onset (the last record
/// that starts at or before it). The annotation signal is as long in every record as the
/// record that needs most.
public enum EDFPlusWriter {
    /// The annotation signal's label, which EDF+ readers look for.
    public static let annotationLabel = "EDF Annotations"

    /// The whole file.
    /// - Parameters:
    ///   - start: the local date and time of the file's start (whole seconds; a record's onset
    ///     gives the fraction).
    ///   - patient: the patient field's subfields (code, sex, birthdate, name; `X` for unknown).
    ///   - recordingEquipment: the equipment subfield of the recording field.
    ///   - continuous: `EDF+C` (records back to back) or `EDF+D` (each at its own onset).
    ///   - recordDuration: seconds a data record lasts (a whole number).
    ///   - signals: the ordinary signals.
    ///   - records: the data records, in time order.
    ///   - annotations: the annotations, any order (written in onset order).
    /// - Returns: the file's bytes.
    public static func file(start: EDFStart, patient: [String] = ["X", "X", "X", "X"], recordingEquipment: String,
                            continuous: Bool, recordDuration: Int = 1, signals: [EDFSignal], records: [EDFDataRecord],
                            annotations: [EDFAnnotation]) -> [UInt8] {
        // Each annotation into the last record starting at or before its onset (the first when none).
        var perRecord = [[EDFAnnotation]](repeating: [], count: records.count)
        if !records.isEmpty {
            for annotation in annotations.sorted(by: { $0.onset < $1.onset }) {
                var low = 0, high = records.count - 1
                while low < high {
                    let middle = (low + high + 1) / 2
                    if records[middle].onset <= annotation.onset { low = middle } else { high = middle - 1 }
                }
                perRecord[low].append(annotation)
            }
        }
        let lists = records.indices.map { index in
            var list = timeKeeping(records[index].onset)
            for annotation in perRecord[index] { list += tal(annotation) }
            return list
        }
        let annotationSamples = max(1, ((lists.map(\.count).max() ?? 0) + 1) / 2)
        let annotationSignal = EDFSignal(label: annotationLabel, transducer: "", physicalDimension: "",
                                         physicalMinimum: -1, physicalMaximum: 1, digitalMinimum: -32768, digitalMaximum: 32767,
                                         samplesPerRecord: annotationSamples)
        let all = signals + [annotationSignal]

        var bytes: [UInt8] = []
        let recordBytes = all.reduce(0) { $0 + 2 * $1.samplesPerRecord }
        bytes.reserveCapacity(256 * (all.count + 1) + recordBytes * records.count)
        field("0", 8, &bytes)
        field(patient.map(subfield).joined(separator: " "), 80, &bytes)
        let month = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"][Int(start.date.month - 1)]
        field("Startdate \(two(start.date.day))-\(month)-\(start.date.year) X X \(subfield(recordingEquipment))", 80, &bytes)
        field("\(two(start.date.day)).\(two(start.date.month)).\(two(start.date.year % 100))", 8, &bytes)
        field("\(two(start.secondOfDay / 3600)).\(two(start.secondOfDay / 60 % 60)).\(two(start.secondOfDay % 60))", 8, &bytes)
        field(String(256 * (all.count + 1)), 8, &bytes)
        field(continuous ? "EDF+C" : "EDF+D", 44, &bytes)
        field(String(records.count), 8, &bytes)
        field(String(recordDuration), 8, &bytes)
        field(String(all.count), 4, &bytes)
        for signal in all { field(signal.label, 16, &bytes) }
        for signal in all { field(signal.transducer, 80, &bytes) }
        for signal in all { field(signal.physicalDimension, 8, &bytes) }
        for signal in all { field(String(signal.physicalMinimum), 8, &bytes) }
        for signal in all { field(String(signal.physicalMaximum), 8, &bytes) }
        for signal in all { field(String(signal.digitalMinimum), 8, &bytes) }
        for signal in all { field(String(signal.digitalMaximum), 8, &bytes) }
        for signal in all { field(signal.prefiltering, 80, &bytes) }
        for signal in all { field(String(signal.samplesPerRecord), 8, &bytes) }
        for _ in all { field("", 32, &bytes) }

        for (record, list) in zip(records, lists) {
            for (index, signal) in signals.enumerated() {
                let samples = index < record.samples.count ? record.samples[index] : []
                let pad = samples.last ?? 0
                for offset in 0..<signal.samplesPerRecord {
                    let value = offset < samples.count ? samples[offset] : pad
                    let bits = UInt16(bitPattern: value)
                    bytes.append(UInt8(truncatingIfNeeded: bits))
                    bytes.append(UInt8(truncatingIfNeeded: bits >> 8))
                }
            }
            bytes += list
            bytes += repeatElement(0, count: 2 * annotationSamples - list.count)
        }
        return bytes
    }

    /// A record's time-keeping TAL: `+onset` `0x14` `0x14` `0x00`.
    static func timeKeeping(_ onset: Int64) -> [UInt8] {
        Array(seconds(onset, signed: true).utf8) + [0x14, 0x14, 0x00]
    }

    /// An annotation's TAL: `+onset` (`0x15` duration) `0x14` text `0x14` `0x00`.
    static func tal(_ annotation: EDFAnnotation) -> [UInt8] {
        var bytes = Array(seconds(annotation.onset, signed: true).utf8)
        if let duration = annotation.duration {
            bytes.append(0x15)
            bytes += Array(seconds(max(duration, 0), signed: false).utf8)
        }
        bytes.append(0x14)
        bytes += annotation.text.utf8.map { $0 < 0x20 ? UInt8(ascii: " ") : $0 }
        bytes += [0x14, 0x00]
        return bytes
    }

    /// `ns` as seconds in decimal: a sign when asked (EDF+ onsets have one), no trailing zeros
    /// after the point, no point for whole seconds.
    static func seconds(_ ns: Int64, signed: Bool) -> String {
        let magnitude = ns.magnitude
        var text = signed || ns < 0 ? (ns < 0 ? "-" : "+") : ""
        text += String(magnitude / 1_000_000_000)
        var fraction = magnitude % 1_000_000_000
        guard fraction > 0 else { return text }
        var digits = 9
        while fraction % 10 == 0 { fraction /= 10; digits -= 1 }
        let written = String(fraction)
        return text + "." + String(repeating: "0", count: digits - written.count) + written
    }

    /// A field: printable ASCII (others become `_`), left-justified, space-padded, cut to `width`.
    static func field(_ text: String, _ width: Int, _ bytes: inout [UInt8]) {
        var count = 0
        for byte in text.utf8.prefix(width) {
            bytes.append((0x20...0x7E).contains(byte) ? byte : UInt8(ascii: "_"))
            count += 1
        }
        bytes += repeatElement(UInt8(ascii: " "), count: width - count)
    }

    /// A subfield of the patient or recording field: spaces become `_` (EDF+ separates
    /// subfields with spaces), empty is `X`.
    static func subfield(_ text: String) -> String {
        let joined = text.split(separator: " ").joined(separator: "_")
        return joined.isEmpty ? "X" : joined
    }

    private static func two(_ value: Int64) -> String {
        value < 10 ? "0\(value)" : String(value)
    }
}
