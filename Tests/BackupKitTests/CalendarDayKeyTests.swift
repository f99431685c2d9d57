import BackupKit
import Foundation
import Testing

@Suite struct CalendarDayKeyTests {
    /// Every day a document may hold, 2000-01-01 … 2199-12-31: text and parts round-trip, and
    /// the parts are the ones Foundation's Gregorian calendar gives for that UTC midnight.
    @Test("every document day round-trips and agrees with Foundation's calendar")
    func everyDocumentDay() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        let first = try #require(DayKey("2000-01-01"))
        let last = try #require(DayKey("2199-12-31"))
        #expect(first.days(to: last) == 73_048)
        var mismatches: [String] = []
        for offset in 0...first.days(to: last) {
            let day = first.adding(days: offset)
            let parts = calendar.dateComponents(
                [.year, .month, .day],
                from: Date(timeIntervalSince1970: Double(day.dayNumber) * 86_400))
            let (year, month, dayOfMonth) = day.parts
            if parts.year != year || parts.month != month || parts.day != dayOfMonth
                || DayKey(day.description) != day
                || DayKey(year: year, month: month, day: dayOfMonth) != day,
                mismatches.count < 10
            {
                mismatches.append("\(day) (day \(day.dayNumber)): Calendar says \(parts)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
    }

    @Test(
        "text that is not a document day",
        arguments: [
            "2026-02-30", "2026-13-01", "2026-00-10", "2026-04-31", "2026-01-00", "2100-02-29",
            "1999-12-31", "2200-01-01", "2026-1-01", "2026/01/01", " 2026-01-01", "2026-01-01 ",
            "2026-01-01T00:00:00Z", "", "２０２６-01-01", "+026-01-01",
        ])
    func rejected(text: String) {
        #expect(DayKey(text) == nil)
    }

    @Test(
        "leap days exist exactly in leap years",
        arguments: [
            ("2000-02-29", true), ("2024-02-29", true), ("2026-02-29", false),
            ("2100-02-29", false),
            ("2196-02-29", true),
        ])
    func leapDays(text: String, exists: Bool) {
        #expect((DayKey(text) != nil) == exists)
    }

    @Test(
        "whole days between dates come from their parts",
        arguments: [
            ("2026-02-28", "2026-03-01", 1), ("2024-02-28", "2024-03-01", 2),
            ("2026-12-31", "2027-01-01", 1), ("2026-03-08", "2026-03-07", -1),
            ("2026-03-01", "2026-03-30", 29), ("1970-01-01", "2026-03-08", 20_520),
        ])
    func daysBetween(from: String, to: String, days: Int) throws {
        // From parts, not text: 1970 is outside the years a document may hold.
        let numbers = from.split(separator: "-").compactMap { Int($0) }
        try #require(numbers.count == 3)
        let start = try #require(DayKey(year: numbers[0], month: numbers[1], day: numbers[2]))
        let end = try #require(DayKey(to))
        #expect(start.days(to: end) == days)
        #expect(start.adding(days: days) == end)
    }
}
