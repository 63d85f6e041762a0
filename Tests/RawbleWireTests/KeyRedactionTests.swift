import Testing

@testable import RawbleWire

/// A packet from its H4 bytes in hex (type byte first).
private func packet(_ text: String) throws -> H4Packet {
    try H4Packet.decode(Hex.decode(text)[...])
}

/// The packet redacted by a fresh redactor, as H4 hex.
private func redacted(_ text: String, direction: BtsnoopRecord.Direction = .sent) throws -> String {
    var redactor = HCIKeyRedactor()
    return Hex.encode(redactor.redact(try packet(text), direction: direction).encoded, uppercase: true, separator: " ")
}

private let ltk = "A1 A2 A3 A4 A5 A6 A7 A8 A9 AA AB AC AD AE AF B0"
private let zeros16 = "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"

/// An SMP PDU of `code` and 16 bytes on the LE Security Manager channel, as one ACL packet on
/// handle 0x0040, first fragment (automatically flushable, as controllers send).
private func smpACL(_ code: String, _ value: String) -> String {
    "02 40 20 15 00 11 00 06 00 \(code) \(value)"
}

@Suite struct KeyRedactionTests {
    @Test("LE Long Term Key Request Reply: the LTK is zeros, opcode, length and handle kept")
    func ltkRequestReply() throws {
        #expect(try redacted("01 1A 20 12 40 00 \(ltk)") == "01 1A 20 12 40 00 \(zeros16)")
    }

    @Test("LE Enable Encryption: the LTK is zeros; Rand and EDIV, which go on air in clear, kept")
    func enableEncryption() throws {
        let rand = "11 22 33 44 55 66 77 88"
        #expect(try redacted("01 19 20 1C 40 00 \(rand) 34 12 \(ltk)") == "01 19 20 1C 40 00 \(rand) 34 12 \(zeros16)")
    }

    @Test("BR/EDR: Link Key Request Reply and Link Key Notification lose the key, keep the address and key type")
    func linkKeys() throws {
        let address = "06 05 04 03 02 01"
        #expect(try redacted("01 0B 04 16 \(address) \(ltk)") == "01 0B 04 16 \(address) \(zeros16)")
        #expect(try redacted("04 18 17 \(address) \(ltk) 05", direction: .received) == "04 18 17 \(address) \(zeros16) 05")
        // Write Stored Link Key with two keys, Return Link Keys with one.
        #expect(try redacted("01 11 0C 2D 02 \(address) \(ltk) \(address) \(ltk)")
            == "01 11 0C 2D 02 \(address) \(zeros16) \(address) \(zeros16)")
        #expect(try redacted("04 15 17 01 \(address) \(ltk)", direction: .received) == "04 15 17 01 \(address) \(zeros16)")
    }

    @Test("LE Encrypt's key and its result, LE Rand's number, LE Generate DHKey Complete's key are zeros")
    func controllerCryptography() throws {
        let plaintext = "01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F 10"
        #expect(try redacted("01 17 20 20 \(ltk) \(plaintext)") == "01 17 20 20 \(zeros16) \(plaintext)")
        #expect(try redacted("04 0E 14 01 17 20 00 \(ltk)", direction: .received) == "04 0E 14 01 17 20 00 \(zeros16)")
        #expect(try redacted("04 0E 0C 01 18 20 00 11 22 33 44 55 66 77 88", direction: .received)
            == "04 0E 0C 01 18 20 00 00 00 00 00 00 00 00 00")
        #expect(try redacted("04 3E 22 09 00 \(ltk) \(ltk)", direction: .received) == "04 3E 22 09 00 \(zeros16) \(zeros16)")
        // Another command's Command Complete is left as it is.
        #expect(try redacted("04 0E 0C 01 09 10 00 11 22 33 44 55 66 77 88", direction: .received)
            == "04 0E 0C 01 09 10 00 11 22 33 44 55 66 77 88")
    }

    @Test("LE Add Device To Resolving List: both IRKs are zeros, the identity address kept")
    func resolvingList() throws {
        #expect(try redacted("01 27 20 27 01 C6 C5 C4 C3 C2 C1 \(ltk) \(ltk)")
            == "01 27 20 27 01 C6 C5 C4 C3 C2 C1 \(zeros16) \(zeros16)")
    }

    @Test("SMP key distribution on channel 0x0006: Encryption, Identity and Signing Information are zeros")
    func smpKeyDistribution() throws {
        for code in ["06", "08", "0A"] {
            #expect(try redacted(smpACL(code, ltk), direction: .received) == smpACL(code, zeros16), "code \(code)")
            #expect(try redacted(smpACL(code, ltk), direction: .sent) == smpACL(code, zeros16), "code \(code)")
        }
        // BR/EDR's Security Manager channel, 0x0007, too.
        #expect(try redacted("02 01 20 15 00 11 00 07 00 08 \(ltk)") == "02 01 20 15 00 11 00 07 00 08 \(zeros16)")
    }

    @Test("kept: what pairing sends on air in clear (Confirm, Random, Public Key, DHKey Check), Central Identification, the identity address, and other channels")
    func whatIsKept() throws {
        let kept = [
            smpACL("03", ltk),  // Pairing Confirm
            smpACL("04", ltk),  // Pairing Random
            smpACL("0D", ltk),  // Pairing DHKey Check
            "02 40 20 0F 00 0B 00 06 00 07 34 12 11 22 33 44 55 66 77 88",  // Central Identification
            "02 40 20 0C 00 08 00 06 00 09 01 C6 C5 C4 C3 C2 C1",  // Identity Address Information
            "02 40 20 15 00 11 00 04 00 06 \(ltk)",  // ATT on 0x0004 whose first byte looks like code 0x06
            "02 40 20 45 00 41 00 06 00 0C " + Array(repeating: "5A", count: 64).joined(separator: " "),  // Public Key
        ]
        for text in kept {
            #expect(try redacted(text, direction: .received) == text)
        }
    }

    @Test("an SMP PDU split across ACL fragments at any byte is redacted like a whole one; each handle and direction followed apart")
    func fragments() throws {
        let pdu = try Hex.decode("11 00 06 00 06 \(ltk)")
        let whole = try Hex.decode("11 00 06 00 06 \(zeros16)")
        for split in 1..<pdu.count {
            var redactor = HCIKeyRedactor()
            let first = H4Packet(type: .acl, bytes: [0x40, 0x20, UInt8(split), 0x00] + pdu[..<split])
            let rest = H4Packet(type: .acl, bytes: [0x40, 0x10, UInt8(pdu.count - split), 0x00] + pdu[split...])
            // Another handle's PDU, and the other direction's on the same handle, in between.
            let other = try packet(smpACL("04", ltk))
            let otherHandle = H4Packet(type: .acl, bytes: [0x41, 0x20, 0x05, 0x00, 0x01, 0x00, 0x04, 0x00, 0x0A])
            let a = redactor.redact(first, direction: .received)
            #expect(redactor.redact(other, direction: .sent) == other)
            #expect(redactor.redact(otherHandle, direction: .received) == otherHandle)
            let b = redactor.redact(rest, direction: .received)
            #expect(Array(a.payload + b.payload) == whole, "split at \(split)")
            #expect(Array(a.bytes.prefix(4)) == Array(first.bytes.prefix(4)) && Array(b.bytes.prefix(4)) == Array(rest.bytes.prefix(4)))
            #expect(redactor.streams.isEmpty, "the PDU ended: nothing followed")
        }
    }

    @Test("a continuation with no start seen cannot be placed: its payload is zeros; after a Disconnection Complete the handle starts over")
    func continuationWithoutStart() throws {
        var redactor = HCIKeyRedactor()
        let orphan = H4Packet(type: .acl, bytes: [0x40, 0x10, 0x04, 0x00, 0xA1, 0xA2, 0xA3, 0xA4])
        #expect(redactor.redact(orphan, direction: .received).bytes == [0x40, 0x10, 0x04, 0x00, 0, 0, 0, 0])
        // A PDU begun (3 of 21 bytes), then the link ends: its continuation is an orphan.
        let start = H4Packet(type: .acl, bytes: [0x40, 0x20, 0x03, 0x00, 0x11, 0x00, 0x04])
        #expect(redactor.redact(start, direction: .received) == start)
        #expect(redactor.streams.count == 1)
        let disconnected = try packet("04 05 04 00 40 00 13")
        #expect(redactor.redact(disconnected, direction: .received) == disconnected)
        #expect(redactor.streams.isEmpty)
        #expect(redactor.redact(orphan, direction: .received).bytes == [0x40, 0x10, 0x04, 0x00, 0, 0, 0, 0])
    }

    @Test("the state stays bounded: one entry per handle and direction, whatever the stream")
    func bounded() {
        var redactor = HCIKeyRedactor()
        for round in 0..<3 {
            for handle in UInt16(0)...0x0FFF {
                let begun = H4Packet(type: .acl, bytes: [UInt8(handle & 0xFF), UInt8(handle >> 8) | 0x20, 0x02, 0x00, 0xFF, UInt8(round)])
                _ = redactor.redact(begun, direction: .received)
                _ = redactor.redact(begun, direction: .sent)
            }
        }
        #expect(redactor.streams.count == 2 * 4096)
    }

    @Test("short and malformed packets: what is there of a key is zeros, never a trap, lengths kept")
    func shortPackets() throws {
        var redactor = HCIKeyRedactor()
        // An LTK reply cut after 4 key bytes (its length field says 18).
        let cut = H4Packet(type: .command, bytes: [0x1A, 0x20, 0x12, 0x40, 0x00, 0xA1, 0xA2, 0xA3, 0xA4])
        #expect(redactor.redact(cut, direction: .sent).bytes == [0x1A, 0x20, 0x12, 0x40, 0x00, 0, 0, 0, 0])
        for bytes: [UInt8] in [[], [0x1A], [0x0E, 0x01, 0x01], [0x3E, 0x01], [0x40, 0x20, 0x00]] {
            for type in H4PacketType.allCases {
                let odd = H4Packet(type: type, bytes: bytes)
                #expect(redactor.redact(odd, direction: .received).bytes.count == bytes.count)
            }
        }
    }

    @Test("a redacted packet still decodes as the same command, with its fields")
    func stillDecodes() throws {
        var redactor = HCIKeyRedactor()
        let reply = try packet("01 1A 20 12 40 00 \(ltk)")
        let command = try HCICommand.decode(redactor.redact(reply, direction: .sent).bytes)
        #expect(command == .leLongTermKeyRequestReply(handle: 0x0040, longTermKey: 0))
    }
}
