// Random databases served by GATTServer and discovered by rawble's GATTClient: whatever the
// definitions, the client finds exactly the services, includes, characteristics and
// descriptors they describe, at the handles the numbering rule gives, and reads back every value.
import RawbleGATT
import RawbleGATTCore
import RawbleTestSupport
import RawbleWire
import Testing

@Suite("Server: random databases discovered end to end")
struct ServerRandomDatabaseTests {
    /// Random definitions: distinct service UUIDs (16- and 128-bit), includes of other services,
    /// characteristics with random properties, values and descriptors.
    static func randomServices(_ rng: inout SplitMix64) -> [GATTServiceDefinition] {
        func uuid(_ rng: inout SplitMix64, _ index: Int) -> BluetoothUUID {
            rng.next() % 2 == 0 ? BluetoothUUID(UInt16(0x3000 + index))
                                : BluetoothUUID(high: rng.next(), low: UInt64(index))
        }
        let count = Int(rng.next() % 5) + 1
        let uuids = (0..<count).map { uuid(&rng, $0) }
        return (0..<count).map { index in
            let includes = (0..<count).filter { $0 != index && rng.next() % 4 == 0 }.map { uuids[$0] }
            let characteristics = (0..<Int(rng.next() % 5)).map { c -> GATTCharacteristicDefinition in
                let properties = CharacteristicProperties(rawValue: UInt8(truncatingIfNeeded: rng.next()) & 0x3E)
                let value = (0..<Int(rng.next() % 40)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                let descriptors = (0..<Int(rng.next() % 3)).map { d in
                    GATTDescriptorDefinition(BluetoothUUID(UInt16(0x2990 + d)), value: .fixed([UInt8(d), UInt8(c)]))
                }
                return GATTCharacteristicDefinition(
                    uuid(&rng, 100 + c), properties: properties, value: .fixed(value), read: .open,
                    userDescription: rng.next() % 3 == 0 ? "char \(c)" : nil,
                    presentationFormat: rng.next() % 3 == 0 ? GATTPresentationFormat(format: 0x04, unit: 0x2700) : nil,
                    descriptors: descriptors)
            }
            return GATTServiceDefinition(uuid: uuids[index], isPrimary: index == 0 || rng.next() % 4 != 0,
                                         includes: includes, characteristics: characteristics)
        }
    }

    /// What discovery must find, numbered by the rule (GAP 1–5, GATT 6–9, then each attribute
    /// one handle after the previous), independently of the server's own numbering.
    static func expected(_ services: [GATTServiceDefinition]) -> (GATTDatabase, values: [UInt16: [UInt8]]) {
        var found: [GATTDatabase.Service] = [
            GATTDatabase.Service(service: GATTService(uuid: BluetoothUUID(0x1800), startHandle: 1, endHandle: 5), characteristics: [
                GATTDatabase.Characteristic(characteristic: GATTCharacteristic(uuid: BluetoothUUID(0x2A00), declarationHandle: 2, valueHandle: 3, properties: .read, endHandle: 3)),
                GATTDatabase.Characteristic(characteristic: GATTCharacteristic(uuid: BluetoothUUID(0x2A01), declarationHandle: 4, valueHandle: 5, properties: .read, endHandle: 5)),
            ]),
            GATTDatabase.Service(service: GATTService(uuid: BluetoothUUID(0x1801), startHandle: 6, endHandle: 9), characteristics: [
                GATTDatabase.Characteristic(characteristic: GATTCharacteristic(uuid: .serviceChanged, declarationHandle: 7, valueHandle: 8, properties: .indicate, endHandle: 9),
                                            descriptors: [GATTDescriptor(uuid: .clientCharacteristicConfiguration, handle: 9)]),
            ]),
        ]
        var starts: [BluetoothUUID: (UInt16, UInt16)] = [:]
        var next: UInt16 = 10
        for service in services {
            let start = next
            next += UInt16(1 + service.includes.count)
            for c in service.characteristics {
                next += 2 + (c.hasConfiguration ? 1 : 0) + (c.userDescription == nil ? 0 : 1)
                    + (c.presentationFormat == nil ? 0 : 1) + UInt16(c.descriptors.count)
            }
            starts[service.uuid] = (start, next - 1)
        }
        var values: [UInt16: [UInt8]] = [:]
        for service in services {
            guard let (start, end) = starts[service.uuid] else { continue }
            var handle = start + 1
            var includes: [GATTIncludedService] = []
            for included in service.includes {
                if let (s, e) = starts[included] {
                    includes.append(GATTIncludedService(declarationHandle: handle, startHandle: s, endHandle: e, uuid: included))
                }
                handle += 1
            }
            var characteristics: [GATTDatabase.Characteristic] = []
            for c in service.characteristics {
                let declaration = handle
                let valueHandle = handle + 1
                handle += 2
                if case .fixed(let bytes) = c.value { values[valueHandle] = bytes }
                var descriptors: [GATTDescriptor] = []
                if c.hasConfiguration {
                    descriptors.append(GATTDescriptor(uuid: .clientCharacteristicConfiguration, handle: handle))
                    values[handle] = [0, 0]
                    handle += 1
                }
                if let text = c.userDescription {
                    descriptors.append(GATTDescriptor(uuid: .characteristicUserDescription, handle: handle))
                    values[handle] = Array(text.utf8)
                    handle += 1
                }
                if let format = c.presentationFormat {
                    descriptors.append(GATTDescriptor(uuid: .characteristicPresentationFormat, handle: handle))
                    values[handle] = format.encoded
                    handle += 1
                }
                for d in c.descriptors {
                    descriptors.append(GATTDescriptor(uuid: d.uuid, handle: handle))
                    if case .fixed(let bytes) = d.value { values[handle] = bytes }
                    handle += 1
                }
                characteristics.append(GATTDatabase.Characteristic(
                    characteristic: GATTCharacteristic(uuid: c.uuid, declarationHandle: declaration, valueHandle: valueHandle,
                                                       properties: c.properties, endHandle: handle - 1),
                    descriptors: descriptors))
            }
            // The last characteristic of a service ends at the service's end.
            if let last = characteristics.indices.last { characteristics[last].characteristic.endHandle = end }
            if service.isPrimary {
                found.append(GATTDatabase.Service(service: GATTService(uuid: service.uuid, startHandle: start, endHandle: end),
                                                  includedServices: includes, characteristics: characteristics))
            }
        }
        return (GATTDatabase(services: found), values)
    }

    @Test("discoverAll finds what the definitions describe; every value reads back", arguments: 0..<24)
    func discovered(seed: Int) async throws {
        var rng = SplitMix64(state: UInt64(seed) &* 7919)
        let services = Self.randomServices(&rng)
        let database = try GATTServerDatabase(services: services)
        let (want, values) = Self.expected(services)
        let server = GATTServer(database: database)
        let (central, peripheral) = PipeBearer.pair()
        let serving = Task { await server.serve(peripheral) }
        let client = GATTClient(bearer: central)
        let exchange = seed % 2 == 1
        try await within(seconds: 60) { () async throws in
            if exchange { try await client.exchangeMTU() }
            let got = try await client.discoverAll()
            #expect(got.services.map(\.service) == want.services.map(\.service))
            for (g, w) in zip(got.services, want.services) {
                #expect(g.includedServices == w.includedServices, "includes of \(w.service)")
                #expect(g.characteristics == w.characteristics, "characteristics of \(w.service)")
            }
            for (handle, value) in values.sorted(by: { $0.key < $1.key }) where handle > 9 {
                #expect(try await client.read(handle: handle) == value, "handle \(handle)")
            }
        }
        await client.close()
        _ = try await within(seconds: 60) { await serving.value }
    }
}
