// Key material redacted from HCI packets before they reach a capture or a trace, as Android's
// filtered snoop log does: the packet stays, with its headers and lengths, and only the secret
// bytes become zeros, so Wireshark, tshark, btmon and `rawble decode` still read every packet.
// Sans I/O: packets in, packets out.

/// Whether a capture or a trace keeps the keys that cross HCI.
public enum KeyMaterial: Hashable, Sendable {
    /// Secret bytes are zeros (the default): the file can be attached to a bug report.
    case redacted
    /// Every byte as it passed: the capture can decrypt the user's links. Asked for explicitly.
    case included
}

/// Zeroes the key material in HCI packets, one packet at a time, keeping every header and length.
///
/// What is redacted, and why — every key that never crosses the air in clear:
/// - commands: LE Enable Encryption and LE Long Term Key Request Reply (the LTK), LE Encrypt
///   (its key), LE Add Device To Resolving List (both IRKs), Link Key Request Reply and Write
///   Stored Link Key (link keys), PIN Code Request Reply (the PIN), User Passkey Request Reply
///   (the passkey), Remote OOB (Extended) Data Request Reply (the OOB values);
/// - events: Link Key Notification and Return Link Keys (link keys), LE Generate DHKey Complete
///   (the Diffie-Hellman key), and the Command Complete of LE Encrypt (its output: an STK or a
///   key derived with one), LE Rand (randomness a host may make keys from) and Read Local OOB
///   (Extended) Data;
/// - SMP's key distribution in ACL on the Security Manager channels (0x0006 LE, 0x0007 BR/EDR):
///   Encryption Information (LTK), Identity Information (IRK), Signing Information (CSRK).
///
/// Kept: what a passive sniffer reads on air anyway, because pairing sends it before the link
/// is encrypted — Pairing Request/Response, Confirm, Random, Public Key, DHKey Check, Pairing
/// Failed — and Central Identification's EDIV and Rand, which the LL_ENC_REQ carries in clear at
/// every encryption and which name an LTK without revealing it; the identity address. A capture
/// without keys still shows the whole pairing. (Legacy pairing's TK can be recovered from its
/// Confirm and Random values, over the air as well as here: that is LE legacy pairing's own
/// weakness, which only LE Secure Connections removes.) Vendor-specific commands are kept as
/// they are: their layout is the vendor's.
///
/// ACL fragments are followed per connection handle and direction, without keeping their bytes:
/// only the offset into the current L2CAP PDU and its first five bytes (length, channel, SMP
/// code), so an SMP PDU split across fragments at any byte is redacted like a whole one. The
/// state is bounded: one small entry per handle and direction (at most 2 × 4,096), dropped when
/// its PDU ends and at Disconnection Complete. A continuation fragment without a start seen (a
/// capture begun mid-PDU, a lost fragment) cannot be placed: its whole payload is zeroed.
public struct HCIKeyRedactor: Sendable {
    /// Where a PDU stands on one handle in one direction.
    struct Progress: Hashable, Sendable {
        /// Bytes of the PDU seen so far.
        var offset = 0
        /// The L2CAP length field's low byte, until the high one comes.
        var lengthLow: UInt8 = 0
        /// The whole PDU's size (header included), once its length field is seen.
        var total: Int?
        var channelLow: UInt8 = 0
        var channel: UInt16?
        /// The SMP command code, on an SMP channel.
        var code: UInt8?
    }

    struct Stream: Hashable, Sendable {
        var handle: UInt16
        var received: Bool
    }

    /// The PDUs in progress, by handle and direction.
    private(set) var streams: [Stream: Progress] = [:]

    public init() {}

    /// `packet` with its key material zeroed (the same packet when it holds none).
    /// `direction` tells the two ACL streams of a handle apart.
    public mutating func redact(_ packet: H4Packet, direction: BtsnoopRecord.Direction) -> H4Packet {
        switch packet.type {
        case .command:
            return Self.redactCommand(packet)
        case .event:
            forgetDisconnected(packet)
            return Self.redactEvent(packet)
        case .acl:
            return redactACL(packet, received: direction == .received)
        case .sco, .iso:
            return packet
        }
    }

    // MARK: Commands and events

    /// A secret field: its offset in the parameters and its size.
    typealias Field = (offset: Int, count: Int)

    /// The secret fields of a command's parameters, by opcode.
    static func secretFields(ofCommand opcode: UInt16, parameters: ArraySlice<UInt8>) -> [Field] {
        switch opcode {
        case 0x040B: [(6, 16)]  // Link Key Request Reply: BD_ADDR, Link_Key
        case 0x040D: [(7, 16)]  // PIN Code Request Reply: BD_ADDR, PIN_Code_Length, PIN_Code
        case 0x042E: [(6, 4)]  // User Passkey Request Reply: BD_ADDR, Numeric_Value
        case 0x0430: [(6, 32)]  // Remote OOB Data Request Reply: BD_ADDR, C, R
        case 0x0445: [(6, 64)]  // Remote OOB Extended Data Request Reply: BD_ADDR, C/R 192, C/R 256
        case 0x0C11: linkKeys(parameters)  // Write Stored Link Key: Num_Keys, then BD_ADDR + key each
        case 0x2017: [(0, 16)]  // LE Encrypt: Key, Plaintext_Data
        case 0x2019: [(12, 16)]  // LE Enable Encryption: handle, Random_Number, EDIV, LTK
        case 0x201A: [(2, 16)]  // LE Long Term Key Request Reply: handle, LTK
        case 0x2027: [(7, 32)]  // LE Add Device To Resolving List: type, address, peer IRK, local IRK
        default: []
        }
    }

    /// The secret fields of a Command Complete's return parameters, by the opcode it answers.
    static func secretFields(ofReturn opcode: UInt16) -> [Field] {
        switch opcode {
        case 0x0C57: [(1, 32)]  // Read Local OOB Data: status, C, R
        case 0x0C7D: [(1, 64)]  // Read Local OOB Extended Data: status, C/R 192, C/R 256
        case 0x2017: [(1, 16)]  // LE Encrypt: status, Encrypted_Data
        case 0x2018: [(1, 8)]  // LE Rand: status, Random_Number
        default: []
        }
    }

    /// The keys of a Write Stored Link Key or a Return Link Keys event: a count, then that many
    /// 6-byte addresses each followed by a 16-byte key (as far as the bytes go).
    static func linkKeys(_ parameters: ArraySlice<UInt8>) -> [Field] {
        guard let count = parameters.first else { return [] }
        return (0..<Int(count)).map { (1 + $0 * 22 + 6, 16) }.filter { $0.offset < parameters.count }
    }

    static func redactCommand(_ packet: H4Packet) -> H4Packet {
        let bytes = packet.bytes
        guard bytes.count > 3 else { return packet }
        let opcode = UInt16(bytes[bytes.startIndex]) | UInt16(bytes[bytes.startIndex + 1]) << 8
        let parameters = bytes.dropFirst(3)
        return zeroing(secretFields(ofCommand: opcode, parameters: parameters), in: packet, from: 3)
    }

    static func redactEvent(_ packet: H4Packet) -> H4Packet {
        let bytes = packet.bytes
        guard bytes.count > 2 else { return packet }
        let start = bytes.startIndex
        let parameters = bytes.dropFirst(2)
        switch bytes[start] {
        case 0x18:  // Link Key Notification: BD_ADDR, Link_Key, Key_Type
            return zeroing([(6, 16)], in: packet, from: 2)
        case 0x15:  // Return Link Keys
            return zeroing(linkKeys(parameters), in: packet, from: 2)
        case 0x0E where bytes.count >= 5:  // Command Complete: Num_HCI_Command_Packets, opcode, return parameters
            let opcode = UInt16(bytes[start + 3]) | UInt16(bytes[start + 4]) << 8
            return zeroing(secretFields(ofReturn: opcode), in: packet, from: 5)
        case 0x3E where bytes[start + 2] == 0x09:  // LE Meta: LE Generate DHKey Complete: status, DHKey
            return zeroing([(1, 32)], in: packet, from: 3)
        default:
            return packet
        }
    }

    /// `packet` with `fields` (offsets counted from byte `base` of its bytes) zeroed, as far as
    /// its bytes go: a short packet loses what it has of a field.
    static func zeroing(_ fields: [Field], in packet: H4Packet, from base: Int) -> H4Packet {
        var bytes = packet.bytes
        var changed = false
        for field in fields {
            let lower = bytes.startIndex + base + field.offset
            let upper = min(bytes.endIndex, lower + field.count)
            guard lower < upper else { continue }
            for index in lower..<upper where bytes[index] != 0 {
                bytes[index] = 0
                changed = true
            }
        }
        return changed ? H4Packet(type: packet.type, bytes: bytes) : packet
    }

    /// A Disconnection Complete ends the handle's PDUs in both directions.
    private mutating func forgetDisconnected(_ packet: H4Packet) {
        let bytes = packet.bytes
        guard !streams.isEmpty, bytes.count >= 5, bytes[bytes.startIndex] == 0x05 else { return }
        let handle = (UInt16(bytes[bytes.startIndex + 3]) | UInt16(bytes[bytes.startIndex + 4]) << 8) & 0x0FFF
        streams[Stream(handle: handle, received: true)] = nil
        streams[Stream(handle: handle, received: false)] = nil
    }

    // MARK: ACL

    /// The SMP codes whose 16 bytes after the code are a key: Encryption Information (LTK),
    /// Identity Information (IRK), Signing Information (CSRK).
    static func isKeyDistribution(_ code: UInt8) -> Bool {
        code == 0x06 || code == 0x08 || code == 0x0A
    }

    /// Bytes of an L2CAP PDU that can hold a key: its 4-byte header, the SMP code and 16 bytes.
    static let keyEnd = 4 + 1 + 16

    private mutating func redactACL(_ packet: H4Packet, received: Bool) -> H4Packet {
        let bytes = packet.bytes
        guard bytes.count > 4 else { return packet }
        let start = bytes.startIndex
        let handle = (UInt16(bytes[start]) | UInt16(bytes[start + 1]) << 8) & 0x0FFF
        let boundary = (bytes[start + 1] >> 4) & 0b11
        let stream = Stream(handle: handle, received: received)
        var progress: Progress
        if boundary == 0b01 {
            // A continuation: of the PDU in progress, if there is one.
            guard let current = streams[stream] else {
                return Self.zeroing([(0, bytes.count - 4)], in: packet, from: 4)
            }
            progress = current
        } else {
            progress = Progress()
        }
        var redacted = bytes
        var changed = false
        var index = start + 4
        while index < bytes.endIndex, progress.offset < Self.keyEnd {
            let byte = bytes[index]
            switch progress.offset {
            case 0: progress.lengthLow = byte
            case 1: progress.total = 4 + (Int(progress.lengthLow) | Int(byte) << 8)
            case 2: progress.channelLow = byte
            case 3: progress.channel = UInt16(progress.channelLow) | UInt16(byte) << 8
            case 4: progress.code = byte
            default:
                if progress.channel == 0x0006 || progress.channel == 0x0007, let code = progress.code,
                   Self.isKeyDistribution(code), byte != 0 {
                    redacted[index] = 0
                    changed = true
                }
            }
            progress.offset += 1
            index += 1
        }
        progress.offset += bytes.endIndex - index
        if let total = progress.total, progress.offset >= total {
            streams[stream] = nil
        } else {
            streams[stream] = progress
        }
        return changed ? H4Packet(type: .acl, bytes: redacted) : packet
    }
}
