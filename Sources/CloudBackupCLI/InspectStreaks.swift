import BackupKit
import Foundation

/// `--today DAY`, `--at T`, `--tz ZONE`: which day `inspect` counts streaks as of. The instant
/// becomes a day only through `DayKey(for:in:dayStartHour:)`, with the zone named here
/// (default: `TZ`, else the system's zone) and the file's `dayStartHour`.
struct StreakOptions {
    var today: DayKey?
    var at: Timestamp?
    /// `--tz`; nil for the process's zone.
    var timeZone: TimeZone?

    init(arguments: inout Arguments) throws(CLIError) {
        today = try arguments.option(
            .today, expecting: "a date like 2026-03-08 (YYYY-MM-DD)", { DayKey($0) })
        at = try arguments.option(
            .at, expecting: "an RFC 3339 UTC time like 2026-03-08T12:00:00Z", { Timestamp($0) })
        timeZone = try arguments.option(
            .tz, expecting: "a time zone name like Europe/London",
            { $0.isEmpty ? nil : try? ZoneSetting.zone($0) })
    }

    /// `--tz`, else the zone `TZ` names as POSIX reads it (`ZoneSetting`), else the system's;
    /// a `TZ` that names no zone is refused rather than replaced.
    func zone(environment: [String: String]) throws(CLIError) -> TimeZone {
        if let timeZone { return timeZone }
        return try ZoneSetting.zone(environment["TZ"] ?? "")
    }

    /// Today in `zone` for someone whose day starts at `dayStartHour`: `--today`, else the day
    /// of `--at`, else the day of `now` (the command's `--now` or the system clock).
    func today(in zone: TimeZone, dayStartHour: Int, now: Timestamp) -> DayKey {
        today ?? DayKey(for: at ?? now, in: zone, dayStartHour: dayStartHour)
    }

    /// Every challenge's report as of `today`; dates `zone` skipped are held against nobody
    /// (`Streaks.report`).
    static func reports(
        for document: BackupDocument, today: DayKey, zone: TimeZone
    ) -> [StreakReport] {
        guard let first = document.challenges.map(\.startDate).min(),
            let last = document.challenges.map(\.endDate).max()
        else { return [] }
        let skipped = DayKey.skippedDays(
            in: first...last, timeZone: zone, dayStartHour: document.settings.dayStartHour)
        return Streaks.reports(for: document, today: today, skippedDays: Set(skipped))
    }
}

/// How `inspect` shows streaks, for people and for `--json`.
enum StreakOutput {
    /// The heading line and two lines per challenge:
    ///
    ///     streaks:     as of 2026-03-08 (America/New_York, days start at 02:00)
    ///       30 days of walks [challenge-1]: day 24 of 30, today not done yet
    ///         current 23 days, longest 23 days, completed 23 of 23 days (100%)
    static func lines(
        _ reports: [StreakReport], today: DayKey, timeZone: TimeZone, dayStartHour: Int
    ) -> [String] {
        let hour = dayStartHour < 10 ? "0\(dayStartHour)" : "\(dayStartHour)"
        var lines = [
            "streaks:     as of \(today) (\(timeZone.identifier), days start at \(hour):00)"
        ]
        if reports.isEmpty { lines.append("  no challenges") }
        for report in reports {
            lines.append("  \(report.title) [\(report.challengeID)]: \(progress(report))")
            let completion =
                report.completionRate.map {
                    "completed \(report.completedDays) of \(days(report.scoredDays)) (\(percent($0)))"
                } ?? "no day decided yet"
            lines.append(
                "    current \(days(report.currentStreak)), longest \(days(report.longestStreak)), "
                    + completion)
        }
        return lines
    }

    /// The `streaks` member of `inspect --json`.
    static func json(
        _ reports: [StreakReport], today: DayKey, timeZone: TimeZone, dayStartHour: Int
    ) -> [String: Any] {
        [
            "asOf": today.description,
            "timeZone": timeZone.identifier,
            "dayStartHour": dayStartHour,
            "challenges": reports.map { report -> [String: Any] in
                [
                    "id": report.challengeID.rawValue,
                    "title": report.title,
                    "status": report.status.rawValue,
                    "today": report.todayScore.rawValue,
                    "currentStreak": report.currentStreak,
                    "longestStreak": report.longestStreak,
                    "completedDays": report.completedDays,
                    "scoredDays": report.scoredDays,
                    "completionRate": report.completionRate.map { $0 as Any } ?? NSNull(),
                ]
            },
        ]
    }

    private static func progress(_ report: StreakReport) -> String {
        switch report.status {
        case .upcoming:
            return "starts in \(days(report.today.days(to: report.startDate)))"
        case .finished:
            return "finished"
        case .running:
            let today =
                switch report.todayScore {
                case .complete: "today done"
                case .incomplete: "today not done yet"
                case .notScored: "today not counted"
                }
            let day = report.startDate.days(to: report.today) + 1
            return "day \(day) of \(report.startDate.days(to: report.endDate) + 1), \(today)"
        }
    }

    private static func days(_ count: Int) -> String {
        count == 1 ? "1 day" : "\(count) days"
    }

    /// One decimal, dropped when it is zero: 100%, 81.8%, 3.4%.
    private static func percent(_ rate: Double) -> String {
        let tenths = Int((rate * 1000).rounded())
        return tenths % 10 == 0 ? "\(tenths / 10)%" : "\(tenths / 10).\(tenths % 10)%"
    }
}
