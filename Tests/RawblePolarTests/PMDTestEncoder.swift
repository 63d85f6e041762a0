import RawblePolarCore
import RawbleWire

/// An independent PMD frame encoder for the tests: it writes what the decoders read, by a
/// different route (a bit list packed at the end, not a running bit buffer), so a shared
/// misreading of the layout would have to be made twice to go unnoticed.
enum PMDTestEncoder {
    /// A frame: type, 8-byte LE timestamp, frame type, payload.
    static func frame(type: UInt8, timestamp: UInt64, frameType: UInt8, payload: [UInt8]) -> [UInt8] {
        var out = [type]
        for k in 0..<8 { out.append(UInt8(truncatingIfNeeded: timestamp >> (8 * UInt64(k)))) }
        out.append(frameType)
        return out + payload
    }

    /// `value` as `width` bytes, little-endian two's complement.
    static func littleEndian(_ value: Int64, width: Int) -> [UInt8] {
        (0..<width).map { UInt8(truncatingIfNeeded: value >> Int64(8 * $0)) }
    }

    /// Raw samples: each value as `width` bytes.
    static func raw(_ values: [Int32], width: Int) -> [UInt8] {
        values.flatMap { littleEndian(Int64($0), width: width) }
    }

    /// The fewest bits that hold every one of `deltas` as a signed number (at least 1).
    static func bitsNeeded(_ deltas: [Int64]) -> Int {
        var bits = 1
        for delta in deltas {
            while delta < -(Int64(1) << (bits - 1)) || delta > (Int64(1) << (bits - 1)) - 1 { bits += 1 }
        }
        return bits
    }

    /// A delta-compressed payload of `samples` (each `channels` values, which must fit
    /// `resolution` bits): the first sample as the reference, then blocks of at most
    /// `blockLength` samples, each block with the narrowest width its deltas need (or `width`
    /// when given and wide enough).
    static func delta(
        _ samples: [[Int32]], resolution: Int, blockLength: Int = 255, width fixedWidth: Int? = nil
    ) -> [UInt8] {
        guard let first = samples.first else { return [] }
        let referenceWidth = (resolution + 7) / 8
        var out = first.flatMap { littleEndian(Int64($0), width: referenceWidth) }
        var previous = first
        var index = 1
        while index < samples.count {
            let block = Array(samples[index..<min(samples.count, index + blockLength)])
            var deltas: [Int64] = []
            for sample in block {
                for (c, value) in sample.enumerated() {
                    // 32-bit wrapping, as the device adds: a delta always fits 32 bits.
                    deltas.append(Int64(value &- previous[c]))
                    previous[c] = value
                }
            }
            let width = max(fixedWidth ?? 1, bitsNeeded(deltas))
            var bits: [Bool] = []
            for delta in deltas {
                for b in 0..<width { bits.append((delta >> Int64(b)) & 1 == 1) }
            }
            out.append(UInt8(width))
            out.append(UInt8(block.count))
            var byte: UInt8 = 0
            for (n, bit) in bits.enumerated() {
                if bit { byte |= 1 << UInt8(n % 8) }
                if n % 8 == 7 {
                    out.append(byte)
                    byte = 0
                }
            }
            if bits.count % 8 != 0 { out.append(byte) }
            index += block.count
        }
        return out
    }
}
