// Fuzz target: session files (what `rawble report` reads: the CSV or JSON lines `rawble hr`
// writes, or anything else). Read whole, and again in chunks split where the input's first
// byte says: the same samples and summary either way; kept samples in time order; every RR
// interval finite and not negative; the counts consistent and the kept examples bounded.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSessionFile(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let whole: Result<(samples: [SessionSample], summary: SessionFileSummary), SessionFileError>
    do throws(SessionFileError) {
        whole = .success(try SessionFileReader.read(bytes, gapThreshold: .seconds(5)))
    } catch {
        whole = .failure(error)
    }
    var reader = SessionFileReader(keptProblems: 3, maxLineLength: 512)
    let chunk = max(1, Int(bytes.first ?? 1) % 97)
    var samples: [SessionSample] = []
    var chunked: Result<SessionFileSummary, SessionFileError>
    do throws(SessionFileError) {
        var start = 0
        while start < bytes.count {
            try reader.read(chunk: bytes[start..<min(start + chunk, bytes.count)]) { samples.append($0) }
            start += chunk
        }
        chunked = .success(try reader.finish { samples.append($0) })
    } catch {
        chunked = .failure(error)
    }
    if case .success(let read) = whole {
        precondition(read.samples.count == read.summary.sampleCount)
        precondition(read.summary.rrIntervalCount == read.samples.reduce(0) { $0 + $1.rrIntervals.count })
        for (a, b) in zip(read.samples, read.samples.dropFirst()) { precondition(a.time <= b.time && a.line < b.line) }
        for sample in read.samples { precondition(sample.rrIntervals.allSatisfy { $0.isFinite && $0 >= 0 }) }
        for gap in read.summary.gaps { precondition(gap.start <= gap.end) }
        precondition(read.summary.problems.count <= 10)
        precondition(read.summary.firstTime == read.samples.first?.time && read.summary.lastTime == read.samples.last?.time)
        _ = read.summary.leftOut
        // Lines of at most 512 bytes read the same with the smaller bound.
        if case .success(let summary) = chunked, bytes.split(separator: 10).allSatisfy({ $0.count < 512 }) {
            precondition(samples == read.samples)
            precondition(summary.sampleCount == read.summary.sampleCount && summary.gaps == read.summary.gaps)
            precondition(summary.brokenLineCount == read.summary.brokenLineCount)
        }
    } else if case .failure(let error) = whole {
        _ = error.description
    }
    return 0
}
