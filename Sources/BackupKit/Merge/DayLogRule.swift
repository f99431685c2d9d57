/// FORMAT.md §5.1 for one day-log key: which copy is in the result, which rule decided, and
/// what that adds to the report. Pure: the answer depends only on the copies each side holds,
/// what became of their challenge, and the merge's options, so every rule can be tested one
/// row at a time (DayLogRuleTests).
///
/// The rules run as §5.3 orders them: the guards (rules 7, 8) filter the incoming copy first,
/// rule 2 weighs what is left, and rule 5 puts the winner where its challenge went. The
/// resolution is a few bytes of flags, since the merge calls this for each of up to a million
/// keys.
///
/// Worked example: challenge X was live here and deleted by the incoming tombstone, so its
/// context is `deletedHere` and its fate `kept`. Local `X/2026-11-02` edited 11-02 10:00,
/// incoming 11-02 09:00: no guard applies, rule 2 keeps the local copy (`newer`), and rule 5
/// keeps it under the tombstone (`keptUnderTombstone`), counted `keptUnderTombstone`. Both
/// rules' decisions are worth a line, in that order.
enum DayLogRule {
    /// What the rules need beyond the copies and their challenge: the clock guard, and
    /// reusable buffers for rule 2's canonical bytes.
    struct Context {
        /// `now + 24 h` (rule 8).
        let futureLimit: Timestamp
        /// `--clock-guard`: rule 8 holds back instead of only reporting.
        let clockGuard: Bool
        /// Merge (§5.1) or replace (§5.2).
        let mode: MergeOptions.Mode
        /// Scratch space only: it never changes an answer.
        var tieBreak = TieBreak()

        init(options: MergeOptions) {
            futureLimit = options.futureLimit
            clockGuard = options.clockGuard
            mode = options.mode
        }
    }

    /// Settles one day-log key from each side's copy, where its challenge ends (`fate`) and
    /// what the challenge walk noted about it (`challenge`), by the rules of the mode.
    static func resolve<Log: Copy>(
        local: Log?, incoming: Log?, fate: LogFate, challenge: LogContext?,
        context: inout Context
    ) -> DayLogResolution {
        switch context.mode {
        case .merge:
            return merge(
                local: local, incoming: incoming, fate: fate, challenge: challenge,
                context: &context)
        case .replace:
            return replace(local: local, incoming: incoming, fate: fate, context: &context)
        }
    }

    /// FORMAT.md §5.1 for one key.
    private static func merge<Log: Copy>(
        local: Log?, incoming: Log?, fate: LogFate, challenge: LogContext?,
        context: inout Context
    ) -> DayLogResolution {
        var resolution = DayLogResolution()
        var theirs = incoming
        holdBack(&theirs, challenge, context, &resolution)
        let side = newerCopy(local, theirs, &context.tieBreak, &resolution)
        follow(side, hadLocal: local != nil, fate, challenge, &resolution)
        return resolution
    }

    /// Rules 7 and 8: the incoming copy goes where its held-back challenge goes, or is held
    /// back alone when stamped after `now + 24 h` under `--clock-guard`. A future stamp is
    /// reported even when the challenge took the copy already (rule 8: "always reported").
    private static func holdBack<Log: Copy>(
        _ theirs: inout Log?, _ challenge: LogContext?, _ context: Context,
        _ resolution: inout DayLogResolution
    ) {
        guard let copy = theirs else { return }
        resolution.future = copy.updatedAt > context.futureLimit
        if case .heldBack(let reason) = challenge {
            resolution.heldBack = reason == .stale ? .stale : .withChallenge
        } else if resolution.future, context.clockGuard {
            resolution.heldBack = .future
        }
        if let held = resolution.heldBack {
            theirs = nil
            resolution.reason = held.reason
        }
    }

    /// Rule 2, newer wins: of two copies the later `updatedAt`, on equal stamps the higher
    /// canonical bytes; identical copies keep the local one.
    private static func newerCopy<Log: Copy>(
        _ ours: Log?, _ theirs: Log?, _ tieBreak: inout TieBreak,
        _ resolution: inout DayLogResolution
    ) -> ChallengeRule.Side? {
        guard let theirs else { return ours == nil ? nil : .local }
        guard let ours else { return .incoming }
        let pick = tieBreak.pick(ours, theirs)
        resolution.pick = pick
        resolution.reason =
            pick == .identical
            ? .identical : ours.updatedAt == theirs.updatedAt ? .higherBytes : .newer
        return pick == .incoming ? .incoming : .local
    }

    /// Rule 5 and the counts (FORMAT.md §6.1, §6.2): the winner is live with a live challenge,
    /// kept under a tombstone, else dropped; a key whose incoming copy was held back counts
    /// only `heldBack`, though a copy here still goes where its challenge went.
    private static func follow(
        _ side: ChallengeRule.Side?, hadLocal: Bool, _ fate: LogFate, _ challenge: LogContext?,
        _ resolution: inout DayLogResolution
    ) {
        let survives = side != nil && fate != .dropped
        resolution.winner = !survives ? .nothing : side == .incoming ? .incoming : .local
        if resolution.heldBack != nil {
            resolution.count = .heldBack
        } else if !survives {
            resolution.count = .droppedOrphan
            resolution.reason = .orphan
        } else if fate == .kept {
            resolution.count = .keptUnderTombstone
            // Not worth a line when it was kept here already and stays as it was.
            if side == .incoming || challenge == .deletedHere {
                resolution.reason = .keptUnderTombstone
            }
        } else {
            resolution.count =
                !hadLocal ? .added : side == .incoming ? .updated : .unchanged
        }
        // The tombstone rule 4 beat kept the logs of its own side; those come back with it.
        if survives, fate == .live, challenge == .revived(kept: side?.winner ?? .neither) {
            resolution.reason = .returnsWithChallenge
        }
    }
}

/// The answer of `DayLogRule.resolve` for one key: a few bytes of flags, so the merge can
/// afford one per day log.
struct DayLogResolution: Equatable, Sendable {
    /// The copy in the result.
    enum Winner: Equatable, Sendable {
        case local, incoming
        /// Nothing: dropped as an orphan, or held back with no copy here.
        case nothing
    }

    /// The rule that decided: the last of FORMAT.md §5.1's rules that changed the outcome.
    enum Reason: Equatable, Sendable {
        /// One copy was left after the guards: nothing to weigh it against.
        case sole
        /// Rule 2: the later `updatedAt`.
        case newer
        /// Rule 2: equal stamps, the higher canonical bytes.
        case higherBytes
        /// Rule 2: both sides hold the same bytes; the local one stays.
        case identical
        /// Rule 5: its challenge is tombstoned, and the log newly kept under it.
        case keptUnderTombstone
        /// Rule 5: its challenge was revived, and it was kept under the beaten tombstone.
        case returnsWithChallenge
        /// Rule 5: its challenge is neither live nor tombstoned, so it is dropped.
        case orphan
        /// Rule 7: held back with its challenge by the stale guard.
        case stale
        /// Rule 8: held back with its challenge by the clock guard.
        case withChallenge
        /// Rule 8: held back alone, stamped after `now + 24 h` under `--clock-guard`.
        case future
        /// §5.2: a replace took the backup's copy, or dropped one the backup does not have.
        case replaced

        /// Rule 5's decision (or a replace's) as decisions name it; the guards' are recorded
        /// from `heldBack`, rule 2's from `pick`.
        var followDecision: MergeDecision.Reason? {
            switch self {
            case .keptUnderTombstone: return .keptUnderTombstone
            case .returnsWithChallenge: return .returnsWithChallenge
            case .orphan: return .orphan
            case .replaced: return .replaced
            case .sole, .newer, .higherBytes, .identical, .stale, .withChallenge, .future:
                return nil
            }
        }
    }

    /// Why the incoming copy was held back (FORMAT.md §5.1 rules 7, 8).
    enum HeldBack: Equatable, Sendable {
        case stale, withChallenge, future

        var reason: Reason {
            switch self {
            case .stale: return .stale
            case .withChallenge: return .withChallenge
            case .future: return .future
            }
        }

        var decisionReason: MergeDecision.Reason {
            switch self {
            case .stale: return .stale
            case .withChallenge: return .withChallenge
            case .future: return .future
            }
        }
    }

    /// The day-log count this key adds (FORMAT.md §6.1): exactly one.
    enum Count: Equatable, Sendable {
        case added, updated, unchanged, keptUnderTombstone, droppedOrphan, heldBack
    }

    var winner = Winner.nothing
    var reason = Reason.sole
    var count = Count.unchanged
    /// Why the incoming copy was held back, if it was.
    var heldBack: HeldBack?
    /// Rule 8's report: the incoming copy is stamped after `now + 24 h`.
    var future = false
    /// Rule 2's pick when both sides had a copy left to weigh.
    var pick: Pick?
}

extension DayLogResolution {
    /// The decisions worth a line, in the order the rules ran, and rule 8's future-stamped item;
    /// `local` and `incoming` are what `resolve` was given.
    func record<Log: Copy>(
        _ key: DayLogKey, local: Log?, incoming: Log?, decisions: inout [MergeDecision],
        futureStamped: inout [FutureStampedItem]
    ) {
        let item = MergeDecision.Item.dayLog(key)
        let ours = local.map(version)
        let theirs = incoming.map(version)
        if future, let theirs {
            futureStamped.append(FutureStampedItem(item: item, version: theirs))
        }
        if let held = heldBack?.decisionReason {
            decisions.append(
                MergeDecision(
                    item: item, winner: .neither, reason: held, local: ours,
                    incoming: theirs))
        }
        if let pick, pick != .identical, let ours, let theirs {
            decisions.append(
                MergeDecision(
                    item: item, winner: pick == .local ? .local : .incoming,
                    reason: ours.stamp == theirs.stamp ? .equalStampsHigherBytes : .newer,
                    local: ours, incoming: theirs))
        }
        if let rule = reason.followDecision {
            decisions.append(
                MergeDecision(
                    item: item, winner: winner.decision, reason: rule, local: ours,
                    incoming: heldBack == nil ? theirs : nil))
        }
    }
}

extension DayLogResolution.Winner {
    /// The winner as decisions name it.
    var decision: MergeDecision.Winner {
        switch self {
        case .local: return .local
        case .incoming: return .incoming
        case .nothing: return .neither
        }
    }
}

extension MergeReport.DayLogs {
    /// Adds one key's count.
    mutating func count(_ resolution: DayLogResolution) {
        switch resolution.count {
        case .added: added += 1
        case .updated: updated += 1
        case .unchanged: unchanged += 1
        case .keptUnderTombstone: keptUnderTombstone += 1
        case .droppedOrphan: droppedOrphans += 1
        case .heldBack: heldBack += 1
        }
    }
}
