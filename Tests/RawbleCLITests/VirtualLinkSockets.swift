import Foundation
import RawbleTestSupport
import RawbleWire

/// A ``VirtualLink``'s controllers, each served as H4 on a unix socket of its own, for rawble
/// processes (`--transport unix:PATH`): two `rawble` commands meet on one link layer played in
/// the test process, with no Python. When a process goes (its socket closes), its controller
/// is reset, so the other side sees the link end (as a supervision timeout would end it).
final class VirtualLinkSockets: @unchecked Sendable {
    let link: VirtualLink
    let paths: [String]
    var transports: [String] { paths.map { "unix:\($0)" } }
    private let listeners: [Int32]
    private let lock = NSLock()
    private var connections: Set<Int32> = []
    /// The socket of the host each controller serves now (-1: none), by controller.
    private var current: [Int32]
    private var stopped = false

    init(count: Int = 2, publicAddresses: Bool = true) throws {
        link = VirtualLink(count: count, publicAddresses: publicAddresses)
        let tag = UUID().uuidString.prefix(8)
        paths = (0..<count).map { "/tmp/rawble-link-\(tag)-\($0).sock" }  // sun_path holds 108 bytes
        var opened: [Int32] = []
        do {
            for path in paths { opened.append(try UnixSocketController.listeningSocket(at: path)) }
        } catch {
            for (fd, path) in zip(opened, paths) { close(fd); unlink(path) }
            throw error
        }
        listeners = opened
        current = Array(repeating: -1, count: count)
        for (listener, controller) in zip(listeners, link.controllers) {
            Thread.detachNewThread { [self] in serve(listener, controller) }
            // One reader of the controller's packets for its whole life (a stream has one
            // consumer): each goes to the host it serves then, if any.
            Task { [self] in
                do {
                    for try await packet in controller.transport.packets { forward(packet, from: controller.index) }
                } catch {}
            }
        }
    }

    /// Closes every socket (the serving threads then end) and removes the files.
    func stop() {
        lock.lock()
        stopped = true
        for fd in connections { shutdown(fd, Int32(SHUT_RDWR)) }
        lock.unlock()
        for (listener, path) in zip(listeners, paths) {
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
            unlink(path)
        }
    }

    /// Ends the connection of the host `controller` serves now, as an unplugged adapter's
    /// transport ends: the host reads its end, the controller is reset (its links end).
    func dropHost(of controller: Int) {
        lock.lock()
        defer { lock.unlock() }
        if current[controller] >= 0 { shutdown(current[controller], Int32(SHUT_RDWR)) }
    }

    /// Serves one host after the other on `controller` until ``stop()``.
    private func serve(_ listener: Int32, _ controller: VirtualController) {
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            lock.lock()
            if stopped {
                lock.unlock()
                close(fd)
                return
            }
            connections.insert(fd)
            current[controller.index] = fd
            lock.unlock()
            relay(fd, controller)
            lock.lock()
            connections.remove(fd)
            current[controller.index] = -1
            close(fd)
            lock.unlock()
        }
    }

    /// Carries one host's packets to the controller in order, and what the controller sends to
    /// the socket, until the host closes it; then resets the controller.
    private func relay(_ fd: Int32, _ controller: VirtualController) {
        let (toController, input) = AsyncStream.makeStream(of: H4Packet.self)
        let sending = Task {
            for await packet in toController { try? await controller.transport.send(packet) }
            // The host went: as far as the other side can tell, this controller's links end.
            try? await controller.transport.send(H4Packet(type: .command, bytes: HCICommand.reset.encoded[...]))
        }
        var framer = H4Framer()
        var chunk = [UInt8](repeating: 0, count: 4096)
        reading: while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            framer.append(chunk[..<count])
            for result in framer.drain() {
                guard case .success(let packet) = result else { break reading }
                input.yield(packet)
            }
        }
        input.finish()
        _ = sending  // ends by itself: it passes the last packet, then the reset
    }

    /// Writes `packet` to the host `controller` serves now (dropped when none).
    private func forward(_ packet: H4Packet, from controller: Int) {
        let bytes = [packet.type.rawValue] + packet.bytes
        lock.lock()
        defer { lock.unlock() }
        let fd = current[controller]
        guard fd >= 0 else { return }
        // send, not write: a host that has gone must not SIGPIPE the test process.
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
