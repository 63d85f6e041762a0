#if canImport(Glibc)
import Glibc
#endif

/// SplitMix64: a small, fast, seeded random number generator, so a failing random test names
/// the seed that replays it exactly (Swift's default generator cannot be seeded).
public struct SplitMix64: RandomNumberGenerator, Sendable {
    public var state: UInt64

    public init(state: UInt64) {
        self.state = state
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The seed of a test's own random choices (property checks print theirs on failure, with the
/// trait that replays it): `RAWBLE_TEST_SEED` when set (decimal, or hexadecimal after `0x`),
/// else a fresh one. Put ``replayHint(_:)`` in the test's failure messages, so a failure says
/// how to run it again with the same choices.
public enum TestSeed {
    /// The seed from `RAWBLE_TEST_SEED`, else a random one.
    public static func make() -> UInt64 {
        if let text = getenv("RAWBLE_TEST_SEED").map({ String(cString: $0) }), let seed = parse(text) { return seed }
        return UInt64.random(in: 0...UInt64.max)
    }

    /// `seed N (RAWBLE_TEST_SEED=N replays it)`.
    public static func replayHint(_ seed: UInt64) -> String {
        "seed \(seed) (RAWBLE_TEST_SEED=\(seed) replays it)"
    }

    static func parse(_ text: String) -> UInt64? {
        let trimmed = String(text.filter { !$0.isWhitespace })
        if trimmed.hasPrefix("0x") || trimmed.hasPrefix("0X") { return UInt64(trimmed.dropFirst(2), radix: 16) }
        return UInt64(trimmed)
    }
}
