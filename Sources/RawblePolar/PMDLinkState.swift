import RawbleHeartRate
import RawblePolarCore
import RawbleWire
import Synchronization

/// The part of a ``PMDClient`` that runs where the bearer delivers values (under the ATT
/// client's routing lock: short, never blocking): the control point's response waiting, the
/// data frames' decoding and times, which streams run, and the event channel. One lock; no
/// task between a notification and the consumer, so indications and frames keep their order.
final class PMDLinkState: Sendable {
    struct Stream: Sendable {
        /// The nominal rate (Hz) the stream was started with: the first frame's sample spacing.
        var sampleRate: Double
        /// The start response's factor (delta-compressed frames are scaled by it), else 1.
        var factor: Float
    }

    /// A request waiting for its response indication.
    struct Waiter {
        var opcode: PMDOpcode
        /// A response announced `more`: the parts so far.
        var partial: PMDControlPointResponse?
        var continuation: UnsafeContinuation<PMDControlPointResponse, any Error>?
        var result: Result<PMDControlPointResponse, PMDError>?
    }

    private struct State {
        var clock = PMDSampleClock()
        var streams: [PMDMeasurementType: Stream] = [:]
        var waiter: Waiter?
        var channel: EventChannel<PMDEvent>?
        /// Frames received, any type: the silence watch compares it over time (a count, not
        /// a clock read per frame: in a VM without a vDSO clock each read is a system call).
        var frames: UInt64 = 0
        /// Frames received per running type since it started, and when it started (the time on
        /// the client's clock, ``PMDClient/Configuration/clock``: the silence watch names the
        /// silent ones).
        var framesByType: [PMDMeasurementType: (count: UInt64, since: Duration)] = [:]
    }

    private let state = Mutex(State())

    /// The most parameter bytes a response may gather over its continuations (an H10's
    /// largest, the acceleration settings, has 22): a device that keeps announcing more
    /// cannot make the client hold an unbounded response.
    static let responseLimit = 4096

    // MARK: Streams

    /// The consumer's channel (replacing an earlier one, which finishes normally).
    func attach(_ channel: EventChannel<PMDEvent>) {
        let previous = state.withLock { state in
            defer { state.channel = channel }
            return state.channel
        }
        previous?.finish()
    }

    /// `type` runs from `now` (the client's time) on: its sample times start afresh.
    func started(_ type: PMDMeasurementType, _ stream: Stream, at now: Duration) {
        state.withLock { state in
            state.clock.reset(type)
            state.streams[type] = stream
            state.framesByType[type] = (0, now)
        }
    }

    /// `type` no longer runs.
    func stopped(_ type: PMDMeasurementType) {
        state.withLock { state in
            state.clock.reset(type)
            state.streams[type] = nil
            state.framesByType[type] = nil
        }
    }

    /// The streams running now.
    var running: [PMDMeasurementType] { state.withLock { $0.streams.keys.sorted() } }

    /// Frames received so far, and the running streams that have sent none since they started
    /// (with when they started, on the client's time).
    var progress: (frames: UInt64, neverHeard: [(type: PMDMeasurementType, since: Duration)]) {
        state.withLock { state in
            (state.frames, state.framesByType.filter { $0.value.count == 0 }.map { ($0.key, $0.value.since) }
                .sorted { $0.type < $1.type })
        }
    }

    /// Ends the consumer's sequence (after what it has buffered) with `error`, or normally.
    func finish(throwing error: PMDError?) {
        let channel = state.withLock { state in
            defer { state.channel = nil }
            return state.channel
        }
        channel?.finish(throwing: error)
    }

    /// The link ended (or the client closed): a waiting request fails, no stream runs, the
    /// consumer's sequence ends with `error` (normally when nil).
    func end(_ error: PMDError?) {
        fail(error ?? .closed)
        state.withLock { state in
            state.streams.removeAll()
            state.framesByType.removeAll()
            state.clock.resetAll()
        }
        finish(throwing: error)
    }

    // MARK: Data notifications

    /// Decodes one data notification and hands it to the consumer. Returns false when the
    /// consumer's buffer was full (an older event was dropped).
    func dataNotified(_ value: ArraySlice<UInt8>) -> Bool {
        let (event, channel) = state.withLock { state -> (PMDEvent, EventChannel<PMDEvent>?) in
            (Self.decode(value, &state), state.channel)
        }
        return channel?.yield(event) ?? true
    }

    private static func decode(_ value: ArraySlice<UInt8>, _ state: inout State) -> PMDEvent {
        let frame: PMDDataFrame
        do {
            frame = try PMDDataFrame.decode(value)
        } catch {
            return .invalid(raw: Array(value), error: error)
        }
        state.frames &+= 1
        state.framesByType[frame.type]?.count &+= 1
        let stream = state.streams[frame.type]
        // A frame of a stream not started here (another client's, or one left running) keeps
        // the rate the H10 offers for it, so its times are still spaced sensibly.
        let rate = stream?.sampleRate ?? (frame.type == .ecg ? 130 : 200)
        do {
            switch frame.type {
            case .ecg:
                let samples = try frame.ecgSamples()
                let times = state.clock.sampleTimes(of: frame, sampleCount: samples.count, sampleRate: rate)
                return .ecg(PMDECGFrame(frame: frame, microvolts: samples, times: times))
            case .acceleration:
                let vectors = try frame.accelerationSamples(factor: stream?.factor ?? 1)
                let times = state.clock.sampleTimes(of: frame, sampleCount: vectors.count, sampleRate: rate)
                return .acceleration(PMDAccelerationFrame(frame: frame, vectors: vectors, times: times))
            default:
                return .frame(frame)
            }
        } catch {
            return .invalid(raw: Array(value), error: error)
        }
    }

    // MARK: The control point

    /// Waits for the response to `opcode` from now on (call before writing the request).
    func expect(_ opcode: PMDOpcode) {
        state.withLock { $0.waiter = Waiter(opcode: opcode) }
    }

    /// The response ``expect(_:)`` announced, or the error that ended the wait (``fail(_:)``).
    func response() async throws -> PMDControlPointResponse {
        try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<PMDControlPointResponse, any Error>) in
            let result = state.withLock { state -> Result<PMDControlPointResponse, PMDError>? in
                guard var waiter = state.waiter else { return .failure(.closed) }
                if let result = waiter.result {
                    state.waiter = nil
                    return result
                }
                waiter.continuation = continuation
                state.waiter = waiter
                return nil
            }
            if let result { continuation.resume(with: result.mapError { $0 as any Error }) }
        }
    }

    /// Ends the current wait with `error` (a timeout, the link's end); nothing when none waits.
    func fail(_ error: PMDError) {
        complete(.failure(error))
    }

    private func complete(_ result: Result<PMDControlPointResponse, PMDError>) {
        let continuation = state.withLock { state -> UnsafeContinuation<PMDControlPointResponse, any Error>? in
            guard var waiter = state.waiter, waiter.result == nil else { return nil }
            guard let continuation = waiter.continuation else {
                waiter.result = result  // taken by response()
                state.waiter = waiter
                return nil
            }
            state.waiter = nil
            return continuation
        }
        continuation?.resume(with: result.mapError { $0 as any Error })
    }

    /// One control-point indication: a response (completing the wait, or joined to the parts
    /// before it when they announced more), or the device's stop notice (the streams end; the
    /// consumer's sequence too when none is left).
    func controlPointIndicated(_ value: ArraySlice<UInt8>) {
        let indication: PMDControlPointIndication
        do {
            indication = try PMDControlPointIndication.decode(value)
        } catch {
            // Only a waiting request can tell what it was: without one it is dropped.
            complete(.failure(.malformedResponse(error)))
            return
        }
        switch indication {
        case .streamsStopped(let streams):
            let (channel, ended) = state.withLock { state -> (EventChannel<PMDEvent>?, Bool) in
                let wasRunning = !state.streams.isEmpty
                for stream in streams {
                    state.streams[stream.type] = nil
                    state.framesByType[stream.type] = nil
                    state.clock.reset(stream.type)
                }
                let ended = wasRunning && state.streams.isEmpty
                let channel = state.channel
                if ended { state.channel = nil }
                return (channel, ended)
            }
            _ = channel?.yield(.stopped(streams))
            if ended { channel?.finish(throwing: PMDError.stoppedByDevice(streams)) }
        case .response(let response):
            let outcome = state.withLock { state -> Result<PMDControlPointResponse, PMDError>? in
                guard var waiter = state.waiter, waiter.result == nil else { return nil }  // none waits: stray
                guard response.opcode == waiter.opcode else {
                    return .failure(.unexpectedResponse(expected: waiter.opcode, received: response.opcode))
                }
                var joined = response
                if let partial = waiter.partial {
                    do throws(WireError) {
                        joined = try partial.appending(response)
                    } catch {
                        return .failure(.malformedResponse(error))
                    }
                }
                if joined.more {
                    guard joined.parameters.count <= Self.responseLimit else {
                        return .failure(.malformedResponse(WireError(
                            .invalidValue("a response continued past \(Self.responseLimit) bytes"), at: 0,
                            in: "PMD control point continuation")))
                    }
                    waiter.partial = joined
                    state.waiter = waiter
                    return nil
                }
                return .success(joined)
            }
            if let outcome { complete(outcome) }
        }
    }
}
