/// Day logs kept under a tombstone (FORMAT.md §2.4): valid, written and merged like any day log,
/// but part of no challenge, so they count for no streak and are shown only as a count.
/// They are what lets a check-in survive a delete that another device's later edit undoes.
extension BackupDocument {
    /// How many day logs name a tombstone rather than a live challenge.
    public var keptDayLogCount: Int {
        let live = ChallengeLookup(challenges)
        return dayLogs.countLogs(ofChallengesWhere: { live.find($0) == nil })
    }

    /// The day logs of live challenges only, so the document is a valid version 3
    /// (`migrate --schema 3`, for an app that cannot read version 4), and how many kept day
    /// logs went.
    public func droppingKeptDayLogs() -> (document: BackupDocument, dropped: Int) {
        var document = self
        let live = ChallengeLookup(challenges)
        document.dayLogs.removeLogs(ofChallengesWhere: { live.find($0) == nil })
        return (document, dayLogs.count - document.dayLogs.count)
    }
}
