import BackupKit

/// The stale guard's and the clock guard's lines, worded here once for `merge` and for the Drive
/// commands. They warn of different sources with different detail (counts and the file's age
/// for `merge`, challenge ids for Drive), which the callers pass in; the sentence around it is
/// the same, so a person who meets both recognises one warning.
enum MergeWarning {
    /// The stale guard's line (FORMAT.md §5.1 rule 7): what was held back, why it may be a
    /// deletion whose record expired, and the way to let it in, when there is one.
    static func heldBack(_ items: String, reason: String, advice: String?) -> String {
        "held back \(items): \(reason)" + (advice.map { "; " + $0 } ?? "")
    }

    /// The advice where running again is the way to let held-back items in.
    static let allowStale = "to let them in, run again with --allow-stale"

    /// An item stamped more than 24 h ahead (FORMAT.md §5.1 rule 8 reports them always).
    static func futureStamped(_ item: FutureStampedItem, in source: String) -> String {
        "\(item.item) in \(source) is stamped \(item.version.stamp), more than 24 h after now"
    }
}
