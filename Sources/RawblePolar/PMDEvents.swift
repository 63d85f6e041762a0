import RawbleHeartRate
import RawblePolarCore
import RawbleWire

/// One ECG frame's samples with their times.
public struct PMDECGFrame: Hashable, Sendable {
    /// The frame as received (header and payload; the payload is a slice of the notification).
    public let frame: PMDDataFrame
    /// The samples in µV, oldest first, decoded on access from the frame's bytes.
    public let microvolts: PMDECGSamples
    /// Each sample's time, PMD time (ns since 2000-01-01), from the frame's timestamp as
    /// `PMDSampleClock` computes it.
    public let times: PMDSampleTimes
}

/// One acceleration frame's vectors with their times.
public struct PMDAccelerationFrame: Hashable, Sendable {
    /// The frame as received.
    public let frame: PMDDataFrame
    /// The vectors (x, y, z in mG), oldest first; delta-compressed frames already decoded and
    /// scaled by the factor the start response gave.
    public let vectors: PMDAccelerationSamples
    /// Each vector's time, PMD time (ns since 2000-01-01).
    public let times: PMDSampleTimes
}

/// What the Polar Measurement Data client hands on: a frame of samples, a frame it could not
/// decode, or the device's notice that it stopped streams.
public enum PMDEvent: Hashable, Sendable {
    /// ECG samples.
    case ecg(PMDECGFrame)
    /// Acceleration vectors.
    case acceleration(PMDAccelerationFrame)
    /// A well-formed frame of another measurement (PPI, PPG, …), not decoded further here.
    case frame(PMDDataFrame)
    /// A data notification that does not decode: its bytes and the decoder's error. The stream
    /// goes on after it.
    case invalid(raw: [UInt8], error: WireError)
    /// The device stopped these streams itself (the control point's `01` notice). When no
    /// started stream is left, the sequence then ends with ``PMDError/stoppedByDevice(_:)``.
    case stopped([PMDStream])
}

/// The events of ``PMDClient/events()``, as an `AsyncSequence` for one consumer: each frame is
/// decoded where the bearer delivers it and handed to the consumer (or buffered, the newest
/// ``PMDClient/bufferLimit`` kept). Ends with a ``PMDError``: the link ended, the device
/// stopped every stream, or a started stream stayed silent; normally after
/// ``PMDClient/close()``; at once, returning `nil`, when the consuming task is cancelled.
public struct PMDEvents: AsyncSequence, Sendable {
    public typealias Element = PMDEvent
    public typealias Failure = any Error

    let consumer: Consumer

    init(channel: EventChannel<PMDEvent>) {
        consumer = Consumer(channel)
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(consumer: consumer)
    }

    public struct Iterator: AsyncIteratorProtocol {
        let consumer: Consumer

        public mutating func next() async throws -> PMDEvent? {
            try await consumer.channel.next()
        }

        /// Events already received that `next()` returns without waiting (0: the next call
        /// waits for the device): a consumer that writes in batches flushes at 0.
        public var bufferedCount: Int { consumer.channel.bufferedCount }
    }

    /// The sequence's and its iterators' hold on the channel: the sequence ends once the last
    /// of them is gone.
    final class Consumer: Sendable {
        let channel: EventChannel<PMDEvent>
        init(_ channel: EventChannel<PMDEvent>) { self.channel = channel }
        deinit { channel.cancel() }
    }
}
