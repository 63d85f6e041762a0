import Foundation
import Glibc
import RawbleTestPeers
import RawbleTestSupport
import RawbleTransport
import RawbleWire
import Testing

/// The Bumble fixture, proven with the real H4 transport: Bumble's controller answers HCI, and
/// every peripheral in the ready line is seen advertising what the line says.
@Suite("BumblePeer", .serialized, .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct BumblePeerTests {
    /// Sends `command` and waits (bounded) for its Command Complete, returning it.
    static func run(_ command: HCICommand, on transport: H4StreamTransport,
                    events: inout AsyncThrowingStream<H4Packet, any Error>.AsyncIterator) async throws
        -> HCIEvent.CommandComplete
    {
        var writer = ByteWriter()
        command.encode(into: &writer)
        try await transport.send(H4Packet(type: .command, bytes: writer.bytes))
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            guard let packet = try await events.next() else { break }
            guard packet.type == .event, case .commandComplete(let complete) = try HCIEvent.decode(packet.bytes)
            else { continue }
            if complete.opcode == command.opcode { return complete }
        }
        throw TestTimeout()
    }

    /// Everything seen for one address while scanning.
    struct Seen {
        var advertisingData: [UInt8] = []
        var scanResponseData: [UInt8]?
        var connectable = false
    }

    /// Resets, scans actively and collects reports for every device in the ready line (≤ 5 s).
    static func scanAll(_ peer: BumblePeer, transport: H4StreamTransport) async throws -> [String: Seen] {
        var events = transport.packets.makeAsyncIterator()
        let reset = try await run(.reset, on: transport, events: &events)
        #expect(reset.status == .success)
        let parameters = try await run(
            .leSetScanParameters(.init(type: .active, interval: 0x10, window: 0x10, ownAddressType: .random)),
            on: transport, events: &events)
        #expect(parameters.status == .success)
        let enable = try await run(.leSetScanEnable(enable: true, filterDuplicates: false),
                                   on: transport, events: &events)
        #expect(enable.status == .success)

        let wanted = Set(peer.devices.map(\.address))
        var seen: [String: Seen] = [:]
        func complete() -> Bool {
            wanted.allSatisfy { address in
                guard let entry = seen[address], !entry.advertisingData.isEmpty else { return false }
                let device = peer.devices.first { $0.address == address }
                return device?.scanResponse != true || entry.scanResponseData != nil
            }
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while !complete(), ContinuousClock.now < deadline {
            guard let packet = try await events.next() else { break }
            guard packet.type == .event, case .le(let le) = try HCIEvent.decode(packet.bytes) else { continue }
            let reports: [AdvertisingReport]
            switch le {
            case .advertisingReport(let list), .extendedAdvertisingReport(let list): reports = list
            default: continue
            }
            for report in reports {
                let key = report.address.description
                var entry = seen[key] ?? Seen()
                if report.isScanResponse {
                    entry.scanResponseData = Array(report.data)
                } else {
                    entry.advertisingData = Array(report.data)
                    entry.connectable = report.isConnectable
                }
                seen[key] = entry
            }
        }
        return seen
    }

    @Test func peerAnswersResetAndEveryReadyLineDeviceIsSeenAdvertisingWhatItSaysOverTCP() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        let host = try #require(peer.host)
        let port = try #require(peer.port)
        #expect(peer.devices.map(\.name).sorted()
            == ["rawble-beacon", "rawble-broken", "rawble-strap", "rawble-thermo"])
        let transport = try await H4StreamTransport.connect(tcp: host, port: port)
        let seen = try await within(seconds: 15) { try await Self.scanAll(peer, transport: transport) }
        await transport.close()

        for device in peer.devices {
            let entry = try #require(seen[device.address], "\(device.name) not seen")
            #expect(entry.connectable == device.connectable, "\(device.name)")
            #expect(Hex.encode(entry.advertisingData) == device.advertisingData, "\(device.name)")
            let data = AdvertisingData(decoding: entry.advertisingData)
            let response = AdvertisingData(decoding: entry.scanResponseData ?? [])
            let name = data.localName ?? response.localName
            #expect(name == device.advertisedName, "\(device.name)")
            #expect(data.serviceUUIDs.map(\.description) == device.services, "\(device.name)")
            #expect(data.manufacturerData.map { [$0.companyID] } == device.manufacturerData.map { [$0.company] })
            #expect(data.manufacturerData.map { Array($0.data) } == device.manufacturerData.map(\.bytes))
            #expect((data.error != nil) == (device.malformed == true), "\(device.name)")
            if device.scanResponse {
                #expect(Hex.encode(entry.scanResponseData ?? [0xFF]) == device.scanResponseData, "\(device.name)")
            }
        }
        let thermo = try #require(peer.devices.first { $0.name == "rawble-thermo" })
        let thermoResponse = AdvertisingData(decoding: seen[thermo.address]?.scanResponseData ?? [])
        #expect(thermoResponse.localName == "rawble-thermo")
    }

    @Test func peerServesTheSameControllerOnAUnixSocket() async throws {
        let path = "/tmp/rawble-bumble-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let peer = try await BumblePeer.start(arguments: ["--unix", path])
        defer { peer.stop() }
        #expect(peer.socketPath == path)
        #expect(peer.port == nil)
        let transport = try await H4StreamTransport.connect(unix: path)
        let seen = try await within(seconds: 15) { try await Self.scanAll(peer, transport: transport) }
        await transport.close()
        let strap = try #require(peer.devices.first { $0.name == "rawble-strap" })
        let data = AdvertisingData(decoding: try #require(seen[strap.address]).advertisingData)
        #expect(data.localName == "rawble-strap")
    }

    @Test func stopEndsTheProcessAndNothingWasNotifiedWithoutASubscriber() async throws {
        let peer = try await BumblePeer.start(arguments: ["--no-standard", "--extra", "2"])
        #expect(peer.devices.map(\.name) == ["rawble-adv-0001", "rawble-adv-0002"])
        #expect(kill(peer.pid, 0) == 0)
        await peer.stopAndWait()
        #expect(kill(peer.pid, 0) == -1)
        #expect(try peer.sentHeartRateValues().isEmpty)
        peer.stop()  // idempotent
    }

    @Test("without the project's Python environment the peer does not start: bumbleNotInstalled, naming Scripts/bootstrap")
    func withoutTheProjectsPythonEnvironmentStartIsBumbleNotInstalled() async throws {
        let missing = "/nonexistent/rawble-venv-\(getpid())"
        await #expect(throws: BumblePeerError.bumbleNotInstalled) {
            _ = try await BumblePeer.start(environment: ["RAWBLE_VENV": missing], readyTimeout: .seconds(20))
        }
        #expect(BumblePeerError.bumbleNotInstalled.description.contains("run Scripts/bootstrap"))
    }

    @Test func aScriptThatDiesBeforeReadyIsReportedWithItsLastStderrLine() async throws {
        await #expect {
            _ = try await BumblePeer.start(arguments: ["--no-such-option"], readyTimeout: .seconds(20))
        } throws: { error in
            guard case .exitedBeforeReady(let status, let line) = error as? BumblePeerError else { return false }
            return status == 2 && line.contains("--no-such-option")
        }
    }

    // MARK: rawble-lab, the GATT test device

    @Test func labIsOffByDefaultAndItsDatabaseFieldsAreAbsentFromOtherDevices() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        #expect(!peer.devices.contains { $0.name == "rawble-lab" })
        #expect(peer.devices.allSatisfy { $0.gatt == nil && $0.handles == nil && $0.stream == nil })
    }

    @Test func labIsSeenAdvertisingItsServiceAndItsNameInTheScanResponse() async throws {
        let peer = try await BumblePeer.start(arguments: ["--no-standard", "--lab"])
        defer { peer.stop() }
        let lab = try #require(peer.devices.first { $0.name == "rawble-lab" })
        #expect(peer.devices.count == 1)
        let host = try #require(peer.host)
        let port = try #require(peer.port)
        let transport = try await H4StreamTransport.connect(tcp: host, port: port)
        let seen = try await within(seconds: 15) { try await Self.scanAll(peer, transport: transport) }
        await transport.close()

        let entry = try #require(seen[lab.address], "rawble-lab not seen")
        #expect(entry.connectable)
        #expect(Hex.encode(entry.advertisingData) == lab.advertisingData)
        #expect(Hex.encode(entry.scanResponseData ?? []) == lab.scanResponseData)
        let data = AdvertisingData(decoding: entry.advertisingData)
        #expect(data.error == nil)
        #expect(data.serviceUUIDs.map(\.description) == lab.services)
        #expect(lab.services.count == 1 && lab.services.first?.count == 36)
        #expect(AdvertisingData(decoding: entry.scanResponseData ?? []).localName == "rawble-lab")
    }

    @Test func labReadyLineListsAWholeConsistentDatabaseWithEveryRequiredService() async throws {
        let peer = try await BumblePeer.start(arguments: ["--no-standard", "--lab"])
        defer { peer.stop() }
        let lab = try #require(peer.devices.first { $0.name == "rawble-lab" })
        let services = try #require(lab.gatt)
        let handles = try #require(lab.handles)

        // Services tile the handle space from 1 with no gap or overlap; every attribute of a
        // service (include, declaration, value, descriptor) lies inside it, in increasing order.
        var next: UInt16 = 1
        for service in services {
            #expect(service.start == next, "\(service.uuid)")
            #expect(service.end >= service.start, "\(service.uuid)")
            var inner = service.start + 1
            for include in service.includes {
                #expect(include.handle == inner, "\(service.uuid)")
                inner = include.handle + 1
            }
            for characteristic in service.characteristics {
                #expect(characteristic.declaration == inner, "\(characteristic.uuid)")
                #expect(characteristic.value == characteristic.declaration + 1, "\(characteristic.uuid)")
                var last = characteristic.value
                for descriptor in characteristic.descriptors {
                    #expect(descriptor.handle == last + 1, "\(characteristic.uuid) \(descriptor.uuid)")
                    last = descriptor.handle
                }
                #expect(characteristic.end == last, "\(characteristic.uuid)")
                let notifies = characteristic.properties & 0x30 != 0
                #expect((characteristic.descriptor("2902") != nil) == notifies, "\(characteristic.uuid)")
                inner = last + 1
            }
            #expect(inner == service.end + 1, "\(service.uuid) has attributes not listed")
            next = service.end + 1
        }

        let labUUID = try #require(lab.services.first)
        #expect(services.map(\.uuid) == ["1800", "1801", "180A", "180F", "180D", labUUID])
        #expect(services.allSatisfy { $0.primary })
        let gap = try #require(lab.service("1800"))
        #expect(gap.characteristic("2A00")?.bytes == Array("rawble-lab".utf8))
        #expect(gap.characteristic("2A01")?.bytes?.count == 2)
        let serviceChanged = try #require(lab.service("1801")?.characteristic("2A05"))
        #expect(serviceChanged.properties == 0x20)
        #expect(handles.serviceChanged == serviceChanged.value)
        #expect(handles.serviceChangedCCCD == serviceChanged.descriptor("2902"))
        let information = try #require(lab.service("180A"))
        #expect(information.characteristic("2A29")?.bytes == Array("rawble-sim".utf8))
        #expect(information.characteristic("2A24")?.bytes == Array("LAB-1".utf8))
        let batteryService = try #require(lab.service("180F"))
        let battery = try #require(batteryService.characteristic("2A19"))
        #expect(battery.bytes == [87] && battery.properties == 0x12)
        #expect(handles.batteryLevel == battery.value && handles.batteryLevelCCCD == battery.descriptor("2902"))
        let heartRate = try #require(lab.service("180D"))
        let measurement = try #require(heartRate.characteristic("2A37"))
        #expect(measurement.properties == 0x10)
        #expect(handles.heartRateMeasurement == measurement.value)
        #expect(handles.heartRateMeasurementCCCD == measurement.descriptor("2902"))
        #expect(heartRate.characteristic("2A38")?.bytes == [1])

        let custom = try #require(lab.service(labUUID))
        #expect(custom.includes.map { [$0.start, $0.end] } == [[batteryService.start, batteryService.end]])
        #expect(custom.includes.first?.uuid == "180F")
        #expect(custom.characteristics.count == 4)
        #expect(custom.characteristics.allSatisfy { $0.uuid.count == 36 })
        let longRead = try #require(custom.characteristics.first { $0.value == handles.longRead })
        #expect(longRead.properties == 0x02)
        #expect(longRead.bytes == (0..<300).map { UInt8(truncatingIfNeeded: $0) })
        let writable = try #require(custom.characteristics.first { $0.value == handles.write })
        #expect(writable.properties & 0x0C == 0x0C)
        #expect(writable.descriptor("2901") != nil)
        let stream = try #require(custom.characteristics.first { $0.value == handles.stream })
        #expect(stream.properties & 0x30 == 0x30)
        #expect(handles.streamCCCD == stream.descriptor("2902"))
        let description = try #require(stream.descriptors.first { $0.uuid == "2901" }?.data)
        #expect(bytes(description) == Array("lab stream".utf8))
        // The presented value: sint16 2150, a User Description and a Presentation Format
        // (sint16, exponent -2, degree Celsius, Bluetooth SIG, main): 21.50 °C.
        let presented = try #require(custom.characteristic("72617762-6C65-4C61-6200-000000000005"))
        #expect(presented.properties == 0x02)
        #expect(presented.bytes == [0x66, 0x08])
        #expect(presented.descriptors.map(\.uuid) == ["2901", "2904"])
        #expect(presented.descriptors.last?.data.map { bytes($0) } == [0x0E, 0xFE, 0x2F, 0x27, 0x01, 0x06, 0x01])
        #expect(lab.stream.map { [Double($0.count), $0.rate, Double($0.size)] } == [5000, 1000, 20])
    }

    @Test func labStreamOptionsReachTheReadyLine() async throws {
        let peer = try await BumblePeer.start(
            arguments: ["--no-standard", "--lab", "--stream-count", "7", "--stream-rate", "50", "--stream-size", "64"])
        defer { peer.stop() }
        let lab = try #require(peer.devices.first { $0.name == "rawble-lab" })
        #expect(lab.stream.map { [Double($0.count), $0.rate, Double($0.size)] } == [7, 50, 64])
        #expect(try peer.completedWrites().isEmpty)
        #expect(try peer.sentStreamValues().isEmpty)
        #expect(try peer.streamSummaries().isEmpty)
        #expect(try peer.serviceChanges().isEmpty)
    }

    @Test func logHelpersKeepEachKindApartAndIgnoreAnUnfinishedLastLine() async throws {
        // The peer writes these files; here lines in its format are appended by hand so the
        // readers are proven without a GATT client (the lead's client drives the real ones).
        let peer = try await BumblePeer.start(arguments: ["--no-standard", "--extra", "1"])
        defer { peer.stop() }
        let writes = """
            {"kind": "write", "time": 1.5, "handle": 34, "value": "0102ff"}
            {"kind": "service-changed", "time": 2.0, "start": 40, "end": 42, "indicated": true}
            {"kind": "write", "time": 3.0, "handle": 34, "value": ""}
            {"kind": "write", "time": 4.0, "handle": 34, "val
            """
        try writes.write(toFile: peer.writeLogPath, atomically: true, encoding: .utf8)
        let stream = """
            {"kind": "stream", "time": 1.0, "counter": 0, "value": "00000000"}
            {"kind": "heart-rate", "time": 1.0, "index": 0, "value": "003e"}
            {"kind": "stream", "time": 1.1, "counter": 1, "value": "01000000"}
            {"kind": "stream-summary", "time": 2, "started": 1, "mode": "notification", "count": 2, "first": 0, "last": 1, "size": 4, "rate": 1000.0, "elapsed": 0.1, "cpu": 0.05, "maxLate": 0.0}

            """
        try stream.write(toFile: peer.streamLogPath, atomically: true, encoding: .utf8)
        try stream.write(toFile: peer.logPath, atomically: true, encoding: .utf8)

        #expect(try peer.completedWrites().map(\.bytes) == [[0x01, 0x02, 0xFF], []])
        #expect(try peer.completedWrites().map(\.handle) == [34, 34])
        #expect(try peer.serviceChanges().map { [$0.start, $0.end] } == [[40, 42]])
        #expect(try peer.sentStreamValues().map(\.counter) == [0, 1])
        #expect(try peer.sentStreamValues().map(\.bytes) == [[0, 0, 0, 0], [1, 0, 0, 0]])
        #expect(try peer.sentLabHeartRateValues() == [[0x00, 0x3E]])
        #expect(try peer.streamSummaries().map(\.count) == [2])
        #expect(try peer.sentHeartRateValues().isEmpty)  // lab lines are not the strap's

        try "{\"kind\": \"write\", \"time\": 1, \"handle\": 34}\n".write(
            toFile: peer.writeLogPath, atomically: true, encoding: .utf8)
        #expect(throws: BumblePeerError.self) { try peer.completedWrites() }
    }

    // MARK: rawble-strap's heart-rate options

    @Test func strapReadyLineCarriesItsHeartRateDefaultsAndNoOtherDeviceHasThem() async throws {
        let peer = try await BumblePeer.start()
        defer { peer.stop() }
        let strap = try #require(peer.devices.first { $0.name == "rawble-strap" })
        let settings = try #require(strap.heartRate)
        #expect(settings.script == "test" && settings.count == 12 && settings.interval == 0.25)
        #expect(settings.disconnectAfter == nil && !settings.invalid && !settings.refuseCCCD && !settings.silent)
        #expect(settings.handles.measurementCCCD == settings.handles.measurement + 1)
        #expect(settings.handles.controlPoint > settings.handles.bodySensorLocation)
        #expect(peer.devices.filter { $0.heartRate != nil }.map(\.name) == ["rawble-strap"])
    }

    @Test func strapOnlyPeerServesTheStrapAloneWithEveryOptionInItsReadyLine() async throws {
        let peer = try await BumblePeer.start(arguments: [
            "--strap-only", "--hr-script", "realistic", "--hr-count", "0", "--hr-seed", "7", "--hr-artifacts", "0",
            "--hr-interval", "0.5", "--hr-disconnect-after", "3", "--hr-disconnects", "0",
            "--hr-invalid", "--hr-refuse-cccd", "--hr-silent",
        ])
        defer { peer.stop() }
        #expect(peer.devices.map(\.name) == ["rawble-strap"])
        let settings = try #require(peer.devices.first?.heartRate)
        #expect(settings.script == "realistic" && settings.count == 0 && settings.seed == 7 && settings.artifacts == 0)
        #expect(settings.interval == 0.5)
        #expect(settings.disconnectAfter == 3 && settings.disconnects == 0)
        #expect(settings.invalid && settings.refuseCCCD && settings.silent)

        let transport = try await H4StreamTransport.connect(tcp: try #require(peer.host), port: try #require(peer.port))
        let seen = try await within(seconds: 15) { try await Self.scanAll(peer, transport: transport) }
        await transport.close()
        let strap = try #require(peer.devices.first)
        let data = AdvertisingData(decoding: try #require(seen[strap.address]).advertisingData)
        #expect(data.localName == "rawble-strap")
        #expect(data.serviceUUIDs.map(\.description) == ["180D", "180F"])
        #expect(try peer.heartRateLog().isEmpty)  // nothing without a subscriber
    }

    /// What `--hr-summary` prints: the realistic script's figures over a session.
    struct RealisticSummary: Decodable {
        struct Artifacts: Decodable {
            var missed: Int
            var extra: Int
            var ectopic: Int
        }
        var seconds: Int
        var rmssdRestMs: Double
        var restPairs: Int
        var rmssdHighMs: Double
        var highPairs: Int
        var artifacts: Artifacts
        var rrSeconds: Double
        var bpmAgreeing: Int
        var valuesCompared: Int
        var longestValue: Int
    }

    /// Runs the peer's `--hr-summary` (pure computation: no controller, no Bumble device).
    static func realisticSummary(_ arguments: [String]) async throws -> RealisticSummary {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BumblePeer.scriptPath)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let reader = output.fileHandleForReading
        let data = try await within(seconds: 60) { try await onOwnThread { reader.readToEndRetryingInterrupts() } }
        try await within(seconds: 10) { try await onOwnThread { process.waitUntilExit() } }
        #expect(process.terminationStatus == 0)
        return try JSONDecoder().decode(RealisticSummary.self, from: data)
    }

    /// The realistic script (Scripts/sim-strap's, the demo's) over four seeded hours: heart-rate
    /// variability as a person would recognise it, artifacts at the documented rate, the RR
    /// series covering the session, the bpm field the second's mean RR.
    @Test func realisticScriptHasPhysiologicalVariabilityAndOccasionalArtifacts() async throws {
        let hours = 4
        let summary = try await Self.realisticSummary(["--hr-summary", "\(hours * 3600)", "--hr-seed", "1"])
        #expect(summary.restPairs > 200 && summary.highPairs > 200)
        #expect((35...70).contains(summary.rmssdRestMs), "RMSSD at rest \(summary.rmssdRestMs) ms")
        #expect((4...18).contains(summary.rmssdHighMs), "RMSSD at 140+ bpm \(summary.rmssdHighMs) ms")
        // 30 an hour: 120 expected (±11 for one standard deviation), 40 of each kind (±6).
        let a = summary.artifacts
        #expect((85...160).contains(a.missed + a.extra + a.ectopic), "\(a)")
        #expect([a.missed, a.extra, a.ectopic].allSatisfy { (20...65).contains($0) }, "\(a)")
        // The RR sum covers the session, less the beat under way.
        #expect(summary.rrSeconds > Double(summary.seconds) - 2.5 && summary.rrSeconds <= Double(summary.seconds))
        #expect(summary.valuesCompared > summary.seconds * 9 / 10 && summary.bpmAgreeing == summary.valuesCompared)
        #expect(summary.longestValue <= 20)  // 9 RR with energy at most: a 23-byte MTU's room

        let clean = try await Self.realisticSummary(["--hr-summary", "3600", "--hr-seed", "1", "--hr-artifacts", "0"])
        #expect(clean.artifacts.missed + clean.artifacts.extra + clean.artifacts.ectopic == 0)
        #expect(clean.bpmAgreeing == clean.valuesCompared && clean.valuesCompared == 3600)
    }

    @Test(arguments: [
        ["--hr-disconnect-after", "0"], ["--hr-script", "workout"], ["--hr-count", "-1"],
        ["--hr-disconnect-after"], ["--hr-artifacts", "-1"], ["--hr-summary", "0"],
    ])
    func badStrapOptionsStopThePeerBeforeItIsReady(arguments: [String]) async throws {
        await #expect {
            _ = try await BumblePeer.start(arguments: arguments, readyTimeout: .seconds(20))
        } throws: { error in
            guard case .exitedBeforeReady(let status, let line) = error as? BumblePeerError else { return false }
            return status == 2 && line.contains(arguments[0])
        }
    }

    @Test func heartRateLogTypesEveryStrapLineAndSentValuesKeepInvalidOnesInOrder() async throws {
        let peer = try await BumblePeer.start(arguments: ["--no-standard", "--extra", "1"])
        defer { peer.stop() }
        let log = """
            {"kind": "subscription", "time": 1.0, "notify": true, "indicate": false}
            {"time": 1.1, "value": "003e", "position": 0, "index": 0}
            {"time": 1.2, "value": "1048", "position": 1, "invalid": "rr-missing"}
            {"time": 1.3, "value": "", "position": 2, "invalid": "empty"}
            {"kind": "disconnect", "time": 1.4, "after": 3, "onConnection": 3, "reason": 19}
            {"kind": "cccd-refused", "time": 1.5, "value": "0100"}
            {"kind": "energy-reset", "time": 1.6, "position": 3}
            {"kind": "control-point-refused", "time": 1.7, "value": "02"}
            {"kind": "something-new", "time": 1.8}
            {"time": 1.9, "value": "0640"}
            {"time": 2.0, "value": "0640", "posi
            """
        try log.write(toFile: peer.logPath, atomically: true, encoding: .utf8)
        let entries = try peer.heartRateLog()
        #expect(entries.count == 10)
        #expect(entries.first == .subscription(time: 1.0, notify: true, indicate: false))
        #expect(entries.contains(BumblePeer.HeartRateLogEntry.disconnect(.init(time: 1.4, after: 3, onConnection: 3, reason: 0x13))))
        #expect(entries.contains(.cccdRefused(time: 1.5, value: [0x01, 0x00])))
        #expect(entries.contains(.energyReset(time: 1.6, position: 3)))
        #expect(entries.contains(.controlPointRefused(time: 1.7, value: [0x02])))
        #expect(entries.contains(.other(kind: "something-new")))
        let sent = try peer.sentHeartRateMeasurements()
        #expect(sent.map(\.bytes) == [[0x00, 0x3E], [0x10, 0x48], [], [0x06, 0x40]])
        #expect(sent.map(\.isValid) == [true, false, false, true])
        #expect(sent.map(\.invalidReason) == [nil, "rr-missing", "empty", nil])
        #expect(sent.map(\.index) == [0, nil, nil, nil])
        #expect(sent.map(\.position) == [0, 1, 2, nil])
        #expect(try peer.strapDisconnects().map(\.after) == [3])

        // sentHeartRateValues() reads whole files the strap wrote: every value, valid or not.
        try (log.split(separator: "\n").dropLast().joined(separator: "\n") + "\n")
            .write(toFile: peer.logPath, atomically: true, encoding: .utf8)
        #expect(try peer.sentHeartRateValues() == sent.map(\.bytes))

        try "{\"kind\": \"disconnect\", \"time\": 1}\n".write(toFile: peer.logPath, atomically: true, encoding: .utf8)
        #expect(throws: BumblePeerError.self) { try peer.heartRateLog() }
        try "{\"time\": 1, \"value\": \"0g\"}\n".write(toFile: peer.logPath, atomically: true, encoding: .utf8)
        #expect(throws: BumblePeerError.self) { try peer.heartRateLog() }
    }

    // MARK: the strap's GATT side, driven with raw HCI and ATT (no GATT client)

    /// A bare-bones central over H4: connects to the strap, writes its CCCD and collects
    /// notifications, each wait bounded by the caller's `within`.
    struct RawCentral {
        let transport: H4StreamTransport
        var events: AsyncThrowingStream<H4Packet, any Error>.AsyncIterator
        var handle: UInt16 = 0

        enum Arrival: Equatable {
            case notification(handle: UInt16, value: [UInt8])
            case attResponse([UInt8])
            case disconnected(reason: UInt8)
        }

        init(_ transport: H4StreamTransport) async throws {
            self.transport = transport
            events = transport.packets.makeAsyncIterator()
            #expect(try await BumblePeerTests.run(.reset, on: transport, events: &events).status == .success)
            let own = try #require(BluetoothAddress("F0:F1:F2:F3:F4:F5"))
            #expect(try await BumblePeerTests.run(.leSetRandomAddress(own), on: transport, events: &events).status
                == .success)
        }

        /// LE Create Connection to `address` (random), until LE Connection Complete.
        mutating func connect(to address: String) async throws {
            let peer = try #require(BluetoothAddress(address))
            let command = HCICommand.leCreateConnection(.init(
                scanInterval: 0x10, scanWindow: 0x10, peerAddressType: .random, peerAddress: peer,
                ownAddressType: .random,
                connection: .init(intervalMin: 24, intervalMax: 40, maxLatency: 0, supervisionTimeout: 400)))
            try await transport.send(H4Packet(type: .command, bytes: command.encoded))
            while let packet = try await events.next() {
                guard packet.type == .event, case .le(.connectionComplete(let complete)) = try HCIEvent.decode(packet.bytes)
                else { continue }
                #expect(complete.status == .success)
                handle = complete.connectionHandle
                return
            }
            throw TestTimeout()
        }

        /// Sends one ATT PDU on the connection (fixed channel 4, one ACL packet).
        func sendATT(_ pdu: [UInt8]) async throws {
            let frame = L2CAPFrame(channelID: L2CAPChannelID(4), payload: pdu)
            let acl = ACLPacket(handle: handle, packetBoundary: .firstNonFlushable, payload: frame.encoded[...])
            try await transport.send(H4Packet(type: .acl, bytes: acl.encoded))
        }

        /// The next ATT PDU or disconnection (whole L2CAP frames in one ACL packet, as Bumble sends).
        mutating func next() async throws -> Arrival {
            while let packet = try await events.next() {
                if packet.type == .event, case .disconnectionComplete(let done) = try HCIEvent.decode(packet.bytes) {
                    #expect(done.connectionHandle == handle)
                    return .disconnected(reason: done.reason.rawValue)
                }
                guard packet.type == .acl else { continue }
                let acl = try ACLPacket.decode(packet.bytes[...])
                let frame = try L2CAPFrame.decode(acl.payload)
                guard frame.channelID == L2CAPChannelID(4), let opcode = frame.payload.first else { continue }
                let pdu = Array(frame.payload)
                if opcode == 0x1B, pdu.count >= 3 {
                    return .notification(handle: UInt16(pdu[1]) | UInt16(pdu[2]) << 8, value: Array(pdu[3...]))
                }
                return .attResponse(pdu)
            }
            throw TestTimeout()
        }

        /// Writes `value` to `attribute` with a Write Request and returns the answer PDU.
        mutating func write(_ value: [UInt8], to attribute: UInt16) async throws -> [UInt8] {
            try await sendATT([0x12, UInt8(attribute & 0xFF), UInt8(attribute >> 8)] + value)
            while true {
                if case .attResponse(let pdu) = try await next() { return pdu }
            }
        }
    }

    @Test func strapDisconnectsAfterNNotificationsWithReason0x13AndResumesWhereItStoppedOnReconnection() async throws {
        let peer = try await BumblePeer.start(arguments: [
            "--strap-only", "--hr-count", "4", "--hr-interval", "0.02", "--hr-invalid", "--hr-disconnect-after", "2",
        ])
        defer { peer.stop() }
        let strap = try #require(peer.devices.first)
        let handles = try #require(strap.heartRate?.handles)
        let transport = try await H4StreamTransport.connect(tcp: try #require(peer.host), port: try #require(peer.port))
        defer { Task { await transport.close() } }
        let (first, reason, second) = try await within(seconds: 20) {
            var central = try await RawCentral(transport)
            var first: [[UInt8]] = [], second: [[UInt8]] = []
            try await central.connect(to: strap.address)
            #expect(try await central.write([0x01, 0x00], to: handles.measurementCCCD) == [0x13])
            var reason: UInt8?
            while reason == nil {
                switch try await central.next() {
                case .notification(let handle, let value):
                    #expect(handle == handles.measurement)
                    first.append(value)
                case .disconnected(let why): reason = why
                case .attResponse: break
                }
            }
            try await central.connect(to: strap.address)  // it advertises again
            #expect(try await central.write([0x01, 0x00], to: handles.measurementCCCD) == [0x13])
            while second.count < 4 {
                if case .notification(_, let value) = try await central.next() { second.append(value) }
            }
            return (first, reason, second)
        }
        #expect(reason == 0x13)
        #expect(first.count == 2)
        let sent = try peer.sentHeartRateMeasurements()
        #expect(sent.map(\.bytes) == first + second)  // each value once, in order, across both links
        #expect(sent.map(\.position) == [0, 1, 2, 3, 4, 5])
        #expect(sent.map(\.index) == [0, nil, 1, 2, nil, 3])
        #expect(sent.map(\.invalidReason) == [nil, "rr-missing", nil, nil, "empty", nil])
        #expect(try peer.sentHeartRateValues() == first + second)
        #expect(try peer.strapDisconnects().map { [$0.after, $0.onConnection, Int($0.reason)] } == [[2, 2, 0x13]])
        let log = try peer.heartRateLog()
        let disconnectAt = try #require(log.firstIndex { if case .disconnect = $0 { true } else { false } })
        #expect(log[..<disconnectAt].filter { if case .sent = $0 { true } else { false } }.count == 2)
    }

    @Test func strapRefusingTheCCCDAnswersError0xFDAndControlPointAnswers0x80ExceptForAReset() async throws {
        let peer = try await BumblePeer.start(arguments: ["--strap-only", "--hr-refuse-cccd", "--hr-interval", "0.01"])
        defer { peer.stop() }
        let strap = try #require(peer.devices.first)
        let handles = try #require(strap.heartRate?.handles)
        let transport = try await H4StreamTransport.connect(tcp: try #require(peer.host), port: try #require(peer.port))
        defer { Task { await transport.close() } }
        let answers = try await within(seconds: 20) {
            var central = try await RawCentral(transport)
            try await central.connect(to: strap.address)
            let cccd = try await central.write([0x01, 0x00], to: handles.measurementCCCD)
            let refused = try await central.write([0x02], to: handles.controlPoint)
            let reset = try await central.write([0x01], to: handles.controlPoint)
            return [cccd, refused, reset]
        }
        let cccd = handles.measurementCCCD, point = handles.controlPoint
        #expect(answers[0] == [0x01, 0x12, UInt8(cccd & 0xFF), UInt8(cccd >> 8), 0xFD])
        #expect(answers[1] == [0x01, 0x12, UInt8(point & 0xFF), UInt8(point >> 8), 0x80])
        #expect(answers[2] == [0x13])
        let log = try peer.heartRateLog()
        #expect(log.count == 3)
        #expect(log.first.map { if case .cccdRefused(_, [0x01, 0x00]) = $0 { true } else { false } } == true)
        #expect(log.dropFirst().first.map { if case .controlPointRefused(_, [0x02]) = $0 { true } else { false } } == true)
        #expect(log.last.map { if case .energyReset(_, 0) = $0 { true } else { false } } == true)
        #expect(try peer.sentHeartRateValues().isEmpty)
    }
}
