// The DocC articles' claims, kept true: every PDU sequence in "The ATT PDUs each GATT client call
// sends" (Sources/RawbleGATT/RawbleGATT.docc/GATTClientPDUSequences.md) as a script on a
// ScriptedATTBearer, and the examples of "Writing a byte-stream test"
// (Sources/RawbleTestSupport/RawbleTestSupport.docc/WritingAByteStreamTest.md) as written there.
import RawbleBearer
import RawbleGATT
import RawbleGATTCore
import RawbleHCITransport
import RawbleHost
import RawbleHostCore
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

/// A server that answers `script` (request hex, reply hex; an empty reply: none) in order.
private func server(_ script: [(String, String)]) -> ScriptedATTBearer {
    let server = ScriptedATTBearer()
    for (request, reply) in script {
        server.expect(bytes(request), reply: reply.isEmpty ? [] : [bytes(reply)])
    }
    return server
}

/// The script was played to its end and the client sent nothing else.
private func expectPlayed(_ server: ScriptedATTBearer, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(server.remainingExpectations == 0, "requests not sent", sourceLocation: sourceLocation)
    #expect(server.unexpectedPDUs.isEmpty, "unexpected: \(server.unexpectedPDUs)", sourceLocation: sourceLocation)
}

/// The Heart Rate service of the scripts below: 0x0010–0x0018.
private let heartRate = GATTService(uuid: .heartRateService, startHandle: 0x0010, endHandle: 0x0018)
/// Its measurement: declaration 0x0011, value 0x0012, CCCD 0x0013.
private let measurement = GATTCharacteristic(
    uuid: .heartRateMeasurement, declarationHandle: 0x0011, valueHandle: 0x0012, properties: .notify, endHandle: 0x0013)

@Suite("DocC: the ATT PDUs each GATT client call sends")
struct GATTClientPDUSequenceTests {
    @Test("exchangeMTU(): 02 05 02 once; the second call sends nothing")
    func exchangeMTU() async throws {
        let server = server([("02 05 02", "03 F7 00")])
        let gatt = GATTClient(bearer: server)
        #expect(try await gatt.exchangeMTU() == 247)
        #expect(try await gatt.exchangeMTU() == 247)
        #expect(server.sentPDUs.count == 1)
        expectPlayed(server)
    }

    @Test("services(): Read By Group Type from one past the last end, until Attribute Not Found; cached")
    func services() async throws {
        let server = server([
            ("10 01 00 FF FF 00 28", "11 06 01 00 05 00 00 18 06 00 09 00 01 18"),
            ("10 0A 00 FF FF 00 28", "01 10 0A 00 0A"),
        ])
        let gatt = GATTClient(bearer: server)
        #expect(try await gatt.services().map(\.uuid) == [BluetoothUUID(0x1800), BluetoothUUID(0x1801)])
        #expect(try await gatt.services().count == 2)
        #expect(server.sentPDUs.count == 2, "the second call is served from the cache")
        expectPlayed(server)
    }

    @Test("services(): a service that ends at 0xFFFF ends the walk with no further request")
    func servicesToTheTop() async throws {
        let server = server([("10 01 00 FF FF 00 28", "11 06 01 00 FF FF 00 18")])
        let gatt = GATTClient(bearer: server)
        #expect(try await gatt.services().count == 1)
        expectPlayed(server)
    }

    @Test("services(withUUID:): Find By Type Value with the 16-bit UUID, until Attribute Not Found")
    func servicesWithUUID() async throws {
        let server = server([
            ("06 01 00 FF FF 00 28 0D 18", "07 10 00 18 00"),
            ("06 19 00 FF FF 00 28 0D 18", "01 06 19 00 0A"),
        ])
        let gatt = GATTClient(bearer: server)
        #expect(try await gatt.services(withUUID: .heartRateService) == [heartRate])
        expectPlayed(server)
    }

    @Test("characteristics(of:): Read By Type from one past the last declaration, until Attribute Not Found")
    func characteristics() async throws {
        let server = server([
            ("08 10 00 18 00 03 28", "09 07 11 00 10 12 00 37 2A 14 00 02 15 00 38 2A"),
            ("08 15 00 18 00 03 28", "09 07 16 00 08 17 00 39 2A"),
            ("08 17 00 18 00 03 28", "01 08 17 00 0A"),
        ])
        let gatt = GATTClient(bearer: server)
        let found = try await gatt.characteristics(of: heartRate)
        #expect(found.map(\.uuid) == [.heartRateMeasurement, .bodySensorLocation, .heartRateControlPoint])
        #expect(found.map(\.endHandle) == [0x0013, 0x0015, 0x0018])
        #expect(try await gatt.characteristics(of: heartRate, uuid: .bodySensorLocation).count == 1)
        #expect(server.sentPDUs.count == 3, "filtering by UUID is served from the cache")
        expectPlayed(server)
    }

    @Test("includedServices(of:): a 4-byte include is followed by a Read of the included declaration")
    func includedServices() async throws {
        let uuid128 = (0..<16).map { UInt8($0) }
        let server = server([("08 10 00 18 00 02 28", "09 06 11 00 20 00 2F 00")])
        server.expect([0x0A, 0x20, 0x00], reply: [[0x0B] + uuid128])
        server.expect(bytes("08 12 00 18 00 02 28"), reply: [bytes("01 08 12 00 0A")])
        let gatt = GATTClient(bearer: server)
        let included = try await gatt.includedServices(of: heartRate)
        #expect(included.map(\.startHandle) == [0x0020])
        #expect(included.first?.uuid == BluetoothUUID(littleEndianBytes: uuid128))
        expectPlayed(server)
    }

    @Test("descriptors(of:): Find Information after the value handle; none sent when there is no room")
    func descriptors() async throws {
        let server = server([("04 13 00 13 00", "05 01 13 00 02 29")])
        let gatt = GATTClient(bearer: server)
        #expect(try await gatt.descriptors(of: measurement).map(\.handle) == [0x0013])
        let bare = GATTCharacteristic(uuid: .bodySensorLocation, declarationHandle: 0x0014, valueHandle: 0x0015,
                                      properties: .read, endHandle: 0x0015)
        #expect(try await gatt.descriptors(of: bare).isEmpty)
        expectPlayed(server)
    }

    @Test("characteristic(_:inService:): Find By Type Value walk, then Read By Type walk; no Find Information")
    func characteristicByUUID() async throws {
        let server = server([
            ("06 01 00 FF FF 00 28 0D 18", "07 10 00 18 00"),
            ("06 19 00 FF FF 00 28 0D 18", "01 06 19 00 0A"),
            ("08 10 00 18 00 03 28", "09 07 11 00 10 12 00 37 2A 14 00 02 15 00 38 2A"),
            ("08 15 00 18 00 03 28", "01 08 15 00 0A"),
        ])
        let gatt = GATTClient(bearer: server)
        let found = try await gatt.characteristic(.heartRateMeasurement, inService: .heartRateService)
        #expect(found?.valueHandle == 0x0012)
        expectPlayed(server)
    }

    @Test("discoverAll(): services, then per service includes, characteristics, descriptors; then the Service Changed CCCD")
    func discoverAll() async throws {
        let server = server([
            ("10 01 00 FF FF 00 28", "11 06 01 00 04 00 01 18"),
            ("10 05 00 FF FF 00 28", "01 10 05 00 0A"),
            ("08 01 00 04 00 02 28", "01 08 01 00 0A"),
            ("08 01 00 04 00 03 28", "09 07 02 00 20 03 00 05 2A"),
            ("08 03 00 04 00 03 28", "01 08 03 00 0A"),
            ("04 04 00 04 00", "05 01 04 00 02 29"),
            ("12 04 00 02 00", "13"),
        ])
        let gatt = GATTClient(bearer: server)
        let database = try await gatt.discoverAll()
        #expect(database.characteristic(.serviceChanged)?.configurationDescriptor?.handle == 0x0004)
        _ = try await gatt.discoverAll()
        #expect(server.sentPDUs.count == 7, "the second walk is served from the cache and subscribes no more")
        expectPlayed(server)
    }

    @Test("read(handle:): Read, then Read Blob at the running offset while parts are full")
    func longRead() async throws {
        let value = (0..<25).map(UInt8.init)
        let server = ScriptedATTBearer()
        server.expect([0x0A, 0x03, 0x00], reply: [[0x0B] + value[0..<22]])
        server.expect([0x0C, 0x03, 0x00, 0x16, 0x00], reply: [[0x0D] + value[22...]])
        let gatt = GATTClient(bearer: server)
        #expect(try await gatt.read(handle: 0x0003) == value)
        #expect(server.remainingExpectations == 0)
        #expect(server.unexpectedPDUs.isEmpty)
    }

    @Test("read(handle:): Attribute Not Long to the first Read Blob ends the read with the first part")
    func attributeNotLong() async throws {
        let value = [UInt8](repeating: 0x41, count: 22)
        let server = ScriptedATTBearer()
        server.expect([0x0A, 0x03, 0x00], reply: [[0x0B] + value])
        server.expect([0x0C, 0x03, 0x00, 0x16, 0x00], reply: [[0x01, 0x0C, 0x03, 0x00, 0x0B]])
        let gatt = GATTClient(bearer: server)
        #expect(try await gatt.read(handle: 0x0003) == value)
        expectPlayed(server)
    }

    @Test("write: a Write Request when it fits MTU − 3, a Write Command without response")
    func shortWrites() async throws {
        let server = server([("12 17 00 01", "13"), ("52 17 00 01", "")])
        let gatt = GATTClient(bearer: server)
        try await gatt.write([0x01], to: 0x0017)
        try await gatt.write([0x01], to: 0x0017, withoutResponse: true)
        expectPlayed(server)
    }

    @Test("write: a longer value goes in Prepare Writes of MTU − 5 bytes, then Execute Write (write)")
    func longWrite() async throws {
        let value = (0..<25).map(UInt8.init)
        let server = ScriptedATTBearer()
        let first = [0x16, 0x20, 0x00, 0x00, 0x00] + value[0..<18]
        let second = [0x16, 0x20, 0x00, 0x12, 0x00] + value[18...]
        server.expect(first, reply: [[0x17] + first.dropFirst()])
        server.expect(second, reply: [[0x17] + second.dropFirst()])
        server.expect([0x18, 0x01], reply: [[0x19]])
        let gatt = GATTClient(bearer: server)
        try await gatt.write(value, to: 0x0020)
        expectPlayed(server)
    }

    @Test("write: a wrong echo cancels the queue (Execute Write, cancel) and fails")
    func wrongEcho() async throws {
        let value = (0..<25).map(UInt8.init)
        let server = ScriptedATTBearer()
        let first = [0x16, 0x20, 0x00, 0x00, 0x00] + value[0..<18]
        server.expect(first, reply: [[0x17, 0x20, 0x00, 0x00, 0x00, 0xFF]])
        server.expect([0x18, 0x00], reply: [[0x19]])
        let gatt = GATTClient(bearer: server)
        await #expect(throws: GATTError.self) { try await gatt.write(value, to: 0x0020) }
        expectPlayed(server)
    }

    @Test("subscribe: Find Information, then the CCCD write; unsubscribe writes 00 00")
    func subscribeAndUnsubscribe() async throws {
        let server = server([
            ("04 13 00 13 00", "05 01 13 00 02 29"),
            ("12 13 00 01 00", "13"),
            ("12 13 00 00 00", "13"),
        ])
        let gatt = GATTClient(bearer: server)
        let subscription = try await gatt.subscribe(to: measurement)
        try await subscription.cancel()
        expectPlayed(server)
    }

    @Test("subscribe: a characteristic that does not notify is notFound, with nothing sent")
    func subscribeWithoutNotify() async throws {
        let server = ScriptedATTBearer()
        let readOnly = GATTCharacteristic(uuid: .bodySensorLocation, declarationHandle: 0x0014, valueHandle: 0x0015,
                                          properties: .read, endHandle: 0x0016)
        let gatt = GATTClient(bearer: server)
        await #expect(throws: GATTError.self) { _ = try await gatt.subscribe(to: readOnly) }
        #expect(server.sentPDUs.isEmpty)
    }
}

@Suite("DocC: Writing a byte-stream test, as written there")
struct ByteStreamArticleExampleTests {
    @Test func readsTheBodySensorLocation() async throws {
        let server = ScriptedATTBearer()
        server.expect([0x0A, 0x17, 0x00], reply: [[0x0B, 0x01]])   // Read Request 0x0017 → Read Response 01
        let gatt = GATTClient(bearer: server)
        #expect(try await gatt.read(handle: 0x0017) == [0x01])
        #expect(server.remainingExpectations == 0)
        #expect(server.unexpectedPDUs.isEmpty)
    }

    @Test func aRefusedReadIsTheServersError() async throws {
        let server = ScriptedATTBearer()
        server.expect([0x0A, 0x17, 0x00], reply: [[0x01, 0x0A, 0x17, 0x00, 0x02]])   // Read Not Permitted
        let gatt = GATTClient(bearer: server)
        await #expect(throws: GATTError.self) { try await gatt.read(handle: 0x0017) }
    }

    @Test func notificationsAfterSubscribing() async throws {
        let server = ScriptedATTBearer()
        let measurement = GATTCharacteristic(
            uuid: .heartRateMeasurement, declarationHandle: 0x0010, valueHandle: 0x0011,
            properties: .notify, endHandle: 0x0012)
        server.expect([0x04, 0x12, 0x00, 0x12, 0x00], reply: [[0x05, 0x01, 0x12, 0x00, 0x02, 0x29]])  // Find Information → CCCD at 0x0012
        server.expect([0x12, 0x12, 0x00, 0x01, 0x00], reply: [[0x13]])                                 // write 01 00 to the CCCD
        let gatt = GATTClient(bearer: server)
        let subscription = try await gatt.subscribe(to: measurement)

        server.inject([0x1B, 0x11, 0x00, 0x06, 0x48])          // Handle Value Notification: 72 bpm
        server.end(with: .disconnected(reason: "remote user terminated connection"))

        var values: [[UInt8]] = []
        do {
            for try await update in subscription { values.append(Array(update.value)) }
        } catch {
            #expect(error as? GATTError == .bearer(.disconnected(reason: "remote user terminated connection")))
        }
        #expect(values == [[0x06, 0x48]])
    }

    @Test func discoverServicesStepByStep() throws {
        var procedure = DiscoverPrimaryServices()
        guard case .send(let first) = procedure.start() else { Issue.record("no request"); return }
        #expect(first.encoded == [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])
        // One service, 0x0001–0x0005, Generic Access (0x1800).
        let step = try procedure.receive(ATTPDU.decode([0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18]))
        guard case .send(let second) = step else { Issue.record("ended early"); return }
        #expect(second.encoded == [0x10, 0x06, 0x00, 0xFF, 0xFF, 0x00, 0x28])
        let end = try procedure.receive(ATTPDU.decode([0x01, 0x10, 0x06, 0x00, 0x0A]))   // Attribute Not Found
        guard case .finished(let services) = end else { Issue.record("still sending"); return }
        #expect(services.map(\.uuid) == [BluetoothUUID(0x1800)])
    }

    @Test func theHostResetsTheControllerFirst() async throws {
        let controller = InMemoryHCITransport()
        let commands = Mutex<[HCICommand]>([])
        controller.respond { packet in
            guard packet.type == .command, let command = try? HCICommand.decode(packet.bytes) else { return [] }
            commands.withLock { $0.append(command) }
            let parameters: [UInt8] = switch command {
            case .reset, .leSetRandomAddress: [0x00]
            case .leReadBufferSize: [0x00, 27, 0x00, 3]            // 27-byte ACL packets, 3 buffers
            default: [HCIStatus.unknownCommand.rawValue]
            }
            let complete = HCIEvent.commandComplete(.init(
                numHCICommandPackets: 1, opcode: command.opcode, returnParameters: parameters[...]))
            return [H4Packet(type: .event, bytes: complete.encoded)]
        }
        let adapter = try await Adapter.open(controller)
        #expect(commands.withLock { $0.first } == .reset)
        #expect(await adapter.controller.aclDataLength == 27)
        await adapter.close()
    }

    @Test func aBoundedWait() async throws {
        let server = ScriptedATTBearer()
        server.expect([0x04, 0x13, 0x00, 0x13, 0x00], reply: [[0x05, 0x01, 0x13, 0x00, 0x02, 0x29]])
        server.expect([0x12, 0x13, 0x00, 0x01, 0x00], reply: [[0x13]])
        let gatt = GATTClient(bearer: server)
        let subscription = try await gatt.subscribe(to: measurement)
        server.inject([0x1B, 0x12, 0x00, 0x06, 0x48])
        let first: ATTValueUpdate? = try await within(seconds: 10) {
            for try await update in subscription { return update }
            return nil
        }
        #expect(first.map { Array($0.value) } == [0x06, 0x48])
    }
}
