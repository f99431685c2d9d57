import Parallel

/// The value and relation rules of FORMAT.md §1.2 and §2.4 on an already-typed schema-4 document.
///
/// The reader checks what the typed model cannot even hold (types, formats, unknown and
/// missing fields, duplicate keys); everything else is here, so a document built in memory
/// (a merge result, a migrated file) is held to exactly the rules a file is.
public enum BackupValidator {
    /// Every broken rule of the document; empty when it is valid.
    public static func validate(_ document: BackupDocument) -> [ValidationIssue] {
        var issues = IssueList(limit: .max)
        check(document, into: &issues)
        return issues.issues
    }

    static func check(_ document: BackupDocument, into issues: inout IssueList) {
        check(document.settings, into: &issues)
        check(document.challenges, into: &issues)
        let challenges = ChallengeLookup(document.challenges)
        let tombstones = document.tombstones
        // A kept day log names a tombstone (FORMAT.md §2.4).
        check(
            document.dayLogs,
            challengeExists: {
                challenges.find($0) != nil || tombstones.sortedIndex(of: $0, by: \.id) != nil
            }, into: &issues)
        check(document.tombstones, isLive: { challenges.find($0) != nil }, into: &issues)
    }

    static func check(_ settings: Settings, into issues: inout IssueList) {
        Rules.checkInteger(
            settings.dayStartHour, Rules.dayStartHour, at: "/settings/dayStartHour", into: &issues)
        if let premium = settings.premium {
            Rules.checkLength(
                premium.plan, Rules.planLength, at: "/settings/premium/plan", into: &issues)
        }
        if let appLock = settings.appLock {
            Rules.checkLength(
                appLock.method, Rules.lockMethodLength, at: "/settings/appLock/method",
                into: &issues)
        }
    }

    static func check(_ challenges: [Challenge], into issues: inout IssueList) {
        Rules.checkOrder(challenges, key: \.id, at: { Pointer.challenge($0.id) }, into: &issues)
        for challenge in challenges { check(challenge, into: &issues) }
    }

    static func check(_ challenge: Challenge, into issues: inout IssueList) {
        let base = Pointer.challenge(challenge.id)
        Rules.checkTitle(challenge.title, at: base + "/title", into: &issues)
        Rules.checkInteger(
            challenge.durationDays, Rules.durationDays, at: base + "/durationDays", into: &issues)
        if !Rules.tasksPerChallenge.contains(challenge.tasks.count) {
            issues.add(
                .fields, base + "/tasks",
                "must have \(Rules.range(Rules.tasksPerChallenge)) tasks, not \(challenge.tasks.count)"
            )
        }
        let live = challenge.tasks.count { $0.archivedFrom == nil }
        if live > Rules.liveTasks {
            issues.add(
                .fields, base + "/tasks",
                "at most \(Rules.liveTasks) tasks may be live (archivedFrom null), not \(live)")
        }
        Rules.checkOrder(
            challenge.tasks, key: \.id, at: { Pointer.task(challenge.id, $0.id) }, into: &issues)
        for task in challenge.tasks { check(task, of: challenge, into: &issues) }
        // Only a sane duration gives a meaningful last day to check paused days against.
        let lastDay = Rules.durationDays.contains(challenge.durationDays) ? challenge.endDate : nil
        for (index, day) in challenge.pausedDays.enumerated() {
            if index > 0, day <= challenge.pausedDays[index - 1] {
                issues.add(
                    .fields, base + "/pausedDays/\(index)",
                    "must be sorted and unique (\(day) follows \(challenge.pausedDays[index - 1]))")
            }
            if let lastDay, day < challenge.startDate || day > lastDay {
                issues.add(
                    .fields, base + "/pausedDays/\(index)",
                    "\(day) is outside the challenge's days (\(challenge.startDate)…\(lastDay))")
            }
        }
        if challenge.updatedAt < challenge.createdAt {
            issues.add(
                .fields, base + "/updatedAt",
                "must not be before createdAt (\(challenge.updatedAt) < \(challenge.createdAt))")
        }
    }

    static func check(_ task: HabitTask, of challenge: Challenge, into issues: inout IssueList) {
        let base = Pointer.task(challenge.id, task.id)
        Rules.checkTitle(task.title, at: base + "/title", into: &issues)
        guard let first = task.rules.first else {
            issues.add(.fields, base + "/rules", "must have at least one rule")
            return
        }
        if first.from < challenge.startDate {
            issues.add(
                .fields, base + "/rules/0/from",
                "must not be before the challenge's startDate (\(first.from) < \(challenge.startDate))"
            )
        }
        for (index, rule) in task.rules.enumerated() {
            if index > 0, rule.from <= task.rules[index - 1].from {
                issues.add(
                    .fields, base + "/rules/\(index)/from",
                    "must be after the previous rule's from (\(task.rules[index - 1].from))")
            }
            Rules.checkGoal(
                type: rule.type, target: rule.target, unit: rule.unit,
                at: { base + "/rules/\(index)" },
                into: &issues)
        }
        if let archivedFrom = task.archivedFrom, archivedFrom <= first.from {
            issues.add(
                .fields, base + "/archivedFrom",
                "must be null or after the first rule's from (\(archivedFrom) ≤ \(first.from))")
        }
    }

    /// `sorted`: the logs and each log's values are already known to be sorted and unique
    /// (the reader sorts them and reports duplicates), so their order is not walked again.
    static func check(
        _ dayLogs: DayLogStore, challengeExists: @escaping @Sendable (ChallengeID) -> Bool,
        sorted: Bool = false, into issues: inout IssueList
    ) {
        if !sorted {
            for index in dayLogs.indices.dropFirst()
            where !(dayLogs.key(at: index - 1) < dayLogs.key(at: index)) {
                issues.add(
                    .duplicateKeys, Pointer.dayLog(dayLogs.key(at: index)),
                    "is out of order or a duplicate (keys must be sorted and unique)")
            }
        }
        let found = walk(
            dayLogs, DayLogPasses(exists: challengeExists, notesAgainst: nil, sorted: sorted),
            limit: issues.limit, twoCoresFrom: twoCoresFromLogs
        ).issues
        for issue in found { issues.add(issue) }
    }

    /// Below this many day logs a second thread costs more than it saves.
    static let twoCoresFromLogs = 8192

    /// What a walk over the day logs looks for: the rules, when `exists` says whether a
    /// log's challenge is in the file, and the notes, when there are challenges to hold the
    /// logs against.
    struct DayLogPasses: Sendable {
        var exists: (@Sendable (ChallengeID) -> Bool)?
        var notesAgainst: ChallengeLookup?
        var sorted: Bool
        /// The logs' own rules (values, mood, note) are known to hold, as for logs the reader
        /// took the canonical way: only whether their challenges exist is left to check.
        var ownRulesHeld = false
        /// What to say of a log whose challenge `exists` does not find.
        var missing: @Sendable (ChallengeID) -> String = missingChallenge
        /// The rule such a log breaks: FORMAT.md §1.2 in version 4, where a tombstone keeps it,
        /// §2.3 in version 3, where only a live challenge does.
        var missingRule = FormatRule.fields

        static func missingChallenge(_ id: ChallengeID) -> String {
            "challenge \(id) is not in this file, live or deleted (a day log needs its challenge or its tombstone)"
        }
    }

    /// One walk over the day logs for the rules and the notes together, each half of the logs
    /// on a core of its own from `twoCoresFrom` logs on: the issues (at most `limit`) and the
    /// notes, in log order. Day logs come grouped by challenge, so one lookup serves a whole
    /// run of them, found by the store's challenge entry rather than by comparing ids: making
    /// an id per log would retain its storage, and the two halves' atomic counts on shared ids
    /// cost more than the rest of the walk. A log is made into a value only when its own rules
    /// or its notes are to be checked.
    static func walk(
        _ dayLogs: DayLogStore, _ passes: DayLogPasses, limit: Int, twoCoresFrom: Int
    ) -> (issues: [ValidationIssue], notes: [ValidationIssue]) {
        let halves = inHalves(dayLogs.indices, minimum: twoCoresFrom) { range in
            var found = IssueList(limit: limit)
            var notes: [ValidationIssue] = []
            var lastEntry: UInt32?
            var lastID: ChallengeID?
            var lastExists = false
            var run: NoteRun?
            for index in range {
                let entry = dayLogs.challengeEntry(at: index)
                if entry != lastEntry {
                    lastEntry = entry
                    let id = dayLogs.challengeID(entry: entry)
                    lastID = id
                    lastExists = passes.exists?(id) ?? false
                    if let challenges = passes.notesAgainst {
                        run = challenges.find(id).map(NoteRun.init)
                    }
                }
                if passes.exists != nil {
                    if !lastExists, let lastID {
                        found.add(
                            passes.missingRule, Pointer.dayLog(dayLogs.key(at: index)),
                            passes.missing(lastID))
                    }
                    if !passes.ownRulesHeld, !surelyKeepsOwnRules(dayLogs, at: index, passes.sorted)
                    {
                        let log = dayLogs[index]
                        check(
                            log.key, log.values, note: log.note, mood: log.mood,
                            sorted: passes.sorted, into: &found)
                    }
                }
                if let run {
                    let log = dayLogs[index]
                    run.note(log.key, log.values, into: &notes)
                }
            }
            return (found.issues, notes)
        }
        return (halves.flatMap(\.0), halves.flatMap(\.1))
    }

    /// Whether the log at `position` certainly keeps its own rules, seen from its parts in the
    /// store: nearly every log of a file not spelled canonically, which then costs no value made
    /// to check it. False sends the log to `check`, which finds and words what is wrong.
    private static func surelyKeepsOwnRules(_ logs: DayLogStore, at position: Int, _ sorted: Bool)
        -> Bool
    {
        var keeps = false
        _ = logs.withParts(at: position) { log in
            // Within the bound in bytes is within it in characters.
            keeps =
                log.note.count <= Rules.noteLength.upperBound
                && log.mood.map(Rules.mood.contains) ?? true
                && log.numbers.allSatisfy { Int($0) <= Rules.value.upperBound }
                && (sorted
                    || log.tasks.indices.dropFirst().allSatisfy {
                        log.taskIDs[Int(log.tasks[$0 - 1])] < log.taskIDs[Int(log.tasks[$0])]
                    })
        }
        return keeps
    }

    /// A day log's own values, whatever its challenge, from its parts.
    static func check(
        _ key: DayLogKey, _ values: [TaskValue], note: String, mood: Int?, sorted: Bool = false,
        into issues: inout IssueList
    ) {
        if !sorted {
            Rules.checkOrder(
                values, key: \.taskID,
                at: { Pointer.dayLog(key) + "/values/" + $0.taskID.rawValue }, into: &issues)
        }
        for value in values {
            Rules.checkInteger(
                value.value, Rules.value,
                at: Pointer.dayLog(key) + "/values/" + value.taskID.rawValue, into: &issues)
        }
        Rules.checkLength(note, Rules.noteLength, at: Pointer.dayLog(key) + "/note", into: &issues)
        Rules.checkMood(mood, at: Pointer.dayLog(key) + "/mood", into: &issues)
    }

    static func check(
        _ tombstones: [Tombstone], isLive: (ChallengeID) -> Bool, into issues: inout IssueList
    ) {
        Rules.checkOrder(tombstones, key: \.id, at: { Pointer.tombstone($0.id) }, into: &issues)
        for tombstone in tombstones where isLive(tombstone.id) {
            issues.add(
                .fields, Pointer.tombstone(tombstone.id),
                "challenge \(tombstone.id) is live in this file; a tombstone names a deleted challenge"
            )
        }
    }

    /// Day logs that do not fit their challenge (FORMAT.md §1.2): valid and kept, but what does not
    /// fit does not count for streaks. For `validate --verbose`; never errors.
    public static func notes(_ document: BackupDocument) -> [ValidationIssue] {
        walk(
            document.dayLogs,
            DayLogPasses(
                exists: nil, notesAgainst: ChallengeLookup(document.challenges), sorted: true),
            limit: 0, twoCoresFrom: twoCoresFromLogs
        ).notes
    }
}

/// What a run of logs of one challenge needs for the notes, looked up once per run; no
/// Challenge is copied per log.
private struct NoteRun {
    let startDate: DayKey
    let endDate: DayKey
    let pausedDays: [DayKey]
    let tasks: [HabitTask]
    /// Whether a task ever has a `check` rule: most never do, and then a count above 1 needs
    /// no look for the rule in force.
    let everCheck: [Bool]

    init(_ challenge: Challenge) {
        startDate = challenge.startDate
        endDate = challenge.endDate
        pausedDays = challenge.pausedDays
        tasks = challenge.tasks
        everCheck = tasks.map { $0.rules.contains { $0.type == .check } }
    }

    func note(_ key: DayLogKey, _ values: [TaskValue], into notes: inout [ValidationIssue]) {
        let outside = key.day < startDate || key.day > endDate
        if outside {
            notes.append(
                ValidationIssue(
                    pointer: Pointer.dayLog(key),
                    message:
                        "note: \(key.day) is outside the challenge's days (\(startDate)…\(endDate)); kept, not counted",
                    rule: .fields))
        }
        for value in values {
            guard let task = tasks.firstIndex(where: { $0.id == value.taskID }) else {
                notes.append(
                    ValidationIssue(
                        pointer: Pointer.dayLog(key) + "/values/" + value.taskID.rawValue,
                        message:
                            "note: task \(value.taskID) is not in the challenge; kept, not counted",
                        rule: .fields))
                continue
            }
            // "Counted as done" only where the value counts at all (FORMAT.md §7): a day of the
            // challenge, not paused, the task not yet archived.
            guard value.value > 1, everCheck[task], !outside,
                tasks[task].archivedFrom.map({ key.day < $0 }) ?? true,
                pausedDays.sortedIndex(of: key.day, by: { $0 }) == nil
            else { continue }
            let rules = tasks[task].rules
            if let rule = rules.lastIndex(where: { $0.from <= key.day }), rules[rule].type == .check
            {
                notes.append(
                    ValidationIssue(
                        pointer: Pointer.dayLog(key) + "/values/" + value.taskID.rawValue,
                        message:
                            "note: a count of \(value.value) for a check task; counted as done",
                        rule: .fields))
            }
        }
    }
}

/// Finds a challenge by id in the sorted array (binary search).
struct ChallengeLookup: Sendable {
    let challenges: [Challenge]

    init(_ challenges: [Challenge]) {
        self.challenges = challenges
    }

    func find(_ id: ChallengeID) -> Challenge? {
        challenges.sortedIndex(of: id, by: \.id).map { challenges[$0] }
    }
}
