// The "Using BackupKit in your app" example, kept here so that it compiles and runs
// (LibraryExampleTests); the lines between the markers are the snippet of BackupKit's DocC
// article (Sources/BackupKit/BackupKit.docc/UsingBackupKit.md), which the README links to.
// begin library example
import BackupKit

/// Brings another device's backup into this device's state: the merged bytes to save, what
/// the merge did, and each challenge's current streak as of `today`.
func sync(mine: [UInt8], theirs: [UInt8], now: Timestamp, today: DayKey) throws
    -> (saved: [UInt8], report: MergeReport, streaks: [String: Int])
{
    // Reading checks every rule and migrates old versions; a bad file throws, naming each
    // problem with its JSON Pointer.
    let local = try BackupReader.read(mine).document
    let incoming = try BackupReader.read(theirs).document
    let outcome = merge(local: local, incoming: incoming, options: MergeOptions(now: now))
    // A document built or edited in code is checked the same way before it is written.
    let problems = BackupValidator.validate(outcome.document)
    precondition(problems.isEmpty, "\(problems)")
    var streaks: [String: Int] = [:]
    for report in Streaks.reports(for: outcome.document, today: today) {
        streaks[report.title] = report.currentStreak
    }
    return (BackupWriter.write(outcome.document), outcome.report, streaks)
}
// end library example
