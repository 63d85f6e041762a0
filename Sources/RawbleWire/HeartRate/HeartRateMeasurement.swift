/// A Heart Rate Measurement characteristic value (`2A37`, Heart Rate Service 1.0, 3.1).
///
/// Layout: flags u8, heart rate (u8, or u16 LE when flag bit 0 is set), Energy Expended u16 LE
/// in kJ (flag bit 3), then RR-Intervals u16 LE in 1/1024 s filling the rest (flag bit 4).
/// This is the one decoder for these bytes wherever they come from (notification, read,
/// advertising service data). Decoding does not allocate: the RR intervals stay a slice of
/// the input, decoded on access.
public struct HeartRateMeasurement: Hashable, Sendable {
    /// The flags byte. Reserved bits 5–7 are kept (and ignored) so the value re-encodes as received.
    public struct Flags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Bit 0: the heart rate is a u16 (else a u8).
        public static let heartRateIsUInt16 = Flags(rawValue: 1 << 0)
        /// Bit 1: skin contact detected (meaningful only with ``sensorContactSupported``).
        public static let sensorContactDetected = Flags(rawValue: 1 << 1)
        /// Bit 2: the sensor reports skin contact.
        public static let sensorContactSupported = Flags(rawValue: 1 << 2)
        /// Bit 3: the Energy Expended field is present.
        public static let energyExpendedPresent = Flags(rawValue: 1 << 3)
        /// Bit 4: one or more RR-Intervals are present.
        public static let rrIntervalsPresent = Flags(rawValue: 1 << 4)
    }

    /// Whether the sensor touches the skin, from flag bits 2 (supported) and 1 (detected).
    public enum SensorContact: Hashable, Sendable, CaseIterable, CustomStringConvertible {
        case unsupported
        case notDetected
        case detected

        /// `unsupported`, `not-detected`, `detected`: the CLI's JSON values.
        @inlinable
        public var name: String {
            switch self {
            case .unsupported: "unsupported"
            case .notDetected: "not-detected"
            case .detected: "detected"
            }
        }

        public var description: String { name }
    }

    /// The flags as received (or as built by the initializer).
    public let flags: Flags
    /// Heart rate in beats per minute.
    public let bpm: UInt16
    /// Energy expended since the last reset, in kilojoules (`0xFFFF` means at least 65535),
    /// `nil` when the field is absent.
    public let energyExpended: UInt16?
    /// The RR-Intervals, oldest first (empty when the field is absent).
    public let rrIntervals: RRIntervals

    /// Sensor contact status from the flags.
    @inlinable
    public var contact: SensorContact {
        guard flags.rawValue & 0x04 != 0 else { return .unsupported }
        return flags.rawValue & 0x02 != 0 ? .detected : .notDetected
    }

    @inlinable
    init(flags: Flags, bpm: UInt16, energyExpended: UInt16?, rrIntervals: RRIntervals) {
        self.flags = flags
        self.bpm = bpm
        self.energyExpended = energyExpended
        self.rrIntervals = rrIntervals
    }

    /// Builds the smallest valid value: a u8 heart rate when `bpm <= 255` (unless
    /// `uses16BitHeartRate`, as some straps always send u16), fields only when given.
    public init(
        bpm: UInt16, contact: SensorContact = .unsupported, energyExpended: UInt16? = nil,
        rrIntervals: some Sequence<RRInterval> = [RRInterval](), uses16BitHeartRate: Bool = false
    ) {
        var flags: Flags = []
        if bpm > 255 || uses16BitHeartRate { flags.insert(.heartRateIsUInt16) }
        switch contact {
        case .unsupported: break
        case .notDetected: flags.insert(.sensorContactSupported)
        case .detected: flags.formUnion([.sensorContactSupported, .sensorContactDetected])
        }
        if energyExpended != nil { flags.insert(.energyExpendedPresent) }
        let intervals = RRIntervals(rrIntervals)
        if !intervals.isEmpty { flags.insert(.rrIntervalsPresent) }
        self.init(flags: flags, bpm: bpm, energyExpended: energyExpended, rrIntervals: intervals)
    }
}

extension HeartRateMeasurement: CustomStringConvertible {
    /// `90 bpm, contact detected, 8 kJ, RR 0.548 0.551 s`.
    public var description: String {
        var text = "\(bpm) bpm"
        if contact != .unsupported { text += ", contact \(contact == .detected ? "detected" : "not detected")" }
        if let energyExpended { text += ", \(energyExpended) kJ" }
        if !rrIntervals.isEmpty {
            text += ", RR " + rrIntervals.map { formatSeconds($0.seconds) }.joined(separator: " ") + " s"
        }
        return text
    }
}

/// Seconds with three decimals, without Foundation.
func formatSeconds(_ seconds: Double) -> String {
    let millis = Int((seconds * 1000).rounded())
    let fraction = String(millis % 1000)
    return "\(millis / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
}

/// One RR-Interval: the time between two R-waves, in units of 1/1024 s.
public struct RRInterval: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The interval in 1/1024 s, as carried on the wire.
    public let rawValue: UInt16

    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// An interval of `seconds`, rounded to the nearest 1/1024 s and clamped to 0...65535/1024.
    @inlinable
    public init(seconds: Double) {
        let units = (seconds * 1024).rounded()
        if units.isNaN || units <= 0 {
            rawValue = 0
        } else if units >= 65_535 {
            rawValue = .max
        } else {
            rawValue = UInt16(units)
        }
    }

    /// The interval in seconds.
    @inlinable public var seconds: Double { Double(rawValue) / 1024 }
    /// The interval in milliseconds.
    @inlinable public var milliseconds: Double { Double(rawValue) * 1000 / 1024 }

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }

    public var description: String { "\(milliseconds) ms" }
}

/// The RR-Intervals of a measurement, oldest first.
///
/// Up to ``inlineCapacity`` intervals (every value that fits a default 23-byte ATT_MTU, and
/// far more than a strap sends per beat) are stored inline, so decoding a measurement neither
/// allocates nor keeps a reference to the received buffer; longer lists (possible with a large
/// MTU) are kept in an array.
public struct RRIntervals: RandomAccessCollection, Hashable, Sendable {
    /// Intervals stored without allocation.
    public static let inlineCapacity = 12

    @usableFromInline var inline: (UInt64, UInt64, UInt64)
    @usableFromInline var inlineCount: Int
    @usableFromInline var overflow: [UInt16]?

    /// Reads the intervals from little-endian u16s at `bytes[start..<end]` (an even count).
    @inlinable
    init<C: RandomAccessCollection<UInt8>>(littleEndian bytes: C, from start: C.Index, count: Int) {
        inline = (0, 0, 0)
        inlineCount = 0
        overflow = nil
        if count <= Self.inlineCapacity {
            var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
            var i = start
            for n in 0..<count {
                let low = bytes[i]
                i = bytes.index(after: i)
                let high = bytes[i]
                i = bytes.index(after: i)
                let value = UInt64(low) | UInt64(high) << 8
                let shift = UInt64(16 * (n & 3))
                switch n >> 2 {
                case 0: words.0 |= value << shift
                case 1: words.1 |= value << shift
                default: words.2 |= value << shift
                }
            }
            inline = words
            inlineCount = count
        } else {
            var values: [UInt16] = []
            values.reserveCapacity(count)
            var i = start
            for _ in 0..<count {
                let low = bytes[i]
                i = bytes.index(after: i)
                let high = bytes[i]
                i = bytes.index(after: i)
                values.append(UInt16(low) | UInt16(high) << 8)
            }
            overflow = values
        }
    }

    /// Intervals built by hand (the encoder's initializer).
    public init(_ intervals: some Sequence<RRInterval>) {
        var bytes: [UInt8] = []
        for interval in intervals {
            bytes.append(UInt8(truncatingIfNeeded: interval.rawValue))
            bytes.append(UInt8(truncatingIfNeeded: interval.rawValue >> 8))
        }
        self.init(littleEndian: bytes, from: 0, count: bytes.count / 2)
    }

    public typealias Index = Int
    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { overflow?.count ?? inlineCount }

    @inlinable
    public subscript(position: Int) -> RRInterval {
        precondition(position >= 0 && position < endIndex, "RR-Interval index out of range")
        if let overflow { return RRInterval(rawValue: overflow[position]) }
        let word: UInt64
        switch position >> 2 {
        case 0: word = inline.0
        case 1: word = inline.1
        default: word = inline.2
        }
        return RRInterval(rawValue: UInt16(truncatingIfNeeded: word >> UInt64(16 * (position & 3))))
    }

    /// The field as carried on the wire: each interval as a little-endian u16.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(2 * count)
        for interval in self {
            out.append(UInt8(truncatingIfNeeded: interval.rawValue))
            out.append(UInt8(truncatingIfNeeded: interval.rawValue >> 8))
        }
        return out
    }

    public static func == (a: RRIntervals, b: RRIntervals) -> Bool { a.elementsEqual(b) }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        for interval in self { hasher.combine(interval.rawValue) }
    }
}

extension HeartRateMeasurement: WireDecodable, WireEncodable {
    /// Decodes a characteristic value. Errors name the field and its offset: an empty value,
    /// a field the flags announce but the value lacks, an RR field with no interval or an odd
    /// byte, bytes after the last field.
    ///
    /// Hot path (benchmarked, no allocation, no reference kept to `bytes`): plain index
    /// arithmetic on the slice; the error paths are out of line.
    @inlinable
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> HeartRateMeasurement {
        let base = bytes.startIndex
        return try bytes.withUnsafeBufferPointer { (buffer) throws(WireError) in
            try decode(buffer: buffer, baseOffset: base)
        }
    }

    /// Decodes a characteristic value held in an array (borrowed: no slice, no reference kept).
    @inlinable
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> HeartRateMeasurement {
        try bytes.withUnsafeBufferPointer { (buffer) throws(WireError) in
            try decode(buffer: buffer, baseOffset: 0)
        }
    }

    /// Decodes a characteristic value from borrowed memory; error offsets are
    /// `baseOffset` plus the index in `buffer`.
    @inlinable
    public static func decode(buffer bytes: UnsafeBufferPointer<UInt8>, baseOffset: Int = 0) throws(WireError)
        -> HeartRateMeasurement
    {
        do {
            return try decodeFields(bytes)
        } catch {
            throw WireError(error.kind, at: error.offset + baseOffset, in: error.context)
        }
    }

    @inlinable
    static func decodeFields(_ bytes: UnsafeBufferPointer<UInt8>) throws(WireError) -> HeartRateMeasurement {
        let end = bytes.endIndex
        var i = bytes.startIndex
        guard i < end else { throw failure(.flags, at: i, available: 0, needed: 1) }
        let flags = bytes[i]
        i += 1
        let bpm: UInt16
        if flags & 0x01 != 0 {
            guard end - i >= 2 else { throw failure(.heartRateUInt16, at: i, available: end - i, needed: 2) }
            bpm = UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8
            i += 2
        } else {
            guard i < end else { throw failure(.heartRateUInt8, at: i, available: 0, needed: 1) }
            bpm = UInt16(bytes[i])
            i += 1
        }
        var energy: UInt16? = nil
        if flags & 0x08 != 0 {
            guard end - i >= 2 else { throw failure(.energyExpended, at: i, available: end - i, needed: 2) }
            energy = UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8
            i += 2
        }
        if flags & 0x10 != 0 {
            // The flag promises at least one interval, and intervals are whole u16s.
            guard end - i >= 2 else { throw failure(.rrInterval, at: i, available: end - i, needed: 2) }
            guard (end - i) & 1 == 0 else { throw failure(.rrInterval, at: end - 1, available: 1, needed: 2) }
        } else if i != end {
            throw failure(.trailing, at: i, available: end - i, needed: 0)
        }
        return HeartRateMeasurement(
            flags: Flags(rawValue: flags), bpm: bpm, energyExpended: energy,
            rrIntervals: RRIntervals(littleEndian: bytes, from: i, count: (end - i) / 2))
    }

    /// The fields a measurement can be short of, for error messages.
    @usableFromInline
    enum Field {
        case flags, heartRateUInt8, heartRateUInt16, energyExpended, rrInterval, trailing
    }

    /// Builds the error for a missing field (kept out of line so `decode` stays small).
    @usableFromInline @inline(never)
    static func failure(_ field: Field, at offset: Int, available: Int, needed: Int) -> WireError {
        let context: String
        switch field {
        case .flags: context = "Heart Rate Measurement flags"
        case .heartRateUInt8: context = "Heart Rate Measurement heart rate (u8)"
        case .heartRateUInt16: context = "Heart Rate Measurement heart rate (u16)"
        case .energyExpended: context = "Heart Rate Measurement Energy Expended"
        case .rrInterval: context = "Heart Rate Measurement RR-Interval"
        case .trailing:
            return WireError(.trailingBytes(count: available), at: offset, in: "Heart Rate Measurement")
        }
        return WireError(.truncated(needed: needed, available: available), at: offset, in: context)
    }

    @inlinable
    public func encode(into writer: inout ByteWriter) {
        writer.write(flags.rawValue)
        if flags.contains(.heartRateIsUInt16) {
            writer.write(bpm)
        } else {
            writer.write(UInt8(truncatingIfNeeded: bpm))
        }
        if flags.contains(.energyExpendedPresent) {
            writer.write(energyExpended ?? 0)
        }
        if flags.contains(.rrIntervalsPresent) {
            writer.write(contentsOf: rrIntervals.bytes)
        }
    }
}
