import RawbleWire

/// One line of a JSON lines session file, read just far enough: the keys a measurement has are
/// parsed, every other value is skipped (nested at most ``maxDepth`` deep). Bytes, no Foundation.
enum JSONLine {
    enum Outcome {
        /// Not one well-formed JSON object; the byte offset where it broke.
        case broken(offset: Int)
        /// A `measurement` event (or an object without `event` that has `bpm` or `raw`).
        case measurement(LineFields)
        /// An `invalid` event: a value the strap sent that did not decode.
        case invalid
        /// Any other event; `disconnected`: it was a `disconnected` event; `strap`: the
        /// `address` it names (a file of several straps).
        case other(disconnected: Bool, strap: ArraySlice<UInt8>?)
    }

    /// Nesting deeper than this is refused as broken (no recursion without bound on hostile input).
    static let maxDepth = 32

    fileprivate struct Broken: Error {
        var index: Int
    }

    static func parse(_ line: ArraySlice<UInt8>) -> Outcome {
        var scanner = Scanner(text: line, index: line.startIndex)
        var fields = LineFields()
        var event: ArraySlice<UInt8>?
        var eventIsString = true
        var hasValues = false
        do throws(Broken) {
            try scanner.object { (key: ArraySlice<UInt8>, scanner: inout Scanner) throws(Broken) in
                if FieldText.equals(key, "event") {
                    if scanner.peek == UInt8(ascii: "\"") {
                        event = try scanner.string()
                    } else {
                        eventIsString = false
                        try scanner.skipValue(depth: 0)
                    }
                } else if FieldText.equals(key, "time") {
                    fields.timeSeen = true
                    let text = scanner.peek == UInt8(ascii: "\"") ? try scanner.string() : try scanner.scalar()
                    fields.time = FieldText.microseconds(text)
                } else if FieldText.equals(key, "bpm") {
                    hasValues = true
                    let text = try scanner.scalar()
                    if !FieldText.equals(text, "null") {
                        fields.bpm = FieldText.uint16(text)
                        if fields.bpm == nil { fields.fail(.badField("bpm")) }
                    }
                } else if FieldText.equals(key, "contact") {
                    if scanner.peek == UInt8(ascii: "\"") {
                        fields.contact = FieldText.contact(try scanner.string())
                        if fields.contact == nil { fields.fail(.badField("contact")) }
                    } else {
                        let text = try scanner.scalar()
                        if !FieldText.equals(text, "null") { fields.fail(.badField("contact")) }
                    }
                } else if FieldText.equals(key, "energyExpended") {
                    let text = try scanner.scalar()
                    if FieldText.equals(text, "null") {
                        fields.energy = .some(nil)
                    } else if let value = FieldText.uint16(text) {
                        fields.energy = value
                    } else {
                        fields.fail(.badField("energyExpended"))
                    }
                } else if FieldText.equals(key, "rrIntervals") {
                    fields.rrIntervals = try scanner.secondsArray(&fields)
                } else if FieldText.equals(key, "address"), scanner.peek == UInt8(ascii: "\"") {
                    fields.strap = try scanner.string()
                } else if FieldText.equals(key, "name"), scanner.peek == UInt8(ascii: "\"") {
                    fields.strapName = try scanner.string()
                } else if FieldText.equals(key, "raw") {
                    hasValues = true
                    if scanner.peek == UInt8(ascii: "\"") {
                        let text = try scanner.string()
                        if !text.isEmpty {
                            fields.raw = FieldText.hex(text)
                            if fields.raw == nil { fields.fail(.badField("raw")) }
                        }
                    } else {
                        try scanner.skipValue(depth: 0)
                    }
                } else {
                    try scanner.skipValue(depth: 0)
                }
            }
        } catch {
            return .broken(offset: error.index - line.startIndex)
        }
        guard eventIsString else { return .other(disconnected: false, strap: nil) }
        guard let event else { return hasValues ? .measurement(fields) : .other(disconnected: false, strap: nil) }
        if FieldText.equals(event, "measurement") { return .measurement(fields) }
        if FieldText.equals(event, "invalid") { return .invalid }
        return .other(disconnected: FieldText.equals(event, "disconnected"), strap: fields.strap)
    }

    /// A cursor over the line; every method either advances past what it read or throws
    /// ``Broken`` at the offending byte.
    fileprivate struct Scanner {
        let text: ArraySlice<UInt8>
        var index: Int

        var peek: UInt8? { index < text.endIndex ? text[index] : nil }

        mutating func skipSpace() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func consume(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            index += 1
            return true
        }

        mutating func expect(_ byte: UInt8) throws(Broken) {
            guard consume(byte) else { throw Broken(index: index) }
        }

        /// Reads the JSON object that is the whole line: `member` is called with each key and
        /// the scanner at its value, which it reads or skips. Throws ``Broken`` where it breaks.
        mutating func object(_ member: (ArraySlice<UInt8>, inout Scanner) throws(Broken) -> Void) throws(Broken) {
            try expect(UInt8(ascii: "{"))
            skipSpace()
            if !consume(UInt8(ascii: "}")) {
                while true {
                    skipSpace()
                    let key = try string()
                    skipSpace()
                    try expect(UInt8(ascii: ":"))
                    skipSpace()
                    try member(key, &self)
                    skipSpace()
                    if consume(UInt8(ascii: "}")) { break }
                    try expect(UInt8(ascii: ","))
                }
            }
            skipSpace()
            guard index == text.endIndex else { throw Broken(index: index) }
        }

        /// A string's contents between its quotes, escapes left as written (the keys and values
        /// this reader compares never need them); control characters are refused as JSON does.
        mutating func string() throws(Broken) -> ArraySlice<UInt8> {
            try expect(UInt8(ascii: "\""))
            let start = index
            while let byte = peek {
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return text[start..<(index - 1)]
                case UInt8(ascii: "\\"):
                    index += 1
                    guard let escaped = peek else { throw Broken(index: index) }
                    index += 1
                    if escaped == UInt8(ascii: "u") {
                        for _ in 0..<4 {
                            guard let digit = peek, digit.isHexDigit else { throw Broken(index: index) }
                            index += 1
                        }
                    } else if !"\"\\/bfnrt".utf8.contains(escaped) {
                        throw Broken(index: index - 1)
                    }
                case 0..<0x20:
                    throw Broken(index: index)
                default:
                    index += 1
                }
            }
            throw Broken(index: index)
        }

        /// A number, `true`, `false` or `null`, as its text (checked by whoever reads it).
        mutating func scalar() throws(Broken) -> ArraySlice<UInt8> {
            let start = index
            while let byte = peek, byte.isScalarByte { index += 1 }
            guard index > start else { throw Broken(index: index) }
            return text[start..<index]
        }

        /// `[0.548, 0.551]` (seconds) as milliseconds; `null` as nil. A value that is not a
        /// finite, non-negative number makes the field bad (the line still parses).
        mutating func secondsArray(_ fields: inout LineFields) throws(Broken) -> [Double]? {
            if peek != UInt8(ascii: "[") {
                let text = try scalar()
                if !FieldText.equals(text, "null") { fields.fail(.badField("rrIntervals")) }
                return nil
            }
            index += 1
            var values: [Double] = []
            skipSpace()
            if consume(UInt8(ascii: "]")) { return values }
            while true {
                skipSpace()
                let text = try scalar()
                // In ms, still finite: 1e308 s is a number but no interval.
                if let seconds = FieldText.number(text), seconds >= 0, (seconds * 1000).isFinite {
                    values.append(seconds * 1000)
                } else {
                    fields.fail(.badField("rrIntervals"))
                }
                skipSpace()
                if consume(UInt8(ascii: "]")) { return values }
                try expect(UInt8(ascii: ","))
            }
        }

        /// Any JSON value, skipped.
        mutating func skipValue(depth: Int) throws(Broken) {
            guard depth < JSONLine.maxDepth else { throw Broken(index: index) }
            switch peek {
            case UInt8(ascii: "\"")?:
                _ = try string()
            case UInt8(ascii: "{")?:
                index += 1
                skipSpace()
                if consume(UInt8(ascii: "}")) { return }
                while true {
                    skipSpace()
                    _ = try string()
                    skipSpace()
                    try expect(UInt8(ascii: ":"))
                    skipSpace()
                    try skipValue(depth: depth + 1)
                    skipSpace()
                    if consume(UInt8(ascii: "}")) { return }
                    try expect(UInt8(ascii: ","))
                }
            case UInt8(ascii: "[")?:
                index += 1
                skipSpace()
                if consume(UInt8(ascii: "]")) { return }
                while true {
                    skipSpace()
                    try skipValue(depth: depth + 1)
                    skipSpace()
                    if consume(UInt8(ascii: "]")) { return }
                    try expect(UInt8(ascii: ","))
                }
            default:
                _ = try scalar()
            }
        }
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }

    /// A byte that can be part of a JSON number or literal.
    fileprivate var isScalarByte: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self)
            || self == UInt8(ascii: "-") || self == UInt8(ascii: "+") || self == UInt8(ascii: ".")
            || self == UInt8(ascii: "E")
    }
}

// MARK: - ECG session lines

/// What one line of an ECG session file says, field by field (`nil`: the line lacks the field;
/// `typeText`: the `type` as written).
struct ECGLineFields {
    var time: Int64?
    var deviceTime: UInt64?
    var type: ArraySlice<UInt8>?
    var microvolts: Int32?
    var x: Int32?
    var y: Int32?
    var z: Int32?
    var raw: [UInt8]?
    /// A file of several H10s: the strap's address (`strap`, `address`) and name (`strap_name`, `name`).
    var strap: ArraySlice<UInt8>?
    var strapName: ArraySlice<UInt8>?
    /// A key only `rawble hr`'s files have (`bpm`, `event`): the line is of the other kind.
    var heartRateKey = false
    /// The first field that is there but bad.
    var problem: SessionLineProblem?

    mutating func fail(_ problem: SessionLineProblem) {
        if self.problem == nil { self.problem = problem }
    }

    /// The record the line holds, or why it holds none.
    func record(line: Int) -> Result<ECGSessionRecord, SessionLineProblem> {
        if let problem { return .failure(problem) }
        guard let type else { return .failure(heartRateKey ? .otherFileKind : .badField("type")) }
        guard let time else { return .failure(.badTime) }
        if FieldText.equals(type, "ecg") {
            guard let deviceTime else { return .failure(.badField("device_time_ns")) }
            guard let microvolts else { return .failure(.badField("uV")) }
            return .success(.ecg(ECGSessionSample(time: time, deviceTime: deviceTime, microvolts: microvolts, line: line)))
        }
        if FieldText.equals(type, "acc") {
            guard let x, let y, let z else { return .failure(.badField(x == nil ? "x" : y == nil ? "y" : "z")) }
            return .success(.acceleration(time: time, deviceTime: deviceTime, x: x, y: y, z: z, line: line))
        }
        if FieldText.equals(type, "hr") {
            guard let raw else { return .failure(.badField("raw")) }
            do {
                let measurement = try HeartRateMeasurement.decode(raw)
                return .success(.heartRate(ECGStrapMeasurement(
                    time: time, bpm: measurement.bpm, rrIntervals: measurement.rrIntervals.map(\.milliseconds), line: line)))
            } catch {
                return .failure(.rawDoesNotDecode(error))
            }
        }
        if FieldText.equals(type, "gap") { return .success(.gap(time: time, line: line)) }
        return .failure(.unknownType(String(decoding: type.prefix(20), as: UTF8.self)))
    }
}

extension JSONLine {
    enum ECGOutcome {
        /// Not one well-formed JSON object; the byte offset where it broke.
        case broken(offset: Int)
        /// An object; its fields.
        case fields(ECGLineFields)
    }

    /// One JSON line of an ECG session (`{"time":…,"deviceTime":…,"type":"ecg","uV":104}`).
    static func parseECG(_ line: ArraySlice<UInt8>) -> ECGOutcome {
        var scanner = Scanner(text: line, index: line.startIndex)
        var fields = ECGLineFields()
        do throws(Broken) {
            try scanner.object { (key: ArraySlice<UInt8>, scanner: inout Scanner) throws(Broken) in
                func integer(_ name: String) throws(Broken) -> Int32? {
                    guard scanner.peek != UInt8(ascii: "\"") else {
                        _ = try scanner.string()
                        fields.fail(.badField(name))
                        return nil
                    }
                    let text = try scanner.scalar()
                    if FieldText.equals(text, "null") { return nil }
                    guard let value = FieldText.int32(text) else {
                        fields.fail(.badField(name))
                        return nil
                    }
                    return value
                }
                if FieldText.equals(key, "time") {
                    let text = scanner.peek == UInt8(ascii: "\"") ? try scanner.string() : try scanner.scalar()
                    fields.time = FieldText.microseconds(text)
                } else if FieldText.equals(key, "deviceTime") {
                    if scanner.peek == UInt8(ascii: "\"") {
                        _ = try scanner.string()
                        fields.fail(.badField("deviceTime"))
                    } else {
                        let text = try scanner.scalar()
                        if !FieldText.equals(text, "null") {
                            fields.deviceTime = FieldText.uint64(text)
                            if fields.deviceTime == nil { fields.fail(.badField("deviceTime")) }
                        }
                    }
                } else if FieldText.equals(key, "type") {
                    if scanner.peek == UInt8(ascii: "\"") {
                        fields.type = try scanner.string()
                    } else {
                        try scanner.skipValue(depth: 0)
                        fields.fail(.badField("type"))
                    }
                } else if FieldText.equals(key, "uV") {
                    fields.microvolts = try integer("uV")
                } else if FieldText.equals(key, "x") {
                    fields.x = try integer("x")
                } else if FieldText.equals(key, "y") {
                    fields.y = try integer("y")
                } else if FieldText.equals(key, "z") {
                    fields.z = try integer("z")
                } else if FieldText.equals(key, "raw") {
                    if scanner.peek == UInt8(ascii: "\"") {
                        let text = try scanner.string()
                        fields.raw = FieldText.hex(text)
                        if fields.raw == nil || text.isEmpty { fields.fail(.badField("raw")) }
                    } else {
                        try scanner.skipValue(depth: 0)
                        fields.fail(.badField("raw"))
                    }
                } else if FieldText.equals(key, "address"), scanner.peek == UInt8(ascii: "\"") {
                    fields.strap = try scanner.string()
                } else if FieldText.equals(key, "name"), scanner.peek == UInt8(ascii: "\"") {
                    fields.strapName = try scanner.string()
                } else {
                    if FieldText.equals(key, "bpm") || FieldText.equals(key, "event") { fields.heartRateKey = true }
                    try scanner.skipValue(depth: 0)
                }
            }
        } catch {
            return .broken(offset: error.index - line.startIndex)
        }
        return .fields(fields)
    }

    /// Whether `line` is a JSON object with a top-level string `type` (an ECG session's line;
    /// `rawble hr`'s lines have `event` instead).
    static func hasTypeKey(_ line: ArraySlice<UInt8>) -> Bool {
        guard case .fields(let fields) = parseECG(line) else { return false }
        return fields.type != nil
    }
}
