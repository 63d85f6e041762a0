import Foundation
import RawbleTestPeers
import RawbleTestSupport
import RawbleWire
import Testing

/// `rawble hr --lsl` and `rawble ecg --lsl`, received by an independent inlet (pylsl, with the
/// liblsl of its wheel) as LabRecorder would: every value the simulated strap sent, the streams'
/// metadata, and timestamps that follow the strap's own sample clock. LSL's discovery stays on
/// this machine (`LSLInlet.writeMachineOnlyConfig`). Serialized: the simulated straps of two
/// tests could share an address, and so a source ID.
@Suite("--lsl outlets, received by pylsl", .serialized, .tags(.bumble),
       .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct LSLOutletTests {
    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rawble-lsl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Where `part` starts in `whole` as one contiguous run (`whole` read as a loop when `loop`).
    static func offset<T: Equatable>(of part: [T], in whole: [T], loop: Bool = false) -> Int? {
        guard let first = part.first, !whole.isEmpty else { return nil }
        return whole.indices.first { start in
            whole[start] == first && part.indices.allSatisfy { index in
                let at = start + index
                if loop { return whole[at % whole.count] == part[index] }
                return at < whole.count && whole[at] == part[index]
            }
        }
    }

    @Test("ecg --acc --lsl: ECG, acceleration, heart rate and RR as four streams with their metadata; the values the H10 sent; ECG and acceleration timestamps spaced as the strap's samples, not bunched per frame; the run goes on to its count after the inlet left")
    func ecgStreams() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let truthPath = directory.appendingPathComponent("truth.json").path
        let config = try LSLInlet.writeMachineOnlyConfig(in: directory)
        let library = try LSLInlet.venvLibrary()
        let peer = try await BumblePeer.start(arguments: ["--h10", "--h10-truth", truthPath])
        defer { peer.stop() }
        let strap = try #require(peer.devices.first { $0.name.hasPrefix("Polar H10") })
        let ids = ["ECG", "Accelerometer", "HR", "RR"].map { "rawble:\(strap.address):\($0)" }
        // The inlet takes three seconds of ECG and leaves; rawble goes on to six.
        async let received = LSLInlet.receive(
            [(ids[0], 390), (ids[1], 300), (ids[2], 2), (ids[3], 2)], config: config, seconds: 30)
        async let run = CLI.run(["ecg", "--acc", "--lsl", "--json", "--count", "780", "--transport", peer.transport],
                                environment: ["RAWBLE_LIBLSL": library, "LSLAPICFG": config])
        let (reception, result) = try await (received, run)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let ecgEvents = try result.stdoutLines.map(CLI.jsonObject).filter { $0["event"] as? String == "ecg" }
        #expect(ecgEvents.flatMap { $0["uV"] as? [Int] ?? [] }.count == 780)
        #expect(reception.complete, "received \(reception.streams.map { "\($0.sourceID): \($0.values.count)" })")

        // Metadata, as the stream's XML carries it.
        let ecg = try #require(reception.stream(ids[0]))
        let acc = try #require(reception.stream(ids[1]))
        let hr = try #require(reception.stream(ids[2]))
        let rr = try #require(reception.stream(ids[3]))
        for (stream, type) in zip([ecg, acc, hr, rr], ["ECG", "Accelerometer", "HR", "RR"]) {
            #expect(stream.resolved)
            #expect(stream.type == type)
            #expect(stream.sourceIDInXML == stream.sourceID)
            #expect(stream.name == "\(strap.name) \(type)")
            #expect(stream.acquisition?["manufacturer"] == "Polar Electro Oy")
            #expect(stream.acquisition?["model"] == "H10")
            #expect(stream.acquisition?["bluetooth_address"] == strap.address)
        }
        #expect(ecg.nominalRate == 130)
        #expect(acc.nominalRate == 200)
        #expect(hr.nominalRate == 0 && rr.nominalRate == 0)
        #expect(ecg.channels?.map { [$0.label, $0.unit, $0.type] } == [["ECG", "microvolts", "ECG"]])
        #expect(acc.channels?.map(\.label) == ["X", "Y", "Z"])
        #expect(acc.channels?.allSatisfy { $0.unit == "mG" } == true)
        #expect(hr.channels?.map { [$0.label, $0.unit, $0.type] } == [["HR", "bpm", "HR"]])
        #expect(rr.channels?.map { [$0.label, $0.unit, $0.type] } == [["RR", "ms", "RR"]])

        // ECG: one contiguous run of the strap's loop, 1/130 s apart, on LSL's clock.
        let truth = try JSONDecoder().decode(ECGCommandTests.Truth.self, from: Data(contentsOf: URL(fileURLWithPath: truthPath)))
        let microvolts = ecg.values.map { Int32($0[0]) }
        #expect(Self.offset(of: microvolts, in: truth.ecgMicrovolts, loop: true) != nil, "the ECG received is not the strap's")
        Self.expectSpacing(ecg, seconds: 1.0 / 130)
        // Acceleration: a contiguous run of the vectors the strap logged sending, 1/200 s apart.
        let log = try ECGCommandTests.peerLog(peer)
        let sentVectors = log.filter { $0["kind"] as? String == "h10-frame" && $0["measurement"] as? String == "acc" }
            .flatMap { $0["samples"] as? [[Int]] ?? [] }
        let vectors = acc.values.map { $0.map { Int($0) } }
        #expect(Self.offset(of: vectors, in: sentVectors) != nil, "the vectors received are not the strap's")
        Self.expectSpacing(acc, seconds: 1.0 / 200)

        // Heart rate and RR: runs of what the strap's Heart Rate measurements carried; each
        // beat its RR interval after the previous one (or less, never more: the chain only moves
        // back to a measurement's arrival), in order, and none after it was received.
        let measurements = try log.filter { $0["kind"] as? String == "h10-heart-rate" }
            .map { try HeartRateMeasurement.decode(Hex.decode(try #require($0["value"] as? String))) }
        let sentBPM = measurements.map { Int($0.bpm) }
        let sentRR = measurements.flatMap { $0.rrIntervals.map { Float($0.milliseconds) } }
        #expect(Self.offset(of: hr.values.map { Int($0[0]) }, in: sentBPM) != nil, "bpm \(hr.values) of \(sentBPM)")
        let receivedRR = rr.values.map { Float($0[0]) }
        #expect(Self.offset(of: receivedRR, in: sentRR) != nil, "RR \(receivedRR) of \(sentRR)")
        for index in rr.timestamps.indices.dropFirst() {
            let spacing = rr.timestamps[index] - rr.timestamps[index - 1]
            #expect(spacing <= Double(receivedRR[index]) / 1000 + 1e-3 && spacing >= 0, "beat \(index): \(spacing) s after the previous, RR \(receivedRR[index]) ms")
        }
        for stream in [hr, rr] {
            #expect(zip(stream.timestamps, stream.pulledAt).allSatisfy { $0 <= $1 }, "\(stream.type ?? ""): a beat after its arrival")
        }
    }

    /// Consecutive timestamps `seconds` apart (the strap's sample spacing, within a
    /// microsecond, across frames too), and on LSL's clock: within two seconds of when they
    /// were pulled (a device time would be years away).
    static func expectSpacing(_ stream: LSLInlet.Stream, seconds: Double) {
        let spacings = zip(stream.timestamps, stream.timestamps.dropFirst()).map { $1 - $0 }
        #expect(!spacings.isEmpty)
        let off = spacings.enumerated().filter { abs($0.element - seconds) > 1e-6 }
        #expect(off.isEmpty, "\(stream.type ?? ""): \(off.count) of \(spacings.count) spacings are not \(seconds) s: \(off.prefix(5))")
        #expect(zip(stream.timestamps, stream.pulledAt).allSatisfy { abs($0 - $1) < 2 })
    }

    @Test("hr --lsl: heart rate and RR from a plain strap, its Device Information in the metadata, every value as sent")
    func heartRateStreams() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try LSLInlet.writeMachineOnlyConfig(in: directory)
        let library = try LSLInlet.venvLibrary()
        let peer = try await BumblePeer.start(arguments: ["--hr-interval", "0.05", "--hr-count", "1000"])
        defer { peer.stop() }
        let strap = try #require(peer.straps.first)
        let ids = ["HR", "RR"].map { "rawble:\(strap.address):\($0)" }
        async let received = LSLInlet.receive([(ids[0], 10), (ids[1], 5)], config: config, seconds: 30)
        async let run = CLI.run(["hr", "--lsl", "--json", "--count", "60", "--transport", peer.transport],
                                environment: ["RAWBLE_LIBLSL": library, "LSLAPICFG": config])
        let (reception, result) = try await (received, run)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(reception.complete, "received \(reception.streams.map { "\($0.sourceID): \($0.values.count)" })")
        let hr = try #require(reception.stream(ids[0]))
        let rr = try #require(reception.stream(ids[1]))
        for (stream, type) in zip([hr, rr], ["HR", "RR"]) {
            #expect(stream.type == type)
            #expect(stream.nominalRate == 0)
            #expect(stream.name == "rawble-strap \(type)")
            #expect(stream.acquisition?["manufacturer"] == "rawble-sim")
            #expect(stream.acquisition?["model"] == "HRM-1")
        }
        let sent = try peer.sentHeartRateValues().compactMap { try? HeartRateMeasurement.decode($0) }
        #expect(Self.offset(of: hr.values.map { Int($0[0]) }, in: sent.map { Int($0.bpm) }) != nil, "bpm \(hr.values)")
        let sentRR = sent.flatMap { $0.rrIntervals.map { Float($0.milliseconds) } }
        #expect(Self.offset(of: rr.values.map { Float($0[0]) }, in: sentRR) != nil, "RR \(rr.values)")
        #expect(zip(rr.timestamps, rr.pulledAt).allSatisfy { $0 <= $1 })
    }

    @Test("hr --all --lsl with two straps, one dropping its link after five values: each strap its own streams under its own address, and the dropped one's stream goes on after its reconnection")
    func severalStrapsAndAReconnection() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try LSLInlet.writeMachineOnlyConfig(in: directory)
        let library = try LSLInlet.venvLibrary()
        let peer = try await BumblePeer.start(arguments: [
            "--strap-only", "--straps", "2", "--hr-interval", "0.05", "--hr-count", "1000",
            "--strap-drops", "1", "--hr-disconnect-after", "5", "--hr-disconnects", "1",
        ])
        defer { peer.stop() }
        let straps = peer.straps
        #expect(straps.count == 2)
        let ids = straps.map { "rawble:\($0.address):HR" }
        async let received = LSLInlet.receive(ids.map { ($0, 20) }, config: config, seconds: 30)
        async let run = CLI.run(["hr", "--all", "--max", "2", "--lsl", "--json", "--count", "40", "--timeout", "20",
                                 "--transport", peer.transport],
                                environment: ["RAWBLE_LIBLSL": library, "LSLAPICFG": config])
        let (reception, result) = try await (received, run)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(reception.complete, "received \(reception.streams.map { "\($0.sourceID): \($0.values.count)" })")
        let events = result.stdoutLines.compactMap { try? CLI.jsonObject($0) }
        for (strap, id) in zip(straps, ids) {
            let stream = try #require(reception.stream(id))
            #expect(stream.name == "\(strap.name) HR")
            let sent = try peer.sentHeartRateMeasurements(strap: strap.address).compactMap { try? HeartRateMeasurement.decode($0.bytes) }
            #expect(Self.offset(of: stream.values.map { Int($0[0]) }, in: sent.map { Int($0.bpm) }) != nil,
                    "\(strap.name): \(stream.values.map { Int($0[0]) }) of \(sent.map(\.bpm))")
        }
        // The strap that dropped: connected twice, and more of its values came through its one
        // stream than its first link carried.
        let dropped = try #require(straps.first { strap in
            events.filter { $0["event"] as? String == "connected" && $0["address"] as? String == strap.address }.count == 2
        })
        #expect((reception.stream("rawble:\(dropped.address):HR")?.values.count ?? 0) > 5)
    }

    @Test("--lsl without liblsl: one line naming the cause and where to get it, status 69 (unavailable), before any strap is looked for")
    func missingLibrary() async throws {
        for command in ["hr", "ecg"] {
            let result = try await CLI.run([command, "--lsl", "--transport", "tcp:127.0.0.1:9"],
                                           environment: ["RAWBLE_LIBLSL": "/nonexistent/liblsl.so.2"])
            #expect(result.status == 69, "\(command): stderr \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(command): stderr \(result.stderr)")
            #expect(result.stderr.contains("liblsl") && result.stderr.contains("/nonexistent/liblsl.so.2"))
            #expect(result.stderr.contains("pip install pylsl") && result.stderr.contains("RAWBLE_LIBLSL"))
        }
    }
}
