/// The byte queue under the streaming decoders (``H4Framer``, ``BtsnoopReader``): bytes are
/// appended at the end and consumed from the front, with the stream offset of the first unread
/// byte kept for error messages.
///
/// Consumed bytes are dropped only once they are at least as many as the unread ones, so each
/// byte is moved a bounded number of times (amortised O(1), no O(n²) `removeFirst`), and the
/// storage is reused once everything was consumed unless a huge read left it oversized.
@usableFromInline
struct StreamBuffer: Sendable {
    /// Storage; the unread bytes are `bytes[readIndex...]`.
    @usableFromInline var bytes: [UInt8] = []
    /// Index in `bytes` of the first byte not consumed yet.
    @usableFromInline var readIndex = 0
    /// Stream offset of `bytes[readIndex]`: bytes consumed so far.
    @usableFromInline var streamOffset = 0

    /// Above this capacity an emptied buffer gives its storage back.
    @usableFromInline static let retainedCapacity = 1 << 18

    @usableFromInline init() {}

    /// Bytes appended and not consumed yet.
    @inlinable var unreadCount: Int { bytes.count - readIndex }

    /// The unread byte `offset` bytes after the first one (the caller checks `offset < unreadCount`).
    @inlinable subscript(offset: Int) -> UInt8 { bytes[readIndex + offset] }

    /// The unread bytes from `start` up to `end` (offsets from the first unread byte; the caller
    /// checks `end <= unreadCount`).
    @inlinable func slice(from start: Int, to end: Int) -> ArraySlice<UInt8> {
        bytes[(readIndex + start)..<(readIndex + end)]
    }

    /// Every unread byte.
    @inlinable var unread: ArraySlice<UInt8> { bytes[readIndex...] }

    /// Adds bytes at the end, first dropping consumed bytes when that is cheap enough.
    @inlinable mutating func append(_ newBytes: some Collection<UInt8>) {
        if readIndex > 0, readIndex >= bytes.count - readIndex {
            bytes.removeSubrange(0..<readIndex)
            readIndex = 0
        }
        bytes.append(contentsOf: newBytes)
    }

    /// Marks `count` unread bytes consumed (the caller checks `count <= unreadCount`).
    @inlinable mutating func consume(_ count: Int) {
        readIndex += count
        streamOffset += count
        if readIndex == bytes.count {
            bytes.removeAll(keepingCapacity: bytes.capacity <= Self.retainedCapacity)
            readIndex = 0
        }
    }

    /// Drops every byte, consumed or not, keeping the stream offset.
    @inlinable mutating func discardAll() {
        bytes = []
        readIndex = 0
    }
}
