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

extension HeartRateMeasurement {
    /// Appends the `measurement` event's JSON line (and its newline) to `bytes`: the same text as
    /// `JSON.object([("event", "measurement"), ("time", …)] + json(raw:) fields).serialized()`,
    /// written digit by digit into the caller's reused buffer (the hot path of `hr --json`/`--jsonl`:
    /// no `JSON` value, no `String` per field).
    func appendJSONLine(time unixMicroseconds: Int64, raw: [UInt8], to bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"{"event":"measurement","time":""#.utf8)
        appendISO8601(unixMicroseconds: unixMicroseconds, to: &bytes)
        bytes.append(contentsOf: #"","bpm":"#.utf8)
        appendPadded(Int64(bpm), width: 1, to: &bytes)
        bytes.append(contentsOf: #","contact":""#.utf8)
        bytes.append(contentsOf: contact.name.utf8)
        bytes.append(contentsOf: #"","energyExpended":"#.utf8)
        if let energyExpended {
            appendPadded(Int64(energyExpended), width: 1, to: &bytes)
        } else {
            bytes.append(contentsOf: "null".utf8)
        }
        bytes.append(contentsOf: #","rrIntervals":["#.utf8)
        for (index, interval) in rrIntervals.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            // As JSON.double prints it: whole seconds without a fraction, others as Swift does.
            if interval.rawValue % 1024 == 0 {
                appendPadded(Int64(interval.rawValue / 1024), width: 1, to: &bytes)
            } else {
                bytes.append(contentsOf: interval.seconds.description.utf8)
            }
        }
        bytes.append(contentsOf: #"],"raw":""#.utf8)
        let digits: StaticString = "0123456789abcdef"
        digits.withUTF8Buffer { digits in
            for byte in raw {
                bytes.append(digits[Int(byte >> 4)])
                bytes.append(digits[Int(byte & 0x0F)])
            }
        }
        bytes.append(contentsOf: "\"}\n".utf8)
    }
}
