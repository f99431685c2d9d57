import Testing

@testable import BackupKit

/// FORMAT.md §5.1 for one challenge id, one row per rule and per edge: what each side holds →
/// the winner, the rule that decided, the counts (§6.1) and the guards' verdicts. Every
/// expected value is written from FORMAT.md by hand; `now` is fixed, so the window starts
/// exactly 90 days before it and the clock guard's limit is exactly 24 hours after it.
@Suite struct MergeRuleTests {
    typealias Resolution = ChallengeResolution

    static let now = Timestamp(millisecondsSince1970: 1_796_040_000_000)  // 2026-11-30T12:00Z
    /// `now − 90 days`: rules 1 and 7 compare strictly against this instant.
    static let windowStart = Timestamp(millisecondsSince1970: 1_788_264_000_000)
    /// `now + 24 h`: rule 8 compares strictly against this instant.
    static let futureLimit = Timestamp(millisecondsSince1970: 1_796_126_400_000)

    static func ago(days: Int) -> Timestamp { now.adding(days: -days) }

    static func copy(_ updated: Timestamp, title: String = "Water") -> Challenge {
        let start = DayKey(dayNumber: 20_513)
        return Challenge(
            id: ChallengeID(unchecked: "x"), title: title, startDate: start, durationDays: 30,
            tasks: [], createdAt: ago(days: 200), updatedAt: updated)
    }

    static func tombstone(_ deleted: Timestamp) -> Tombstone {
        Tombstone(id: ChallengeID(unchecked: "x"), deletedAt: deleted)
    }

    /// Which guard is on for the whole merge: rule 7 (an incoming file older than the window,
    /// a non-empty local side, no `--allow-stale`) or rule 8's `--clock-guard`.
    enum Guards: Sendable {
        case none, stale, clock
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let testDescription: String
        var local = ChallengeSide()
        var incoming = ChallengeSide()
        var guards = Guards.none
        let winner: Resolution.Winner
        let reason: Resolution.Reason
        let challenges: Resolution.ChallengeCount?
        let tombstones: Resolution.TombstoneCount?
        var heldBack: Resolution.Guard? = nil
        /// Rule 8's report: (the incoming copy, the incoming tombstone) stamped in the future.
        var future = (copy: false, tombstone: false)
    }

    static let rows: [Row] = [
        // Rule 2: newer wins; equal stamps, higher canonical bytes; a lone copy as it is.
        Row(
            testDescription: "2: a local-only copy stays", local: .init(copy: copy(ago(days: 3))),
            winner: .copy(.local), reason: .sole, challenges: .unchanged, tombstones: nil),
        Row(
            testDescription: "2: an incoming-only copy is added",
            incoming: .init(copy: copy(ago(days: 3))), winner: .copy(.incoming), reason: .sole,
            challenges: .added, tombstones: nil),
        Row(
            testDescription: "2: incoming 1 ms newer wins", local: .init(copy: copy(ago(days: 3))),
            incoming: .init(copy: copy(ago(days: 3).adding(milliseconds: 1), title: "Tea")),
            winner: .copy(.incoming), reason: .newer, challenges: .updated, tombstones: nil),
        Row(
            testDescription: "2: local 1 ms newer stays",
            local: .init(copy: copy(ago(days: 3).adding(milliseconds: 1), title: "Tea")),
            incoming: .init(copy: copy(ago(days: 3))), winner: .copy(.local), reason: .newer,
            challenges: .unchanged, tombstones: nil),
        Row(
            testDescription: "2: the same bytes on both sides",
            local: .init(copy: copy(ago(days: 3))),
            incoming: .init(copy: copy(ago(days: 3))), winner: .copy(.local), reason: .identical,
            challenges: .unchanged, tombstones: nil),
        // "Zinc" > "Water" byte by byte, and the title is the only difference.
        Row(
            testDescription: "2: equal stamps, incoming bytes higher",
            local: .init(copy: copy(ago(days: 3))),
            incoming: .init(copy: copy(ago(days: 3), title: "Zinc")), winner: .copy(.incoming),
            reason: .higherBytes, challenges: .updated, tombstones: nil),
        Row(
            testDescription: "2: equal stamps, local bytes higher",
            local: .init(copy: copy(ago(days: 3), title: "Zinc")),
            incoming: .init(copy: copy(ago(days: 3))), winner: .copy(.local), reason: .higherBytes,
            challenges: .unchanged, tombstones: nil),

        // Rule 1: `deletedAt < now − window` expires, exactly at the edge it stays.
        Row(
            testDescription: "1: a tombstone exactly at the window's start stays",
            local: .init(tombstone: tombstone(windowStart)), winner: .tombstone(.local),
            reason: .sole, challenges: nil, tombstones: nil),
        Row(
            testDescription: "1: a tombstone 1 ms before the window expires",
            local: .init(tombstone: tombstone(windowStart.adding(milliseconds: -1))),
            winner: .nothing, reason: .expired, challenges: nil, tombstones: .expired),
        Row(
            testDescription: "1: an expired delete no longer keeps an older copy deleted",
            local: .init(copy: copy(ago(days: 100))),
            incoming: .init(tombstone: tombstone(windowStart.adding(milliseconds: -1))),
            winner: .copy(.local), reason: .sole, challenges: .unchanged, tombstones: .expired),
        Row(
            testDescription: "1, 3: at the window's edge the delete still holds",
            local: .init(copy: copy(ago(days: 100))),
            incoming: .init(tombstone: tombstone(windowStart)),
            winner: .tombstone(.incoming), reason: .deleteHolds, challenges: .deleted,
            tombstones: .added),
        Row(
            testDescription: "1, 4: an expired tombstone here, the incoming copy is added",
            local: .init(tombstone: tombstone(ago(days: 91))),
            incoming: .init(copy: copy(ago(days: 3))), winner: .copy(.incoming), reason: .sole,
            challenges: .added, tombstones: .expired),

        // Rule 3: a delete at or after the last edit holds; of two deletes the later.
        Row(
            testDescription: "3: a delete here keeps an older incoming copy deleted",
            local: .init(tombstone: tombstone(ago(days: 5))),
            incoming: .init(copy: copy(ago(days: 10))), winner: .tombstone(.local),
            reason: .deleteHolds, challenges: .keptDeleted, tombstones: nil),
        Row(
            testDescription: "3: a delete at the edit's very instant holds",
            local: .init(copy: copy(ago(days: 5))),
            incoming: .init(tombstone: tombstone(ago(days: 5))),
            winner: .tombstone(.incoming), reason: .deleteHolds, challenges: .deleted,
            tombstones: .added),
        Row(
            testDescription: "3: an incoming-only tombstone is added",
            incoming: .init(tombstone: tombstone(ago(days: 5))), winner: .tombstone(.incoming),
            reason: .sole, challenges: nil, tombstones: .added),
        Row(
            testDescription: "3: the later incoming delete is kept",
            local: .init(tombstone: tombstone(ago(days: 10))),
            incoming: .init(tombstone: tombstone(ago(days: 5))), winner: .tombstone(.incoming),
            reason: .laterDelete, challenges: nil, tombstones: .unchanged),
        Row(
            testDescription: "3: the later local delete is kept",
            local: .init(tombstone: tombstone(ago(days: 5))),
            incoming: .init(tombstone: tombstone(ago(days: 10))), winner: .tombstone(.local),
            reason: .laterDelete, challenges: nil, tombstones: .unchanged),
        Row(
            testDescription: "3: the same delete on both sides",
            local: .init(tombstone: tombstone(ago(days: 5))),
            incoming: .init(tombstone: tombstone(ago(days: 5))), winner: .tombstone(.local),
            reason: .identical, challenges: nil, tombstones: .unchanged),

        // Rule 4: an edit after the delete revives, the tombstone goes.
        Row(
            testDescription: "4: an incoming edit 1 ms after the delete here revives",
            local: .init(tombstone: tombstone(ago(days: 5))),
            incoming: .init(copy: copy(ago(days: 5).adding(milliseconds: 1))),
            winner: .copy(.incoming), reason: .editRevives, challenges: .revived, tombstones: nil),
        Row(
            testDescription: "4: a local edit after the incoming delete stays",
            local: .init(copy: copy(ago(days: 3))),
            incoming: .init(tombstone: tombstone(ago(days: 5))),
            winner: .copy(.local), reason: .editRevives, challenges: .unchanged, tombstones: nil),

        // Rule 7: an incoming copy unknown here and edited before the window is held back.
        Row(
            testDescription: "7: edited 1 ms before the window, held back",
            incoming: .init(copy: copy(windowStart.adding(milliseconds: -1))), guards: .stale,
            winner: .nothing, reason: .stale, challenges: .heldBack, tombstones: nil,
            heldBack: .stale),
        Row(
            testDescription: "7: edited exactly at the window's start, let in",
            incoming: .init(copy: copy(windowStart)), guards: .stale, winner: .copy(.incoming),
            reason: .sole, challenges: .added, tombstones: nil),
        Row(
            testDescription: "7: a live tombstone here makes it known: rule 3 decides",
            local: .init(tombstone: tombstone(ago(days: 5))),
            incoming: .init(copy: copy(ago(days: 100))), guards: .stale, winner: .tombstone(.local),
            reason: .deleteHolds, challenges: .keptDeleted, tombstones: nil),
        Row(
            testDescription: "7: a copy here makes it known: rule 2 decides",
            local: .init(copy: copy(ago(days: 110))), incoming: .init(copy: copy(ago(days: 100))),
            guards: .stale, winner: .copy(.incoming), reason: .newer, challenges: .updated,
            tombstones: nil),
        Row(
            testDescription: "1, 7: a tombstone here that expired leaves it unknown",
            local: .init(tombstone: tombstone(ago(days: 91))),
            incoming: .init(copy: copy(ago(days: 100))), guards: .stale, winner: .nothing,
            reason: .stale, challenges: .heldBack, tombstones: .expired, heldBack: .stale),
        Row(
            testDescription: "7: the guard off (a fresh file or --allow-stale) lets it in",
            incoming: .init(copy: copy(ago(days: 100))), winner: .copy(.incoming), reason: .sole,
            challenges: .added, tombstones: nil),

        // Rule 8: `stamp > now + 24 h` is reported always, held back with --clock-guard.
        Row(
            testDescription: "8: exactly 24 h ahead is not future",
            incoming: .init(copy: copy(futureLimit)), guards: .clock, winner: .copy(.incoming),
            reason: .sole, challenges: .added, tombstones: nil),
        Row(
            testDescription: "8: 1 ms past, guard off: reported, let in",
            incoming: .init(copy: copy(futureLimit.adding(milliseconds: 1))),
            winner: .copy(.incoming), reason: .sole, challenges: .added, tombstones: nil,
            future: (copy: true, tombstone: false)),
        Row(
            testDescription: "8: 1 ms past, guard on: held back, the copy here stays",
            local: .init(copy: copy(ago(days: 3))),
            incoming: .init(copy: copy(futureLimit.adding(milliseconds: 1))), guards: .clock,
            winner: .copy(.local), reason: .sole, challenges: .heldBack, tombstones: nil,
            heldBack: .future, future: (copy: true, tombstone: false)),
        Row(
            testDescription: "8: a future copy alone, guard on: nothing",
            incoming: .init(copy: copy(futureLimit.adding(milliseconds: 1))), guards: .clock,
            winner: .nothing, reason: .future, challenges: .heldBack, tombstones: nil,
            heldBack: .future, future: (copy: true, tombstone: false)),
        Row(
            testDescription: "8: a future delete, guard on: held back, the copy here stays",
            local: .init(copy: copy(ago(days: 3))),
            incoming: .init(tombstone: tombstone(futureLimit.adding(milliseconds: 1))),
            guards: .clock, winner: .copy(.local), reason: .sole, challenges: .unchanged,
            tombstones: .heldBack, heldBack: .future, future: (copy: false, tombstone: true)),
        Row(
            testDescription: "8: a future delete, guard off: reported, and it holds",
            local: .init(copy: copy(ago(days: 3))),
            incoming: .init(tombstone: tombstone(futureLimit.adding(milliseconds: 1))),
            winner: .tombstone(.incoming), reason: .deleteHolds, challenges: .deleted,
            tombstones: .added, future: (copy: false, tombstone: true)),
    ]

    @Test(arguments: rows)
    func resolve(_ row: Row) {
        var context = ChallengeRule.Context(
            options: MergeOptions(now: Self.now, clockGuard: row.guards == .clock),
            staleGuard: row.guards == .stale)
        let resolution = ChallengeRule.resolve(
            local: row.local, incoming: row.incoming, context: &context)
        #expect(resolution.winner == row.winner)
        #expect(resolution.reason == row.reason)
        #expect(resolution.challengeCount == row.challenges)
        #expect(resolution.tombstoneCount == row.tombstones)
        #expect(resolution.heldBack == row.heldBack)
        #expect(resolution.futureCopy == row.future.copy)
        #expect(resolution.futureTombstone == row.future.tombstone)
    }

    /// The edges above are the instants the spec names, not ones the code computes.
    @Test func theEdgesAreWhereFormatSaysTheyAre() {
        let options = MergeOptions(now: Self.now)
        #expect(options.windowStart == Self.windowStart)
        #expect(options.futureLimit == Self.futureLimit)
    }
}
