import RawbleWire

/// The format byte of a PMD data frame (byte 9): bit 7 marks delta compression, the low bits
/// number the layout, which depends on the measurement type.
public struct PMDFrameType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    /// Whether the samples are delta-compressed (bit 7).
    @inlinable public var isDeltaCompressed: Bool { rawValue & 0x80 != 0 }
    /// The layout number (bits 0–6).
    @inlinable public var layout: UInt8 { rawValue & 0x7F }

    public var description: String { "0x\(hex(rawValue))" }
}

/// One notification of the PMD data characteristic: a header, then samples.
///
/// | Offset | Size | Field |
/// |---|---|---|
/// | 0 | 1 | measurement type (`& 0x3F`) |
/// | 1 | 8 | u64 LE, ns since 2000-01-01T00:00:00Z, time of the **last** sample |
/// | 9 | 1 | frame type (bit 7: delta-compressed) |
/// | 10 | … | samples |
///
/// Bits 6–7 of byte 0 are not kept (every source masks them off), so a frame re-encodes with
/// them clear. Decoding reads the header only and keeps the samples as a slice of the input (no copy);
/// the typed views (``ecgSamples()``, ``accelerationSamples(factor:)``,
/// ``deltaSamples(channels:resolution:)``, ``ppiSamples()``) check the layout and decode on
/// access. Frames come from a device and are untrusted: every view throws `WireError`
/// rather than trap, and allocates nothing in proportion to a count it has not checked
/// against the bytes present.
public struct PMDDataFrame: Hashable, Sendable {
    /// The size of the header.
    public static let headerSize = 10

    /// The measurement type (byte 0 masked with `0x3F`).
    public var type: PMDMeasurementType
    /// The time of the frame's last sample, in ns since 2000-01-01T00:00:00Z (see ``PMDTime``).
    public var timestamp: UInt64
    public var frameType: PMDFrameType
    /// The sample bytes (a slice of the decoded input; offsets are the input's).
    public var payload: ArraySlice<UInt8>

    public init(type: PMDMeasurementType, timestamp: UInt64, frameType: PMDFrameType, payload: ArraySlice<UInt8>) {
        self.type = type
        self.timestamp = timestamp
        self.frameType = frameType
        self.payload = payload
    }
}

extension PMDDataFrame: WireDecodable, WireEncodable {
    /// Decodes the header; fewer than ten bytes are truncated.
    @inlinable
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> PMDDataFrame {
        var reader = ByteReader(bytes, context: "PMD data frame")
        let type = PMDMeasurementType(try reader.readUInt8() & 0x3F)
        let timestamp = try reader.readUInt64()
        let frameType = PMDFrameType(try reader.readUInt8())
        return PMDDataFrame(type: type, timestamp: timestamp, frameType: frameType, payload: reader.readRemaining())
    }

    public func encode(into writer: inout ByteWriter) {
        writer.write(type.rawValue)
        writer.write(timestamp)
        writer.write(frameType.rawValue)
        writer.write(contentsOf: payload)
    }
}

// MARK: - Raw (uncompressed) samples

/// Reads a signed little-endian integer of `width` bytes (1...4) at `index`, sign-extended.
@inlinable
func pmdSignedLittleEndian(_ bytes: ArraySlice<UInt8>, at index: Int, width: Int) -> Int32 {
    var value: UInt32 = 0
    for k in 0..<width { value |= UInt32(bytes[index + k]) << UInt32(8 * k) }
    let unused = UInt32(32 - 8 * width)
    return Int32(bitPattern: value << unused) >> Int32(unused)
}

extension PMDDataFrame {
    /// Checks that this is a `type` frame whose payload is whole samples of `size` bytes.
    @usableFromInline
    func checkRaw(_ expected: PMDMeasurementType, sampleSize: Int, context: String) throws(WireError) {
        guard type == expected else {
            throw WireError(.invalidValue("\(type) frame, expected \(expected)"), at: payload.startIndex - 10, in: context)
        }
        let rest = payload.count % sampleSize
        guard rest == 0 else {
            throw WireError(.trailingBytes(count: rest), at: payload.endIndex - rest, in: context)
        }
    }

    /// The ECG samples of an ECG frame (frame type `00`: int24 LE µV each, no factor).
    ///
    /// Other frame types are `WireError.Kind.unknownValue` at byte 9; a payload that is
    /// not whole samples ends in `WireError.Kind.trailingBytes`.
    @inlinable
    public func ecgSamples() throws(WireError) -> PMDECGSamples {
        guard frameType.rawValue == 0 else {
            throw WireError(.unknownValue(UInt64(frameType.rawValue)), at: payload.startIndex - 1, in: "PMD ECG frame")
        }
        try checkRaw(.ecg, sampleSize: 3, context: "PMD ECG frame")
        return PMDECGSamples(bytes: payload)
    }

    /// The acceleration samples (x, y, z in mG) of an acceleration frame.
    ///
    /// Raw frames: `00` three int8, `01` three int16 LE (what an H10 sends), `02` three int24
    /// LE. Delta-compressed frames (bit 7) are decoded with ``deltaSamples(channels:resolution:)``
    /// as 3 channels of 16-bit values (Polar's Android SDK) and scaled as it does: `81` by
    /// `factor`, `80` (values in G) by `factor × 1000`; each product in float32, truncated
    /// toward zero (a factor of 1 leaves `81` values as they are). Other frame types are
    /// `WireError.Kind.unknownValue` at byte 9.
    public func accelerationSamples(factor: Float = 1) throws(WireError) -> PMDAccelerationSamples {
        let context = "PMD acceleration frame"
        switch frameType.rawValue {
        case 0x00, 0x01, 0x02:
            let width = Int(frameType.rawValue) + 1
            try checkRaw(.acceleration, sampleSize: 3 * width, context: context)
            return PMDAccelerationSamples(raw: payload, width: width)
        case 0x80, 0x81:
            try checkRaw(.acceleration, sampleSize: 1, context: context)
            let delta = try deltaSamples(channels: 3, resolution: 16)
            let scale: Float = frameType.rawValue == 0x80 ? factor * 1000 : factor
            var vectors: [PMDAcceleration] = []
            vectors.reserveCapacity(delta.count)  // checked against the bytes present
            delta.forEachSample { values in
                if frameType.rawValue == 0x81 && factor == 1 {
                    vectors.append(PMDAcceleration(x: values[0], y: values[1], z: values[2]))
                } else {
                    vectors.append(PMDAcceleration(
                        x: pmdScaled(values[0], scale), y: pmdScaled(values[1], scale), z: pmdScaled(values[2], scale)))
                }
            }
            return PMDAccelerationSamples(decoded: vectors)
        default:
            throw WireError(.unknownValue(UInt64(frameType.rawValue)), at: payload.startIndex - 1, in: context)
        }
    }

    /// The peak-to-peak intervals of a PPI frame (frame type `00`, 6 bytes each).
    public func ppiSamples() throws(WireError) -> PMDPPISamples {
        guard frameType.rawValue == 0 else {
            throw WireError(.unknownValue(UInt64(frameType.rawValue)), at: payload.startIndex - 1, in: "PMD PPI frame")
        }
        try checkRaw(.ppi, sampleSize: 6, context: "PMD PPI frame")
        return PMDPPISamples(bytes: payload)
    }

    /// The delta-compressed samples of this frame, for `channels` channels of `resolution`-bit
    /// values (from the start reply's settings). See ``PMDDeltaSamples`` for the layout and
    /// the errors.
    public func deltaSamples(channels: Int, resolution: Int) throws(WireError) -> PMDDeltaSamples {
        guard frameType.isDeltaCompressed else {
            throw WireError(.invalidValue("frame type \(frameType) is not delta-compressed"),
                at: payload.startIndex - 1, in: "PMD delta frame")
        }
        return try PMDDeltaSamples(payload, channels: channels, resolution: resolution)
    }
}

/// `value × scale` in float32, truncated toward zero; NaN gives 0 and out-of-range values
/// saturate (as Kotlin's `Float.toInt()`, never a trap).
@usableFromInline
func pmdScaled(_ value: Int32, _ scale: Float) -> Int32 {
    let product = Float(value) * scale
    if product.isNaN { return 0 }
    if product >= 2_147_483_648 { return .max }
    if product <= -2_147_483_648 { return .min }
    return Int32(product)
}

/// The samples of an ECG frame in µV, oldest first, decoded on access from the frame's bytes.
public struct PMDECGSamples: RandomAccessCollection, Hashable, Sendable {
    @usableFromInline let bytes: ArraySlice<UInt8>

    @inlinable init(bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    public typealias Index = Int
    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { bytes.count / 3 }

    /// Sample `position` in µV.
    @inlinable
    public subscript(position: Int) -> Int32 {
        precondition(position >= 0 && position < endIndex, "ECG sample index out of range")
        return pmdSignedLittleEndian(bytes, at: bytes.startIndex + 3 * position, width: 3)
    }
}

/// One acceleration sample, in mG.
public struct PMDAcceleration: Hashable, Sendable, CustomStringConvertible {
    public var x: Int32
    public var y: Int32
    public var z: Int32

    @inlinable
    public init(x: Int32, y: Int32, z: Int32) {
        self.x = x
        self.y = y
        self.z = z
    }

    public var description: String { "(\(x), \(y), \(z)) mG" }
}

/// The samples of an acceleration frame, oldest first: decoded on access for raw frames,
/// decoded once (one array per frame) for delta-compressed ones.
public struct PMDAccelerationSamples: RandomAccessCollection, Hashable, Sendable {
    @usableFromInline let raw: ArraySlice<UInt8>
    @usableFromInline let width: Int
    @usableFromInline let decoded: [PMDAcceleration]?

    init(raw: ArraySlice<UInt8>, width: Int) {
        self.raw = raw
        self.width = width
        self.decoded = nil
    }

    init(decoded: [PMDAcceleration]) {
        self.raw = []
        self.width = 1
        self.decoded = decoded
    }

    public typealias Index = Int
    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { decoded?.count ?? raw.count / (3 * width) }

    @inlinable
    public subscript(position: Int) -> PMDAcceleration {
        precondition(position >= 0 && position < endIndex, "acceleration sample index out of range")
        if let decoded { return decoded[position] }
        let base = raw.startIndex + 3 * width * position
        return PMDAcceleration(
            x: pmdSignedLittleEndian(raw, at: base, width: width),
            y: pmdSignedLittleEndian(raw, at: base + width, width: width),
            z: pmdSignedLittleEndian(raw, at: base + 2 * width, width: width))
    }

    public static func == (a: Self, b: Self) -> Bool { a.elementsEqual(b) }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for sample in self { hasher.combine(sample) }
    }
}

/// One peak-to-peak interval sample of a PPI frame.
public struct PMDPPISample: Hashable, Sendable {
    /// Heart rate in beats per minute.
    public var heartRate: UInt8
    /// Peak-to-peak interval in ms.
    public var interval: UInt16
    /// Error estimate of the interval in ms.
    public var errorEstimate: UInt16
    /// Flags: bit 0 the interval is invalid, bit 1 skin contact, bit 2 contact supported.
    public var flags: UInt8

    public init(heartRate: UInt8, interval: UInt16, errorEstimate: UInt16, flags: UInt8) {
        self.heartRate = heartRate
        self.interval = interval
        self.errorEstimate = errorEstimate
        self.flags = flags
    }

    /// Flag bit 0.
    public var isInvalid: Bool { flags & 0x01 != 0 }
    /// Flag bit 1.
    public var skinContact: Bool { flags & 0x02 != 0 }
    /// Flag bit 2.
    public var skinContactSupported: Bool { flags & 0x04 != 0 }
}

/// The samples of a PPI frame, oldest first, decoded on access.
public struct PMDPPISamples: RandomAccessCollection, Hashable, Sendable {
    @usableFromInline let bytes: ArraySlice<UInt8>

    init(bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    public typealias Index = Int
    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { bytes.count / 6 }

    @inlinable
    public subscript(position: Int) -> PMDPPISample {
        precondition(position >= 0 && position < endIndex, "PPI sample index out of range")
        let i = bytes.startIndex + 6 * position
        return PMDPPISample(
            heartRate: bytes[i],
            interval: UInt16(bytes[i + 1]) | UInt16(bytes[i + 2]) << 8,
            errorEstimate: UInt16(bytes[i + 3]) | UInt16(bytes[i + 4]) << 8,
            flags: bytes[i + 5])
    }
}
