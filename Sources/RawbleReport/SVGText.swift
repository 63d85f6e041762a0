import RawbleWire

/// Text for an SVG document: XML escaping, numbers without Foundation, nice axis ticks, dates.
enum SVGText {
    /// `text` safe inside an XML element or attribute: `& < > " '` escaped, and the characters
    /// XML 1.0 forbids (control characters but tab and newlines, U+FFFE, U+FFFF) dropped — a
    /// device name comes from the peer and may hold anything.
    static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            case "\t", "\n", "\r": result.unicodeScalars.append(" ")
            default:
                if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF
                    || (0x7F...0x9F).contains(scalar.value) { continue }
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `value` with at most `places` decimals, trailing zeros dropped (`12.5`, `-3`, `0.25`);
    /// values beyond ±10^12 and non-finite ones are clamped (never a trap).
    static func number(_ value: Double, places: Int = 1) -> String {
        let places = min(max(places, 0), 6)
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let clamped = value.isFinite ? min(max(value, -1e12), 1e12) : 0
        var units = Int64((clamped * scale).rounded())
        var decimals = places
        while decimals > 0, units % 10 == 0 {
            units /= 10
            decimals -= 1
        }
        let negative = units < 0
        let digits = String(units.magnitude)
        guard decimals > 0 else { return (negative ? "-" : "") + digits }
        let padded = String(repeating: "0", count: max(0, decimals + 1 - digits.count)) + digits
        let split = padded.index(padded.endIndex, offsetBy: -decimals)
        return (negative ? "-" : "") + padded[..<split] + "." + padded[split...]
    }

    /// `1,234,567`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result += "," }
            result.append(digit)
        }
        return (value < 0 ? "-" : "") + result
    }

    /// The "nice" number (1, 2, 5 × 10^k) closest to `value` (Heckbert, Graphics Gems 1990).
    static func niceStep(_ value: Double) -> Double {
        guard value.isFinite, value > 0 else { return 1 }
        var power = 1.0
        var guardCount = 0
        while power * 10 <= value, guardCount < 400 { power *= 10; guardCount += 1 }
        while power > value, guardCount < 400 { power /= 10; guardCount += 1 }
        let fraction = value / power
        let nice: Double = fraction < 1.5 ? 1 : fraction < 3 ? 2 : fraction < 7 ? 5 : 10
        return nice * power
    }

    /// Ticks for a value axis over `low...high`: the range widened to whole steps, and the step.
    static func ticks(_ low: Double, _ high: Double, count: Int = 5) -> (low: Double, high: Double, step: Double) {
        var low = low.isFinite ? low : 0
        var high = high.isFinite ? high : 1
        if high <= low { low -= 1; high = low + 2 }
        let step = niceStep((high - low) / Double(max(count, 1)))
        return ((low / step).rounded(.down) * step, (high / step).rounded(.up) * step, step)
    }

    /// Decimals a tick label at `step` needs (0 for 1 and above, 1 for 0.5, …).
    static func places(for step: Double) -> Int {
        var places = 0
        var scaled = step
        while places < 6, scaled < 0.999 { scaled *= 10; places += 1 }
        return places
    }

    /// A time axis's step in seconds: the first of 1 s … 1 day that gives at most `count` ticks.
    static func timeStep(span: Double, count: Int = 8) -> Double {
        let steps: [Double] = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400]
        for step in steps where span / step <= Double(count) { return step }
        return niceStep(span / Double(count) / 86_400) * 86_400
    }

    /// `h:mm` (or `h:mm:ss` when `seconds` is asked for) of a number of seconds, e.g. `1:05`;
    /// `clock`: wrapped to the day and zero-padded (`07:05`).
    static func clockText(_ seconds: Double, withSeconds: Bool, clock: Bool) -> String {
        let total = Int64(min(max(seconds, -1e12), 1e12).rounded(.down))
        var value = clock ? ((total % 86_400) + 86_400) % 86_400 : total
        let negative = value < 0
        value = value.magnitude > 0 ? Int64(value.magnitude) : 0
        let hours = value / 3600
        let minutes = value / 60 % 60
        var text = (clock && hours < 10 ? "0" : "") + "\(hours):" + (minutes < 10 ? "0" : "") + "\(minutes)"
        if withSeconds {
            let secs = value % 60
            text += ":" + (secs < 10 ? "0" : "") + "\(secs)"
        }
        return (negative ? "-" : "") + text
    }

    /// `2026-11-22 05:14` for `seconds` since 1970 (already shifted to local time by the caller).
    static func dateTime(_ seconds: Double) -> String {
        let total = Int64(min(max(seconds, -1e11), 1e11).rounded(.down))
        let (days, secondOfDay) = CivilDate.split(unixSeconds: total)
        let date = CivilDate(daysSince1970: days)
        let (year, month, day) = (date.year, date.month, date.day)
        func two(_ value: Int64) -> String { (value < 10 ? "0" : "") + "\(value)" }
        return "\(year)-\(two(month))-\(two(day)) " + clockText(Double(secondOfDay), withSeconds: false, clock: true)
    }

    /// `UTC`, `UTC+01:00`, `UTC−05:30`.
    static func utcOffsetText(_ seconds: Int) -> String {
        guard seconds != 0 else { return "UTC" }
        let magnitude = min(seconds.magnitude, 86_400)
        let hours = magnitude / 3600
        let minutes = magnitude / 60 % 60
        return "UTC" + (seconds < 0 ? "−" : "+") + (hours < 10 ? "0" : "") + "\(hours):" + (minutes < 10 ? "0" : "") + "\(minutes)"
    }

    /// `1 h 48 min`, `12 min 30 s`, `45 s`.
    static func duration(_ seconds: Double) -> String {
        let total = Int64(min(max(seconds, 0), 1e12).rounded())
        if total >= 3600 { return "\(total / 3600) h \(total / 60 % 60) min" }
        if total >= 60 { return "\(total / 60) min" + (total % 60 == 0 ? "" : " \(total % 60) s") }
        return "\(total) s"
    }
}
