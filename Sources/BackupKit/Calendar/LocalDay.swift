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

    /// A day shorter than this is not scored (`skippedDays`). Clock changes for daylight saving
    /// shorten a day by three hours at most (Antarctica/Casey); crossing the date line takes 24
    /// hours, of which a day start of 0…4 leaves at most four to the date it ate.
    static let shortestScoredDay: Int64 = 12 * 3_600_000

    /// Dates in `range` that the clock jumped over in `timeZone` with this day start, in order:
    /// dates that never happen (Pacific/Apia went from 2011-12-29 23:59:59 straight to
    /// 2011-12-31 00:00) and dates left shorter than half a day (with a 2 a.m. start, Apia's
    /// 2011-12-30 lasted the two hours from 12-31 00:00 to 02:00 on the clock). Nobody can keep
    /// a streak through such a date, so the streak engine treats it like a paused day.
    public static func skippedDays(
        in range: ClosedRange<DayKey>, timeZone: TimeZone, dayStartHour: Int
    ) -> [DayKey] {
        // A day's instants lie within two days of its UTC midnight (offsets stay within
        // ±14 h, and a day starts before the next midnight), so three days either side cover
        // every transition that could shorten a date of the range.
        let margin = 3 * Timestamp.millisecondsPerDay
        let from = Timestamp(
            millisecondsSince1970: Int64(range.lowerBound.dayNumber) * Timestamp.millisecondsPerDay
                - margin)
        let through = Timestamp(
            millisecondsSince1970: Int64(range.upperBound.dayNumber) * Timestamp.millisecondsPerDay
                + margin)
        var skipped = Set<DayKey>()
        var transition = timeZone.nextDaylightSavingTimeTransition(after: from.date)
        while let change = transition, Timestamp(date: change) <= through {
            // Only the dates the transition ends, starts or jumps over change their length.
            let instant = Timestamp(date: change)
            let before = DayKey(
                for: instant.adding(milliseconds: -1), in: timeZone, dayStartHour: dayStartHour)
            let after = DayKey(for: instant, in: timeZone, dayStartHour: dayStartHour)
            for offset in 0...max(0, before.days(to: after)) {
                let day = before.adding(days: offset)
                let length =
                    day.adding(days: 1).start(in: timeZone, dayStartHour: dayStartHour)
                    .millisecondsSince1970
                    - day.start(in: timeZone, dayStartHour: dayStartHour).millisecondsSince1970
                if range.contains(day), length < shortestScoredDay { skipped.insert(day) }
            }
            transition = timeZone.nextDaylightSavingTimeTransition(after: change)
        }
        return skipped.sorted()
    }

    /// The first instant that belongs to this day or a later one. Keys never go backwards, so
    /// a binary search finds it; it is the next day's start too when the clock skipped this one.
    private func start(in timeZone: TimeZone, dayStartHour: Int) -> Timestamp {
        // Two days either side of the UTC midnight hold the start (see `skippedDays`).
        let midnight = Int64(dayNumber) * Timestamp.millisecondsPerDay
        var earlier = midnight - 2 * Timestamp.millisecondsPerDay  // belongs to an earlier day
        var later = midnight + 2 * Timestamp.millisecondsPerDay  // belongs to this day or later
        while later - earlier > 1 {
            let middle = earlier + (later - earlier) / 2
            let key = DayKey(
                for: Timestamp(millisecondsSince1970: middle), in: timeZone,
                dayStartHour: dayStartHour)
            if key < self { earlier = middle } else { later = middle }
        }
        return Timestamp(millisecondsSince1970: later)
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
