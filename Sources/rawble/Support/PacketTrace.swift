import RawbleTransport
import RawbleWire
import Synchronization

/// `--trace`: every HCI packet of the session, as it passes, decoded as one line on stderr by
/// the decoders `decode btsnoop` uses (ACL on the ATT channel shows the ATT PDU):
///
///     0.004 > command Reset
///     0.006 < event Command Complete: Reset Success (0x00)
///     0.142 > acl handle 1 ATT: Read Request 0x0010
///
/// The time is seconds since the session opened (monotonic, to the millisecond), then `>` sent
/// to the controller or `<` received from it. A packet that does not decode is a `malformed`
/// line with its H4 bytes in hex (what `rawble decode hci` takes). Lines go above the status
/// line, one write each; decoding and writing happen under one lock, so lines never interleave
/// and times never go backwards. Keys show as zeros unless `--include-keys` (``HCIKeyRedactor``):
/// a trace is pasted into bug reports as readily as a capture is attached.
final class PacketTrace: HCIPacketTap {
    /// The most bytes of a malformed packet shown in hex: a line stays a line.
    static let malformedHexLimit = 64

    private let start = ContinuousClock.now
    /// What earlier packets tell about later ones (which handle a Read Response answers); its
    /// lock also keeps lines whole and in time order.
    private let session = Mutex((description: PacketDescription.Session(), redactor: HCIKeyRedactor()))
    private let keys: KeyMaterial
    private let write: @Sendable (String) -> Void

    /// A trace whose lines go to `write` (by default stderr, above the status line when one
    /// shows), with `keys` redacted or not.
    init(keys: KeyMaterial = .redacted, write: @escaping @Sendable (String) -> Void = { StatusLine.printErrorAboveActive($0) }) {
        self.keys = keys
        self.write = write
    }

    func observe(_ packet: H4Packet, direction: BtsnoopRecord.Direction) {
        session.withLock { session in
            let shown = keys == .included ? packet : session.redactor.redact(packet, direction: direction)
            write(Self.line(shown, direction: direction, elapsed: ContinuousClock.now - start, session: &session.description))
        }
    }

    /// The trace line for `packet`: time, direction, then the summary `decode btsnoop` prints,
    /// or `malformed …` with the error and the packet in hex. Never traps, whatever the bytes.
    static func line(_ packet: H4Packet, direction: BtsnoopRecord.Direction, elapsed: Duration,
                     session: inout PacketDescription.Session) -> String {
        let summary: String
        let bytes = [packet.type.rawValue] + packet.bytes
        do {
            // The framing first (a header whose length matches the bytes), as `decode hci` checks
            // it: transports frame what they receive, but a tap must not count on it.
            _ = try H4Packet.decode(bytes[...])
            summary = PacketDescription.summary(try PacketDescription.json(packet, session: &session))
        } catch {
            let shown = Hex.encode(bytes.prefix(malformedHexLimit))
            let more = bytes.count > malformedHexLimit ? "… (\(bytes.count) bytes)" : ""
            summary = "malformed \(PacketDescription.typeName(packet.type)) (\(error)): \(shown)\(more)"
        }
        return "\(seconds(elapsed)) \(direction == .sent ? ">" : "<") \(summary)"
    }

    /// `elapsed` as seconds with three decimals, right-aligned in seven columns (`   0.004`
    /// up to `999.999`, wider after that).
    static func seconds(_ elapsed: Duration) -> String {
        let (whole, attoseconds) = elapsed.components
        let milliseconds = max(0, whole) * 1000 + max(0, attoseconds) / 1_000_000_000_000_000
        let fraction = String(milliseconds % 1000)
        let text = "\(milliseconds / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
        return String(repeating: " ", count: max(0, 7 - text.count)) + text
    }
}
