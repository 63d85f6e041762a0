// The sample database the server tests share, and a harness that drives one `ATTServer` core
// with hex: request bytes in, response bytes out.
import RawbleBearer
import RawbleGATT
import RawbleGATTCore
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

/// A 128-bit service and characteristic for the tests.
let customService = BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")!
let customCharacteristic = BluetoothUUID("6E400002-B5A3-F393-E0A9-E50E24DCCA9E")!

/// The sample database (handles in the comments):
///
///      1 GAP service (…5)      2 decl  3 Device Name "rawble"  4 decl  5 Appearance
///      6 GATT service (…9)     7 decl  8 Service Changed  9 CCCD
///     10 Heart Rate (…18)     11 include → 19…24
///                             12 decl  13 2A37 provided, read+notify  14 CCCD
///                             15 decl  16 2A38 fixed [01]
///                             17 decl  18 2A39 write, encryption required
///     19 Battery, secondary (…24)  20 decl  21 2A19 [64] read+notify+indicate  22 CCCD
///                             23 user description "Battery"  24 presentation format
///     25 custom 128-bit (…30) 26 decl  27 custom 100 bytes, read+write+notify, max 200  28 CCCD
///                             29 decl  30 2A3F [01 02] authentication required
func sampleDatabase() throws -> GATTServerDatabase {
    try GATTServerDatabase(deviceName: "rawble", appearance: .heartRateBelt, services: [
        .primary(BluetoothUUID(0x180D), includes: [BluetoothUUID(0x180F)], characteristics: [
            GATTCharacteristicDefinition(BluetoothUUID(0x2A37), properties: [.read, .notify], value: .provided),
            GATTCharacteristicDefinition(BluetoothUUID(0x2A38), properties: [.read], value: .fixed([0x01])),
            GATTCharacteristicDefinition(BluetoothUUID(0x2A39), properties: [.write], write: .encryptionRequired, maximumLength: 2),
        ]),
        .secondary(BluetoothUUID(0x180F), characteristics: [
            GATTCharacteristicDefinition(
                BluetoothUUID(0x2A19), properties: [.read, .notify, .indicate], value: .fixed([0x64]),
                userDescription: "Battery", presentationFormat: GATTPresentationFormat(format: 0x04, unit: 0x27AD)),
        ]),
        .primary(customService, characteristics: [
            GATTCharacteristicDefinition(customCharacteristic, properties: [.read, .write, .notify],
                                         value: .fixed(pattern(100)), maximumLength: 200),
            GATTCharacteristicDefinition(BluetoothUUID(0x2A3F), properties: [.read], value: .fixed([0x01, 0x02]),
                                         read: .authenticationRequired),
        ]),
    ])
}

/// One server core on the sample database, driven with hex.
struct ServerHarness {
    var core: ATTServer
    var database: GATTServerDatabase
    /// Events of the last input.
    var events: [ATTServerEvent] = []
    /// Handles the last input waits for.
    var valuesNeeded: [UInt16] = []

    init(configuration: ATTServer.Configuration = ATTServer.Configuration()) throws {
        core = ATTServer(configuration: configuration)
        database = try sampleDatabase()
    }

    /// Sends one PDU (spaced hex); returns every PDU the server sends back, as spaced hex.
    mutating func send(_ hex: String) -> [String] {
        take(core.receive(bytes(hex), database: &database))
    }

    /// Sends one request and returns its one answer (records an issue when there is not
    /// exactly one).
    mutating func request(_ hex: String, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        let answers = send(hex)
        #expect(answers.count == 1, "\(hex) answered with \(answers)", sourceLocation: sourceLocation)
        return answers.first ?? ""
    }

    mutating func supply(_ values: [UInt16: GATTValueResult]) -> [String] {
        take(core.supply(values, database: &database))
    }

    mutating func take(_ output: ATTServerOutput) -> [String] {
        events = output.events
        valuesNeeded = output.valuesNeeded
        return output.pdus.map(hexString)
    }

    /// Exchanges the MTU to `mtu` (the server offers 517).
    mutating func exchangeMTU(_ mtu: UInt16) {
        _ = send(hexString([0x02, UInt8(mtu & 0xFF), UInt8(mtu >> 8)]))
    }
}

/// Spaced hex of a UUID's 16 little-endian bytes.
func uuidHex(_ uuid: BluetoothUUID) -> String { hexString(uuid.littleEndianBytes(width: 16)) }

/// One end of an in-memory ATT link: what one end sends, the other receives, in order. Closing
/// either end (or ``disconnect(_:)``) ends both: this end's `pdus` finish with `.closed` (the
/// peer's with `.disconnected`), and later sends fail.
final class PipeBearer: ATTBearer {
    let pdus: AsyncThrowingStream<[UInt8], any Error>
    let maximumPDULength: Int
    private let own: AsyncThrowingStream<[UInt8], any Error>.Continuation
    private let link: PipeLink
    private let isFirst: Bool

    fileprivate init(link: PipeLink, first: Bool, maximumPDULength: Int) {
        self.link = link
        self.isFirst = first
        self.maximumPDULength = maximumPDULength
        (pdus, own) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
    }

    /// The two ends of a new link.
    static func pair(maximumPDULength: Int = 517) -> (central: PipeBearer, peripheral: PipeBearer) {
        let link = PipeLink()
        let central = PipeBearer(link: link, first: true, maximumPDULength: maximumPDULength)
        let peripheral = PipeBearer(link: link, first: false, maximumPDULength: maximumPDULength)
        link.ends.withLock { $0 = (central.own, peripheral.own) }
        return (central, peripheral)
    }

    func send(_ pdu: [UInt8]) async throws(BearerError) {
        if pdu.count > maximumPDULength { throw .pduTooLong(length: pdu.count, maximum: maximumPDULength) }
        try link.deliver(pdu, toFirst: !isFirst)
    }

    func close() async { link.end(closedBy: isFirst, .closed) }

    /// Ends the link as a disconnection would.
    func disconnect(_ reason: String = "remote user terminated connection") {
        link.end(closedBy: nil, .disconnected(reason: reason))
    }
}

/// The state two ``PipeBearer``s share.
private final class PipeLink: Sendable {
    typealias Input = AsyncThrowingStream<[UInt8], any Error>.Continuation
    let ends = Mutex<(first: Input, second: Input)?>(nil)
    let ended = Mutex<BearerError?>(nil)

    func deliver(_ pdu: [UInt8], toFirst: Bool) throws(BearerError) {
        try ended.withLock { ended throws(BearerError) in
            if let ended { throw ended }
            guard let ends = self.ends.withLock({ $0 }) else { return }
            (toFirst ? ends.first : ends.second).yield(pdu)
        }
    }

    func end(closedBy first: Bool?, _ error: BearerError) {
        ended.withLock { ended in
            guard ended == nil else { return }
            ended = error
            guard let ends = self.ends.withLock({ $0 }) else { return }
            let peer = BearerError.disconnected(reason: "peer closed the bearer")
            ends.first.finish(throwing: first == false ? peer : error)
            ends.second.finish(throwing: first == true ? peer : error)
        }
    }
}
