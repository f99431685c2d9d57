/// How a merge is run (FORMAT.md §5.1). `now` is always given: BackupKit never reads the clock.
public struct MergeOptions: Sendable {
    /// Merge or replace: what the incoming document may change.
    public enum Mode: String, Sendable {
        /// Newest edit wins per item; settings stay local.
        case merge
        /// A restore that is not a merge: the result is the incoming document.
        case replace
    }

    /// The instant the window and the guards are measured from (`--now`, or the clock the
    /// caller read once).
    public var now: Timestamp
    /// Tombstones older than this many days before `now` are dropped; the stale guard uses
    /// the same window.
    public var windowDays: Int
    /// `.merge`, or `.replace` for a restore that takes the incoming document as it is.
    public var mode: Mode
    /// Lets in what the stale guard would hold back.
    public var allowStale: Bool
    /// Holds back incoming items stamped more than 24 h after `now` (they are reported
    /// either way).
    public var clockGuard: Bool
    /// From this many day logs (both sides together) on, each half of the keys is merged on
    /// a core of its own; the outcome is the same either way. Internal: tests lower it.
    var twoCoresFromLogs = BackupValidator.twoCoresFromLogs

    /// The tombstone window's length unless a caller says otherwise (`--window`).
    public static let defaultWindowDays = 90
    /// How far ahead of `now` a stamp may be before the clock guard calls it future.
    public static let clockTolerance: Int64 = 24 * 3_600_000

    /// Options for a merge at `now`; by default a plain merge with the 90-day window, the
    /// stale guard on and the clock guard off.
    public init(
        now: Timestamp, windowDays: Int = defaultWindowDays, mode: Mode = .merge,
        allowStale: Bool = false, clockGuard: Bool = false
    ) {
        self.now = now
        self.windowDays = windowDays
        self.mode = mode
        self.allowStale = allowStale
        self.clockGuard = clockGuard
    }

    /// The oldest instant inside the window: anything stamped before it predates the window.
    public var windowStart: Timestamp { now.adding(days: -windowDays) }
    /// Stamps after this are in the future as far as the clock guard is concerned.
    public var futureLimit: Timestamp { now.adding(milliseconds: Self.clockTolerance) }
}
