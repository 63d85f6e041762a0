import CBluetooth
import RawbleWire

/// The kernel's per-socket filter for the HCI raw channel (`struct hci_filter`, set with
/// `setsockopt(SOL_HCI, HCI_FILTER)`): which packet types and which events reach this socket.
/// Built in Swift as plain bit masks (the same bits hci_lib.h's static inline helpers set), so
/// it can be checked byte for byte without a kernel.
public struct HCIFilter: Hashable, Sendable {
    /// Bit `n` lets packets of H4 type `n` through (the vendor type 0xFF maps to bit 0).
    public var typeMask: UInt32
    /// Bit `n` (of 64) lets event code `n` through; codes are taken modulo 64 as the kernel does.
    public var eventMask: (low: UInt32, high: UInt32)
    /// Only Command Complete/Status for this opcode when non-zero; 0 lets every opcode through.
    public var opcode: UInt16

    /// A filter letting `packetTypes` and, among events, exactly `events` through.
    public init(packetTypes: [H4PacketType], events: [UInt8], opcode: UInt16 = 0) {
        typeMask = 0
        eventMask = (0, 0)
        self.opcode = opcode
        for type in packetTypes { typeMask |= 1 << UInt32(type.rawValue & 31) }
        for event in events {
            let bit = event & 63
            if bit < 32 {
                eventMask.low |= 1 << UInt32(bit)
            } else {
                eventMask.high |= 1 << UInt32(bit - 32)
            }
        }
    }

    /// What a central on the raw channel needs and nothing more: the events Command
    /// Complete, Command Status, LE Meta (advertising reports, connection events) and
    /// Disconnection Complete; and the commands others send on the adapter (the kernel copies
    /// them to raw sockets, not the socket's own): the kernel stops scanning when it sees no
    /// use for it (after a connection of its own ends), and a scan must notice to go on.
    public static let central = HCIFilter(
        packetTypes: [.event, .command],
        events: [UInt8(EVT_CMD_COMPLETE), UInt8(EVT_CMD_STATUS), UInt8(EVT_LE_META_EVENT), UInt8(EVT_DISCONN_COMPLETE)])

    /// Whether packets of `type` pass.
    public func passes(_ type: H4PacketType) -> Bool { typeMask & (1 << UInt32(type.rawValue & 31)) != 0 }

    /// Whether event `code` passes (for an event packet).
    public func passes(event code: UInt8) -> Bool {
        let bit = code & 63
        return bit < 32 ? eventMask.low & (1 << UInt32(bit)) != 0 : eventMask.high & (1 << UInt32(bit - 32)) != 0
    }

    /// The C structure handed to the kernel.
    public var cValue: hci_filter {
        var filter = hci_filter()
        filter.type_mask = typeMask
        filter.event_mask = (eventMask.low, eventMask.high)
        filter.opcode = opcode
        return filter
    }

    public static func == (a: HCIFilter, b: HCIFilter) -> Bool {
        a.typeMask == b.typeMask && a.eventMask == b.eventMask && a.opcode == b.opcode
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(typeMask)
        hasher.combine(eventMask.low)
        hasher.combine(eventMask.high)
        hasher.combine(opcode)
    }
}
