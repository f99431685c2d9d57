import Foundation

// Design note: the ONE place where an instant becomes a day.
//
// The zone is asked for a single fact, its offset from UTC at the instant
// (`TimeZone.secondsFromGMT(for:)`); adding it gives the local wall clock as milliseconds on a
// zone-less time line, and from there everything is integer arithmetic on whole days. No UTC
// timestamp is ever formatted, and the process's own zone (`TZ`) is never consulted.
//
//     New York, dayStartHour 2, Sunday 2026-03-08 00:40 EST (05:40Z, the clocks spring
//     forward at 02:00): wall clock 00:40 is before 02:00, so the check-in counts for
//     Saturday 2026-03-07.
//
// A clock that falls back replays part of the night. Where the replayed stretch straddles
// `dayStartHour`, a day that has begun stays begun: the key is the highest one the wall clock
// has shown, so keys never go backwards. Antarctica/Troll falls back from 03:00 to 01:00 every
// October; with a 2 a.m. day start the wall clock passes 02:00 twice that night, and the
// second time the day does not change again. Everywhere else the day changes exactly when
// the wall clock reaches `dayStartHour`.

extension DayKey {
    /// The longest backward clock change this code expects. The zone database's largest since
    /// 2000 is three hours (Antarctica/Casey, 2010-03-05 02:00 → 23:00 the day before).
    static let longestFallBack: Int64 = 4 * 3_600_000

    /// The day `instant` belongs to for someone in `timeZone` whose day starts at
    /// `dayStartHour` (documents allow 0…4): local wall time before that hour belongs to the
    /// previous date, so 01:30 with a 2 a.m. start counts for the night before.
    public init(for instant: Timestamp, in timeZone: TimeZone, dayStartHour: Int) {
        let startOffset = Int64(dayStartHour) * 3_600_000
        let offset = timeZone.secondsFromGMT(for: instant.date)
        var day = DayKey.wallClockDay(instant, offset: offset, startOffset: startOffset)
        // Only a clock that fell back in the last few hours can have shown a later day already.
        // Asking for the zone's transitions is slow, so ask only when the offset then was
        // larger than now; the zone never changes its clocks twice within those hours, so the
        // first transition that lowers the offset is the one.
        var cursor = instant.adding(milliseconds: -DayKey.longestFallBack).date
        guard timeZone.secondsFromGMT(for: cursor) > offset else {
            self = day
            return
        }
        while let change = timeZone.nextDaylightSavingTimeTransition(after: cursor),
            Timestamp(date: change) <= instant
        {
            let justBefore = Timestamp(date: change).adding(milliseconds: -1)
            let offsetBefore = timeZone.secondsFromGMT(for: justBefore.date)
            if offsetBefore > timeZone.secondsFromGMT(for: change) {
                let shown = DayKey.wallClockDay(
                    justBefore, offset: offsetBefore, startOffset: startOffset)
                day = max(day, shown)
                break
            }
            cursor = change
        }
        self = day
    }

    /// The day on the wall clock at `instant`, shifted back by the day's start.
    private static func wallClockDay(
        _ instant: Timestamp, offset: Int, startOffset: Int64
    ) -> DayKey {
        let wall = instant.millisecondsSince1970 + Int64(offset) * 1000 - startOffset
        let days =
            wall >= 0
            ? wall / Timestamp.millisecondsPerDay
            : (wall + 1 - Timestamp.millisecondsPerDay) / Timestamp.millisecondsPerDay
        return DayKey(dayNumber: Int32(truncatingIfNeeded: days))
    }

    /// Dates in `range` that never happen in `timeZone` with this day start, because the clock
    /// jumped over them (Pacific/Apia went from 2011-12-29 23:59:59 straight to 2011-12-31
    /// 00:00). The streak engine treats such a date like a paused day.
    public static func skippedDays(
        in range: ClosedRange<DayKey>, timeZone: TimeZone, dayStartHour: Int
    ) -> [DayKey] {
        // A day's instants lie within two days of its UTC midnight (offsets stay within
        // ±14 h, and a day starts before the next midnight), so three days either side cover
        // every transition that could skip a date of the range.
        let margin = 3 * Timestamp.millisecondsPerDay
        let from = Timestamp(
            millisecondsSince1970: Int64(range.lowerBound.dayNumber) * Timestamp.millisecondsPerDay
                - margin)
        let through = Timestamp(
            millisecondsSince1970: Int64(range.upperBound.dayNumber) * Timestamp.millisecondsPerDay
                + margin)
        var skipped: [DayKey] = []
        var transition = timeZone.nextDaylightSavingTimeTransition(after: from.date)
        while let change = transition, Timestamp(date: change) <= through {
            let instant = Timestamp(date: change)
            let before = DayKey(
                for: instant.adding(milliseconds: -1), in: timeZone, dayStartHour: dayStartHour)
            let after = DayKey(for: instant, in: timeZone, dayStartHour: dayStartHour)
            for offset in stride(from: 1, to: before.days(to: after), by: 1) {
                let day = before.adding(days: offset)
                if range.contains(day) { skipped.append(day) }
            }
            transition = timeZone.nextDaylightSavingTimeTransition(after: change)
        }
        return skipped
    }
}

extension Timestamp {
    /// The instant of `date`, to the nearest millisecond (so that `Timestamp(date: t.date)`
    /// is `t`: a `Date` holds seconds as a `Double`, which cannot hold every millisecond).
    public init(date: Date) {
        self.init(millisecondsSince1970: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }

    /// The same instant as a Foundation `Date`, for the calendar and zone APIs.
    public var date: Date {
        Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000)
    }
}
