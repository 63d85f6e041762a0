import RawbleWire

/// Outgoing ACL data flow control for an LE host, sans I/O (Core Vol 4 Part E 4.1.1).
///
/// Configured from LE Read Buffer Size: the controller's LE ACL data length (largest payload
/// of one ACL packet) and its number of LE ACL buffers (credits). ``enqueue(l2capPDU:connection:)-([UInt8],_)``
/// splits an L2CAP PDU (header included) into ACL fragments — the first with boundary flag `00`
/// (first, non-flushable), the rest `01` (continuation) — and queues them per connection.
/// ``nextPacketsToSend()`` hands out as many fragments as there are free buffers, taking one
/// packet from each connection in turn. Credits come back through
/// ``completed(_:)-([HCIEvent.CompletedPackets])`` (Number Of Completed Packets) and ``connectionClosed(_:)``
/// (Disconnection Complete: the controller flushes that connection's buffers).
///
/// Credits never grow beyond the configured total: a completion count larger than what is in
/// flight on a handle is clamped and reported as an ``Anomaly``, as is a completion for a
/// handle with nothing known. Each connection's queue is bounded.
public struct ACLFlowControl: Sendable {
    /// Why a configuration was refused.
    public enum ConfigurationError: Error, Hashable, Sendable {
        /// The ACL data length is 0 (LE Read Buffer Size answers 0 when the controller shares
        /// BR/EDR buffers: use Read Buffer Size instead).
        case zeroDataLength
        /// The number of ACL buffers is 0.
        case zeroPacketCount
        /// The per-connection queue limit is below 1.
        case invalidQueueLimit(Int)
    }

    /// Why a PDU was not queued. Nothing is queued when this is thrown.
    public enum EnqueueError: Error, Hashable, Sendable {
        /// The handle is outside `0x0000...0x0EFF`.
        case invalidHandle(UInt16)
        /// Queuing the PDU's `needed` fragments would exceed the connection's limit.
        case queueFull(handle: UInt16, queued: Int, needed: Int, limit: Int)
    }

    /// Something wrong in a Number Of Completed Packets event, reported instead of acted on.
    public enum Anomaly: Hashable, Sendable {
        /// The controller completed more packets than were in flight on the handle; only
        /// `inFlight` credits were returned.
        case excessCompletion(handle: UInt16, reported: UInt16, inFlight: Int)
        /// A completion for a handle with no connection state (never used or closed); ignored.
        case unknownHandle(handle: UInt16, count: UInt16)
    }

    /// Largest valid connection handle.
    public static let maximumHandle: UInt16 = 0x0EFF

    /// Largest payload of one ACL packet sent.
    public let dataLength: Int
    /// Number of controller buffers (total credits).
    public let totalCredits: Int
    /// Largest number of fragments queued (not yet sent) per connection.
    public let maximumQueuedPacketsPerConnection: Int
    /// Credits free right now.
    public private(set) var availableCredits: Int

    private struct Connection: Sendable {
        var queue: [ACLPacket] = []
        var head = 0
        var inFlight = 0
        var queuedCount: Int { queue.count - head }

        mutating func popFirst() -> ACLPacket? {
            guard head < queue.count else { return nil }
            let packet = queue[head]
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64 && head * 2 >= queue.count {
                queue.removeFirst(head)
                head = 0
            }
            return packet
        }
    }

    private var connections: [UInt16: Connection] = [:]
    /// Handles in round-robin order; the next packet comes from `order[cursor]` onwards.
    private var order: [UInt16] = []
    private var cursor = 0

    /// - Parameters:
    ///   - dataLength: LE ACL data packet length from LE Read Buffer Size.
    ///   - totalPackets: total number of LE ACL data packets from LE Read Buffer Size.
    ///   - maximumQueuedPacketsPerConnection: bound of each connection's queue, in fragments.
    public init(dataLength: UInt16, totalPackets: UInt16,
                maximumQueuedPacketsPerConnection: Int = 256) throws(ConfigurationError) {
        guard dataLength > 0 else { throw .zeroDataLength }
        guard totalPackets > 0 else { throw .zeroPacketCount }
        guard maximumQueuedPacketsPerConnection >= 1 else {
            throw .invalidQueueLimit(maximumQueuedPacketsPerConnection)
        }
        self.dataLength = Int(dataLength)
        self.totalCredits = Int(totalPackets)
        self.maximumQueuedPacketsPerConnection = maximumQueuedPacketsPerConnection
        self.availableCredits = Int(totalPackets)
    }

    /// Packets sent on `handle` that the controller has not yet completed.
    public func inFlight(on handle: UInt16) -> Int { connections[handle]?.inFlight ?? 0 }

    /// Fragments queued on `handle`, not yet handed out.
    public func queuedPackets(on handle: UInt16) -> Int { connections[handle]?.queuedCount ?? 0 }

    /// Whether any fragment waits to be sent (possibly for credits).
    public var hasQueuedPackets: Bool { connections.values.contains { $0.queuedCount > 0 } }

    /// Number of fragments a PDU of `length` bytes is split into (an empty PDU is one packet).
    public func fragmentCount(forPDULength length: Int) -> Int {
        length <= 0 ? 1 : (length - 1) / dataLength + 1
    }

    /// Splits an L2CAP PDU (basic header included) into ACL fragments and queues them on
    /// `connection`. All fragments are queued, or none.
    public mutating func enqueue(l2capPDU pdu: ArraySlice<UInt8>, connection handle: UInt16) throws(EnqueueError) {
        guard handle <= Self.maximumHandle else { throw .invalidHandle(handle) }
        let needed = fragmentCount(forPDULength: pdu.count)
        var state = connections[handle] ?? Connection()
        guard needed <= maximumQueuedPacketsPerConnection - state.queuedCount else {
            throw .queueFull(handle: handle, queued: state.queuedCount, needed: needed,
                             limit: maximumQueuedPacketsPerConnection)
        }
        var start = pdu.startIndex
        var boundary = ACLHeader.PacketBoundary.firstNonFlushable
        repeat {
            let end = pdu.endIndex - start > dataLength ? start + dataLength : pdu.endIndex
            state.queue.append(ACLPacket(handle: handle, packetBoundary: boundary, payload: pdu[start..<end]))
            boundary = .continuation
            start = end
        } while start < pdu.endIndex
        if connections[handle] == nil { order.append(handle) }
        connections[handle] = state
    }

    /// Splits an L2CAP PDU into ACL fragments and queues them on `connection`.
    public mutating func enqueue(l2capPDU pdu: [UInt8], connection handle: UInt16) throws(EnqueueError) {
        try enqueue(l2capPDU: pdu[...], connection: handle)
    }

    /// Takes as many queued fragments as credits allow, one connection after another
    /// (round robin), and counts them in flight. Send them in the order returned.
    public mutating func nextPacketsToSend() -> [ACLPacket] {
        var out: [ACLPacket] = []
        var idleInARow = 0
        while availableCredits > 0, !order.isEmpty, idleInARow < order.count {
            if cursor >= order.count { cursor = 0 }
            let handle = order[cursor]
            cursor += 1
            guard var state = connections[handle], let packet = state.popFirst() else {
                idleInARow += 1
                continue
            }
            idleInARow = 0
            state.inFlight += 1
            connections[handle] = state
            availableCredits -= 1
            out.append(packet)
        }
        return out
    }

    /// Returns credits from a Number Of Completed Packets event. Returns the entries that
    /// were clamped or ignored; credits never exceed ``totalCredits``.
    @discardableResult
    public mutating func completed(_ entries: [HCIEvent.CompletedPackets]) -> [Anomaly] {
        var anomalies: [Anomaly] = []
        for entry in entries {
            guard var state = connections[entry.connectionHandle] else {
                anomalies.append(.unknownHandle(handle: entry.connectionHandle, count: entry.count))
                continue
            }
            let reported = Int(entry.count)
            let returned = min(reported, state.inFlight)
            if reported > state.inFlight {
                anomalies.append(.excessCompletion(handle: entry.connectionHandle, reported: entry.count,
                                                   inFlight: state.inFlight))
            }
            state.inFlight -= returned
            connections[entry.connectionHandle] = state
            availableCredits = min(totalCredits, availableCredits + returned)
        }
        return anomalies
    }

    /// Returns credits from a Number Of Completed Packets event given as (handle, count) pairs.
    @discardableResult
    public mutating func completed(_ entries: [(handle: UInt16, count: UInt16)]) -> [Anomaly] {
        completed(entries.map { HCIEvent.CompletedPackets(connectionHandle: $0.handle, count: $0.count) })
    }

    /// Forgets a closed connection: drops its queue and takes back its in-flight credits (the
    /// controller flushes them on disconnection). Returns the number of credits taken back.
    @discardableResult
    public mutating func connectionClosed(_ handle: UInt16) -> Int {
        guard let state = connections.removeValue(forKey: handle) else { return 0 }
        if let index = order.firstIndex(of: handle) {
            order.remove(at: index)
            if index < cursor { cursor -= 1 }
        }
        availableCredits = min(totalCredits, availableCredits + state.inFlight)
        return state.inFlight
    }
}
