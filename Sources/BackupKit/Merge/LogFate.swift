/// What the challenge walk tells the day-log walk about an id, beyond its end state.
enum LogContext: Equatable, Sendable {
    /// Held back by a guard with the incoming copy or tombstone, and why: the incoming day
    /// logs go with it.
    case heldBack(MergeDecision.Reason)
    /// Live here and deleted by the incoming tombstone: the day logs here become kept.
    case deletedHere
    /// Edited after the delete: the day logs kept under `kept`'s tombstone return.
    case revived(kept: MergeDecision.Winner)
}

/// Where a day log of a challenge ends up: with it live, kept under its tombstone, or gone.
enum LogFate {
    case live, kept, dropped
}

/// The result's challenges and tombstones and the challenge walk's context, shared by the
/// day-log walks of both halves.
struct LogFates: Sendable {
    let challenges: ChallengeLookup
    let tombstones: [Tombstone]
    let context: [ChallengeID: LogContext]

    init(result: BackupDocument, context: [ChallengeID: LogContext]) {
        challenges = ChallengeLookup(result.challenges)
        tombstones = result.tombstones
        self.context = context
    }
}

/// `LogFates` for one walk: day logs come grouped by challenge, so the last answer is kept.
struct LogFateCursor {
    let fates: LogFates
    private var last: (ChallengeID, LogFate, LogContext?)?

    init(_ fates: LogFates) {
        self.fates = fates
    }

    mutating func fate(of id: ChallengeID) -> (fate: LogFate, context: LogContext?) {
        if let (lastID, fate, context) = last, lastID == id { return (fate, context) }
        let fate: LogFate =
            fates.challenges.find(id) != nil
            ? .live : fates.tombstones.sortedIndex(of: id, by: \.id) != nil ? .kept : .dropped
        let context = fates.context.isEmpty ? nil : fates.context[id]
        last = (id, fate, context)
        return (fate, context)
    }
}
