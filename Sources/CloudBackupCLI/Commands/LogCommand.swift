import BackupKit
import Foundation
import LocalFiles

/// `cloudbackup log`: what each merge of `backup` and `restore --merge` decided, from the
/// profile's decision log (`DecisionLog`), newest first: the first place to look when an edit
/// "disappeared".
struct LogCommand: QuietCommand {
    static let name = "log"
    static let summary = "what each backup and restore merge decided, newest first"
    static var options: [OptionGroup] {
        OptionSpec.since
        OptionSpec.item
        OptionSpec.json.described("print the log's lines as stored, newest first")
        OptionSpec.quiet
        OptionSpec.profile
    }
    static let about = """
        Every merge that backup and restore --merge make is logged in the profile
        (decisions.jsonl, the last 90 days and at most 10 MB): for each challenge and day log
        whose two copies differed, which copy won and by which rule (newer edit, a delete after
        the edit, an edit after the delete, held back as stale, ...). This prints them, newest
        first, with times in local time. Items the merge found equal are not logged.
        """
    static let exits =
        Exit.always + [Exit(.invalidFile, "the log is damaged or others can read it")]

    let since: Timestamp?
    let item: String?
    let json: Bool
    let quiet: Bool
    let profile: String

    init(arguments: inout Arguments) throws(CLIError) {
        since = try arguments.option(
            .since, expecting: "an RFC 3339 time or a date such as 2026-11-29",
            { Timestamp($0) ?? DayKey($0).flatMap { Self.startOfDay($0, in: ZoneSetting.local) } })
        item = try arguments.option(.item)
        json = arguments.flag(.json)
        quiet = arguments.flag(.quiet)
        profile = try arguments.option(.profile) ?? "default"
        _ = try arguments.positionals(exactly: [])
    }

    func run(in context: Context) throws {
        let path = try Profile.load(name: profile, environment: context.environment)
            .decisionLogPath
        guard try DecisionLog(path: path).exists() else {
            if !json { context.print("no merge decisions logged yet (\(path))") }
            return
        }
        let lines = try LocalFile.read(path).split(separator: UInt8(ascii: "\n"))
        var shown = 0
        for (number, line) in lines.enumerated().reversed() {
            guard
                let run = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                let time = (run["time"] as? String).flatMap(Timestamp.init)
            else {
                throw CLIError.badLogLine(path, line: number + 1)
            }
            if let since, time < since { continue }
            let decisions = (run["decisions"] as? [[String: Any]] ?? []).filter(matches)
            guard !decisions.isEmpty else { continue }
            shown += 1
            if json {
                context.print(String(decoding: line, as: UTF8.self))
                continue
            }
            let local = Self.side(run["local"])
            let incoming = Self.side(run["incoming"])
            context.print(
                "\(WallTime.text(time)) \(run["command"] as? String ?? "?"): \(incoming) merged into \(local)"
            )
            for decision in decisions {
                context.print("  " + Self.words(decision, local: local, incoming: incoming))
            }
        }
        if shown == 0, !json { context.print("no merge decisions logged match") }
    }

    /// A decision about `--item`: its key, or a day log of that challenge.
    private func matches(_ decision: [String: Any]) -> Bool {
        guard let item else { return true }
        let key = decision["key"] as? String ?? ""
        return key == item || key.hasPrefix(item + "/")
    }

    /// How a line names a side: the backup on Drive (and its revision) or this device's STATE.
    private static func side(_ value: Any?) -> String {
        let side = value as? [String: Any] ?? [:]
        switch side["role"] as? String {
        case "backup":
            return (side["revision"] as? String).map { "the backup on Drive (revision \($0))" }
                ?? "the backup on Drive"
        case "state":
            return (side["path"] as? String).map { "STATE (\($0.onOneLine))" } ?? "STATE"
        default: return "?"
        }
    }

    /// "challenge A: STATE's edit of … won over the backup's edit of …: newer updatedAt".
    static func words(_ decision: [String: Any], local: String, incoming: String) -> String {
        let item = decision["item"] as? String == "dayLog" ? "day log" : "challenge"
        let key =
            (decision["key"] as? String ?? "?").onOneLine
            + ((decision["title"] as? String).map { " '\($0.onOneLine)'" } ?? "")
        let reason =
            (decision["reason"] as? String).map {
                MergeDecision.Reason(rawValue: $0)?.explanation ?? $0
            } ?? "?"
        func version(_ side: Any?) -> String? {
            guard let side = side as? [String: Any] else { return nil }
            if let stamp = (side["deletedAt"] as? String).flatMap(Timestamp.init) {
                return "delete of \(WallTime.text(stamp))"
            }
            return (side["updatedAt"] as? String).flatMap(Timestamp.init).map {
                "edit of \(WallTime.text($0))"
            }
        }
        let sides = [
            (local, version(decision["local"])), (incoming, version(decision["incoming"])),
        ]
        let winner = decision["winner"] as? String
        let (won, lost) = winner == "incoming" ? (sides[1], sides[0]) : (sides[0], sides[1])
        let what: String
        switch (winner, won.1, lost.1) {
        case ("neither", _, _):
            // Held back or dropped: say which copies were not taken.
            let offered = sides.compactMap { side in side.1.map { "\(side.0)'s \($0)" } }
            what =
                offered.isEmpty ? "nothing kept" : offered.joined(separator: " and ") + " not taken"
        case (_, let kept?, let other?):
            what = "\(won.0)'s \(kept) won over \(lost.0)'s \(other)"
        case (_, let kept?, nil):
            what = "\(won.0)'s \(kept) kept"
        default:
            what = "\(won.0)'s copy kept"
        }
        return "\(item) \(key): \(what) (\(reason))"
    }

    /// The local midnight that starts `day`.
    static func startOfDay(_ day: DayKey, in zone: TimeZone) -> Timestamp? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let parts = day.parts
        return calendar.date(
            from: DateComponents(year: parts.year, month: parts.month, day: parts.day)
        )
        .map(DriveSession.timestamp)
    }
}

/// The options only `log` takes.
extension OptionSpec {
    fileprivate static let since = OptionSpec(
        name: "--since", value: "TIME",
        help:
            "only merges at or after TIME: RFC 3339, or a date YYYY-MM-DD (the start of that day in the local time zone)"
    )
    fileprivate static let item = OptionSpec(
        name: "--item", value: "KEY",
        help:
            "only decisions about this challenge id (and its day logs) or this day log key (CHALLENGE/YYYY-MM-DD)"
    )
}
