import RawbleWire

/// Uniform random values of the field types PDUs carry, drawn from the generator given, for
/// the samples of property-based tests: a test's sample set conforms (`enum Samples:
/// RandomFields`) and calls `byte(&rng)`, `u16(&rng)`, `address(&rng)` ... as its own. One copy
/// for the test targets, which share no sources.
public protocol RandomFields {}

extension RandomFields {
    public static func byte(_ rng: inout some RandomNumberGenerator) -> UInt8 { UInt8.random(in: 0...255, using: &rng) }
    public static func u16(_ rng: inout some RandomNumberGenerator) -> UInt16 { UInt16.random(in: 0...UInt16.max, using: &rng) }
    public static func u64(_ rng: inout some RandomNumberGenerator) -> UInt64 { UInt64.random(in: 0...UInt64.max, using: &rng) }
    public static func bool(_ rng: inout some RandomNumberGenerator) -> Bool { Bool.random(using: &rng) }

    /// A 48-bit address, any bits.
    public static func address(_ rng: inout some RandomNumberGenerator) -> BluetoothAddress {
        BluetoothAddress(u64(&rng) & 0xFFFF_FFFF_FFFF)
    }

    /// Random bytes, as many as a random draw from `count`.
    public static func bytes(_ rng: inout some RandomNumberGenerator, count: ClosedRange<Int>) -> [UInt8] {
        (0..<Int.random(in: count, using: &rng)).map { _ in byte(&rng) }
    }
}
