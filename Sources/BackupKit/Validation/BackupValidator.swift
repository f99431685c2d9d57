/// The value and relation rules of SPEC §2 on an already-typed schema-3 document.
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
        check(document.dayLogs, challengeExists: { challenges.find($0) != nil }, into: &issues)
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
                base + "/tasks",
                "must have \(Rules.range(Rules.tasksPerChallenge)) tasks, not \(challenge.tasks.count)"
            )
        }
        let live = challenge.tasks.count { $0.archivedFrom == nil }
        if live > Rules.liveTasks {
            issues.add(
                base + "/tasks",
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
                    base + "/pausedDays/\(index)",
                    "must be sorted and unique (\(day) follows \(challenge.pausedDays[index - 1]))")
            }
            if let lastDay, day < challenge.startDate || day > lastDay {
                issues.add(
                    base + "/pausedDays/\(index)",
                    "\(day) is outside the challenge's days (\(challenge.startDate)…\(lastDay))")
            }
        }
        if challenge.updatedAt < challenge.createdAt {
            issues.add(
                base + "/updatedAt",
                "must not be before createdAt (\(challenge.updatedAt) < \(challenge.createdAt))")
        }
    }

    static func check(_ task: HabitTask, of challenge: Challenge, into issues: inout IssueList) {
        let base = Pointer.task(challenge.id, task.id)
        Rules.checkTitle(task.title, at: base + "/title", into: &issues)
        guard let first = task.rules.first else {
            issues.add(base + "/rules", "must have at least one rule")
            return
        }
        if first.from < challenge.startDate {
            issues.add(
                base + "/rules/0/from",
                "must not be before the challenge's startDate (\(first.from) < \(challenge.startDate))"
            )
        }
        for (index, rule) in task.rules.enumerated() {
            if index > 0, rule.from <= task.rules[index - 1].from {
                issues.add(
                    base + "/rules/\(index)/from",
                    "must be after the previous rule's from (\(task.rules[index - 1].from))")
            }
            Rules.checkGoal(
                type: rule.type, target: rule.target, unit: rule.unit,
                at: { base + "/rules/\(index)" },
                into: &issues)
        }
        if let archivedFrom = task.archivedFrom, archivedFrom <= first.from {
            issues.add(
                base + "/archivedFrom",
                "must be null or after the first rule's from (\(archivedFrom) ≤ \(first.from))")
        }
    }

    /// `sorted`: the logs and each log's values are already known to be sorted and unique
    /// (the reader sorts them and reports duplicates), so their order is not walked again.
    /// From `twoCoresFrom` logs on, each half of the logs is checked on a core of its own.
    static func check(
        _ dayLogs: [DayLog], challengeExists: @escaping @Sendable (ChallengeID) -> Bool,
        sorted: Bool = false, twoCoresFrom: Int = twoCoresFromLogs, into issues: inout IssueList
    ) {
        if !sorted {
            Rules.checkOrder(dayLogs, key: \.key, at: { Pointer.dayLog($0.key) }, into: &issues)
        }
        let limit = issues.limit
        let halves = inHalves(dayLogs.indices, minimum: twoCoresFrom) { range in
            var found = IssueList(limit: limit)
            // Day logs come grouped by challenge, so one lookup serves a whole run of them.
            // Indices rather than `for log in`, so a log is read in place, not copied.
            var lastID: ChallengeID?
            var lastExists = false
            for index in range {
                let id = dayLogs[index].key.challengeID
                if id != lastID {
                    lastID = id
                    lastExists = challengeExists(id)
                }
                if !lastExists {
                    found.add(
                        Pointer.dayLog(dayLogs[index].key),
                        "challenge \(id) is not in this file (a day log needs its challenge)")
                }
                check(dayLogs[index], sorted: sorted, into: &found)
            }
            return found.issues
        }
        for issue in halves.joined() { issues.add(issue.pointer, issue.message) }
    }

    /// Below this many day logs a second thread costs more than it saves.
    static let twoCoresFromLogs = 8192

    /// A day log's own values, whatever its challenge.
    static func check(_ log: DayLog, sorted: Bool = false, into issues: inout IssueList) {
        if !sorted {
            Rules.checkOrder(
                log.values, key: \.taskID,
                at: { Pointer.dayLog(log.key) + "/values/" + $0.taskID.rawValue },
                into: &issues)
        }
        for value in log.values {
            Rules.checkInteger(
                value.value, Rules.value,
                at: Pointer.dayLog(log.key) + "/values/" + value.taskID.rawValue,
                into: &issues)
        }
        Rules.checkLength(
            log.note, Rules.noteLength, at: Pointer.dayLog(log.key) + "/note", into: &issues)
        Rules.checkMood(log.mood, at: Pointer.dayLog(log.key) + "/mood", into: &issues)
    }

    static func check(
        _ tombstones: [Tombstone], isLive: (ChallengeID) -> Bool, into issues: inout IssueList
    ) {
        Rules.checkOrder(tombstones, key: \.id, at: { Pointer.tombstone($0.id) }, into: &issues)
        for tombstone in tombstones where isLive(tombstone.id) {
            issues.add(
                Pointer.tombstone(tombstone.id),
                "challenge \(tombstone.id) is live in this file; a tombstone names a deleted challenge"
            )
        }
    }

    /// Day logs that do not fit their challenge (SPEC §2): valid and kept, but what does not
    /// fit does not count for streaks. For `validate --verbose`; never errors.
    public static func notes(_ document: BackupDocument) -> [ValidationIssue] {
        notes(document, twoCoresFrom: twoCoresFromLogs)
    }

    /// From `twoCoresFrom` logs on, each half of the logs is walked on a core of its own.
    static func notes(_ document: BackupDocument, twoCoresFrom: Int) -> [ValidationIssue] {
        let challenges = ChallengeLookup(document.challenges)
        let logs = document.dayLogs
        let halves = inHalves(logs.indices, minimum: twoCoresFrom) { range in
            var notes: [ValidationIssue] = []
            // What a run of logs of one challenge needs, looked up once per run. The run is
            // recognised by the logs' own id, which the reader shares across the run, so the
            // comparison is usually one of identical strings; and no Challenge is copied per
            // log.
            var currentID: ChallengeID?
            var found = false
            var startDate = DayKey(dayNumber: 0)
            var endDate = startDate
            var tasks: [HabitTask] = []
            // Whether a task ever has a `check` rule: most never do, and then a count above 1
            // needs no look for the rule in force.
            var everCheck: [Bool] = []
            // Indices, not `for log in`: a million logs are read in place, not copied.
            for index in range {
                let key = logs[index].key
                if currentID != key.challengeID {
                    currentID = key.challengeID
                    let challenge = challenges.find(key.challengeID)
                    found = challenge != nil
                    startDate = challenge?.startDate ?? startDate
                    endDate = challenge?.endDate ?? endDate
                    tasks = challenge?.tasks ?? []
                    everCheck = tasks.map { $0.rules.contains { $0.type == .check } }
                }
                guard found else { continue }
                if key.day < startDate || key.day > endDate {
                    notes.append(
                        ValidationIssue(
                            pointer: Pointer.dayLog(key),
                            message:
                                "note: \(key.day) is outside the challenge's days (\(startDate)…\(endDate)); kept, not counted"
                        ))
                }
                for value in logs[index].values {
                    guard let task = tasks.firstIndex(where: { $0.id == value.taskID }) else {
                        notes.append(
                            ValidationIssue(
                                pointer: Pointer.dayLog(key) + "/values/" + value.taskID.rawValue,
                                message:
                                    "note: task \(value.taskID) is not in the challenge; kept, not counted"
                            ))
                        continue
                    }
                    guard value.value > 1, everCheck[task] else { continue }
                    let rules = tasks[task].rules
                    if let rule = rules.lastIndex(where: { $0.from <= key.day }),
                        rules[rule].type == .check
                    {
                        notes.append(
                            ValidationIssue(
                                pointer: Pointer.dayLog(key) + "/values/" + value.taskID.rawValue,
                                message:
                                    "note: a count of \(value.value) for a check task; counted as done"
                            )
                        )
                    }
                }
            }
            return notes
        }
        return Array(halves.joined())
    }
}

/// Finds a challenge by id in the sorted array (binary search).
struct ChallengeLookup {
    let challenges: [Challenge]

    init(_ challenges: [Challenge]) {
        self.challenges = challenges
    }

    func find(_ id: ChallengeID) -> Challenge? {
        var low = 0
        var high = challenges.count
        while low < high {
            let middle = (low + high) / 2
            if challenges[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low < challenges.count && challenges[low].id == id ? challenges[low] : nil
    }
}
