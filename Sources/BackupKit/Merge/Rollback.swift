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
        var settings = revision.settings
        settings.premium = head.settings.premium
        settings.appLock = head.settings.appLock
        var result = Result(
            document: BackupDocument(
                exportedAt: now, deviceId: head.deviceId, settings: settings))

        let old = Dictionary(uniqueKeysWithValues: revision.challenges.map { ($0.id, $0) })
        let current = Dictionary(uniqueKeysWithValues: head.challenges.map { ($0.id, $0) })
        var tombstones: [ChallengeID: Timestamp] = [:]
        for tombstone in revision.tombstones + head.tombstones where old[tombstone.id] == nil {
            tombstones[tombstone.id] = max(
                tombstones[tombstone.id] ?? tombstone.deletedAt, tombstone.deletedAt)
        }
        for (id, challenge) in old {
            guard current[id] != challenge else {
                result.document.challenges.append(challenge)
                continue
            }
            if current[id] == nil {
                result.challenges.revived += 1
            } else {
                result.challenges.changedBack += 1
            }
            var written = challenge
            written.updatedAt = now
            result.document.challenges.append(written)
        }
        for id in current.keys where old[id] == nil {
            tombstones[id] = now
            result.challenges.removed += 1
        }

        let oldLogs = Dictionary(uniqueKeysWithValues: revision.dayLogs.map { ($0.key, $0) })
        let currentLogs = Dictionary(uniqueKeysWithValues: head.dayLogs.map { ($0.key, $0) })
        for (key, log) in oldLogs {
            guard currentLogs[key] != log else {
                result.document.dayLogs.append(log)
                continue
            }
            if currentLogs[key] == nil {
                result.dayLogs.revived += 1
            } else {
                result.dayLogs.changedBack += 1
            }
            var written = log
            written.updatedAt = now
            result.document.dayLogs.append(written)
        }
        for key in currentLogs.keys where oldLogs[key] == nil {
            result.document.dayLogs.append(DayLog(key: key, values: [], updatedAt: now))
            result.dayLogs.removed += 1
        }

        result.document.challenges.sort { $0.id < $1.id }
        result.document.dayLogs.sort { $0.key < $1.key }
        result.document.tombstones = tombstones.map { Tombstone(id: $0.key, deletedAt: $0.value) }
            .sorted { $0.id < $1.id }
        return result
    }
}
