import Parallel

/// The sync (FORMAT.md §5.1): newest edit wins per challenge and per day log, dated tombstones keep
/// deletes until a later edit, guards filter the incoming side first.
///
/// Design: every collection is a sorted array, so the merge is one linear walk per kind, and
/// the walks only apply what the rules decide (`ChallengeRule`, `DayLogRule`, and for a
/// replace, §5.2, `ReplaceRule.swift`'s). Challenges and tombstones share their key (the
/// challenge id), so one walk over four cursors (local copies, local tombstones, incoming
/// copies, incoming tombstones) hands each id to `ChallengeRule.resolve` (rules 1, 7, 8, 2, 3,
/// 4 in that order) and applies its answer. Day logs follow in a two-way walk (`KeyedWalk`, on
/// two cores when they are many) that knows, per challenge, whether it ended live or
/// tombstoned and what happened to it on the way (held back, deleted here, revived): rule 5
/// merges every day log by key, keeps it under a tombstone while its challenge is deleted, and
/// drops it only when its challenge is neither live nor tombstoned, so no delete that a later
/// edit undoes loses a check-in, in whatever order devices sync.
///
/// Worked example, `now` 2026-11-29, window 90 days:
///
///     local    X edited 03-10                     tombstone Y deleted 11-01
///     incoming X edited 03-12 (different title)   Y edited 11-05
///     → X: incoming newer, updated; Y: edited after the delete, revived, tombstone dropped.
///
/// Equal stamps compare the copies' canonical bytes (the writer's own output), so the result
/// never depends on which side is local; only comparisons with equal stamps pay for it.
public func merge(
    local: BackupDocument, incoming: BackupDocument, options: MergeOptions
) -> MergeOutcome {
    var merger = Merger(options: options)
    return merger.merge(local: local, incoming: incoming)
}

extension Settings {
    /// `incoming`'s settings as an import takes them (FORMAT.md §5.1 rule 6): import never changes
    /// `premium` or `appLock`, so those stay as they are here. (The third such field,
    /// `deviceId`, belongs to the document, and every merge keeps the local one.)
    public func importing(_ incoming: Settings) -> Settings {
        var settings = incoming
        settings.premium = premium
        settings.appLock = appLock
        return settings
    }
}

/// The walks: each id, then each day-log key, handed to the rules of the mode, and their
/// answers applied into the result, the report and the lists.
private struct Merger {
    let options: MergeOptions
    var report = MergeReport()
    var decisions: [MergeDecision] = []
    var futureStamped: [FutureStampedItem] = []

    init(options: MergeOptions) {
        self.options = options
    }

    mutating func merge(local: BackupDocument, incoming: BackupDocument) -> MergeOutcome {
        var result = BackupDocument(
            exportedAt: options.now, deviceId: local.deviceId,
            settings: options.mode == .merge
                ? local.settings : local.settings.importing(incoming.settings))
        let logContext = mergeChallenges(local: local, incoming: incoming, into: &result)
        var logs = DayLogWalk(
            local: local.dayLogs, incoming: incoming.dayLogs,
            fates: LogFates(result: result, context: logContext),
            rules: DayLogRule.Context(options: options))
        result.dayLogs = logs.walkAll(twoCoresFrom: options.twoCoresFromLogs)
        report.dayLogs = logs.report
        decisions += logs.decisions
        futureStamped += logs.futureStamped
        return MergeOutcome(
            document: result, report: report, decisions: decisions, futureStamped: futureStamped)
    }

    /// Each challenge id's resolution applied: its winner into `result`, its counts and lines
    /// recorded; returns what the day-log walk must know beyond each id's end state.
    mutating func mergeChallenges(
        local: BackupDocument, incoming: BackupDocument, into result: inout BackupDocument
    ) -> [ChallengeID: LogContext] {
        // Rule 7's exemption: nothing can be a forgotten delete when there is nothing here.
        let windowStart = options.windowStart
        let localIsEmpty =
            local.challenges.isEmpty && !local.tombstones.contains { $0.deletedAt >= windowStart }
        let staleGuard =
            options.mode == .merge && !options.allowStale && !localIsEmpty
            && incoming.exportedAt < windowStart
        result.challenges.reserveCapacity(max(local.challenges.count, incoming.challenges.count))
        var logContext: [ChallengeID: LogContext] = [:]
        var context = ChallengeRule.Context(options: options, staleGuard: staleGuard)
        var cursor = IDCursor(local: local, incoming: incoming)
        while let (id, entry) = cursor.next() {
            let resolution = ChallengeRule.resolve(
                local: entry.local, incoming: entry.incoming, context: &context)
            resolution.record(
                id, local: entry.local, incoming: entry.incoming, decisions: &decisions,
                futureStamped: &futureStamped)
            report.count(resolution)
            if let logs = resolution.logContext { logContext[id] = logs }
            switch resolution.winner {
            case .copy(let side):
                if let copy = entry[side].copy { result.challenges.append(copy) }
            case .tombstone(let side):
                if let tombstone = entry[side].tombstone { result.tombstones.append(tombstone) }
            case .nothing:
                break
            }
        }
        return logContext
    }
}

/// Each day-log key's resolution applied: only the winner is stored (into the result), copied
/// from its store without being made a value, its count and lines recorded.
private struct DayLogWalk: KeyedWalk {
    let local: DayLogStore
    let incoming: DayLogStore
    let fates: LogFates
    var rules: DayLogRule.Context
    var report = MergeReport.DayLogs()
    var decisions: [MergeDecision] = []
    var futureStamped: [FutureStampedItem] = []

    mutating func walk(
        local localRange: Range<Int>, incoming incomingRange: Range<Int>,
        into output: inout DayLogStore
    ) {
        let (local, incoming) = (local, incoming)
        var keys = KeyWalk(
            local: local, incoming: incoming, localRange: localRange,
            incomingRange: incomingRange)
        var lookup = LogFateCursor(fates)
        var fromLocal = DayLogStore.Transfer()
        var fromIncoming = DayLogStore.Transfer()
        withUnsafePointer(to: local) { localStore in
            withUnsafePointer(to: incoming) { incomingStore in
                while let (key, ourPosition, theirPosition) = keys.next() {
                    let ours = ourPosition.map { StoredLog(store: localStore, position: $0) }
                    let theirs = theirPosition.map { StoredLog(store: incomingStore, position: $0) }
                    let (fate, challenge) = lookup.fate(of: key.challengeID)
                    let resolution = DayLogRule.resolve(
                        local: ours, incoming: theirs, fate: fate, challenge: challenge,
                        context: &rules)
                    resolution.record(
                        key, local: ours, incoming: theirs, decisions: &decisions,
                        futureStamped: &futureStamped)
                    report.count(resolution)
                    switch (resolution.winner, ourPosition, theirPosition) {
                    case (.local, let position?, _):
                        output.append(from: local, at: position, transfer: &fromLocal)
                    case (.incoming, _, let position?):
                        output.append(from: incoming, at: position, transfer: &fromIncoming)
                    default:
                        break
                    }
                }
            }
        }
    }

    func fresh() -> DayLogWalk {
        DayLogWalk(local: local, incoming: incoming, fates: fates, rules: rules)
    }

    mutating func append(_ later: DayLogWalk) {
        report.add(later.report)
        decisions += later.decisions
        futureStamped += later.futureStamped
    }
}

/// Everything both sides hold for one challenge id.
private struct IDEntry {
    var local = ChallengeSide()
    var incoming = ChallengeSide()

    subscript(side: ChallengeRule.Side) -> ChallengeSide {
        side == .local ? local : incoming
    }
}

/// Walks the ids of four sorted arrays in order, each id once.
private struct IDCursor {
    let local: BackupDocument
    let incoming: BackupDocument
    var indices = (0, 0, 0, 0)

    init(local: BackupDocument, incoming: BackupDocument) {
        self.local = local
        self.incoming = incoming
    }

    mutating func next() -> (ChallengeID, IDEntry)? {
        let heads = (
            indices.0 < local.challenges.count ? local.challenges[indices.0].id : nil,
            indices.1 < local.tombstones.count ? local.tombstones[indices.1].id : nil,
            indices.2 < incoming.challenges.count ? incoming.challenges[indices.2].id : nil,
            indices.3 < incoming.tombstones.count ? incoming.tombstones[indices.3].id : nil
        )
        guard
            let id = Self.least(Self.least(heads.0, heads.1), Self.least(heads.2, heads.3))
        else { return nil }
        var entry = IDEntry()
        if heads.0 == id {
            entry.local.copy = local.challenges[indices.0]
            indices.0 += 1
        }
        if heads.1 == id {
            entry.local.tombstone = local.tombstones[indices.1]
            indices.1 += 1
        }
        if heads.2 == id {
            entry.incoming.copy = incoming.challenges[indices.2]
            indices.2 += 1
        }
        if heads.3 == id {
            entry.incoming.tombstone = incoming.tombstones[indices.3]
            indices.3 += 1
        }
        return (id, entry)
    }

    /// The smaller of two ids where both are there, else the one that is.
    private static func least(_ a: ChallengeID?, _ b: ChallengeID?) -> ChallengeID? {
        guard let a, let b else { return a ?? b }
        return min(a, b)
    }
}

/// Walks two ranges of day-log arrays sorted by key, pairing equal keys.
private struct KeyWalk {
    let local: DayLogStore
    let incoming: DayLogStore
    var localIndex: Int
    var incomingIndex: Int
    let localEnd: Int
    let incomingEnd: Int

    init(
        local: DayLogStore, incoming: DayLogStore, localRange: Range<Int>,
        incomingRange: Range<Int>
    ) {
        self.local = local
        self.incoming = incoming
        localIndex = localRange.lowerBound
        localEnd = localRange.upperBound
        incomingIndex = incomingRange.lowerBound
        incomingEnd = incomingRange.upperBound
    }

    /// The next key and where each side holds it (nil where that side lacks it).
    mutating func next() -> (key: DayLogKey, local: Int?, incoming: Int?)? {
        let ours = localIndex < localEnd ? local.key(at: localIndex) : nil
        let theirs = incomingIndex < incomingEnd ? incoming.key(at: incomingIndex) : nil
        if let ours, let theirs, ours == theirs {
            localIndex += 1
            incomingIndex += 1
            return (ours, localIndex - 1, incomingIndex - 1)
        }
        if let ours, theirs.map({ ours < $0 }) ?? true {
            localIndex += 1
            return (ours, localIndex - 1, nil)
        }
        guard let theirs else { return nil }
        incomingIndex += 1
        return (theirs, nil, incomingIndex - 1)
    }
}
