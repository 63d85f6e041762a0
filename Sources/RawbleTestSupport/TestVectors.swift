import RawbleWire
import Testing

/// The bytes a hex literal in a test spells: `"0A 1B"`, `"0a1b"`, `"0A:1B"` and `"0x0A1B"` are
/// the same two bytes (`Hex.decode(_:)` reads them).
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

/// `bytes` as a test writes them: two upper-case hex digits each, separated by spaces
/// (`"0A 1B"`), the form ``bytes(_:sourceLocation:)`` reads back.
public func hexString(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map(hexByte).joined(separator: " ")
}

/// One byte as two upper-case hex digits (`"0A"`).
public func hexByte(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16, uppercase: true)
    return digits.count == 1 ? "0" + digits : digits
}

/// The error a throwing decode gives, or `nil` when it succeeds: for a test that expects a
/// particular `WireError` (`#expect(wireError { try ATTPDU.decode(input) } == …)`).
public func wireError<T>(_ body: () throws(WireError) -> T) -> WireError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}

/// `count` bytes counting up from `from` (wrapping at 256): a value whose every byte says where
/// it sits, so a split or reordered value shows in the test's output.
public func pattern(_ count: Int, from: Int = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: from + $0) }
}

/// Waits until `condition` holds, asking again every `interval`, at most `seconds`: for state a
/// test cannot await directly (a counter another task updates). `true` once it holds, `false`
/// when the time ran out; a test then `#expect`s it, so a condition that never comes fails the
/// test instead of hanging it. The default bound is generous because it is a guard against a
/// hang, not a timing: a condition that holds returns at once, and on a two-core machine
/// starved by parallel builds a task that was due at once has waited over 5 s.
public func eventually(
    seconds: Double = 30, interval: Duration = .milliseconds(2), _ condition: @Sendable () async -> Bool
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
    /// or use its venv's NeuroKit2; `RAWBLE_TESTS_WITHOUT_BUMBLE=1` deselects them. With a
    /// toolchain whose `swift test` filters by tag (swift-testing's `tag:` filter, newer than
    /// Swift 6.3), `--filter tag:bumble` selects them.
    @Tag public static var bumble: Self
    /// Suites that boot a real Linux kernel under qemu (`Scripts/vm-test`). `Scripts/test` runs
    /// them alone, after the others; on Swift 6.3 it selects them by name (`VMTests`, which a
    /// test keeps in step with this tag), on newer toolchains `--filter tag:vm` does.
    @Tag public static var vm: Self
}
