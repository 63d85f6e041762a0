// PairingTiming: rawble's pairing (LE Secure Connections, Just Works) timed on a Bumble link, and
// the cryptography a pairing is made of, for Scripts/benchmark-pairing (issue 24).
// Benchmarks/Reference/bumble_pairing.py does the same with Bumble's host and Bumble's crypto.
// One JSON object per line on stdout; times are CLOCK_MONOTONIC nanoseconds.
//
//   PairingTiming pair   --transport tcp:127.0.0.1:PORT --address AA:BB:CC:DD:EE:FF --count N
//                        [--pair-timeout S] [--timeout S]
//   PairingTiming crypto --count N --batches B [--timeout S]
//
// `pair`: rawble's host (Adapter, central) connects to the peripheral at --address N times, and
// on each link pairs (`Connection.pair()`: a new pairing even though the in-memory bond store
// holds the previous one's bond), then disconnects. Per pairing one line
//   {"event": "paired", "index": i, "connected": t, "encryptionChange": t, "paired": t, ...}
// "connected": `connect` returned; "encryptionChange": the controller's Encryption Change event
// reached the host (seen by a pass-through on the transport's packet delivery, before the host
// handles it); "paired": `pair()` returned (after the key distribution that follows encryption,
// and the bond kept in the in-memory store).
//
// `crypto`: each operation a LE Secure Connections Just Works pairing is made of, run --count
// times in each of --batches batches; per operation one line {"op": NAME, "ns": [...],
// "wallNs": [...]} (per call, each batch: the thread's CPU time, the wall time): P-256 key
// generation (`PairingKeyPair()`, with its public key exported as Pairing Public Key carries it),
// ECDH (`dhKey(with:)`: the peer's key checked to be on the curve, then the shared X), f4, f5, f6
// and g2 (`SMPCrypto`).
//
// No Foundation, as the other timing executables.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOConcurrencyHelpers
import NIOCore
import RawbleHCITransport
import RawbleHost
import RawbleSMP
import RawbleTransport
import RawbleWire
import TimingSupport

// MARK: Arguments

struct Arguments {
    var mode = ""
    var host = "127.0.0.1"
    var port: UInt16 = 0
    var address: BluetoothAddress?
    var count = 20
    var batches = 5
    var pairTimeout = 10.0
    var timeout = 120.0

    init(_ argv: [String]) {
        var rest = argv.dropFirst()
        guard let mode = rest.popFirst() else { fail("usage: PairingTiming pair|crypto ...") }
        self.mode = mode
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { fail("\(flag) needs a value") }
            switch flag {
            case "--transport":
                guard let (host, port) = tcpTransport(value) else { fail("--transport tcp:HOST:PORT") }
                (self.host, self.port) = (host, port)
            case "--address":
                guard let address = BluetoothAddress(value) else { fail("bad address \(value)") }
                self.address = address
            case "--count": count = Int(value) ?? count
            case "--batches": batches = Int(value) ?? batches
            case "--pair-timeout": pairTimeout = Double(value) ?? pairTimeout
            case "--timeout": timeout = Double(value) ?? timeout
            default: fail("unknown option \(flag)")
            }
        }
        guard count > 0, batches > 0 else { fail("--count and --batches must be positive") }
    }
}

// MARK: The Encryption Change, seen on its way to the host

/// The time the last Encryption Change (or its v2) event came from the controller.
final class EncryptionChangeMark: Sendable {
    private let box = NIOLockedValueBox<UInt64>(0)

    var nanoseconds: UInt64 {
        get { box.withLockedValue { $0 } }
        set { box.withLockedValue { $0 = newValue } }
    }
}

/// Hands every packet to the host unchanged, noting when an Encryption Change event passes.
final class MarkingReceiver: HCIPacketReceiver {
    let next: any HCIPacketReceiver
    let mark: EncryptionChangeMark

    init(next: any HCIPacketReceiver, mark: EncryptionChangeMark) {
        self.next = next
        self.mark = mark
    }

    func receive(_ packets: [H4Packet]) {
        for packet in packets where packet.type == .event {
            // Encryption Change (0x08) and Encryption Change v2 (0x59).
            if let code = packet.bytes.first, code == 0x08 || code == 0x59 {
                mark.nanoseconds = monotonicNanoseconds()
            }
        }
        next.receive(packets)
    }

    func transportEnded(_ error: TransportError) {
        next.transportEnded(error)
    }
}

/// The H4 transport with the marking receiver in its delivery path (the host's fast path stays:
/// packets are still handed over in the transport's own batches, on its event loop).
final class MarkingTransport: HCITransport {
    let inner: H4StreamTransport
    let mark: EncryptionChangeMark

    init(_ inner: H4StreamTransport, mark: EncryptionChangeMark) {
        self.inner = inner
        self.mark = mark
    }

    var packets: AsyncThrowingStream<H4Packet, any Error> { inner.packets }
    var eventLoop: any EventLoop { inner.eventLoop }

    func send(_ packet: H4Packet) async throws(TransportError) {
        try await inner.send(packet)
    }

    func close() async {
        await inner.close()
    }

    func deliverPackets(to receiver: any HCIPacketReceiver) -> Bool {
        inner.deliverPackets(to: MarkingReceiver(next: receiver, mark: mark))
    }
}

// MARK: Pairing

func pair(_ arguments: Arguments) async {
    guard let address = arguments.address else { fail("--address is required") }
    guard arguments.port != 0 else { fail("--transport tcp:HOST:PORT is required") }
    let mark = EncryptionChangeMark()
    let transport: MarkingTransport
    do {
        transport = MarkingTransport(
            try await H4StreamTransport.connect(tcp: arguments.host, port: arguments.port, timeout: .seconds(5)), mark: mark)
    } catch {
        fail("transport: \(error)")
    }
    var configuration = Adapter.Configuration()
    configuration.logger.logLevel = .critical
    // LE Secure Connections, bonding, NoInputNoOutput: Just Works (the default configuration).
    configuration.pairing = PairingConfiguration()
    // Every link pairs: none is encrypted with the previous pairing's bond before `pair()`.
    configuration.encryptsBondedLinks = false
    let adapter: Adapter
    do {
        adapter = try await Adapter.open(transport, configuration: configuration)
    } catch {
        fail("open: \(error)")
    }
    emit(["phase": quoted("opened"), "t": "\(monotonicNanoseconds())"])
    let peer = DeviceAddress(address, type: .random)
    let pairTimeout = Duration.milliseconds(Int64(arguments.pairTimeout * 1000))
    for index in 1...arguments.count {
        let connection: Connection
        do {
            connection = try await adapter.connect(to: peer, timeout: .seconds(10))
        } catch {
            fail("connect \(index): \(error)")
        }
        let connected = monotonicNanoseconds()
        mark.nanoseconds = 0
        let outcome: PairingOutcome?
        do {
            outcome = try await connection.pair(timeout: pairTimeout)
        } catch {
            fail("pairing \(index): \(error)")
        }
        let paired = monotonicNanoseconds()
        let encryptionChange = mark.nanoseconds
        guard let outcome else { fail("pairing \(index): no outcome") }
        guard connection.security >= .encrypted else { fail("pairing \(index): the link is not encrypted") }
        guard outcome.method == .justWorks, outcome.secureConnections else {
            fail("pairing \(index): \(outcome.method), secure connections \(outcome.secureConnections)")
        }
        guard encryptionChange > connected else { fail("pairing \(index): no Encryption Change seen") }
        emit([
            "event": quoted("paired"), "index": "\(index)", "connected": "\(connected)",
            "encryptionChange": "\(encryptionChange)", "paired": "\(paired)",
            "bonded": outcome.bonded ? "true" : "false", "keySize": "\(outcome.keySize)",
        ])
        do {
            try await connection.disconnect()
        } catch {
            fail("disconnect \(index): \(error)")
        }
    }
    await adapter.close()
}

// MARK: The cryptography

/// Keeps results alive so the optimizer cannot drop the work.
nonisolated(unsafe) var sink: UInt128 = 0

/// CPU time of the calling thread.
func threadCPUNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

/// Per call: the thread's CPU time and the wall time, each batch.
func timed(_ name: String, _ arguments: Arguments, _ body: (Int) -> UInt128) {
    var cpu: [String] = []
    var wall: [String] = []
    sink ^= body(0)  // warm-up
    for _ in 0..<arguments.batches {
        let startCPU = threadCPUNanoseconds()
        let startWall = monotonicNanoseconds()
        var folded: UInt128 = 0
        for i in 0..<arguments.count { folded ^= body(i) }
        let elapsedWall = monotonicNanoseconds() - startWall
        let elapsedCPU = threadCPUNanoseconds() - startCPU
        sink ^= folded
        cpu.append("\(Double(elapsedCPU) / Double(arguments.count))")
        wall.append("\(Double(elapsedWall) / Double(arguments.count))")
    }
    emit(["op": quoted(name), "count": "\(arguments.count)", "ns": "[\(cpu.joined(separator: ", "))]",
          "wallNs": "[\(wall.joined(separator: ", "))]"])
}

func crypto(_ arguments: Arguments) {
    // Inputs as a pairing has them: two key pairs, nonces, the two typed addresses, the
    // initiator's Pairing Request (its IO capability and AuthReq go into f6).
    let local = PairingKeyPair()
    let peers = (0..<16).map { _ in PairingKeyPair().publicKey }
    let na: UInt128 = 0xD5CB_8454_D177_733E_FFFF_B2EC_712B_AEAB
    let nb: UInt128 = 0xA6E8_E7CC_25A7_5F6E_2163_FEE8_AB9A_B52F
    let initiator = DeviceAddress(BluetoothAddress("F0:F1:F2:F3:F4:F5")!, type: .random)
    let responder = DeviceAddress(BluetoothAddress("C0:B1:E0:00:00:01")!, type: .random)
    let request = SMPPairingParameters(
        ioCapability: .noInputNoOutput, oobDataFlag: 0, authenticationRequirements: [.bonding, .secureConnections],
        maximumEncryptionKeySize: 16, initiatorKeyDistribution: [.encryptionKey],
        responderKeyDistribution: [.encryptionKey, .identityKey, .signingKey])
    let dhKey: P256Coordinate
    do {
        dhKey = try local.dhKey(with: peers[0])
    } catch {
        fail("ECDH: \(error)")
    }
    let macKey = SMPCrypto.macKeyAndLongTermKey(w: dhKey, n1: na, n2: nb, a1: initiator, a2: responder).macKey

    timed("keygen", arguments) { _ in PairingKeyPair().publicKey.x.low }
    timed("ecdh", arguments) { i in
        do {
            return try local.dhKey(with: peers[i & 15]).low
        } catch {
            fail("ECDH: \(error)")
        }
    }
    timed("f4", arguments) { i in
        SMPCrypto.confirmValue(u: local.publicKey.x, v: peers[i & 15].x, x: nb &+ UInt128(i), z: 0)
    }
    timed("f5", arguments) { i in
        let keys = SMPCrypto.macKeyAndLongTermKey(w: dhKey, n1: na &+ UInt128(i), n2: nb, a1: initiator, a2: responder)
        return keys.macKey ^ keys.longTermKey
    }
    timed("f6", arguments) { i in
        SMPCrypto.checkValue(w: macKey, n1: na &+ UInt128(i), n2: nb, r: 0, ioCapabilities: request,
                             a1: initiator, a2: responder)
    }
    timed("g2", arguments) { i in
        UInt128(SMPCrypto.numericComparisonValue(u: local.publicKey.x, v: peers[i & 15].x, x: na &+ UInt128(i), y: nb))
    }
    emit(["event": quoted("crypto-done"), "sink": "\(sink & 1)"])
}

// MARK: Main

let arguments = Arguments(CommandLine.arguments)
let watchdog = Task {
    try? await Task.sleep(for: .seconds(arguments.timeout))
    fail("timed out after \(arguments.timeout) s")
}
switch arguments.mode {
case "pair": await pair(arguments)
case "crypto": crypto(arguments)
default: fail("unknown mode \(arguments.mode)")
}
watchdog.cancel()
