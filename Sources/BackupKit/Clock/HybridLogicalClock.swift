// Design note: why stamps come from a clock and not straight from the device's time.
//
// Merge keeps the copy with the newer `updatedAt` (FORMAT.md §5.1), so a stamp must say "after
// everything this device has seen", not "what the device's clock read". A hybrid logical
// clock gives exactly that within the document's millisecond stamps: a local edit is stamped
// with the wall clock when the wall clock is ahead of everything seen, else with one
// millisecond more than the latest stamp seen. So stamps never go backwards when the clock
// is set back, and after importing a file from a device whose clock runs a day fast, the
// next local edit still beats that file's items.
//
//     latest seen 2026-03-10T12:00:00.000Z (imported), wall clock 2026-03-09T12:00:00.000Z
//     → the next local edit is stamped 2026-03-10T12:00:00.001Z, and wins.
//
// A remote stamp further ahead than `maximumDrift` is not adopted: one corrupt or wildly
// wrong stamp would otherwise pin every later local edit to its future. It is reported
// instead (the merge's clock guard decides whether the item itself takes part).

/// The clock an app embedding BackupKit stamps `updatedAt`/`deletedAt` with. A value type:
/// persist `latest` between launches and restore it with `init(latest:)`.
public struct HybridLogicalClock: Equatable, Sendable {
    /// The highest stamp issued or accepted so far.
    public private(set) var latest: Timestamp?
    /// How far ahead of the local wall clock a remote stamp may be and still be adopted; the
    /// same 24 hours as the merge's clock guard by default.
    public var maximumDrift: Int64

    /// 24 hours in milliseconds: the merge's clock guard (`MergeOptions.clockTolerance`,
    /// FORMAT.md §5.1 rule 8), so the clock adopts exactly the stamps that guard lets in.
    public static let defaultMaximumDrift: Int64 = MergeOptions.clockTolerance

    /// A clock restored from the `latest` it had when last persisted (nil for a new install).
    /// `maximumDrift` is in milliseconds.
    public init(latest: Timestamp? = nil, maximumDrift: Int64 = defaultMaximumDrift) {
        self.latest = latest
        self.maximumDrift = maximumDrift
    }

    /// A stamp for a local edit made when the wall clock reads `now`: later than every stamp
    /// issued or accepted before, and `now` itself whenever `now` is already later.
    public mutating func stampLocalEdit(now: Timestamp) -> Timestamp {
        let stamp = latest.map { max(now, $0.adding(milliseconds: 1)) } ?? now
        latest = stamp
        return stamp
    }

    /// Takes in a stamp seen on an imported or merged item. Returns nil when it was accepted,
    /// or the stamp's distance ahead of `now` (milliseconds) when it lies more than
    /// `maximumDrift` ahead and was therefore ignored.
    @discardableResult
    public mutating func receive(_ stamp: Timestamp, now: Timestamp) -> Int64? {
        let ahead = stamp.millisecondsSince1970 - now.millisecondsSince1970
        guard ahead <= maximumDrift else { return ahead }
        latest = latest.map { max($0, stamp) } ?? stamp
        return nil
    }

    /// A stamp of an imported document that lies too far ahead, with where it is.
    public struct FutureStamp: Equatable, Sendable, CustomStringConvertible {
        /// JSON Pointer of the stamp, e.g. `/challenges/<id>/updatedAt`.
        public var pointer: String
        /// The stamp as the imported document has it, not adopted as `latest`.
        public var stamp: Timestamp
        /// Milliseconds ahead of the local clock.
        public var ahead: Int64

        /// One line for a warning on stderr: the pointer, the stamp and how many hours (to a tenth)
        /// it is ahead of this device's clock.
        public var description: String {
            let hours = Double(ahead) / 3_600_000
            let rounded = (hours * 10).rounded() / 10
            return
                "\(pointer): \(stamp) is \(rounded) h ahead of this device's clock; not adopted by the clock"
        }
    }

    /// Takes in every item stamp of `document` (challenges, day logs, tombstones) and returns
    /// those that lie too far ahead of `now`, in document order.
    public mutating func receive(stampsOf document: BackupDocument, now: Timestamp) -> [FutureStamp]
    {
        var future: [FutureStamp] = []
        func take(_ stamp: Timestamp, at pointer: @autoclosure () -> String) {
            if let ahead = receive(stamp, now: now) {
                future.append(FutureStamp(pointer: pointer(), stamp: stamp, ahead: ahead))
            }
        }
        for challenge in document.challenges {
            take(challenge.createdAt, at: Pointer.challenge(challenge.id) + "/createdAt")
            take(challenge.updatedAt, at: Pointer.challenge(challenge.id) + "/updatedAt")
        }
        let logs = document.dayLogs
        for index in logs.indices {
            take(logs.updatedAt(at: index), at: Pointer.dayLog(logs.key(at: index)) + "/updatedAt")
        }
        for tombstone in document.tombstones {
            take(tombstone.deletedAt, at: Pointer.tombstone(tombstone.id) + "/deletedAt")
        }
        return future
    }
}
