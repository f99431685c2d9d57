/// FORMAT.md §5.1 for one challenge id: which version is in the result, which rule decided, and
/// what that adds to the report. Pure: the answer depends only on the versions each side holds
/// and the merge's options, so every rule can be tested one row at a time (MergeRuleTests).
///
/// The rules run in FORMAT.md's order, with §5.3's one exception: the guards (rules 7, 8)
/// filter the incoming side before rule 2 weighs it. Each step removes versions or settles a
/// contest and notes what it did in the resolution, which stays a few bytes of flags: the
/// merge calls this for every id, and a million-item document must not pay an allocation each.
///
/// Worked example, window starting 09-01: local copy edited 10-03, incoming tombstone deleted
/// 10-05. Rule 1 keeps the tombstone (inside the window), the guards pass it, rule 2 has one
/// copy, the tombstone has no rival, and rule 3 finds the delete after the edit: the incoming
/// tombstone wins, `deleteHolds`, counted `deleted` and tombstone `added`.
enum ChallengeRule {
    /// What the rules need beyond the versions: the window, the guards, and reusable buffers
    /// for rule 2's canonical bytes.
    struct Context {
        /// `now − window` (rules 1 and 7).
        let windowStart: Timestamp
        /// `now + 24 h` (rule 8).
        let futureLimit: Timestamp
        /// Rule 7 is on for this merge: the incoming file predates the window, the local side
        /// is not empty and `--allow-stale` is off. A property of the two documents, not of one
        /// id, so the caller decides it once.
        let staleGuard: Bool
        /// `--clock-guard`: rule 8 holds back instead of only reporting.
        let clockGuard: Bool
        /// Merge (§5.1) or replace (§5.2).
        let mode: MergeOptions.Mode
        /// Scratch space only: it never changes an answer.
        var tieBreak = TieBreak()

        init(options: MergeOptions, staleGuard: Bool) {
            windowStart = options.windowStart
            futureLimit = options.futureLimit
            self.staleGuard = staleGuard
            clockGuard = options.clockGuard
            mode = options.mode
        }
    }

    /// One side of a merge, as the rules name it.
    enum Side: Equatable, Sendable {
        case local, incoming

        /// The side as decisions name it.
        var winner: MergeDecision.Winner { self == .local ? .local : .incoming }
    }

    /// Settles one challenge id from what each side holds for it, by the rules of the mode.
    static func resolve(
        local: ChallengeSide, incoming: ChallengeSide, context: inout Context
    ) -> ChallengeResolution {
        switch context.mode {
        case .merge: return merge(local: local, incoming: incoming, context: &context)
        case .replace: return replace(local: local, incoming: incoming, context: &context)
        }
    }

    /// FORMAT.md §5.1 for one id.
    private static func merge(
        local: ChallengeSide, incoming: ChallengeSide, context: inout Context
    ) -> ChallengeResolution {
        var ours = local
        var theirs = incoming
        var resolution = ChallengeResolution()
        expire(&ours, &theirs, context, &resolution)
        holdBackStale(&theirs, ours, context, &resolution)
        holdBackFuture(&theirs, context, &resolution)
        let copy = newerCopy(ours.copy, theirs.copy, &context.tieBreak, &resolution)
        let delete = laterDelete(ours.tombstone, theirs.tombstone, &resolution)
        settle(copy: copy, delete: delete, &resolution)
        count(&resolution, local: local, incoming: incoming, ours: ours, theirs: theirs)
        return resolution
    }

    /// Rule 1, expiry: a tombstone deleted before `now − window` (strictly, in ms) is dropped,
    /// whichever side holds it.
    private static func expire(
        _ ours: inout ChallengeSide, _ theirs: inout ChallengeSide, _ context: Context,
        _ resolution: inout ChallengeResolution
    ) {
        if let tombstone = ours.tombstone, tombstone.deletedAt < context.windowStart {
            ours.tombstone = nil
            resolution.expiredLocal = true
        }
        if let tombstone = theirs.tombstone, tombstone.deletedAt < context.windowStart {
            theirs.tombstone = nil
            resolution.expiredIncoming = true
        }
    }

    /// Rule 7, the stale guard: an incoming copy unknown here (neither live nor tombstoned after
    /// rule 1) and last edited before the window may be a delete whose tombstone expired, so it
    /// is held back. A copy stamped past the clock guard's limit is rule 8's alone.
    private static func holdBackStale(
        _ theirs: inout ChallengeSide, _ ours: ChallengeSide, _ context: Context,
        _ resolution: inout ChallengeResolution
    ) {
        guard context.staleGuard, ours.copy == nil, ours.tombstone == nil,
            let copy = theirs.copy, copy.updatedAt < context.windowStart,
            copy.updatedAt <= context.futureLimit
        else { return }
        theirs.copy = nil
        resolution.copyHeldBack = .stale
    }

    /// Rule 8, the clock guard: an incoming copy or tombstone stamped after `now + 24 h` is
    /// always reported, and held back only with `--clock-guard`.
    private static func holdBackFuture(
        _ theirs: inout ChallengeSide, _ context: Context, _ resolution: inout ChallengeResolution
    ) {
        if let copy = theirs.copy, copy.updatedAt > context.futureLimit {
            resolution.futureCopy = true
            if context.clockGuard {
                theirs.copy = nil
                resolution.copyHeldBack = .future
            }
        }
        if let tombstone = theirs.tombstone, tombstone.deletedAt > context.futureLimit {
            resolution.futureTombstone = true
            if context.clockGuard {
                theirs.tombstone = nil
                resolution.tombstoneHeldBack = true
            }
        }
    }

    /// Rule 2, newer wins: of two copies the later `updatedAt`, on equal stamps the higher
    /// canonical bytes (so it never matters which side is local).
    private static func newerCopy(
        _ ours: Challenge?, _ theirs: Challenge?, _ tieBreak: inout TieBreak,
        _ resolution: inout ChallengeResolution
    ) -> (side: Side, copy: Challenge)? {
        guard let theirs else { return ours.map { (.local, $0) } }
        guard let ours else { return (.incoming, theirs) }
        let pick = tieBreak.pick(ours, theirs)
        resolution.copyPick = pick
        resolution.reason =
            pick == .identical
            ? .identical : ours.updatedAt == theirs.updatedAt ? .higherBytes : .newer
        return pick == .incoming ? (.incoming, theirs) : (.local, ours)
    }

    /// Rule 3's second sentence: the same id tombstoned on both sides keeps the later
    /// `deletedAt` (the local one when they are equal: they are then the same tombstone).
    private static func laterDelete(
        _ ours: Tombstone?, _ theirs: Tombstone?, _ resolution: inout ChallengeResolution
    ) -> (side: Side, tombstone: Tombstone)? {
        guard let theirs else { return ours.map { (.local, $0) } }
        guard let ours else { return (.incoming, theirs) }
        if ours.deletedAt == theirs.deletedAt {
            resolution.reason = .identical
            return (.local, ours)
        }
        resolution.reason = .laterDelete
        return ours.deletedAt < theirs.deletedAt ? (.incoming, theirs) : (.local, ours)
    }

    /// Rules 3 and 4 between the surviving copy and the surviving tombstone: a delete at or
    /// after the last edit holds (rule 3), an edit after the delete revives (rule 4). A lone
    /// version wins as it is; with none left, the guard or the window that removed them decides.
    private static func settle(
        copy: (side: Side, copy: Challenge)?, delete: (side: Side, tombstone: Tombstone)?,
        _ resolution: inout ChallengeResolution
    ) {
        resolution.deleteSide = delete?.side
        switch (copy, delete) {
        case (let copy?, let delete?):
            let holds = delete.tombstone.deletedAt >= copy.copy.updatedAt
            resolution.winner = holds ? .tombstone(delete.side) : .copy(copy.side)
            resolution.reason = holds ? .deleteHolds : .editRevives
        case (let copy?, nil):
            resolution.winner = .copy(copy.side)
        case (nil, let delete?):
            resolution.winner = .tombstone(delete.side)
        case (nil, nil):
            resolution.winner = .nothing
            resolution.reason = resolution.heldBack?.rule ?? .expired
        }
    }

    /// FORMAT.md §6.1/§6.2: one challenge count per id with a live copy on either side, and at
    /// most one tombstone count; then what the day-log walk must know (rule 5).
    private static func count(
        _ resolution: inout ChallengeResolution, local: ChallengeSide, incoming: ChallengeSide,
        ours: ChallengeSide, theirs: ChallengeSide
    ) {
        let survives = resolution.winner.isCopy
        if local.copy == nil, incoming.copy == nil {
            resolution.challengeCount = nil
        } else if resolution.copyHeldBack != nil {
            resolution.challengeCount = .heldBack
        } else if local.copy != nil {
            resolution.challengeCount =
                !survives
                ? .deleted : resolution.winner == .copy(.incoming) ? .updated : .unchanged
        } else {
            resolution.challengeCount =
                !survives ? .keptDeleted : ours.tombstone != nil ? .revived : .added
        }

        if resolution.tombstoneHeldBack {
            resolution.tombstoneCount = .heldBack
        } else if theirs.tombstone != nil, case .tombstone = resolution.winner {
            resolution.tombstoneCount = ours.tombstone != nil ? .unchanged : .added
        } else if resolution.expiredLocal || resolution.expiredIncoming {
            resolution.tombstoneCount = .expired
        }

        if let held = resolution.heldBack {
            resolution.logContext = .heldBack(held.decisionReason)
        } else if local.copy != nil, !survives {
            resolution.logContext = .deletedHere
        } else if resolution.reason == .editRevives, let side = resolution.deleteSide {
            resolution.logContext = .revived(kept: side.winner)
        }
    }
}

/// What one side holds for a challenge id: a live copy, a tombstone, both (one of them loses),
/// or neither.
struct ChallengeSide: Sendable {
    var copy: Challenge?
    var tombstone: Tombstone?
}

/// The answer of `ChallengeRule.resolve` for one id: a few bytes of flags, so the merge can
/// afford one per challenge.
struct ChallengeResolution: Equatable, Sendable {
    /// The version in the result.
    enum Winner: Equatable, Sendable {
        /// That side's live copy (a tombstone of the id, if any, is dropped: rule 4).
        case copy(ChallengeRule.Side)
        /// That side's tombstone (a copy of the id, if any, stays deleted: rule 3).
        case tombstone(ChallengeRule.Side)
        /// Nothing: the window or a guard removed every version.
        case nothing

        var isCopy: Bool {
            if case .copy = self { return true }
            return false
        }

        /// The side as decisions name it.
        var side: MergeDecision.Winner {
            switch self {
            case .copy(let side), .tombstone(let side): return side.winner
            case .nothing: return .neither
            }
        }
    }

    /// The rule that decided the winner: the last of FORMAT.md §5.1's rules that chose
    /// between versions.
    enum Reason: Equatable, Sendable {
        /// One version was left after rules 1, 7 and 8: nothing to weigh it against.
        case sole
        /// Rule 2: the later `updatedAt`.
        case newer
        /// Rule 2: equal stamps, the higher canonical bytes.
        case higherBytes
        /// Rules 2 and 3: both sides hold the same bytes (copies) or the same `deletedAt`
        /// (tombstones); the local one stays.
        case identical
        /// Rule 3: of two tombstones the later `deletedAt`.
        case laterDelete
        /// Rule 3: the delete is at or after the surviving copy's `updatedAt`.
        case deleteHolds
        /// Rule 4: the surviving copy was edited after the delete.
        case editRevives
        /// Rule 1: every version was a tombstone older than the window.
        case expired
        /// Rule 7: the stale guard held back the only copy.
        case stale
        /// Rule 8: the clock guard held back what was left.
        case future
        /// §5.2: a replace took the backup's version, whatever the rules of a merge say.
        case replaced
    }

    /// The guard that held back incoming versions (FORMAT.md §5.1 rules 7, 8).
    enum Guard: Equatable, Sendable {
        case stale, future

        var rule: Reason { self == .stale ? .stale : .future }
        var decisionReason: MergeDecision.Reason { self == .stale ? .stale : .future }
    }

    /// The challenge count this id adds (FORMAT.md §6.1), nil without a live copy on either side.
    enum ChallengeCount: Equatable, Sendable {
        case added, updated, unchanged, deleted, keptDeleted, revived, heldBack
    }

    /// The tombstone count this id adds, nil when none applies (a local-only tombstone).
    enum TombstoneCount: Equatable, Sendable {
        case added, unchanged, expired, heldBack
    }

    var winner = Winner.nothing
    var reason = Reason.sole
    var challengeCount: ChallengeCount?
    var tombstoneCount: TombstoneCount?
    /// The guard that held back the incoming copy, if one did.
    var copyHeldBack: Guard?
    /// The clock guard held back the incoming tombstone.
    var tombstoneHeldBack = false
    /// Rule 8's report: the incoming copy or tombstone is stamped after `now + 24 h`.
    var futureCopy = false
    var futureTombstone = false
    /// Rule 1 dropped that side's tombstone.
    var expiredLocal = false
    var expiredIncoming = false
    /// Rule 2's pick when both sides had a copy left to weigh.
    var copyPick: Pick?
    /// The side of the tombstone rules 3 and 4 weighed, if one was left.
    var deleteSide: ChallengeRule.Side?
    /// What the day-log walk must know beyond the result (rule 5).
    var logContext: LogContext?

    /// The incoming day logs go where the challenge goes: a tombstone held back by the clock
    /// guard takes them with it as a held-back copy does.
    var heldBack: Guard? { tombstoneHeldBack ? .future : copyHeldBack }
}

extension ChallengeResolution {
    /// The decisions worth a line for `--explain` and the audit log, in the order the rules ran,
    /// and rule 8's future-stamped items; `local` and `incoming` are what `resolve` was given.
    func record(
        _ id: ChallengeID, local: ChallengeSide, incoming: ChallengeSide,
        decisions: inout [MergeDecision], futureStamped: inout [FutureStampedItem]
    ) {
        let item = MergeDecision.Item.challenge(id)
        if futureCopy, let copy = incoming.copy {
            futureStamped.append(FutureStampedItem(item: item, version: version(copy)))
        }
        if futureTombstone, let tombstone = incoming.tombstone {
            futureStamped.append(FutureStampedItem(item: item, version: version(tombstone)))
        }
        let decide = {
            (
                winner: MergeDecision.Winner, reason: MergeDecision.Reason,
                ours: MergeDecision.Version?, theirs: MergeDecision.Version?
            ) in
            decisions.append(
                MergeDecision(
                    item: item, winner: winner, reason: reason, local: ours, incoming: theirs))
        }
        if reason == .replaced {
            recordReplaced(local: local, incoming: incoming, decide)
        } else {
            recordMerged(local: local, incoming: incoming, decide)
        }
    }

    private typealias Decide = (
        MergeDecision.Winner, MergeDecision.Reason, MergeDecision.Version?,
        MergeDecision.Version?
    ) -> Void

    private func recordMerged(local: ChallengeSide, incoming: ChallengeSide, _ decide: Decide) {
        if expiredLocal || expiredIncoming {
            decide(
                .neither, .expired, local.tombstone.map(version), incoming.tombstone.map(version))
        }
        if let held = copyHeldBack, let copy = incoming.copy {
            decide(.neither, held.decisionReason, local.copy.map(version), version(copy))
        }
        if tombstoneHeldBack, let tombstone = incoming.tombstone {
            decide(.neither, .future, nil, version(tombstone))
        }
        let oursLeft = expiredLocal ? nil : local.tombstone
        let theirsLeft = expiredIncoming || tombstoneHeldBack ? nil : incoming.tombstone
        if let ours = oursLeft, let theirs = theirsLeft, ours.deletedAt != theirs.deletedAt {
            decide(
                ours.deletedAt < theirs.deletedAt ? .incoming : .local, .laterDelete,
                version(ours), version(theirs))
        }
        if let pick = copyPick, pick != .identical, let ours = local.copy,
            let theirs = incoming.copy
        {
            decide(
                pick == .local ? .local : .incoming,
                ours.updatedAt == theirs.updatedAt ? .equalStampsHigherBytes : .newer,
                version(ours), version(theirs))
        }
        if reason == .deleteHolds || reason == .editRevives {
            let theirCopy = copyHeldBack == nil ? incoming.copy : nil
            decide(
                winner.side, reason == .deleteHolds ? .deletedAfterEdit : .editedAfterDelete,
                local.copy.map(version) ?? oursLeft.map(version),
                theirCopy.map(version) ?? theirsLeft.map(version))
        }
    }

    /// A replace's lines: a copy here the backup changed or does not have, then the backup's
    /// tombstone the window dropped.
    private func recordReplaced(local: ChallengeSide, incoming: ChallengeSide, _ decide: Decide) {
        if let ours = local.copy, challengeCount == .updated || challengeCount == .deleted {
            decide(
                winner.isCopy ? .incoming : .neither, .replaced, version(ours),
                incoming.copy.map(version) ?? incoming.tombstone.map(version))
        }
        if expiredIncoming, let tombstone = incoming.tombstone {
            decide(.neither, .expired, nil, version(tombstone))
        }
    }
}

extension MergeReport {
    /// Adds one id's counts.
    mutating func count(_ resolution: ChallengeResolution) {
        switch resolution.challengeCount {
        case .added?: challenges.added += 1
        case .updated?: challenges.updated += 1
        case .unchanged?: challenges.unchanged += 1
        case .deleted?: challenges.deleted += 1
        case .keptDeleted?: challenges.keptDeleted += 1
        case .revived?: challenges.revived += 1
        case .heldBack?: challenges.heldBack += 1
        case nil: break
        }
        switch resolution.tombstoneCount {
        case .added?: tombstones.added += 1
        case .unchanged?: tombstones.unchanged += 1
        case .expired?: tombstones.expired += 1
        case .heldBack?: tombstones.heldBack += 1
        case nil: break
        }
    }
}
