import BackupKit
import Foundation
import TestSupport
import Testing

/// `inspect`'s streaks, end to end through the built binary. The walking challenge runs 30
/// days from Friday 2026-02-13 with days starting at 2 a.m., and was walked every day through
/// day 23, Saturday 2026-03-07 (the night New York springs forward).
@Suite final class StreakInspectTests {
    let folder: URL
    let walks: String
    let samoa: String

    init() throws {
        folder = try Paths.temporaryFolder()
        walks = folder.appendingPathComponent("walks.json").path
        samoa = folder.appendingPathComponent("samoa.json").path
        try Self.save(
            Self.document(
                challenge: "walks", title: "30 days of walks", start: "2026-02-13", days: 30,
                dayStartHour: 2, walked: Self.days(from: "2026-02-13", through: "2026-03-07")),
            to: walks)
        // Samoa skipped Friday 2011-12-30; every other day was walked.
        try Self.save(
            Self.document(
                challenge: "samoa", title: "Ten days in Apia", start: "2011-12-25", days: 10,
                dayStartHour: 0,
                walked: Self.days(from: "2011-12-25", through: "2011-12-29")
                    + Self.days(from: "2011-12-31", through: "2012-01-03")),
            to: samoa)
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    static func days(from first: String, through last: String) throws -> [DayKey] {
        let start = try #require(DayKey(first))
        let end = try #require(DayKey(last))
        return (0...start.days(to: end)).map { start.adding(days: $0) }
    }

    static func document(
        challenge name: String, title: String, start: String, days: Int, dayStartHour: Int,
        walked: [DayKey]
    ) throws -> BackupDocument {
        let stamp = try #require(Timestamp("2011-01-01T00:00:00Z"))
        let id = try #require(Identifier(name))
        let walk = try #require(Identifier("walk"))
        let startDate = try #require(DayKey(start))
        let challenge = Challenge(
            id: id, title: title, startDate: startDate, durationDays: days,
            tasks: [
                HabitTask(
                    id: walk, title: "Walk",
                    rules: [GoalRule(from: startDate, type: .check, target: 1, unit: nil)])
            ],
            createdAt: stamp, updatedAt: stamp)
        let logs = walked.map { day in
            DayLog(
                key: DayLogKey(challengeID: id, day: day),
                values: [TaskValue(taskID: walk, value: 1)], updatedAt: stamp)
        }
        return BackupDocument(
            exportedAt: stamp, deviceId: try #require(Identifier("phone")),
            settings: Settings(dayStartHour: dayStartHour), challenges: [challenge],
            dayLogs: logs)
    }

    static func save(_ document: BackupDocument, to path: String) throws {
        try Data(BackupWriter.write(document)).write(to: URL(fileURLWithPath: path))
    }

    /// The streak lines: everything from the `streaks:` heading on.
    func streakLines(_ arguments: [String], environment: [String: String] = [:]) throws -> String {
        let result = try cloudbackup(["inspect"] + arguments, environment: environment)
        #expect(result.status == 0)
        #expect(result.stderr == "")
        let range = try #require(result.stdout.range(of: "streaks:"))
        return String(result.stdout[range.lowerBound...])
    }

    /// 23:00 on Sunday in New York: Sunday is not walked yet, and that breaks nothing.
    @Test func springForwardNightInNewYork() throws {
        let lines = try streakLines([
            walks, "--at", "2026-03-09T03:00:00Z", "--tz", "America/New_York",
        ])
        #expect(
            lines == """
                streaks:     as of 2026-03-08 (America/New_York, days start at 02:00)
                  30 days of walks [walks]: day 24 of 30, today not done yet
                    current 23 days, longest 23 days, completed 23 of 23 days (100%)

                """)
    }

    /// The same instant is 03:00 on Monday in London: Sunday is over and was missed.
    @Test func sameInstantInLondon() throws {
        let lines = try streakLines([
            walks, "--at", "2026-03-09T03:00:00Z", "--tz", "Europe/London",
        ])
        #expect(
            lines == """
                streaks:     as of 2026-03-09 (Europe/London, days start at 02:00)
                  30 days of walks [walks]: day 25 of 30, today not done yet
                    current 0 days, longest 23 days, completed 23 of 24 days (95.8%)

                """)
    }

    @Test func todayGivenAsADate() throws {
        let lines = try streakLines(
            [walks, "--today", "2026-03-07"], environment: ["TZ": "Asia/Kathmandu"])
        #expect(
            lines == """
                streaks:     as of 2026-03-07 (Asia/Kathmandu, days start at 02:00)
                  30 days of walks [walks]: day 23 of 30, today done
                    current 23 days, longest 23 days, completed 23 of 23 days (100%)

                """)
    }

    /// Without `--at`, "now" is `--now`, and the zone is `TZ`: 01:30 on Sunday in New York is
    /// still Saturday with a 2 a.m. day start.
    @Test func nowAndTheProcessZone() throws {
        let lines = try streakLines(
            [walks, "--now", "2026-03-08T06:30:00Z"], environment: ["TZ": "America/New_York"])
        #expect(
            lines.hasPrefix(
                "streaks:     as of 2026-03-07 (America/New_York, days start at 02:00)\n"))
        #expect(lines.contains("day 23 of 30, today done\n"))
    }

    /// With no clock options at all: the system clock, in the zone `TZ` names (the Samoa
    /// challenge is long finished, whatever the clock says, and Apia skipped its Friday).
    @Test func systemClockAndZone() throws {
        let apia = try #require(TimeZone(identifier: "Pacific/Apia"))
        let before = DayKey(for: Timestamp(date: Date()), in: apia, dayStartHour: 0)
        let lines = try streakLines([samoa], environment: ["TZ": "Pacific/Apia"])
        let after = DayKey(for: Timestamp(date: Date()), in: apia, dayStartHour: 0)
        let heading = { (day: DayKey) in
            "streaks:     as of \(day) (Pacific/Apia, days start at 00:00)\n"
        }
        #expect(lines.hasPrefix(heading(before)) || lines.hasPrefix(heading(after)))
        #expect(
            lines.hasSuffix(
                """
                  Ten days in Apia [samoa]: finished
                    current 9 days, longest 9 days, completed 9 of 9 days (100%)

                """))
    }

    @Test func streaksInJSON() throws {
        let result = try cloudbackup([
            "inspect", walks, "--json", "--today", "2026-03-08", "--tz", "America/New_York",
        ])
        #expect(result.status == 0)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let streaks = try #require(object["streaks"] as? [String: Any])
        #expect(streaks["asOf"] as? String == "2026-03-08")
        #expect(streaks["timeZone"] as? String == "America/New_York")
        #expect(streaks["dayStartHour"] as? Int == 2)
        let challenges = try #require(streaks["challenges"] as? [[String: Any]])
        let challenge = try #require(challenges.first)
        #expect(challenges.count == 1)
        #expect(challenge["id"] as? String == "walks")
        #expect(challenge["title"] as? String == "30 days of walks")
        #expect(challenge["status"] as? String == "running")
        #expect(challenge["today"] as? String == "incomplete")
        #expect(challenge["currentStreak"] as? Int == 23)
        #expect(challenge["longestStreak"] as? Int == 23)
        #expect(challenge["completedDays"] as? Int == 23)
        #expect(challenge["scoredDays"] as? Int == 23)
        #expect(challenge["completionRate"] as? Double == 1)
    }

    /// In Apia, 2011-12-30 never happened, so it cannot break the run; in London it did.
    @Test func aSkippedDateBreaksNothing() throws {
        let apia = try streakLines([samoa, "--today", "2012-01-03", "--tz", "Pacific/Apia"])
        #expect(apia.hasSuffix("current 9 days, longest 9 days, completed 9 of 9 days (100%)\n"))
        let london = try streakLines([samoa, "--today", "2012-01-03", "--tz", "Europe/London"])
        #expect(london.hasSuffix("current 4 days, longest 5 days, completed 9 of 10 days (90%)\n"))
    }

    /// 03:00 UTC on Monday is 22:00 on Sunday five hours behind UTC, which is how POSIX and
    /// `date` read all of these (Foundation alone would read GMT+5 as five hours ahead).
    @Test(arguments: ["GMT+5", "EST5", "<-05>5"])
    func posixTZ(tz: String) throws {
        let lines = try streakLines(
            [walks, "--at", "2026-03-09T03:00:00Z"], environment: ["TZ": tz])
        #expect(lines.hasPrefix("streaks:     as of 2026-03-08 (GMT-0500, days start at 02:00)\n"))
        #expect(
            try streakLines([walks, "--at", "2026-03-09T03:00:00Z", "--tz", tz]).hasPrefix(
                "streaks:     as of 2026-03-08 (GMT-0500, days start at 02:00)\n"))
    }

    /// A `TZ` that names no zone is refused, not replaced by the system's zone.
    @Test(arguments: [
        (
            "Mars/Olympus",
            "TZ 'Mars/Olympus' is not a time zone this system knows"
        ),
        (
            "EST5EDT,M3.2.0,M11.1.0",
            "TZ 'EST5EDT,M3.2.0,M11.1.0' has daylight-saving rules, which cloudbackup does not read"
        ),
    ])
    func unknownTZ(tz: String, problem: String) throws {
        let result = try cloudbackup(
            ["inspect", walks, "--today", "2026-03-08"], environment: ["TZ": tz])
        #expect(result.status == 2)
        #expect(
            result.stderr == "cloudbackup: \(problem); set TZ to a zone name like "
                + "America/New_York or Europe/Berlin, or unset it for the system's zone\n")
        #expect(result.stdout == "")
    }

    @Test(
        arguments: [
            (
                ["--today", "2026-02-30"],
                "--today expects a date like 2026-03-08 (YYYY-MM-DD), not '2026-02-30'"
            ),
            (
                ["--at", "noon"],
                "--at expects an RFC 3339 UTC time like 2026-03-08T12:00:00Z, not 'noon'"
            ),
            (
                ["--tz", "Mars/Olympus"],
                "--tz expects a time zone name like Europe/London, not 'Mars/Olympus'"
            ),
            (
                ["--today", "2026-03-08", "--at", "2026-03-08T12:00:00Z"],
                "--today and --at both say when today is; give one"
            ),
        ])
    func badClockOptions(arguments: [String], message: String) throws {
        let result = try cloudbackup(["inspect", walks] + arguments)
        #expect(result.status == 2)
        #expect(
            result.stderr == """
                cloudbackup: \(message)
                usage: cloudbackup inspect FILE [--json] [--quiet] [--now T] [--today DAY | --at T] [--tz ZONE] [--max-bytes N]

                """)
        #expect(result.stdout == "")
    }
}
