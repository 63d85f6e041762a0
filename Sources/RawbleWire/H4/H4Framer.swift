/// Why the H4 framer skipped a byte of the stream.
public struct H4FramerError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        /// A byte where a packet type was expected is not one of `01`…`05`.
        case unknownPacketType(UInt8)
        /// A header announces a payload longer than the framer accepts (a lying length field).
        case payloadTooLong(type: H4PacketType, length: Int, maximum: Int)
        /// The stream ended inside a packet (from ``H4Framer/finish()``).
        case truncatedPacket(type: H4PacketType, needed: Int, available: Int)
    }

    public var kind: Kind
    /// Offset in the whole stream (bytes appended since the framer was created) of the type
    /// byte at fault.
    public var offset: Int

    public init(_ kind: Kind, at offset: Int) {
        self.kind = kind
        self.offset = offset
    }

    public var description: String {
        switch kind {
        case .unknownPacketType(let byte):
            "H4 stream: unknown packet type 0x\(hex(byte)) at byte \(offset)"
        case let .payloadTooLong(type, length, maximum):
            "H4 stream: \(type) packet announces \(length) payload bytes, more than \(maximum), at byte \(offset)"
        case let .truncatedPacket(type, needed, available):
            "H4 stream: ended inside a \(type) packet (\(available) of \(needed) bytes) at byte \(offset)"
        }
    }
}

/// Splits an H4 byte stream into packets, sans I/O: append bytes as they are read, then pull
/// packets until ``nextPacket()`` returns `nil`.
///
/// Any split of the stream across ``append(_:)`` calls yields the same packets and errors.
/// A bad type byte or an over-long header throws ``H4FramerError`` and skips that one byte,
/// so the caller logs it and keeps pulling; packets after it still come out. Memory stays
/// bounded by about two maximum-size packets plus the bytes of the current read, as long as
/// the caller drains the framer after each append.
///
/// ```swift
/// framer.append(chunk)
/// while true {
///     do { guard let packet = try framer.nextPacket() else { break }; handle(packet) }
///     catch { log(error) }
/// }
/// ```
public struct H4Framer: Sendable {
    /// The largest ACL payload accepted; a header announcing more is an error (default 65535,
    /// the format's limit; a host may pass its controller's ACL buffer size).
    public let maximumACLPayloadLength: Int

    @usableFromInline var buffer: [UInt8] = []
    /// Index in `buffer` of the first byte not consumed yet.
    @usableFromInline var readIndex = 0
    /// Stream offset of `buffer[readIndex]`: bytes consumed so far.
    public private(set) var streamOffset = 0

    public init(maximumACLPayloadLength: Int = H4PacketType.acl.maximumPayloadLength) {
        self.maximumACLPayloadLength = max(0, min(maximumACLPayloadLength, H4PacketType.acl.maximumPayloadLength))
    }

    /// Bytes appended and not yet returned as packets (part of a packet, or packets not pulled).
    @inlinable
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Adds bytes read from the transport.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Same as ``append(_:)``.
    @inlinable
    public mutating func feed(_ bytes: some Collection<UInt8>) {
        append(bytes)
    }

    /// The next complete packet, or `nil` when more bytes are needed.
    ///
    /// Throws (and skips the offending byte) for an unknown type byte or a length above the
    /// limit; call again to go on.
    public mutating func nextPacket() throws(H4FramerError) -> H4Packet? {
        let available = buffer.count - readIndex
        guard available >= 1 else { return nil }
        let typeByte = buffer[readIndex]
        guard let type = H4PacketType(rawValue: typeByte) else {
            let offset = streamOffset
            consume(1)
            throw H4FramerError(.unknownPacketType(typeByte), at: offset)
        }
        let headerLength = type.headerLength
        guard available >= 1 + headerLength else { return nil }
        let headerStart = readIndex + 1
        let length = type.payloadLength(header: buffer[headerStart..<(headerStart + headerLength)]) ?? 0
        let maximum = type == .acl ? maximumACLPayloadLength : type.maximumPayloadLength
        guard length <= maximum else {
            let offset = streamOffset
            consume(1)
            throw H4FramerError(.payloadTooLong(type: type, length: length, maximum: maximum), at: offset)
        }
        let total = 1 + headerLength + length
        guard available >= total else { return nil }
        let packet = H4Packet(type: type, bytes: Array(buffer[headerStart..<(readIndex + total)])[...])
        consume(total)
        return packet
    }

    /// Every complete packet buffered now, with the errors met on the way, in stream order.
    public mutating func drain() -> [Result<H4Packet, H4FramerError>] {
        var results: [Result<H4Packet, H4FramerError>] = []
        while true {
            do {
                guard let packet = try nextPacket() else { break }
                results.append(.success(packet))
            } catch {
                results.append(.failure(error))
            }
        }
        return results
    }

    /// Ends the stream: throws ``H4FramerError/Kind/truncatedPacket(type:needed:available:)``
    /// when bytes of an incomplete packet remain (they are dropped). Call it after
    /// ``nextPacket()`` returned `nil`.
    public mutating func finish() throws(H4FramerError) {
        let available = buffer.count - readIndex
        guard available > 0 else { return }
        let offset = streamOffset
        defer { consume(available) }
        guard let type = H4PacketType(rawValue: buffer[readIndex]) else {
            throw H4FramerError(.unknownPacketType(buffer[readIndex]), at: offset)
        }
        var needed = 1 + type.headerLength
        if available >= needed {
            let headerStart = readIndex + 1
            needed += type.payloadLength(header: buffer[headerStart..<(headerStart + type.headerLength)]) ?? 0
        }
        throw H4FramerError(.truncatedPacket(type: type, needed: needed, available: available), at: offset)
    }

    @usableFromInline
    mutating func consume(_ count: Int) {
        readIndex += count
        streamOffset += count
        if readIndex == buffer.count {
            // Everything consumed: reuse the storage unless a huge read left it oversized.
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 18)
            readIndex = 0
        }
    }

    /// Drops consumed bytes once they are at least as many as the unread ones, so each byte
    /// is moved at most a bounded number of times (amortised O(1), no O(n²) removeFirst).
    @usableFromInline
    mutating func compact() {
        guard readIndex > 0, readIndex >= buffer.count - readIndex else { return }
        buffer.removeSubrange(0..<readIndex)
        readIndex = 0
    }
}
