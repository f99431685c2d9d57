import BackupKit
import Foundation

/// `cloudbackup inspect FILE`: what a backup holds, for people or (`--json`) for scripts.
struct InspectCommand: QuietCommand {
    static let name = "inspect"
    static let summary = "show a backup's version, origin, counts and streaks"
    static let operands = ["FILE"]
    static var options: [OptionGroup] {
        OptionSpec.json.described("print one JSON object instead, with the same facts")
        OptionSpec.quiet.described("print nothing: the exit status tells whether FILE is valid")
        OptionSpec.now.described(
            #"measure "how long ago" from T (RFC 3339 UTC, e.g. 2026-11-30T08:00:00Z) instead of the system clock"#
        )
        OptionGroup.oneOf(
            OptionSpec.today,
            OptionSpec.at,
            conflict: "--today and --at both say when today is; give one")
        OptionSpec.tz
        OptionSpec.maxBytes
    }
    static let about = """
        Shows what a backup FILE holds: its schema version, when it was exported and
        how long ago, by which device, and how many challenges, live tasks (not
        archived), day logs and tombstones it has. Day logs kept under a tombstone (a
        deleted challenge's, kept in case another device's later edit brings it back)
        are counted on their own and count for no streak. Older schema versions are
        migrated in memory first; the file is not changed. A FILE of - is standard
        input, named <stdin> (a file called - is ./-). Any other FILE must be a regular
        file: a pipe such as <(zcat f.gz) is refused (exit 3). A gzipped FILE is read as
        the document it holds, whatever its name, so no zcat is needed; or pipe into -.

        Then each challenge's streaks as of today: the current and the longest run of
        complete days, and how many of the days decided so far were complete. Today is
        the day of the clock in the time zone, with days starting at the file's
        dayStartHour (01:30 with a 2 a.m. start is still the night before). Paused days,
        dates the time zone skipped and an unfinished today never break a streak.
        """
    static let exits =
        Exit.always + [
            Exit(.invalidFile),
            Exit(.refused, "FILE was written by a newer version"),
        ]

    let file: String
    let json: Bool
    let quiet: Bool
    let now: Timestamp?
    let streaks: StreakOptions
    let options: ReadOptions

    init(arguments: inout Arguments) throws(CLIError) {
        json = arguments.flag(.json)
        quiet = arguments.flag(.quiet)
        now = try ClockOptions.fixedNow(&arguments)
        streaks = try StreakOptions(arguments: &arguments)
        options = try BackupFile.readOptions(&arguments)
        file = try arguments.positionals(exactly: ["FILE"])[0]
    }

    func run(in context: Context) throws {
        let result = try BackupFile.load(file, options: options, in: context)
        let name = BackupFile.shown(file)
        let document = result.document
        let now = self.now ?? ClockOptions.systemNow()
        let age = now.millisecondsSince1970 - document.exportedAt.millisecondsSince1970
        let liveTasks = document.challenges.reduce(0) { sum, challenge in
            sum + challenge.tasks.count { $0.archivedFrom == nil }
        }
        let counts = DocumentCounts(document)
        let zone = try streaks.zone(environment: context.environment)
        let dayStartHour = document.settings.dayStartHour
        let today = streaks.today(in: zone, dayStartHour: dayStartHour, now: now)
        let reports = StreakOptions.reports(for: document, today: today, zone: zone)
        if json {
            let object: [String: Any] = [
                "file": name,
                "schemaVersion": result.sourceVersion,
                "exportedAt": document.exportedAt.description,
                "exportedMillisecondsAgo": age,
                "deviceId": document.deviceId.rawValue,
                "counts": Dictionary(
                    uniqueKeysWithValues: counts.fields.map { ($0.key, $0.count) }
                        + [("liveTasks", liveTasks)]),
                "streaks": StreakOutput.json(
                    reports, today: today, timeZone: zone, dayStartHour: dayStartHour),
            ]
            let data = try JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            context.print(String(decoding: data, as: UTF8.self))
            return
        }
        let current = BackupDocument.currentSchemaVersion
        let version =
            result.sourceVersion == current
            ? "\(current)" : "\(result.sourceVersion) (shown migrated to schema \(current))"
        context.print(
            """
            file:        \(name.onOneLine)
            schema:      \(version)
            exported:    \(WallTime.text(document.exportedAt)) (\(Self.describeAge(milliseconds: age)))
            device:      \(document.deviceId)
            challenges:  \(counts.challenges)
            live tasks:  \(liveTasks)
            day logs:    \(counts.dayLogs)
            kept logs:   \(counts.keptDayLogs) (under a tombstone; no streak counts them)
            tombstones:  \(counts.tombstones)
            """)
        for line in StreakOutput.lines(
            reports, today: today, timeZone: zone, dayStartHour: dayStartHour)
        {
            context.print(line)
        }
    }

    /// "3 hours ago", "in 2 days": the largest whole unit, floored.
    static func describeAge(milliseconds: Int64) -> String {
        let seconds = abs(milliseconds) / 1000
        let (count, unit): (Int64, String) =
            switch seconds {
            case ..<60: (seconds, "second")
            case ..<3600: (seconds / 60, "minute")
            case ..<(48 * 3600): (seconds / 3600, "hour")
            default: (seconds / 86_400, "day")
            }
        let amount = "\(count) \(unit)\(count == 1 ? "" : "s")"
        return milliseconds < 0 ? "in \(amount), ahead of this clock" : "\(amount) ago"
    }
}

/// The options only `inspect` takes (read by `StreakOptions`).
extension OptionSpec {
    static let today = OptionSpec(
        name: "--today", value: "DAY", help: "count streaks as of DAY (YYYY-MM-DD)")
    static let at = OptionSpec(
        name: "--at", value: "T",
        help:
            "count streaks as of the day of T (RFC 3339 UTC); default: --now, else the system clock"
    )
    static let tz = OptionSpec(
        name: "--tz", value: "ZONE",
        help:
            "the time zone that turns T into a day, e.g. America/New_York (default: TZ, else the system's zone)"
    )
}
