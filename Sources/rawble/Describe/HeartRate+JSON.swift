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

extension HeartRateMeasurement {
    /// Appends the `measurement` event's JSON line (and its newline) to `bytes`: the same text as
    /// `JSON.object([("event", "measurement"), ("time", …)] + json(raw:) fields).serialized()`,
    /// written in place into the caller's reused buffer (the hot path of `hr --json`/`--jsonl`:
    /// no `JSON` value, no `String` per field, the calendar computed once per second).
    func appendJSONLine(time unixMicroseconds: Int64, raw: [UInt8], to bytes: inout [UInt8],
                        timestamps: inout TimestampCache) {
        var contact = contact.name
        // Fixed text and numbers fit in 160 bytes; an RR interval takes at most 16 ("65.9990234375,").
        let bound = 160 + contact.utf8.count + rrIntervals.count * 16 + raw.count * 2
        LineWriter.append(to: &bytes, bound: bound) { line in
            line.write(#"{"event":"measurement","time":""#)
            timestamps.write(unixMicroseconds: unixMicroseconds, to: &line)
            line.write(#"","bpm":"#)
            line.writeDecimal(Int64(bpm))
            line.write(#","contact":""#)
            contact.withUTF8 { line.write(contentsOf: $0) }
            line.write(#"","energyExpended":"#)
            if let energyExpended {
                line.writeDecimal(Int64(energyExpended))
            } else {
                line.write("null")
            }
            line.write(#","rrIntervals":["#)
            for (index, interval) in rrIntervals.enumerated() {
                if index > 0 { line.write(UInt8(ascii: ",")) }
                line.writeSeconds(units: interval.rawValue)
            }
            line.write(#"],"raw":""#)
            line.writeHex(raw)
            line.write("\"}\n")
        }
    }

    /// ``appendJSONLine(time:raw:to:timestamps:)`` for a single line.
    func appendJSONLine(time unixMicroseconds: Int64, raw: [UInt8], to bytes: inout [UInt8]) {
        var timestamps = TimestampCache()
        appendJSONLine(time: unixMicroseconds, raw: raw, to: &bytes, timestamps: &timestamps)
    }
}
