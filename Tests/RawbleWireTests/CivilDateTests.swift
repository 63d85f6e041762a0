import RawbleWire
import Testing

@Suite("CivilDate: days since 1970 and back")
struct CivilDateTests {
    @Test("known days (checked with Python's datetime): the epoch, a leap day, today, the day before the epoch, 1600 and 9999",
          arguments: [
              (CivilDate(year: 1970, month: 1, day: 1), Int64(0)),
              (CivilDate(year: 2000, month: 2, day: 29), Int64(11_016)),
              (CivilDate(year: 2026, month: 11, day: 24), Int64(20_781)),
              (CivilDate(year: 1969, month: 12, day: 31), Int64(-1)),
              (CivilDate(year: 1600, month: 3, day: 1), Int64(-135_080)),
              (CivilDate(year: 9999, month: 12, day: 31), Int64(2_932_896)),
          ] as [(CivilDate, Int64)])
    func knownDays(date: CivilDate, days: Int64) {
        #expect(date.daysSince1970 == days)
        #expect(CivilDate(daysSince1970: days) == date)
    }

    @Test("every day from 1600 to 2400 goes there and back, one day after another")
    func roundTrip() {
        var previous = CivilDate(daysSince1970: -135_081)
        for days in Int64(-135_080)...157_000 {
            let date = CivilDate(daysSince1970: days)
            #expect(date.daysSince1970 == days)
            let next = previous.day + 1 == date.day && previous.month == date.month
                || date.day == 1 && (previous.month % 12 + 1 == date.month)
            if !next { Issue.record("\(previous) → \(date)") }
            previous = date
        }
    }

    @Test("seconds split into whole days and the second of the day, before the epoch too")
    func split() {
        #expect(CivilDate.split(unixSeconds: 0) == (0, 0))
        #expect(CivilDate.split(unixSeconds: 86_399) == (0, 86_399))
        #expect(CivilDate.split(unixSeconds: -1) == (-1, 86_399))
        #expect(CivilDate.split(unixSeconds: -86_400) == (-1, 0))
    }
}
