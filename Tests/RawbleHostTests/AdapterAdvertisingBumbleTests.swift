import Foundation
import RawbleHost
import RawbleHostCore
import RawbleTestPeers
import RawbleTestSupport
import RawbleTransport
import RawbleWire
import Testing

/// The project's Bumble central (`Scripts/bumble-central`, two centrals, ``BumbleCentral``) on a
/// virtual link with the controller rawble drives: each central finds rawble's advertisement by
/// name, connects, exchanges the ATT MTU with rawble, discovers its (empty) database and
/// disconnects; the second finds rawble only once rawble advertises again after the first link.
@Suite("Advertising: a Bumble central connects to rawble", .serialized,
       .tags(.bumble), .enabled(if: TestRequirements.bumbleSuitesEnabled, "RAWBLE_TESTS_WITHOUT_BUMBLE=1"))
struct AdapterAdvertisingBumbleTests {
    /// ATT requests rawble's test server answers with Attribute Not Found: every request a
    /// central's discovery or reads may send (Core Vol 3 Part F 3.4).
    static let requestOpcodes: Set<UInt8> = [0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20]

    /// What a by-hand server with no attributes answers to `pdu`: Exchange MTU with 64, other
    /// requests with an Error Response (Attribute Not Found at the starting handle), nothing
    /// to commands.
    static func answer(_ pdu: [UInt8]) -> [UInt8]? {
        guard let opcode = pdu.first else { return nil }
        if opcode == 0x02 { return [0x03, 0x40, 0x00] }
        guard requestOpcodes.contains(opcode) else { return nil }
        let handle: [UInt8] = pdu.count >= 3 ? [pdu[1], pdu[2]] : [0, 0]
        return [0x01, opcode] + handle + [0x0A]
    }

    /// One event in a line, for failure messages.
    static func summary(_ event: BumbleCentral.Event) -> String {
        "\(event.central ?? 0):\(event.event)" + (event.doneReason.map { "(\($0))" } ?? "")
            + (event.disconnectReason.map { "(0x\(String($0, radix: 16)))" } ?? "")
            + (event.message.map { "(\($0))" } ?? "")
    }

    @Test("found by name, connected, ATT MTU exchanged both ways; advertising again after the disconnection for a second central",
          arguments: [false, true])
    func bumbleCentralsConnectOneAfterTheOther(extended: Bool) async throws {
        let name = "rawble-adv-test"
        // --extended-controller: the controller rawble drives lists the extended advertising
        // commands (Bumble implements them but does not list them).
        let central = try await BumbleCentral.start(
            target: name, arguments: ["--no-standard"] + (extended ? ["--extended-controller"] : []),
            centrals: 2, timeout: 90, mtu: 100)
        defer { central.stop() }
        let served = try #require(central.peer.controllers.first)
        let host = try #require(served.host)
        let port = try #require(served.port)

        var configuration = Adapter.Configuration()
        configuration.logger.logLevel = .critical
        let adapter = try await Adapter.open(try await H4StreamTransport.connect(tcp: host, port: port),
                                             configuration: configuration)
        #expect(await adapter.usesExtendedAdvertising == extended)
        let set = try await adapter.advertise(Advertisement(
            data: AdvertisingData(serviceUUIDs: [BluetoothUUID(UInt16(0x180D))], localName: name),
            scanResponse: AdvertisingData([.txPowerLevel(-4)])))
        #expect(set.isExtended == extended)

        // rawble serves both links, one after the other, and keeps the requests of each.
        let serving = Task { () -> [[[UInt8]]] in
            var links: [[[UInt8]]] = []
            for await connection in adapter.incomingConnections {
                var requests: [[UInt8]] = []
                do {
                    for try await pdu in connection.att.pdus {
                        requests.append(pdu)
                        if let answer = Self.answer(pdu) { try await connection.att.send(answer) }
                    }
                } catch {}
                links.append(requests)
                if links.count == 2 { break }
            }
            return links
        }
        defer { serving.cancel() }

        for number in 1...2 {
            do {
                let done = try await central.finished(central: number, within: 120)
                #expect(done.doneReason == "complete", "central \(number): \(central.events.map(Self.summary))")
            } catch {
                Issue.record("central \(number) did not finish: \(central.events.map(Self.summary))")
                throw error
            }
        }
        let events = central.events
        #expect(!events.contains { $0.event == "error" }, "\(events.filter { $0.event == "error" })")
        let own = await adapter.controller.ownAddress.address.description
        for number in 1...2 {
            let mine = events.filter { $0.central == number }
            let found = mine.first { $0.event == "found" }
            #expect(found?.address == own && found?.addressType == "random" && found?.name == name,
                    "central \(number): \(String(describing: found))")
            #expect(mine.contains { $0.event == "connected" && $0.address == own }, "central \(number)")
            #expect(mine.first { $0.event == "mtu" }?.mtu == 64, "central \(number): rawble's 64 reached Bumble")
            #expect(mine.first { $0.event == "discovered" }?.services == [], "central \(number)")
        }
        // The second central found rawble only after the first link ended: rawble advertised again.
        let firstGone = try #require(events.firstIndex { $0.central == 1 && $0.event == "disconnected" })
        let secondFound = try #require(events.firstIndex { $0.central == 2 && $0.event == "found" })
        #expect(firstGone < secondFound)

        let links = try await within(seconds: 30) { await serving.value }
        #expect(links.count == 2)
        #expect(links.map(\.first) == [[0x02, 0x64, 0x00], [0x02, 0x64, 0x00]], "Exchange MTU Request (100) on each link")
        await adapter.close()
    }
}
