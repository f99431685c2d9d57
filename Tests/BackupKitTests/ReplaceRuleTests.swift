import Testing

@testable import BackupKit

/// FORMAT.md §5.2 for one challenge id and one day-log key: a replace takes the backup's
/// version whatever a merge would say, drops the backup's tombstones older than the window,
/// reports future stamps without holding anything back, and counts against the local side.
/// Expected values are written from FORMAT.md by hand.
@Suite struct ReplaceRuleTests {
    static let options = MergeOptions(now: MergeRuleTests.now, mode: .replace, clockGuard: true)
    static func copy(_ updated: Timestamp, title: String = "Water") -> Challenge {
        MergeRuleTests.copy(updated, title: title)
    }
    static func tombstone(_ deleted: Timestamp) -> Tombstone { MergeRuleTests.tombstone(deleted) }
    static func ago(days: Int) -> Timestamp { MergeRuleTests.ago(days: days) }

    struct ChallengeRow: Sendable, CustomTestStringConvertible {
        let testDescription: String
        var local = ChallengeSide()
        var incoming = ChallengeSide()
        let winner: ChallengeResolution.Winner
        let challenges: ChallengeResolution.ChallengeCount?
        let tombstones: ChallengeResolution.TombstoneCount?
        var lines: [MergeDecision.Reason] = []
        var future = 0
    }

    static let challengeRows: [ChallengeRow] = [
        ChallengeRow(
            testDescription: "an older backup copy replaces a newer one here",
            local: .init(copy: copy(ago(days: 1), title: "Tea")),
            incoming: .init(copy: copy(ago(days: 9))), winner: .copy(.incoming),
            challenges: .updated, tombstones: nil, lines: [.replaced]),
        ChallengeRow(
            testDescription: "the same bytes: unchanged, no line",
            local: .init(copy: copy(ago(days: 3))), incoming: .init(copy: copy(ago(days: 3))),
            winner: .copy(.incoming), challenges: .unchanged, tombstones: nil),
        ChallengeRow(
            testDescription: "a backup copy new here is added",
            incoming: .init(copy: copy(ago(days: 3))), winner: .copy(.incoming),
            challenges: .added, tombstones: nil),
        ChallengeRow(
            testDescription: "a copy here the backup lacks is deleted",
            local: .init(copy: copy(ago(days: 3))), winner: .nothing, challenges: .deleted,
            tombstones: nil, lines: [.replaced]),
        ChallengeRow(
            testDescription: "a copy here the backup deleted later is deleted by its tombstone",
            local: .init(copy: copy(ago(days: 3))),
            incoming: .init(tombstone: tombstone(ago(days: 5))), winner: .tombstone(.incoming),
            challenges: .deleted, tombstones: .added, lines: [.replaced]),
        ChallengeRow(
            testDescription: "a backup tombstone already here is unchanged",
            local: .init(tombstone: tombstone(ago(days: 5))),
            incoming: .init(tombstone: tombstone(ago(days: 5))), winner: .tombstone(.incoming),
            challenges: nil, tombstones: .unchanged),
        ChallengeRow(
            testDescription: "a tombstone here older than the window does not count as here",
            local: .init(tombstone: tombstone(MergeRuleTests.windowStart.adding(milliseconds: -1))),
            incoming: .init(tombstone: tombstone(ago(days: 5))), winner: .tombstone(.incoming),
            challenges: nil, tombstones: .added),
        ChallengeRow(
            testDescription: "1: a backup tombstone 1 ms older than the window is dropped",
            incoming: .init(
                tombstone: tombstone(MergeRuleTests.windowStart.adding(milliseconds: -1))),
            winner: .nothing, challenges: nil, tombstones: .expired, lines: [.expired]),
        ChallengeRow(
            testDescription: "1: a backup tombstone at the window's first instant stays",
            incoming: .init(tombstone: tombstone(MergeRuleTests.windowStart)),
            winner: .tombstone(.incoming), challenges: nil, tombstones: .added),
        ChallengeRow(
            testDescription: "a local tombstone the backup lacks is gone, with no count",
            local: .init(tombstone: tombstone(ago(days: 5))), winner: .nothing,
            challenges: nil, tombstones: nil),
        ChallengeRow(
            testDescription: "8: a future copy is reported and still taken under --clock-guard",
            incoming: .init(copy: copy(MergeRuleTests.futureLimit.adding(milliseconds: 1))),
            winner: .copy(.incoming), challenges: .added, tombstones: nil, future: 1),
        ChallengeRow(
            testDescription: "7: a backup older than the window is taken, no stale guard",
            local: .init(copy: copy(ago(days: 1), title: "Tea")),
            incoming: .init(copy: copy(ago(days: 400))), winner: .copy(.incoming),
            challenges: .updated, tombstones: nil, lines: [.replaced]),
    ]

    @Test(arguments: challengeRows)
    func challenge(_ row: ChallengeRow) {
        var context = ChallengeRule.Context(options: Self.options, staleGuard: true)
        let resolution = ChallengeRule.resolve(
            local: row.local, incoming: row.incoming, context: &context)
        #expect(resolution.winner == row.winner)
        #expect(resolution.challengeCount == row.challenges)
        #expect(resolution.tombstoneCount == row.tombstones)
        #expect(resolution.heldBack == nil)
        var decisions: [MergeDecision] = []
        var futureStamped: [FutureStampedItem] = []
        resolution.record(
            ChallengeID(unchecked: "x"), local: row.local, incoming: row.incoming,
            decisions: &decisions, futureStamped: &futureStamped)
        #expect(decisions.map(\.reason) == row.lines)
        #expect(futureStamped.count == row.future)
    }

    struct DayLogRow: Sendable, CustomTestStringConvertible {
        let testDescription: String
        var local: DayLog?
        var incoming: DayLog?
        var fate = LogFate.live
        let winner: DayLogResolution.Winner
        let count: DayLogResolution.Count
        var lines: [MergeDecision.Reason] = []
        var future = false
    }

    static let threeDaysAgo = ago(days: 3)
    static func log(_ updated: Timestamp, note: String = "a") -> DayLog {
        DayLogRuleTests.log(updated, note: note)
    }

    static let dayLogRows: [DayLogRow] = [
        DayLogRow(
            testDescription: "an older backup log replaces a newer one here",
            local: log(threeDaysAgo.adding(milliseconds: 1), note: "b"),
            incoming: log(threeDaysAgo), winner: .incoming, count: .updated,
            lines: [.replaced]),
        DayLogRow(
            testDescription: "the same bytes: unchanged, no line", local: log(threeDaysAgo),
            incoming: log(threeDaysAgo), winner: .incoming, count: .unchanged),
        DayLogRow(
            testDescription: "a backup log new here is added", incoming: log(threeDaysAgo),
            winner: .incoming, count: .added),
        DayLogRow(
            testDescription: "a log here the backup lacks is dropped",
            local: log(threeDaysAgo), winner: .nothing, count: .droppedOrphan,
            lines: [.replaced]),
        DayLogRow(
            testDescription: "5: a backup log under its challenge's tombstone is kept",
            incoming: log(threeDaysAgo), fate: .kept, winner: .incoming,
            count: .keptUnderTombstone),
        DayLogRow(
            testDescription: "5: a backup log whose challenge is gone is dropped",
            local: log(threeDaysAgo), incoming: log(threeDaysAgo), fate: .dropped,
            winner: .nothing, count: .droppedOrphan, lines: [.orphan]),
        DayLogRow(
            testDescription: "8: a future log is reported and still taken under --clock-guard",
            incoming: log(MergeRuleTests.futureLimit.adding(milliseconds: 1)), winner: .incoming,
            count: .added, future: true),
    ]

    @Test(arguments: dayLogRows)
    func dayLog(_ row: DayLogRow) {
        var context = DayLogRule.Context(options: Self.options)
        let resolution = DayLogRule.resolve(
            local: row.local, incoming: row.incoming, fate: row.fate, challenge: nil,
            context: &context)
        #expect(resolution.winner == row.winner)
        #expect(resolution.count == row.count)
        #expect(resolution.heldBack == nil)
        #expect(resolution.future == row.future)
        var decisions: [MergeDecision] = []
        var futureStamped: [FutureStampedItem] = []
        resolution.record(
            DayLogRuleTests.key, local: row.local, incoming: row.incoming,
            decisions: &decisions, futureStamped: &futureStamped)
        #expect(decisions.map(\.reason) == row.lines)
        #expect(futureStamped.count == (row.future ? 1 : 0))
    }
}
