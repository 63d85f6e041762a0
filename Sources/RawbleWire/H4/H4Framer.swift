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

    /// The bytes appended and not returned yet.
    @usableFromInline var buffer = StreamBuffer()
    /// Stream offset of the first byte not consumed yet: bytes consumed so far.
    public var streamOffset: Int { buffer.streamOffset }

    public init(maximumACLPayloadLength: Int = H4PacketType.acl.maximumPayloadLength) {
        self.maximumACLPayloadLength = max(0, min(maximumACLPayloadLength, H4PacketType.acl.maximumPayloadLength))
    }

    /// Bytes appended and not yet returned as packets (part of a packet, or packets not pulled).
    @inlinable
    public var bufferedByteCount: Int { buffer.unreadCount }

    /// Adds bytes read from the transport.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        buffer.append(bytes)
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
        let available = buffer.unreadCount
        guard available >= 1 else { return nil }
        let typeByte = buffer[0]
        guard let type = H4PacketType(rawValue: typeByte) else {
            let offset = streamOffset
            buffer.consume(1)
            throw H4FramerError(.unknownPacketType(typeByte), at: offset)
        }
        let headerLength = type.headerLength
        guard available >= 1 + headerLength else { return nil }
        let length = type.payloadLength(header: buffer.slice(from: 1, to: 1 + headerLength)) ?? 0
        let maximum = type == .acl ? maximumACLPayloadLength : type.maximumPayloadLength
        guard length <= maximum else {
            let offset = streamOffset
            buffer.consume(1)
            throw H4FramerError(.payloadTooLong(type: type, length: length, maximum: maximum), at: offset)
        }
        let total = 1 + headerLength + length
        guard available >= total else { return nil }
        let packet = H4Packet(type: type, bytes: Array(buffer.slice(from: 1, to: total))[...])
        buffer.consume(total)
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
        let available = buffer.unreadCount
        guard available > 0 else { return }
        let offset = streamOffset
        defer { buffer.consume(available) }
        guard let type = H4PacketType(rawValue: buffer[0]) else {
            throw H4FramerError(.unknownPacketType(buffer[0]), at: offset)
        }
        var needed = 1 + type.headerLength
        if available >= needed {
            needed += type.payloadLength(header: buffer.slice(from: 1, to: 1 + type.headerLength)) ?? 0
        }
        throw H4FramerError(.truncatedPacket(type: type, needed: needed, available: available), at: offset)
    }
}
