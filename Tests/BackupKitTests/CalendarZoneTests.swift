import BackupKit
import Foundation
import Testing

// The named zones of FORMAT.md §7, with every expected day worked out by hand from the zone's
// rules (the comment on each case is the local wall clock at the instant). None of these
// depend on the process's TZ; the Makefile runs them again under several TZ values.

struct InstantCase: CustomTestStringConvertible, Sendable {
    var zone: String
    var instant: String
    var dayStartHour: Int
    var expected: String
    var wallClock: String

    var testDescription: String { "\(zone) \(wallClock), day start \(dayStartHour)" }
}

private let instantCases: [InstantCase] = [
    // New York springs forward on Sunday 2026-03-08 at 02:00 EST → 03:00 EDT.
    .init(
        zone: "America/New_York", instant: "2026-03-08T05:40:00Z", dayStartHour: 2,
        expected: "2026-03-07", wallClock: "Sun 00:40 EST"),
    .init(
        zone: "America/New_York", instant: "2026-03-08T06:59:59.999Z", dayStartHour: 2,
        expected: "2026-03-07", wallClock: "Sun 01:59:59.999 EST"),
    .init(
        zone: "America/New_York", instant: "2026-03-08T07:00:00Z", dayStartHour: 2,
        expected: "2026-03-08", wallClock: "Sun 03:00 EDT, 02:00 never happens"),
    // … and falls back on 2026-11-01 at 02:00 EDT → 01:00 EST.
    .init(
        zone: "America/New_York", instant: "2026-11-01T05:59:00Z", dayStartHour: 2,
        expected: "2026-10-31", wallClock: "Sun 01:59 EDT"),
    .init(
        zone: "America/New_York", instant: "2026-11-01T06:30:00Z", dayStartHour: 2,
        expected: "2026-10-31", wallClock: "Sun 01:30 EST, the repeated hour"),
    .init(
        zone: "America/New_York", instant: "2026-11-01T07:00:00Z", dayStartHour: 2,
        expected: "2026-11-01", wallClock: "Sun 02:00 EST"),
    .init(
        zone: "America/New_York", instant: "2026-11-01T03:59:59.999Z", dayStartHour: 0,
        expected: "2026-10-31", wallClock: "Sat 23:59:59.999 EDT"),
    .init(
        zone: "America/New_York", instant: "2026-11-01T04:00:00Z", dayStartHour: 0,
        expected: "2026-11-01", wallClock: "Sun 00:00 EDT"),
    // London: 01:00 GMT → 02:00 BST on 2026-03-29, 02:00 BST → 01:00 GMT on 2026-10-25.
    .init(
        zone: "Europe/London", instant: "2026-03-29T00:59:00Z", dayStartHour: 2,
        expected: "2026-03-28", wallClock: "Sun 00:59 GMT"),
    .init(
        zone: "Europe/London", instant: "2026-03-29T01:00:00Z", dayStartHour: 2,
        expected: "2026-03-29", wallClock: "Sun 02:00 BST"),
    .init(
        zone: "Europe/London", instant: "2026-03-29T01:00:00Z", dayStartHour: 1,
        expected: "2026-03-29", wallClock: "Sun 02:00 BST, 01:00–01:59 skipped"),
    .init(
        zone: "Europe/London", instant: "2026-10-25T00:59:00Z", dayStartHour: 2,
        expected: "2026-10-24", wallClock: "Sun 01:59 BST"),
    .init(
        zone: "Europe/London", instant: "2026-10-25T01:59:00Z", dayStartHour: 2,
        expected: "2026-10-24", wallClock: "Sun 01:59 GMT, the repeated hour"),
    .init(
        zone: "Europe/London", instant: "2026-10-25T02:00:00Z", dayStartHour: 2,
        expected: "2026-10-25", wallClock: "Sun 02:00 GMT"),
    .init(
        zone: "Europe/London", instant: "2026-06-10T00:30:00Z", dayStartHour: 2,
        expected: "2026-06-09", wallClock: "Wed 01:30 BST"),
    // Lord Howe moves its clocks by 30 minutes: 02:00 LHDT (+11) → 01:30 LHST (+10:30) on
    // 2026-04-05, 02:00 LHST → 02:30 LHDT on 2026-10-04.
    .init(
        zone: "Australia/Lord_Howe", instant: "2026-04-04T14:59:00Z", dayStartHour: 2,
        expected: "2026-04-04", wallClock: "Sun 01:59 LHDT"),
    .init(
        zone: "Australia/Lord_Howe", instant: "2026-04-04T15:00:00Z", dayStartHour: 2,
        expected: "2026-04-04", wallClock: "Sun 01:30 LHST, the repeated half hour"),
    .init(
        zone: "Australia/Lord_Howe", instant: "2026-04-04T15:29:00Z", dayStartHour: 2,
        expected: "2026-04-04", wallClock: "Sun 01:59 LHST"),
    .init(
        zone: "Australia/Lord_Howe", instant: "2026-04-04T15:30:00Z", dayStartHour: 2,
        expected: "2026-04-05", wallClock: "Sun 02:00 LHST"),
    .init(
        zone: "Australia/Lord_Howe", instant: "2026-10-03T15:29:00Z", dayStartHour: 2,
        expected: "2026-10-03", wallClock: "Sun 01:59 LHST"),
    .init(
        zone: "Australia/Lord_Howe", instant: "2026-10-03T15:30:00Z", dayStartHour: 2,
        expected: "2026-10-04", wallClock: "Sun 02:30 LHDT"),
    // Kathmandu is UTC+05:45 all year.
    .init(
        zone: "Asia/Kathmandu", instant: "2026-06-09T19:45:00Z", dayStartHour: 2,
        expected: "2026-06-09", wallClock: "Wed 01:30"),
    .init(
        zone: "Asia/Kathmandu", instant: "2026-06-09T20:15:00Z", dayStartHour: 2,
        expected: "2026-06-10", wallClock: "Wed 02:00"),
    .init(
        zone: "Asia/Kathmandu", instant: "2026-06-09T18:14:59.999Z", dayStartHour: 0,
        expected: "2026-06-09", wallClock: "Tue 23:59:59.999"),
    .init(
        zone: "Asia/Kathmandu", instant: "2026-06-09T18:15:00Z", dayStartHour: 0,
        expected: "2026-06-10", wallClock: "Wed 00:00"),
    // Samoa crossed the date line: Thursday 2011-12-29 23:59:59 (-10) → Saturday 2011-12-31
    // 00:00 (+14). With a 2 a.m. day start, those first two hours still belong to Friday.
    .init(
        zone: "Pacific/Apia", instant: "2011-12-30T09:59:59.999Z", dayStartHour: 0,
        expected: "2011-12-29", wallClock: "Thu 23:59:59.999 (-10)"),
    .init(
        zone: "Pacific/Apia", instant: "2011-12-30T10:00:00Z", dayStartHour: 0,
        expected: "2011-12-31", wallClock: "Sat 00:00 (+14)"),
    .init(
        zone: "Pacific/Apia", instant: "2011-12-30T10:00:00Z", dayStartHour: 2,
        expected: "2011-12-30", wallClock: "Sat 00:00 (+14), before the 2 a.m. start"),
    // A clock falling back across the day start does not take the day back (FORMAT.md §7):
    // Troll goes from 03:00 (+2) to 01:00 (+0) on 2026-10-25, and 02:00 passes twice.
    .init(
        zone: "Antarctica/Troll", instant: "2026-10-25T00:30:00Z", dayStartHour: 2,
        expected: "2026-10-25", wallClock: "Sun 02:30 +02"),
    .init(
        zone: "Antarctica/Troll", instant: "2026-10-25T01:30:00Z", dayStartHour: 2,
        expected: "2026-10-25", wallClock: "Sun 01:30 +00, the day has begun already"),
    .init(
        zone: "Antarctica/Troll", instant: "2026-10-26T01:59:00Z", dayStartHour: 2,
        expected: "2026-10-25", wallClock: "Mon 01:59 +00"),
    .init(
        zone: "Antarctica/Troll", instant: "2026-10-26T02:00:00Z", dayStartHour: 2,
        expected: "2026-10-26", wallClock: "Mon 02:00 +00"),
]

struct DayGapCase: CustomTestStringConvertible, Sendable {
    var zone: String
    var from: String
    var to: String
    var hoursBetween: Double
    var days: Int

    var testDescription: String { "\(zone) \(from) → \(to)" }
}

/// Local noon to local noon across a clock change: the hours between differ, the days do not.
private let dayGapCases: [DayGapCase] = [
    .init(
        zone: "America/New_York", from: "2026-03-07T17:00:00Z", to: "2026-03-08T16:00:00Z",
        hoursBetween: 23, days: 1),
    .init(
        zone: "America/New_York", from: "2026-10-31T16:00:00Z", to: "2026-11-01T17:00:00Z",
        hoursBetween: 25, days: 1),
    .init(
        zone: "Europe/London", from: "2026-03-28T12:00:00Z", to: "2026-03-29T11:00:00Z",
        hoursBetween: 23, days: 1),
    .init(
        zone: "Australia/Lord_Howe", from: "2026-04-04T01:00:00Z", to: "2026-04-05T01:30:00Z",
        hoursBetween: 24.5, days: 1),
    .init(
        zone: "Australia/Lord_Howe", from: "2026-10-03T01:30:00Z", to: "2026-10-04T01:00:00Z",
        hoursBetween: 23.5, days: 1),
    .init(
        zone: "Asia/Kathmandu", from: "2026-06-09T06:15:00Z", to: "2026-06-10T06:15:00Z",
        hoursBetween: 24, days: 1),
    // Noon on Thursday the 29th to noon on Saturday the 31st: one day of hours, two dates.
    .init(
        zone: "Pacific/Apia", from: "2011-12-29T22:00:00Z", to: "2011-12-30T22:00:00Z",
        hoursBetween: 24, days: 2),
]

@Suite struct CalendarZoneTests {
    @Test("an instant's day in a pinned zone", arguments: instantCases)
    func dayOfInstant(_ testCase: InstantCase) throws {
        let zone = try StreakFixture.zone(testCase.zone)
        let instant = try StreakFixture.instant(testCase.instant)
        let day = DayKey(for: instant, in: zone, dayStartHour: testCase.dayStartHour)
        #expect(day.description == testCase.expected)
    }

    @Test("23-, 24.5- and 25-hour days are still whole days apart", arguments: dayGapCases)
    func wholeDayGaps(_ testCase: DayGapCase) throws {
        let zone = try StreakFixture.zone(testCase.zone)
        let from = try StreakFixture.instant(testCase.from)
        let to = try StreakFixture.instant(testCase.to)
        let hours = Double(to.millisecondsSince1970 - from.millisecondsSince1970) / 3_600_000
        #expect(hours == testCase.hoursBetween)
        for dayStartHour in 0...4 {
            let first = DayKey(for: from, in: zone, dayStartHour: dayStartHour)
            let second = DayKey(for: to, in: zone, dayStartHour: dayStartHour)
            #expect(first.days(to: second) == testCase.days, "day start \(dayStartHour)")
        }
    }

    @Test("a check-in's day is not its UTC date")
    func utcDateIsNotTheDay() throws {
        let instant = try StreakFixture.instant("2026-03-08T05:40:00Z")
        let utc = try StreakFixture.zone("UTC")
        let newYork = try StreakFixture.zone("America/New_York")
        #expect(DayKey(for: instant, in: utc, dayStartHour: 0).description == "2026-03-08")
        #expect(DayKey(for: instant, in: newYork, dayStartHour: 2).description == "2026-03-07")
    }

    @Test(
        "dates the clock skipped",
        arguments: [
            ("Pacific/Apia", 0, ["2011-12-30"]),
            ("Pacific/Fakaofo", 0, ["2011-12-30"]),
            // With a 2 a.m. start, Friday lasted two hours (Saturday 00:00–02:00 on the clock),
            // and with a 4 a.m. start four: too short to keep a streak through.
            ("Pacific/Apia", 2, ["2011-12-30"]),
            ("Pacific/Apia", 4, ["2011-12-30"]),
            // Clock changes for daylight saving leave 21 to 27 hours: no date is skipped.
            ("America/New_York", 0, []),
            ("America/New_York", 2, []),
            ("Australia/Lord_Howe", 2, []),
            ("Antarctica/Troll", 2, []),
        ])
    func skippedDays(zoneName: String, dayStartHour: Int, expected: [String]) throws {
        let zone = try StreakFixture.zone(zoneName)
        let range = try StreakFixture.day("2011-01-01")...StreakFixture.day("2012-12-31")
        let skipped = DayKey.skippedDays(in: range, timeZone: zone, dayStartHour: dayStartHour)
        #expect(skipped.map(\.description) == expected)
    }

    @Test("a skipped date outside the range is not reported")
    func skippedDaysStayInRange() throws {
        let zone = try StreakFixture.zone("Pacific/Apia")
        let range = try StreakFixture.day("2011-12-31")...StreakFixture.day("2012-01-31")
        #expect(DayKey.skippedDays(in: range, timeZone: zone, dayStartHour: 0).isEmpty)
    }

    @Test("Timestamp and Date round-trip to the millisecond")
    func timestampDateRoundTrip() throws {
        for text in [
            "2000-01-01T00:00:00.000Z", "2026-03-08T05:40:00.123Z", "2199-12-31T23:59:59.999Z",
        ] {
            let stamp = try StreakFixture.instant(text)
            #expect(Timestamp(date: stamp.date) == stamp)
        }
    }
}
