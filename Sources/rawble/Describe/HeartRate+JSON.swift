import RawbleWire

extension HeartRateMeasurement {
    /// The fields `decode hrm --json` and `hr` measurements share: `bpm`, `contact`,
    /// `energyExpended` (kJ or null), `rrIntervals` (seconds), `raw` (hex).
    func json(raw: some Sequence<UInt8>) -> JSON {
        .object([
            ("bpm", JSON(bpm)),
            ("contact", .string(contact.name)),
            ("energyExpended", energyExpended.map { JSON($0) } ?? .null),
            ("rrIntervals", .array(rrIntervals.map { .double($0.seconds) })),
            ("raw", .hex(raw)),
        ])
    }

    /// One line for a person: `72 bpm, contact detected, energy 8 kJ, RR 548.0 ms 551.0 ms`
    /// (the wire layer's, which `read` and `notify` print too).
    var summary: String { readableSummary }
}
