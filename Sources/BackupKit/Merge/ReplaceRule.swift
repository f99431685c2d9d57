/// FORMAT.md §5.2, replace, as rules beside the merge's: the result is the incoming document,
/// its expired tombstones dropped (rule 1), with no guards; rule 8's report still applies (it
/// is "always": a skewed device's stamps are worth a warning whichever way the file comes in),
/// and the report counts against the local side as a merge's does. The walks of `Merge.swift`
/// call these instead of the merge's rules when `MergeOptions.mode` is `.replace`.
///
/// Worked example: local X edited 03-10 and a day log X/03-11; the backup holds X edited
/// 03-01 and no logs. X is `updated` (replaced by the backup's, though older) and X/03-11 is
/// dropped, counted `droppedOrphans` (the report has no "deleted" for day logs).
extension ChallengeRule {
    /// The backup's version of one id: its copy, else its tombstone unless older than the
    /// window. (A file valid under FORMAT.md §3 never holds both for one id.)
    static func replace(
        local: ChallengeSide, incoming: ChallengeSide, context: inout Context
    ) -> ChallengeResolution {
        var resolution = ChallengeResolution()
        resolution.reason = .replaced
        resolution.futureCopy = incoming.copy.map { $0.updatedAt > context.futureLimit } ?? false
        resolution.futureTombstone =
            incoming.tombstone.map { $0.deletedAt > context.futureLimit } ?? false
        resolution.expiredIncoming =
            incoming.tombstone.map { $0.deletedAt < context.windowStart } ?? false
        resolution.winner =
            incoming.copy != nil
            ? .copy(.incoming)
            : incoming.tombstone != nil && !resolution.expiredIncoming
                ? .tombstone(.incoming) : .nothing
        switch (local.copy, incoming.copy) {
        case (let ours?, let theirs?):
            let pick = context.tieBreak.compareBytes(ours, theirs)
            resolution.copyPick = pick
            resolution.challengeCount = pick == .identical ? .unchanged : .updated
        case (nil, .some): resolution.challengeCount = .added
        case (.some, nil): resolution.challengeCount = .deleted
        case (nil, nil): break
        }
        if resolution.expiredIncoming {
            resolution.tombstoneCount = .expired
        } else if case .tombstone = resolution.winner {
            let hadOne = local.tombstone.map { $0.deletedAt >= context.windowStart } ?? false
            resolution.tombstoneCount = hadOne ? .unchanged : .added
        }
        return resolution
    }
}

extension DayLogRule {
    /// The backup's copy of one key, unless its challenge is gone from the result (rule 5).
    static func replace<Log: Copy>(
        local: Log?, incoming: Log?, fate: LogFate, context: inout Context
    ) -> DayLogResolution {
        var resolution = DayLogResolution()
        guard let theirs = incoming else {
            // The report's shape has no "deleted" for day logs; a local log the backup does
            // not have is dropped like an orphan.
            resolution.count = .droppedOrphan
            resolution.reason = .replaced
            return resolution
        }
        resolution.future = theirs.updatedAt > context.futureLimit
        switch fate {
        case .dropped:
            resolution.count = .droppedOrphan
            resolution.reason = .orphan
        case .kept:
            resolution.winner = .incoming
            resolution.count = .keptUnderTombstone
        case .live:
            resolution.winner = .incoming
            guard let ours = local else {
                resolution.count = .added
                return resolution
            }
            let identical = context.tieBreak.compareBytes(ours, theirs) == .identical
            resolution.count = identical ? .unchanged : .updated
            resolution.reason = identical ? .identical : .replaced
        }
        return resolution
    }
}
