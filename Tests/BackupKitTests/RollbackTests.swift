import BackupKit
import Testing

/// `Rollback`: an older revision's content, written so that every device's next merge ends on
/// it. Stamps are relative to `rollbackNow`, so each test reads as a story.
private let rollbackNow = Timestamp(millisecondsSince1970: 1_796_040_000_000)  // 2026-11-30T12:00Z
private let firstDay = DayKey(dayNumber: 20_513)  // 2026-03-01

private func daysAgo(_ days: Int) -> Timestamp { rollbackNow.adding(days: -days) }

private func challenge(_ name: String, title: String, updated: Timestamp) -> Challenge {
    Challenge(
        id: ChallengeID(unchecked: name), title: title, startDate: firstDay, durationDays: 365,
        tasks: [
            HabitTask(
                id: TaskID(unchecked: "water"), title: "Drink",
                rules: [GoalRule(from: firstDay, type: .count, target: 8, unit: "glasses")])
        ],
        createdAt: daysAgo(200), updatedAt: updated)
}

private func dayLog(_ name: String, day: Int, value: Int, updated: Timestamp) -> DayLog {
    DayLog(
        key: DayLogKey(challengeID: ChallengeID(unchecked: name), day: firstDay.adding(days: day)),
        values: [TaskValue(taskID: TaskID(unchecked: "water"), value: value)], updatedAt: updated)
}

private func snapshot(
    exported: Timestamp, _ challenges: [Challenge], logs: [DayLog] = [],
    tombstones: [Tombstone] = []
) -> BackupDocument {
    BackupDocument(
        exportedAt: exported, deviceId: DeviceID(unchecked: "phone"),
        challenges: challenges.sorted { $0.id < $1.id }, dayLogs: logs.sorted { $0.key < $1.key },
        tombstones: tombstones.sorted { $0.id < $1.id })
}

/// The revision (ten days ago): A "Water" with a log of 8 on day 1, and B. Since then (the
/// head): A renamed "Bad" and its day-1 log changed to 1, a day-2 log added, B deleted, and C
/// added.
private let revision = snapshot(
    exported: daysAgo(10),
    [
        challenge("A", title: "Water", updated: daysAgo(20)),
        challenge("B", title: "Run", updated: daysAgo(20)),
    ],
    logs: [dayLog("A", day: 1, value: 8, updated: daysAgo(15))])
private let head = snapshot(
    exported: daysAgo(1),
    [
        challenge("A", title: "Bad", updated: daysAgo(2)),
        challenge("C", title: "New", updated: daysAgo(3)),
    ],
    logs: [
        dayLog("A", day: 1, value: 1, updated: daysAgo(2)),
        dayLog("A", day: 2, value: 5, updated: daysAgo(2)),
    ],
    tombstones: [Tombstone(id: ChallengeID(unchecked: "B"), deletedAt: daysAgo(4))])

/// What a document holds, stamps aside: the content a user sees.
private func content(_ document: BackupDocument) -> [String] {
    document.challenges.map { "\($0.id): \($0.title)" }
        + document.dayLogs.map { "\($0.key): \($0.values.map(\.value))" }
}

struct RollbackTests {
    @Test func everyItemThatDiffersFromTheHeadIsWrittenAgainAtNow() {
        let result = Rollback.document(backTo: revision, from: head, now: rollbackNow)
        #expect(result.challenges == Rollback.Counts(changedBack: 1, revived: 1, removed: 1))
        #expect(result.dayLogs == Rollback.Counts(changedBack: 1, revived: 0, removed: 1))
        let document = result.document
        #expect(document.challenges.map(\.title) == ["Water", "Run"])
        #expect(document.challenges.allSatisfy { $0.updatedAt == rollbackNow })
        #expect(
            document.tombstones == [
                Tombstone(id: ChallengeID(unchecked: "C"), deletedAt: rollbackNow)
            ])
        #expect(document.dayLogs.map { $0.values.map(\.value) } == [[8], []])
        #expect(document.dayLogs.allSatisfy { $0.updatedAt == rollbackNow })
        #expect(BackupValidator.validate(document).isEmpty)
    }

    /// The point of a rollback: a device that still holds the head (or any copy from before
    /// the rollback) merges the rolled-back backup in and ends on the revision's content, both
    /// ways round.
    @Test func aDeviceHoldingTheHeadMergesIntoTheRevisionsContent() {
        let rolledBack = Rollback.document(backTo: revision, from: head, now: rollbackNow).document
        let options = MergeOptions(now: rollbackNow.adding(milliseconds: 1000))
        // The day-2 log stays, emptied: day logs have no tombstones.
        let expected = content(revision) + ["A/\(firstDay.adding(days: 2)): []"]
        for (local, incoming) in [(head, rolledBack), (rolledBack, head)] {
            let merged = merge(local: local, incoming: incoming, options: options).document
            #expect(content(merged).sorted() == expected.sorted())
            #expect(merged.tombstones.map(\.id) == [ChallengeID(unchecked: "C")])
        }
    }

    @Test func aRollbackToTheHeadChangesNothing() {
        let result = Rollback.document(backTo: head, from: head, now: rollbackNow)
        #expect(result.isEmpty)
        #expect(result.document.challenges == head.challenges)
        #expect(result.document.dayLogs == head.dayLogs)
        #expect(result.document.tombstones == head.tombstones)
    }

    /// An undo in the same millisecond (a fixed clock, or a fast hand): the rollback's own
    /// stamps are `now`, so the undo writes one millisecond later, and wins.
    @Test func anUndoAtTheSameInstantStillWins() {
        let rolledBack = Rollback.document(backTo: revision, from: head, now: rollbackNow).document
        let undo = Rollback.document(backTo: head, from: rolledBack, now: rollbackNow).document
        #expect(undo.challenges.allSatisfy { $0.updatedAt == rollbackNow.adding(milliseconds: 1) })
        let merged = merge(
            local: rolledBack, incoming: undo, options: MergeOptions(now: rollbackNow))
        #expect(content(merged.document).sorted() == content(head).sorted())
    }
}
