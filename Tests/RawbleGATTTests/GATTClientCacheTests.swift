// The GATT client's discovery cache against a server that changes its database while a
// discovery is waiting for its answers: a result discovered before a Service Changed must not
// be cached after it (issue 9).
import RawbleBearer
import RawbleGATT
import RawbleGATTCore
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

/// A small GATT server whose database changes after the first answer to one request:
/// «GATT» 0x0001–0x0004 (Service Changed, value 0x0003, CCCD 0x0004) and a service at
/// 0x0005–0x0007 with one characteristic. The second time `interrupted` is asked, it answers
/// only with a Service Changed indication (the test then delivers the stale answer); from the
/// third time on it answers with the new database.
private final class ChangingServer: Sendable {
    let interrupted: String
    private let calls = Mutex<[String: Int]>([:])

    /// Answers before the change (first) and after it (second); Attribute Not Found otherwise.
    static let answers: [String: (old: String, new: String)] = [
        "10 01 00 FF FF 00 28": ("11 06 01 00 04 00 01 18 05 00 07 00 0D 18", "11 06 01 00 04 00 01 18 05 00 07 00 0F 18"),
        "08 01 00 04 00 03 28": ("09 07 02 00 20 03 00 05 2A", "09 07 02 00 20 03 00 05 2A"),
        "04 04 00 04 00": ("05 01 04 00 02 29", "05 01 04 00 01 29"),
        "08 05 00 07 00 02 28": ("01 08 05 00 0A", "09 08 06 00 20 00 25 00 0F 18"),
        "08 05 00 07 00 03 28": ("09 07 06 00 02 07 00 38 2A", "09 07 06 00 02 07 00 19 2A"),
        "12 04 00 02 00": ("13", "13"),
    ]

    init(interrupted: String) { self.interrupted = interrupted }

    func respond(_ request: [UInt8]) -> [[UInt8]] {
        let key = request.map(hexByte).joined(separator: " ")
        guard request.first != 0x1E else { return [] } // the confirmation of the indication
        let call = calls.withLock { calls in
            calls[key, default: 0] += 1
            return calls[key, default: 0]
        }
        if key == interrupted && call == 2 { return [bytes("1D 03 00 01 00 FF FF")] }
        guard let answer = Self.answers[key] else {
            let start = request.count >= 3 ? Array(request[1...2]) : [0, 0]
            return [[0x01, request.first ?? 0] + start + [0x0A]]
        }
        return [bytes(call == 1 ? answer.old : answer.new)]
    }

    /// The answer the interrupted request was owed before the change.
    var staleAnswer: [UInt8] { Self.answers[interrupted].map { bytes($0.old) } ?? [] }
}

/// One cached discovery: the request it sends, the call made while the database changes (it
/// must miss the cache) and the call made afterwards, with what the new database gives.
struct CachedDiscovery: Sendable, CustomTestStringConvertible {
    var name: String
    var request: String
    var whileChanging: @Sendable (GATTClient) async throws -> String
    var afterwards: @Sendable (GATTClient) async throws -> String
    var fresh: String
    var testDescription: String { name }
}

extension CachedDiscovery {
    /// A discovery that is called the same way both times: while the database changes after
    /// the cache is invalidated (so it must ask the server), and afterwards as it is.
    init(name: String, request: String, discover: @escaping @Sendable (GATTClient) async throws -> String, fresh: String) {
        self.init(name: name, request: request,
                  whileChanging: { client in
                      await client.invalidate()
                      return try await discover(client)
                  },
                  afterwards: discover, fresh: fresh)
    }

    static let battery = GATTService(uuid: BluetoothUUID(0x180F), startHandle: 5, endHandle: 7)
    static let serviceChanged = GATTCharacteristic(uuid: .serviceChanged, declarationHandle: 2, valueHandle: 3,
                                                   properties: [.indicate], endHandle: 4)

    static let all: [CachedDiscovery] = [
        CachedDiscovery(
            name: "services", request: "10 01 00 FF FF 00 28",
            whileChanging: { "\(try await $0.services(refresh: true))" }, afterwards: { "\(try await $0.services())" },
            fresh: "\([GATTService(uuid: BluetoothUUID(0x1801), startHandle: 1, endHandle: 4), battery])"),
        CachedDiscovery(
            name: "characteristics", request: "08 05 00 07 00 03 28",
            discover: { "\(try await $0.characteristics(of: battery))" },
            fresh: "\([GATTCharacteristic(uuid: BluetoothUUID(0x2A19), declarationHandle: 6, valueHandle: 7, properties: [.read], endHandle: 7)])"),
        CachedDiscovery(
            name: "included services", request: "08 05 00 07 00 02 28",
            discover: { "\(try await $0.includedServices(of: battery))" },
            fresh: "\([GATTIncludedService(declarationHandle: 6, startHandle: 0x20, endHandle: 0x25, uuid: BluetoothUUID(0x180F))])"),
        CachedDiscovery(
            name: "descriptors", request: "04 04 00 04 00",
            discover: { "\(try await $0.descriptors(of: serviceChanged))" },
            fresh: "\([GATTDescriptor(uuid: .characteristicUserDescription, handle: 4)])"),
    ]
}

@Suite("GATT client: discovery cache and Service Changed")
struct GATTClientCacheTests {
    /// A client of `server` that discovered everything once (so it subscribed to Service
    /// Changed), and a task that returns the first range the client reports changed.
    private static func discoveredClient(of server: ChangingServer) async throws
        -> (ScriptedATTBearer, GATTClient, Task<ClosedRange<UInt16>?, Never>) {
        let bearer = ScriptedATTBearer { server.respond($0) }
        let client = GATTClient(bearer: bearer)
        _ = try await within { try await client.discoverAll() }
        let changes = Task { () -> ClosedRange<UInt16>? in
            for await range in client.serviceChanges { return range }
            return nil
        }
        return (bearer, client, changes)
    }

    @Test("a Service Changed while a discovery awaits its answers: the stale result is returned but not cached",
          arguments: CachedDiscovery.all)
    func serviceChangedDuringDiscovery(_ discovery: CachedDiscovery) async throws {
        let server = ChangingServer(interrupted: discovery.request)
        let (bearer, client, changes) = try await Self.discoveredClient(of: server)
        // The server answers this discovery's request with a Service Changed indication only.
        let stale = Task { try await discovery.whileChanging(client) }
        #expect(try await within { await changes.value } == 0x0001...0xFFFF)
        // Now the answer the server owed from before the change arrives.
        bearer.inject(server.staleAnswer)
        _ = try await within { try await stale.value }
        // The stale result must not have been cached: the next call asks the server again.
        #expect(try await within { try await discovery.afterwards(client) } == discovery.fresh)
        #expect(bearer.unexpectedPDUs.isEmpty)
        await client.close()
    }

    @Test("a Service Changed during discoverAll starts the walk over: the database is the new one throughout")
    func serviceChangedDuringDiscoverAll() async throws {
        let server = ChangingServer(interrupted: "08 05 00 07 00 03 28")
        let (bearer, client, changes) = try await Self.discoveredClient(of: server)
        await client.invalidate()
        // The walk's request for the second service's characteristics is answered by a
        // Service Changed; the characteristics owed from before the change come after it.
        let walk = Task { try await client.discoverAll() }
        #expect(try await within { await changes.value } == 0x0001...0xFFFF)
        bearer.inject(server.staleAnswer)
        let database = try await within { try await walk.value }
        #expect(database.services.map(\.service.uuid) == [BluetoothUUID(0x1801), BluetoothUUID(0x180F)])
        #expect(database.services.last?.characteristics.map(\.characteristic.uuid) == [BluetoothUUID(0x2A19)])
        await client.close()
    }

    @Test("cached characteristics serve only the same handles: a service with the same start and another end is discovered")
    func cacheKeyedByHandles() async throws {
        let bearer = ScriptedATTBearer()
        bearer.expect(bytes("08 05 00 07 00 03 28"), reply: [bytes("09 07 06 00 02 07 00 38 2A")])
        bearer.expect(bytes("08 05 00 09 00 03 28"), reply: [bytes("09 07 06 00 02 07 00 38 2A 08 00 02 09 00 19 2A")])
        let client = GATTClient(bearer: bearer)
        let before = GATTService(uuid: .heartRateService, startHandle: 5, endHandle: 7)
        let after = GATTService(uuid: .heartRateService, startHandle: 5, endHandle: 9)
        #expect(try await within { try await client.characteristics(of: before) }.count == 1)
        #expect(try await within { try await client.characteristics(of: after) }.map(\.uuid) == [.bodySensorLocation, BluetoothUUID(0x2A19)])
        #expect(try await within { try await client.characteristics(of: before) }.count == 1) // cached: no request
        #expect(bearer.remainingExpectations == 0)
        #expect(bearer.unexpectedPDUs.isEmpty)
        await client.close()
    }
}
