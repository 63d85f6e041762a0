import RawbleBearer
import RawbleGATT
import RawbleGATTCore
import RawbleHeartRate
import RawbleTestSupport
import RawbleWire
import Testing

/// The "Heart Rate in the library" example of docs/library.md, as written there, on a scripted strap
/// (the loop ends when the strap's link does; the energy reset is then refused by a dead link).
@Suite("README examples (Heart Rate)")
struct HeartRateReadmeExampleTests {
    @Test("the library example runs on a scripted strap with the request count docs/library.md states")
    func libraryExample() async throws {
        let strap = ScriptedATTBearer()
        StrapScript.expectAttach(on: strap)
        for uuid: UInt16 in [0x2A00, 0x2A29, 0x2A24, 0x2A19] {
            strap.expect(StrapScript.readByType(uuid), reply: [StrapScript.readByTypeError(0x0A)])
        }
        strap.expect([0x0A, 0x15, 0x00], reply: [[0x0B, 0x01]])
        strap.expect(StrapScript.enableNotifications, reply: [
            StrapScript.writeResponse, StrapScript.notification([0x16, 0x5A, 0x30, 0x02]), StrapScript.notification([0x01]),
        ])
        let gatt = GATTClient(bearer: strap)
        let printed = Task { () async throws -> [String] in
            var lines: [String] = []
            let monitor = try await HeartRateMonitor.attach(to: gatt)
            let info = await monitor.deviceInfo()
            lines.append("\(info.bodySensorLocation ?? .other)")
            do {
                for try await event in try await monitor.measurements() {
                    switch event {
                    case .measurement(let measurement, _): lines.append("\(measurement)")
                    case .invalid(let raw, let error): lines.append("invalid \(raw): \(error)")
                    }
                    if lines.count == 3 { strap.end(with: .disconnected(reason: "strap off")) }
                }
            } catch let error as HeartRateError {
                lines.append("\(error)")
            }
            return lines
        }
        let lines = try await withThrowingTaskGroup(of: [String].self) { group in
            group.addTask { try await printed.value }
            group.addTask {
                // A hang guard, as generous as `within`'s (the whole suite shares the pool).
                try await Task.sleep(for: .seconds(60))
                printed.cancel()
                return []
            }
            let first = try await group.next() ?? []
            group.cancelAll()
            return first
        }
        #expect(lines.count == 4)
        #expect(lines.first == "chest")
        #expect(lines.dropFirst().first?.hasPrefix("90 bpm, contact detected") == true)
        #expect(lines.dropFirst(2).first?.hasPrefix("invalid [1]: ") == true)
        #expect(lines.last?.contains("strap off") == true)
        // attach + measurements(): 5 requests; deviceInfo(): 5.
        #expect(strap.sentPDUs.count == 10)
        #expect(strap.unexpectedPDUs.isEmpty)
    }
}
