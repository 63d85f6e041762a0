/// Why a btsnoop byte stream cannot be read (further).
public struct BtsnoopError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        /// The file does not start with `btsnoop\0`.
        case badIdentification
        /// The header's version is not 1.
        case unsupportedVersion(UInt32)
        /// The stream ended inside the 16-byte file header.
        case truncatedHeader(available: Int)
        /// A record keeps more bytes than the packet had.
        case includedLengthExceedsOriginal(included: Int, original: Int)
        /// A record announces more bytes than any HCI packet has (a corrupt length).
        case includedLengthTooLarge(length: Int, maximum: Int)
        /// The stream ended inside a record (header or data).
        case truncatedRecord(needed: Int, available: Int)
    }

    public var kind: Kind
    /// Byte offset in the file of the header or record at fault.
    public var offset: Int
    /// Index (from 0) of the record at fault, `nil` for the file header.
    public var recordIndex: Int?

    public init(_ kind: Kind, at offset: Int, recordIndex: Int? = nil) {
        self.kind = kind
        self.offset = offset
        self.recordIndex = recordIndex
    }

    /// The same problem as a ``WireError`` kind.
    var wireKind: WireError.Kind {
        switch kind {
        case .badIdentification: .invalidValue("not a btsnoop file (identification is not \"btsnoop\\0\")")
        case .unsupportedVersion(let version): .invalidValue("unsupported btsnoop version \(version)")
        case .truncatedHeader(let available): .truncated(needed: BtsnoopHeader.byteCount, available: available)
        case let .includedLengthExceedsOriginal(included, original):
            .invalidValue("included length \(included) exceeds original length \(original)")
        case let .includedLengthTooLarge(length, maximum):
            .invalidValue("included length \(length) exceeds the limit \(maximum)")
        case let .truncatedRecord(needed, available): .truncated(needed: needed, available: available)
        }
    }

    public var description: String {
        let what: String
        switch kind {
        case .badIdentification: what = "not a btsnoop file (identification is not \"btsnoop\\0\")"
        case .unsupportedVersion(let version): what = "unsupported btsnoop version \(version)"
        case .truncatedHeader(let available): what = "file header truncated (\(available) of 16 bytes)"
        case let .includedLengthExceedsOriginal(included, original):
            what = "included length \(included) exceeds original length \(original)"
        case let .includedLengthTooLarge(length, maximum):
            what = "included length \(length) exceeds the limit \(maximum)"
        case let .truncatedRecord(needed, available):
            what = "record truncated (\(available) of \(needed) bytes)"
        }
        let record = recordIndex.map { "record \($0): " } ?? ""
        return "btsnoop: \(record)\(what) at byte \(offset)"
    }
}

/// Reads a btsnoop stream, sans I/O: append bytes as they are read (any split), pull records
/// until ``nextRecord()`` returns `nil`, and call ``finish()`` at end of file.
///
/// The file header is parsed first (``header``). Errors in the header or a record's lengths
/// are fatal: thrown once, then the reader returns `nil` (records before stay valid). A file
/// that ends inside a record is reported by ``finish()``.
public struct BtsnoopReader: Sendable {
    /// The largest included length accepted: an H4 ACL packet (1 + 4 + 65535) by default.
    public let maximumIncludedLength: Int
    /// The default bound: 64 KiB + 4, the largest H4 ACL packet with its type byte.
    public static let defaultMaximumIncludedLength = 65_540

    /// The file header, once its 16 bytes have been read.
    public private(set) var header: BtsnoopHeader?
    /// Records returned so far.
    public private(set) var recordCount = 0
    /// The fatal error met, if any; after it the reader yields nothing.
    public private(set) var failure: BtsnoopError?

    /// The bytes appended and not returned yet.
    var buffer = StreamBuffer()
    /// File offset of the first byte not consumed yet.
    public var streamOffset: Int { buffer.streamOffset }

    public init(maximumIncludedLength: Int = BtsnoopReader.defaultMaximumIncludedLength) {
        self.maximumIncludedLength = max(0, maximumIncludedLength)
    }

    /// Adds bytes read from the file.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        guard failure == nil else { return }
        buffer.append(bytes)
    }

    /// The next complete record, or `nil` when more bytes are needed (or after a failure).
    public mutating func nextRecord() throws(BtsnoopError) -> BtsnoopRecord? {
        guard failure == nil else { return nil }
        if header == nil {
            guard try readHeader() else { return nil }
        }
        let available = buffer.unreadCount
        guard available >= BtsnoopRecord.headerByteCount else { return nil }
        var reader = ByteReader(buffer.slice(from: 0, to: BtsnoopRecord.headerByteCount), context: "btsnoop record")
        guard let fields = try? RecordHeader.read(&reader) else { return nil }
        if let kind = fields.problem(maximumIncludedLength: maximumIncludedLength) {
            try fail(kind, recordIndex: recordCount)
        }
        let total = BtsnoopRecord.headerByteCount + fields.includedLength
        guard available >= total else { return nil }
        let record = fields.record(data: Array(buffer.slice(from: BtsnoopRecord.headerByteCount, to: total))[...])
        buffer.consume(total)
        recordCount += 1
        return record
    }

    /// Ends the stream: throws when it stopped inside the file header or a record. Records
    /// already returned are unaffected.
    public mutating func finish() throws(BtsnoopError) {
        guard failure == nil else { return }
        let available = buffer.unreadCount
        if header == nil {
            if available >= BtsnoopHeader.byteCount {
                _ = try readHeader()
            } else {
                try fail(.truncatedHeader(available: available), recordIndex: nil)
            }
        }
        let left = buffer.unreadCount
        guard left > 0 else { return }
        var needed = BtsnoopRecord.headerByteCount
        if left >= needed {
            var reader = ByteReader(buffer.slice(from: 0, to: needed), context: "btsnoop record")
            if let fields = try? RecordHeader.read(&reader) {
                needed += fields.includedLength
            }
        }
        try fail(.truncatedRecord(needed: needed, available: left), recordIndex: recordCount)
    }

    /// Parses the file header once 16 bytes are there; `false` when more are needed.
    mutating func readHeader() throws(BtsnoopError) -> Bool {
        guard buffer.unreadCount >= BtsnoopHeader.byteCount else { return false }
        let unread = buffer.unread
        do {
            header = try BtsnoopHeader.validatedPrefix(unread)
        } catch {
            try fail(error.kind, recordIndex: nil, offset: streamOffset + (error.offset - unread.startIndex))
        }
        buffer.consume(BtsnoopHeader.byteCount)
        return true
    }

    mutating func fail(_ kind: BtsnoopError.Kind, recordIndex: Int?, offset: Int? = nil) throws(BtsnoopError) -> Never {
        let error = BtsnoopError(kind, at: offset ?? streamOffset, recordIndex: recordIndex)
        failure = error
        buffer.discardAll()
        throw error
    }
}

/// Reads all records of a complete btsnoop file held in memory.
extension BtsnoopReader {
    /// The header, every record before the first error, and that error (if any).
    public static func read(
        _ bytes: some Collection<UInt8>, maximumIncludedLength: Int = BtsnoopReader.defaultMaximumIncludedLength
    )
        -> (header: BtsnoopHeader?, records: [BtsnoopRecord], error: BtsnoopError?)
    {
        var reader = BtsnoopReader(maximumIncludedLength: maximumIncludedLength)
        reader.append(bytes)
        var records: [BtsnoopRecord] = []
        do {
            while let record = try reader.nextRecord() { records.append(record) }
            try reader.finish()
        } catch {
            return (reader.header, records, error)
        }
        return (reader.header, records, nil)
    }
}
