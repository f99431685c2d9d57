// Design note: scoring days and counting streaks (FORMAT.md §7).
//
// Every day of a challenge gets one `DayScore`, decided from that day alone:
// - the rule in force on a day is the task's rule with the latest `from` ≤ day, so raising a
//   goal on day 10 leaves days 1–9 scored against the old goal;
// - a task is live on a day from its first rule's `from` until (not including) `archivedFrom`;
// - a day is complete when every live task meets its rule; a day with no live task asks
//   nothing of anyone and, like a paused day or a date the clock skipped, is not scored.
// Unscored days neither count nor break a run. Today is scored only once it is complete: an
// unfinished today is still open, so it neither breaks yesterday's streak nor lowers the
// completion rate.
//
// A date the user's clock skipped (Samoa jumped from Thursday 2011-12-29 to Saturday
// 2011-12-31) is treated like a paused day, whatever its log says: nobody could tick it off,
// so a careful user expects it not to break the run. So is a date the jump left shorter than
// half a day (with a 2 a.m. day start, Samoa's Friday lasted two hours). The caller passes
// those dates (`DayKey.skippedDays`), since only it knows the user's zone.
//
//     Days 1–4 complete, day 5 paused, days 6–7 complete, today (day 8) not yet done:
//     current streak 6, longest 6, completed 6 of 6 scored days.

/// How one day of a challenge scores.
public enum DayScore: String, Equatable, Sendable {
    /// Every task live on the day met the rule in force that day.
    case complete
    /// A scored day on which some live task fell short of its rule (or was not logged).
    case incomplete
    /// Neither counts nor breaks a run: a paused day, a date the clock skipped, a day no task
    /// is live on, or a day outside the challenge.
    case notScored
}

extension GoalRule {
    /// Whether `value` (0 when nothing was logged) meets this rule: any value ≥ 1 ticks a
    /// `check`, a `count` or `minutes` needs at least `target`.
    public func isMet(by value: Int) -> Bool {
        switch type {
        case .check: return value >= 1
        case .count, .minutes: return value >= target
        }
    }
}

extension HabitTask {
    /// The rule in force on `day` (the latest `from` ≤ day), or nil when the task has not
    /// started yet or is archived by then.
    public func rule(on day: DayKey) -> GoalRule? {
        if let archivedFrom, day >= archivedFrom { return nil }
        return rules.last { $0.from <= day }
    }
}

extension Challenge {
    /// Whether `day` is one of the challenge's days (`startDate` … `endDate`).
    public func contains(_ day: DayKey) -> Bool {
        day >= startDate && day <= endDate
    }

    /// How `day` scores given its log (nil when nothing was logged). Values for tasks this
    /// copy does not have are ignored (another device may have added them, FORMAT.md §1.2).
    public func score(_ day: DayKey, log: DayLog?, skippedDays: Set<DayKey> = []) -> DayScore {
        guard contains(day), !skippedDays.contains(day),
            pausedDays.sortedIndex(of: day, by: { $0 }) == nil
        else { return .notScored }
        var anyLive = false
        for task in tasks {
            guard let rule = task.rule(on: day) else { continue }
            anyLive = true
            let value = log?.values.first { $0.taskID == task.id }?.value ?? 0
            if !rule.isMet(by: value) { return .incomplete }
        }
        return anyLive ? .complete : .notScored
    }
}

/// A challenge's streaks and completion as of one day (FORMAT.md §7), as `inspect` reports them.
public struct StreakReport: Equatable, Sendable {
    /// Where `today` falls against the challenge's days.
    public enum Status: String, Sendable {
        /// `today` is before the challenge's first day.
        case upcoming
        /// `today` is one of the challenge's days.
        case running
        /// The challenge's last day is behind `today`; the figures are final.
        case finished
    }

    /// The challenge reported on; `Streaks.reports(for:today:skippedDays:)` is in its order.
    public var challengeID: ChallengeID
    /// The challenge's title, as `inspect` shows it.
    public var title: String
    /// The challenge's first day.
    public var startDate: DayKey
    /// The challenge's last day (inclusive).
    public var endDate: DayKey
    /// The day the figures are "as of".
    public var today: DayKey
    /// Whether the challenge is upcoming, running or finished as of `today`.
    public var status: Status
    /// The run of complete days ending today (or yesterday, while today is unfinished), or
    /// ending on the last day of a finished challenge. Unscored days are stepped over.
    public var currentStreak: Int
    /// The longest run of complete days up to `today`, unscored days stepped over; never less
    /// than `currentStreak`.
    public var longestStreak: Int
    /// Complete days up to `today` (today included once complete); the numerator of
    /// `completionRate`.
    public var completedDays: Int
    /// Days decided so far: scored days up to yesterday, plus today once it is complete.
    public var scoredDays: Int
    /// How today scores so far; `.notScored` outside the challenge.
    public var todayScore: DayScore

    /// A report with the given figures; `Streaks.report(for:logs:today:skippedDays:)` computes
    /// them from a challenge and its logs.
    public init(
        challengeID: ChallengeID, title: String, startDate: DayKey, endDate: DayKey,
        today: DayKey, status: Status,
        currentStreak: Int, longestStreak: Int, completedDays: Int, scoredDays: Int,
        todayScore: DayScore
    ) {
        self.challengeID = challengeID
        self.title = title
        self.startDate = startDate
        self.endDate = endDate
        self.today = today
        self.status = status
        self.currentStreak = currentStreak
        self.longestStreak = longestStreak
        self.completedDays = completedDays
        self.scoredDays = scoredDays
        self.todayScore = todayScore
    }

    /// `completedDays / scoredDays`, or nil before any day is decided.
    public var completionRate: Double? {
        scoredDays == 0 ? nil : Double(completedDays) / Double(scoredDays)
    }
}

/// Scoring a challenge's days into the streak and completion figures `inspect` reports
/// (FORMAT.md §7). Pure: the caller passes `today` and the days its zone skipped.
public enum Streaks {
    /// The report for `challenge` as of `today`, from its day logs (logs of other challenges
    /// and of days outside this one are ignored). `skippedDays` are dates the user's clock
    /// jumped over (`DayKey.skippedDays`); they are treated like paused days, so a date that
    /// never happened cannot break a streak.
    public static func report(
        for challenge: Challenge, logs: some Sequence<DayLog>, today: DayKey,
        skippedDays: Set<DayKey> = []
    ) -> StreakReport {
        var logsByDay: [DayKey: DayLog] = [:]
        for log in logs where log.key.challengeID == challenge.id && challenge.contains(log.key.day)
        {
            logsByDay[log.key.day] = log
        }
        let status: StreakReport.Status =
            today < challenge.startDate
            ? .upcoming : today > challenge.endDate ? .finished : .running
        let todayScore = challenge.score(today, log: logsByDay[today], skippedDays: skippedDays)

        var run = 0
        var longest = 0
        var completed = 0
        var scored = 0
        var day = challenge.startDate
        let last = min(today, challenge.endDate)
        while day <= last {
            switch challenge.score(day, log: logsByDay[day], skippedDays: skippedDays) {
            case .complete:
                run += 1
                completed += 1
                scored += 1
                longest = max(longest, run)
            case .incomplete where day == today:
                break  // still open: neither breaks the run nor counts
            case .incomplete:
                run = 0
                scored += 1
            case .notScored:
                break
            }
            day = day.adding(days: 1)
        }
        return StreakReport(
            challengeID: challenge.id, title: challenge.title, startDate: challenge.startDate,
            endDate: challenge.endDate, today: today, status: status,
            currentStreak: run, longestStreak: longest, completedDays: completed,
            scoredDays: scored, todayScore: todayScore)
    }

    /// One report per challenge of `document`, in id order.
    public static func reports(
        for document: BackupDocument, today: DayKey, skippedDays: Set<DayKey> = []
    ) -> [StreakReport] {
        let logsByChallenge = Dictionary(grouping: document.dayLogs) { $0.key.challengeID }
        return document.challenges.map { challenge in
            report(
                for: challenge, logs: logsByChallenge[challenge.id] ?? [], today: today,
                skippedDays: skippedDays)
        }
    }
}
