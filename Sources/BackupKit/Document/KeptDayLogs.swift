/// Day logs kept under a tombstone (FORMAT.md §2.4): valid, written and merged like any day log,
/// but part of no challenge, so they count for no streak and are shown only as a count.
/// They are what lets a check-in survive a delete that another device's later edit undoes.
extension BackupDocument {
    /// How many day logs name a tombstone rather than a live challenge.
    public var keptDayLogCount: Int {
        var lookup = LiveLookup(challenges: challenges)
        return dayLogs.countLogs(ofChallengesWhere: { !lookup.isLive($0) })
    }

    /// The day logs of live challenges only, so the document is a valid version 3
    /// (`migrate --schema 3`, for an app that cannot read version 4), and how many kept day
    /// logs went.
    public func droppingKeptDayLogs() -> (document: BackupDocument, dropped: Int) {
        var document = self
        var lookup = LiveLookup(challenges: challenges)
        document.dayLogs.removeLogs(ofChallengesWhere: { !lookup.isLive($0) })
        return (document, dayLogs.count - document.dayLogs.count)
    }
}

/// Whether a challenge id is live, remembering the last answer: day logs come grouped by
/// challenge, so a million logs cost one binary search per challenge.
struct LiveLookup {
    let challenges: ChallengeLookup
    private var last: (ChallengeID, Bool)?

    init(challenges: [Challenge]) {
        self.challenges = ChallengeLookup(challenges)
    }

    mutating func isLive(_ id: ChallengeID) -> Bool {
        if let (lastID, answer) = last, lastID == id { return answer }
        let answer = challenges.find(id) != nil
        last = (id, answer)
        return answer
    }
}
