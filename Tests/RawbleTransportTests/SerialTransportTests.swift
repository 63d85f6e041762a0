import Glibc
import RawbleHCITransport
import RawbleTestSupport
import RawbleWire
import Synchronization
import Testing

@testable import RawbleTransport

struct PseudoTerminalUnavailable: Error {}

/// A pseudo-terminal pair made in the test: the transport opens the slave path as its serial
/// device; the test plays the controller on the master.
final class PseudoTerminal: Sendable {
    let master: Int32
    let slavePath: String
    private let closed = Mutex(false)

    init() throws {
        // The pty functions are hidden behind _XOPEN_SOURCE in the Glibc module: look them up.
        let openpt = try #require(Self.libc("posix_openpt", as: (@convention(c) (Int32) -> Int32).self))
        let grant = try #require(Self.libc("grantpt", as: (@convention(c) (Int32) -> Int32).self))
        let unlock = try #require(Self.libc("unlockpt", as: (@convention(c) (Int32) -> Int32).self))
        let nameOf = try #require(
            Self.libc("ptsname_r", as: (@convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32).self))
        let fd = openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)
        try #require(fd >= 0, "posix_openpt failed: errno \(errno)")
        var name = [CChar](repeating: 0, count: 128)
        guard grant(fd) == 0, unlock(fd) == 0, nameOf(fd, &name, name.count) == 0 else {
            Glibc.close(fd)
            Issue.record("grantpt/unlockpt/ptsname_r failed: errno \(errno)")
            throw PseudoTerminalUnavailable()
        }
        master = fd
        slavePath = name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    deinit { closeMaster() }

    private static func libc<F>(_ name: String, as type: F.Type) -> F? {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(symbol, to: type)
    }

    func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(master, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            precondition(n > 0, "pty master write failed: errno \(errno)")
            offset += n
        }
    }

    /// Reads exactly `count` bytes from the master on a background thread; nil on hang-up, error
    /// or when nothing arrives for 5 s.
    func read(count: Int) async -> [UInt8]? {
        let master = self.master
        return await onThread {
            var bytes = [UInt8](repeating: 0, count: count)
            var offset = 0
            while offset < count {
                var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
                let ready = poll(&poller, 1, 5_000)
                if ready < 0 && errno == EINTR { continue }
                guard ready > 0, poller.revents & Int16(POLLIN) != 0 else { return nil }
                let n = bytes[offset...].withUnsafeMutableBytes { Glibc.read(master, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return nil }
                offset += n
            }
            return bytes
        }
    }

    /// Whether the master sees the slave side hung up (every descriptor on it closed) within 5 s.
    func seesHangUp() async -> Bool {
        let master = self.master
        return await onThread {
            var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            while true {
                let ready = poll(&poller, 1, 5_000)
                if ready < 0 && errno == EINTR { continue }
                return ready > 0 && poller.revents & Int16(POLLHUP) != 0
            }
        }
    }

    func closeMaster() {
        closed.withLock { closed in
            if !closed { Glibc.close(master) }
            closed = true
        }
    }
}

/// Collects `count` packets from any transport (bounded by 5 s).
func receive(_ count: Int, from transport: some HCITransport) async throws -> [H4Packet] {
    let packets = transport.packets
    return try await within(seconds: 5) {
        var received: [H4Packet] = []
        for try await packet in packets {
            received.append(packet)
            if received.count == count { break }
        }
        return received
    }
}

@Suite struct SerialTransportTests {
    /// Every byte a terminal in cooked mode would eat or rewrite: CR, NL, ^C, ^D, ^Q, ^S, DEL,
    /// ^Z, ^\, ^U, ^W, ^V.
    static let controlCharacters: [UInt8] = [0x0D, 0x0A, 0x03, 0x04, 0x11, 0x13, 0x7F, 0x1A, 0x1C, 0x15, 0x17, 0x16]
    /// An ACL packet whose payload is those control characters.
    static let controlBytesPacket = H4Packet(
        type: .acl, bytes: [0x40, 0x00, UInt8(controlCharacters.count), 0x00] + controlCharacters)

    @Test func bytesFromTheControllerArriveAsWholePacketsSplitOrCoalesced() async throws {
        let pty = try PseudoTerminal()
        let transport = try H4StreamTransport.openSerial(path: pty.slavePath)
        for byte in commandComplete.encoded { pty.write([byte]) }
        pty.write(aclData.encoded + emptyEvent.encoded + commandComplete.encoded)
        let received = try await receive(4, from: transport)
        #expect(received == [commandComplete, aclData, emptyEvent, commandComplete])
        await transport.close()
    }

    @Test func sentPacketsArriveWholeAndExactOnTheLine() async throws {
        let pty = try PseudoTerminal()
        let transport = try H4StreamTransport.openSerial(path: pty.slavePath, baudRate: 1_000_000)
        try await transport.send(reset)
        try await transport.send(aclData)
        let expected = reset.encoded + aclData.encoded
        #expect(await pty.read(count: expected.count) == expected)
        await transport.close()
    }

    @Test func theLineIsRawBothWaysSoControlCharactersPassUnchanged() async throws {
        let pty = try PseudoTerminal()
        let transport = try H4StreamTransport.openSerial(path: pty.slavePath, hardwareFlowControl: false)
        let packet = Self.controlBytesPacket
        pty.write(packet.encoded)
        #expect(try await receive(1, from: transport) == [packet])
        try await transport.send(packet)
        #expect(await pty.read(count: packet.encoded.count) == packet.encoded)
        await transport.close()
    }

    @Test func closingTheMasterEndsThePacketsWithClosedByPeerAndLaterSendsThrow() async throws {
        let pty = try PseudoTerminal()
        let transport = try H4StreamTransport.openSerial(path: pty.slavePath)
        pty.write(emptyEvent.encoded)
        #expect(try await receive(1, from: transport) == [emptyEvent])
        pty.closeMaster()
        #expect(try await ending(of: transport) == .closedByPeer)
        await #expect(throws: TransportError.closedByPeer) { try await transport.send(reset) }
        try await within { await transport.close() }
    }

    @Test func closeWhileTheLineIsSilentReturnsPromptlyAndReleasesTheDevice() async throws {
        let pty = try PseudoTerminal()
        let transport = try H4StreamTransport.openSerial(path: pty.slavePath)
        let end = Task { try await ending(of: transport) }
        try await within { await transport.close() }
        #expect(try await end.value == .closed)
        await #expect(throws: TransportError.closed) { try await transport.send(reset) }
        // The slave descriptor is closed: the master sees the hang-up.
        #expect(await pty.seesHangUp())
        try await within { await transport.close() }  // idempotent
    }

    @Test func aSendThatCannotProgressTimesOutInsteadOfHanging() async throws {
        let pty = try PseudoTerminal()
        let transport = try H4StreamTransport.openSerial(path: pty.slavePath, writeStallTimeout: .milliseconds(200))
        // The master never reads: the pty's buffers (well under 1 MiB) fill up and stay full.
        let big = H4Packet(type: .acl, bytes: [0x01, 0x00, 0xFF, 0xFF] + [UInt8](repeating: 0xAB, count: 0xFFFF))
        let outcome: TransportError? = try await within(seconds: 10) {
            for _ in 0..<16 {
                do {
                    try await transport.send(big)
                } catch let error as TransportError {
                    return error
                }
            }
            return nil
        }
        #expect(outcome == .timedOut(operation: "serial write"))
        try await within { await transport.close() }
    }

    @Test func everyStandardRateFrom1200To4000000IsAccepted() async throws {
        let standard = [
            1200, 1800, 2400, 4800, 9600, 19_200, 38_400, 57_600, 115_200, 230_400, 460_800, 500_000, 576_000,
            921_600, 1_000_000, 1_152_000, 1_500_000, 2_000_000, 2_500_000, 3_000_000, 3_500_000, 4_000_000,
        ]
        #expect(H4StreamTransport.supportedBaudRates == standard)
        // Each rate maps to its own termios constant.
        #expect(Set(standard.compactMap { H4StreamTransport.terminalSpeeds[$0] }).count == standard.count)
        let pty = try PseudoTerminal()
        for rate in standard {
            let transport = try H4StreamTransport.openSerial(path: pty.slavePath, baudRate: rate)
            try await within { await transport.close() }
        }
    }

    @Test func nonStandardRatesAreRejectedBeforeOpening() {
        for rate in [0, -1, 100, 12_345, 115_201, 4_000_001] {
            #expect(throws: TransportError.unsupportedBaudRate(rate)) {
                _ = try H4StreamTransport.openSerial(path: "/nonexistent/tty", baudRate: rate)
            }
        }
    }

    @Test func aMissingDeviceIsNotFound() throws {
        let directory = try temporaryDirectory()
        defer { rmdir(directory) }
        #expect(throws: TransportError.notFound(path: directory + "/ttyUSB9")) {
            _ = try H4StreamTransport.openSerial(path: directory + "/ttyUSB9")
        }
    }

    @Test func aDeviceThatIsNotATerminalIsRejected() {
        #expect(throws: TransportError.notATerminal(path: "/dev/null")) {
            _ = try H4StreamTransport.openSerial(path: "/dev/null")
        }
    }

    @Test func openFailuresReadAsOneActionableLine() {
        let permission = TransportError.permissionDenied(path: "/dev/ttyUSB0").description
        #expect(permission.contains("dialout"))
        for error in [
            TransportError.permissionDenied(path: "/dev/ttyUSB0"), .notFound(path: "/dev/ttyUSB0"),
            .busy(path: "/dev/ttyUSB0"), .notATerminal(path: "/dev/null"), .unsupportedBaudRate(12_345),
            .timedOut(operation: "serial write"),
        ] {
            #expect(!error.description.contains("\n"))
        }
    }
}

/// The bounded TCP connect (kept here with the other new transport checks).
@Suite struct TCPConnectTimeoutTests {
    /// A socket on 127.0.0.1 of `type`, bound to a port the kernel picks; returns it and the port.
    static func loopbackSocket() throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound)
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    @Test func aListenerThatNeverAcceptsMakesTheConnectTimeOut() async throws {
        // Backlog 0: the accept queue holds one connection, and Linux drops SYNs while it is
        // full, so the next connection attempt gets no answer at all.
        let (listener, port) = try Self.loopbackSocket()
        defer { Glibc.close(listener) }
        try #require(listen(listener, 0) == 0)
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(filler >= 0)
        defer { Glibc.close(filler) }
        var bound = timeval(tv_sec: 5, tv_usec: 0)  // a blocking connect honours SO_SNDTIMEO
        _ = setsockopt(filler, SOL_SOCKET, SO_SNDTIMEO, &bound, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        try #require(connected)
        // The filler waits in the accept queue (the listener is readable): the queue is full.
        var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        try #require(poll(&poller, 1, 5_000) == 1)

        await #expect(throws: TransportError.timedOut(operation: "connect to 127.0.0.1 port \(port)")) {
            _ = try await H4StreamTransport.connect(tcp: "127.0.0.1", port: port, timeout: .milliseconds(300))
        }
    }
}
