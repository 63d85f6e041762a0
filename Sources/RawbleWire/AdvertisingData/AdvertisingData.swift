/// A decoded Advertising Data or Scan Response payload (Core Vol 3 Part C 11): an ordered
/// sequence of ``ADStructure`` values, up to 31 bytes for legacy advertising and 1650 for
/// extended advertising.
///
/// Decoding is tolerant and never throws:
/// - A structure whose length runs past the end, or a zero length followed by non-zero bytes,
///   breaks the framing: decoding stops there, keeps every structure before it and sets
///   ``error`` (offset = that structure's length byte).
/// - A zero length followed only by zero bytes is the specification's padding (the
///   "non-significant part", all-zero): the end of the data, not an error.
/// - A known AD type whose data has the wrong size (an odd-length 16-bit UUID list, a 2-byte
///   Tx Power Level) is kept as ``ADStructure/other(type:data:)`` with its bytes, ``error``
///   records the first such problem, and decoding goes on with the next structure, since the
///   framing is intact.
///
/// It stores a slice of the input and decodes structures when they are asked for: the
/// decoding pass only checks framing and sizes, makes no copies and no strings, which keeps
/// per-report decoding in a scanner cheap.
public struct AdvertisingData: Hashable, Sendable, Sequence, CustomStringConvertible {
    /// The bytes of the valid structures: padding and anything after a framing error dropped.
    public let bytes: ArraySlice<UInt8>
    /// The first problem found, or `nil` when every byte was understood.
    public let error: WireError?

    /// Most bytes of legacy advertising or scan response data.
    public static let maximumLegacyCount = 31
    /// Most bytes of extended advertising data (Core Vol 4 Part E 7.8.54).
    public static let maximumExtendedCount = 1650

    /// Decodes `bytes`; offsets in ``error`` are indices of the slice's base buffer.
    @inlinable
    public init(decoding bytes: ArraySlice<UInt8>) {
        var index = bytes.startIndex
        let end = bytes.endIndex
        var firstError: WireError? = nil
        var validEnd = index
        while index < end {
            let length = Int(bytes[index])
            if length == 0 {
                // Padding: everything left must be zero, else the framing is broken.
                var rest = index + 1
                while rest < end, bytes[rest] == 0 { rest += 1 }
                if rest < end, firstError == nil {
                    firstError = WireError(.invalidValue("zero-length AD structure followed by non-zero bytes"),
                                           at: index, in: "Advertising Data")
                }
                break
            }
            let available = end - index - 1
            guard length <= available else {
                firstError = firstError ?? WireError(.truncated(needed: length, available: available),
                                       at: index, in: "Advertising Data")
                break
            }
            let type = bytes[index + 1]
            if firstError == nil, !ADStructure.dataCountIsValid(length - 1, for: type) {
                firstError = ADStructure.wrongSize(ADType(type), count: length - 1, at: index)
            }
            index += 1 + length
            validEnd = index
        }
        // Keep the caller's slice as is when everything was used: no new slice to retain.
        self.bytes = validEnd == end ? bytes : bytes[bytes.startIndex..<validEnd]
        self.error = firstError
    }

    @inlinable
    public init(decoding bytes: [UInt8]) {
        self.init(decoding: bytes[...])
    }

    /// Builds advertising data from structures, in order.
    public init(_ structures: some Sequence<ADStructure>) {
        var writer = ByteWriter(capacity: 31)
        for s in structures { s.encode(into: &writer) }
        self.init(decoding: writer.bytes[...])
    }

    /// The common advertisement: flags, then service UUIDs (one complete list per width, each
    /// UUID in its shortest form), the local name, Tx power and manufacturer data when given.
    public init(flags: ADFlags? = .generalDiscoverableLEOnly, serviceUUIDs: [BluetoothUUID] = [],
                localName: String? = nil, txPowerLevel: Int8? = nil,
                manufacturerData: ManufacturerData? = nil) {
        var structures: [ADStructure] = []
        if let flags { structures.append(.flags(flags)) }
        for width in [2, 4, 16] {
            let ofWidth = serviceUUIDs.filter { $0.shortestWidth == width }
            if !ofWidth.isEmpty, let list = UUIDList(ofWidth, width: width) {
                structures.append(.serviceUUIDs(list, isComplete: true))
            }
        }
        if let localName { structures.append(.localName(LocalName(localName))) }
        if let txPowerLevel { structures.append(.txPowerLevel(txPowerLevel)) }
        if let manufacturerData { structures.append(.manufacturerData(manufacturerData)) }
        self.init(structures)
    }

    /// Whether the encoded form fits legacy advertising (31 bytes).
    public var fitsLegacyAdvertising: Bool { bytes.count <= Self.maximumLegacyCount }

    /// The structures, decoded now (the sequence itself decodes one at a time).
    public var structures: [ADStructure] { Array(self) }

    public func makeIterator() -> Iterator { Iterator(bytes: bytes) }

    /// Walks the validated bytes, decoding one structure per step.
    public struct Iterator: IteratorProtocol {
        @usableFromInline let bytes: ArraySlice<UInt8>
        @usableFromInline var index: Int

        @inlinable init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            self.index = bytes.startIndex
        }

        @inlinable
        public mutating func next() -> ADStructure? {
            // The bytes were validated when decoded: every length byte is non-zero and in range.
            guard index < bytes.endIndex else { return nil }
            let start = index
            let end = start + 1 + Int(bytes[start])
            index = end
            let type = ADType(bytes[start + 1])
            let data = bytes[(start + 2)..<end]
            guard ADStructure.dataCountIsValid(data.count, for: type.rawValue) else {
                return .other(type: type, data: data)
            }
            return ADStructure(validType: type, data: data)
        }
    }

    /// The data of the first structure of `type` whose size is valid for the type (so the typed
    /// accessors and the typed structures agree). Scans indices only: cheap for the hot path.
    @inlinable
    func firstValidData(_ type: UInt8) -> ArraySlice<UInt8>? {
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let end = i + 1 + Int(bytes[i])
            if bytes[i + 1] == type, ADStructure.dataCountIsValid(end - i - 2, for: type) {
                return bytes[(i + 2)..<end]
            }
            i = end
        }
        return nil
    }

    /// The raw data of the first structure of `type`, whatever its size.
    public func data(for type: ADType) -> ArraySlice<UInt8>? {
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let end = i + 1 + Int(bytes[i])
            if bytes[i + 1] == type.rawValue { return bytes[(i + 2)..<end] }
            i = end
        }
        return nil
    }

    // MARK: Convenience accessors

    /// The Flags value (from its first byte), when present.
    public var flags: ADFlags? {
        data(for: .flags)?.first.map(ADFlags.init(rawValue:))
    }

    /// The local name, the complete one preferred over the shortened one.
    public var name: LocalName? {
        if let complete = firstValidData(0x09) { return LocalName(bytes: complete, isComplete: true) }
        return firstValidData(0x08).map { LocalName(bytes: $0, isComplete: false) }
    }

    /// The local name as text (complete preferred, lossy UTF-8).
    public var localName: String? { name?.string }

    /// Every advertised service UUID, each once, in the order first advertised. A device
    /// whose scan response repeats its advertisement's list (many do), merged into one view,
    /// lists each service once.
    public var serviceUUIDs: [BluetoothUUID] {
        distinct { if case let .serviceUUIDs(list, _) = $0 { Array(list) } else { [] } }
    }

    /// Every service solicitation UUID, each once, in order.
    public var solicitedServiceUUIDs: [BluetoothUUID] {
        distinct { if case let .solicitedServiceUUIDs(list) = $0 { Array(list) } else { [] } }
    }

    /// Every Manufacturer Specific Data structure, in order; a structure repeated byte for
    /// byte (the scan response repeating the advertisement) once.
    public var manufacturerData: [ManufacturerData] {
        distinct { if case let .manufacturerData(m) = $0 { [m] } else { [] } }
    }

    /// Every Service Data structure (all UUID widths), in order; one repeated byte for byte once.
    public var serviceData: [ServiceData] {
        distinct { if case let .serviceData(d) = $0 { [d] } else { [] } }
    }

    /// What `values` finds in each structure, in order, each value the first time only.
    private func distinct<Value: Hashable>(_ values: (ADStructure) -> [Value]) -> [Value] {
        var seen: Set<Value> = []
        var out: [Value] = []
        for structure in self {
            for value in values(structure) where seen.insert(value).inserted { out.append(value) }
        }
        return out
    }

    /// The data of the first Service Data structure for `uuid` (any width).
    public func serviceData(for uuid: BluetoothUUID) -> ArraySlice<UInt8>? {
        for s in self { if case let .serviceData(d) = s, d.uuid == uuid { return d.data } }
        return nil
    }

    /// The Tx Power Level in dBm.
    public var txPowerLevel: Int8? { firstValidData(0x0A)?.first.map { Int8(bitPattern: $0) } }

    public var appearance: Appearance? {
        firstValidData(0x19).map { Appearance(UInt16($0[$0.startIndex]) | UInt16($0[$0.startIndex + 1]) << 8) }
    }

    public var uri: URI? { firstValidData(0x24).map(URI.init(bytes:)) }

    /// One structure per line.
    public var description: String {
        var lines = map(\.description)
        if let error { lines.append("error: \(error)") }
        return lines.joined(separator: "\n")
    }
}

extension AdvertisingData: WireEncodable, WireDecodable {
    /// Writes the valid structures (no padding).
    public func encode(into writer: inout ByteWriter) {
        writer.write(contentsOf: bytes)
    }

    /// Strict decoding: throws what ``error`` would hold. Use ``init(decoding:)-(ArraySlice<UInt8>)`` to keep the
    /// valid part of damaged data.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> AdvertisingData {
        let data = AdvertisingData(decoding: bytes)
        if let error = data.error { throw error }
        return data
    }
}
