import RawbleGATT
import RawbleGATTCore
import RawbleWire
import Synchronization

/// The measurements of ``HeartRateMonitor/measurements()``, as an `AsyncSequence` for one
/// consumer: each value is decoded where the bearer delivers it and handed straight to a
/// waiting consumer, or buffered (the newest ``HeartRateMonitor/bufferLimit`` kept) until it
/// asks. Ends, after the buffered values, with the error that ended the link (a
/// ``HeartRateError``), or normally after ``HeartRateMonitor/unsubscribe()``; ends at once,
/// returning `nil`, when the consuming task is cancelled.
///
/// Not `AsyncThrowingStream`: this type is specialized for its element, so a value costs a lock,
/// an append and (when the consumer waits) one resumption, without the run-time generic
/// metadata lookups the standard library's unspecialized stream makes on every element
/// (measured: a quarter of `rawble hr`'s user CPU per notification went to the stream).
public struct HeartRateEvents: AsyncSequence, Sendable {
    public typealias Element = HeartRateEvent
    public typealias Failure = any Error

    let consumer: Consumer

    init(channel: HeartRateEventChannel) {
        consumer = Consumer(channel)
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(consumer: consumer)
    }

    public struct Iterator: AsyncIteratorProtocol {
        let consumer: Consumer

        public mutating func next() async throws -> HeartRateEvent? {
            try await consumer.channel.next()
        }

        /// Events already received that `next()` returns without waiting; 0 means the next
        /// call waits for the strap. A consumer that writes its output in batches flushes at
        /// 0, so a batch is what one read from the transport brought and no line waits for a
        /// later value.
        public var bufferedCount: Int { consumer.channel.bufferedCount }
    }

    /// The sequence's and its iterators' hold on the channel: once the last of them is gone
    /// (the loop left and the sequence dropped), the sequence ends, as an `AsyncThrowingStream`
    /// does (``HeartRateEventChannel/cancel()``).
    final class Consumer: Sendable {
        let channel: HeartRateEventChannel
        init(_ channel: HeartRateEventChannel) { self.channel = channel }
        deinit { channel.cancel() }
    }
}

/// The channel behind ``HeartRateEvents``.
typealias HeartRateEventChannel = EventChannel<HeartRateEvent>
