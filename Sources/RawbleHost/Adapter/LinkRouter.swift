import Logging
import RawbleBearer
import RawbleHostCore
import RawbleWire

/// The host's links, owned by one ``Adapter`` and used only on its executor: the connections
/// by handle, ACL reassembly and flow control, and the L2CAP fixed channels. Received ACL data
/// is reassembled and routed here synchronously (ATT to the connection's inbox, LE signaling
/// and SMP answered); what needs the controller's help is returned to the adapter.
final class LinkRouter {
    /// What a received frame needs from the adapter (HCI commands, timers, the user): not the
    /// router's to do.
    enum Forwarded {
        /// A peer's accepted Connection Parameter Update Request: the adapter runs the LE
        /// Connection Update.
        case parameterUpdate(HCICommand.ConnectionParameters, ConnectionRecord)
        /// An SMP command for the link's pairing engine.
        case securityManager(ArraySlice<UInt8>, ConnectionRecord)
    }

    private var connections: [UInt16: ConnectionRecord] = [:]
    private var reassembler: ACLReassembler
    /// `nil` until start-up learned the controller's buffers.
    private var flow: ACLFlowControl?
    /// ATT PDUs waiting, in order, for room in their connection's full outgoing ACL queue.
    private var blockedSends: [UInt16: [BlockedSend]] = [:]
    /// Set once the host stopped: every later send throws it, nothing more is written.
    private var ending: HostError?
    private let outbound: AsyncStream<H4Packet>.Continuation
    private let logger: Logger

    /// ACL packets dropped because no connection has their handle.
    private(set) var droppedForUnknownHandle = 0

    /// `maximumFrameLength`: largest incoming L2CAP frame buffered (header included); `outbound`:
    /// where ACL packets to write go.
    init(maximumFrameLength: Int, outbound: AsyncStream<H4Packet>.Continuation, logger: Logger) {
        reassembler = ACLReassembler(maximumFrameLength: max(maximumFrameLength, 4 + 23))
        self.outbound = outbound
        self.logger = logger
    }

    /// The controller's ACL buffers are known: outgoing data may flow.
    func useFlowControl(_ flow: ACLFlowControl) {
        self.flow = flow
    }

    // MARK: Connections

    subscript(handle: UInt16) -> ConnectionRecord? { connections[handle] }

    /// The live record of `lifetime`'s link; `nil` once it ended (even if its handle was reused).
    func record(_ lifetime: LinkLifetime) -> ConnectionRecord? {
        guard let record = connections[lifetime.handle], record.lifetime === lifetime else { return nil }
        return record
    }

    /// The handles of every live connection.
    var handles: [UInt16] { Array(connections.keys) }

    /// A new link (its handle must be free).
    func add(_ record: ConnectionRecord) {
        connections[record.handle] = record
    }

    /// The link `handle` is gone: its blocked sends fail with `error`, its queued and partial
    /// data are dropped. Returns its record (for the caller to end), `nil` for an unknown handle.
    func remove(_ handle: UInt16, failingSendsWith error: BearerError) -> ConnectionRecord? {
        guard let record = connections.removeValue(forKey: handle) else { return nil }
        failBlockedSends(on: handle, with: error)
        _ = flow?.connectionClosed(handle)
        reassembler.connectionClosed(handle)
        return record
    }

    /// The host stopped with `error`: every link ends, every later send throws it.
    func stop(_ error: HostError, bearerError: BearerError) {
        guard ending == nil else { return }
        ending = error
        for (handle, record) in connections {
            failBlockedSends(on: handle, with: bearerError)
            record.end(bearerError: bearerError, hostError: error)
            _ = flow?.connectionClosed(handle)
        }
        connections.removeAll()
    }

    // MARK: Receiving

    /// One ACL packet from the controller: reassembled, and each whole frame routed.
    func receive(_ packet: ACLPacket) -> Forwarded? {
        guard let record = connections[packet.handle] else {
            droppedForUnknownHandle += 1
            logger.warning("dropped ACL data for unknown connection handle 0x\(String(packet.handle, radix: 16))")
            return nil
        }
        let output = reassembler.receive(packet)
        for error in output.errors { logger.warning("ACL reassembly: \(error)") }
        guard let frame = output.frame else { return nil }
        return route(frame, on: record)
    }

    /// One whole L2CAP frame from a connection: ATT to its bearer, signaling answered here, SMP
    /// refused here or forwarded to the link's pairing engine.
    private func route(_ frame: L2CAPFrame, on record: ConnectionRecord) -> Forwarded? {
        switch frame.channelID {
        case .att:
            if !record.deliverATT(frame.payload), record.droppedATTPDUs.nonzeroBitCount == 1 {
                logger.warning("\(record.droppedATTPDUs) ATT PDUs from \(record.peer) dropped: the reader is too far behind")
            }
        case .leSignaling:
            var request: Forwarded?
            for action in record.signaling.receive(frame.payload) {
                switch action {
                case .send(let command):
                    try? send(command.encoded, channel: .leSignaling, on: record.handle)
                case .updateConnectionParameters(let requested):
                    let parameters = HCICommand.ConnectionParameters(
                        intervalMin: requested.minimumInterval, intervalMax: requested.maximumInterval,
                        maxLatency: requested.peripheralLatency, supervisionTimeout: requested.timeoutMultiplier,
                        minCELength: 0, maxCELength: 0)
                    logger.debug("\(record.peer) asked for connection interval \(requested.minimumInterval)–\(requested.maximumInterval): updating")
                    request = .parameterUpdate(parameters, record)
                case .ignored(let why):
                    logger.debug("LE signaling from \(record.peer): \(why)")
                }
            }
            return request
        case .securityManager:
            if record.pairing != nil { return .securityManager(frame.payload, record) }
            for action in record.securityManager.receive(frame.payload) {
                switch action {
                case .send(let command):
                    logger.notice("\(record.peer) asked to pair: refused (this adapter's configuration does not pair)")
                    try? send(command.encoded, channel: .securityManager, on: record.handle)
                case .ignored(let why):
                    logger.debug("SMP from \(record.peer): \(why)")
                }
            }
        default:
            logger.notice("dropped an L2CAP frame on \(frame.channelID) from \(record.peer): no such channel here")
        }
        return nil
    }

    /// Number Of Completed Packets: credits come back, queued data goes.
    func completed(_ entries: [HCIEvent.CompletedPackets]) {
        guard let anomalies = flow?.completed(entries) else { return }
        for anomaly in anomalies {
            logger.warning("Number Of Completed Packets: \(anomaly)")
        }
        release()
    }

    // MARK: Sending

    /// Queues one L2CAP PDU on `channel` of connection `handle`, fragmented to the controller's
    /// ACL length, and writes what the ACL credits allow. A full queue throws ``HostError/busy(_:)``
    /// (for the host's own answers; ATT waits for room instead, see ``block(_:on:)``).
    func send(_ payload: [UInt8], channel: L2CAPChannelID, on handle: UInt16) throws(HostError) {
        let frame = L2CAPFrame(channelID: channel, payload: payload).encoded
        guard try enqueue(frame, on: handle) else {
            throw .busy("the outgoing ACL queue of connection 0x\(String(handle, radix: 16)) is full")
        }
    }

    /// Queues an encoded L2CAP frame and writes what the credits allow; `false` (nothing
    /// queued) when the connection's outgoing queue has no room for it.
    func enqueue(_ frame: [UInt8], on handle: UInt16) throws(HostError) -> Bool {
        if let ending { throw ending }
        guard connections[handle] != nil, flow != nil else { throw .disconnected(.unknownConnectionIdentifier) }
        do {
            try flow?.enqueue(l2capPDU: frame, connection: handle)
        } catch {
            if case .queueFull = error { return false }
            throw .unsupported("ACL data on connection handle 0x\(String(handle, radix: 16)) (\(error))")
        }
        release()
        return true
    }

    /// Writes what the ACL credits allow, then lets blocked sends into the room that made.
    private func release() {
        guard ending == nil, let packets = flow?.nextPacketsToSend() else { return }
        for packet in packets {
            outbound.yield(H4Packet(type: .acl, bytes: packet.encoded))
        }
        if !packets.isEmpty { admitBlockedSends() }
    }

    /// Whether ATT PDUs of connection `handle` wait for room (a new one must queue behind them).
    func hasBlockedSends(on handle: UInt16) -> Bool {
        blockedSends[handle] != nil
    }

    /// An ATT PDU waits for room in the full outgoing queue of connection `handle`.
    func block(_ send: BlockedSend, on handle: UInt16) {
        blockedSends[handle, default: []].append(send)
    }

    /// Moves blocked ATT PDUs, oldest first per connection, into the room their queues have now.
    func admitBlockedSends() {
        guard flow != nil else { return }
        var admitted = false
        for handle in Array(blockedSends.keys) {
            var waiting = blockedSends.removeValue(forKey: handle) ?? []
            while let next = waiting.first {
                do {
                    try flow?.enqueue(l2capPDU: next.frame, connection: handle)
                } catch {
                    break
                }
                waiting.removeFirst()
                admitted = true
                next.end(.success(()))
            }
            if !waiting.isEmpty { blockedSends[handle] = waiting }
        }
        if admitted, let credits = flow?.availableCredits, credits > 0 { release() }
    }

    /// Ends one blocked send early (timeout, cancellation), if it still waits.
    func unblockSend(_ id: UInt64, on handle: UInt16, with error: BearerError) {
        guard var waiting = blockedSends[handle], let index = waiting.firstIndex(where: { $0.id == id }) else { return }
        let send = waiting.remove(at: index)
        blockedSends[handle] = waiting.isEmpty ? nil : waiting
        send.end(.failure(error))
    }

    /// Fails every blocked send of a connection (its link or bearer ended).
    func failBlockedSends(on handle: UInt16, with error: BearerError) {
        guard let waiting = blockedSends.removeValue(forKey: handle) else { return }
        for send in waiting { send.end(.failure(error)) }
    }
}

/// An ATT PDU (as its encoded L2CAP frame) waiting for room in a full outgoing ACL queue.
struct BlockedSend {
    let id: UInt64
    let frame: [UInt8]
    let continuation: CheckedContinuation<Result<Void, BearerError>, Never>
    /// Fails the send when it waited too long; cancelled once the send ends otherwise.
    let timer: Task<Void, Never>

    func end(_ result: Result<Void, BearerError>) {
        timer.cancel()
        continuation.resume(returning: result)
    }
}
