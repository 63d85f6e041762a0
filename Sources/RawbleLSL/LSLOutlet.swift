/// One LSL outlet: a stream of float samples that inlets on the network (LabRecorder, a
/// pylsl script) find by its type, name or source ID and receive.
///
/// A push never waits for an inlet: liblsl queues the sample for each connected inlet (up to
/// the outlet's `maxBuffered`, dropping the oldest beyond it) and returns, so an inlet that is
/// slow or gone never stalls the caller. The outlet is withdrawn from the network when this
/// object is released.
public final class LSLOutlet: @unchecked Sendable {
    // `@unchecked`: the handle is a constant; liblsl's outlets may be pushed to from any thread.

    private let library: LSLLibrary
    private let handle: UnsafeMutableRawPointer
    /// Values per sample: the stream's channels.
    public let channelCount: Int

    init(library: LSLLibrary, handle: UnsafeMutableRawPointer, channelCount: Int) {
        self.library = library
        self.handle = handle
        self.channelCount = channelCount
    }

    deinit { library.destroyOutlet(handle) }

    /// Sends one sample, `channelCount` values, with its time on LSL's clock
    /// (``LSLLibrary/localClock()``). A sample of another length is not sent.
    public func push(_ sample: [Float], timestamp: Double) {
        guard sample.count == channelCount, channelCount > 0 else { return }
        sample.withUnsafeBufferPointer { values in
            guard let base = values.baseAddress else { return }
            _ = library.pushSample(handle, base, timestamp, 1)
        }
    }

    /// Sends several samples at once, each with its own time: `values` holds them one after
    /// the other (`channelCount` values each), `timestamps` one per sample. Nothing is sent
    /// when the counts disagree.
    public func push(chunk values: [Float], timestamps: [Double]) {
        guard !timestamps.isEmpty, values.count == timestamps.count * channelCount else { return }
        values.withUnsafeBufferPointer { samples in
            timestamps.withUnsafeBufferPointer { times in
                guard let data = samples.baseAddress, let stamps = times.baseAddress else { return }
                _ = library.pushChunk(handle, data, UInt(samples.count), stamps, 1)
            }
        }
    }
}
