import RawbleWire

/// The framing every packet on the kernel's management channel (`HCI_CHANNEL_CONTROL`) shares
/// (`doc/mgmt-api.txt`, "Packet Structures"): command opcode or event code (u16), controller
/// index (u16), parameter length (u16), then exactly that many parameter bytes; little-endian.
/// One read or write on the socket is one packet.
public enum ManagementPacket {
    /// Bytes before the parameters.
    public static let headerCount = 6
    /// The most parameter bytes a packet can carry: its length field is a u16.
    public static let maximumParameterCount = 0xFFFF
    /// The largest packet: a buffer this size holds any one read from the socket.
    public static let maximumCount = headerCount + maximumParameterCount

    /// Splits a whole packet into its code, index and parameters (a slice sharing offsets with
    /// `bytes`). The length field must count exactly the bytes after the header: fewer is
    /// truncation, more are trailing bytes, and the error's context names the field.
    static func split(_ bytes: ArraySlice<UInt8>, kind: String)
        throws(WireError) -> (code: UInt16, index: UInt16, parameters: ArraySlice<UInt8>)
    {
        // Read by index, with no reader and so no context string unless something is wrong:
        // this runs for every packet.
        let start = bytes.startIndex
        let available = bytes.count - headerCount
        guard available >= 0 else {
            let whole = bytes.count & ~1  // the header's complete u16 fields
            throw WireError(.truncated(needed: 2, available: bytes.count - whole), at: start + whole,
                            in: "Management \(kind) header")
        }
        func u16(_ offset: Int) -> UInt16 { UInt16(bytes[start + offset]) | UInt16(bytes[start + offset + 1]) << 8 }
        let length = Int(u16(4))
        if available != length {
            let context = "Management \(kind) parameters (length field \(length))"
            throw available < length
                ? WireError(.truncated(needed: length, available: available), at: start + headerCount, in: context)
                : WireError(.trailingBytes(count: available - length), at: start + headerCount + length, in: context)
        }
        return (u16(0), u16(2), bytes.dropFirst(headerCount))
    }

    /// A reader over a parameter block, which must fit in a packet (so every decoded value
    /// encodes back to the same parameters).
    static func reader(_ parameters: ArraySlice<UInt8>, context: String) throws(WireError) -> ByteReader {
        if parameters.count > maximumParameterCount {
            throw WireError(.invalidLength(parameters.count), at: parameters.startIndex, in: context)
        }
        return ByteReader(parameters, context: context)
    }

    /// The bytes `write` writes (a parameter block or return parameters).
    static func bytes(capacity: Int = 16, _ write: (inout ByteWriter) -> Void) -> [UInt8] {
        var writer = ByteWriter(capacity: capacity)
        write(&writer)
        return writer.bytes
    }

    /// `head` and the parameters in hex after a colon, or `head` alone without parameters.
    static func describe(_ head: String, parameters: [UInt8]) -> String {
        parameters.isEmpty ? head : "\(head): \(Hex.encode(parameters, uppercase: true, separator: " "))"
    }

    /// Writes a whole packet: `code`, `index`, the length of what `parameters` writes, and it.
    /// Every value's parameters fit in ``maximumParameterCount`` bytes by construction (their
    /// encoders cut what cannot); the length field is cut to 16 bits all the same.
    static func write(code: UInt16, index: UInt16, into writer: inout ByteWriter,
                      parameters: (inout ByteWriter) -> Void) {
        writer.write(code)
        writer.write(index)
        let lengthIndex = writer.bytes.count
        writer.write(UInt16(0))
        parameters(&writer)
        let length = writer.bytes.count - lengthIndex - 2
        writer.bytes[lengthIndex] = UInt8(truncatingIfNeeded: length)
        writer.bytes[lengthIndex + 1] = UInt8(truncatingIfNeeded: length >> 8)
    }
}

extension ByteReader {
    /// Throws unless exactly `count` bytes are left: for a count or length field that must
    /// account for every byte after it (fewer is truncation, more are trailing bytes).
    func expectRemaining(_ count: Int) throws(WireError) {
        if self.count < count { throw error(.truncated(needed: count, available: self.count)) }
        if self.count > count { throw error(.trailingBytes(count: self.count - count), at: offset + count) }
    }

    /// Reads a device address and its management address type (7 bytes), as most management
    /// commands and events carry them.
    mutating func readManagementAddress() throws(WireError) -> (BluetoothAddress, ManagementAddressType) {
        let address = try readAddress()
        return (address, ManagementAddressType(try readUInt8()))
    }
}

extension ByteWriter {
    /// Writes a device address and its management address type (7 bytes).
    mutating func writeManagementAddress(_ address: BluetoothAddress, _ type: ManagementAddressType) {
        write(address)
        write(type.rawValue)
    }
}
