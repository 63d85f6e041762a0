import RawblePolarCore
import RawbleWire

/// Writes a raw ECG session file, sans I/O: the CSV or JSON lines `rawble ecg --csv` and
/// `--jsonl` append, one sample a line. The caller appends each line to its file; the writer
/// only makes the bytes.
///
/// - CSV: ``header`` once at the top of a new file, then `time,device_time_ns,type,uV,x_mG,y_mG,z_mG,raw`
///   lines: `type` is `ecg` (µV in `uV`), `acc` (x, y, z in mG), `hr` (the strap's own Heart
///   Rate Measurement, its value in hex in `raw`: the RR intervals the strap computed, for a
///   report to set beside the ECG's) or `gap` (the streams stopped and started again, e.g.
///   after a lost link: every field but `time`, when samples resumed, is empty).
/// - JSON lines: `{"time":…,"deviceTime":…,"type":"ecg","uV":104}`,
///   `{"time":…,"deviceTime":…,"type":"acc","x":-187,"y":-28,"z":949}`,
///   `{"time":…,"type":"hr","raw":"1048…"}` and `{"time":…,"type":"gap","seconds":3.25}`.
///
/// A file of several H10s (``labelled``, `rawble ecg A B`, `--all`) names the strap on every
/// line as `rawble hr`'s files of several do (``SessionFileWriter``): CSV has `strap` (its
/// address) and `strap_name` after `time`; a JSON line has `"address"` and `"name"` after `"time"`.
///
/// `time` is the sample's time on the host's clock (ISO 8601 UTC with microseconds): the
/// device's time plus the offset the caller measured when the stream (re)started, so samples
/// keep the device's spacing. `device_time_ns`/`deviceTime` is the device's own (PMD time:
/// nanoseconds since 2000-01-01; an H10 whose clock was never set counts from 2019-01-01).
public struct ECGSessionWriter: Sendable {
    /// The file's format.
    public let format: SessionFileFormat
    /// Whether each line names its strap (a file of several H10s).
    public let labelled: Bool
    /// The strap every line names, when ``labelled`` (empty fields until it is known).
    private let strap: StrapLabel?
    private var timestamps = TimestampCache()

    /// A writer of `format` lines; `labelled`: every line names `strap`.
    public init(format: SessionFileFormat, labelled: Bool = false, strap: StrapLabel? = nil) {
        self.format = format
        self.labelled = labelled
        self.strap = labelled ? strap ?? StrapLabel.unnamed : nil
    }

    /// The CSV header line, newline included; `nil` for JSON lines. Write it only when the
    /// file is new.
    public var header: String? {
        format.header(csv: labelled ? "time,strap,strap_name,device_time_ns,type,uV,x_mG,y_mG,z_mG,raw"
                                    : "time,device_time_ns,type,uV,x_mG,y_mG,z_mG,raw")
    }

    /// The bytes a line's bound grows by for its strap's fields.
    private var labelBytes: Int { strap.map { $0.jsonFields.count + $0.csvFields.count } ?? 0 }

    /// `time` and, in a labelled file, the strap's fields: CSV `time,strap,strap_name,`;
    /// JSON `{"time":"…","address":…,"name":…,`.
    private mutating func startLine(_ line: inout LineWriter, time: Int64) {
        switch format {
        case .csv:
            timestamps.write(unixMicroseconds: time, to: &line)
            line.write(",")
            if let strap { line.write(contentsOf: strap.csvFields) }
        case .jsonLines:
            line.write("{\"time\":\"")
            timestamps.write(unixMicroseconds: time, to: &line)
            line.write("\",")
            if let strap { line.write(contentsOf: strap.jsonFields) }
        }
    }

    /// Appends one ECG sample's line.
    /// - Parameters:
    ///   - microvolts: the sample, µV.
    ///   - deviceTime: its time on the device, PMD time (ns since 2000-01-01).
    ///   - unixMicroseconds: its time on the host's clock, µs since 1970 (UTC).
    ///   - bytes: the buffer the line is appended to; reuse it from line to line.
    public mutating func appendECG(_ microvolts: Int32, deviceTime: UInt64, time unixMicroseconds: Int64,
                                   to bytes: inout [UInt8]) {
        LineWriter.append(to: &bytes, bound: 128 + labelBytes) { line in
            start(&line, type: "ecg", deviceTime: deviceTime, time: unixMicroseconds)
            switch format {
            case .csv:
                line.writeDecimal(Int64(microvolts))
                line.write(",,,,\n")
            case .jsonLines:
                line.write(",\"uV\":")
                line.writeDecimal(Int64(microvolts))
                line.write("}\n")
            }
        }
    }

    /// Appends one acceleration vector's line (x, y, z in mG).
    /// - Parameters:
    ///   - vector: the sample, mG on each axis.
    ///   - deviceTime: its time on the device, PMD time (ns since 2000-01-01).
    ///   - unixMicroseconds: its time on the host's clock, µs since 1970 (UTC).
    ///   - bytes: the buffer the line is appended to.
    public mutating func appendAcceleration(_ vector: PMDAcceleration, deviceTime: UInt64, time unixMicroseconds: Int64,
                                            to bytes: inout [UInt8]) {
        LineWriter.append(to: &bytes, bound: 160 + labelBytes) { line in
            start(&line, type: "acc", deviceTime: deviceTime, time: unixMicroseconds)
            switch format {
            case .csv:
                line.write(",")
                line.writeDecimal(Int64(vector.x))
                line.write(",")
                line.writeDecimal(Int64(vector.y))
                line.write(",")
                line.writeDecimal(Int64(vector.z))
                line.write(",\n")
            case .jsonLines:
                line.write(",\"x\":")
                line.writeDecimal(Int64(vector.x))
                line.write(",\"y\":")
                line.writeDecimal(Int64(vector.y))
                line.write(",\"z\":")
                line.writeDecimal(Int64(vector.z))
                line.write("}\n")
            }
        }
    }

    /// Appends the line that marks a gap: the streams stopped at some time and started again
    /// `milliseconds` later (host time), at `unixMicroseconds`.
    /// - Parameters:
    ///   - milliseconds: how long no sample came, on the host's clock.
    ///   - unixMicroseconds: when the samples resumed, µs since 1970 (UTC).
    ///   - bytes: the buffer the line is appended to.
    public mutating func appendGap(milliseconds: Int64, time unixMicroseconds: Int64, to bytes: inout [UInt8]) {
        let milliseconds = max(0, milliseconds)
        LineWriter.append(to: &bytes, bound: 128 + labelBytes) { line in
            startLine(&line, time: unixMicroseconds)
            switch format {
            case .csv:
                line.write(",gap,,,,,\n")
            case .jsonLines:
                line.write("\"type\":\"gap\",\"seconds\":")
                line.writeDecimal(milliseconds / 1000)
                line.write(".")
                line.writeDecimal(magnitude: UInt64(milliseconds % 1000), width: 3)
                line.write("}\n")
            }
        }
    }

    /// Appends the line of one Heart Rate Measurement the strap sent (its value as received).
    /// - Parameters:
    ///   - raw: the characteristic's value.
    ///   - unixMicroseconds: when it arrived, µs since 1970 (UTC).
    ///   - bytes: the buffer the line is appended to.
    public mutating func appendHeartRate(raw: [UInt8], time unixMicroseconds: Int64, to bytes: inout [UInt8]) {
        LineWriter.append(to: &bytes, bound: 96 + 2 * raw.count + labelBytes) { line in
            startLine(&line, time: unixMicroseconds)
            switch format {
            case .csv:
                line.write(",hr,,,,,")
                line.writeHex(raw)
                line.write("\n")
            case .jsonLines:
                line.write("\"type\":\"hr\",\"raw\":\"")
                line.writeHex(raw)
                line.write("\"}\n")
            }
        }
    }

    /// The fields every sample line starts with, up to the type (CSV: and its comma).
    private mutating func start(_ line: inout LineWriter, type: StaticString, deviceTime: UInt64, time: Int64) {
        startLine(&line, time: time)
        switch format {
        case .csv:
            line.writeDecimal(magnitude: deviceTime)
            line.write(",")
            line.write(type)
            line.write(",")
        case .jsonLines:
            line.write("\"deviceTime\":")
            line.writeDecimal(magnitude: deviceTime)
            line.write(",\"type\":\"")
            line.write(type)
            line.write("\"")
        }
    }
}
