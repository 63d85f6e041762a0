// Fuzz target: ECG session files (what `rawble report` reads when the first line is an ECG
// session's: the CSV or JSON lines `rawble ecg` writes, or anything else). Read whole, and again
// in chunks split where the input's first byte says: the same recording either way; every run's
// device times strictly increasing and its two arrays the same length; the counts consistent;
// the kept examples bounded; the file's kind decided without a trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzECGSessionFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = SessionFileKind.detect(bytes)
    let whole: Result<ECGRecording, ECGSessionError>
    do throws(ECGSessionError) {
        whole = .success(try ECGSessionReader.read(bytes))
    } catch {
        whole = .failure(error)
    }
    var reader = ECGSessionReader(keptProblems: 3, maxLineLength: 512)
    let chunk = max(1, Int(bytes.first ?? 1) % 97)
    var records = 0
    var chunked: Result<ECGRecording, ECGSessionError>
    do throws(ECGSessionError) {
        var start = 0
        while start < bytes.count {
            try reader.read(chunk: bytes[start..<min(start + chunk, bytes.count)]) { _ in records += 1 }
            start += chunk
        }
        chunked = .success(try reader.finish { _ in records += 1 })
    } catch {
        chunked = .failure(error)
    }
    if case .success(let read) = whole {
        precondition(read.ecgSampleCount == read.summary.ecgSampleCount && read.ecgSampleCount > 0)
        for run in read.runs {
            precondition(run.deviceTimes.count == run.microvolts.count && !run.deviceTimes.isEmpty)
            for (a, b) in zip(run.deviceTimes, run.deviceTimes.dropFirst()) { precondition(a < b) }
            _ = run.measuredSamplingRate
        }
        precondition(read.gaps.count == read.runs.count - 1)
        precondition(read.summary.heartRateCount == read.strapMeasurements.count)
        precondition(read.summary.strapRRIntervalCount == read.strapMeasurements.reduce(0) { $0 + $1.rrIntervals.count })
        for measurement in read.strapMeasurements { precondition(measurement.rrIntervals.allSatisfy { $0.isFinite && $0 >= 0 }) }
        precondition(read.summary.problems.count <= 10)
        _ = read.summary.leftOut
        // Lines of at most 512 bytes read the same with the smaller bound.
        if case .success(let recording) = chunked, bytes.split(separator: 10).allSatisfy({ $0.count < 512 }) {
            precondition(recording.runs == read.runs && recording.gaps == read.gaps)
            precondition(recording.strapMeasurements == read.strapMeasurements)
            precondition(recording.summary.brokenLineCount == read.summary.brokenLineCount)
        }
    } else if case .failure(let error) = whole {
        _ = error.description
    }
    return 0
}
