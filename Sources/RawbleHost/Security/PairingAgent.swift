import RawbleWire

/// Who answers a pairing's questions for the user: shows a passkey to type on the peer, asks
/// for the passkey the peer shows, asks whether the peer shows the same six digits (Numeric
/// Comparison). A terminal prompt in the CLI; a test's fixed answers; an embedder's UI.
///
/// Each question belongs to one pairing: when the pairing ends first (the peer gave up, the
/// link went, SMP's 30 s timeout) the answer is dropped. The host waits for an answer no longer
/// than the pairing's own timeout allows.
public protocol PairingAgent: Sendable {
    /// Show `passkey` (six digits, leading zeros kept) for the user to type on `peer`.
    func displayPasskey(_ passkey: UInt32, for peer: DeviceAddress) async
    /// The passkey `peer` shows, as the user typed it (0–999 999); `nil`: the user declined,
    /// and the pairing fails with Passkey Entry Failed.
    func passkey(for peer: DeviceAddress) async -> UInt32?
    /// Whether `peer` shows the same six digits as `number`; `false` fails the pairing with
    /// Numeric Comparison Failed.
    func confirm(_ number: UInt32, for peer: DeviceAddress) async -> Bool
    /// The answer to a Numeric Comparison, saying whether a person compared: an agent that
    /// accepts without anyone looking (an option that always says yes) answers
    /// ``NumericComparisonAnswer/acceptedUnseen``, and the key is then not authenticated. The
    /// host asks this; by default it is ``confirm(_:for:)``'s answer, as a person's.
    func compare(_ number: UInt32, for peer: DeviceAddress) async -> NumericComparisonAnswer
}

/// How a Numeric Comparison was answered.
public enum NumericComparisonAnswer: Hashable, Sendable {
    /// A person saw the same six digits on both devices: the key is authenticated.
    case confirmed
    /// Accepted without a person comparing (a script's or an option's yes): the pairing goes
    /// on, and its key counts as unauthenticated, as Just Works would make it.
    case acceptedUnseen
    /// The digits differ, or the user said no: the pairing fails (Numeric Comparison Failed).
    case declined
}

extension PairingAgent {
    public func compare(_ number: UInt32, for peer: DeviceAddress) async -> NumericComparisonAnswer {
        await confirm(number, for: peer) ? .confirmed : .declined
    }
}

/// Answers for tests that stand in for a person: a fixed passkey typed when asked, and a fixed
/// answer to comparisons, taken as a person's (an accepted comparison is authenticated; a
/// script that accepts unseen should answer ``NumericComparisonAnswer/acceptedUnseen`` through
/// its own agent). Without a passkey, passkey entry is declined. The passkey this side shows is
/// a new random one each pairing.
public struct FixedPairingAgent: PairingAgent {
    public var passkey: UInt32?
    public var acceptsComparison: Bool

    public init(passkey: UInt32? = nil, acceptsComparison: Bool = true) {
        self.passkey = passkey
        self.acceptsComparison = acceptsComparison
    }

    public func displayPasskey(_ passkey: UInt32, for peer: DeviceAddress) async {}

    public func passkey(for peer: DeviceAddress) async -> UInt32? { passkey }

    public func confirm(_ number: UInt32, for peer: DeviceAddress) async -> Bool { acceptsComparison }
}
