import Logging
import RawbleGATT
import RawbleGATTCore
import RawbleHeartRate
import RawblePolarCore
import RawbleWire

/// The client of Polar's Measurement Data (PMD) service, the raw ECG and acceleration of a
/// Polar H10: its features, the settings it offers, starting and stopping streams, and the
/// samples with their times as an async sequence. Built only on `GATTClient`, so it works on
/// the kernel's L2CAP socket and on rawble's own host alike; no pairing (the specification's
/// characteristics need no security).
///
/// ```swift
/// try await gatt.exchangeMTU()                       // Polar needs ≥ 232
/// let pmd = try await PMDClient.attach(to: gatt)
/// let events = await pmd.events()
/// try await pmd.start(.ecg, settings: .h10ECG)
/// for try await case .ecg(let frame) in events {
///     for (time, microvolts) in zip(frame.times, frame.microvolts) { … }
/// }
/// ```
///
/// Set-up follows the order Polar's specification gives and its SDK keeps: control-point
/// indications on, then data notifications, and no request before both. Each request waits
/// for its response indication (continuations announced with `more` joined) within
/// ``Configuration/responseTimeout``; requests go one at a time.
public actor PMDClient {
    /// How long to wait, and how much to keep.
    public struct Configuration: Sendable {
        /// How long a request waits for its response indication (Polar's SDK waits 30 s; an
        /// H10 answers within a connection event or two).
        public var responseTimeout: Duration = .seconds(5)
        /// How long a started stream may send no frame before the sequence ends with
        /// ``PMDError/silent(_:seconds:)`` (nil: never). Reports say a strap not worn sends
        /// nothing; some hosts saw ECG start ~30 s late, so this is not shorter. A stream that
        /// never sent is reported at the limit; one that stopped sending within a quarter of the
        /// limit after it (the watch looks every quarter of the limit, not every second).
        public var silenceLimit: Duration? = .seconds(35)
        /// The clock the response timeout and the silence watch run on: the real continuous
        /// clock by default; a test gives a virtual one (RawbleTestSupport's `ManualClock`) and
        /// moves its time past a limit instead of waiting for it.
        public var clock: any Clock<Duration> = ContinuousClock()

        public init(responseTimeout: Duration = .seconds(5), silenceLimit: Duration? = .seconds(35),
                    clock: any Clock<Duration> = ContinuousClock()) {
            self.responseTimeout = responseTimeout
            self.silenceLimit = silenceLimit
            self.clock = clock
        }
    }

    /// Events buffered for a slow consumer before the oldest are dropped (frames, not samples:
    /// at an H10's rates, minutes of data).
    public static let bufferLimit = 4096

    /// The GATT client underneath.
    public nonisolated let gatt: GATTClient
    /// The Polar Measurement Data service.
    public nonisolated let service: GATTService
    /// The control point (read: features; write: requests; indicate: responses).
    public nonisolated let controlPoint: GATTCharacteristic
    /// The data characteristic (notify: frames).
    public nonisolated let data: GATTCharacteristic
    public nonisolated let configuration: Configuration

    private let link = PMDLinkState()
    private let time: Timeline
    private let logger: Logger
    private var subscriptions: [GATTUpdateHandler] = []
    /// Requests wait here for the control point (one at a time).
    private var controlPointBusy = false
    private var queued: [CheckedContinuation<Void, Never>] = []
    private var silenceWatch: Task<Void, Never>?
    private var closed = false

    private init(gatt: GATTClient, service: GATTService, controlPoint: GATTCharacteristic, data: GATTCharacteristic,
                 configuration: Configuration, logger: Logger) {
        self.gatt = gatt
        self.service = service
        self.controlPoint = controlPoint
        self.data = data
        self.configuration = configuration
        self.logger = logger
        time = Timeline(configuration.clock)
    }

    /// Finds the PMD service and its two characteristics on `gatt`, then turns on
    /// control-point indications and data notifications, in that order. Exchange the MTU
    /// before (`gatt.exchangeMTU()`): Polar needs at least ``PMDError/minimumMTU``.
    public static func attach(to gatt: GATTClient, configuration: Configuration = Configuration(),
                              logger: Logger = Logger(label: "rawble.pmd")) async throws(PMDError) -> PMDClient {
        let client: PMDClient
        do {
            guard let service = try await gatt.services(withUUID: .polarMeasurementDataService).first else {
                throw PMDError.noMeasurementService
            }
            let characteristics = try await gatt.characteristics(of: service)
            guard let controlPoint = characteristics.first(where: { $0.uuid == .polarMeasurementDataControlPoint }) else {
                throw PMDError.missingCharacteristic("no control point (FB005C81-…)")
            }
            guard let data = characteristics.first(where: { $0.uuid == .polarMeasurementDataData }) else {
                throw PMDError.missingCharacteristic("no data characteristic (FB005C82-…)")
            }
            client = PMDClient(gatt: gatt, service: service, controlPoint: controlPoint, data: data,
                               configuration: configuration, logger: logger)
        } catch {
            throw PMDError(error)
        }
        try await client.subscribe()
        return client
    }

    private func subscribe() async throws(PMDError) {
        let link = self.link
        do {
            let indications = try await gatt.subscribe(
                to: controlPoint, indications: true,
                onUpdate: { update in link.controlPointIndicated(update.value); return true },
                onEnd: { error in link.end(.gatt(error)) })
            subscriptions.append(indications)
            let notifications = try await gatt.subscribe(
                to: data, onUpdate: { update in link.dataNotified(update.value) }, onEnd: { _ in })
            subscriptions.append(notifications)
        } catch {
            for subscription in subscriptions { await subscription.stop() }
            subscriptions.removeAll()
            switch error {
            case .att(let refusal): throw .subscriptionRefused(refusal)
            case .notFound(let what): throw .missingCharacteristic(what)
            default: throw .gatt(error)
            }
        }
    }

    // MARK: Events

    /// The frames from now on, decoded, with their times (see ``PMDEvents`` for how it ends).
    /// Ask for it before ``start(_:settings:)`` so the first frame is not missed. A second call
    /// replaces the first sequence, which finishes.
    public func events() -> PMDEvents {
        let channel = EventChannel<PMDEvent>(limit: Self.bufferLimit)
        if closed {
            channel.finish(throwing: PMDError.closed)
        } else {
            link.attach(channel)
        }
        return PMDEvents(channel: channel)
    }

    /// The streams started and not stopped (by ``stop(_:)`` or by the device).
    public var running: [PMDMeasurementType] { link.running }

    // MARK: Requests

    /// The measurements the device offers (a read of the control point: `0F` + feature bits).
    public func features() async throws(PMDError) -> PMDFeatures {
        do {
            return try PMDFeatures.decode(try await gatt.read(controlPoint)[...])
        } catch let error as WireError {
            throw .malformedResponse(error)
        } catch {
            throw PMDError(error)
        }
    }

    /// The settings the device offers for `type` (every value of each).
    public func settings(for type: PMDMeasurementType) async throws(PMDError) -> PMDSettings {
        let response = try await request(.getSettings(PMDStream(type)))
        do {
            return try response.settings()
        } catch {
            throw .malformedResponse(error)
        }
    }

    /// Starts `type` with `settings` (one value each; `PMDSettingSelection.h10ECG` and
    /// `PMDSettingSelection.h10Acceleration(sampleRate:range:)` are an H10's). A stream the
    /// device says already runs (status 6, left by an earlier client or a link that ended
    /// unclean) is stopped and started again once, so its settings are these.
    ///
    /// - Returns: the start response (its parameters may carry a factor, which the client
    ///   applies to delta-compressed frames itself).
    @discardableResult
    public func start(_ type: PMDMeasurementType, settings: PMDSettingSelection) async throws(PMDError)
        -> PMDControlPointResponse
    {
        let stream = PMDStream(type)
        var response: PMDControlPointResponse
        do {
            response = try await request(.start(stream, settings))
        } catch .refused(_, _, .alreadyInState, _) {
            logger.debug("\(type) already runs: stopping it and starting it again with these settings")
            try await request(.stop(stream), accepting: [.alreadyInState])
            response = try await request(.start(stream, settings))
        }
        // A factor setting in the parameters scales delta-compressed frames (a one-byte tail,
        // the H10's "reserved" byte, is no settings: ignored as Polar's SDK does).
        var factor: Float = 1
        if response.parameters.count > 1, let offered = try? PMDSettings.decode(response.parameters[...]),
           let first = offered.factors.first, first.isFinite, first != 0 {
            factor = first
        }
        link.started(type, .init(sampleRate: Double(settings.sampleRate ?? (type == .ecg ? 130 : 200)), factor: factor),
                     at: time.now())
        watchSilence()
        return response
    }

    /// Stops `type` on the device (a stream that was not running is not an error).
    public func stop(_ type: PMDMeasurementType) async throws(PMDError) {
        link.stopped(type)
        if link.running.isEmpty { silenceWatch?.cancel() }
        try await request(.stop(PMDStream(type)), accepting: [.alreadyInState])
    }

    /// Stops every stream this client started (best effort: a refusal or a dead link is only
    /// logged), ends the event sequence normally, and turns indications and notifications off.
    /// The GATT client and the link stay open.
    public func close() async {
        guard !closed else { return }
        for type in link.running {
            do {
                try await stop(type)
            } catch {
                logger.debug("stopping \(type) failed: \(error)")
            }
        }
        closed = true
        silenceWatch?.cancel()
        link.end(nil)
        for subscription in subscriptions.reversed() {
            do {
                try await subscription.cancel()
            } catch {
                logger.debug("unsubscribing from \(subscription.characteristic.uuid) failed: \(error)")
            }
        }
        subscriptions.removeAll()
    }

    /// Sends `request` and returns its response, joined from its continuations; an error status
    /// (other than one of `accepting`) is ``PMDError/refused(_:_:_:mtu:)``.
    @discardableResult
    private func request(_ request: PMDControlPointRequest, accepting: Set<PMDStatus> = []) async throws(PMDError)
        -> PMDControlPointResponse
    {
        guard !closed else { throw .closed }
        await acquireControlPoint()
        defer { releaseControlPoint() }
        link.expect(request.opcode)
        let link = self.link
        let timeout = configuration.responseTimeout
        let clock = configuration.clock
        let timer = Task {
            guard (try? await clock.sleep(for: timeout)) != nil else { return }
            link.fail(.noResponse(request.opcode, seconds: Double(timeout.components.seconds)
                + Double(timeout.components.attoseconds) / 1e18))
        }
        defer { timer.cancel() }
        let response: PMDControlPointResponse
        do {
            try await gatt.write(request.encoded, to: controlPoint)
            response = try await withTaskCancellationHandler {
                try await link.response()
            } onCancel: {
                link.fail(.closed)
            }
        } catch {
            link.fail(.closed)  // a write that failed leaves nobody waiting
            throw PMDError(error)
        }
        guard response.stream.typeByte == Self.echoedStream(of: request).typeByte else {
            throw .malformedResponse(WireError(
                .invalidValue("the response is for \(response.stream), the request for \(Self.echoedStream(of: request))"),
                at: 2, in: "PMD control point response"))
        }
        guard response.status.isSuccess || accepting.contains(response.status) else {
            throw .refused(request.opcode, response.stream, response.status, mtu: await gatt.mtu)
        }
        return response
    }

    private static func echoedStream(of request: PMDControlPointRequest) -> PMDStream {
        switch request {
        case let .getSettings(stream), let .start(stream, _), let .stop(stream): stream
        case .measurementStatus: PMDStream(.ecg)
        }
    }

    private func acquireControlPoint() async {
        guard controlPointBusy else {
            controlPointBusy = true
            return
        }
        await withCheckedContinuation { queued.append($0) }
    }

    private func releaseControlPoint() {
        if queued.isEmpty {
            controlPointBusy = false
        } else {
            queued.removeFirst().resume()  // the control point passes on, still busy
        }
    }

    // MARK: Silence

    /// Ends the sequence with ``PMDError/silent(_:seconds:)`` when a running stream sends no
    /// frame for the configured limit: a stream that never sent since its start, or every
    /// stream gone quiet.
    private func watchSilence() {
        silenceWatch?.cancel()
        guard let limit = configuration.silenceLimit else { return }
        let link = self.link
        let time = self.time
        // It looks every quarter of the limit (a silence is reported between the limit and
        // 1.25 × it), or sooner when a stream that never sent reaches the limit: a few wake-ups
        // a minute while streams run, not one a second.
        let step = limit / 4
        let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        silenceWatch = Task {
            var lastFrames = link.progress.frames
            var lastHeard = time.now()
            var lastLook = lastHeard
            while !Task.isCancelled {
                let (_, pending) = link.progress
                let next = ([lastLook + step] + pending.map { $0.since + limit }).min() ?? lastLook + step
                guard (try? await time.sleep(until: next, tolerance: step / 10)) != nil else { return }
                let running = link.running
                if running.isEmpty { return }
                let now = time.now()
                lastLook = now
                let (frames, neverHeard) = link.progress
                if frames != lastFrames {
                    lastFrames = frames
                    lastHeard = now
                }
                let silentSinceStart = neverHeard.filter { now - $0.since >= limit }.map(\.type)
                if !silentSinceStart.isEmpty || now - lastHeard >= limit {
                    link.finish(throwing: .silent(silentSinceStart.isEmpty ? running : silentSinceStart, seconds: seconds))
                    return
                }
            }
        }
    }
}

extension PMDClient {
    /// The configured clock as the time since the client attached: one type of instant (a
    /// `Duration`) for the link state and the silence watch, whatever the clock's own instants.
    struct Timeline: Sendable {
        /// The time since the client attached.
        let now: @Sendable () -> Duration
        private let sleeper: @Sendable (Duration, Duration?) async throws -> Void

        init(_ clock: any Clock<Duration>) {
            self.init(opened: clock)
        }

        private init<C: Clock<Duration>>(opened clock: C) {
            let attached = clock.now
            now = { attached.duration(to: clock.now) }
            sleeper = { time, tolerance in try await clock.sleep(until: attached.advanced(by: time), tolerance: tolerance) }
        }

        /// Sleeps until `time` after the attach; throws `CancellationError` when cancelled first.
        func sleep(until time: Duration, tolerance: Duration?) async throws {
            try await sleeper(time, tolerance)
        }
    }
}
