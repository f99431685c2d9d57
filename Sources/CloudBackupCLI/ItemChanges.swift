import BackupKit

/// The items one document would bring to another, by kind, for `status`: what waits for the
/// next backup (STATE over the kept copy) and what Drive holds that STATE lacks (the backup
/// over STATE).
///
/// Design: counted by the merge itself, with the options `backup` and `restore` merge with,
/// not by a second comparison that could drift from it. An item counts when the merge takes
/// it from `incoming`: new there, or a different and newer copy. So a re-encoded but equal
/// file counts nothing, an older copy of an item (the other side moved on) counts nothing,
/// and a deleted challenge counts once, as its tombstone. Settings are not items.
struct ItemChanges: Equatable {
    var challenges: Int
    var dayLogs: Int
    var tombstones: Int

    var total: Int { challenges + dayLogs + tombstones }

    init(of incoming: BackupDocument, over base: BackupDocument, now: Timestamp) {
        let outcome = BackupKit.merge(
            local: base, incoming: incoming, options: MergeOptions(now: now))
        let report = outcome.report
        challenges =
            report.challenges.added + report.challenges.updated + report.challenges.revived
        // The report counts every log under a tombstone as kept, whichever side it came
        // from: its decisions say which ones `incoming` brought.
        dayLogs =
            report.dayLogs.added + report.dayLogs.updated
            + outcome.decisions.count { $0.reason == .keptUnderTombstone && $0.winner == .incoming }
        tombstones = report.tombstones.added
    }

    /// `challenges 2, day logs 1, tombstones 0`.
    var byKind: String {
        "challenges \(challenges), day logs \(dayLogs), tombstones \(tombstones)"
    }

    /// The `--json` object: `{"challenges":2,"dayLogs":1,"tombstones":0}`.
    var value: StatusValue {
        .object([
            ("challenges", .integer(challenges)), ("dayLogs", .integer(dayLogs)),
            ("tombstones", .integer(tombstones)),
        ])
    }
}
