import BackupKit
import Foundation
import GoogleDrive

/// Which revisions of the backup to keep with Drive's pins (`keepForever`), in the style of
/// restic's `forget --keep-daily/--keep-weekly/--keep-monthly`.
///
/// Drive keeps an unpinned revision for about 30 days (or until 100 newer ones), a pinned one
/// until it is deleted, and at most 200 pins per file. The policy names, for each level, the
/// first upload of each of the most recent `daily` days, `weekly` weeks and `monthly` months
/// that have an upload, counted on the user's local calendar (a day is a local day, a week
/// starts on Monday, as ISO 8601 has it). Named revisions are pinned; a pinned revision the
/// policy no longer names is released, which for Drive means deleting it (a pin cannot be
/// taken off), and only once it is older than 30 days: Drive would have purged it unpinned by
/// then, so releasing never shortens what Drive keeps on its own. The head is never deleted.
///
/// The policy never spends the last `reservedPins` of Drive's `pinLimit`: they are the sync
/// engine's, which pins another device's revision to read it when Drive serves the bytes of
/// pinned revisions only (`BackupRun`), and releases that pin once the revision's items are in
/// a checked head. A policy that took every pin would leave a check unable to read what it
/// must merge.
///
/// Example (daily 2, weekly 1, monthly 0), uploads Mon 09:00 (r1), Mon 18:00 (r2), Tue 08:00
/// (r3), all in one week: daily names r3 (Tuesday's first) and r1 (Monday's first); weekly
/// names r1 (the week's first). r1 and r3 are pinned; r2 is left to Drive's own purge.
public struct RetentionPolicy: Equatable, Sendable {
    public var daily: Int
    public var weekly: Int
    public var monthly: Int
    /// Drive's limit on pins per file (`maxPins`); tests against an emulator with a lower cap
    /// set theirs, so that a run crosses it.
    public var pinLimit = Self.maxPins

    /// 7 days, 8 weeks and 12 months.
    public static let standard = RetentionPolicy(daily: 7, weekly: 8, monthly: 12)
    /// Drive's own limit on pins per file.
    public static let maxPins = 200
    /// The pins the policy leaves to the sync engine's reads: a tenth of the limit (20 of
    /// Drive's 200), and under a small limit (a test's) up to half of it, at most 5: a check
    /// that owes several devices' revisions pins them all before it releases any, and with
    /// fewer free than that it could never finish (make test's soak at 10 pins, a reserve of 2,
    /// left a device stuck).
    public var reservedPins: Int { max(pinLimit / 10, min(pinLimit / 2, 5)) }
    /// The most pins the policy itself holds.
    public var policyPins: Int { max(0, pinLimit - reservedPins) }
    /// How long Drive keeps an unpinned revision: a pin is released only after this.
    public static let unpinnedLifetimeDays = 30

    public init(daily: Int, weekly: Int, monthly: Int) {
        self.daily = daily
        self.weekly = weekly
        self.monthly = monthly
    }

    /// What to pin and what to release, oldest first, for a file whose revisions are
    /// `revisions` (oldest first, as Drive lists them; the last is the head).
    public func plan(_ revisions: [DriveRevision], now: Timestamp, timeZone: TimeZone)
        -> RetentionPlan
    {
        let dated = Self.dated(revisions)
        let named = names(dated, timeZone: timeZone)
        let releasable =
            now.millisecondsSince1970
            - Int64(Self.unpinnedLifetimeDays) * 86_400_000
        let head = revisions.last?.id
        var release: [String] = []
        var pinned = 0
        for (revision, time) in dated where revision.keepForever == true {
            if !named.contains(revision.id), revision.id != head,
                time.millisecondsSince1970 < releasable
            {
                release.append(revision.id)
            } else {
                pinned += 1
            }
        }
        // Never past the policy's share of Drive's limit: the newest named revisions first, as
        // they are the ones a user is most likely to want back.
        let room = max(0, policyPins - pinned)
        let pin = dated.filter { named.contains($0.0.id) && $0.0.keepForever != true }
            .map(\.0.id).suffix(room)
        return RetentionPlan(pin: Array(pin), release: release)
    }

    /// The revisions the policy names (the first upload of each recent day, week and month).
    public func names(_ revisions: [DriveRevision], timeZone: TimeZone) -> Set<String> {
        names(Self.dated(revisions), timeZone: timeZone)
    }

    private static func dated(_ revisions: [DriveRevision]) -> [(DriveRevision, Timestamp)] {
        revisions.compactMap { revision in
            revision.modifiedTime.flatMap { Timestamp($0) }.map { (revision, $0) }
        }
    }

    private func names(_ dated: [(DriveRevision, Timestamp)], timeZone: TimeZone) -> Set<String> {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = timeZone
        func firsts(_ count: Int, _ bucket: (Date) -> DateComponents) -> [String] {
            guard count > 0 else { return [] }
            var seen: [DateComponents: String] = [:]
            var order: [DateComponents] = []
            for (revision, time) in dated {
                let key = bucket(time.date)
                if seen[key] == nil {
                    seen[key] = revision.id
                    order.append(key)
                }
            }
            return order.suffix(count).compactMap { seen[$0] }
        }
        return Set(
            firsts(daily) { calendar.dateComponents([.year, .month, .day], from: $0) }
                + firsts(weekly) {
                    calendar.dateComponents([.yearForWeekOfYear, .weekOfYear], from: $0)
                }
                + firsts(monthly) { calendar.dateComponents([.year, .month], from: $0) })
    }
}

/// The requests a retention policy asks for.
public struct RetentionPlan: Equatable, Sendable {
    /// Revisions to pin (`keepForever: true`).
    public var pin: [String]
    /// Pinned revisions to delete: no longer named, and older than Drive keeps unpinned ones.
    public var release: [String]

    public var isEmpty: Bool { pin.isEmpty && release.isEmpty }
}

extension Timestamp {
    var date: Date { Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000) }
}
