/// What a merge did, counted against the local side (FORMAT.md §6.1): each challenge id with a live
/// copy on either side has exactly one challenge count, each day-log key likewise.
///
/// Readings where the spec leaves a choice:
/// - Tombstones get at most one count per id, the first that applies: `heldBack` (the
///   incoming one, by the clock guard), `added`/`unchanged` (an incoming tombstone for the
///   id is in the result; "already here" means a local one survived the window), `expired`
///   (a tombstone for the id was dropped by the window, on either side). A local-only
///   tombstone is not counted.
/// - Replace has no "deleted" for day logs: a local log the backup lacks counts under
///   `droppedOrphans`.
/// - A day log kept under a tombstone in the result counts `keptUnderTombstone` only; one
///   kept here that returns live is "a copy here" (FORMAT.md §6.2): `updated` when the incoming
///   copy wins with different content, else `unchanged`.
public struct MergeReport: Equatable, Sendable {
    /// What became of each challenge id live on either side: exactly one count per id.
    public struct Challenges: Equatable, Sendable {
        /// Nothing live here, and the incoming copy is in the result.
        public var added = 0
        /// A live copy here beaten by a different incoming one.
        public var updated = 0
        /// A live copy here that is in the result as it was (a local-only one, or equal content).
        public var unchanged = 0
        /// A live copy here beaten by an incoming tombstone.
        public var deleted = 0
        /// An incoming copy beaten by a tombstone of either side: it stays deleted.
        public var keptDeleted = 0
        /// A tombstone here beaten by an incoming edit made after the delete.
        public var revived = 0
        /// Incoming copies held back by the stale or the clock guard (FORMAT.md §5.1 rules 7, 8).
        public var heldBack = 0
        /// All counts zero.
        public init() {}
    }

    /// What became of each day-log key on either side: one count per key, a log kept under a
    /// tombstone counting as "a copy here" (FORMAT.md §6.2).
    public struct DayLogs: Equatable, Sendable {
        /// No copy here, and the incoming one is in the result, live.
        public var added = 0
        /// A copy here beaten by an incoming one with different canonical bytes.
        public var updated = 0
        /// A copy here that survives, or the same content on both sides.
        public var unchanged = 0
        /// In the result under a tombstone (FORMAT.md §2.4); counted here only.
        public var keptUnderTombstone = 0
        /// Dropped: their challenge is neither live nor tombstoned in the result (its
        /// tombstone expired).
        public var droppedOrphans = 0
        /// Incoming logs held back, by a guard or with their held-back challenge.
        public var heldBack = 0
        /// All counts zero.
        public init() {}

        /// Adds the counts of another part of the same merge.
        mutating func add(_ other: DayLogs) {
            added += other.added
            updated += other.updated
            unchanged += other.unchanged
            keptUnderTombstone += other.keptUnderTombstone
            droppedOrphans += other.droppedOrphans
            heldBack += other.heldBack
        }
    }

    /// What became of the tombstones; a local-only tombstone is not counted.
    public struct Tombstones: Equatable, Sendable {
        /// Incoming tombstones in the result that were not here.
        public var added = 0
        /// Incoming tombstones in the result that were already here.
        public var unchanged = 0
        /// Distinct ids whose tombstone (on either side) was older than the window and dropped.
        public var expired = 0
        /// Incoming tombstones held back by the clock guard.
        public var heldBack = 0
        /// All counts zero.
        public init() {}
    }

    /// The challenge counts.
    public var challenges = Challenges()
    /// The day-log counts.
    public var dayLogs = DayLogs()
    /// The tombstone counts.
    public var tombstones = Tombstones()

    /// An empty report, every count zero: what a merge adds to as it goes.
    public init() {}

    /// Exactly the object of FORMAT.md §6.1, members in the order shown there, compact.
    public var json: String {
        var out = JSONOutput(capacity: 320)
        write(into: &out)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// Writes `json`'s object into `out`, for a caller that embeds it in a larger line (the
    /// audit log) without a second buffer.
    public func write(into out: inout JSONOutput) {
        func counts(_ name: StaticString, _ members: KeyValuePairs<StaticString, Int>) {
            out.key(name)
            out.beginObject()
            for (key, value) in members {
                out.key(key)
                out.integer(value)
            }
            out.endObject()
        }
        out.beginObject()
        counts(
            "challenges",
            [
                "added": challenges.added, "updated": challenges.updated,
                "unchanged": challenges.unchanged, "deleted": challenges.deleted,
                "keptDeleted": challenges.keptDeleted, "revived": challenges.revived,
                "heldBack": challenges.heldBack,
            ])
        counts(
            "dayLogs",
            [
                "added": dayLogs.added, "updated": dayLogs.updated,
                "unchanged": dayLogs.unchanged, "keptUnderTombstone": dayLogs.keptUnderTombstone,
                "droppedOrphans": dayLogs.droppedOrphans, "heldBack": dayLogs.heldBack,
            ])
        counts(
            "tombstones",
            [
                "added": tombstones.added, "unchanged": tombstones.unchanged,
                "expired": tombstones.expired, "heldBack": tombstones.heldBack,
            ])
        out.endObject()
    }
}

/// One non-trivial choice a merge made, for `--explain` and the audit log. Trivial ones
/// (an item on one side only, or the same bytes on both) are not listed; the counts cover
/// them.
public struct MergeDecision: Equatable, Sendable, CustomStringConvertible {
    /// What a decision is about: the unit the merge rules pick a winner for.
    public enum Item: Hashable, Sendable, CustomStringConvertible {
        /// A challenge id: its copies and its tombstones.
        case challenge(ChallengeID)
        /// A day log, by its `challengeId/YYYY-MM-DD` key.
        case dayLog(DayLogKey)

        /// `challenge ID` or `day log KEY`, as `--explain` prints it.
        public var description: String {
            switch self {
            case .challenge(let id): return "challenge \(id)"
            case .dayLog(let key): return "day log \(key)"
            }
        }

        /// The bare id or key, as the audit log records it.
        public var key: String {
            switch self {
            case .challenge(let id): return id.rawValue
            case .dayLog(let key): return key.description
            }
        }
    }

    /// Whose version is in the result.
    public enum Winner: String, Sendable {
        case local, incoming, neither
    }

    /// Why the winner won, one case per merge rule (FORMAT.md §5.1); the raw value is what the
    /// audit log records, `explanation` what `--explain` says.
    public enum Reason: String, Sendable, CaseIterable {
        case newer
        case equalStampsHigherBytes
        case deletedAfterEdit
        case editedAfterDelete
        case laterDelete
        case orphan
        case keptUnderTombstone
        case returnsWithChallenge
        case expired
        case stale
        case future
        case withChallenge
        case replaced

        /// Plain words for `--explain`.
        public var explanation: String {
            switch self {
            case .newer: return "newer updatedAt"
            case .equalStampsHigherBytes: return "equal stamps, higher canonical bytes"
            case .deletedAfterEdit: return "deleted at or after its last edit, stays deleted"
            case .editedAfterDelete: return "edited after the delete, so it returns"
            case .laterDelete: return "the later delete is kept"
            case .orphan:
                return
                    "its challenge is neither live nor deleted in the result (its tombstone expired)"
            case .keptUnderTombstone:
                return
                    "its challenge is deleted; kept under the tombstone, back if an edit revives it"
            case .returnsWithChallenge:
                return "it was kept under a tombstone and returns with its challenge"
            case .expired: return "tombstone older than the window, dropped"
            case .stale:
                return
                    "held back: missing here and older than the window, from a file that predates it"
            case .future: return "held back: stamped more than 24 h after now"
            case .withChallenge: return "held back with its challenge"
            case .replaced: return "replaced by the backup"
            }
        }
    }

    /// A side's version of an item: a copy's `updatedAt` or a tombstone's `deletedAt`.
    public struct Version: Equatable, Sendable, CustomStringConvertible {
        /// True for a tombstone (then `stamp` is its `deletedAt`), false for a copy.
        public var isTombstone: Bool
        /// The copy's `updatedAt` or the tombstone's `deletedAt`.
        public var stamp: Timestamp

        /// A version from its kind and its stamp.
        public init(isTombstone: Bool, stamp: Timestamp) {
            self.isTombstone = isTombstone
            self.stamp = stamp
        }

        /// `edited STAMP` or `deleted STAMP`.
        public var description: String {
            (isTombstone ? "deleted " : "edited ") + stamp.description
        }
    }

    /// The challenge or day log decided.
    public var item: Item
    /// Whose version is in the result.
    public var winner: Winner
    /// The rule that decided it.
    public var reason: Reason
    /// The local side's version; nil when the item is only incoming.
    public var local: Version?
    /// The incoming side's version; nil when the item is only local.
    public var incoming: Version?

    /// A decision as the merge records it.
    public init(item: Item, winner: Winner, reason: Reason, local: Version?, incoming: Version?) {
        self.item = item
        self.winner = winner
        self.reason = reason
        self.local = local
        self.incoming = incoming
    }

    /// `challenge X: incoming wins (edited after the delete so it returns; local deleted …, incoming edited …)`
    public var description: String {
        let versions = [local.map { "local \($0)" }, incoming.map { "incoming \($0)" }]
            .compactMap { $0 }.joined(separator: ", ")
        let verdict = winner == .neither ? "neither kept" : "\(winner.rawValue) wins"
        return "\(item): \(verdict): \(reason.explanation)"
            + (versions.isEmpty ? "" : " (\(versions))")
    }
}

/// An incoming item stamped more than 24 h after `now`: always reported, held back only
/// with the clock guard on.
public struct FutureStampedItem: Equatable, Sendable {
    /// The item stamped ahead.
    public var item: MergeDecision.Item
    /// Its incoming version, with the stamp that is in the future.
    public var version: MergeDecision.Version

    /// A future-stamped item as the merge reports it.
    public init(item: MergeDecision.Item, version: MergeDecision.Version) {
        self.item = item
        self.version = version
    }
}

/// Everything a merge returns: the merged document, its counts, its non-trivial decisions and
/// the incoming items stamped in the future.
public struct MergeOutcome: Sendable {
    /// The result, with the local `deviceId` and `exportedAt` = `now`.
    public var document: BackupDocument
    /// The counts against the local side (FORMAT.md §6.1).
    public var report: MergeReport
    /// Non-trivial decisions: challenges and tombstones in id order, then day logs in key
    /// order.
    public var decisions: [MergeDecision]
    /// Incoming items stamped more than 24 h after `now`: reported whether or not the clock
    /// guard held them back (FORMAT.md §5.1 rule 8).
    public var futureStamped: [FutureStampedItem]
}
