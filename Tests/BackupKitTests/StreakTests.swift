import BackupKit
import Foundation
import Testing

private typealias F = StreakFixture

@Suite struct StreakStoryTests {
    /// Day 23 of a daily walk is ticked off at 00:40 on the night New York springs forward,
    /// with the day starting at 2 a.m.: it counts for Saturday, and at breakfast on Sunday the
    /// streak is still 23 (Sunday is not done yet, and that does not break anything).
    @Test("a 12:40 a.m. check-in on the spring-forward night counts for Saturday")
    func springForwardCheckIn() throws {
        let newYork = try F.zone("America/New_York")
        let walk = try F.task("walk", rules: [("2026-02-13", .check, 1)])
        let challenge = try F.challenge(start: "2026-02-13", days: 30, tasks: [walk])
        var logs = try F.logs(challenge, from: "2026-02-13", through: "2026-03-06", ["walk": 1])
        let checkIn = try F.instant("2026-03-08T05:40:00Z")
        let checkInDay = DayKey(for: checkIn, in: newYork, dayStartHour: 2)
        #expect(checkInDay == (try F.day("2026-03-07")))
        #expect(challenge.startDate.days(to: checkInDay) + 1 == 23)
        logs.append(try F.log(challenge, checkInDay, ["walk": 1]))

        let breakfast = try F.instant("2026-03-08T12:00:00Z")  // 08:00 EDT
        let today = DayKey(for: breakfast, in: newYork, dayStartHour: 2)
        #expect(today == (try F.day("2026-03-08")))
        let report = Streaks.report(for: challenge, logs: logs, today: today)
        #expect(report.currentStreak == 23)
        #expect(report.longestStreak == 23)
        #expect(report.completedDays == 23)
        #expect(report.scoredDays == 23)
        #expect(report.todayScore == .incomplete)
        #expect(report.status == .running)
    }

    /// The water goal goes from 6 to 8 glasses on day 10: days 1–9 stay complete at 6.
    @Test("raising a goal on day 10 leaves days 1–9 complete at the old goal")
    func goalEditKeepsThePast() throws {
        let water = try F.task(
            "water", rules: [("2026-03-01", .count, 6), ("2026-03-10", .count, 8)])
        let challenge = try F.challenge(start: "2026-03-01", days: 30, tasks: [water])
        var logs = try F.logs(challenge, from: "2026-03-01", through: "2026-03-09", ["water": 6])
        logs.append(try F.log(challenge, F.day("2026-03-10"), ["water": 8]))
        logs.append(try F.log(challenge, F.day("2026-03-11"), ["water": 7]))

        for log in logs.prefix(9) {
            #expect(challenge.score(log.key.day, log: log) == .complete, "\(log.key.day)")
        }
        let day10 = try F.day("2026-03-10")
        #expect(challenge.score(day10, log: logs[9]) == .complete)
        #expect(
            challenge.score(day10, log: try F.log(challenge, day10, ["water": 6])) == .incomplete)
        #expect(challenge.score(try F.day("2026-03-11"), log: logs[10]) == .incomplete)

        let report = Streaks.report(for: challenge, logs: logs, today: try F.day("2026-03-12"))
        #expect(report.completedDays == 10)
        #expect(report.scoredDays == 11)
        #expect(report.longestStreak == 10)
        #expect(report.currentStreak == 0)
    }

    @Test("a paused day inside a run keeps the run")
    func pausedDayKeepsTheRun() throws {
        let water = try F.task("water", rules: [("2026-03-01", .count, 6)])
        let challenge = try F.challenge(
            start: "2026-03-01", days: 30, tasks: [water], paused: ["2026-03-05"])
        let logs =
            try F.logs(challenge, from: "2026-03-01", through: "2026-03-04", ["water": 6])
            + F.logs(challenge, from: "2026-03-06", through: "2026-03-07", ["water": 6])
            // A log on the paused day neither helps nor hurts.
            + [F.log(challenge, F.day("2026-03-05"), ["water": 1])]
        let report = Streaks.report(for: challenge, logs: logs, today: try F.day("2026-03-08"))
        #expect(report.currentStreak == 6)
        #expect(report.longestStreak == 6)
        #expect(report.completedDays == 6)
        #expect(report.scoredDays == 6)
        #expect(report.completionRate == 1)
    }

    @Test("an unfinished today keeps yesterday's streak, and finishing it extends it")
    func unfinishedToday() throws {
        let water = try F.task("water", rules: [("2026-03-01", .count, 6)])
        let challenge = try F.challenge(start: "2026-03-01", days: 30, tasks: [water])
        let done = try F.logs(challenge, from: "2026-03-01", through: "2026-03-05", ["water": 6])
        let today = try F.day("2026-03-06")

        let partly = try F.log(challenge, today, ["water": 3])
        let fully = try F.log(challenge, today, ["water": 6])

        let halfway = Streaks.report(for: challenge, logs: done + [partly], today: today)
        #expect(halfway.currentStreak == 5)
        #expect(halfway.scoredDays == 5)
        #expect(halfway.todayScore == .incomplete)
        #expect(halfway.completionRate == 1)

        let finished = Streaks.report(for: challenge, logs: done + [fully], today: today)
        #expect(finished.currentStreak == 6)
        #expect(finished.scoredDays == 6)
        #expect(finished.todayScore == .complete)

        // The day after, the unfinished day is decided: it breaks the run.
        let nextDay = Streaks.report(
            for: challenge, logs: done + [partly], today: today.adding(days: 1))
        #expect(nextDay.currentStreak == 0)
        #expect(nextDay.longestStreak == 5)
        #expect(nextDay.scoredDays == 6)
    }

    struct LateNight: Sendable {
        var zone: String
        /// 01:30 local on Wednesday 2026-06-10.
        var instant: String
    }

    @Test(
        "a 1:30 a.m. check-in with a 2 a.m. day start counts for the night before",
        arguments: [
            LateNight(zone: "America/New_York", instant: "2026-06-10T05:30:00Z"),
            LateNight(zone: "Europe/London", instant: "2026-06-10T00:30:00Z"),
            LateNight(zone: "Australia/Lord_Howe", instant: "2026-06-09T15:00:00Z"),
            LateNight(zone: "Asia/Kathmandu", instant: "2026-06-09T19:45:00Z"),
            LateNight(zone: "Pacific/Apia", instant: "2026-06-09T12:30:00Z"),
        ])
    func lateNightCheckIn(_ story: LateNight) throws {
        let zone = try F.zone(story.zone)
        let instant = try F.instant(story.instant)
        let day = DayKey(for: instant, in: zone, dayStartHour: 2)
        #expect(day == (try F.day("2026-06-09")))
        #expect(DayKey(for: instant, in: zone, dayStartHour: 1) == (try F.day("2026-06-10")))

        let stretch = try F.task("stretch", rules: [("2026-06-01", .check, 1)])
        let challenge = try F.challenge(start: "2026-06-01", days: 14, tasks: [stretch])
        let logs =
            try F.logs(challenge, from: "2026-06-01", through: "2026-06-08", ["stretch": 1])
            + [F.log(challenge, day, ["stretch": 1])]
        let report = Streaks.report(for: challenge, logs: logs, today: try F.day("2026-06-10"))
        #expect(report.currentStreak == 9)
    }

    /// Samoa skipped Friday 2011-12-30. Nobody could tick it off, so it must not break a
    /// streak: a skipped date is treated like a paused day. With a 2 a.m. day start the date
    /// keeps two hours (Saturday 00:00–02:00 on the clock), still too short to keep a streak.
    @Test("a date the clock skipped does not break a streak", arguments: [0, 2, 4])
    func skippedDateKeepsTheRun(dayStartHour: Int) throws {
        let apia = try F.zone("Pacific/Apia")
        let read = try F.task("read", rules: [("2011-12-25", .check, 1)])
        let challenge = try F.challenge(start: "2011-12-25", days: 10, tasks: [read])
        let logs =
            try F.logs(challenge, from: "2011-12-25", through: "2011-12-29", ["read": 1])
            + F.logs(challenge, from: "2011-12-31", through: "2012-01-03", ["read": 1])
        let skipped = DayKey.skippedDays(
            in: challenge.startDate...challenge.endDate, timeZone: apia,
            dayStartHour: dayStartHour)
        #expect(skipped == [try F.day("2011-12-30")])

        let today = try F.day("2012-01-03")
        let report = Streaks.report(
            for: challenge, logs: logs, today: today, skippedDays: Set(skipped))
        #expect(report.currentStreak == 9)
        #expect(report.scoredDays == 9)
        #expect(report.status == .running)

        // Without knowing the zone, the date is an ordinary missed day.
        let naive = Streaks.report(for: challenge, logs: logs, today: today)
        #expect(naive.currentStreak == 4)
        #expect(naive.longestStreak == 5)
    }
}

@Suite struct StreakRuleTests {
    @Test(
        "whether a value meets a rule",
        arguments: [
            (GoalRule.Kind.check, 1, 0, false), (.check, 1, 1, true), (.check, 1, 7, true),
            (.count, 6, 5, false), (.count, 6, 6, true), (.minutes, 30, 29, false),
            (.minutes, 30, 45, true),
        ])
    func ruleIsMet(type: GoalRule.Kind, target: Int, value: Int, met: Bool) throws {
        let rule = GoalRule(from: try F.day("2026-01-01"), type: type, target: target, unit: nil)
        #expect(rule.isMet(by: value) == met)
    }

    @Test("the rule in force is the latest one that has begun, until the task is archived")
    func ruleInForce() throws {
        let task = try F.task(
            "water", rules: [("2026-03-03", .count, 6), ("2026-03-10", .minutes, 20)],
            archivedFrom: "2026-03-20")
        #expect(task.rule(on: try F.day("2026-03-02")) == nil)
        #expect(task.rule(on: try F.day("2026-03-03"))?.target == 6)
        #expect(task.rule(on: try F.day("2026-03-09"))?.target == 6)
        #expect(task.rule(on: try F.day("2026-03-10"))?.type == .minutes)
        #expect(task.rule(on: try F.day("2026-03-19"))?.target == 20)
        #expect(task.rule(on: try F.day("2026-03-20")) == nil)
    }

    @Test("only tasks live on a day decide it; a day with none is not scored")
    func liveTasks() throws {
        let early = try F.task(
            "early", rules: [("2026-03-01", .check, 1)], archivedFrom: "2026-03-05")
        let late = try F.task("late", rules: [("2026-03-03", .check, 1)])
        let challenge = try F.challenge(start: "2026-03-01", days: 10, tasks: [early, late])
        #expect(
            challenge.score(
                try F.day("2026-03-01"),
                log: try F.log(challenge, F.day("2026-03-01"), ["early": 1])) == .complete)
        #expect(
            challenge.score(
                try F.day("2026-03-03"),
                log: try F.log(challenge, F.day("2026-03-03"), ["early": 1])) == .incomplete)
        #expect(
            challenge.score(
                try F.day("2026-03-06"), log: try F.log(challenge, F.day("2026-03-06"), ["late": 1])
            ) == .complete)

        let later = try F.challenge(start: "2026-03-01", days: 10, tasks: [late])
        #expect(later.score(try F.day("2026-03-02"), log: nil) == .notScored)
        let report = Streaks.report(
            for: later,
            logs: try F.logs(later, from: "2026-03-03", through: "2026-03-04", ["late": 1]),
            today: try F.day("2026-03-05"))
        #expect(report.scoredDays == 2)
        #expect(report.currentStreak == 2)
    }

    @Test("logs of other challenges, outside the challenge, or for unknown tasks do not count")
    func foreignLogsIgnored() throws {
        let water = try F.task("water", rules: [("2026-03-01", .count, 6)])
        let challenge = try F.challenge(start: "2026-03-01", days: 3, tasks: [water])
        let other = try F.challenge("challenge-2", start: "2026-03-01", days: 3, tasks: [water])
        let logs = try [
            F.log(challenge, F.day("2026-02-28"), ["water": 6]),
            F.log(other, F.day("2026-03-01"), ["water": 6]),
            F.log(challenge, F.day("2026-03-02"), ["juice": 9]),
            F.log(challenge, F.day("2026-03-03"), ["water": 6, "juice": 0]),
            F.log(challenge, F.day("2026-03-04"), ["water": 6]),
        ]
        let report = Streaks.report(for: challenge, logs: logs, today: try F.day("2026-03-05"))
        #expect(report.completedDays == 1)
        #expect(report.scoredDays == 3)
        #expect(report.currentStreak == 1)
        #expect(report.status == .finished)
    }

    @Test("before, during and after a challenge")
    func status() throws {
        let walk = try F.task("walk", rules: [("2026-03-01", .check, 1)])
        let challenge = try F.challenge(start: "2026-03-01", days: 5, tasks: [walk])
        let logs = try F.logs(challenge, from: "2026-03-01", through: "2026-03-05", ["walk": 1])

        let upcoming = Streaks.report(for: challenge, logs: logs, today: try F.day("2026-02-27"))
        #expect(upcoming.status == .upcoming)
        #expect(upcoming.scoredDays == 0)
        #expect(upcoming.completionRate == nil)
        #expect(upcoming.todayScore == .notScored)

        let last = Streaks.report(for: challenge, logs: logs, today: try F.day("2026-03-05"))
        #expect(last.status == .running)
        #expect(last.currentStreak == 5)

        // Long after the end, the figures are final: the run that ended on the last day.
        let after = Streaks.report(for: challenge, logs: logs, today: try F.day("2026-06-01"))
        #expect(after.status == .finished)
        #expect(after.currentStreak == 5)
        #expect(after.completedDays == 5)
        #expect(after.completionRate == 1)
    }

    @Test("a broken run: longest and current differ, the rate counts decided days")
    func brokenRun() throws {
        let walk = try F.task("walk", rules: [("2026-03-01", .check, 1)])
        let challenge = try F.challenge(start: "2026-03-01", days: 30, tasks: [walk])
        let logs =
            try F.logs(challenge, from: "2026-03-01", through: "2026-03-04", ["walk": 1])
            + F.logs(challenge, from: "2026-03-07", through: "2026-03-08", ["walk": 1])
        let report = Streaks.report(for: challenge, logs: logs, today: try F.day("2026-03-09"))
        #expect(report.longestStreak == 4)
        #expect(report.currentStreak == 2)
        #expect(report.completedDays == 6)
        #expect(report.scoredDays == 8)
        #expect(report.completionRate == 0.75)
    }

    @Test("a document gets one report per challenge, each from its own logs")
    func documentReports() throws {
        let walk = try F.task("walk", rules: [("2026-03-01", .check, 1)])
        let first = try F.challenge("a", start: "2026-03-01", days: 10, tasks: [walk])
        let second = try F.challenge("a-b", start: "2026-03-01", days: 10, tasks: [walk])
        let logs = try
            (F.logs(first, from: "2026-03-01", through: "2026-03-03", ["walk": 1])
            + F.logs(second, from: "2026-03-02", through: "2026-03-03", ["walk": 1]))
            .sorted { $0.key < $1.key }
        let document = BackupDocument(
            exportedAt: F.stamp, deviceId: try F.id("device"), challenges: [first, second],
            dayLogs: logs)
        let reports = Streaks.reports(for: document, today: try F.day("2026-03-04"))
        #expect(reports.map(\.challengeID.rawValue) == ["a", "a-b"])
        #expect(reports.map(\.currentStreak) == [3, 2])
        #expect(reports.map(\.scoredDays) == [3, 3])
    }
}
