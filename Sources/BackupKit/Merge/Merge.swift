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

/// Each day-log key's resolution applied: only the winner is stored (into the result), its
/// count and lines recorded. Indices into both arrays, read in place.
private struct DayLogWalk: KeyedWalk {
    let local: [DayLog]
    let incoming: [DayLog]
    let fates: LogFates
    var rules: DayLogRule.Context
    var report = MergeReport.DayLogs()
    var decisions: [MergeDecision] = []
    var futureStamped: [FutureStampedItem] = []

    static func key(_ log: DayLog) -> DayLogKey { log.key }

    mutating func walk(
        local localRange: Range<Int>, incoming incomingRange: Range<Int>,
        into output: UnsafeMutablePointer<DayLog>
    ) -> Int {
        var written = 0
        var lookup = LogFateCursor(fates)
        var keys = KeyWalk(
            local: local, incoming: incoming, localRange: localRange,
            incomingRange: incomingRange)
        while let (key, ours, theirs) = keys.next() {
            let (fate, challenge) = lookup.fate(of: key.challengeID)
            let resolution = DayLogRule.resolve(
                local: ours, incoming: theirs, fate: fate, challenge: challenge, context: &rules)
            resolution.record(
                key, local: ours, incoming: theirs, decisions: &decisions,
                futureStamped: &futureStamped)
            report.count(resolution)
            let winner: DayLog? =
                switch resolution.winner {
                case .local: ours
                case .incoming: theirs
                case .nothing: nil
                }
            if let winner {
                (output + written).initialize(to: winner)
                written += 1
            }
        }
        return written
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
    let local: [DayLog]
    let incoming: [DayLog]
    var localIndex: Int
    var incomingIndex: Int
    let localEnd: Int
    let incomingEnd: Int

    init(local: [DayLog], incoming: [DayLog], localRange: Range<Int>, incomingRange: Range<Int>) {
        self.local = local
        self.incoming = incoming
        localIndex = localRange.lowerBound
        localEnd = localRange.upperBound
        incomingIndex = incomingRange.lowerBound
        incomingEnd = incomingRange.upperBound
    }

    /// The next key and each side's copy of it (nil where that side lacks it).
    mutating func next() -> (key: DayLogKey, local: DayLog?, incoming: DayLog?)? {
        let hasOurs = localIndex < localEnd
        let hasTheirs = incomingIndex < incomingEnd
        if hasOurs, hasTheirs, local[localIndex].key == incoming[incomingIndex].key {
            localIndex += 1
            incomingIndex += 1
            return (local[localIndex - 1].key, local[localIndex - 1], incoming[incomingIndex - 1])
        }
        if hasOurs, !hasTheirs || local[localIndex].key < incoming[incomingIndex].key {
            localIndex += 1
            return (local[localIndex - 1].key, local[localIndex - 1], nil)
        }
        guard hasTheirs else { return nil }
        incomingIndex += 1
        return (incoming[incomingIndex - 1].key, nil, incoming[incomingIndex - 1])
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
