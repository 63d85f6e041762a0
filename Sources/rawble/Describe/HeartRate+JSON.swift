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

    /// One line for a person: `72 bpm, contact detected, energy 8 kJ, RR 548 ms 551 ms`.
    var summary: String {
        var parts = ["\(bpm) bpm", "contact \(contact.name)"]
        if let energyExpended { parts.append("energy \(energyExpended) kJ") }
        if !rrIntervals.isEmpty {
            parts.append("RR " + rrIntervals.map { formatMilliseconds($0.milliseconds) }.joined(separator: " "))
        }
        return parts.joined(separator: ", ")
    }
}

/// `547.9 ms` with one decimal, without Foundation's formatters.
func formatMilliseconds(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10) ms"
}
