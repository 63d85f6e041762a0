/// A date of the proleptic Gregorian calendar, to and from days since 1970-01-01, by Howard
/// Hinnant's algorithms: what the ISO 8601 times of JSON lines, session files and plots need,
/// without Foundation's calendars. Days within ±10⁹ keep every product far inside `Int64`.
public struct CivilDate: Hashable, Sendable {
    public var year: Int64
    /// 1 to 12.
    public var month: Int64
    /// 1 to 31.
    public var day: Int64

    public init(year: Int64, month: Int64, day: Int64) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date `days` after 1970-01-01 (before it when negative).
    public init(daysSince1970 days: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * mp + 2) / 5 + 1
        month = mp < 10 ? mp + 3 : mp - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// Days from 1970-01-01 to this date.
    public var daysSince1970: Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthIndex = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Whole days since 1970-01-01 of `seconds` since then, and the second of that day.
    public static func split(unixSeconds seconds: Int64) -> (days: Int64, secondOfDay: Int64) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        return (days, seconds - days * 86_400)
    }
}
