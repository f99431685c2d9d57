/// The rules of schema versions 1 and 2 (FORMAT.md §4.1), checked on their own typed input before
/// each migration step, with pointers into the file as it was written.
enum LegacyValidator {
    static func check(
        _ document: SchemaV2.Document, brokenChallenges: Set<ChallengeID> = [],
        into issues: inout IssueList
    ) {
        BackupValidator.check(Migration.migrate(document.settings), into: &issues)
        for challenge in document.challenges {
            let base = Pointer.challenge(challenge.id)
            Rules.checkTitle(challenge.title, at: base + "/title", into: &issues)
            Rules.checkInteger(
                challenge.durationDays, Rules.durationDays, at: base + "/durationDays",
                into: &issues)
            // Version 2 cannot archive a task, so every task is live.
            if !(1...Rules.liveTasks).contains(challenge.tasks.count) {
                issues.add(
                    .version2, base + "/tasks",
                    "must have 1…\(Rules.liveTasks) tasks, not \(challenge.tasks.count)")
            }
            for (index, task) in challenge.tasks.enumerated() {
                if challenge.tasks[..<index].contains(where: { $0.id == task.id }) {
                    issues.add(
                        .version2, base + "/tasks/\(index)/id", "duplicate task id \(task.id)")
                }
                Rules.checkTitle(task.title, at: base + "/tasks/\(index)/title", into: &issues)
                Rules.checkGoal(
                    type: task.goal.type, target: task.goal.target, unit: task.goal.unit,
                    at: { base + "/tasks/\(index)" }, into: &issues)
            }
            if challenge.updatedAt < challenge.createdAt {
                issues.add(
                    .fields, base + "/updatedAt",
                    "must not be before createdAt (\(challenge.updatedAt) < \(challenge.createdAt))"
                )
            }
        }
        let challenges = Set(document.challenges.map(\.id)).union(brokenChallenges)
        BackupValidator.check(
            document.dayLogs, challengeExists: { challenges.contains($0) }, into: &issues)
        BackupValidator.check(
            document.tombstones, isLive: { challenges.contains($0) }, into: &issues)
    }

    /// `challenges`, `logs` and `deleted` carry their index in the file, for pointers.
    static func check(
        settings: SchemaV1.Settings, challenges: [(index: Int, challenge: SchemaV1.Challenge)],
        logs: [(index: Int, log: SchemaV1.Log)], deleted: [(index: Int, tombstone: Tombstone)],
        brokenChallenges: Set<ChallengeID> = [], into issues: inout IssueList
    ) {
        Rules.checkInteger(
            settings.dayStartHour, Rules.dayStartHour, at: "/settings/dayStartHour", into: &issues)
        var ids = brokenChallenges
        for (index, challenge) in challenges {
            let base = "/challenges/\(index)"
            if !ids.insert(challenge.id).inserted {
                issues.add(.version1, base + "/id", "duplicate challenge id \(challenge.id)")
            }
            Rules.checkTitle(challenge.title, at: base + "/title", into: &issues)
            Rules.checkInteger(
                challenge.durationDays, Rules.durationDays, at: base + "/durationDays",
                into: &issues)
            Rules.checkGoal(
                type: challenge.goal.type, target: challenge.goal.target, unit: challenge.goal.unit,
                at: { base + "/goal" }, into: &issues)
        }
        var logKeys: Set<DayLogKey> = []
        for (index, log) in logs {
            let base = "/logs/\(index)"
            if !ids.contains(log.challengeId) {
                issues.add(
                    .version1, base + "/challengeId",
                    "challenge \(log.challengeId) is not in this file")
            }
            if !logKeys.insert(DayLogKey(challengeID: log.challengeId, day: log.date)).inserted {
                issues.add(
                    .version1, base, "duplicate log for challenge \(log.challengeId) on \(log.date)"
                )
            }
            Rules.checkInteger(log.value, Rules.value, at: base + "/value", into: &issues)
            Rules.checkLength(log.note, Rules.noteLength, at: base + "/note", into: &issues)
        }
        var deletedIDs: Set<ChallengeID> = []
        for (index, tombstone) in deleted {
            let pointer = "/deleted/\(index)/id"
            if !deletedIDs.insert(tombstone.id).inserted {
                issues.add(.version1, pointer, "duplicate deleted id \(tombstone.id)")
            }
            if ids.contains(tombstone.id) {
                issues.add(
                    .version1, pointer,
                    "challenge \(tombstone.id) is live in this file; deleted names a deleted challenge"
                )
            }
        }
    }
}
