/// Rolling the backup back to an older revision on every device (`cloudbackup rollback`).
///
/// A restore of an old revision changes one STATE only: the next backup finds Drive newer and
/// changes nothing, and any device's next merge brings the bad edit back. A rollback instead
/// makes the old content win every later merge, by newest-edit-wins itself: each item that
/// differs from the head is written again at `now`.
/// - changed since the revision: the revision's version, `updatedAt` now;
/// - deleted since (a tombstone, or gone): the revision's version, `updatedAt` now, which
///   revives it over the tombstone (FORMAT.md §5.1 rule 4);
/// - a challenge added since: a tombstone dated now;
/// - a day log added since: emptied (no values, note or mood), `updatedAt` now, since day logs
///   have no tombstones; an empty log scores nothing.
/// Items equal in both stay as they are, stamps included, so a rollback to the head is no
/// change. Settings are the revision's, but for premium and app lock, which never come from a
/// backup (FORMAT.md §5.1 rule 6).
public enum Rollback {
    /// How many items of one kind the rollback writes again, by what became of them since.
    public struct Counts: Equatable, Sendable {
        /// Changed since: back to the revision's version.
        public var changedBack = 0
        /// Deleted since: back.
        public var revived = 0
        /// Added since: deleted (challenges) or emptied (day logs).
        public var removed = 0

        /// Counts from their parts (all 0: nothing written again).
        public init(changedBack: Int = 0, revived: Int = 0, removed: Int = 0) {
            self.changedBack = changedBack
            self.revived = revived
            self.removed = removed
        }

        /// Every item of the kind written again.
        public var total: Int { changedBack + revived + removed }
    }

    /// What `document(backTo:from:now:)` makes: the document, and how many items of each kind
    /// it writes again.
    public struct Result: Equatable, Sendable {
        /// The revision's content, written to win every later merge.
        public var document: BackupDocument
        /// Challenges written again; a challenge added since counts as removed (a tombstone).
        public var challenges = Counts()
        /// Day logs written again; one added since counts as removed (emptied).
        public var dayLogs = Counts()
        /// Nothing differs: the head is the revision's content already.
        public var isEmpty: Bool { challenges.total + dayLogs.total == 0 }
    }

    /// `revision`'s content as a document that wins over `head` and every older copy in any
    /// merge (see the type's rules). Items are written at `now`, or one millisecond after the
    /// latest stamp of either document when that is later (a clock set back, or an undo in the
    /// same millisecond): a rewrite must be strictly newer to win (`HybridLogicalClock`).
    public static func document(
        backTo revision: BackupDocument, from head: BackupDocument, now: Timestamp
    ) -> Result {
        var clock = HybridLogicalClock()
        _ = clock.receive(stampsOf: head, now: now)
        _ = clock.receive(stampsOf: revision, now: now)
        let now = clock.stampLocalEdit(now: now)
        var result = Result(
            document: BackupDocument(
                exportedAt: now, deviceId: head.deviceId,
                settings: head.settings.importing(revision.settings)))

        var tombstones: [ChallengeID: Timestamp] = [:]
        for tombstone in revision.tombstones + head.tombstones
        where revision.challenges.sortedIndex(of: tombstone.id, by: \.id) == nil {
            tombstones[tombstone.id] = max(
                tombstones[tombstone.id] ?? tombstone.deletedAt, tombstone.deletedAt)
        }
        let addedChallenges = writeBack(
            revision.challenges, over: head.challenges, key: \.id, now: now,
            counts: &result.challenges, into: &result.document.challenges)
        for id in addedChallenges { tombstones[id] = now }
        let addedLogs = writeBack(
            revision.dayLogs, over: head.dayLogs, key: \.key, now: now,
            counts: &result.dayLogs, into: &result.document.dayLogs)
        for key in addedLogs {
            result.document.dayLogs.append(DayLog(key: key, values: [], updatedAt: now))
        }

        result.document.challenges.sort { $0.id < $1.id }
        result.document.dayLogs.sortByKey()
        result.document.tombstones = tombstones.map { Tombstone(id: $0.key, deletedAt: $0.value) }
            .sorted { $0.id < $1.id }
        return result
    }

    /// The revision's items of one kind into `items`: each equal to the head's as it is, each
    /// changed or gone since written again at `now`; returns the keys added since (counted as
    /// removed), which the caller deletes in the kind's own way.
    private static func writeBack<
        Item: Stamped & Equatable, Key: Hashable, Items: RangeReplaceableCollection<Item>
    >(
        _ old: some Collection<Item>, over current: some Collection<Item>,
        key: KeyPath<Item, Key>, now: Timestamp, counts: inout Counts, into items: inout Items
    ) -> [Key] {
        let heads = Dictionary(uniqueKeysWithValues: current.map { ($0[keyPath: key], $0) })
        let olds = Set(old.map { $0[keyPath: key] })
        for item in old {
            let head = heads[item[keyPath: key]]
            guard head != item else {
                items.append(item)
                continue
            }
            if head == nil {
                counts.revived += 1
            } else {
                counts.changedBack += 1
            }
            var written = item
            written.updatedAt = now
            items.append(written)
        }
        let added = current.map { $0[keyPath: key] }.filter { !olds.contains($0) }
        counts.removed += added.count
        return added
    }
}

/// An item rewritten by its `updatedAt`.
protocol Stamped {
    var updatedAt: Timestamp { get set }
}

extension Challenge: Stamped {}
extension DayLog: Stamped {}
