@testable import RawblePolar
import RawbleBearer
import RawbleGATT
import RawbleGATTCore
import RawblePolarCore
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

// Byte-stream tests of the Polar Measurement Data client against a scripted H10: the exact
// bytes it writes, the answers an H10 gives (the specification's examples, from
// ../shared/notes/polar-pmd.md §2 and §6) and the answers a broken one gives.
//
// The scripted PMD service (handles 0x0001–0x0007):
//   0x0002 declaration, 0x0003 control point (read, write, indicate), 0x0004 its CCCD
//   0x0005 declaration, 0x0006 data (notify), 0x0007 its CCCD

/// A scripted H10: answers discovery of the PMD service, CCCD writes, the control point's read,
/// and each control-point write with a Write Response and the indications `answer` gives.
struct ScriptedH10 {
    let peer: Peer
    let bearer: ScriptedATTBearer

    init(mtu: UInt16 = 232, answer: @escaping @Sendable ([UInt8]) -> [[UInt8]] = ScriptedH10.h10Answer) {
        let peer = Peer(mtu: mtu, answer: answer)
        self.peer = peer
        bearer = ScriptedATTBearer { pdu in peer.respond(pdu) }
    }

    /// The control-point writes received, in order.
    var writes: [[UInt8]] { peer.writes.withLock { $0 } }
    /// The CCCD writes received, as (handle, value).
    var cccdWrites: [(UInt16, UInt16)] { peer.cccdWrites.withLock { $0 } }

    /// A data notification carrying `frame`.
    func notify(_ frame: [UInt8]) {
        bearer.inject([0x1B] + Peer.le(Self.data) + frame)
    }

    /// A control-point indication the device sends unasked.
    func indicate(_ value: [UInt8]) {
        bearer.inject([0x1D] + Peer.le(Self.controlPoint) + value)
    }

    /// A client on this device with the MTU exchanged, attached.
    func attach(_ configuration: PMDClient.Configuration = .init()) async throws -> PMDClient {
        let gatt = GATTClient(bearer: bearer)
        try await gatt.exchangeMTU()
        return try await PMDClient.attach(to: gatt, configuration: configuration)
    }

    static let controlPoint: UInt16 = 0x0003
    static let controlPointCCCD: UInt16 = 0x0004
    static let data: UInt16 = 0x0006
    static let dataCCCD: UInt16 = 0x0007

    /// The indications an H10 gives for each request (ECG and acceleration offered; every
    /// start succeeds; every stop too).
    static func h10Answer(_ request: [UInt8]) -> [[UInt8]] {
        switch request.first {
        case 0x01 where request.dropFirst().first == 0x00:
            [[0xF0, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x82, 0x00, 0x01, 0x01, 0x0E, 0x00]]
        case 0x01 where request.dropFirst().first == 0x02:
            [[0xF0, 0x01, 0x02, 0x00, 0x00, 0x00, 0x04, 0x19, 0x00, 0x32, 0x00, 0x64, 0x00, 0xC8, 0x00,
              0x01, 0x01, 0x10, 0x00, 0x02, 0x03, 0x02, 0x00, 0x04, 0x00, 0x08, 0x00]]
        case 0x02 where request.dropFirst().first == 0x02: [[0xF0, 0x02, 0x02, 0x00, 0x00, 0x01]]
        case 0x02: [[0xF0, 0x02, request[1], 0x00, 0x00]]
        case 0x03: [[0xF0, 0x03, request[1], 0x00, 0x00]]
        default: [[0xF0, request.first ?? 0, 0x00, 0x01]]
        }
    }

    /// The peer's side: its state and its answers.
    final class Peer: Sendable {
        let answer: Mutex<@Sendable ([UInt8]) -> [[UInt8]]>
        /// The control-point writes received, in order.
        let writes = Mutex<[[UInt8]]>([])
        /// The CCCD writes received, as (handle, value).
        let cccdWrites = Mutex<[(UInt16, UInt16)]>([])
        let mtu: UInt16

        init(mtu: UInt16, answer: @escaping @Sendable ([UInt8]) -> [[UInt8]]) {
            self.answer = Mutex(answer)
            self.mtu = mtu
        }

        static func le(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
        private static func u16(_ pdu: [UInt8], _ at: Int) -> UInt16 { UInt16(pdu[at]) | UInt16(pdu[at + 1]) << 8 }
        private static func notFound(_ opcode: UInt8, _ handle: UInt16) -> [UInt8] { [0x01, opcode] + le(handle) + [0x0A] }

        func respond(_ pdu: [UInt8]) -> [[UInt8]] {
            guard let opcode = pdu.first else { return [] }
            switch opcode {
            case 0x02:  // Exchange MTU
                return [[0x03] + Self.le(mtu)]
            case 0x06:  // Find By Type Value: the PMD service
                let start = Self.u16(pdu, 1)
                return start <= 0x0001 ? [[0x07, 0x01, 0x00, 0x07, 0x00]] : [Self.notFound(0x06, start)]
            case 0x08:  // Read By Type «Characteristic»
                let start = Self.u16(pdu, 1), end = Self.u16(pdu, 3)
                var entries: [UInt8] = []
                if start <= 0x0002, end >= 0x0002 {
                    entries += [0x02, 0x00, 0x2A] + Self.le(ScriptedH10.controlPoint) + BluetoothUUID.polarMeasurementDataControlPoint.littleEndianBytes()
                }
                if start <= 0x0005, end >= 0x0005 {
                    entries += [0x05, 0x00, 0x10] + Self.le(ScriptedH10.data) + BluetoothUUID.polarMeasurementDataData.littleEndianBytes()
                }
                return entries.isEmpty ? [Self.notFound(0x08, start)] : [[0x09, 21] + entries]
            case 0x04:  // Find Information: one CCCD after each value
                let start = Self.u16(pdu, 1), end = Self.u16(pdu, 3)
                let cccds = [ScriptedH10.controlPointCCCD, ScriptedH10.dataCCCD].filter { $0 >= start && $0 <= end }
                guard let first = cccds.first else { return [Self.notFound(0x04, start)] }
                return [[0x05, 0x01] + Self.le(first) + [0x02, 0x29]]
            case 0x0A:  // Read: the control point's features (ECG and acceleration)
                return [[0x0B, 0x0F, 0x05] + [UInt8](repeating: 0, count: 15)]
            case 0x12:  // Write Request
                let handle = Self.u16(pdu, 1)
                let value = Array(pdu.dropFirst(3))
                if handle == ScriptedH10.controlPoint {
                    writes.withLock { $0.append(value) }
                    let indications = answer.withLock { $0 }(value)
                    return [[0x13]] + indications.map { [0x1D] + Self.le(ScriptedH10.controlPoint) + $0 }
                }
                if value.count == 2 { cccdWrites.withLock { $0.append((handle, Self.u16(value, 0))) } }
                return [[0x13]]
            default:
                return []  // confirmations, commands
            }
        }
    }
}

/// Counts calls from any thread.
private final class Counter: Sendable {
    private let count = Mutex(0)
    /// The count after this call.
    func next() -> Int { count.withLock { $0 += 1; return $0 } }
}

/// The error `operation` throws, or nil when it returns (another error than a PMDError is
/// recorded as an issue).
private func pmdFailure(_ operation: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async -> PMDError? {
    do {
        try await operation()
        return nil
    } catch let error as PMDError {
        return error
    } catch {
        Issue.record("not a PMDError: \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// The worked ECG frame (SPEC19): T = 599616028236586218 ns; 104, 88, 70, 61 µV.
private let workedECGFrame: [UInt8] = [0x00, 0xEA, 0x1C, 0xAC, 0xCC, 0x99, 0x43, 0x52, 0x08, 0x00,
                                       0x68, 0x00, 0x00, 0x58, 0x00, 0x00, 0x46, 0x00, 0x00, 0x3D, 0x00, 0x00]

@Suite("PMD client on a scripted H10", .timeLimit(.minutes(1)))
struct PMDClientTests {
    @Test func attachTurnsOnControlPointIndicationsBeforeDataNotifications() async throws {
        let h10 = ScriptedH10()
        let pmd = try await h10.attach()
        let writes = h10.cccdWrites
        #expect(writes.map(\.0) == [ScriptedH10.controlPointCCCD, ScriptedH10.dataCCCD])
        #expect(writes.map(\.1) == [0x0002, 0x0001])
        #expect(pmd.controlPoint.valueHandle == ScriptedH10.controlPoint)
        #expect(pmd.data.valueHandle == ScriptedH10.data)
        let features = try await pmd.features()
        #expect(features.types == [.ecg, .acceleration])
    }

    @Test func settingsAreTheH10sAndAContinuationIsJoined() async throws {
        let h10 = ScriptedH10 { request in
            guard request == [0x01, 0x02] else { return ScriptedH10.h10Answer(request) }
            // The acceleration settings in two parts: `more` set on the first.
            return [[0xF0, 0x01, 0x02, 0x00, 0x01, 0x00, 0x04, 0x19, 0x00, 0x32, 0x00, 0x64, 0x00, 0xC8, 0x00],
                    [0xF0, 0x01, 0x02, 0x00, 0x00, 0x01, 0x01, 0x10, 0x00, 0x02, 0x03, 0x02, 0x00, 0x04, 0x00, 0x08, 0x00]]
        }
        let pmd = try await h10.attach()
        let ecg = try await pmd.settings(for: .ecg)
        #expect(ecg.sampleRates == [130] && ecg.resolutions == [14])
        let acceleration = try await pmd.settings(for: .acceleration)
        #expect(acceleration.sampleRates == [25, 50, 100, 200])
        #expect(acceleration.resolutions == [16])
        #expect(acceleration.ranges == [2, 4, 8])
        #expect(h10.writes == [[0x01, 0x00], [0x01, 0x02]])
    }

    @Test func startECGWritesTheSpecificationsBytesAndFramesBecomeSamplesWithTimes() async throws {
        let h10 = ScriptedH10()
        let pmd = try await h10.attach()
        let events = await pmd.events()
        try await pmd.start(.ecg, settings: .h10ECG)
        #expect(h10.writes == [[0x02, 0x00, 0x00, 0x01, 0x82, 0x00, 0x01, 0x01, 0x0E, 0x00]])
        #expect(await pmd.running == [.ecg])
        h10.notify(workedECGFrame)
        var iterator = events.makeAsyncIterator()
        guard case .ecg(let frame)? = try await iterator.next() else {
            Issue.record("no ECG frame")
            return
        }
        #expect(Array(frame.microvolts) == [104, 88, 70, 61])
        // The first frame: the nominal 1/130 s spacing back from the frame time.
        let last: UInt64 = 599_616_028_236_586_218
        #expect(frame.times.last == last)
        #expect(Array(frame.times) == (0..<4).map { last - UInt64((Double(3 - $0) * 1e9 / 130).rounded()) })
        // The next frame: spacing measured from the previous frame's time.
        var next = workedECGFrame
        let nextTime = last + 4 * 7_000_000
        for k in 0..<8 { next[1 + k] = UInt8(truncatingIfNeeded: nextTime >> (8 * UInt64(k))) }
        h10.notify(next)
        guard case .ecg(let second)? = try await iterator.next() else {
            Issue.record("no second ECG frame")
            return
        }
        #expect(second.times.interval == 7_000_000)
        #expect(second.times.first == last + 7_000_000)
    }

    @Test func accelerationStartsWithTheH10sBytesAndDeltaFramesAreDecoded() async throws {
        let h10 = ScriptedH10()
        let pmd = try await h10.attach()
        let events = await pmd.events()
        try await pmd.start(.acceleration, settings: .h10Acceleration())
        #expect(h10.writes == [[0x02, 0x02, 0x00, 0x01, 0xC8, 0x00, 0x01, 0x01, 0x10, 0x00, 0x02, 0x01, 0x08, 0x00]])
        // The raw worked example, then the delta-compressed one (notes §6).
        h10.notify([0x02, 0xEA, 0x54, 0xA2, 0x42, 0x8B, 0x45, 0x52, 0x08, 0x01, 0x45, 0xFF, 0xE4, 0xFF, 0xB5, 0x03])
        h10.notify([0x02, 0x65, 0, 0, 0, 0, 0, 0, 0, 0x81, 0xF1, 0xFF, 0x14, 0x00, 0xF0, 0x03, 0x06, 0x01, 0x7B, 0x0F, 0x08])
        var iterator = events.makeAsyncIterator()
        guard case .acceleration(let raw)? = try await iterator.next(),
              case .acceleration(let delta)? = try await iterator.next() else {
            Issue.record("no acceleration frames")
            return
        }
        #expect(Array(raw.vectors) == [PMDAcceleration(x: -187, y: -28, z: 949)])
        #expect(Array(delta.vectors) == [PMDAcceleration(x: -15, y: 20, z: 1008), PMDAcceleration(x: -20, y: 17, z: 1008)])
        #expect(delta.times.count == 2)
    }

    @Test func aStartRefusedForTheMTUNamesTheMTUAndWhatPolarNeeds() async throws {
        let h10 = ScriptedH10(mtu: 185) { request in
            request.first == 0x02 ? [[0xF0, 0x02, request[1], 0x0A]] : ScriptedH10.h10Answer(request)
        }
        let pmd = try await h10.attach()
        let error = await pmdFailure { _ = try await pmd.start(.ecg, settings: .h10ECG) }
        #expect(error == PMDError.refused(.start, PMDStream(.ecg), .invalidMTU, mtu: 185))
        #expect(error?.description.contains("ATT MTU is 185, Polar needs at least 232") == true)
        #expect(await pmd.running.isEmpty)
    }

    @Test func aControlPointThatNeverAnswersIsATypedErrorWithinTheTimeout() async throws {
        let h10 = ScriptedH10 { _ in [] }
        let clock = ManualClock()
        let pmd = try await h10.attach(.init(responseTimeout: .milliseconds(200), clock: clock))
        let starting = Task { await pmdFailure { _ = try await pmd.start(.ecg, settings: .h10ECG) } }
        try await clock.advanceOnceArmed(by: .milliseconds(200))
        #expect(await starting.value == PMDError.noResponse(.start, seconds: 0.2))
        // The next request is not confused by the late state: it times out on its own.
        let asking = Task { await pmdFailure { _ = try await pmd.settings(for: .ecg) } }
        try await clock.advanceOnceArmed(by: .milliseconds(200))
        #expect(await asking.value == PMDError.noResponse(.getSettings, seconds: 0.2))
    }

    @Test func anAnswerToAnotherOpcodeOrForAnotherStreamIsATypedError() async throws {
        let h10 = ScriptedH10 { request in
            request.first == 0x02 ? [[0xF0, 0x03, request[1], 0x00, 0x00]] : [[0xF0, request[0], 0x02, 0x00, 0x00]]
        }
        let pmd = try await h10.attach(.init(responseTimeout: .seconds(5)))
        #expect(await pmdFailure { _ = try await pmd.start(.ecg, settings: .h10ECG) } == PMDError.unexpectedResponse(expected: .start, received: .stop))
        let wrongStream = await pmdFailure { try await pmd.stop(.ecg) }
        guard case .malformedResponse? = wrongStream else {
            Issue.record("expected a malformed response, got \(String(describing: wrongStream))")
            return
        }
    }

    @Test func anIndicationThatDoesNotDecodeFailsTheWaitingRequest() async throws {
        let h10 = ScriptedH10 { _ in [[0xF0, 0x02]] }
        let pmd = try await h10.attach()
        let error = await pmdFailure { _ = try await pmd.start(.ecg, settings: .h10ECG) }
        guard case .malformedResponse(let wire)? = error else {
            Issue.record("expected a malformed response, got \(String(describing: error))")
            return
        }
        #expect(wire.kind == WireError.Kind.truncated(needed: 1, available: 0))
    }

    @Test func aStreamAlreadyRunningIsStoppedAndStartedAgain() async throws {
        let starts = Counter()
        let h10 = ScriptedH10 { request in
            if request.first == 0x02, starts.next() == 1 { return [[0xF0, 0x02, 0x00, 0x06]] }
            return ScriptedH10.h10Answer(request)
        }
        let pmd = try await h10.attach()
        try await pmd.start(.ecg, settings: .h10ECG)
        let start: [UInt8] = [0x02, 0x00, 0x00, 0x01, 0x82, 0x00, 0x01, 0x01, 0x0E, 0x00]
        #expect(h10.writes == [start, [0x03, 0x00], start])
        #expect(await pmd.running == [.ecg])
    }

    @Test func theDevicesOwnStopEndsTheSequenceWithATypedReasonOnceNoStreamIsLeft() async throws {
        let h10 = ScriptedH10()
        let pmd = try await h10.attach()
        let events = await pmd.events()
        try await pmd.start(.ecg, settings: .h10ECG)
        try await pmd.start(.acceleration, settings: .h10Acceleration())
        h10.notify(workedECGFrame)
        h10.indicate([0x01, 0x02])  // acceleration stopped: ECG goes on
        h10.notify(workedECGFrame)
        h10.indicate([0x01, 0x00])  // ECG stopped too
        var seen: [String] = []
        do {
            for try await event in events {
                switch event {
                case .ecg: seen.append("ecg")
                case .stopped(let streams): seen.append("stopped \(streams.map(\.description).joined(separator: ","))")
                default: seen.append("other")
                }
            }
            Issue.record("the sequence ended without an error")
        } catch let error as PMDError {
            #expect(error == .stoppedByDevice([PMDStream(.ecg)]))
        }
        #expect(seen == ["ecg", "stopped acc", "ecg", "stopped ecg"])
        #expect(await pmd.running.isEmpty)
    }

    @Test func aStartedStreamThatStaysSilentEndsTheSequenceAtTheLimit() async throws {
        let h10 = ScriptedH10()
        let clock = ManualClock()
        let limit = Duration.milliseconds(300)
        let pmd = try await h10.attach(.init(silenceLimit: limit, clock: clock))
        let events = await pmd.events()
        try await pmd.start(.ecg, settings: .h10ECG)
        // Virtual time moves from one timer of the watch to the next until the sequence ends.
        let ending = try await clock.run(advancingToDeadlinesWithin: limit) { () async -> PMDError? in
            do {
                for try await _ in events {}
                return nil
            } catch {
                return PMDError(error)
            }
        }
        #expect(ending == .silent([.ecg], seconds: 0.3))
        #expect(clock.now.offset == limit, "a stream that never sent is reported at the limit after its start")
    }

    @Test func aStreamThatKeepsSendingIsNeverSilentAndOneThatStopsIsSilentAfterTheLimit() async throws {
        let h10 = ScriptedH10()
        let clock = ManualClock()
        let limit = Duration.milliseconds(400)
        let step = Duration.milliseconds(100)
        let pmd = try await h10.attach(.init(silenceLimit: limit, clock: clock))
        let events = await pmd.events()
        // The consumer counts frames, says when each came, and returns how the sequence ended.
        let (received, frameCame) = AsyncStream.makeStream(of: Void.self)
        let consumer = Task { () async -> (frames: Int, ending: PMDError?) in
            var frames = 0
            do {
                for try await event in events {
                    guard case .ecg = event else { continue }
                    frames += 1
                    frameCame.yield()
                }
                return (frames, nil)
            } catch {
                return (frames, PMDError(error))
            }
        }
        try await pmd.start(.ecg, settings: .h10ECG)
        // A frame every 100 ms of virtual time for 2.5 × the limit: the watch looks several
        // times meanwhile. Each frame is sent once the watch sleeps again (its look is over)
        // and time moves on once the consumer has it, so the watch sees each at its next look.
        var arrivals = received.makeAsyncIterator()
        for _ in 0..<10 {
            try await within { try await clock.waitForSleepers(dueWithin: step) }
            h10.notify(workedECGFrame)
            _ = await arrivals.next()
            clock.advance(by: step)
        }
        let lastFrame = clock.now.offset - step
        let (frames, ending) = try await clock.run(advancingToDeadlinesWithin: limit) { await consumer.value }
        // Every frame came before the silence was declared, which came between the limit and
        // 1.25 × the limit after the last frame (the watch looks every quarter of the limit).
        #expect(ending == PMDError.silent([.ecg], seconds: 0.4))
        #expect(frames == 10)
        let quietFor = clock.now.offset - lastFrame
        #expect(quietFor >= limit && quietFor <= limit * 5 / 4, "silent after \(quietFor)")
    }

    @Test func aFrameThatDoesNotDecodeIsReportedAndTheStreamGoesOn() async throws {
        let h10 = ScriptedH10()
        let pmd = try await h10.attach()
        let events = await pmd.events()
        try await pmd.start(.ecg, settings: .h10ECG)
        h10.notify([0x00, 0x01, 0x02])  // truncated header
        h10.notify(Array(workedECGFrame.dropLast()))  // a sample cut short
        h10.notify(workedECGFrame)
        var iterator = events.makeAsyncIterator()
        guard case .invalid(_, let first)? = try await iterator.next(),
              case .invalid(_, let second)? = try await iterator.next(),
              case .ecg? = try await iterator.next() else {
            Issue.record("expected two invalid frames, then ECG")
            return
        }
        #expect(first.kind == WireError.Kind.truncated(needed: 8, available: 2))
        #expect(second.kind == .trailingBytes(count: 2))
    }

    @Test func closeStopsWhatRunsEndsTheSequenceAndTurnsTheCCCDsOff() async throws {
        let h10 = ScriptedH10()
        let pmd = try await h10.attach()
        let events = await pmd.events()
        try await pmd.start(.ecg, settings: .h10ECG)
        await pmd.close()
        #expect(h10.writes.last == [0x03, 0x00])
        var iterator = events.makeAsyncIterator()
        #expect(try await iterator.next() == nil)
        let cccds = h10.cccdWrites
        #expect(cccds.suffix(2).map(\.0) == [ScriptedH10.dataCCCD, ScriptedH10.controlPointCCCD])
        #expect(cccds.suffix(2).map(\.1) == [0, 0])
        #expect(await pmdFailure { _ = try await pmd.start(.ecg, settings: .h10ECG) } == PMDError.closed)
    }

    @Test func theLinksEndEndsTheSequenceAndAWaitingRequest() async throws {
        // The H10 never answers a stop; it tells the test when the stop reached it.
        let (stopsWritten, stopWritten) = AsyncStream.makeStream(of: Void.self)
        let h10 = ScriptedH10 { request in
            guard request.first == 0x03 else { return ScriptedH10.h10Answer(request) }
            stopWritten.yield()
            return []
        }
        let pmd = try await h10.attach()
        let events = await pmd.events()
        try await pmd.start(.ecg, settings: .h10ECG)
        async let stopping = pmdFailure { try await pmd.stop(.ecg) }
        var stops = stopsWritten.makeAsyncIterator()
        _ = await stops.next()  // the request is out, waiting for its answer, when the link ends
        h10.bearer.end(with: .disconnected(reason: "supervision timeout"))
        guard case .gatt? = await stopping else {
            Issue.record("the waiting stop did not fail with the link")
            return
        }
        do {
            for try await _ in events {}
            Issue.record("the sequence ended without an error")
        } catch let error as PMDError {
            guard case .gatt = error else {
                Issue.record("expected the link's end, got \(error)")
                return
            }
        }
    }
}

/// The Polar example of docs/library.md, as written there, on the scripted H10.
@Suite("README examples (Polar PMD)", .timeLimit(.minutes(1)))
struct PMDReadmeExampleTests {
    @Test("the library example runs on a scripted H10: the features, both starts, ECG and acceleration with their times, the strap's stop")
    func libraryExample() async throws {
        let h10 = ScriptedH10()
        let gatt = GATTClient(bearer: h10.bearer)
        var lines: [String] = []
        try await gatt.exchangeMTU()
        let pmd = try await PMDClient.attach(to: gatt)
        lines.append("\(try await pmd.features())")
        let events = await pmd.events()
        try await pmd.start(.ecg, settings: .h10ECG)
        try await pmd.start(.acceleration, settings: .h10Acceleration(sampleRate: 200, range: 8))
        h10.notify(workedECGFrame)
        h10.notify([0x02, 0xEA, 0x54, 0xA2, 0x42, 0x8B, 0x45, 0x52, 0x08, 0x01, 0x45, 0xFF, 0xE4, 0xFF, 0xB5, 0x03])
        h10.indicate([0x01, 0x00, 0x02])
        do {
            for try await event in events {
                switch event {
                case .ecg(let frame): for (ns, uV) in zip(frame.times, frame.microvolts) { lines.append("ecg \(ns) \(uV)") }
                case .acceleration(let frame): for (ns, v) in zip(frame.times, frame.vectors) { lines.append("acc \(ns) \(v.x) \(v.y) \(v.z)") }
                case .stopped(let streams): lines.append("the strap stopped \(streams)")
                case .invalid(let raw, let error): lines.append("invalid \(raw): \(error)")
                case .frame: break
                }
            }
        } catch let error as PMDError {
            lines.append("\(error)")
        }
        await pmd.close()
        #expect(lines == [
            "ecg acc",
            "ecg 599616028213509295 104", "ecg 599616028221201603 88", "ecg 599616028228893910 70", "ecg 599616028236586218 61",
            "acc 599618164814402794 -187 -28 949",
            "the strap stopped [ecg, acc]",
            "the device stopped ecg and acc itself",
        ])
    }
}
