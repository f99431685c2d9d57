import BackupKit

/// How many items a document holds, as every command reports them (backup's `--json` and
/// steady state, history's `--contents`, inspect, status's `--file`): one definition, counted
/// in one place. Day logs kept under a tombstone (FORMAT.md §2.4) are counted apart from the
/// live ones, since no streak counts them.
struct DocumentCounts: Codable, Equatable, Sendable {
    var challenges: Int
    /// Of live challenges.
    var dayLogs: Int
    var keptDayLogs: Int
    var tombstones: Int
}

extension DocumentCounts {
    init(_ document: BackupDocument) {
        let kept = document.keptDayLogCount
        challenges = document.challenges.count
        dayLogs = document.dayLogs.count - kept
        keptDayLogs = kept
        tombstones = document.tombstones.count
    }

    /// Each count with its JSON key and its label in text, in the order they are shown.
    var fields: [(key: String, label: String, count: Int)] {
        [
            ("challenges", "challenges", challenges), ("dayLogs", "day logs", dayLogs),
            ("keptDayLogs", "kept logs", keptDayLogs), ("tombstones", "tombstones", tombstones),
        ]
    }
}
