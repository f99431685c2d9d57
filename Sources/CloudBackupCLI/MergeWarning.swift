import BackupKit

/// The stale guard's and the clock guard's lines, worded here once for `merge`, `restore`,
/// `verify`, `rollback` and the Drive commands. They warn of different sources with different
/// detail (counts and the file's age for `merge`, challenge ids for Drive), which the callers
/// pass in; the sentence around it is the same, so a person who meets both recognises one
/// warning.
enum MergeWarning {
    /// The stale guard's line (FORMAT.md §5.1 rule 7): what was held back, why it may be a
    /// deletion whose record expired, and the way to let it in, when there is one.
    static func heldBack(_ items: String, reason: String, advice: String?) -> String {
        "held back \(items): \(reason)" + (advice.map { "; " + $0 } ?? "")
    }

    /// The advice where running again is the way to let held-back items in.
    static let allowStale = "to let them in, run again with --allow-stale"

    /// Why the stale guard holds `count` items of `source` back: it was exported before the
    /// window and they are missing from the other side (`missing`: "missing here", "missing
    /// from the backup") and last edited before it, so each may be a forgotten delete.
    /// `when` and `windowDays` are as `exportedBefore` takes them.
    static func staleReason(
        _ source: String, when: String? = nil, windowDays: Int? = nil, missing: String,
        count: Int
    ) -> String {
        exportedBefore(source, when: when, windowDays: windowDays)
            + (count == 1 ? ", and it is " : ", and they are ")
            + "\(missing) and last edited before it: \(forgottenDeletes(count))"
    }

    /// "SOURCE was exported 152 days ago, before the 90-day window": the stale guard's premise
    /// for a source seen as a whole. `when` (an age or a time) and `windowDays` are said when
    /// known; without `windowDays` the window is "the tombstone window".
    static func exportedBefore(_ source: String, when: String? = nil, windowDays: Int? = nil)
        -> String
    {
        "\(source) was exported" + (when.map { " \($0)," } ?? "") + " before the "
            + (windowDays.map { "\($0)-day" } ?? "tombstone") + " window"
    }

    /// "SOURCE predates the 90-day tombstone window": the same premise as a verdict, where
    /// `verify` and `restore` say whether a backup is inside the window or not.
    ///
    /// It stays a second phrasing of `exportedBefore` because end-to-end tests pin both
    /// ("predates the 90-day tombstone window" for `verify`, `restore`; "was exported before
    /// the tombstone window" and "exported 152 days ago, before the 90-day window" for the
    /// Drive commands and `merge`).
    static func predates(_ source: String, windowDays: Int) -> String {
        "\(source) predates the \(windowDays)-day tombstone window"
    }

    /// What `count` items the stale guard holds back (or that a stale side keeps) may be: a
    /// delete whose tombstone has expired, so that nothing here says it happened.
    static func forgottenDeletes(_ count: Int) -> String {
        count == 1 ? "perhaps a forgotten delete" : "perhaps forgotten deletes"
    }

    /// " and 2 more challenges": what a list cut short to its first `shown` of `total` items
    /// leaves out, said after the last one shown; nil when nothing was left out. `noun` names
    /// the items left out ("" where the list's own noun, said before it, does).
    static func andMore(_ shown: Int, of total: Int, _ noun: String = "") -> String? {
        total > shown ? " and \(total - shown) more" + (noun.isEmpty ? "" : " " + noun) : nil
    }

    /// An item stamped more than 24 h ahead (FORMAT.md §5.1 rule 8 reports them always).
    static func futureStamped(_ item: FutureStampedItem, in source: String) -> String {
        "\(item.item) in \(source) is stamped \(item.version.stamp), more than 24 h after now"
    }
}
