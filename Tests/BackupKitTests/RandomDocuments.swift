import BackupKit
import SeededRandom

/// Seeded random documents for the writer and merge property tests.
///
/// Every document draws from one small universe of ids, stamps and contents, so that pairs
/// and triples share ids, often carry equal stamps with different content, and have
/// tombstones on both sides and edits after deletes. Each document is internally consistent
/// the way a valid file is: an id is live or tombstoned (not both), day logs belong to a live
/// challenge or are kept under a tombstone (FORMAT.md §2.4), collections are sorted.
struct RandomDocuments {
    var random: SeededRandom
    /// The clock of the merges; every stamp lies within 20 days before it.
    let now: Timestamp

    /// `a`, `a-b` and `a_b` make day-log keys whose byte order differs from (id, day) order.
    static let challengeIDs = ["a", "a-b", "a_b", "B", "c0", "z"].map(ChallengeID.init(unchecked:))
    static let titles = ["Water", "Walk", "Read 📚", "Quote \"this\" / that", "Back\\slash"]
    /// The last two are the same text to Swift's `==` but different bytes.
    static let notes = [
        "", "Late one", "line\nbreak", "ctrl \u{01}\u{1f} tab\t", "caf\u{E9}", "cafe\u{301}",
    ]
    static let start = DayKey(dayNumber: 20_513)  // 2026-03-01

    /// With `aged`, half the stamps lie around the window's edge (89, 91 or 95 days back), so
    /// tombstones expire and challenges are old; the files are still exported a day ago.
    let aged: Bool

    /// `now` defaults to 2026-11-29T22:14:03.120Z.
    init(
        seed: UInt64, now: Timestamp = Timestamp(millisecondsSince1970: 1_795_990_443_120),
        aged: Bool = false
    ) {
        random = SeededRandom(seed: seed)
        self.now = now
        self.aged = aged
    }

    /// Few distinct stamps, so equal stamps are common.
    mutating func stamp() -> Timestamp {
        let hours = Int64(Int.random(in: 0..<6, using: &random)) * 3_600_000
        guard aged, Bool.random(using: &random) else {
            return now.adding(days: -10).adding(milliseconds: hours)
        }
        return now.adding(days: -pick([89, 91, 95])).adding(milliseconds: hours)
    }

    mutating func pick<T>(_ values: [T]) -> T {
        values[Int.random(in: 0..<values.count, using: &random)]
    }

    mutating func challenge(_ id: ChallengeID) -> Challenge {
        let updatedAt = stamp()
        var tasks: [HabitTask] = []
        for taskID in ["glass", "walk"] where Bool.random(using: &random) || tasks.isEmpty {
            let kind = pick(GoalRule.Kind.allCases)
            let rule = GoalRule(
                from: Self.start, type: kind, target: kind == .check ? 1 : pick([1, 8, 9999]),
                unit: kind == .check ? nil : pick(["", "glasses"]))
            tasks.append(
                HabitTask(
                    id: TaskID(unchecked: taskID), title: pick(Self.titles), rules: [rule],
                    archivedFrom: Bool.random(using: &random) ? nil : Self.start.adding(days: 5)))
        }
        return Challenge(
            id: id, title: pick(Self.titles), startDate: Self.start, durationDays: pick([30, 365]),
            tasks: tasks,
            pausedDays: Bool.random(using: &random) ? [] : [Self.start.adding(days: 4)],
            createdAt: now.adding(days: aged ? -100 : -15), updatedAt: updatedAt)
    }

    mutating func dayLog(_ key: DayLogKey) -> DayLog {
        var values = [TaskValue(taskID: TaskID(unchecked: "glass"), value: pick([0, 1, 8, 9999]))]
        if Bool.random(using: &random) {
            values.append(TaskValue(taskID: TaskID(unchecked: "walk"), value: pick([1, 30])))
        }
        return DayLog(
            key: key, values: values, note: pick(Self.notes), mood: pick([nil, 1, 5]),
            updatedAt: stamp())
    }

    mutating func settings() -> Settings {
        Settings(
            dayStartHour: pick([0, 2, 4]), weekStartsOn: pick(Settings.WeekStart.allCases),
            theme: pick(Settings.Theme.allCases),
            reminderTime: pick([nil, ReminderTime(hour: 20, minute: 30)]),
            premium: pick([
                nil,
                Premium(plan: pick(["yearly", "monthly"]), validatedAt: stamp(), expiresAt: nil),
            ]),
            appLock: pick([nil, AppLock(enabled: Bool.random(using: &random), method: "pin")]))
    }

    /// Up to three day logs of `id`, each on one of the challenge's first three days.
    mutating func dayLogs(of id: ChallengeID, into document: inout BackupDocument) {
        for offset in 0..<3 where Bool.random(using: &random) {
            let key = DayLogKey(challengeID: id, day: Self.start.adding(days: offset))
            document.dayLogs.append(dayLog(key))
        }
    }

    mutating func document() -> BackupDocument {
        var document = BackupDocument(
            exportedAt: now.adding(days: -1),
            deviceId: DeviceID(unchecked: pick(["phone", "laptop", "tablet"])),
            settings: settings())
        for id in Self.challengeIDs {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                document.challenges.append(challenge(id))
                dayLogs(of: id, into: &document)
            case 4..<6:
                document.tombstones.append(Tombstone(id: id, deletedAt: stamp()))
                // Half the tombstones keep day logs the device had before the delete.
                if Bool.random(using: &random) { dayLogs(of: id, into: &document) }
            default:
                break
            }
        }
        document.challenges.sort { $0.id < $1.id }
        document.tombstones.sort { $0.id < $1.id }
        document.dayLogs.sort { $0.key < $1.key }
        return document
    }
}
