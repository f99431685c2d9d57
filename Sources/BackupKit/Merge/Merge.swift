import Parallel

/// The sync (FORMAT.md §5.1): newest edit wins per challenge and per day log, dated tombstones keep
/// deletes until a later edit, guards filter the incoming side first.
///
/// Design: every collection is a sorted array, so the merge is one linear walk per kind.
/// Challenges and tombstones share their key (the challenge id), so one walk over four
/// cursors (local copies, local tombstones, incoming copies, incoming tombstones) hands each
/// id to `ChallengeRule.resolve` (rules 1, 7, 8, 2, 3, 4 in that order) and applies its answer. Day logs follow
/// in a two-way walk that knows, per challenge, whether it ended live or tombstoned and what
/// happened to it on the way (held back, deleted here, revived): rule 5 merges every day log
/// by key, keeps it under a tombstone while its challenge is deleted, and drops it only when
/// its challenge is neither live nor tombstoned, so no delete that a later edit undoes loses
/// a check-in, in whatever order devices sync.
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
    switch options.mode {
    case .merge: return merger.merge(local: local, incoming: incoming)
    case .replace: return merger.replace(local: local, incoming: incoming)
    }
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

/// A copy of an item that merges by `updatedAt`, then by canonical bytes.
protocol Copy: Equatable {
    var updatedAt: Timestamp { get }
    func writeCanonical(into out: inout JSONOutput)
    /// True only when the canonical bytes are certainly equal, found without writing them.
    func isSurelyIdentical(to other: Self) -> Bool
}

extension Challenge: Copy {
    func writeCanonical(into out: inout JSONOutput) {
        BackupWriter.write(self, into: &out)
    }

    /// Challenges are few; their bytes decide.
    func isSurelyIdentical(to other: Challenge) -> Bool { false }
}

extension DayLog: Copy {
    func writeCanonical(into out: inout JSONOutput) {
        BackupWriter.write(self, into: &out)
    }

    /// Most day logs are the same on both devices, so this saves writing both. The note,
    /// the one free text, is compared byte by byte (`==` on strings allows Unicode
    /// equivalence); ids are ASCII, where the two agree. Cheap fields first.
    func isSurelyIdentical(to other: DayLog) -> Bool {
        guard updatedAt == other.updatedAt, mood == other.mood, key == other.key,
            values == other.values
        else { return false }
        var note = note
        var otherNote = other.note
        return note.withUTF8 { mine in otherNote.withUTF8 { mine.elementsEqual($0) } }
    }
}

/// Rule 2's answer for one pair of copies.
enum Pick: Equatable, Sendable {
    case local, incoming, identical
}

/// Rule 2 with reusable buffers for canonical bytes, so tie-breaks allocate nothing.
struct TieBreak {
    private var leftBytes = JSONOutput(capacity: 512)
    private var rightBytes = JSONOutput(capacity: 512)

    /// Rule 2 for one pair of copies.
    mutating func pick<C: Copy>(_ local: C, _ incoming: C) -> Pick {
        if local.updatedAt != incoming.updatedAt {
            return local.updatedAt < incoming.updatedAt ? .incoming : .local
        }
        return compareBytes(local, incoming)
    }

    /// `.identical` when the canonical bytes match, else the side whose bytes sort higher.
    mutating func compareBytes<C: Copy>(_ local: C, _ incoming: C) -> Pick {
        if local.isSurelyIdentical(to: incoming) { return .identical }
        leftBytes.reset()
        rightBytes.reset()
        local.writeCanonical(into: &leftBytes)
        incoming.writeCanonical(into: &rightBytes)
        if leftBytes.bytes == rightBytes.bytes { return .identical }
        return leftBytes.bytes.lexicographicallyPrecedes(rightBytes.bytes) ? .incoming : .local
    }
}

private struct Merger {
    let options: MergeOptions
    var report = MergeReport()
    var decisions: [MergeDecision] = []
    var futureStamped: [FutureStampedItem] = []
    /// Rule 2's buffers live here too, for `replace`.
    var logRules: DayLogRule.Context

    init(options: MergeOptions) {
        self.options = options
        logRules = DayLogRule.Context(options: options)
    }

    mutating func decide(
        _ item: MergeDecision.Item, _ winner: MergeDecision.Winner, _ reason: MergeDecision.Reason,
        local: MergeDecision.Version? = nil, incoming: MergeDecision.Version? = nil
    ) {
        decisions.append(
            MergeDecision(
                item: item, winner: winner, reason: reason, local: local, incoming: incoming))
    }

    func isExpired(_ tombstone: Tombstone) -> Bool { tombstone.deletedAt < options.windowStart }

    // MARK: Merge

    mutating func merge(local: BackupDocument, incoming: BackupDocument) -> MergeOutcome {
        let windowStart = options.windowStart
        // Rule 7's exemption: nothing can be a forgotten delete when there is nothing here.
        let localIsEmpty =
            local.challenges.isEmpty && !local.tombstones.contains { !isExpired($0) }
        let staleGuard =
            !options.allowStale && !localIsEmpty && incoming.exportedAt < windowStart

        var result = BackupDocument(
            exportedAt: options.now, deviceId: local.deviceId, settings: local.settings)
        result.challenges.reserveCapacity(max(local.challenges.count, incoming.challenges.count))
        /// What the day-log walk must know beyond each id's end state.
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

        result.dayLogs = mergeDayLogs(
            local: local.dayLogs, incoming: incoming.dayLogs,
            fates: LogFates(result: result, context: logContext))
        return MergeOutcome(
            document: result, report: report, decisions: decisions, futureStamped: futureStamped)
    }

    /// Rules 2 and 5 for day logs, with the incoming ones the guards hold back: each key's
    /// winner is live when its challenge is, kept when it is tombstoned, else dropped.
    ///
    /// Many day logs are merged in two halves of the keys on two cores: the larger side's
    /// logs split at their middle key, the other side's where that key would go, so every key
    /// falls in one half with both its copies. The first half is merged by this merger, the
    /// second by a fresh one whose lists and counts are then put after and added to this
    /// one's: the decisions stay in key order and the outcome is the one a single walk
    /// gives. Both halves write into
    /// the result's storage, the second at an offset the first cannot reach (it has at most
    /// one log per key it was given), and is then moved down behind the first.
    mutating func mergeDayLogs(local: [DayLog], incoming: [DayLog], fates: LogFates) -> [DayLog] {
        // Both sides' count bounds the result: reserving that much costs only address space,
        // while growing a million-log array would copy it and briefly hold it twice.
        let capacity = local.count + incoming.count
        return [DayLog](unsafeUninitializedCapacity: capacity) { buffer, count in
            guard let output = buffer.baseAddress else { return }
            guard capacity >= max(options.twoCoresFromLogs, 2) else {
                count = mergeDayLogs(
                    local: local, incoming: incoming, localRange: local.indices,
                    incomingRange: incoming.indices, fates: fates, into: output)
                return
            }
            // A first sync or a restore has one side (nearly) empty: split the other.
            let (localMiddle, incomingMiddle) =
                local.count >= incoming.count
                ? (local.count / 2, incoming.lowerBound(of: local[local.count / 2].key, by: \.key))
                : (
                    local.lowerBound(of: incoming[incoming.count / 2].key, by: \.key),
                    incoming.count / 2
                )
            let secondStart = localMiddle + incomingMiddle
            let options = options
            let shared = SharedOutput(start: output + secondStart)
            let (firstCount, secondHalf) = concurrently(
                {
                    mergeDayLogs(
                        local: local, incoming: incoming, localRange: 0..<localMiddle,
                        incomingRange: 0..<incomingMiddle, fates: fates, into: output)
                },
                {
                    var second = Merger(options: options)
                    let written = second.mergeDayLogs(
                        local: local, incoming: incoming,
                        localRange: localMiddle..<local.count,
                        incomingRange: incomingMiddle..<incoming.count, fates: fates,
                        into: shared.start)
                    return (second, written)
                })
            (output + firstCount).moveInitialize(
                from: output + secondStart, count: secondHalf.1)
            count = firstCount + secondHalf.1
            report.dayLogs.add(secondHalf.0.report.dayLogs)
            decisions += secondHalf.0.decisions
            futureStamped += secondHalf.0.futureStamped
        }
    }

    /// One walk over the keys of the two ranges, writing the surviving logs from `output`
    /// on; returns how many it wrote.
    mutating func mergeDayLogs(
        local: [DayLog], incoming: [DayLog], localRange: Range<Int>, incomingRange: Range<Int>,
        fates: LogFates, into output: UnsafeMutablePointer<DayLog>
    ) -> Int {
        var written = 0
        var lookup = LogFateCursor(fates)
        var walk = KeyWalk(
            local: local, incoming: incoming, localRange: localRange,
            incomingRange: incomingRange)
        // Indices into both arrays, read in place: each key's copies go to the rule, and only
        // the winner is stored (into the result).
        while let (key, ours, theirs) = walk.nextIndices() {
            let (fate, challenge) = lookup.fate(of: key.challengeID)
            let mine = ours.map { local[$0] }
            let their = theirs.map { incoming[$0] }
            let resolution = DayLogRule.resolve(
                local: mine, incoming: their, fate: fate, challenge: challenge,
                context: &logRules)
            resolution.record(
                key, local: mine, incoming: their, decisions: &decisions,
                futureStamped: &futureStamped)
            report.dayLogs.count(resolution)
            let winner: DayLog? =
                switch resolution.winner {
                case .local: mine
                case .incoming: their
                case .nothing: nil
                }
            if let winner {
                (output + written).initialize(to: winner)
                written += 1
            }
        }
        return written
    }

    // MARK: Replace

    /// Not a merge: the backup as it is (its expired tombstones dropped), counted against the
    /// local side; local settings keep only `premium` and `appLock`.
    mutating func replace(local: BackupDocument, incoming: BackupDocument) -> MergeOutcome {
        var result = BackupDocument(
            exportedAt: options.now, deviceId: local.deviceId,
            settings: local.settings.importing(incoming.settings),
            challenges: incoming.challenges, dayLogs: incoming.dayLogs)

        var cursor = IDCursor(local: local, incoming: incoming)
        while let (id, entry) = cursor.next() {
            let item = MergeDecision.Item.challenge(id)
            // Replace has no guard, but rule 8's report is "always": a skewed device's
            // stamps are worth a warning whichever way the file comes in.
            if let theirs = entry.incoming.copy, theirs.updatedAt > options.futureLimit {
                futureStamped.append(FutureStampedItem(item: item, version: version(theirs)))
            }
            if let tombstone = entry.incoming.tombstone, tombstone.deletedAt > options.futureLimit {
                futureStamped.append(FutureStampedItem(item: item, version: version(tombstone)))
            }
            switch (entry.local.copy, entry.incoming.copy) {
            case (let ours?, let theirs?):
                if logRules.tieBreak.compareBytes(ours, theirs) == .identical {
                    report.challenges.unchanged += 1
                } else {
                    report.challenges.updated += 1
                    decide(
                        item, .incoming, .replaced, local: version(ours), incoming: version(theirs))
                }
            case (nil, .some):
                report.challenges.added += 1
            case (let ours?, nil):
                report.challenges.deleted += 1
                decide(
                    item, .neither, .replaced, local: version(ours),
                    incoming: entry.incoming.tombstone.map(version))
            case (nil, nil):
                break
            }
            if let tombstone = entry.incoming.tombstone {
                if isExpired(tombstone) {
                    report.tombstones.expired += 1
                    decide(item, .neither, .expired, incoming: version(tombstone))
                } else {
                    result.tombstones.append(tombstone)
                    let hadOne = entry.local.tombstone.map { !isExpired($0) } ?? false
                    if hadOne {
                        report.tombstones.unchanged += 1
                    } else {
                        report.tombstones.added += 1
                    }
                }
            }
        }

        // The backup's day logs, less those kept under a tombstone the window dropped.
        var lookup = LogFateCursor(LogFates(result: result, context: [:]))
        var dropped = false
        var walk = KeyWalk(local: local.dayLogs, incoming: incoming.dayLogs)
        while let (key, ours, theirs) = walk.next() {
            guard let log = theirs else {
                // The report's shape has no "deleted" for day logs; a local log the backup
                // does not have is dropped like an orphan.
                report.dayLogs.droppedOrphans += 1
                decide(.dayLog(key), .neither, .replaced, local: ours.map(version))
                continue
            }
            if log.updatedAt > options.futureLimit {
                futureStamped.append(FutureStampedItem(item: .dayLog(key), version: version(log)))
            }
            switch lookup.fate(of: key.challengeID).fate {
            case .dropped:
                dropped = true
                report.dayLogs.droppedOrphans += 1
                decide(
                    .dayLog(key), .neither, .orphan, local: ours.map(version),
                    incoming: version(log))
            case .kept:
                report.dayLogs.keptUnderTombstone += 1
            case .live:
                if let mine = ours {
                    if logRules.tieBreak.compareBytes(mine, log) == .identical {
                        report.dayLogs.unchanged += 1
                    } else {
                        report.dayLogs.updated += 1
                        decide(
                            .dayLog(key), .incoming, .replaced, local: version(mine),
                            incoming: version(log))
                    }
                } else {
                    report.dayLogs.added += 1
                }
            }
        }
        if dropped {
            var lookup = LogFateCursor(LogFates(result: result, context: [:]))
            result.dayLogs.removeAll { lookup.fate(of: $0.key.challengeID).fate == .dropped }
        }
        return MergeOutcome(
            document: result, report: report, decisions: decisions, futureStamped: futureStamped)
    }
}

func version(_ copy: some Copy) -> MergeDecision.Version {
    MergeDecision.Version(isTombstone: false, stamp: copy.updatedAt)
}

func version(_ tombstone: Tombstone) -> MergeDecision.Version {
    MergeDecision.Version(isTombstone: true, stamp: tombstone.deletedAt)
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
        let heads = [
            indices.0 < local.challenges.count ? local.challenges[indices.0].id : nil,
            indices.1 < local.tombstones.count ? local.tombstones[indices.1].id : nil,
            indices.2 < incoming.challenges.count ? incoming.challenges[indices.2].id : nil,
            indices.3 < incoming.tombstones.count ? incoming.tombstones[indices.3].id : nil,
        ]
        guard let id = heads.compactMap({ $0 }).min() else { return nil }
        var entry = IDEntry()
        if heads[0] == id {
            entry.local.copy = local.challenges[indices.0]
            indices.0 += 1
        }
        if heads[1] == id {
            entry.local.tombstone = local.tombstones[indices.1]
            indices.1 += 1
        }
        if heads[2] == id {
            entry.incoming.copy = incoming.challenges[indices.2]
            indices.2 += 1
        }
        if heads[3] == id {
            entry.incoming.tombstone = incoming.tombstones[indices.3]
            indices.3 += 1
        }
        return (id, entry)
    }
}

/// Walks two day-log arrays sorted by key, pairing equal keys.
private struct KeyWalk {
    let local: [DayLog]
    let incoming: [DayLog]
    var localIndex: Int
    var incomingIndex: Int
    let localEnd: Int
    let incomingEnd: Int

    init(
        local: [DayLog], incoming: [DayLog], localRange: Range<Int>? = nil,
        incomingRange: Range<Int>? = nil
    ) {
        self.local = local
        self.incoming = incoming
        let localRange = localRange ?? local.indices
        let incomingRange = incomingRange ?? incoming.indices
        localIndex = localRange.lowerBound
        localEnd = localRange.upperBound
        incomingIndex = incomingRange.lowerBound
        incomingEnd = incomingRange.upperBound
    }

    /// The next key and its position in each array (nil where that side lacks it).
    mutating func nextIndices() -> (key: DayLogKey, local: Int?, incoming: Int?)? {
        let hasOurs = localIndex < localEnd
        let hasTheirs = incomingIndex < incomingEnd
        if hasOurs, hasTheirs, local[localIndex].key == incoming[incomingIndex].key {
            localIndex += 1
            incomingIndex += 1
            return (local[localIndex - 1].key, localIndex - 1, incomingIndex - 1)
        }
        if hasOurs, !hasTheirs || local[localIndex].key < incoming[incomingIndex].key {
            localIndex += 1
            return (local[localIndex - 1].key, localIndex - 1, nil)
        }
        guard hasTheirs else { return nil }
        incomingIndex += 1
        return (incoming[incomingIndex - 1].key, nil, incomingIndex - 1)
    }

    mutating func next() -> (key: DayLogKey, local: DayLog?, incoming: DayLog?)? {
        guard let (key, ours, theirs) = nextIndices() else { return nil }
        return (key, ours.map { local[$0] }, theirs.map { incoming[$0] })
    }
}

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
