import Testing

@testable import BackupKit

/// FORMAT.md §5.1 for one day-log key, one row per rule and per edge: the copies each side
/// holds, what became of their challenge, and the clock guard → the copy in the result, the
/// rule that decided and the one count (§6.1, §6.2). Every expected value is written from
/// FORMAT.md by hand; `now` and its edges are MergeRuleTests'.
@Suite struct DayLogRuleTests {
    typealias Resolution = DayLogResolution

    static let now = MergeRuleTests.now
    static let futureLimit = MergeRuleTests.futureLimit

    static func log(_ updated: Timestamp, note: String = "a") -> DayLog {
        DayLog(
            key: DayLogKey(
                challengeID: ChallengeID(unchecked: "x"), day: DayKey(dayNumber: 20_780)),
            values: [], note: note, updatedAt: updated)
    }

    static let key = DayLogKey(
        challengeID: ChallengeID(unchecked: "x"), day: DayKey(dayNumber: 20_780))

    static let threeDaysAgo = MergeRuleTests.ago(days: 3)

    struct Row: Sendable, CustomTestStringConvertible {
        let testDescription: String
        var local: DayLog?
        var incoming: DayLog?
        /// Where the challenge ended: live, tombstoned (`kept`), or neither (`dropped`).
        var fate = LogFate.live
        /// What the challenge walk noted: held back, deleted here, revived.
        var challenge: LogContext?
        var clockGuard = false
        let winner: Resolution.Winner
        let reason: Resolution.Reason
        let count: Resolution.Count
        var heldBack: Resolution.HeldBack? = nil
        /// Rule 8's report: the incoming copy is stamped after `now + 24 h`.
        var future = false
        /// The decisions worth a line, in order; none when one copy or the same bytes stand.
        var lines: [MergeDecision.Reason] = []
    }

    static let rows: [Row] = [
        // Rule 2: newer wins; equal stamps, higher canonical bytes; a lone copy as it is.
        Row(
            testDescription: "2: a local-only log stays", local: log(threeDaysAgo),
            winner: .local, reason: .sole, count: .unchanged),
        Row(
            testDescription: "2: an incoming-only log is added", incoming: log(threeDaysAgo),
            winner: .incoming, reason: .sole, count: .added),
        Row(
            testDescription: "2: incoming 1 ms newer wins", local: log(threeDaysAgo),
            incoming: log(threeDaysAgo.adding(milliseconds: 1), note: "b"), winner: .incoming,
            reason: .newer, count: .updated, lines: [.newer]),
        Row(
            testDescription: "2: local 1 ms newer stays",
            local: log(threeDaysAgo.adding(milliseconds: 1), note: "b"),
            incoming: log(threeDaysAgo), winner: .local, reason: .newer, count: .unchanged,
            lines: [.newer]),
        // "b" > "a" byte by byte, and the note is the only difference.
        Row(
            testDescription: "2: equal stamps, incoming bytes higher", local: log(threeDaysAgo),
            incoming: log(threeDaysAgo, note: "b"), winner: .incoming, reason: .higherBytes,
            count: .updated, lines: [.equalStampsHigherBytes]),
        Row(
            testDescription: "2: equal stamps, local bytes higher",
            local: log(threeDaysAgo, note: "b"), incoming: log(threeDaysAgo), winner: .local,
            reason: .higherBytes, count: .unchanged, lines: [.equalStampsHigherBytes]),
        Row(
            testDescription: "2: the same bytes on both sides", local: log(threeDaysAgo),
            incoming: log(threeDaysAgo), winner: .local, reason: .identical, count: .unchanged),

        // Rule 5: the winner goes where its challenge went.
        Row(
            testDescription: "5: deleted here, the log here is kept under the tombstone",
            local: log(threeDaysAgo), fate: .kept, challenge: .deletedHere, winner: .local,
            reason: .keptUnderTombstone, count: .keptUnderTombstone, lines: [.keptUnderTombstone]),
        Row(
            testDescription: "5: kept here already, it stays kept as it was",
            local: log(threeDaysAgo), fate: .kept, winner: .local, reason: .sole,
            count: .keptUnderTombstone),
        Row(
            testDescription: "5: an incoming log of a tombstoned challenge is kept",
            incoming: log(threeDaysAgo), fate: .kept, winner: .incoming,
            reason: .keptUnderTombstone, count: .keptUnderTombstone, lines: [.keptUnderTombstone]),
        Row(
            testDescription: "5: under a live tombstone a newer incoming log still wins",
            local: log(threeDaysAgo),
            incoming: log(threeDaysAgo.adding(milliseconds: 1)),
            fate: .kept, winner: .incoming, reason: .keptUnderTombstone,
            count: .keptUnderTombstone, lines: [.newer, .keptUnderTombstone]),
        Row(
            testDescription: "5: kept under the tombstone here, returns with its revived challenge",
            local: log(threeDaysAgo), challenge: .revived(kept: .local), winner: .local,
            reason: .returnsWithChallenge, count: .unchanged, lines: [.returnsWithChallenge]),
        Row(
            testDescription: "5: kept under the incoming tombstone, returns with it",
            incoming: log(threeDaysAgo), challenge: .revived(kept: .incoming), winner: .incoming,
            reason: .returnsWithChallenge, count: .added, lines: [.returnsWithChallenge]),
        // FORMAT.md §6.2: a kept log that returns live is "a copy here".
        Row(
            testDescription: "5, 2: a returning kept log beaten by a newer incoming one",
            local: log(threeDaysAgo),
            incoming: log(threeDaysAgo.adding(milliseconds: 1)),
            challenge: .revived(kept: .local), winner: .incoming, reason: .newer,
            count: .updated, lines: [.newer]),
        Row(
            testDescription: "5: no challenge anywhere, the incoming orphan is dropped",
            incoming: log(threeDaysAgo), fate: .dropped, winner: .nothing, reason: .orphan,
            count: .droppedOrphan, lines: [.orphan]),
        Row(
            testDescription: "5: no challenge anywhere, both copies are dropped",
            local: log(threeDaysAgo),
            incoming: log(threeDaysAgo.adding(milliseconds: 1)),
            fate: .dropped, winner: .nothing, reason: .orphan, count: .droppedOrphan,
            lines: [.newer, .orphan]),

        // Rule 7: the incoming log goes with its held-back challenge.
        Row(
            testDescription: "7: held back with its stale challenge", incoming: log(threeDaysAgo),
            fate: .dropped, challenge: .heldBack(.stale), winner: .nothing, reason: .stale,
            count: .heldBack, heldBack: .stale, lines: [.stale]),

        // Rule 8: `stamp > now + 24 h` is reported always, held back with --clock-guard.
        Row(
            testDescription: "8: exactly 24 h ahead is not future", incoming: log(futureLimit),
            clockGuard: true, winner: .incoming, reason: .sole, count: .added),
        Row(
            testDescription: "8: 1 ms past, guard off: reported, let in",
            incoming: log(futureLimit.adding(milliseconds: 1)), winner: .incoming, reason: .sole,
            count: .added, future: true),
        Row(
            testDescription: "8: 1 ms past, guard on: held back",
            incoming: log(futureLimit.adding(milliseconds: 1)), clockGuard: true, winner: .nothing,
            reason: .future, count: .heldBack, heldBack: .future, future: true, lines: [.future]),
        Row(
            testDescription: "8: guard on, held back, the log here stays", local: log(threeDaysAgo),
            incoming: log(futureLimit.adding(milliseconds: 1)),
            clockGuard: true, winner: .local, reason: .future, count: .heldBack,
            heldBack: .future, future: true, lines: [.future]),
        Row(
            testDescription: "8, 5: guard on, the log here returns with its revived challenge",
            local: log(threeDaysAgo),
            incoming: log(futureLimit.adding(milliseconds: 1)),
            challenge: .revived(kept: .local), clockGuard: true, winner: .local,
            reason: .returnsWithChallenge, count: .heldBack, heldBack: .future, future: true,
            lines: [.future, .returnsWithChallenge]),
        Row(
            testDescription: "8: held back with its future challenge, reported too",
            local: log(threeDaysAgo),
            incoming: log(futureLimit.adding(milliseconds: 1)),
            challenge: .heldBack(.future), winner: .local, reason: .withChallenge,
            count: .heldBack, heldBack: .withChallenge, future: true, lines: [.withChallenge]),
        // FORMAT.md §6.2: a held-back key counts only `heldBack`, even when the log here goes.
        Row(
            testDescription: "8, 5: held back with its challenge, the orphan here is dropped",
            local: log(threeDaysAgo),
            incoming: log(threeDaysAgo.adding(milliseconds: 1)),
            fate: .dropped, challenge: .heldBack(.future), winner: .nothing,
            reason: .withChallenge, count: .heldBack, heldBack: .withChallenge,
            lines: [.withChallenge]),
    ]

    @Test(arguments: rows)
    func resolve(_ row: Row) {
        var context = DayLogRule.Context(
            options: MergeOptions(now: Self.now, clockGuard: row.clockGuard))
        let resolution = DayLogRule.resolve(
            local: row.local, incoming: row.incoming, fate: row.fate, challenge: row.challenge,
            context: &context)
        #expect(resolution.winner == row.winner)
        #expect(resolution.reason == row.reason)
        #expect(resolution.count == row.count)
        #expect(resolution.heldBack == row.heldBack)
        #expect(resolution.future == row.future)

        var decisions: [MergeDecision] = []
        var futureStamped: [FutureStampedItem] = []
        resolution.record(
            Self.key, local: row.local, incoming: row.incoming, decisions: &decisions,
            futureStamped: &futureStamped)
        #expect(decisions.map(\.reason) == row.lines)
        #expect(futureStamped.count == (row.future ? 1 : 0))
    }
}
