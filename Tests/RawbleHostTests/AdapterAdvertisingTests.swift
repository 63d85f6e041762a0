import NIOCore
import NIOPosix
import RawbleBearer
import RawbleHCITransport
import RawbleHost
import RawbleHostCore
import RawbleTestSupport
import RawbleTransport
import RawbleWire
import Synchronization
import Testing

/// A controller whose answers to a command reach the host in ONE read (one batch on the
/// transport's event loop), as a socket read holding several packets does: the host handles
/// them all before any task waiting on the first resumes.
private final class OneReadController: HCITransport {
    private let loop = MultiThreadedEventLoopGroup.singleton.next()
    private let answer: @Sendable (HCICommand) -> [HCIEvent]?
    private let receiver = Mutex<(any HCIPacketReceiver)?>(nil)
    private let sent = Mutex<[HCICommand]>([])
    let packets: AsyncThrowingStream<H4Packet, any Error>

    init(answer: @escaping @Sendable (HCICommand) -> [HCIEvent]?) {
        self.answer = answer
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: H4Packet.self, throwing: (any Error).self)
        continuation.finish()
        packets = stream
    }

    var commands: [HCICommand] { sent.withLock { $0 } }
    var eventLoop: any EventLoop { loop }

    func deliverPackets(to receiver: any HCIPacketReceiver) -> Bool {
        self.receiver.withLock { $0 = receiver }
        return true
    }

    func send(_ packet: H4Packet) async throws(TransportError) {
        guard packet.type == .command, let command = try? HCICommand.decode(packet.bytes) else { return }
        sent.withLock { $0.append(command) }
        let answers = (answer(command) ?? []).map { H4Packet(type: .event, bytes: $0.encoded) }
        guard !answers.isEmpty, let receiver = receiver.withLock({ $0 }) else { return }
        loop.execute { receiver.receive(answers) }
    }

    func close() async {
        guard let receiver = receiver.withLock({ state in defer { state = nil }; return state }) else { return }
        loop.execute { receiver.transportEnded(.closed) }
    }
}

// The peripheral role on a scripted controller: the command sequences of legacy and extended
// advertising, data that does not fit, a central connecting (a PDU each way on its bearer),
// advertising again after it, stop and close.

/// A controller that takes the legacy advertising commands (and nothing extended).
@Sendable private func legacyController(_ command: HCICommand) -> [HCIEvent]? {
    switch command {
    case .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData, .leSetAdvertisingEnable:
        [ScriptedController.complete(command.opcode)]
    default:
        ScriptedController.minimal(command)
    }
}

/// A Bluetooth 5 controller with extended advertising: 1650 bytes of data at most by default.
private func extendedController(maximumDataLength: UInt16 = 1650) -> @Sendable (HCICommand) -> [HCIEvent]? {
    let supported = SupportedCommands(supporting: [
        .reset, .leReadBufferSize, .leSetRandomAddress, .leReadLocalSupportedFeatures, .leSetExtendedAdvertisingParameters,
        .leSetExtendedAdvertisingData, .leSetExtendedScanResponseData, .leSetExtendedAdvertisingEnable,
        .leSetAdvertisingSetRandomAddress, .leReadMaximumAdvertisingDataLength, .leRemoveAdvertisingSet,
    ])
    return { command in
        switch command {
        case .readLocalSupportedCommands:
            [ScriptedController.complete(command.opcode, [0x00] + supported.octets)]
        case .leReadLocalSupportedFeatures:
            [ScriptedController.complete(command.opcode, [0x00] + LEFeatures.extendedAdvertising.rawValue.littleEndianBytes)]
        case .leSetExtendedAdvertisingParameters:
            [ScriptedController.complete(command.opcode, [0x00, 0xF9])]
        case .leReadMaximumAdvertisingDataLength:
            [ScriptedController.complete(command.opcode, [0x00, UInt8(maximumDataLength & 0xFF), UInt8(maximumDataLength >> 8)])]
        case .leSetExtendedAdvertisingData, .leSetExtendedScanResponseData, .leSetExtendedAdvertisingEnable,
             .leSetAdvertisingSetRandomAddress, .leRemoveAdvertisingSet:
            [ScriptedController.complete(command.opcode)]
        default:
            legacyController(command)
        }
    }
}

extension UInt64 {
    fileprivate var littleEndianBytes: [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: self >> (8 * $0)) } }
}

private let heartRateData = AdvertisingData(serviceUUIDs: [BluetoothUUID(UInt16(0x180D))], localName: "rawble HR")
private let scanResponse = AdvertisingData([.txPowerLevel(-4)])

/// The commands sent after start-up (the last LE Set Random Address, the start-up's last step).
private func commandsAfterStartup(_ controller: ScriptedController) -> [HCICommand] {
    let commands = controller.commands
    guard let index = commands.lastIndex(where: { if case .leSetRandomAddress = $0 { true } else { false } }) else { return [] }
    return Array(commands[(index + 1)...])
}

/// Waits (bounded) until the controller received `count` commands matching `matches`.
private func commands(atLeast count: Int, _ controller: ScriptedController,
                      _ matches: @escaping @Sendable (HCICommand) -> Bool) async throws -> [HCICommand] {
    try await controller.waitForCommands(count, where: matches)
}

private func isLegacyEnable(_ command: HCICommand) -> Bool { command == .leSetAdvertisingEnable(true) }

/// LE Connection Complete for a central that connected to this adapter (role peripheral).
private func centralConnected(handle: UInt16 = ScriptedController.handle) -> HCIEvent {
    ScriptedController.connectionComplete(handle: handle, role: .peripheral)
}

private func disconnected(handle: UInt16 = ScriptedController.handle) -> HCIEvent {
    .disconnectionComplete(.init(status: .success, connectionHandle: handle, reason: .remoteUserTerminatedConnection))
}

/// A scripted controller answering with `answer`, playing (its pump for the test to cancel),
/// and an adapter opened on it.
private func openAdapter(_ answer: @escaping @Sendable (HCICommand) -> [HCIEvent]?,
                         configuration: Adapter.Configuration = quietConfiguration()) async throws
    -> (controller: ScriptedController, pump: Task<Void, Never>, adapter: Adapter)
{
    let controller = ScriptedController(answer: answer)
    let pump = controller.run()
    return (controller, pump, try await Adapter.open(controller.transport, configuration: configuration))
}

/// The first connection on `adapter.incomingConnections` (on `handle` when given), bounded;
/// ``TestTimeout`` if the stream ends without one.
private func firstIncoming(_ adapter: Adapter, handle: UInt16? = nil) async throws -> Connection {
    try await within(seconds: 60) {
        for await connection in adapter.incomingConnections where handle.map({ connection.handle == $0 }) ?? true {
            return connection
        }
        throw TestTimeout()
    }
}

/// A central connects (the controller reports it, on `handle` or the usual one): the first
/// Connection on `incomingConnections` (on `handle` when given), bounded.
private func connectCentral(to adapter: Adapter, _ controller: ScriptedController,
                            handle: UInt16? = nil) async throws -> Connection {
    controller.transport.inject(centralConnected(handle: handle ?? ScriptedController.handle))
    return try await firstIncoming(adapter, handle: handle)
}

/// The central on `handle` disconnects (the controller reports it): how `connection` says it ended.
@discardableResult
private func disconnectCentral(_ connection: Connection, _ controller: ScriptedController,
                               handle: UInt16 = ScriptedController.handle) async -> HostError {
    controller.transport.inject(disconnected(handle: handle))
    return await connection.waitUntilDisconnected()
}

@Suite("Adapter: advertising")
struct AdapterAdvertisingTests {
    @Test("a central that connects as soon as advertising is enabled (its LE Connection Complete in the same read as the enable's Command Complete) is accepted, not dropped")
    func connectionInTheEnablesRead() async throws {
        let controller = OneReadController { command in
            if case .leSetAdvertisingEnable(true) = command {
                return [ScriptedController.complete(command.opcode), centralConnected()]
            }
            return legacyController(command)
        }
        let adapter = try await Adapter.open(controller, configuration: quietConfiguration())
        try await adapter.advertise(Advertisement(data: heartRateData, restart: .never))
        let connection = try await firstIncoming(adapter)
        #expect(connection.handle == ScriptedController.handle)
        #expect(connection.ending == nil, "the link was accepted, not dropped")
        #expect(!controller.commands.contains { if case .disconnect = $0 { true } else { false } },
                "no HCI Disconnect for the central's link: \(controller.commands)")
        await adapter.close()
    }

    @Test("legacy advertising: parameters (ADV_IND, own random address), data, scan response, enable, in that order")
    func legacySequence() async throws {
        let (controller, pump, adapter) = try await openAdapter(legacyController)
        #expect(await !adapter.usesExtendedAdvertising)
        let set = try await adapter.advertise(Advertisement(data: heartRateData, scanResponse: scanResponse,
                                                            intervalMin: 0xA0, intervalMax: 0xF0))
        #expect(!set.isExtended)
        #expect(commandsAfterStartup(controller) == [
            .leSetAdvertisingParameters(.init(intervalMin: 0xA0, intervalMax: 0xF0, type: .connectableUndirected, ownAddressType: .random)),
            .leSetAdvertisingData(try #require(HCICommand.AdvertisingPayload(heartRateData.bytes))),
            .leSetScanResponseData(try #require(HCICommand.AdvertisingPayload(scanResponse.bytes))),
            .leSetAdvertisingEnable(true),
        ])
        await #expect(throws: HostError.busy("an advertisement already runs on this adapter: stop it first")) {
            try await adapter.advertise(Advertisement(data: heartRateData))
        }
        try await adapter.stopAdvertising()
        #expect(controller.commands.last == .leSetAdvertisingEnable(false))
        await adapter.close()
        pump.cancel()
    }

    @Test("non-connectable legacy advertising is ADV_SCAN_IND with a scan response, ADV_NONCONN_IND without")
    func legacyNonConnectable() async throws {
        let (controller, pump, adapter) = try await openAdapter(legacyController)
        try await adapter.advertise(Advertisement(data: heartRateData, scanResponse: scanResponse, isConnectable: false))
        try await adapter.stopAdvertising()
        try await adapter.advertise(Advertisement(data: heartRateData, isConnectable: false, ownAddressType: .public))
        let types = controller.commands.compactMap { command -> HCICommand.AdvertisingParameters? in
            if case .leSetAdvertisingParameters(let p) = command { p } else { nil }
        }
        #expect(types.map(\.type) == [.scannableUndirected, .nonConnectableUndirected])
        #expect(types.map(\.ownAddressType) == [.random, .public])
        #expect(controller.commands.contains { if case .leSetScanResponseData = $0 { true } else { false } })
        await adapter.close()
        pump.cancel()
    }

    @Test("a stop while advertising starts wins: the start throws cancelled and the advertising it enabled is switched off")
    func stopWhileStarting() async throws {
        let (controller, pump, adapter) = try await openAdapter { command in
            if case .leSetAdvertisingData = command { return nil }  // answered by the test, later
            return legacyController(command)
        }
        let starting = Task { () -> HostError? in
            do throws(HostError) {
                try await adapter.advertise(Advertisement(data: heartRateData))
                return nil
            } catch {
                return error
            }
        }
        _ = try await commands(atLeast: 1, controller) { if case .leSetAdvertisingData = $0 { true } else { false } }
        try await adapter.stopAdvertising()
        controller.transport.inject(ScriptedController.complete(.leSetAdvertisingData))
        #expect(await starting.value == .cancelled)
        #expect(Array(controller.commands.suffix(2)) == [.leSetAdvertisingEnable(true), .leSetAdvertisingEnable(false)])
        await adapter.close()
        pump.cancel()
    }

    @Test("legacy data over 31 bytes is a typed error naming the length, and nothing is sent")
    func legacyDataTooLong() async throws {
        let (controller, pump, adapter) = try await openAdapter(legacyController)
        let long = AdvertisingData(localName: String(repeating: "x", count: 30))
        #expect(long.bytes.count == 35)
        await #expect(throws: HostError.advertisingDataTooLong("advertising data", length: 35, maximum: 31)) {
            try await adapter.advertise(Advertisement(data: long))
        }
        await #expect(throws: HostError.advertisingDataTooLong("scan response", length: 35, maximum: 31)) {
            try await adapter.advertise(Advertisement(data: heartRateData, scanResponse: long))
        }
        #expect(commandsAfterStartup(controller).isEmpty)
        // Nothing runs: a fitting advertisement starts.
        try await adapter.advertise(Advertisement(data: heartRateData))
        await adapter.close()
        pump.cancel()
    }

    @Test("extended advertising with legacy PDUs when the data fits 31 bytes: set parameters, the set's random address, data, scan response, enable")
    func extendedSequence() async throws {
        let (controller, pump, adapter) = try await openAdapter(extendedController())
        #expect(await adapter.usesExtendedAdvertising)
        let own = await adapter.controller.ownAddress.address
        let set = try await adapter.advertise(Advertisement(data: heartRateData, scanResponse: scanResponse))
        #expect(set == AdvertisingSet(handle: 0, isExtended: true, txPower: -7))
        #expect(commandsAfterStartup(controller) == [
            .leRemoveAdvertisingSet(handle: 0),
            .leSetExtendedAdvertisingParameters(.init(handle: 0, properties: [.legacy, .connectable, .scannable],
                                                      intervalMin: 160, intervalMax: 160, ownAddressType: .random)),
            .leSetAdvertisingSetRandomAddress(handle: 0, address: own),
            .leSetExtendedAdvertisingData(try #require(.init(handle: 0, operation: .complete, data: heartRateData.bytes))),
            .leSetExtendedScanResponseData(try #require(.init(handle: 0, operation: .complete, data: scanResponse.bytes))),
            .leSetExtendedAdvertisingEnable(.one(.init(handle: 0), enable: true)),
        ])
        #expect(!controller.commands.contains(.leSetAdvertisingEnable(true)), "no legacy command on an extended controller")
        try await adapter.stopAdvertising()
        #expect(Array(controller.commands.suffix(2)) == [
            .leSetExtendedAdvertisingEnable(.one(.init(handle: 0), enable: false)), .leRemoveAdvertisingSet(handle: 0),
        ])
        await adapter.close()
        pump.cancel()
    }

    @Test("extended data over 31 bytes: extended PDUs (connectable only), the controller's maximum read, the data in fragments")
    func extendedLongDataIsFragmented() async throws {
        let (controller, pump, adapter) = try await openAdapter(extendedController())
        // Two structures (one carries at most 254 bytes): 149 + 145 bytes.
        let long = AdvertisingData([
            .manufacturerData(ManufacturerData(companyID: 0xFFFF, data: [UInt8](repeating: 7, count: 145))),
            .manufacturerData(ManufacturerData(companyID: 0xFFFE, data: [UInt8](repeating: 8, count: 141))),
        ])
        #expect(long.bytes.count == 294)
        try await adapter.advertise(Advertisement(data: long))
        let sent = commandsAfterStartup(controller)
        #expect(sent.contains(.leReadMaximumAdvertisingDataLength))
        let properties = sent.compactMap { command -> HCICommand.AdvertisingEventProperties? in
            if case .leSetExtendedAdvertisingParameters(let p) = command { p.properties } else { nil }
        }
        #expect(properties == [[.connectable]])
        let fragments = sent.compactMap { command -> HCICommand.AdvertisingDataFragment? in
            if case .leSetExtendedAdvertisingData(let f) = command { f } else { nil }
        }
        #expect(fragments.map(\.operation) == [.firstFragment, .lastFragment])
        #expect(fragments.flatMap(\.data) == Array(long.bytes))
        await adapter.close()
        pump.cancel()
    }

    @Test("extended data over the controller's maximum is a typed error naming it; a connectable extended set takes no scan response")
    func extendedDataTooLong() async throws {
        let (controller, pump, adapter) = try await openAdapter(extendedController(maximumDataLength: 100))
        let long = AdvertisingData([.manufacturerData(ManufacturerData(companyID: 0xFFFF, data: [UInt8](repeating: 7, count: 120)))])
        await #expect(throws: HostError.advertisingDataTooLong("advertising data", length: 124, maximum: 100)) {
            try await adapter.advertise(Advertisement(data: long))
        }
        let medium = AdvertisingData([.manufacturerData(ManufacturerData(companyID: 0xFFFF, data: [UInt8](repeating: 7, count: 40)))])
        await #expect(throws: HostError.self) {
            try await adapter.advertise(Advertisement(data: medium, scanResponse: scanResponse))
        }
        #expect(!controller.commands.contains { if case .leSetExtendedAdvertisingParameters = $0 { true } else { false } })
        await adapter.close()
        pump.cancel()
    }
}

@Suite("Adapter: centrals connecting to the advertisement")
struct AdapterPeripheralTests {
    @Test("a central's connection becomes a Connection on incomingConnections: an ATT PDU goes each way on its bearer")
    func incomingConnectionCarriesATT() async throws {
        let (controller, pump, adapter) = try await openAdapter(legacyController)
        try await adapter.advertise(Advertisement(data: heartRateData, restart: .never))
        let connection = try await connectCentral(to: adapter, controller)
        #expect(connection.peer == ScriptedController.peer)
        #expect(connection.handle == ScriptedController.handle)
        #expect(connection.ending == nil)

        // The central's Exchange MTU Request arrives on the bearer …
        let pdus = connection.att.pdus
        AdapterFixedChannelTests.inject([0x02, 0xF7, 0x00], channel: 0x0004, into: controller)
        let received = try await within(seconds: 60) { () -> [UInt8]? in
            for try await pdu in pdus { return pdu }
            return nil
        }
        #expect(received == [0x02, 0xF7, 0x00])
        // … and the answer goes out as an ACL packet on the link's handle, CID 4.
        try await connection.att.send([0x03, 0x17, 0x00])
        let acl = await controller.waitForACL(count: 1)
        #expect(acl.first?.handle == ScriptedController.handle)
        #expect(acl.first.map { Array($0.payload) } == [0x03, 0x00, 0x04, 0x00, 0x03, 0x17, 0x00])

        // A disconnection is reported as a central link's is.
        #expect(await disconnectCentral(connection, controller) == .disconnected(.remoteUserTerminatedConnection))
        await adapter.close()
        pump.cancel()
    }

    @Test("legacy advertising, which a connection stops, starts again after the central disconnects")
    func restartAfterDisconnection() async throws {
        let (controller, pump, adapter) = try await openAdapter(legacyController)
        try await adapter.advertise(Advertisement(data: heartRateData))
        let connection = try await connectCentral(to: adapter, controller)
        // Still connected: the host went on (a command round trip) and did not advertise again.
        try await adapter.execute(.leSetScanEnable(enable: false, filterDuplicates: false))
        #expect(controller.commands.filter(isLegacyEnable).count == 1)
        await disconnectCentral(connection, controller)
        let enables = try await commands(atLeast: 2, controller, isLegacyEnable)
        #expect(enables.count == 2)
        // A second central is accepted the same way.
        let second = try await connectCentral(to: adapter, controller, handle: 0x0041)
        #expect(second.handle == 0x0041)
        await adapter.close()
        pump.cancel()
    }

    @Test("restart afterConnection advertises again at once; never stays silent after the disconnection")
    func restartPolicies() async throws {
        let (controller, pump, adapter) = try await openAdapter(legacyController)
        try await adapter.advertise(Advertisement(data: heartRateData, restart: .afterConnection))
        _ = try await connectCentral(to: adapter, controller)
        _ = try await commands(atLeast: 2, controller, isLegacyEnable)
        try await adapter.stopAdvertising()

        try await adapter.advertise(Advertisement(data: heartRateData, restart: .never))
        let before = controller.commands.filter(isLegacyEnable).count
        let connection = try await connectCentral(to: adapter, controller, handle: 0x0041)
        await disconnectCentral(connection, controller, handle: 0x0041)
        try await adapter.execute(.leSetScanEnable(enable: false, filterDuplicates: false))
        #expect(controller.commands.filter(isLegacyEnable).count == before)
        await adapter.close()
        pump.cancel()
    }

    @Test("an extended set ended by a connection (Advertising Set Terminated) is enabled again after the disconnection")
    func extendedRestart() async throws {
        let (controller, pump, adapter) = try await openAdapter(extendedController())
        try await adapter.advertise(Advertisement(data: heartRateData))
        controller.transport.inject(centralConnected())
        controller.transport.inject(.le(.advertisingSetTerminated(.init(status: .success, advertisingHandle: 0,
                                                                        connectionHandle: ScriptedController.handle, completedEvents: 4))))
        let connection = try await firstIncoming(adapter)
        await disconnectCentral(connection, controller)
        let enable = HCICommand.leSetExtendedAdvertisingEnable(.one(.init(handle: 0), enable: true))
        let enables = try await commands(atLeast: 2, controller) { $0 == enable }
        #expect(enables.count == 2)
        await adapter.close()
        pump.cancel()
    }

    @Test("close stops advertising before it disconnects the centrals and finishes incomingConnections")
    func closeStopsAdvertising() async throws {
        let (controller, pump, adapter) = try await openAdapter(legacyController)
        try await adapter.advertise(Advertisement(data: heartRateData, restart: .afterConnection))
        let connection = try await connectCentral(to: adapter, controller)
        _ = try await commands(atLeast: 2, controller, isLegacyEnable)
        await adapter.close()
        let sent = controller.commands
        let disable = try #require(sent.lastIndex(of: .leSetAdvertisingEnable(false)))
        let disconnect = try #require(sent.firstIndex(of: .disconnect(handle: ScriptedController.handle, reason: .remoteUserTerminatedConnection)))
        #expect(disable < disconnect)
        #expect(connection.ending != nil)
        let rest = try await within(seconds: 60) { () -> Int in
            var count = 0
            for await _ in adapter.incomingConnections { count += 1 }
            return count
        }
        #expect(rest == 0)
        pump.cancel()
    }

    @Test("a peripheral-role link while nothing advertises is let go, as before")
    func unexpectedPeripheralLinkIsDisconnected() async throws {
        let (controller, pump, adapter) = try await openAdapter(legacyController)
        controller.transport.inject(centralConnected())
        let disconnect = try await commands(atLeast: 1, controller) { if case .disconnect = $0 { true } else { false } }
        #expect(disconnect.first == .disconnect(handle: ScriptedController.handle, reason: .remoteUserTerminatedConnection))
        await adapter.close()
        pump.cancel()
    }

    @Test("as the peripheral, a central's Connection Parameter Update Request gets Command Reject; with pairing off, a Pairing Request gets Pairing Not Supported")
    func peripheralSignalingAndSMP() async throws {
        var configuration = quietConfiguration()
        configuration.pairing = nil
        let (controller, pump, adapter) = try await openAdapter(legacyController, configuration: configuration)
        try await adapter.advertise(Advertisement(data: heartRateData, restart: .never))
        _ = try await connectCentral(to: adapter, controller)
        AdapterFixedChannelTests.inject(AdapterParameterUpdateTests.request(id: 7, minimum: 24), channel: 0x0005, into: controller)
        let reject = await controller.waitForACL(count: 1)
        // Command Reject (0x01), identifier 7, reason 0x0000 command not understood.
        #expect(reject.first.map { Array($0.payload) } == [0x06, 0x00, 0x05, 0x00, 0x01, 0x07, 0x02, 0x00, 0x00, 0x00])
        #expect(!controller.commands.contains { if case .leConnectionUpdate = $0 { true } else { false } })
        AdapterFixedChannelTests.inject([0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07], channel: 0x0006, into: controller)
        let answers = await controller.waitForACL(count: 2)
        #expect(answers.last.map { Array($0.payload) } == [0x02, 0x00, 0x06, 0x00, 0x05, 0x05])
        await adapter.close()
        pump.cancel()
    }
}

@Suite("LE signaling as the peripheral")
struct PeripheralSignalingResponderTests {
    @Test("a Connection Parameter Update Request to the peripheral is rejected as not understood (Core Vol 3 Part A 4.20); the central still accepts it")
    func parameterUpdateRequestToPeripheral() {
        let request: [UInt8] = [0x12, 0x09, 0x08, 0x00, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x90, 0x01]
        var peripheral = LESignalingResponder(isPeripheral: true)
        #expect(peripheral.receive(request[...]) == [.send(LESignalingCommand(identifier: 9, .commandReject(.commandNotUnderstood)))])
        #expect(peripheral.acceptedParameterUpdateCount == 0)
        var central = LESignalingResponder()
        #expect(central.receive(request[...]).count == 2, "accepted, then LE Connection Update")
    }
}

/// Records what the connection says about its end at the moment its bearer ends.
private final class EndingProbe: ATTPDUReceiver, Sendable {
    let connection: Connection
    /// The connection's ending as each call of `bearerEnded` found it.
    let endings = Recording<HostError?>()
    init(_ connection: Connection) { self.connection = connection }
    func receive(_ pdu: ArraySlice<UInt8>) {}
    func bearerEnded(_ error: BearerError) {
        endings.append(connection.ending)
    }
}

@Suite("Adapter: a link's end as its bearer reports it")
struct PeripheralLinkEndingTests {
    @Test("when a central's link ends, the bearer's end already finds the connection's ending set (a server reading it learns why)")
    func endingIsSetBeforeTheBearerEnds() async throws {
        let (controller, pump, adapter) = try await openAdapter(legacyController)
        try await adapter.advertise(Advertisement(data: heartRateData, restart: .never))
        let connection = try await connectCentral(to: adapter, controller)
        let probe = EndingProbe(connection)
        #expect(connection.att.deliverPDUs(to: probe))
        await disconnectCentral(connection, controller)
        // The bearer's end reaches the probe after the waiters resume (the order the claim is
        // about); on a loaded machine that can be after this task runs again.
        let endings = try await probe.endings.wait(until: { !$0.isEmpty })
        let ending = try #require(endings.first)
        #expect(ending == .disconnected(.remoteUserTerminatedConnection))
        await adapter.close()
        pump.cancel()
    }
}
