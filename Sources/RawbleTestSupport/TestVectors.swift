import RawbleWire
import Testing

/// The bytes a hex literal in a test spells: `"0A 1B"`, `"0a1b"`, `"0A:1B"` and `"0x0A1B"` are
/// the same two bytes (``Hex/decode(_:)`` reads them).
///
/// A literal that is not hex is a bug in the test, not an input: it is recorded as an issue of
/// the running test, naming the literal and the line that wrote it, and gives no bytes, so the
/// test fails where the typo is instead of trapping the whole test process.
public func bytes(_ hex: String, sourceLocation: SourceLocation = #_sourceLocation) -> [UInt8] {
    do {
        return try Hex.decode(hex)
    } catch {
        Issue.record("not a hex test vector: \"\(hex)\": \(error)", sourceLocation: sourceLocation)
        return []
    }
}

/// Waits until `condition` holds, asking again every `interval`, at most `seconds`: for state a
/// test cannot await directly (a counter another task updates). `true` once it holds, `false`
/// when the time ran out; a test then `#expect`s it, so a condition that never comes fails the
/// test instead of hanging it.
public func eventually(
    seconds: Double = 5, interval: Duration = .milliseconds(2), _ condition: @Sendable () async -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return await condition()
}

extension Tag {
    /// Suites that start Google Bumble (a virtual controller, peripherals, Bumble's GATT client)
    /// or its venv's NeuroKit2: `swift test --skip-build --filter tag:bumble` runs them, and
    /// `RAWBLE_TESTS_WITHOUT_BUMBLE=1` deselects them.
    @Tag public static var bumble: Self
    /// Suites that boot a real Linux kernel under qemu (`Scripts/vm-test`): `Scripts/test` runs
    /// them alone, after the others (`--filter tag:vm`, and `--skip tag:vm` for the rest).
    @Tag public static var vm: Self
}
