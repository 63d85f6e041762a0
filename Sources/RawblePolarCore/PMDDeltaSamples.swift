import RawbleWire

/// The samples of a delta-compressed PMD frame (frame type bit 7), validated when created and
/// decoded when iterated.
///
/// Layout of the payload, for `channels` channels of `resolution`-bit values:
/// - a reference sample: `channels` values of `ceil(resolution / 8)` bytes each, signed
///   little-endian;
/// - then blocks of `[width u8][count u8][ceil(width × channels × count / 8) bytes]`: `count`
///   samples of `channels` deltas each, `width` bits per delta, channels interleaved, bits taken
///   least significant first from each byte; each delta is sign-extended from its top bit and
///   added to the channel's previous value.
///
/// The frame holds `1 + Σ count` samples, the reference first. Values are the device's raw
/// numbers (32-bit, additions wrap as they do on the device); scaling by the stream's factor is
/// the caller's, or ``PMDDataFrame/accelerationSamples(factor:)``'s for acceleration.
///
/// Creation walks the block headers once, with overflow-checked arithmetic and without
/// allocating, and throws `WireError`: channels or resolution out of range (`invalidValue`,
/// offset of the payload), a reference or block longer than the bytes left (`truncated`), a
/// block header cut short (`truncated`), a width of 0 or above 32 (`invalidValue`, at the width
/// byte).
public struct PMDDeltaSamples: Hashable, Sendable {
    /// The payload, reference first.
    @usableFromInline let bytes: ArraySlice<UInt8>
    /// Values per sample.
    public let channels: Int
    /// Bytes per reference value.
    @usableFromInline let referenceWidth: Int
    /// Number of samples, the reference included.
    public let count: Int

    /// The largest resolution a value can have (values are 32-bit).
    public static let maximumResolution = 32
    /// The largest delta width.
    public static let maximumWidth = 32

    /// Validates `payload` (the bytes after a frame's header) as delta-compressed samples.
    public init(_ payload: ArraySlice<UInt8>, channels: Int, resolution: Int) throws(WireError) {
        let context = "PMD delta frame"
        let start = payload.startIndex
        guard (1...255).contains(channels) else {
            throw WireError(.invalidValue("\(channels) channels (1...255)"), at: start, in: context)
        }
        guard (1...Self.maximumResolution).contains(resolution) else {
            throw WireError(.invalidValue("resolution \(resolution) bits (1...32)"), at: start, in: context)
        }
        let referenceWidth = (resolution + 7) / 8
        let referenceSize = channels * referenceWidth  // ≤ 255 × 4
        guard payload.count >= referenceSize else {
            throw WireError(.truncated(needed: referenceSize, available: payload.count), at: start, in: context)
        }
        var i = start + referenceSize
        let end = payload.endIndex
        var samples = 1
        while i < end {
            guard end - i >= 2 else {
                throw WireError(.truncated(needed: 2, available: end - i), at: i, in: "PMD delta block header")
            }
            let width = Int(payload[i])
            let blockCount = Int(payload[i + 1])
            guard (1...Self.maximumWidth).contains(width) else {
                throw WireError(.invalidValue("delta width \(width) bits (1...32)"), at: i, in: "PMD delta block header")
            }
            let blockSize = try Self.blockSize(width: width, channels: channels, count: blockCount, at: i)
            i += 2
            guard end - i >= blockSize else {
                throw WireError(.truncated(needed: blockSize, available: end - i), at: i, in: "PMD delta block")
            }
            i += blockSize
            samples += blockCount  // ≤ 1 + 255 × (bytes / 2): cannot overflow
        }
        self.bytes = payload
        self.channels = channels
        self.referenceWidth = referenceWidth
        self.count = samples
    }

    /// `ceil(width × channels × count / 8)`, overflow-checked (a caller may pass any channel
    /// count to a decoder; this stays correct whatever the operands).
    @usableFromInline
    static func blockSize(width: Int, channels: Int, count: Int, at offset: Int) throws(WireError) -> Int {
        let (perSample, o1) = width.multipliedReportingOverflow(by: channels)
        let (bits, o2) = perSample.multipliedReportingOverflow(by: count)
        let (rounded, o3) = bits.addingReportingOverflow(7)
        guard !o1, !o2, !o3 else {
            throw WireError(.invalidLength(Int.max), at: offset, in: "PMD delta block header")
        }
        return rounded / 8
    }

    /// Calls `body` with each sample's values (one per channel), oldest first. The buffer is
    /// reused between calls (no allocation per sample; one scratch buffer per pass, on the stack
    /// when small).
    public func forEachSample<E: Error>(_ body: (UnsafeBufferPointer<Int32>) throws(E) -> Void) throws(E) {
        try withUnsafeTemporaryAllocation(of: Int32.self, capacity: channels) { (values) throws(E) in
            var i = bytes.startIndex
            for c in 0..<channels {
                values[c] = pmdSignedLittleEndian(bytes, at: i, width: referenceWidth)
                i += referenceWidth
            }
            try body(UnsafeBufferPointer(values))
            let end = bytes.endIndex
            while i < end {
                // Validated at creation: a whole header and block are present.
                let width = Int(bytes[i])
                let blockCount = Int(bytes[i + 1])
                i += 2
                let mask: UInt64 = width == 64 ? .max : (1 << UInt64(width)) - 1
                let signBit: UInt64 = 1 << UInt64(width - 1)
                var buffer: UInt64 = 0
                var buffered = 0
                for _ in 0..<blockCount {
                    for c in 0..<channels {
                        while buffered < width {
                            buffer |= UInt64(bytes[i]) << UInt64(buffered)
                            i += 1
                            buffered += 8
                        }
                        let raw = buffer & mask
                        buffer >>= UInt64(width)
                        buffered -= width
                        // Sign-extend from bit width - 1.
                        let delta = Int32(truncatingIfNeeded: Int64(bitPattern: (raw ^ signBit) &- signBit))
                        values[c] = values[c] &+ delta
                    }
                    try body(UnsafeBufferPointer(values))
                }
                // The block's padding bits (fewer than 8) were never loaded: `i` is at the
                // next block.
            }
        }
    }

    /// All values, sample by sample, channels interleaved (`count × channels` values; one array).
    public func values() -> [Int32] {
        var out: [Int32] = []
        out.reserveCapacity(count * channels)
        forEachSample { (sample: UnsafeBufferPointer<Int32>) in out.append(contentsOf: sample) }
        return out
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.channels == b.channels && a.referenceWidth == b.referenceWidth && a.bytes.elementsEqual(b.bytes)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(channels)
        hasher.combine(referenceWidth)
        hasher.combine(count)
        for byte in bytes { hasher.combine(byte) }
    }
}
