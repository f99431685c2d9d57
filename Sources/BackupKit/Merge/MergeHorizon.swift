extension MergeOptions {
    /// The last instant at which merging `incoming` into `local` still gives what it gives at
    /// `now`; nil when no later instant can change it. What lets a nightly backup that found
    /// nothing new skip the same merge the next night (`cloudbackup backup`'s quiet night).
    ///
    /// The merge reads the clock only through two thresholds, each of the form "stamp before
    /// `windowStart`" or "stamp after `futureLimit`", so its outcome changes only when `now`
    /// carries one of them past a stamp of the two documents:
    /// - a tombstone (either side) expires once `now` passes `deletedAt` + the window; the
    ///   "nothing here" exemption of the stale guard counts only live tombstones;
    /// - the stale guard starts holding back once `now` passes `incoming.exportedAt` + the
    ///   window (and with it the per-item "older than the window" test, which applies only
    ///   then, and the stale-survivor notice, which reads the same exportedAt);
    /// - an incoming challenge, day log or tombstone stamped beyond `futureLimit` stops being
    ///   future once `now` reaches the stamp less the tolerance.
    /// Thresholds already behind `now` are crossed for good: `now` only grows.
    public func unchangedUntil(local: BackupDocument, incoming: BackupDocument) -> Timestamp? {
        var until: Timestamp?
        func limit(_ instant: Timestamp) {
            if instant >= now, until.map({ instant < $0 }) ?? true { until = instant }
        }
        for tombstone in local.tombstones { limit(tombstone.deletedAt.adding(days: windowDays)) }
        for tombstone in incoming.tombstones {
            limit(tombstone.deletedAt.adding(days: windowDays))
        }
        limit(incoming.exportedAt.adding(days: windowDays))
        // Future while `stamp > now + tolerance`: the same until one millisecond before
        // `now` reaches `stamp - tolerance`.
        let future = futureLimit
        func ahead(_ stamp: Timestamp) {
            if stamp > future { limit(stamp.adding(milliseconds: -Self.clockTolerance - 1)) }
        }
        for challenge in incoming.challenges { ahead(challenge.updatedAt) }
        for tombstone in incoming.tombstones { ahead(tombstone.deletedAt) }
        for index in incoming.dayLogs.indices { ahead(incoming.dayLogs.updatedAt(at: index)) }
        return until
    }
}
