import Foundation
import RawbleTestSupport
import RawbleWire

/// A controller played by the test on a unix socket, for `rawble --transport unix:PATH`: it
/// answers the host's start-up and connection commands as a minimal controller does, and then
/// behaves as `script` says, so a test can produce failures Bumble's controller never does
/// (a peer that stops answering, a connection refused, a controller that hangs up).
final class UnixSocketController: @unchecked Sendable {
    enum Script: Sendable {
        /// Connects, then never answers an ATT request (the ACL packets are only acknowledged).
        case silentPeer
        /// LE Create Connection ends in Connection Complete with status 0x3E.
        case refuseConnection
        /// Connects, then closes the socket when the host sends its first ATT request.
        case hangUpOnATT
        /// Also answers LE Set Scan Parameters a second time: a Command Complete for a command
        /// that is not pending, which the host logs as a warning and otherwise ignores.
        case strayCommandComplete
        /// Connects, then serves a hostile GATT database: one service from 0x0001 to 0xFFFF
        /// whose characteristic walk answers with a declaration at 0xFFFF pointing back at
        /// 0x0002 (this once trapped `rawble gatt` on arithmetic overflow).
        case declarationAtTopHandle
        /// Nothing advertises: LE Create Connection is accepted (Command Status) and never
        /// completes, until the host cancels it.
        case nothingAdvertises
    }

    /// The peer the controller connects to (random static address).
    static let peer = "C1:22:33:44:55:66"
    static let peerAddress = BluetoothAddress(0xC1_22_33_44_55_66)
    static let handle: UInt16 = 0x0040

    let path: String
    var transport: String { "unix:\(path)" }
    private let script: Script
    private let listener: Int32
    private let lock = NSLock()
    private var connection: Int32 = -1
    private var stopped = false

    init(_ script: Script) throws {
        self.script = script
        // Short: sun_path holds 108 bytes.
        path = "/tmp/rawble-cli-\(UUID().uuidString.prefix(8)).sock"
        listener = try Self.listeningSocket(at: path)
        Thread.detachNewThread { [self] in serve() }
    }

    /// A unix stream socket bound at `path` and listening (one host at a time).
    static func listeningSocket(at path: String) throws -> Int32 {
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw ControllerError.socket(errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() where index < raw.count - 1 { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
        guard bound, listen(listener, 1) == 0 else {
            let code = errno
            close(listener)
            throw ControllerError.socket(code)
        }
        return listener
    }

    /// Closes the sockets (the serving thread then ends) and removes the socket file.
    func stop() {
        lock.lock()
        stopped = true
        if connection >= 0 { shutdown(connection, Int32(SHUT_RDWR)) }
        lock.unlock()
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        unlink(path)
    }

    /// Serves one host after the other until ``stop()``.
    private func serve() {
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            lock.lock()
            if stopped {
                lock.unlock()
                close(fd)
                return
            }
            connection = fd
            lock.unlock()
            serve(fd)
            // stop() only shuts the socket down, under the lock: closing it is this thread's job.
            lock.lock()
            connection = -1
            close(fd)
            lock.unlock()
        }
    }

    private func serve(_ fd: Int32) {
        var framer = H4Framer()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            framer.append(chunk[..<count])
            for case .success(let packet) in framer.drain() {
                guard let answers = answer(packet) else { return }  // hang up
                let packets = answers.map { [H4PacketType.event.rawValue] + $0.encoded } + attAnswer(packet)
                for bytes in packets {
                    // send, not write: a host that has gone must not SIGPIPE the test process.
                    let written = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    guard written == bytes.count else { return }
                }
            }
        }
    }

    /// The events answering one packet from the host; `nil`: hang up instead.
    private func answer(_ packet: H4Packet) -> [HCIEvent]? {
        switch packet.type {
        case .command:
            guard let command = try? HCICommand.decode(packet.bytes) else { return [] }
            return answer(command)
        case .acl:
            if case .hangUpOnATT = script { return nil }
            return [.numberOfCompletedPackets([.init(connectionHandle: Self.handle, count: 1)])]
        default:
            return []
        }
    }

    /// With ``Script/declarationAtTopHandle``: the H4 ACL packet answering an ATT request the
    /// host sent in one ACL packet on the ATT channel, if any.
    private func attAnswer(_ packet: H4Packet) -> [[UInt8]] {
        guard case .declarationAtTopHandle = script, packet.type == .acl else { return [] }
        let bytes = Array(packet.bytes)
        // ACL header (4), L2CAP header (4: length, channel 0x0004), then the ATT PDU.
        guard bytes.count >= 9, bytes[6] == 0x04, bytes[7] == 0x00 else { return [] }
        let request = Array(bytes[8...])
        let response: [UInt8]
        switch request[0] {
        case 0x02:  // Exchange MTU Request → 23
            response = [0x03, 23, 0x00]
        case 0x10 where request.count >= 3 && request[1] == 0x01 && request[2] == 0x00:
            // Read By Group Type from 0x0001 → one Heart Rate service 0x0001–0xFFFF.
            response = [0x11, 6, 0x01, 0x00, 0xFF, 0xFF, 0x0D, 0x18]
        case 0x08 where request.count == 7 && request[5] == 0x03 && request[6] == 0x28:
            // Read By Type of 0x2803 (characteristics) → a declaration at 0xFFFF, value at 0x0002.
            response = [0x09, 7, 0xFF, 0xFF, 0x02, 0x02, 0x00, 0x37, 0x2A]
        default:
            // Error Response: Attribute Not Found for the rest of a walk (services, includes),
            // Request Not Supported for anything else.
            let code: UInt8 = request[0] == 0x10 || request[0] == 0x08 ? 0x0A : 0x06
            response = [0x01, request[0], request.count >= 3 ? request[1] : 0, request.count >= 3 ? request[2] : 0, code]
        }
        let l2cap = [UInt8(response.count), 0x00, 0x04, 0x00] + response
        let handle = Self.handle | 0x2000  // first automatically flushable packet
        return [[H4PacketType.acl.rawValue, UInt8(handle & 0xFF), UInt8(handle >> 8), UInt8(l2cap.count), 0x00] + l2cap]
    }

    /// The host test suites' answer table (`ScriptedController.minimal`, whose peer and handle
    /// are this controller's), with the script's departures from it.
    private func answer(_ command: HCICommand) -> [HCIEvent] {
        switch (command, script) {
        case (.leSetScanParameters, .strayCommandComplete):
            [ScriptedController.complete(command.opcode), ScriptedController.complete(command.opcode)]
        case (.leCreateConnection, .nothingAdvertises):
            [ScriptedController.status(command.opcode)]
        case (.leCreateConnection, .refuseConnection):
            [ScriptedController.status(command.opcode), ScriptedController.connectionComplete(status: .connectionFailedToBeEstablished)]
        default:
            ScriptedController.minimal(command) ?? []
        }
    }

    enum ControllerError: Error { case socket(Int32) }
}
