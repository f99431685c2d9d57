import BackupKit
import Foundation
import Testing

// Every zone the system knows, every clock change from 2000 to 2037, minute by minute for
// three hours either side, for every day start a document allows (0…4). The expected day
// comes from Foundation's Calendar (the local date and hour at the instant), independently
// of `DayKey(for:in:dayStartHour:)`, which only asks the zone for its UTC offset: a day is
// the local date, minus one when the local hour is before the day start, and once the wall
// clock has shown a day it stays shown until the next (a clock falling back across the day
// start must not take the day back). Across each transition, the keys half a day either side
// are as many days apart as the local dates there, whatever the hours between.
//
// Cost: about 13,000 transitions × 362 instants × 5 day starts; one Calendar call per
// instant serves all five day starts.

private let sweepStart = Date(timeIntervalSince1970: 946_684_800)  // 2000-01-01T00:00:00Z
private let sweepEnd = Date(timeIntervalSince1970: 2_145_916_800)  // 2038-01-01T00:00:00Z
private let window: Int64 = 3 * 3_600_000
private let minute = 60_000
private let dayStartHours = 0...4

/// The zone's transitions in the sweep's years, in order.
private func transitions(of zone: TimeZone) -> [Timestamp] {
    var result: [Timestamp] = []
    var cursor = sweepStart
    while let next = zone.nextDaylightSavingTimeTransition(after: cursor), next < sweepEnd {
        result.append(Timestamp(date: next))
        cursor = next
    }
    return result
}

/// The local date at `instant`, shifted back a day before `dayStartHour`, by Calendar.
private struct WallClock {
    let calendar: Calendar

    init(_ zone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        self.calendar = calendar
    }

    /// The local date's key and the local hour.
    func read(_ instant: Timestamp) -> (date: DayKey?, hour: Int) {
        let parts = calendar.dateComponents([.year, .month, .day, .hour], from: instant.date)
        guard let year = parts.year, let month = parts.month, let day = parts.day,
            let hour = parts.hour
        else { return (nil, 0) }
        return (DayKey(year: year, month: month, day: day), hour)
    }

    /// A 23- or 25-hour day is still one day: from 12 hours before a transition to 12 hours
    /// after, the keys (days starting at midnight) are as many days apart as the local dates
    /// Calendar reads there, counted from their year/month/day parts (so Samoa's 24 hours
    /// from Thursday noon to Saturday noon are two days). Nil when they are.
    func dayGapMismatch(around transition: Timestamp, in zone: TimeZone) -> String? {
        let halfDay: Int64 = 12 * 3_600_000
        let before = transition.adding(milliseconds: -halfDay)
        let after = transition.adding(milliseconds: halfDay)
        guard let first = read(before).date, let last = read(after).date else {
            return "\(before) → \(after): Calendar gave no date"
        }
        let keyed = DayKey(for: before, in: zone, dayStartHour: 0)
            .days(to: DayKey(for: after, in: zone, dayStartHour: 0))
        return keyed == first.days(to: last)
            ? nil : "\(before) → \(after): keys \(keyed) days apart, dates \(first) → \(last)"
    }
}

@Suite struct CalendarTransitionSweepTests {
    @Test("the zone database has the zones and transitions the sweep relies on")
    func databaseIsThere() {
        let zones = TimeZone.knownTimeZoneIdentifiers
        #expect(zones.count > 300)
        let named = [
            "America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kathmandu",
            "Pacific/Apia",
        ]
        for name in named {
            #expect(zones.contains(name), "\(name) missing from the zone database")
        }
        let newYork = TimeZone(identifier: "America/New_York").map(transitions(of:)) ?? []
        #expect(newYork.count == 76, "New York changes its clocks twice a year, 2000–2037")
    }

    @Test(
        "day keys never go backwards and change exactly when the wall clock passes the day start",
        arguments: TimeZone.knownTimeZoneIdentifiers)
    func sweep(zoneName: String) throws {
        let zone = try #require(TimeZone(identifier: zoneName))
        let wallClock = WallClock(zone)
        var mismatches: [String] = []
        var highest = [DayKey?](repeating: nil, count: dayStartHours.count)
        var previousEnd = Timestamp(millisecondsSince1970: .min)
        for transition in transitions(of: zone) {
            let start = transition.adding(milliseconds: -window)
            // Windows closer than six hours run on from each other; otherwise the wall clock
            // three hours before a transition has shown nothing later than itself.
            if start > previousEnd { highest = highest.map { _ in nil } }
            previousEnd = transition.adding(milliseconds: window)
            if let gap = wallClock.dayGapMismatch(around: transition, in: zone) {
                mismatches.append(gap)
            }
            var instants = stride(from: -window, through: window, by: minute).map {
                transition.adding(milliseconds: $0)
            }
            instants.insert(transition.adding(milliseconds: -1), at: instants.count / 2)
            for instant in instants {
                let (date, hour) = wallClock.read(instant)
                guard let date else {
                    mismatches.append("\(instant): Calendar gave no date")
                    continue
                }
                for dayStartHour in dayStartHours {
                    let shown = hour < dayStartHour ? date.adding(days: -1) : date
                    let expected = max(highest[dayStartHour] ?? shown, shown)
                    highest[dayStartHour] = expected
                    let actual = DayKey(for: instant, in: zone, dayStartHour: dayStartHour)
                    if actual != expected, mismatches.count < 10 {
                        mismatches.append(
                            "\(instant) start \(dayStartHour): got \(actual), expected \(expected)")
                    }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(zoneName): \(mismatches.joined(separator: "; "))")
    }
}
